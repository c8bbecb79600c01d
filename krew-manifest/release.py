#!/usr/bin/env python3
"""A release of kubectl-kcache, from a clean tree: `make release` (= python3 krew-manifest/release.py).

1. Refuses a tree whose tracked files differ from the commit (the archives would not be that commit's).
2. Refuses a version without its section in CHANGELOG.md (`## vX.Y.Z`, the version of kubectl_kcache/__init__.py).
3. Builds the archives of every platform (krew-manifest/build.py) into <out>/, with <out>/plugin.yaml (their
   sha256 and release URIs) and <out>/SHA256SUMS, and writes that version's CHANGELOG section to
   <out>/RELEASE-NOTES.md, the text of the release page.

What is published: the archives, plugin.yaml and SHA256SUMS of <out>/, under the tag v<version> of the commit
built (plugin.yaml's URIs point there). Only the standard library is used.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CHANGELOG = ROOT / "CHANGELOG.md"


def _build_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kcache_release_build", HERE / "build.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def changelog_section(text: str, version: str) -> str:
    """The body of `## v<version>` in CHANGELOG.md (up to the next `## `), stripped; '' when there is none."""
    m = re.search(rf"^## v{re.escape(version)}(?:[ \t][^\n]*)?\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    return m.group(1).strip() if m else ""


def dirty_files(root: Path) -> list[str]:
    """Tracked files that differ from HEAD, and untracked files in the folders a build reads."""
    out = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--", "."],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    dirty = []
    for line in out.splitlines():
        state, path = line[:2], line[3:]
        if state != "??" or path.startswith(("kubectl_kcache/", "krew-manifest/")):
            dirty.append(path)
    return dirty


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "dist", help="folder for the release files (default: dist)")
    args = ap.parse_args(argv)
    build = _build_module()
    try:
        version = build.read_version()
        dirty = dirty_files(ROOT)
        if dirty:
            raise build.BuildError(
                f"the tree differs from its commit ({', '.join(dirty[:5])}"
                f"{', ...' if len(dirty) > 5 else ''}): commit or stash first"
            )
        notes = changelog_section(CHANGELOG.read_text() if CHANGELOG.is_file() else "", version)
        if not notes:
            raise build.BuildError(f"CHANGELOG.md has no `## v{version}` section: write what this release changes")
        b = build.build(args.out)
    except (build.BuildError, subprocess.CalledProcessError) as e:
        print(f"release: {e}", file=sys.stderr)
        return 2
    manifest, sums = build.write_release_files(b, args.out)
    (args.out / "RELEASE-NOTES.md").write_text(f"# kubectl-kcache v{version}\n\n{notes}\n")
    for a in b.archives:
        print(f"{a.path}  sha256 {a.sha256}")
    print(f"release v{version}: {manifest}, {sums}, {args.out / 'RELEASE-NOTES.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
