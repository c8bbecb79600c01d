"""The committed plugin.yaml, the manifest of the latest release (issue 37, point 1): krew's own validator
accepts it under the name krew-index gives it, its version is the newest CHANGELOG entry's and the package's,
only release commits wrote it, and in a fresh clone `make dist` rebuilds, from the commit it names, archives
with exactly its sha256, which the README's krew line then installs as written.

The test bed is used only for its binaries (kubectl, krew, validate-krew-manifest)."""

from __future__ import annotations

import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .cluster import Cluster

pytestmark = [pytest.mark.e2e, pytest.mark.release]

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "plugin.yaml"
HERE = f"linux-{ {'x86_64': 'amd64', 'aarch64': 'arm64'}[platform.machine().lower()] }"


def _git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, check=True).stdout.strip()


def _manifest() -> dict:
    return yaml.safe_load(MANIFEST.read_text())


def test_its_version_is_the_newest_changelog_entry_and_the_package() -> None:
    newest = re.search(r"^## v(\d+\.\d+\.\d+)", (ROOT / "CHANGELOG.md").read_text(), re.MULTILINE)
    package = re.search(r'^__version__ = "(.+)"$', (ROOT / "kubectl_kcache" / "__init__.py").read_text(), re.M)
    assert newest and package
    assert _manifest()["spec"]["version"] == f"v{newest.group(1)}" == f"v{package.group(1)}"
    for p in _manifest()["spec"]["platforms"]:
        assert f"/releases/download/v{newest.group(1)}/kubectl-kcache-v{newest.group(1)}-" in p["uri"]


def test_only_release_commits_wrote_it() -> None:
    """Every commit that changed plugin.yaml since the commit it names (the release built) changed nothing else
    (an older manifest, removed before, was another file's history)."""
    built = re.search(r"^# commit: ([0-9a-f]{40})$", MANIFEST.read_text(), re.MULTILINE)
    assert built, "plugin.yaml names the commit its archives were built from"
    commits = _git("log", "--format=%H", f"{built.group(1)}..HEAD", "--", "plugin.yaml").split()
    assert commits, "the manifest was committed after the commit it was built from"
    for commit in commits:
        assert _git("show", "--name-only", "--format=", commit).split() == ["plugin.yaml"], commit


def test_krews_validator_accepts_it(testbed: Cluster, tmp_path: Path) -> None:
    shutil.copy(MANIFEST, tmp_path / "kcache.yaml")  # as krew-index holds it: plugins/<name>.yaml
    proc = subprocess.run(
        [str(testbed.bin / "validate-krew-manifest"), "-manifest", "kcache.yaml", "-skip-install"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "structural validation OK" in proc.stderr


def test_a_fresh_clone_rebuilds_its_archives_and_the_readme_line_installs_them(
    testbed: Cluster, tmp_path: Path
) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, timeout=120)
    readme = (clone / "README.md").read_text()
    line = re.search(r"`(make dist && kubectl krew install --manifest=plugin\.yaml [^`]+)`", readme)
    assert line, "the README's krew line"
    command = line.group(1).replace("linux-amd64", HERE)

    krew_root, tools = tmp_path / "krew", tmp_path / "bin"
    tools.mkdir()
    (tools / "kubectl-krew").symlink_to(testbed.bin / "krew")
    (tools / "python3").symlink_to(sys.executable)
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "KREW_ROOT": str(krew_root),
        "KREW_NO_UPGRADE_CHECK": "1",
        "PATH": os.pathsep.join([str(tools), str(testbed.bin), os.environ.get("PATH", "")]),
    }
    proc = subprocess.run(["bash", "-c", command], cwd=clone, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Installed plugin: kcache" in proc.stdout + proc.stderr

    said = {p["uri"].rsplit("/", 1)[1]: p["sha256"] for p in _manifest()["spec"]["platforms"]}
    built = {n: hashlib.sha256((clone / "dist" / n).read_bytes()).hexdigest() for n in said}
    assert built == said, "make dist rebuilt archives with the manifest's sha256"
    version = subprocess.run(
        [str(testbed.bin / "kubectl"), "kcache", "version"],
        env={**env, "PATH": os.pathsep.join([str(krew_root / "bin"), env["PATH"]])},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert version.returncode == 0, version.stderr
    commit = re.search(r"^# commit: ([0-9a-f]{40})$", MANIFEST.read_text(), re.MULTILINE)
    assert commit and f"commit: {commit.group(1)} (clean)" in version.stdout
