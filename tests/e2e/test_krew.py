"""The krew release as a user gets it: plugin.yaml passes krew's own validator, and krew v0.4 installs the
archive offline (--manifest/--archive) into a fresh KREW_ROOT, after which kubectl runs the plugin, its
completion hook and `krew list`, all with a python3 that has no packages at all.

The test bed is used only for its binaries (kubectl, krew, validate-krew-manifest) and, read-only, for one
live `doctor`; the cluster is not reset.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .cluster import Cluster

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
VERSION_TAG = "v" + next(
    line.split("=", 1)[1].strip() for line in (ROOT / "setup.cfg").read_text().splitlines()
    if line.replace(" ", "").startswith("version=")
)


def _run(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The archive built from this tree and its manifest (that plugin.yaml is this manifest, committed, is
    tests/unit/test_release.py's business: here a stale plugin.yaml must not hide what krew does)."""
    out = tmp_path_factory.mktemp("dist")
    manifest = out / "plugin.yaml"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "krew-manifest" / "build.py"), "--out", str(out), "--manifest", str(manifest)],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    archive = out / f"kubectl-kcache-{VERSION_TAG}.tar.gz"
    assert archive.is_file() and manifest.is_file()
    return manifest, archive


@pytest.mark.parametrize("which", ["committed", "built"])
def test_validate_krew_manifest(testbed: Cluster, release: tuple[Path, Path], tmp_path: Path, which: str) -> None:
    source = ROOT / "plugin.yaml" if which == "committed" else release[0]
    shutil.copy(source, tmp_path / "kcache.yaml")  # the validator wants <plugin name>.yaml
    proc = _run([str(testbed.bin / "validate-krew-manifest"), "-manifest", "kcache.yaml", "-skip-install"],
                env=dict(os.environ), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "structural validation OK" in proc.stderr


def test_krew_install_offline(testbed: Cluster, release: tuple[Path, Path], tmp_path: Path) -> None:
    manifest, archive = release
    krew_root = tmp_path / "krew"
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "kubectl-krew").symlink_to(testbed.bin / "krew")  # kubectl finds plugins as kubectl-<name> on PATH
    venv = tmp_path / "venv"  # `#!/usr/bin/env python3` finds this one: no site packages, nothing installed
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    cache = tmp_path / "cache"
    env = {
        "HOME": str(tmp_path),
        "KREW_ROOT": str(krew_root),
        "KREW_NO_UPGRADE_CHECK": "1",
        "XDG_CACHE_HOME": str(cache),
        "KUBECONFIG": str(tmp_path / "no-kubeconfig"),
        "PATH": os.pathsep.join([str(tools), str(venv / "bin"), str(testbed.bin), str(krew_root / "bin"),
                                 "/usr/bin", "/bin"]),
    }
    kubectl = str(testbed.bin / "kubectl")

    proc = _run([kubectl, "krew", "install", f"--manifest={manifest}", f"--archive={archive}"], env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Installed plugin: kcache" in proc.stdout + proc.stderr
    installed = krew_root / "store" / "kcache" / VERSION_TAG
    assert sorted(p.name for p in installed.iterdir()) == ["LICENSE", "kubectl-kcache"]
    link = krew_root / "bin" / "kubectl-kcache"
    assert link.is_symlink() and link.resolve() == (installed / "kubectl-kcache").resolve()

    plugins = _run([kubectl, "plugin", "list"], env)
    assert str(link) in plugins.stdout, plugins.stdout + plugins.stderr
    assert "warning" not in plugins.stderr.lower(), plugins.stderr  # nothing shadows it

    help_ = _run([kubectl, "kcache", "--help"], env)
    assert help_.returncode == 0, help_.stderr
    assert "kubectl kcache" in help_.stdout
    assert list((cache / "kubectl-kcache" / "zipapp").glob("*/.complete")), "the krew-installed zipapp did not run"

    example = ROOT / "examples" / "healthy-cluster.yaml"
    doctor = _run([kubectl, "kcache", "doctor", "--from-file", str(example)], env)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "no problems found" in doctor.stdout
    broken = _run([kubectl, "kcache", "doctor", "--from-file", str(ROOT / "examples" / "broken-cluster.yaml"),
                   "-o", "json"], env)
    assert broken.returncode == 1, broken.stderr
    assert json.loads(broken.stdout)["summary"]["errors"] > 0

    # live, read-only, against the test bed: the bundled Kubernetes client works from the zipapp
    live = _run([kubectl, "kcache", "doctor", "-o", "json", "--fail-on", "never"],
                {**env, "KUBECONFIG": testbed.kubeconfig})
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
