"""The krew release (krew-manifest/build.py): plugin.yaml matches the archive built from this tree, the
archive is reproducible, pure Python and runs on a bare Python, and the manifest keeps krew's rules.

The build downloads the pinned artifacts once into ~/.cache/kubectl-kcache-release (or
$KCACHE_RELEASE_CACHE); with a warm cache it takes ~1 s.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import io
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from types import ModuleType

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
BUILD_PY = ROOT / "krew-manifest" / "build.py"
REGENERATE = "python3 krew-manifest/build.py"
PLATFORMS = {("linux", "amd64"), ("linux", "arm64"), ("darwin", "amd64"), ("darwin", "arm64")}
COMPILED = (".so", ".pyd", ".dylib", ".dll", ".c", ".h", ".pyx", ".pxd", ".pyc", ".pyo")


def _load_build() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kcache_release_build", BUILD_PY)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def build() -> ModuleType:
    return _load_build()


@pytest.fixture(scope="module")
def release(build: ModuleType, tmp_path_factory: pytest.TempPathFactory):
    return build.build(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="module")
def manifest() -> dict:
    return yaml.safe_load((ROOT / "plugin.yaml").read_text())


def _setup_cfg_version() -> str:
    m = re.search(r"^version\s*=\s*(\S+)", (ROOT / "setup.cfg").read_text(), re.MULTILINE)
    assert m
    return m.group(1)


# ---- plugin.yaml is the manifest of this tree's archive ------------------------------------------------

def test_plugin_yaml_matches_the_archive_built_from_this_tree(release) -> None:
    committed = (ROOT / "plugin.yaml").read_text()
    m = re.search(r"sha256: ([0-9a-f]{64})", committed)
    said = m.group(1) if m else "nothing"
    assert committed == release.manifest_text, (
        f"plugin.yaml is out of date: it gives sha256 {said}, but the archive built from this tree has "
        f"{release.sha256} (kubectl_kcache/, krew-manifest/ or setup.cfg changed). Regenerate it with "
        f"`{REGENERATE}` and commit plugin.yaml."
    )
    assert hashlib.sha256(release.archive.read_bytes()).hexdigest() == release.sha256


def test_building_twice_gives_the_same_bytes(build: ModuleType, release, tmp_path: Path) -> None:
    again = build.build(tmp_path)
    assert again.sha256 == release.sha256
    assert again.archive.read_bytes() == release.archive.read_bytes()
    assert again.archive.name == f"kubectl-kcache-v{_setup_cfg_version()}.tar.gz"


# ---- the archive --------------------------------------------------------------------------------------

def test_archive_is_normalised(release) -> None:
    raw = release.archive.read_bytes()
    assert raw[:3] == b"\x1f\x8b\x08"
    assert raw[3] == 0, "gzip header flags: no file name, no comment, no extra field"
    assert raw[4:8] == b"\0\0\0\0", "gzip header mtime must be 0"
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(raw))) as tf:
        members = tf.getmembers()
        assert [m.name for m in members] == ["LICENSE", "kubectl-kcache"]
        for m in members:
            assert m.isreg() and m.mtime == 0 and m.uid == 0 and m.gid == 0 and m.uname == "" and m.gname == ""
        modes = {m.name: m.mode for m in members}
        assert modes == {"LICENSE": 0o644, "kubectl-kcache": 0o755}
        assert tf.extractfile("LICENSE").read() == (ROOT / "LICENSE").read_bytes()  # type: ignore[union-attr]
        assert tf.extractfile("kubectl-kcache").read() == release.zipapp.read_bytes()  # type: ignore[union-attr]


def test_zipapp_is_pure_python_sorted_and_timeless(release) -> None:
    data = release.zipapp.read_bytes()
    assert data.startswith(b"#!/usr/bin/env python3\n")
    with zipfile.ZipFile(release.zipapp) as zf:
        infos = zf.infolist()
        names = [i.filename for i in infos]
    assert names == sorted(names), "zip entries must be sorted"
    assert len(set(names)) == len(names)
    for i in infos:
        assert i.date_time == (1980, 1, 1, 0, 0, 0), i.filename
        assert i.external_attr >> 16 == 0o100644, i.filename
        assert i.compress_type == zipfile.ZIP_DEFLATED, i.filename
    compiled = [n for n in names if n.endswith(COMPILED)]
    assert not compiled, f"compiled files in the zipapp: {compiled[:5]}"
    assert not [n for n in names if "__pycache__" in n or ".dist-info/" in n or ".egg-info/" in n]
    tests = [n for n in names if re.search(r"(^|/)(tests?)/|(^|/)test_[^/]*\.py$|_test\.py$", n)]
    assert not tests, f"tests in the zipapp: {tests[:5]}"
    assert "__main__.py" in names and "yaml/__init__.py" in names and "kubernetes/client/__init__.py" in names


def test_zipapp_holds_this_tree_and_every_license(build: ModuleType, release) -> None:
    with zipfile.ZipFile(release.zipapp) as zf:
        names = set(zf.namelist())
        ours = {p.relative_to(ROOT).as_posix() for p in (ROOT / "kubectl_kcache").rglob("*.py")
                if "__pycache__" not in p.parts}
        assert ours | {"kubectl_kcache/py.typed"} == {n for n in names if n.startswith("kubectl_kcache/")}
        for rel in sorted(ours):
            assert zf.read(rel) == (ROOT / rel).read_bytes(), rel
    for pin in build.read_lock():
        assert any(n.startswith(f"licenses/{pin.name}-{pin.version}/") for n in names), f"no license of {pin.name}"
    assert "licenses/kubectl-kcache/LICENSE" in names


# ---- the lock -----------------------------------------------------------------------------------------

def _packaging():
    try:
        from packaging.requirements import Requirement
        from packaging.utils import canonicalize_name
    except ImportError:  # pip's copy is always there where pytest was installed with pip
        from pip._vendor.packaging.requirements import Requirement  # type: ignore[no-redef]
        from pip._vendor.packaging.utils import canonicalize_name  # type: ignore[no-redef]
    return Requirement, canonicalize_name


def test_lock_is_the_closure_of_the_runtime_dependencies(build: ModuleType, release) -> None:
    """Every runtime requirement (Python 3.10 to 3.14, any OS but Windows) of setup.cfg and of each pinned
    wheel is pinned, at a version it allows; nothing else is."""
    Requirement, canonical = _packaging()
    pins = {p.name: p for p in build.read_lock()}
    cfg = (ROOT / "setup.cfg").read_text()
    block = re.search(r"^install_requires =\n((?:[ \t]+\S.*\n)+)", cfg, re.MULTILINE)
    assert block
    wanted = [Requirement(line.strip()) for line in block.group(1).splitlines()]
    for pin in pins.values():
        assert pin.filename.endswith(("-py3-none-any.whl", "-py2.py3-none-any.whl")) or pin.name == "pyyaml", pin
        if not pin.filename.endswith(".whl"):
            continue
        with zipfile.ZipFile(build.cache_dir() / "artifacts" / pin.sha256 / pin.filename) as zf:
            meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
            lines = zf.read(meta).decode().splitlines()
        wanted += [Requirement(line.split(":", 1)[1].strip()) for line in lines if line.startswith("Requires-Dist:")]
    envs = [{"python_version": v, "python_full_version": v + ".0", "sys_platform": s, "platform_system": ps,
             "os_name": "posix", "extra": ""}
            for v in ("3.10", "3.11", "3.12", "3.13", "3.14") for s, ps in (("linux", "Linux"), ("darwin", "Darwin"))]
    needed = set()
    for req in wanted:
        if req.marker is not None and not any(req.marker.evaluate(e) for e in envs):
            continue
        name = canonical(req.name)
        needed.add(name)
        assert name in pins, f"{req} is needed at run time but not pinned in krew-manifest/requirements.txt"
        assert req.specifier.contains(pins[name].version, prereleases=True), f"{name}=={pins[name].version} vs {req}"
    assert needed == set(pins), f"pinned but not needed: {sorted(set(pins) - needed)}"
    kube = pins["kubernetes"].version
    assert int(kube.split(".")[0]) < 36, "kubernetes 36+ needs compiled packages (aiohttp, pydantic-core)"


# ---- the manifest -------------------------------------------------------------------------------------

def test_manifest_follows_krew_rules(manifest: dict, release) -> None:
    version = _setup_cfg_version()
    tag = f"v{version}"
    assert manifest["apiVersion"] == "krew.googlecontainertools.github.com/v1alpha2"
    assert manifest["kind"] == "Plugin"
    assert manifest["metadata"]["name"] == "kcache"
    spec = manifest["spec"]
    assert spec["version"] == tag
    assert re.fullmatch(r"v\d+\.\d+\.\d+", spec["version"])
    assert spec["homepage"].startswith("https://github.com/")
    short = spec["shortDescription"]
    assert "\n" not in short and 0 < len(short) <= 50, short
    assert len(spec["description"].strip().splitlines()) > 1
    caveats = spec["caveats"]
    for needed in ("python3", "3.10", "docs/checks.md", "deploy/rbac.yaml", "doctor", "why-group", "dump",
                   "reconcile", "kubectl_complete-kcache"):
        assert needed in caveats, needed
    platforms = spec["platforms"]
    got = {(p["selector"]["matchLabels"]["os"], p["selector"]["matchLabels"]["arch"]) for p in platforms}
    assert got == PLATFORMS and len(platforms) == len(PLATFORMS)
    uri = f"https://github.com/kserve/kubectl-kcache/releases/download/{tag}/kubectl-kcache-{tag}.tar.gz"
    for p in platforms:
        assert set(p["selector"]) == {"matchLabels"} and set(p["selector"]["matchLabels"]) == {"os", "arch"}
        assert p["uri"] == uri
        assert re.fullmatch(r"[0-9a-f]{64}", p["sha256"])
        assert p["sha256"] == release.sha256
        assert p["bin"] == "kubectl-kcache"
        assert {f["from"] for f in p["files"]} == {"kubectl-kcache", "LICENSE"}
        assert all(f["to"] == "." for f in p["files"])


def test_version_is_the_package_version() -> None:
    from kubectl_kcache import __version__

    assert __version__ == _setup_cfg_version()


# ---- the zipapp runs on a bare Python -----------------------------------------------------------------

SNAPSHOT = """\
apiVersion: v1
kind: Node
metadata:
  name: gpu-1
  labels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
status:
  conditions: [{type: Ready, status: "True"}]
"""


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv without pip: no site packages at all, so only what the zipapp bundles can be imported."""
    venv = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    return venv / "bin" / "python"


def _run(python: Path, app: Path, *args: str, cache: Path, unpack: bool = True) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(cache), "KCACHE_ZIPAPP_CACHE": str(cache / "zipapp"),
           "KCACHE_ZIPAPP_UNPACK": "1" if unpack else "0", "NO_COLOR": "1"}
    return subprocess.run([str(python), "-I", str(app), *args], capture_output=True, text=True, env=env,
                          timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("unpack", [False, True], ids=["from-zip", "unpacked"])
def test_zipapp_runs_isolated_without_dependencies(release, bare_python: Path, tmp_path: Path, unpack: bool) -> None:
    snapshot = tmp_path / "snapshot.yaml"
    snapshot.write_text(SNAPSHOT)
    help_ = _run(bare_python, release.zipapp, "--help", cache=tmp_path, unpack=unpack)
    assert help_.returncode == 0, help_.stderr
    assert "kubectl kcache" in help_.stdout
    doctor = _run(bare_python, release.zipapp, "doctor", "--from-file", str(snapshot), cache=tmp_path, unpack=unpack)
    assert doctor.returncode == 1, doctor.stderr  # findings: no KServe configuration in that snapshot
    assert "inferenceservice-config" in doctor.stdout
    unpacked = list((tmp_path / "zipapp").glob("*/.complete"))
    assert len(unpacked) == (1 if unpack else 0)
    if unpack:  # a second run uses the folder, and Python has cached bytecode there
        assert _run(bare_python, release.zipapp, "--help", cache=tmp_path).returncode == 0
        assert list(unpacked[0].parent.glob("kubectl_kcache/__pycache__/*.pyc"))


def test_zipapp_called_kubectl_complete_completes(release, bare_python: Path, tmp_path: Path) -> None:
    link = tmp_path / "kubectl_complete-kcache"
    link.symlink_to(release.zipapp)
    proc = _run(bare_python, link, "", cache=tmp_path)
    assert proc.returncode == 0, proc.stderr
    words = proc.stdout.split()
    assert "doctor" in words and words[-1] == ":4"


def test_zipapp_ignores_a_cache_folder_others_can_write(release, bare_python: Path, tmp_path: Path) -> None:
    with zipfile.ZipFile(release.zipapp) as zf:
        m = re.search(r'BUILD_ID = "([0-9a-f]+)"', zf.read("__main__.py").decode())
    assert m
    cache = tmp_path / "zipapp"
    planted = cache / m.group(1) / "kubectl_kcache"
    planted.mkdir(parents=True)
    (planted / "__init__.py").write_text("")
    (planted / "__main__.py").write_text("def main():\n    print('PLANTED')\n")
    (cache / m.group(1) / ".complete").touch()
    for d in (cache, cache / m.group(1)):
        d.chmod(0o700)
    assert _run(bare_python, release.zipapp, "--help", cache=tmp_path).stdout.strip() == "PLANTED"  # it is used
    for writable in (cache, cache / m.group(1)):
        writable.chmod(0o777)
        proc = _run(bare_python, release.zipapp, "--help", cache=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert "PLANTED" not in proc.stdout and "kubectl kcache" in proc.stdout
        writable.chmod(0o700)
