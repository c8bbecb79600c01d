"""Input at the edges, as a hostile tester or an ordinary user feeds it: closed streams, endless devices,
appended JSON, macOS archive debris, YAML aliases, values Kubernetes would refuse, a mistyped namespace,
plain exports judged against their own clock. Each case ends with the documented exit code and one clear
line, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_kcache.cli import run
from kubectl_kcache.errors import EXIT_OK, EXIT_USAGE
from tests import builders as b

ROOT = Path(__file__).resolve().parents[2]
HEALTHY = str(ROOT / "examples" / "healthy-cluster.yaml")


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = run(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err, err
    return code, out, err


def one_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: "), err
    return lines[0]


def shell(script: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    command = f"{sys.executable} -m kubectl_kcache"
    return subprocess.run(["bash", "-c", script.replace("KCACHE", command)], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def write(path: Path, items: list[dict[str, Any]] | str) -> str:
    path.write_text(items if isinstance(items, str) else yaml.safe_dump_all(items))
    return str(path)


# ---- 15: the exit code does not depend on stderr --------------------------------------------------------


def test_exit_code_is_the_same_with_stderr_closed(tmp_path):
    a = tmp_path / "a.json"
    c = tmp_path / "c.json"
    a.write_text(json.dumps(b.node("n1") | {"metadata": {"name": "n1", "uid": "1"}}))
    c.write_text(json.dumps(b.node("n1") | {"metadata": {"name": "n1", "uid": "2"}}))
    args = f"doctor -f {a} -f {c} --fail-on never"
    open_err = shell(f"KCACHE {args} >/dev/null")
    assert open_err.returncode == EXIT_OK and "warning: " in open_err.stderr  # a warning is written
    closed = shell(f"KCACHE {args} >/dev/null 2>&-")
    assert closed.returncode == EXIT_OK, closed
    bad = shell("KCACHE doctor -f /nonexistent >/dev/null 2>&-")
    assert bad.returncode == EXIT_USAGE
