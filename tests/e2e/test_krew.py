"""The krew release as a user gets it: plugin.yaml passes krew's own validator, and krew v0.4 installs the
archive of this machine's platform offline (--manifest/--archive) into a fresh KREW_ROOT, after which kubectl
runs the plugin (with msgspec's extension module loaded from the archive), its completion hook and
`krew list`, all with a python3 that has no packages at all. Every other platform entry of the manifest is
installed too (krew's KREW_OS/KREW_ARCH), each taking exactly its own archive; Windows is not offered.

The test bed is used only for its binaries (kubectl, krew, validate-krew-manifest) and, read-only, for one
live `doctor`; the cluster is not reset.
"""

from __future__ import annotations

import importlib.machinery
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.zipapp_probe import PROBE

from .cluster import Cluster

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
VERSION_TAG = "v" + next(
    line.split("=", 1)[1].strip().strip('"')
    for line in (ROOT / "kubectl_kcache" / "__init__.py").read_text().splitlines()
    if line.startswith("__version__ =")
)


def _run(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)


PLATFORMS = [("linux", "amd64"), ("linux", "arm64"), ("darwin", "amd64"), ("darwin", "arm64")]
HERE = ("linux", {"x86_64": "amd64", "aarch64": "arm64"}[platform.machine().lower()])


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[tuple[str, str], Path]]:
    """The archives built from this tree and the manifest generated for them (`make dist`)."""
    out = tmp_path_factory.mktemp("dist")
    manifest = out / "plugin.yaml"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "krew-manifest" / "build.py"), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    archives = {(o, a): out / f"kubectl-kcache-{VERSION_TAG}-{o}-{a}.tar.gz" for o, a in PLATFORMS}
    assert manifest.is_file() and all(p.is_file() for p in archives.values())
    return manifest, archives


def _user(tmp_path: Path, testbed: Cluster) -> tuple[dict[str, str], Path, Path]:
    """A user's environment: a fresh KREW_ROOT, kubectl and krew, and a python3 without any package."""
    krew_root = tmp_path / "krew"
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "kubectl-krew").symlink_to(testbed.bin / "krew")  # kubectl finds plugins as kubectl-<name> on PATH
    venv = tmp_path / "venv"  # `#!/usr/bin/env python3` finds this one: no site packages, nothing installed
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    env = {
        "HOME": str(tmp_path),
        "KREW_ROOT": str(krew_root),
        "KREW_NO_UPGRADE_CHECK": "1",
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "KUBECONFIG": str(tmp_path / "no-kubeconfig"),
        "PATH": os.pathsep.join(
            [str(tools), str(venv / "bin"), str(testbed.bin), str(krew_root / "bin"), "/usr/bin", "/bin"]
        ),
    }
    return env, krew_root, venv / "bin" / "python3"


def test_validate_krew_manifest(testbed: Cluster, release: tuple[Path, dict], tmp_path: Path) -> None:
    shutil.copy(release[0], tmp_path / "kcache.yaml")  # the validator wants <plugin name>.yaml
    proc = _run(
        [str(testbed.bin / "validate-krew-manifest"), "-manifest", "kcache.yaml", "-skip-install"],
        env=dict(os.environ),
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "structural validation OK" in proc.stderr


def test_krew_install_offline(testbed: Cluster, release: tuple[Path, dict], tmp_path: Path, cluster: Cluster) -> None:
    manifest, archives = release
    archive = archives[HERE]
    env, krew_root, python3 = _user(tmp_path, testbed)
    cache = tmp_path / "cache"
    kubectl = str(testbed.bin / "kubectl")

    proc = _run([kubectl, "krew", "install", f"--manifest={manifest}", f"--archive={archive}"], env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Installed plugin: kcache" in proc.stdout + proc.stderr
    with tarfile.open(archive) as tf:
        shipped = tf.extractfile("kubectl-kcache").read()  # type: ignore[union-attr]
    installed = krew_root / "store" / "kcache" / VERSION_TAG
    assert sorted(p.name for p in installed.iterdir()) == ["LICENSE", "kubectl-kcache"]
    assert (installed / "kubectl-kcache").read_bytes() == shipped
    link = krew_root / "bin" / "kubectl-kcache"
    assert link.is_symlink() and link.resolve() == (installed / "kubectl-kcache").resolve()

    plugins = _run([kubectl, "plugin", "list"], env)
    assert str(link) in plugins.stdout, plugins.stdout + plugins.stderr
    assert "warning" not in plugins.stderr.lower(), plugins.stderr  # nothing shadows it

    help_ = _run([kubectl, "kcache", "--help"], env)
    assert help_.returncode == 0, help_.stderr
    assert "kubectl kcache" in help_.stdout
    assert list((cache / "kubectl-kcache" / "zipapp").glob("*/.complete")), "the krew-installed zipapp did not run"

    version = _run([kubectl, "kcache", "version"], env)
    assert version.returncode == 0, version.stderr
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert version.stdout.splitlines()[:2] == [f"kubectl-kcache {VERSION_TAG[1:]}", f"commit: {head} (clean)"] or (
        version.stdout.splitlines()[:2] == [f"kubectl-kcache {VERSION_TAG[1:]}", f"commit: {head} (dirty)"]
    )

    # the compiled dependency: msgspec's extension module for this python3, from the archive, unpacked
    probe = _run([str(python3), "-c", PROBE, str(link), "version"], env)
    assert probe.returncode == 0, probe.stdout + probe.stderr
    _, core, decoded = probe.stdout.splitlines()[-1].split(" ", 2)
    cp = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    assert decoded == "{'a': [1]}"
    assert Path(core).is_relative_to(cache / "kubectl-kcache" / "zipapp"), core
    assert Path(core).parent.parent.name == f"{cp}-glibc"
    assert Path(core).name == "_core" + importlib.machinery.EXTENSION_SUFFIXES[0]

    example = ROOT / "examples" / "healthy-cluster.yaml"
    doctor = _run([kubectl, "kcache", "doctor", "--from-file", str(example)], env)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "no problems found" in doctor.stdout
    broken = _run(
        [kubectl, "kcache", "doctor", "--from-file", str(ROOT / "examples" / "broken-cluster.yaml"), "-o", "json"], env
    )
    assert broken.returncode == 1, broken.stderr
    assert json.loads(broken.stdout)["summary"]["errors"] > 0

    # live, read-only, against the test bed (reset: what earlier tests left is not this test's subject): the
    # bundled Kubernetes client works from the zipapp
    live = _run(
        [kubectl, "kcache", "doctor", "-o", "json", "--fail-on", "never"], {**env, "KUBECONFIG": testbed.kubeconfig}
    )
    assert live.returncode == 0, live.stderr
    assert json.loads(live.stdout)["kind"] == "DoctorReport"

    # completion, as docs/install.md and the caveats say: a kubectl_complete-kcache symlink on PATH
    (krew_root / "bin" / "kubectl_complete-kcache").symlink_to("kubectl-kcache")
    words = _run([kubectl, "__complete", "kcache", "do"], env)
    assert words.returncode == 0, words.stderr
    assert words.stdout.split()[0] == "doctor", words.stdout + words.stderr
    assert ":4" in words.stdout.split()

    # list and uninstall check that an index exists; offline, an empty one will do
    for d in ("index/default/.git", "index/default/plugins"):
        (krew_root / d).mkdir(parents=True, exist_ok=True)
    listed = _run([kubectl, "krew", "list"], env)
    assert listed.returncode == 0, listed.stderr
    assert "kcache" in listed.stdout
    gone = _run([kubectl, "krew", "uninstall", "kcache"], env)
    assert gone.returncode == 0, gone.stderr
    assert not link.exists() and not installed.exists()


@pytest.mark.parametrize("os_arch", [p for p in PLATFORMS if p != HERE], ids="-".join)
def test_krew_installs_each_platform_entry_from_its_own_archive(
    testbed: Cluster, release: tuple[Path, dict], tmp_path: Path, os_arch: tuple[str, str]
) -> None:
    """krew picks the entry of KREW_OS/KREW_ARCH, refuses any other archive for it, installs its own; that
    plugin then tells this machine's python3, in one line, that it carries nothing it can load."""
    manifest, archives = release
    env, krew_root, _ = _user(tmp_path, testbed)
    env = {**env, "KREW_OS": os_arch[0], "KREW_ARCH": os_arch[1]}
    kubectl = str(testbed.bin / "kubectl")
    wrong = _run([kubectl, "krew", "install", f"--manifest={manifest}", f"--archive={archives[HERE]}"], env)
    assert wrong.returncode != 0 and "checksum does not match" in wrong.stderr, wrong.stdout + wrong.stderr
    assert not (krew_root / "store" / "kcache").exists()
    proc = _run([kubectl, "krew", "install", f"--manifest={manifest}", f"--archive={archives[os_arch]}"], env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with tarfile.open(archives[os_arch]) as tf:
        shipped = tf.extractfile("kubectl-kcache").read()  # type: ignore[union-attr]
    assert (krew_root / "store" / "kcache" / VERSION_TAG / "kubectl-kcache").read_bytes() == shipped
    foreign = _run([kubectl, "kcache", "version"], env)
    assert foreign.returncode == 2, foreign.stdout + foreign.stderr
    assert foreign.stderr.startswith(
        f"kubectl-kcache: this release ({os_arch[0]}/{os_arch[1]}) bundles its "
        "compiled dependency (msgspec) for CPython 3.10, 3.11, 3.12, 3.13, 3.14, 3.15"
    )


def test_krew_offers_nothing_for_windows(testbed: Cluster, release: tuple[Path, dict], tmp_path: Path) -> None:
    """krew only runs .exe entry points on Windows, which a Python zipapp is not (docs/install.md)."""
    manifest, archives = release
    env, krew_root, _ = _user(tmp_path, testbed)
    proc = _run(
        [str(testbed.bin / "kubectl"), "krew", "install", f"--manifest={manifest}", f"--archive={archives[HERE]}"],
        {**env, "KREW_OS": "windows", "KREW_ARCH": "amd64"},
    )
    assert proc.returncode != 0
    assert 'plugin "kcache" does not offer installation for this platform' in proc.stderr, proc.stderr
