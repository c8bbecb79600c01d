"""The console entry ends the process without the interpreter's teardown (`__main__.main`): what a user reads
must still be all there (the output written to a file or a pipe, whole; stderr's lines; the exit code), and
in one process running many commands (the tests, the monitor) every command's snapshot is freed when it ends."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from kubectl_kcache.cli import run
from kubectl_kcache.cli.reading import KEPT
from kubectl_kcache.errors import EXIT_FINDINGS, EXIT_USAGE

ROOT = Path(__file__).resolve().parents[2]
BROKEN = str(ROOT / "examples" / "broken-cluster.yaml")


def timeless(text: str) -> str:
    """`text` without the report's generatedAt (two runs straddle a second)."""
    return re.sub(r"generatedAt\W+[0-9TZ:-]+", "generatedAt", text)


def child(*argv: str, stdout: object = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kubectl_kcache", *argv],
        cwd=ROOT,
        stdout=stdout,  # type: ignore[arg-type]
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
    )


def test_an_answer_written_to_a_file_is_whole_and_the_exit_code_kept(tmp_path, capsys):
    """A file is block-buffered: what the last write left in the buffer reaches the file before the end."""
    capsys.readouterr()
    assert run(["doctor", "-o", "json", "--from-file", BROKEN]) == EXIT_FINDINGS
    expected = capsys.readouterr().out
    assert len(expected) > 3 * 8192  # more than one buffer, and a partial last one
    out = tmp_path / "report.json"
    with out.open("w") as fh:
        proc = child("doctor", "-o", "json", "--from-file", BROKEN, stdout=fh)
    assert proc.returncode == EXIT_FINDINGS, proc.stderr
    assert timeless(out.read_text()) == timeless(expected)


def test_an_answer_through_a_pipe_is_whole(capsys):
    capsys.readouterr()
    run(["doctor", "-o", "yaml", "--from-file", BROKEN])
    expected = capsys.readouterr().out
    proc = child("doctor", "-o", "yaml", "--from-file", BROKEN)
    assert proc.returncode == EXIT_FINDINGS
    assert timeless(proc.stdout) == timeless(expected)


def test_an_error_reaches_stderr_with_its_exit_code():
    proc = child("doctor", "--from-file", "/nonexistent/snapshot.yaml")
    assert proc.returncode == EXIT_USAGE
    assert proc.stdout == ""
    assert proc.stderr.startswith("error: ") and proc.stderr.endswith("\n") and "/nonexistent" in proc.stderr


def test_in_one_process_each_command_frees_its_snapshot(capsys):
    KEPT.clear()
    run(["doctor", "--from-file", BROKEN])
    assert KEPT == []
    run(["doctor", "--from-file", BROKEN], exiting=True)  # the console entry's: left for the process's end
    assert len(KEPT) == 1 and KEPT[0].nodes
    KEPT.clear()
