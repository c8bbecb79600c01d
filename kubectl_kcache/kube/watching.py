"""Watches: a line-delimited stream of events, each line handed to a decoder as it arrives."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..errors import ApiError, Gone, KcacheError
from .listing import METADATA_ONLY_WATCH, strip_object
from .resources import Resource
from .status import transport_error

if TYPE_CHECKING:
    from .client import Client


def dict_event(res: Resource) -> Callable[[bytes], dict[str, Any]]:
    import msgspec

    def decode(line: bytes) -> dict[str, Any]:
        event = msgspec.json.decode(line)
        obj = event.get("object") if isinstance(event, dict) else None
        if isinstance(obj, dict) and event.get("type") != "ERROR":
            if res.metadata_only:  # PartialObjectMetadata objects: the kind they are of
                obj["kind"], obj["apiVersion"] = res.kind, res.api_version
            obj.setdefault("kind", res.kind)
            obj.setdefault("apiVersion", res.api_version)
            strip_object(obj)
        return event  # type: ignore[no-any-return]

    return decode


def _raise_error_event(event: Any) -> None:
    """An ERROR event (a dict, or a decode.WatchEvent with a Status) as Gone (410) or ApiError."""
    if isinstance(event, dict):
        if event.get("type") != "ERROR":
            return
        status = event.get("object") or {}
        code, msg = status.get("code"), status.get("message")
    else:
        if getattr(event, "type", "") != "ERROR":
            return
        code, msg = getattr(event.object, "code", 0), getattr(event.object, "message", "")
    try:
        code = int(code or 0)
    except (TypeError, ValueError):
        code = 0
    msg = str(msg or "watch error")
    if code == 410:
        raise Gone(msg, status=410)
    raise ApiError(msg, status=code)


def watch(
    client: Client,
    res: Resource,
    resource_version: str,
    namespace: str | None = None,
    *,
    timeout_seconds: int = 300,
    label_selector: str = "",
    field_selector: str = "",
    decode: Callable[[bytes], Any] | None = None,
    opened: Callable[[], None] | None = None,
) -> Iterator[Any]:
    """Watch events from resource_version: dicts ({"type", "object"}) by default, or what `decode` makes
    of each line. An ERROR event with code 410 raises Gone. `opened` is called once the server has
    accepted the watch (before any event). `Client.watch`."""
    decode = decode or dict_event(res)
    resp = client.request(
        "GET",
        res.path(namespace),
        query={
            "watch": "true",
            "resourceVersion": resource_version,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": timeout_seconds,
            "labelSelector": label_selector,
            "fieldSelector": field_selector,
        },
        stream=True,
        timeout=timeout_seconds + 30,
        verb="watch",
        resource=res.plural,
        accept=METADATA_ONLY_WATCH if res.metadata_only else "",
    )
    if opened is not None:
        opened()
    buf = b""
    try:
        for chunk in resp.stream(65536, decode_content=True):
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                if not line.strip():
                    continue
                event = decode(line)
                _raise_error_event(event)
                yield event
    except KcacheError:
        raise
    except Exception as exc:  # noqa: BLE001 - the stream broke (the server went away) or a line was not JSON
        if type(exc).__name__ in ("DecodeError", "ValidationError"):
            raise ApiError(f"watch {res.plural}: the server sent an event that is not valid: {exc}") from None
        raise transport_error(exc, client.server) from None
    finally:
        resp.release_conn()
