"""HTTP answers and transport failures as the plugin's errors, in words: the status the server sent (with
its message), or why the server could not be reached (never an exception's class name)."""

from __future__ import annotations

import json
from typing import Any

from ..errors import ApiError, Conflict, Forbidden, Gone, NotFound, Unreachable


class HTTPStatus(Exception):
    """A response outside 2xx, with its body read."""

    def __init__(self, status: int, reason: str, body: bytes):
        super().__init__(f"HTTP {status}")
        self.status = status
        self.reason = reason
        self.body = body


class CutShort(Exception):
    """The connection broke while the answer was being read."""


def api_error(exc: Any, method: str, path: str, verb: str, resource: str) -> ApiError:
    """The error class of an HTTP status, with the server's message (`exc` has status, reason, body)."""
    status = int(getattr(exc, "status", 0) or 0)
    message, reason = "", ""
    body = getattr(exc, "body", None)
    if body:
        try:
            doc = json.loads(body)
            message, reason = str(doc.get("message", "")), str(doc.get("reason", ""))
        except (ValueError, AttributeError):
            message = body.decode(errors="replace")[:200] if isinstance(body, bytes) else str(body)[:200]
    message = message or getattr(exc, "reason", "") or f"HTTP {status}"
    cls = {403: Forbidden, 404: NotFound, 409: Conflict, 410: Gone}.get(status, ApiError)
    if status == 401:
        message = f"Unauthorized: the server rejected the credentials ({message})"
    return cls(message, status=status, reason=reason, verb=verb or method.lower(), resource=resource or path)


def _cause(exc: BaseException) -> BaseException:
    """The innermost cause of a urllib3 error (MaxRetryError wraps the last attempt's error)."""
    seen = 0
    while seen < 10:
        seen += 1
        inner = getattr(exc, "reason", None)
        if isinstance(inner, BaseException):
            exc = inner
            continue
        if exc.__cause__ is not None:
            exc = exc.__cause__
            continue
        if exc.__context__ is not None and not isinstance(exc, OSError):
            exc = exc.__context__
            continue
        break
    return exc


def why_unreachable(exc: BaseException, timeout: float | None = None) -> str:
    """Why a request failed below HTTP, in words."""
    names = {type(e).__name__ for e in _chain(exc)}
    text = " ".join(str(e) for e in _chain(exc)).lower()
    cause = _cause(exc)
    if names & {"ReadTimeoutError", "ConnectTimeoutError", "TimeoutError", "timeout"} or "timed out" in text:
        return f"timed out after {timeout:g}s (--request-timeout)" if timeout else "timed out"
    if "certificate" in text or names & {"SSLError", "SSLCertVerificationError"}:
        return "TLS handshake failed (check the cluster's certificate-authority)"
    if "CutShort" in names:
        return "the server closed the connection in the middle of its response"
    if (
        names
        & {
            "ProtocolError",
            "IncompleteRead",
            "RemoteDisconnected",
            "ConnectionResetError",
            "BrokenPipeError",
            "InvalidChunkLength",
        }
        or "connection broken" in text
    ):
        if names & {"IncompleteRead", "InvalidChunkLength"} or "incompleteread" in text or "chunk" in text:
            return "the server closed the connection in the middle of its response"
        return "the server closed the connection before answering"
    if "refused" in text or names & {"ConnectionRefusedError"}:
        return "connection refused"
    if (
        "name or service not known" in text
        or "nodename nor servname" in text
        or "failed to resolve" in text
        or "name resolution" in text
        or "getaddrinfo" in text
    ):
        return "the host name does not resolve"
    if names & {"ProxyError"}:
        return f"the proxy failed: {_words(cause)}"
    return _words(cause)


def _words(exc: BaseException) -> str:
    """An exception's own words, without urllib3's object reprs."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = str(exc).strip()
    if ": " in text and text.startswith("<"):
        text = text.split(": ", 1)[1]
    return text or "the connection failed"


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and len(out) < 10:
        out.append(cur)
        inner = getattr(cur, "reason", None)
        cur = inner if isinstance(inner, BaseException) else (cur.__cause__ or cur.__context__)
    return out


def transport_error(exc: BaseException, server: str, timeout: float | None = None) -> Unreachable:
    return Unreachable(f"cannot reach the API server at {server}: {why_unreachable(exc, timeout)}")
