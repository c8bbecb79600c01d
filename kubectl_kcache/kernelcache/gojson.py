"""Go's encoding/json output for the few values KServe compares or sorts by their JSON bytes."""

from __future__ import annotations

import json
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
_HTML_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def marshal(value: Any) -> bytes:
    """json.Marshal for values built of dicts (already in Go's field order), lists, str, int, bool, None.

    Go writes no spaces, keeps non-ASCII as UTF-8 and escapes <, >, & and U+2028/U+2029 (HTML safety).
    """
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    text = _SURROGATE.sub("\ufffd", text)  # Go replaces invalid UTF-16 halves with U+FFFD
    for raw, escaped in _HTML_ESCAPES.items():
        text = text.replace(raw, escaped)
    return text.encode("utf-8")
