"""kubectl's -v request log, on stderr: at 6 each request with its status and time, at 8 its headers too,
at 9 the size of each answer. Credentials never appear: the Authorization header and every header the user
did not choose are left out. Bodies are not printed: pods carry environment values, and a log is pasted into
tickets."""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

_SAFE_HEADERS = ("Accept", "Content-Type", "User-Agent")


def answer(
    client: Any,
    method: str,
    path: str,
    params: list[tuple[str, Any]],
    headers: Mapping[str, str],
    status: int,
    started: float,
    body: bytes | None,
) -> None:
    ms = (time.monotonic() - started) * 1000
    query = f"?{urlencode(params)}" if params else ""
    said = str(status) if status else "(no answer)"
    lines = [f"{method} {client.server}{path}{query} {said} in {ms:.0f} milliseconds"]
    if client.verbosity >= 8:
        lines += [f"  request header: {k}: {v}" for k, v in headers.items() if k in _SAFE_HEADERS]
        if client.overrides.impersonate:
            lines.append(f"  request header: Impersonate-User: {client.overrides.impersonate}")
            lines += [f"  request header: Impersonate-Group: {g}" for g in client.overrides.impersonate_groups]
            if client.overrides.impersonate_uid:
                lines.append(f"  request header: Impersonate-Uid: {client.overrides.impersonate_uid}")
    if client.verbosity >= 9 and body is not None:
        lines.append(f"  response body: {len(body)} bytes")
    from ..text import escape

    sys.stderr.write("".join(escape(line) + "\n" for line in lines))
