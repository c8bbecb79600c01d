"""One decode path from bytes or plain data to the typed objects of `objects/`.

- `decode_json(data, T)`: JSON bytes (a file, an API response, a `msgspec.Raw` item) straight into T;
- `convert(obj, T)`: already-parsed data (YAML from libyaml, test fixtures) into T;
- `page_decoder(T)`: a `...List` page's bytes into typed items plus the list's metadata;
- `watch_decoder(T)`: one line of a watch stream into a `WatchEvent` whose object is a T (or the Status
  of an ERROR event);
- `Head`: kind, apiVersion and name of an item, decoded alone to choose the type of a heterogeneous item.

Both directions are lax as Kubernetes' own decoding is (integers and booleans given as strings); a
value of the wrong type raises `msgspec.ValidationError`, whose path `describe` turns into words.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Generic, TypeVar

import msgspec

from . import ObjectError, describe

T = TypeVar("T")


def decode_json(data: Any, type_: type[T]) -> T:
    return _decoder(type_).decode(data)  # type: ignore[no-any-return,arg-type]


def convert(obj: Any, type_: type[T]) -> T:
    return msgspec.convert(obj, type_, strict=False)


@cache
def _decoder(type_: Any) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(type_, strict=False)


class ListMeta(msgspec.Struct, frozen=True, rename="camel"):
    resource_version: str | None = None
    continue_: str | None = msgspec.field(default=None, name="continue")


class ListPage(msgspec.Struct, Generic[T], frozen=True):
    """A `...List` response: its metadata and the items."""

    metadata: ListMeta | None = None
    items: list[T] | None = None


class Head(msgspec.Struct, frozen=True, rename="camel"):
    """What identifies an object; every other field is skipped."""

    kind: Any = None
    api_version: Any = None
    metadata: Any = None

    def describe(self, default_kind: str = "object") -> str:
        """'Node gpu-1' (or what is known of it; `default_kind` for items of a typed list, which have none)."""
        md = self.metadata if isinstance(self.metadata, dict) else {}
        name = md.get("name")
        ns = md.get("namespace")
        kind = self.kind if isinstance(self.kind, str) and self.kind else default_kind
        if isinstance(name, str) and name:
            return f"{kind} {ns}/{name}" if isinstance(ns, str) and ns else f"{kind} {name}"
        return kind


class _EventHead(msgspec.Struct, frozen=True):
    type: str = ""
    object: msgspec.Raw = msgspec.Raw(b"")  # (msgspec takes no Optional[Raw]: empty when absent)


class Status(msgspec.Struct, frozen=True):
    """A metav1.Status (the object of a watch ERROR event)."""

    code: Any = 0
    message: Any = ""
    reason: Any = ""


class WatchEvent(msgspec.Struct, Generic[T], frozen=True):
    """One watch event: ADDED, MODIFIED, DELETED, BOOKMARK (object T) or ERROR (object Status)."""

    type: str
    object: Any
    resource_version: str = ""


def page_decoder(type_: type[T]) -> Any:
    """bytes -> ListPage[type_]."""
    return _decoder(ListPage[type_])  # type: ignore[valid-type]


class _BookmarkMeta(msgspec.Struct, frozen=True, rename="camel"):
    resource_version: str | None = None


class _Bookmark(msgspec.Struct, frozen=True):
    metadata: _BookmarkMeta | None = None


def decode_watch_line(line: bytes, type_: type[Any]) -> WatchEvent[Any]:
    """One watch line into a WatchEvent (object typed, its resourceVersion beside it)."""
    head = decode_json(line, _EventHead)
    if not len(head.object) or bytes(head.object).strip() == b"null":
        raise msgspec.ValidationError("watch event without an object - at `$`")
    if head.type == "ERROR":
        return WatchEvent("ERROR", decode_json(head.object, Status))
    if head.type == "BOOKMARK":
        mark = decode_json(head.object, _Bookmark)
        return WatchEvent("BOOKMARK", None, (mark.metadata.resource_version if mark.metadata else None) or "")
    obj = decode_json(head.object, type_)
    return WatchEvent(head.type, obj, getattr(getattr(obj, "metadata", None), "resource_version", "") or "")


def object_error(exc: msgspec.ValidationError, *, origin: str = "", what: str = "", base: str = "$") -> ObjectError:
    """An ObjectError naming where the object came from, which object, and the path of the bad field."""
    lead = ": ".join(x for x in (origin, what) if x)
    return ObjectError(f"{lead}: {describe(exc, base)}" if lead else describe(exc, base))
