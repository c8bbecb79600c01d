"""The ```console examples of the docs are real runs: this module finds them, runs each command on the bundled
examples and compares. `python3 -m tests.doc_console --write` rewrites the outputs (excerpts excepted).

In a block, `$ kubectl kcache ...` (continued with `\\`) is a command and the lines up to the next `$ ` its
standard output; `$ echo $?` shows the previous command's exit code. A line `...` in an expected output
stands for any number of lines (an excerpt): such blocks are checked, never rewritten. A fenced block
preceded by `<!-- file: NAME -->` is written to NAME before the commands that follow it run. A block preceded by
`<!-- columns: 80 -->` runs at 80 columns instead of 120; `<!-- columns: piped -->`, with no terminal at all.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = (ROOT / "README.md", ROOT / "examples" / "README.md", *sorted((ROOT / "docs").glob("*.md")))
COLUMNS = 120
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)
_FILE_MARK = re.compile(r"<!-- file: (\S+) -->\n$")
# `<!-- columns: 80 -->` before a block: run it at 80 columns; `<!-- columns: piped -->`: with no terminal at all
_COLUMNS_MARK = re.compile(r"<!-- columns: (\d+|piped) -->\n$")


@dataclass
class Step:
    command: str  # continuation lines joined
    expected: list[str]
    is_exit_code: bool = False
    written: list[str] = field(default_factory=list)  # the command's lines as written (with their `\\`)


@dataclass
class Block:
    doc: Path
    line: int
    start: int  # offsets of the block's body in the document
    end: int
    steps: list[Step]
    files: dict[str, str] = field(default_factory=dict)  # written before the block runs
    columns: int | None = COLUMNS  # None: piped, no terminal and no $COLUMNS

    @property
    def id(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"

    @property
    def excerpt(self) -> bool:
        return any(line == "..." for s in self.steps for line in s.expected)


def blocks(doc: Path) -> list[Block]:
    text = doc.read_text()
    files: dict[str, str] = {}
    out = []
    for m in _FENCE.finditer(text):
        mark = _FILE_MARK.search(text, 0, m.start())
        if mark and mark.end() == m.start():
            files[mark.group(1)] = m.group(2)
        if m.group(1) != "console":
            continue
        steps = _steps(m.group(2).splitlines())
        width = _COLUMNS_MARK.search(text, 0, m.start())
        columns = COLUMNS
        if width and width.end() == m.start():
            columns = None if width.group(1) == "piped" else int(width.group(1))
        if steps:
            out.append(
                Block(doc, text.count("\n", 0, m.start()) + 1, m.start(2), m.end(2), steps, dict(files), columns)
            )
    return out


def _steps(lines: list[str]) -> list[Step]:
    steps: list[Step] = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            if steps:
                steps[-1].expected.append(lines[i])
            i += 1
            continue
        parts = [lines[i][2:]]
        while parts[-1].endswith("\\") and i + 1 < len(lines):
            i += 1
            parts.append(lines[i])
        i += 1
        command = " ".join(p.rstrip("\\").strip() for p in parts)
        steps.append(Step(command, [], command == "echo $?", parts))
    return steps


def run_block(block: Block, workdir: Path) -> list[list[str]]:
    """Each step's actual output lines (trailing spaces dropped)."""
    for name, content in block.files.items():
        (workdir / name).write_text(content)
    env = {**os.environ, "COLUMNS": str(block.columns), "NO_COLOR": "1", "TERM": "dumb", "PYTHONPATH": str(ROOT)}
    env.pop("KUBECONFIG", None)
    if block.columns is None:
        env.pop("COLUMNS")
    outputs: list[list[str]] = []
    code = 0
    for step in block.steps:
        if step.is_exit_code:
            outputs.append([str(code)])
            continue
        argv = shlex.split(step.command)
        if argv[:2] != ["kubectl", "kcache"] or any(a in ("|", ">", ";", "&&") for a in argv):
            raise ValueError(f"{block.id}: not a plain kubectl kcache command: {step.command}")
        proc = subprocess.run(
            [sys.executable, "-m", "kubectl_kcache", *argv[2:]],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )  # no controlling terminal: the width is the block's
        code = proc.returncode
        outputs.append([line.rstrip() for line in proc.stdout.rstrip("\n").splitlines()])
    return outputs


_GENERATED_AT = re.compile(r'("generatedAt": |generatedAt: )"?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"?')


def _stable(line: str) -> str:
    """The line without what changes from run to run (when the answer was made)."""
    return _GENERATED_AT.sub(r"\1<now>", line.rstrip())


def matches(expected: list[str], actual: list[str]) -> bool:
    """`expected` equals `actual`, a `...` line standing for any run of lines."""
    expected = [_stable(line) for line in expected]
    actual = [_stable(line) for line in actual]
    while expected and not expected[-1]:
        expected.pop()
    pattern = "".join(r"(?:[^\n]*\n)*?" if line == "..." else re.escape(line) + "\n" for line in expected)
    return re.fullmatch(pattern, "".join(line + "\n" for line in actual)) is not None


def workdir_for(tmp: Path) -> Path:
    (tmp / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    return tmp


def _write(doc: Path, tmp_root: Path) -> int:
    text = doc.read_text()
    changed = 0
    for n, block in reversed(list(enumerate(blocks(doc)))):
        if block.excerpt:
            continue
        work = tmp_root / f"{doc.stem}-{n}"
        work.mkdir()
        outputs = run_block(block, workdir_for(work))
        body = []
        for step, out in zip(block.steps, outputs, strict=True):
            body.append("$ " + step.written[0])
            body += step.written[1:]
            body += out
        new = "\n".join(body) + "\n"
        if text[block.start : block.end] != new:
            text = text[: block.start] + new + text[block.end :]
            changed += 1
    doc.write_text(text)
    return changed


if __name__ == "__main__":
    import tempfile

    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python3 -m tests.doc_console --write")
    with tempfile.TemporaryDirectory() as tmp:
        for doc in DOCS:
            if doc.exists():
                print(f"{doc.relative_to(ROOT)}: {_write(doc, Path(tmp))} blocks rewritten")
