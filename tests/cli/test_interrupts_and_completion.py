"""Interrupts, full streams and completion's inputs (issue 33, point 6): Ctrl-C while the plugin starts or
completes is exit 130 without a traceback; a warning that cannot be written to a full stderr does not throw the
answer on stdout away; completion never waits on a FIFO given as --from-file or --kubeconfig; names completion
prints are escaped."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
HEALTHY = str(ROOT / "examples" / "healthy-cluster.yaml")
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "KUBECONFIG": "/nonexistent"}


def interrupted_at(module: str, argv: list[str]) -> subprocess.CompletedProcess[str]:
    """The entry point run with Ctrl-C arriving while `module` is imported (as a slow start would get it)."""
    code = textwrap.dedent(
        f"""
        import builtins, sys
        real = builtins.__import__
        def slow(name, *args, **kwargs):
            if name.split('.')[-1] == {module!r}:
                raise KeyboardInterrupt
            return real(name, *args, **kwargs)
        builtins.__import__ = slow
        sys.argv = ["kubectl-kcache", *{argv!r}]
        from kubectl_kcache.__main__ import main
        main()
        """
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=ENV, cwd=ROOT)


@pytest.mark.parametrize(
    ("module", "argv"),
    [
        ("cli", ["doctor", "-f", HEALTHY]),
        ("cli", ["__complete", "doctor", "--only", ""]),
        ("registry", ["__complete", "doctor", "--only", ""]),
    ],
)
def test_ctrl_c_while_starting_is_exit_130_without_a_traceback(module, argv):
    proc = interrupted_at(module, argv)
    assert proc.returncode == 130, proc.stderr
    assert "Traceback" not in proc.stderr and "KeyboardInterrupt" not in proc.stderr, proc.stderr
    assert proc.stdout == ""


def test_a_warning_on_a_full_stderr_keeps_the_answer():
    proc = subprocess.run(
        ["bash", "-c", f"{sys.executable} -m kubectl_kcache status -n nope -o json -f {HEALTHY} 2>/dev/full"],
        capture_output=True,
        text=True,
        timeout=60,
        env=ENV,
        cwd=ROOT,
    )
    assert proc.returncode == 0
    assert '"kind": "KcacheStatus"' in proc.stdout


def complete(*words: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kubectl_kcache", "__complete", *words],
        capture_output=True,
        text=True,
        timeout=20,
        env=env or ENV,
        cwd=ROOT,
    )


@pytest.mark.parametrize(
    "words",
    [
        ["why-not-cached", "--from-file", "{fifo}", ""],
        ["why-not-cached", "-f", HEALTHY, "-f", "{fifo}", "-n", ""],
        ["doctor", "--kubeconfig", "{fifo}", "--context", ""],
        ["why-not-cached", "--kubeconfig", "{fifo}", "-n", ""],
    ],
)
def test_completion_never_waits_on_a_fifo(tmp_path, words):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    proc = complete(*(w.replace("{fifo}", str(fifo)) for w in words))  # the timeout fails a blocked run
    assert proc.returncode == 0 and proc.stdout.strip().splitlines()[-1] == ":4", proc.stdout


def test_completion_waits_on_no_fifo_named_by_kubeconfig(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    proc = complete("doctor", "--context", "", env={**ENV, "KUBECONFIG": str(fifo)})
    assert proc.returncode == 0 and proc.stdout.strip() == ":4"


def test_completion_escapes_context_names(tmp_path):
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {}}],
        "contexts": [
            {"name": "prod\x1b]2;pwned\x07", "context": {"cluster": "c", "user": "u"}},
            {"name": "two\nlines", "context": {"cluster": "c", "user": "u"}},
            {"name": "plain", "context": {"cluster": "c", "user": "u"}},
        ],
    }
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(config))
    proc = complete("doctor", "--kubeconfig", str(path), "--context", "")
    lines = proc.stdout.splitlines()
    assert lines[-1] == ":4"
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    assert sorted(lines[:-1]) == ["plain", "prod\\x1b]2;pwned\\x07", "two\\nlines"]
