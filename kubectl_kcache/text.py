"""Names and values from a cluster or a file are data: quoted in every command we suggest, and escaped
before they reach a terminal."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable

# C0 and C1 controls, DEL, and the Unicode format characters that reorder or hide text (bidi overrides
# and isolates, zero-width characters, the BOM): a name holding them could rewrite what the user sees.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def _escape_char(m: re.Match[str]) -> str:
    ch = m.group()
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape(value: str, keep_newlines: bool = False) -> str:
    """`value` with control and invisible formatting characters written as \\xNN / \\uNNNN (newlines and
    tabs as \\n and \\t, unless `keep_newlines`). For display only: it is not meant to be reversed."""
    if not keep_newlines:
        value = value.replace("\n", "\\n").replace("\t", "\\t")
    return _UNSAFE.sub(_escape_char, value)


def quote(value: str) -> str:
    """One shell word, as POSIX sh needs it: plain names stay as they are, anything else is single-quoted."""
    return shlex.quote(value)


def command(*words: str | Iterable[str]) -> str:
    """A command line from words, each quoted as needed; an iterable stands for several words."""
    out: list[str] = []
    for w in words:
        if isinstance(w, str):
            out.append(quote(w))
        else:
            out.extend(quote(x) for x in w)
    return " ".join(out)
