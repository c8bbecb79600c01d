"""The plugin run in this process, as the CLI tests run it: its exit code, stdout and stderr, never a crash."""

from __future__ import annotations

import pytest

from kubectl_kcache.cli import run


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = run(list(argv))
    out, err = capsys.readouterr()
    assert "internal error" not in err and "Traceback" not in err, err
    return code, out, err
