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


# What a single-quoted word cannot show on one line and safely on a terminal: newlines, tabs and the
# characters `escape` rewrites. Such a word is written in ANSI-C quoting ($'...'), which bash, zsh, ksh and
# POSIX sh (2024) read back to the same bytes, so the hint stays one line and escaping it for the terminal
# cannot change what it runs.
_ANSI_C = re.compile("[\n\t\r]|" + _UNSAFE.pattern)


def _ansi_c_char(m: re.Match[str]) -> str:
    ch = m.group()
    named = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
    if ch in named:
        return named[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}"


def quote(value: str) -> str:
    """One shell word: plain names stay as they are, anything else is single-quoted; a word with newlines or
    control or invisible characters is written as $'...' with those characters escaped."""
    if not _ANSI_C.search(value):
        return shlex.quote(value)
    body = value.replace("\\", "\\\\").replace("'", "\\'")
    return "$'" + _ANSI_C.sub(_ansi_c_char, body) + "'"


def json_body(value: object) -> str:
    """A JSON document as one compact word for `kubectl patch -p` (quote it with `command`): built by the JSON
    encoder, so no name or value inside it can end a string or the word."""
    import json

    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def command(*words: str | Iterable[str]) -> str:
    """A command line from words, each quoted as needed; an iterable stands for several words."""
    out: list[str] = []
    for w in words:
        if isinstance(w, str):
            out.append(quote(w))
        else:
            out.extend(quote(x) for x in w)
    return " ".join(out)


# Stand-ins in a suggested command for what the data does not say: plain words, never shell syntax (`<isvc>`
# would be a redirection), obvious to replace, and refused by Kubernetes if left in by mistake (upper case).
PLACEHOLDER_ISVC = "INFERENCESERVICE"
PLACEHOLDER_GROUP = "GROUP"
PLACEHOLDER_LABEL = "LABEL"
PLACEHOLDER_VALUE = "VALUE"


def json_type(value: object) -> str:
    """What a decoded value is, in JSON's words ("a string", "an object"), never Python's (`str`, `dict`)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "a value of another type"
