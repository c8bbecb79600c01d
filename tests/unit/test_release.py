"""The krew release (krew-manifest/build.py, release.py): the generated plugin.yaml and SHA256SUMS match the
archives built with them, a clean clone builds the same bytes twice and says its commit, the archives are
reproducible, each carries msgspec's compiled wheels for every supported CPython of its platform and nothing
compiled elsewhere, the zipapp picks the wheel of the interpreter running it (or says which versions it has),
runs on a bare Python, and the manifest keeps krew's rules.

The build downloads the pinned artifacts once into ~/.cache/kubectl-kcache-release (or $KCACHE_RELEASE_CACHE);
with a warm cache it takes ~6 s for the four archives.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.machinery
import importlib.util
import io
import os
import platform
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from tests.zipapp_probe import PROBE

pytestmark = pytest.mark.release  # their own tier: every test here builds or reads the archives

ROOT = Path(__file__).resolve().parents[2]
BUILD_PY = ROOT / "krew-manifest" / "build.py"
ZIP_MAIN_PY = ROOT / "krew-manifest" / "zipapp_main.py"
REGENERATE = "python3 krew-manifest/build.py"
PLATFORMS = [("linux", "amd64"), ("linux", "arm64"), ("darwin", "amd64"), ("darwin", "arm64")]
PYTHONS = ["3.10", "3.11", "3.12", "3.13", "3.14", "3.15"]
VARIANTS = {"linux": ["glibc", "musl"], "darwin": ["macos"]}
COMPILED = (".so", ".pyd", ".dylib", ".dll", ".c", ".h", ".pyx", ".pxd", ".pyc", ".pyo")
# What the extension modules of each archive must be: file suffix pattern, and the machine in their header.
ELF_MACHINE = {"amd64": 0x3E, "arm64": 0xB7}  # e_machine: EM_X86_64, EM_AARCH64
MACHO_CPU = {"amd64": 0x01000007, "arm64": 0x0100000C}  # cputype: CPU_TYPE_X86_64, CPU_TYPE_ARM64
LINUX_TRIPLET = {"amd64": "x86_64", "arm64": "aarch64"}


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def build() -> ModuleType:
    return _load("kcache_release_build", BUILD_PY)


@pytest.fixture(scope="module")
def release(build: ModuleType, tmp_path_factory: pytest.TempPathFactory):
    return build.build(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="module")
def manifest(release) -> dict:
    return yaml.safe_load(release.manifest_text)


def _setup_cfg_version() -> str:
    """The one version number (kubectl_kcache/__init__.py), which setup.cfg reads."""
    m = re.search(r'^__version__ = "(\S+)"$', (ROOT / "kubectl_kcache" / "__init__.py").read_text(), re.MULTILINE)
    assert m
    return m.group(1)


def _zip_main(zipapp: Path) -> ModuleType:
    """The __main__.py of a built zipapp, loaded as a module (its main() is not run)."""
    with zipfile.ZipFile(zipapp) as zf:
        source = zf.read("__main__.py")
    mod = ModuleType("kcache_zip_main")
    exec(compile(source, f"{zipapp}/__main__.py", "exec"), mod.__dict__)
    return mod


# ---- the release files are generated for the archives built -------------------------------------------


def test_manifest_and_checksums_are_those_of_the_archives(build: ModuleType, release, tmp_path: Path) -> None:
    manifest, sums = build.write_release_files(release, tmp_path)
    doc = yaml.safe_load(manifest.read_text())
    on_disk = {a.path.name: hashlib.sha256(a.path.read_bytes()).hexdigest() for a in release.archives}
    said = {p["uri"].rsplit("/", 1)[1]: p["sha256"] for p in doc["spec"]["platforms"]}
    assert said == on_disk
    lines = sums.read_text().splitlines()
    assert lines == [f"{on_disk[a.path.name]}  {a.path.name}" for a in release.archives]


def _clean_clone(tmp_path: Path) -> Path:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone)], check=True, timeout=120)
    return clone


def test_a_clean_clone_builds_the_same_release_twice_and_says_its_commit(tmp_path: Path) -> None:
    """`make dist` from a clean clone: twice the same archives, manifest and checksums; each zipapp's
    `version` names the clone's commit, clean, dated with the commit."""
    clone = _clean_clone(tmp_path)
    outs = []
    for n in (1, 2):
        out = tmp_path / f"dist{n}"
        proc = subprocess.run(
            [sys.executable, str(clone / "krew-manifest" / "build.py"), "--out", str(out)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stderr
        outs.append(out)
    files = sorted(p.name for p in outs[0].iterdir() if p.is_file())
    assert files == sorted(
        [*(f"kubectl-kcache-v{_setup_cfg_version()}-{o}-{a}.tar.gz" for o, a in PLATFORMS), "plugin.yaml", "SHA256SUMS"]
    )
    for name in files:
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name
    head = subprocess.run(
        ["git", "-C", str(clone), "log", "-1", "--format=%H %ct"], capture_output=True, text=True, check=True
    ).stdout.split()
    with zipfile.ZipFile(outs[0] / f"kubectl-kcache-v{_setup_cfg_version()}-linux-amd64" / "kubectl-kcache") as zf:
        generated = zf.read("kubectl_kcache/_build.py").decode()
    import datetime as dt

    date = dt.datetime.fromtimestamp(int(head[1]), dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert f"COMMIT = {head[0]!r}" in generated and "TREE_STATE = 'clean'" in generated
    assert f"DATE = {date!r}" in generated


def test_release_refuses_a_dirty_tree_and_a_version_without_changelog(tmp_path: Path) -> None:
    clone = _clean_clone(tmp_path)
    release_py = clone / "krew-manifest" / "release.py"

    def release() -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, str(release_py), "--out", str(tmp_path / "dist")],
            capture_output=True,
            text=True,
            timeout=600,
        )

    (clone / "kubectl_kcache" / "text.py").write_text("# changed\n")
    proc = release()
    assert proc.returncode == 2 and "release: the tree differs from its commit (kubectl_kcache/text.py)" in proc.stderr
    subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", "--", "."], check=True)
    changelog = clone / "CHANGELOG.md"
    changelog.write_text(changelog.read_text().replace(f"## v{_setup_cfg_version()}", "## v0.0.9"))
    subprocess.run(
        [
            "git",
            "-C",
            str(clone),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "--quiet",
            "-am",
            "no section",
        ],
        check=True,
    )
    proc = release()
    assert proc.returncode == 2, proc.stdout
    assert f"CHANGELOG.md has no `## v{_setup_cfg_version()}` section" in proc.stderr
    assert not (tmp_path / "dist").exists()


def test_release_writes_the_notes_of_its_version(tmp_path: Path) -> None:
    clone = _clean_clone(tmp_path)
    who = {f"GIT_{r}_{k}": v for r in ("AUTHOR", "COMMITTER") for k, v in (("NAME", "t"), ("EMAIL", "t@t"))}
    built = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    proc = subprocess.run(
        [sys.executable, str(clone / "krew-manifest" / "release.py"), "--out", str(tmp_path / "d")],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **who},
    )
    assert proc.returncode == 0, proc.stderr
    # the top-level plugin.yaml: dist's, naming the commit built, committed alone on top of it
    assert (clone / "plugin.yaml").read_text() == (tmp_path / "d" / "plugin.yaml").read_text()
    assert f"# commit: {built.strip()}\n" in (clone / "plugin.yaml").read_text()
    last = subprocess.run(
        ["git", "-C", str(clone), "show", "--name-only", "--format=%P", "HEAD"], capture_output=True, text=True
    ).stdout.split()
    assert last == [built.strip(), "plugin.yaml"]
    notes = (tmp_path / "d" / "RELEASE-NOTES.md").read_text()
    assert notes.startswith(f"# kubectl-kcache v{_setup_cfg_version()}\n\n")
    assert "`status`" in notes and "## " not in notes
    check = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=tmp_path / "d", capture_output=True, text=True)
    assert check.returncode == 0 and check.stdout.count(": OK") == len(PLATFORMS), check.stdout + check.stderr


def test_building_twice_gives_the_same_bytes(build: ModuleType, release, tmp_path: Path) -> None:
    again = build.build(tmp_path)
    assert [a.sha256 for a in again.archives] == [a.sha256 for a in release.archives]
    for a, b in zip(again.archives, release.archives, strict=True):
        assert a.path.read_bytes() == b.path.read_bytes()
        assert a.path.name == f"kubectl-kcache-v{_setup_cfg_version()}-{a.platform.os}-{a.platform.arch}.tar.gz"
    assert again.manifest_text == release.manifest_text


def test_build_is_offline_once_the_cache_is_warm(build: ModuleType, release, tmp_path: Path) -> None:
    """No index, no network: every pinned artifact comes from the cache the first build filled."""
    env = {
        **os.environ,
        "KCACHE_RELEASE_INDEX_URL": "http://127.0.0.1:9/simple",
        "PIP_INDEX_URL": "",
        "PIP_FIND_LINKS": "",
        "https_proxy": "http://127.0.0.1:9",
        "http_proxy": "http://127.0.0.1:9",
    }
    manifest = tmp_path / "plugin.yaml"
    proc = subprocess.run(
        [sys.executable, str(BUILD_PY), "--out", str(tmp_path), "--manifest", str(manifest)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "downloading" not in proc.stderr
    assert manifest.read_text() == release.manifest_text


# ---- the archives -------------------------------------------------------------------------------------


def test_one_archive_per_platform(release) -> None:
    assert [(a.platform.os, a.platform.arch) for a in release.archives] == PLATFORMS
    assert len({a.sha256 for a in release.archives}) == len(PLATFORMS)


@pytest.mark.parametrize("os_arch", PLATFORMS, ids="-".join)
def test_archive_is_normalised(release, os_arch: tuple[str, str]) -> None:
    archive = release.archive(*os_arch)
    raw = archive.path.read_bytes()
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
        assert tf.extractfile("kubectl-kcache").read() == archive.zipapp.read_bytes()  # type: ignore[union-attr]


@pytest.mark.parametrize("os_arch", PLATFORMS, ids="-".join)
def test_zipapp_is_sorted_timeless_and_compiled_only_in_platlib(release, os_arch: tuple[str, str]) -> None:
    zipapp = release.archive(*os_arch).zipapp
    assert zipapp.read_bytes().startswith(b"#!/usr/bin/env python3\n")
    with zipfile.ZipFile(zipapp) as zf:
        infos = zf.infolist()
        names = [i.filename for i in infos]
    assert names == sorted(names), "zip entries must be sorted"
    assert len(set(names)) == len(names)
    for i in infos:
        assert i.date_time == (1980, 1, 1, 0, 0, 0), i.filename
        assert i.external_attr >> 16 == 0o100644, i.filename
        assert i.compress_type == zipfile.ZIP_DEFLATED, i.filename
    compiled = [n for n in names if n.endswith(COMPILED) and not n.startswith("_platlib/")]
    assert not compiled, f"compiled files outside _platlib/: {compiled[:5]}"
    sources = [n for n in names if n.endswith((".c", ".h", ".pyx", ".pxd", ".pyc", ".pyo"))]
    assert not sources, f"C sources or bytecode in the zipapp: {sources[:5]}"
    assert not [n for n in names if "__pycache__" in n or ".dist-info/" in n or ".egg-info/" in n]
    tests = [n for n in names if re.search(r"(^|/)(tests?)/|(^|/)test_[^/]*\.py$|_test\.py$", n)]
    assert not tests, f"tests in the zipapp: {tests[:5]}"
    assert "__main__.py" in names and "yaml/__init__.py" in names and "kubernetes/client/__init__.py" in names
    assert "msgspec/__init__.py" not in names, "msgspec is only importable from its _platlib folder"


@pytest.mark.parametrize("os_arch", PLATFORMS, ids="-".join)
def test_zipapp_carries_msgspec_built_for_every_python_of_its_platform(release, os_arch: tuple[str, str]) -> None:
    """One _platlib folder per CPython version (and C library on Linux), each holding a whole msgspec whose
    extension module is named for that version and built for the archive's machine."""
    os_, arch = os_arch
    with zipfile.ZipFile(release.archive(*os_arch).zipapp) as zf:
        names = zf.namelist()
        folders = sorted({n.split("/")[1] for n in names if n.startswith("_platlib/")})
        assert folders == sorted(f"cp{v.replace('.', '')}-{variant}" for v in PYTHONS for variant in VARIANTS[os_])
        for folder in folders:
            cp, variant = folder.split("-")
            inside = [n.removeprefix(f"_platlib/{folder}/") for n in names if n.startswith(f"_platlib/{folder}/")]
            assert {"msgspec/__init__.py", "msgspec/json.py", "msgspec/structs.py"} <= set(inside), folder
            cores = [n for n in inside if n.startswith("msgspec/_core.")]
            assert len(cores) == 1, (folder, cores)
            core = zf.read(f"_platlib/{folder}/{cores[0]}")
            version = cp.removeprefix("cp")
            if os_ == "linux":
                libc = "musl" if variant == "musl" and int(version[1:]) >= 11 else "gnu"  # 3.10 on musl says gnu
                assert cores[0] == f"msgspec/_core.cpython-{version}-{LINUX_TRIPLET[arch]}-linux-{libc}.so"
                assert core[:4] == b"\x7fELF" and int.from_bytes(core[18:20], "little") == ELF_MACHINE[arch], folder
            else:
                assert cores[0] == f"msgspec/_core.cpython-{version}-darwin.so"
                assert core[:4] == b"\xcf\xfa\xed\xfe" and int.from_bytes(core[4:8], "little") == MACHO_CPU[arch]
    assert not [n for n in names if "win_amd64" in n or n.endswith(".pyd")]


def test_zipapp_holds_this_tree_and_every_license(build: ModuleType, release) -> None:
    for archive in release.archives:
        with zipfile.ZipFile(archive.zipapp) as zf:
            names = set(zf.namelist())
            ours = {
                p.relative_to(ROOT).as_posix()
                for p in (ROOT / "kubectl_kcache").rglob("*.py")
                if "__pycache__" not in p.parts
            }
            built = {"kubectl_kcache/py.typed", "kubectl_kcache/_build.py"}
            assert ours - {"kubectl_kcache/_build.py"} | built == {n for n in names if n.startswith("kubectl_kcache/")}
            for rel in sorted(ours - {"kubectl_kcache/_build.py"}):
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
    """Every runtime requirement (the Pythons the archives serve, Linux and macOS) of setup.cfg and of each
    pinned wheel is pinned, at a version it allows; nothing else is."""
    Requirement, canonical = _packaging()
    pins = {p.name: p for p in build.read_lock()}
    cfg = (ROOT / "setup.cfg").read_text()
    block = re.search(r"^install_requires =\n((?:[ \t]+\S.*\n)+)", cfg, re.MULTILINE)
    assert block
    wanted = [Requirement(line.strip()) for line in block.group(1).splitlines()]
    for pin in pins.values():
        filename, data = build.fetch(pin, pin.hashes[0], build.cache_dir())
        assert pin.filename in (None, filename)
        if not filename.endswith(".whl"):
            assert pin.name == "pyyaml", pin
            continue
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
            lines = zf.read(meta).decode().splitlines()
        wanted += [Requirement(line.split(":", 1)[1].strip()) for line in lines if line.startswith("Requires-Dist:")]
    envs = [
        {
            "python_version": v,
            "python_full_version": v + ".0",
            "sys_platform": s,
            "platform_system": ps,
            "os_name": "posix",
            "extra": "",
        }
        for v in PYTHONS
        for s, ps in (("linux", "Linux"), ("darwin", "Darwin"))
    ]
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
    assert int(kube.split(".")[0]) < 36, "kubernetes 36 adds aiohttp's tree and 37 pydantic-core (setup.cfg)"


def test_lock_pins_one_pure_artifact_per_project_but_msgspec(build: ModuleType) -> None:
    pins = build.read_lock()
    compiled = [p.name for p in pins if len(p.hashes) > 1]
    assert compiled == ["msgspec"]
    for pin in pins:
        if len(pin.hashes) == 1:
            assert pin.filename.endswith(("-py3-none-any.whl", "-py2.py3-none-any.whl")) or pin.name == "pyyaml", pin
    msgspec = next(p for p in pins if p.name == "msgspec")
    assert len(msgspec.hashes) == len(PYTHONS) * (2 * 2 + 2), "glibc and musl for 2 Linux arches, 2 macOS arches"


def test_lock_refuses_what_pip_would_not_read_alike(build: ModuleType, tmp_path: Path) -> None:
    sha = "a" * 64
    cases = {
        f"x==1 --hash=sha256:{sha}\n": "file name must follow",
        f"x==1 --hash=sha256:{sha} --hash=sha256:{'b' * 64}  # x-1-py3-none-any.whl\n": "names no file",
        f"x==1 --hash=sha256:{sha} --hash=sha256:{sha}\n": "given twice",
        "x==1  # x-1-py3-none-any.whl\n": "not `name==version",
        f"x==1 --hash=sha256:{sha}  # x.whl\nX==2 --hash=sha256:{'b' * 64}  # x.whl\n": "pinned twice",
    }
    for text, said in cases.items():
        lock = tmp_path / "requirements.txt"
        lock.write_text(text)
        with pytest.raises(build.BuildError, match=re.escape(said)):
            build.read_lock(lock)
    lock.write_text(f"y==2 \\\n    --hash=sha256:{sha} \\\n    --hash=sha256:{'b' * 64}\n")
    assert build.read_lock(lock) == [build.Pin("y", "2", (sha, "b" * 64), None)]


# ---- choosing the wheels an archive carries ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("filename", "expected"),
    [
        (
            "m-1-cp312-cp312-manylinux2014_x86_64.manylinux_2_17_x86_64.manylinux_2_28_x86_64.whl",
            [("linux", "amd64", "glibc", "3.12")],
        ),
        ("m-1-cp310-cp310-musllinux_1_2_aarch64.whl", [("linux", "arm64", "musl", "3.10")]),
        ("m-1-cp313-cp313-manylinux2014_aarch64.manylinux_2_17_aarch64.whl", [("linux", "arm64", "glibc", "3.13")]),
        ("m-1-cp315-cp315-macosx_10_15_x86_64.whl", [("darwin", "amd64", "macos", "3.15")]),
        ("m-1-cp311-cp311-macosx_11_0_arm64.whl", [("darwin", "arm64", "macos", "3.11")]),
        ("m-1-cp312-cp312-win_amd64.whl", []),  # Windows is not served
        ("m-1-cp314-cp314t-manylinux_2_17_x86_64.whl", []),  # free-threaded
        ("m-1-cp39-cp39-manylinux_2_17_x86_64.whl", []),  # not a version the plugin runs on
        ("m-1-cp312-abi3-manylinux_2_17_x86_64.whl", []),  # stable ABI: one version's ABI is what is selected on
        ("m-1-pp310-pypy310_pp73-manylinux_2_17_x86_64.whl", []),
        ("m-1-cp312-cp312-manylinux_2_31_riscv64.whl", []),
        ("m-1-cp312-cp312-linux_x86_64.whl", []),  # not manylinux: built for one distribution
    ],
)
def test_which_archive_takes_a_compiled_wheel(build: ModuleType, filename: str, expected: list) -> None:
    got = [(p.os, p.arch, v.name, python) for p, v, python in build.serves(build.filename_tags(filename))]
    assert got == expected


# ---- the zipapp picks the wheel of the running interpreter ---------------------------------------------

TABLE = (  # as build.py writes it for linux/amd64 (a part)
    ("_platlib/cp310-glibc", ".cpython-310-x86_64-linux-gnu.so", "x86_64", "glibc", "3.10"),
    ("_platlib/cp310-musl", ".cpython-310-x86_64-linux-gnu.so", "x86_64", "musl", "3.10"),
    ("_platlib/cp312-glibc", ".cpython-312-x86_64-linux-gnu.so", "x86_64", "glibc", "3.12"),
    ("_platlib/cp312-musl", ".cpython-312-x86_64-linux-musl.so", "x86_64", "musl", "3.12"),
)
DARWIN = (("_platlib/cp312-macos", ".cpython-312-darwin.so", "arm64", "", "3.12"),)


@pytest.mark.parametrize(
    ("table", "suffix", "machine", "libc", "expected"),
    [
        (TABLE, ".cpython-312-x86_64-linux-gnu.so", "x86_64", "glibc", "_platlib/cp312-glibc"),
        (TABLE, ".cpython-312-x86_64-linux-musl.so", "x86_64", "musl", "_platlib/cp312-musl"),
        (TABLE, ".cpython-310-x86_64-linux-gnu.so", "x86_64", "musl", "_platlib/cp310-musl"),  # same suffix as glibc
        (TABLE, ".cpython-310-x86_64-linux-gnu.so", "x86_64", "glibc", "_platlib/cp310-glibc"),
        (TABLE, ".cpython-310-x86_64-linux-gnu.so", "x86_64", "", None),  # a C library that is neither
        (TABLE, ".cpython-311-x86_64-linux-gnu.so", "x86_64", "glibc", None),  # a version it does not have
        (TABLE, ".cpython-312t-x86_64-linux-gnu.so", "x86_64", "glibc", None),  # free-threaded
        (TABLE, ".pypy310-pp73-x86_64-linux-gnu.so", "x86_64", "glibc", None),
        (TABLE, ".cpython-312-x86_64-linux-gnu.so", "AMD64", "glibc", "_platlib/cp312-glibc"),
        (DARWIN, ".cpython-312-darwin.so", "arm64", "", "_platlib/cp312-macos"),
        (DARWIN, ".cpython-312-darwin.so", "x86_64", "", None),  # an Intel python3 (Rosetta) on the arm64 archive
        (DARWIN, ".cpython-312-darwin.so", "aarch64", "", "_platlib/cp312-macos"),
    ],
)
def test_compiled_folder_for_an_interpreter(table, suffix: str, machine: str, libc: str, expected) -> None:
    zip_main = _load("kcache_zipapp_main", ZIP_MAIN_PY)
    assert zip_main.compiled_folder(table, suffix, machine, libc) == expected


def test_no_compiled_message_is_one_line_naming_the_versions_it_has() -> None:
    zip_main = _load("kcache_zipapp_main", ZIP_MAIN_PY)
    msg = zip_main.no_compiled_message(
        TABLE, "linux/amd64", "CPython 3.11", ".cpython-311-x86_64-linux-gnu.so", "x86_64", "glibc", "/usr/bin/python3"
    )
    assert "\n" not in msg
    assert msg.startswith(
        "kubectl-kcache: this release (linux/amd64) bundles its compiled dependency (msgspec) "
        "for CPython 3.10, 3.12 on x86_64 with glibc or musl, not for this python3: CPython 3.11"
    )
    assert ".cpython-311-x86_64-linux-gnu.so" in msg and "/usr/bin/python3" in msg


def test_a_zipapp_without_compiled_packages_needs_no_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    zip_main = _load("kcache_zipapp_main", ZIP_MAIN_PY)
    monkeypatch.setenv("KCACHE_ZIPAPP_UNPACK", "0")
    monkeypatch.setattr(zip_main, "COMPILED", ())
    assert zip_main._import_paths("/nonexistent/kubectl-kcache") == ([], None)
    monkeypatch.setattr(zip_main, "COMPILED", DARWIN)  # this Linux interpreter has nothing there
    with pytest.raises(SystemExit) as exit_:
        zip_main._import_paths("/nonexistent/kubectl-kcache")
    assert exit_.value.code == 2


@pytest.mark.parametrize("os_arch", PLATFORMS, ids="-".join)
def test_built_table_lists_every_folder_with_its_suffix(release, os_arch: tuple[str, str]) -> None:
    archive = release.archive(*os_arch)
    zip_main = _zip_main(archive.zipapp)
    assert "/".join(os_arch) == zip_main.RELEASE
    with zipfile.ZipFile(archive.zipapp) as zf:
        names = zf.namelist()
    assert len(zip_main.COMPILED) == len(PYTHONS) * len(VARIANTS[os_arch[0]])
    for folder, suffix, machine, libc, python in zip_main.COMPILED:
        assert f"{folder}/msgspec/_core{suffix}" in names
        assert zip_main.same_machine(machine, {"amd64": "x86_64", "arm64": "arm64"}[os_arch[1]])
        assert libc == ("" if os_arch[0] == "darwin" else folder.rsplit("-", 1)[1])
        assert folder == f"_platlib/cp{python.replace('.', '')}-{folder.rsplit('-', 1)[1]}"


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
    for needed in (
        "python3",
        "3.10",
        "deploy/doctor-rbac.yaml",
        "deploy/rbac.yaml",
        "kubectl_complete-kcache",
        "kubectl kcache completion bash",
        "kubectl kcache --help",
    ):
        assert needed in caveats, needed
    assert f"/{tag}/deploy/doctor-rbac.yaml" in caveats, "the RBAC of the release, not of whatever main is"
    from kubectl_kcache.cli import main

    description = spec["description"]
    for command in sorted(n for n, c in main.commands.items() if not c.hidden and n != "why-cached"):
        assert re.search(rf"^  {re.escape(command)} ", description, re.MULTILINE), f"{command} not described"
    assert "https://github.com/kserve/kubectl-kcache" in description and "--help" in description
    assert "docs/" not in description + caveats, "a krew user has no docs folder: point to a URL or --help"
    platforms = spec["platforms"]
    assert [(p["selector"]["matchLabels"]["os"], p["selector"]["matchLabels"]["arch"]) for p in platforms] == PLATFORMS
    for p in platforms:
        os_, arch = p["selector"]["matchLabels"]["os"], p["selector"]["matchLabels"]["arch"]
        assert set(p["selector"]) == {"matchLabels"} and set(p["selector"]["matchLabels"]) == {"os", "arch"}
        assert p["uri"] == (
            f"https://github.com/kserve/kubectl-kcache/releases/download/{tag}/kubectl-kcache-{tag}-{os_}-{arch}.tar.gz"
        )
        assert re.fullmatch(r"[0-9a-f]{64}", p["sha256"])
        assert p["sha256"] == release.archive(os_, arch).sha256
        assert p["bin"] == "kubectl-kcache"
        assert {f["from"] for f in p["files"]} == {"kubectl-kcache", "LICENSE"}
        assert all(f["to"] == "." for f in p["files"])


def test_version_is_written_once() -> None:
    """kubectl_kcache/__init__.py holds the number; setup.cfg and build.py read it from there."""
    from kubectl_kcache import __version__

    assert __version__ == _setup_cfg_version()
    assert re.search(r"^version = attr: kubectl_kcache.__version__$", (ROOT / "setup.cfg").read_text(), re.MULTILINE)
    numbered = [
        p.relative_to(ROOT).as_posix()
        for p in [*ROOT.glob("*.cfg"), *ROOT.glob("*.toml"), ROOT / "setup.py", *(ROOT / "krew-manifest").iterdir()]
        if p.is_file() and re.search(r"version\s*=\s*['\"]?\d+\.\d+\.\d+", p.read_text())
    ]
    assert numbered == [], f"a version number written outside kubectl_kcache/__init__.py: {numbered}"


# ---- the zipapp runs on a bare Python -----------------------------------------------------------------

SNAPSHOT = """\
apiVersion: v1
kind: Node
metadata:
  name: gpu-1
  labels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
status:
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: v1
kind: ConfigMapList  # exported, and empty: KServe's configuration does not exist
items: []
"""


def _this_archive(release):
    machine = platform.machine().lower()
    return release.archive("linux", {"x86_64": "amd64", "aarch64": "arm64"}[machine])


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv without pip: no site packages at all, so only what the zipapp bundles can be imported."""
    venv = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    return venv / "bin" / "python"


def _env(cache: Path, unpack: bool = True) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(cache),
        "KCACHE_ZIPAPP_CACHE": str(cache / "zipapp"),
        "KCACHE_ZIPAPP_UNPACK": "1" if unpack else "0",
        "NO_COLOR": "1",
        "TMPDIR": str(cache / "tmp"),
    }


def _run(
    python: Path, app: Path, *args: str, cache: Path, unpack: bool = True, flags: tuple[str, ...] = ("-I",)
) -> subprocess.CompletedProcess:
    (cache / "tmp").mkdir(exist_ok=True)
    return subprocess.run(
        [str(python), *flags, str(app), *args],
        capture_output=True,
        text=True,
        env=_env(cache, unpack),
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def _probe(python: Path, app: Path, *args: str, cache: Path, unpack: bool = True) -> tuple[int, Path, str]:
    (cache / "tmp").mkdir(exist_ok=True)
    proc = subprocess.run(
        [str(python), "-I", "-S", "-c", PROBE, str(app), *args],
        capture_output=True,
        text=True,
        env=_env(cache, unpack),
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("msgspec-core ")]
    assert lines, proc.stdout + proc.stderr
    _, core, decoded = lines[0].split(" ", 2)
    assert decoded == "{'a': [1]}"
    return proc.returncode, Path(core), proc.stdout


@pytest.mark.parametrize("unpack", [False, True], ids=["from-zip", "unpacked"])
def test_zipapp_runs_isolated_without_dependencies(release, bare_python: Path, tmp_path: Path, unpack: bool) -> None:
    app = _this_archive(release).zipapp
    snapshot = tmp_path / "snapshot.yaml"
    snapshot.write_text(SNAPSHOT)
    help_ = _run(bare_python, app, "--help", cache=tmp_path, unpack=unpack)
    assert help_.returncode == 0, help_.stderr
    assert "kubectl kcache" in help_.stdout
    doctor = _run(bare_python, app, "doctor", "--from-file", str(snapshot), cache=tmp_path, unpack=unpack)
    assert doctor.returncode == 1, doctor.stderr  # findings: no KServe configuration in that snapshot
    assert "inferenceservice-config" in doctor.stdout
    unpacked = list((tmp_path / "zipapp").glob("*/.complete"))
    assert len(unpacked) == (1 if unpack else 0)
    if unpack:  # a second run uses the folder, and Python has cached bytecode there
        assert _run(bare_python, app, "--help", cache=tmp_path).returncode == 0
        assert list(unpacked[0].parent.glob("kubectl_kcache/__pycache__/*.pyc"))
    assert not list((tmp_path / "tmp").iterdir()), "a temporary folder was left behind"


def test_zipapp_keeps_the_bytecode_of_what_ran_when_python_is_told_not_to_write_any(
    release, bare_python: Path, tmp_path: Path
) -> None:
    """Under -B (or PYTHONDONTWRITEBYTECODE) every run compiled its modules again: the modules a command
    imported from the unpacked folder are compiled into it at exit, and only those."""
    app = _this_archive(release).zipapp
    snapshot = tmp_path / "snapshot.yaml"
    snapshot.write_text(SNAPSHOT)
    doctor = _run(bare_python, app, "doctor", "--from-file", str(snapshot), cache=tmp_path, flags=("-I", "-B"))
    assert doctor.returncode == 1, doctor.stderr
    (root,) = (p.parent for p in (tmp_path / "zipapp").glob("*/.complete"))
    cached = {p.name.split(".")[0] for p in root.glob("kubectl_kcache/cli/__pycache__/*.pyc")}
    assert {"__init__", "doctor", "app"} <= cached
    assert not list(root.glob("kubectl_kcache/reconcile/__pycache__/*.pyc"))  # not imported by the doctor
    again = _run(bare_python, app, "doctor", "--from-file", str(snapshot), cache=tmp_path, flags=("-I", "-B"))
    assert again.returncode == 1 and again.stdout == doctor.stdout


@pytest.mark.parametrize("unpack", [False, True], ids=["from-zip", "unpacked"])
def test_zipapp_loads_the_compiled_msgspec_of_this_python(
    release, bare_python: Path, tmp_path: Path, unpack: bool
) -> None:
    """Unpacked, msgspec's extension module is loaded from the cache folder; with KCACHE_ZIPAPP_UNPACK=0 from
    a private temporary folder, removed when the process ends."""
    code, core, out = _probe(bare_python, _this_archive(release).zipapp, "version", cache=tmp_path, unpack=unpack)
    assert code == 0, out
    assert out.startswith("kubectl-kcache ")
    assert core.name == "_core" + importlib.machinery.EXTENSION_SUFFIXES[0]
    cp = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    if unpack:
        assert core.is_relative_to(tmp_path / "zipapp") and core.parent.parent.name == f"{cp}-glibc"
    else:
        assert core.is_relative_to(tmp_path / "tmp") and core.parent.parent.name == f"{cp}-glibc"
        assert not core.exists() and not list((tmp_path / "tmp").iterdir()), "not removed at exit"
        assert not (tmp_path / "zipapp").exists()


def _pythons_here() -> list[Path]:
    """CPython interpreters on this machine besides the one running the tests (pyenv's, python3.X on PATH)."""
    found = {}
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = sorted(pyenv.glob("3.*/bin/python3")) if pyenv.is_dir() else []
    for v in range(6, 20):
        for d in os.environ.get("PATH", "").split(os.pathsep):
            candidates.append(Path(d) / f"python3.{v}")
    for c in candidates:
        if not c.is_file() or "shims" in c.parts:
            continue
        proc = subprocess.run(
            [str(c), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        if proc.returncode == 0:
            found.setdefault(proc.stdout.strip(), c)
    return [found[v] for v in sorted(found, key=lambda v: tuple(map(int, v.split("."))))]


def test_zipapp_picks_the_wheel_of_each_python_on_this_machine(release, tmp_path: Path) -> None:
    """Every CPython 3.10+ here loads the msgspec built for its own version from the one zipapp; an older one
    gets the plugin's "needs Python 3.10" line."""
    app = _this_archive(release).zipapp
    pythons = _pythons_here()
    assert pythons, "no python3.X found"
    loaded = []
    for python in pythons:
        version = subprocess.run(
            [str(python), "-c", "import sys; print('%d%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        if int(version[1:]) < 10:
            proc = _run(python, app, "version", cache=tmp_path)
            assert proc.returncode == 2, proc.stdout + proc.stderr
            assert proc.stderr.startswith("kubectl-kcache needs Python 3.10 or newer"), proc.stderr
            continue
        code, core, out = _probe(python, app, "version", cache=tmp_path)
        assert code == 0, out
        assert core.parent.parent.name == f"cp{version}-glibc" and f"cpython-{version}-" in core.name
        loaded.append(version)
    assert f"{sys.version_info[0]}{sys.version_info[1]}" in loaded


def test_zipapp_without_a_wheel_for_this_python_says_which_versions_it_has(
    release, bare_python: Path, tmp_path: Path
) -> None:
    """The darwin/arm64 zipapp run by this Linux python3: no wheel can be loaded here; one line, exit 2."""
    app = release.archive("darwin", "arm64").zipapp
    proc = _run(bare_python, app, "version", cache=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(
        "kubectl-kcache: this release (darwin/arm64) bundles its compiled dependency "
        "(msgspec) for CPython 3.10, 3.11, 3.12, 3.13, 3.14, 3.15 on arm64, not for this "
        f"python3: CPython {sys.version_info[0]}.{sys.version_info[1]} on "
    )
    assert importlib.machinery.EXTENSION_SUFFIXES[0] in lines[0]
    assert not (tmp_path / "zipapp").exists(), "nothing is unpacked for a Python it cannot serve"


def test_zipapp_called_kubectl_complete_completes(release, bare_python: Path, tmp_path: Path) -> None:
    link = tmp_path / "kubectl_complete-kcache"
    link.symlink_to(_this_archive(release).zipapp)
    proc = _run(bare_python, link, "", cache=tmp_path)
    assert proc.returncode == 0, proc.stderr
    words = proc.stdout.split()
    assert "doctor" in words and words[-1] == ":4"


def test_zipapp_ignores_a_cache_folder_others_can_write(release, bare_python: Path, tmp_path: Path) -> None:
    app = _this_archive(release).zipapp
    build_id = _zip_main(app).BUILD_ID
    cache = tmp_path / "zipapp"
    planted = cache / build_id / "kubectl_kcache"
    planted.mkdir(parents=True)
    (planted / "__init__.py").write_text("")
    (planted / "__main__.py").write_text("def main():\n    print('PLANTED')\n")
    (cache / build_id / ".complete").touch()
    for d in (cache, cache / build_id):
        d.chmod(0o700)
    assert _run(bare_python, app, "--help", cache=tmp_path).stdout.strip() == "PLANTED"  # it is used
    for writable in (cache, cache / build_id):
        writable.chmod(0o777)
        proc = _run(bare_python, app, "--help", cache=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert "PLANTED" not in proc.stdout and "kubectl kcache" in proc.stdout
        code, core, out = _probe(bare_python, app, "version", cache=tmp_path)
        assert code == 0 and core.is_relative_to(tmp_path / "tmp"), out  # its msgspec is not loaded either
        writable.chmod(0o700)
