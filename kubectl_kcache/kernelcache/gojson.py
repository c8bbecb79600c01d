"""Go's encoding/json output for the few values KServe compares, sorts or hashes by their JSON bytes."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
_HTML_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def marshal(value: Any, sort_keys: bool = False) -> bytes:
    """json.Marshal for values built of dicts, lists, str, int, bool, None.

    Go writes no spaces, keeps non-ASCII as UTF-8 and escapes <, >, & and U+2028/U+2029 (HTML safety).
    Go sorts the keys of a map but keeps a struct's field order: pass dicts standing for structs already in
    Go's field order, and `sort_keys=True` for maps (byte order of UTF-8 equals code point order).
    """
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=sort_keys)
    text = _SURROGATE.sub("\ufffd", text)  # Go replaces invalid UTF-8 (here: lone surrogates) with U+FFFD
    for raw, escaped in _HTML_ESCAPES.items():
        text = text.replace(raw, escaped)
    return text.encode("utf-8")


def sha256_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def hash_strings(values: Sequence[str]) -> str:
    """KServe's HashStrings: "sha256:" + hex(sha256(json.Marshal(list)))."""
    return sha256_of(marshal(list(values)))


def hash_map(values: Mapping[str, str]) -> str:
    """KServe's footprint Calculate: "sha256:" + hex(sha256(json.Marshal(map))), keys sorted as Go sorts them."""
    return sha256_of(marshal(dict(values), sort_keys=True))
