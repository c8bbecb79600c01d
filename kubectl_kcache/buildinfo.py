"""Which build of the plugin this is: its version (kubectl_kcache.__version__, the one place it is written),
the git commit it was built from and when.

A release archive (krew-manifest/build.py) and a pip install (setup.py's build step) carry the generated
module `_build.py`; an editable install or a checkout asks git. The build date is the commit's date unless
SOURCE_DATE_EPOCH says otherwise, so that the same commit always builds the same bytes.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

UNKNOWN = "unknown"


@dataclass(frozen=True)
class BuildInfo:
    version: str
    commit: str  # the full hash, or "unknown"
    tree_state: str  # "clean", "dirty" (uncommitted changes), or "unknown"
    date: str  # RFC 3339, UTC, or "unknown"

    def to_dict(self) -> dict[str, str]:
        return {
            "version": self.version,
            "gitVersion": f"v{self.version}",
            "gitCommit": self.commit,
            "gitTreeState": self.tree_state,
            "buildDate": self.date,
        }


def rfc3339(epoch: int) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def from_git(root: Path, version: str) -> BuildInfo:
    """The commit checked out in `root` (a git work tree), whether files differ from it, and its date (or
    SOURCE_DATE_EPOCH)."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
            stdin=subprocess.DEVNULL,
        ).stdout.strip()

    try:
        commit = git("rev-parse", "HEAD")
        epoch = int(os.environ.get("SOURCE_DATE_EPOCH") or git("log", "-1", "--format=%ct", "HEAD"))
        dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, ValueError, subprocess.SubprocessError):
        return BuildInfo(version, UNKNOWN, UNKNOWN, UNKNOWN)
    return BuildInfo(version, commit, "dirty" if dirty else "clean", rfc3339(epoch))


def module_text(info: BuildInfo) -> str:
    """The generated `_build.py` a build puts beside this module."""
    return (
        "# Generated at build time (kubectl_kcache/buildinfo.py): the commit and date of this build.\n"
        f"COMMIT = {info.commit!r}\nTREE_STATE = {info.tree_state!r}\nDATE = {info.date!r}\n"
    )


def build_info() -> BuildInfo:
    from . import __version__

    try:
        from . import _build  # type: ignore[attr-defined]
    except ImportError:
        pass
    else:
        return BuildInfo(__version__, _build.COMMIT, _build.TREE_STATE, _build.DATE)
    root = Path(__file__).resolve().parent.parent
    if (root / ".git").exists():
        return from_git(root, __version__)
    return BuildInfo(__version__, UNKNOWN, UNKNOWN, UNKNOWN)
