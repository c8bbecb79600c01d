"""The layers of `.importlinter` hold, and its contracts are not empty words: a check that imports the
kube package (the one door to the API server) breaks them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).with_name("lint-imports")


def lint(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT), "--config", str(tree / ".importlinter"), "--no-cache"],
        cwd=tree,
        env={"PYTHONPATH": str(tree), "PATH": str(LINT.parent)},
        capture_output=True,
        text=True,
        timeout=300,
    )


def lint_with_import(tmp_path: Path, module: str, line: str) -> subprocess.CompletedProcess[str]:
    """lint-imports on a copy of the tree where `module` (a path under kubectl_kcache/) ends with `line`."""
    shutil.copytree(ROOT / "kubectl_kcache", tmp_path / "kubectl_kcache", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    path = tmp_path / "kubectl_kcache" / module
    path.write_text(path.read_text() + f"\n{line}  # noqa: E402,F401\n")
    return lint(tmp_path)


def test_the_contracts_hold_on_the_tree():
    result = lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_a_check_that_imports_kube_breaks_the_contracts(tmp_path):
    result = lint_with_import(tmp_path, "checks/nodes.py", "from ..kube import transport")
    assert result.returncode != 0
    broken = result.stdout[result.stdout.index("Broken contracts") :]
    assert "Answers are made from a snapshot" in broken
    assert "kubectl_kcache.checks.nodes -> kubectl_kcache.kube.transport" in broken


def test_following_watches_may_not_use_the_live_lister(tmp_path):
    result = lint_with_import(tmp_path, "snapshot/follow.py", "from .live import Collector")
    assert result.returncode != 0
    assert "kubectl_kcache.snapshot.follow is not allowed to import kubectl_kcache.snapshot.live" in " ".join(
        result.stdout.split()
    )


def test_reconciles_peers_may_not_hold_a_client(tmp_path):
    """Another controller is judged from the informers' stores and events (peers.py), never by reading the API
    server around the read plan."""
    result = lint_with_import(tmp_path, "reconcile/peers.py", "from ..kube.listing import list_all")
    assert result.returncode != 0
    broken = " ".join(result.stdout[result.stdout.index("Broken contracts") :].split())
    assert "holds no client" in broken and "never by listing or watching with kube/ themselves" in broken
    assert "kubectl_kcache.reconcile.peers -> kubectl_kcache.kube.listing" in broken
