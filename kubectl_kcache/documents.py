"""THE YAML writer of every document the plugin prints or writes (`-o yaml` of every command, `dump -o yaml`):
keys in the document's order, block style, long strings on one line (never folded: hints are commands to
copy whole), non-ASCII kept when the output can take it, and YAML's own escapes for a bidi or invisible
character from the cluster, so the text stays readable as YAML and harmless on a terminal. And THE JSON writer
of `-o json` (`json_text`): the text of `json.dumps(doc, indent=2)`, made in C."""

from __future__ import annotations

import codecs
from typing import Any, TextIO

from .text import escape


def yaml_text(doc: Any, *, unicode: bool = True) -> str:
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml when present: ~10x faster, same text
    text: str = yaml.dump(
        doc, Dumper=dumper, sort_keys=False, default_flow_style=False, width=1 << 30, allow_unicode=unicode
    )
    if unicode and escape(text, keep_newlines=True) != text:
        text = yaml.dump(
            doc, Dumper=dumper, sort_keys=False, default_flow_style=False, width=1 << 30, allow_unicode=False
        )
    return text


_FLOAT: Any = None


def json_text(doc: Any) -> str:
    """`json.dumps(doc, indent=2)`, the text every `-o json` has always been, made by msgspec (the standard
    library's indenting encoder is pure Python: 1.3 s for a 21 MB doctor report at 130,000 nodes, against
    ~0.1 s). msgspec writes the same text for str, int, bool, None, lists and dicts of ASCII; a document with a
    non-ASCII character or DEL (json escapes them as \\uXXXX), a float (another spelling of exponents) or anything else
    msgspec would write otherwise is written by json itself. A float JSON cannot spell (NaN, ±Infinity) is null,
    as msgspec writes it, where json would write a constant no JSON reader takes."""
    import json
    import re

    import msgspec

    global _FLOAT
    if _FLOAT is None:  # a number with a fraction or an exponent, where a value can start (no spaces); the
        # strings taken out first (a digest `"sha256:1e...` is no float: it sent a 7 MB answer through json).
        # The start of the text is tried apart: `(?:^|[:,\[])` made the search try every position (40 ms for
        # the 5,000-node doctor's 3 MB), a pattern starting with a set of bytes is scanned for them (11 ms)
        _FLOAT = (
            re.compile(rb"-?\d+[.eE]"),
            re.compile(rb"[:,\[]-?\d+[.eE]"),
            re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"'),
        )
    try:
        raw = msgspec.json.encode(doc)
    except (TypeError, ValueError, OverflowError):
        raw = b""
    first, after, string = _FLOAT

    def number(text: bytes) -> bool:
        return first.match(text) is not None or after.search(text) is not None

    floats = bool(raw) and number(raw) and number(string.sub(b'""', raw))
    if not raw or not raw.isascii() or b"\x7f" in raw or floats:  # (json escapes DEL too)
        try:
            return json.dumps(doc, indent=2, allow_nan=False)
        except ValueError:  # NaN or ±Infinity beside other floats (rare): null, as msgspec writes them
            return json.dumps(_finite(doc), indent=2)
    return msgspec.json.format(raw, indent=2).decode("ascii")


def _finite(doc: Any) -> Any:
    import math

    if isinstance(doc, float):
        return doc if math.isfinite(doc) else None
    if isinstance(doc, dict):
        return {k: _finite(v) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [_finite(v) for v in doc]
    return doc


def takes_unicode(out: TextIO) -> bool:
    """Whether `out` encodes any character (UTF-8, UTF-16, ...); a stream that does not say is taken as UTF."""
    encoding = getattr(out, "encoding", None)
    if not encoding:
        return True
    try:
        return codecs.lookup(encoding).name.startswith("utf")
    except LookupError:
        return False
