"""apivalidation.go_quote against Go itself: strconv.Quote (what Kubernetes' messages and Go's url errors print)
run by the Go toolchain the test bed is built with, on every code point of the first planes that Unicode has
had for long (controls, C1, Latin-1, spaces, format characters, bidi, private use, astral) and on invalid UTF-8."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
from pathlib import Path

from kubectl_kcache.apivalidation import go_quote

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "go_quote.go"
POINTS = [
    *range(0x0000, 0x0300),
    *range(0x2000, 0x2070),  # spaces, zero widths, bidi controls, quotes
    *range(0xFE00, 0xFF10),  # variation selectors, BOM, full-width forms
    0x00AD, 0x061C, 0x180E, 0x3000, 0x4E2D, 0xE000, 0xF8FF, 0xFFFD, 0x1F600, 0x10FFFF, 0xE0001,
]  # fmt: skip
BYTES = [b"\xff", b"a\xc3", b"\xc3\xa8\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b'a"\\\n\x01']


def go_answers(inputs: list[bytes]) -> list[str]:
    go = shutil.which("go")
    assert go, "Go is not installed (the test bed is built with it: run-tests needs Go >= 1.26)"
    proc = subprocess.run(
        [go, "run", str(GOLDEN)],
        input="\n".join(base64.b64encode(x).decode() for x in inputs) + "\n",
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod", "GO111MODULE": "on"},
        cwd=GOLDEN.parent,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_go_quote_is_strconv_quote():
    texts = [chr(p) for p in POINTS] + ["x" + chr(p) + "y" for p in (0x85, 0xA0, 0x7F, 0x202E)]
    inputs = [t.encode("utf-8") for t in texts] + BYTES
    want = go_answers(inputs)
    assert len(want) == len(inputs)
    got = [go_quote(t) for t in texts] + [go_quote(b) for b in BYTES]
    wrong = [(repr(i), g, w) for i, g, w in zip(inputs, got, want, strict=True) if g != w]
    assert wrong == [], wrong[:20]
