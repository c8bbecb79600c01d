#!/usr/bin/env python3
"""A release of kubectl-kcache, from a clean tree: `make release` (= python3 krew-manifest/release.py).

1. Refuses a tree whose tracked files differ from the commit (the archives would not be that commit's).
2. Refuses a version without its section in CHANGELOG.md (`## vX.Y.Z`, the version of kubectl_kcache/__init__.py).
3. Builds the archives of every platform (krew-manifest/build.py) into <out>/, with <out>/plugin.yaml (their
   sha256 and release URIs) and <out>/SHA256SUMS, and writes that version's CHANGELOG section to
   <out>/RELEASE-NOTES.md, the text of the release page.

4. Writes the same plugin.yaml at the top of the tree, naming the commit built (`# commit: <sha>`), and
   commits it alone: the manifest of the latest release is in the repository, and only a release changes it.

What is published: the archives, plugin.yaml and SHA256SUMS of <out>/, under the tag v<version> of the commit
built (plugin.yaml's URIs point there); plugin.yaml then goes to krew-index as plugins/kcache.yaml.

`release.py --rebuild` (`make dist`) builds the archives of the release in the top-level plugin.yaml again,
from its commit (a clone of it, in a temporary folder), into <out>/, and checks that their sha256 are the
manifest's: with them, `kubectl krew install --manifest=plugin.yaml --archive=dist/...` works from a clone.
Only the standard library is used.
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
MANIFEST = ROOT / "plugin.yaml"
COMMIT_LINE = re.compile(r"^# commit: ([0-9a-f]{40})$", re.MULTILINE)


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


def git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(
        ["git", "-C", str(cwd), *args], capture_output=True, text=True, check=True, timeout=120
    ).stdout.strip()


def release_manifest(text: str, version: str, commit: str) -> str:
    """The manifest of a release: build.py's, its generated-by lines replaced by the release's and its commit."""
    lines = text.splitlines(keepends=True)
    while lines and lines[0].startswith("#"):
        lines.pop(0)
    body = "".join(lines)
    return (
        f"# The krew manifest of kubectl-kcache v{version}, written by `make release` (krew-manifest/release.py)\n"
        "# for the archives built from the commit below; `make dist` builds them again, byte for byte, into dist/.\n"
        f"# commit: {commit}\n" + body
    )


def manifest_commit(text: str) -> str:
    m = COMMIT_LINE.search(text)
    if not m:
        raise ValueError("plugin.yaml names no `# commit: <sha>`: it was not written by make release")
    return m.group(1)


def rebuild(out: Path) -> int:
    """The archives of the release in plugin.yaml, built again from its commit into <out>, checked."""
    build = _build_module()
    import hashlib
    import shutil
    import tempfile

    try:
        text = MANIFEST.read_text()
        commit = manifest_commit(text)
    except (OSError, ValueError) as e:
        print(f"dist: {MANIFEST}: {e}", file=sys.stderr)
        return 2
    wanted = dict(re.findall(r"uri: \S+/(kubectl-kcache-\S+\.tar\.gz)\n\s+sha256: ([0-9a-f]{64})", text))
    with tempfile.TemporaryDirectory(prefix="kcache-release-") as tmp:
        clone = Path(tmp) / "src"
        try:
            git("clone", "--quiet", "--no-checkout", str(ROOT), str(clone))
            git("checkout", "--quiet", commit, cwd=clone)
        except subprocess.CalledProcessError as e:
            print(f"dist: cannot check out commit {commit} of plugin.yaml: {e.stderr.strip()}", file=sys.stderr)
            return 2
        proc = subprocess.run(
            [sys.executable, str(clone / "krew-manifest" / "build.py"), "--out", str(out.resolve())],
            capture_output=True,
            text=True,
            timeout=900,
        )
    if proc.returncode != 0:
        print(proc.stderr, end="", file=sys.stderr)
        return proc.returncode
    shutil.copyfile(MANIFEST, out / "plugin.yaml")
    wrong = []
    for name, sha in sorted(wanted.items()):
        got = hashlib.sha256((out / name).read_bytes()).hexdigest() if (out / name).is_file() else "missing"
        if got != sha:
            wrong.append(f"{name}: {got}, plugin.yaml says {sha}")
        print(f"{out / name}  sha256 {got}")
    if wrong or not wanted:
        print("dist: the archives differ from plugin.yaml's: " + "; ".join(wrong or ["no platforms"]), file=sys.stderr)
        return 1
    print(f"the archives of plugin.yaml ({build.read_version()} at {commit[:12]}) in {out}/, sha256 as it says")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "dist", help="folder for the release files (default: dist)")
    ap.add_argument("--rebuild", action="store_true", help="build the archives of plugin.yaml's release again")
    args = ap.parse_args(argv)
    if args.rebuild:
        return rebuild(args.out)
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
    commit = git("rev-parse", "HEAD")
    b = build.Build(b.version, b.archives, release_manifest(b.manifest_text, version, commit))
    manifest, sums = build.write_release_files(b, args.out)
    (args.out / "RELEASE-NOTES.md").write_text(f"# kubectl-kcache v{version}\n\n{notes}\n")
    MANIFEST.write_text(b.manifest_text)
    git("add", "--", "plugin.yaml")  # the first release adds it
    git(
        "commit",
        "--quiet",
        "-m",
        f"release v{version}: plugin.yaml for the archives of {commit[:12]}",
        "--",
        "plugin.yaml",
    )
    for a in b.archives:
        print(f"{a.path}  sha256 {a.sha256}")
    print(f"release v{version}: {manifest}, {sums}, {args.out / 'RELEASE-NOTES.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
