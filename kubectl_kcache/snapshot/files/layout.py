"""The dump's layout, shared by its writer (`snapshot/dump.py`) and the reader: the head bytes a dump starts
with (the reader streams files laid out so), its kind and version, and the documents of its `meta`.
"""

from __future__ import annotations

from typing import Any

import msgspec

SNAPSHOT_KIND = "KcacheSnapshot"
SNAPSHOT_VERSION = 1
# how snapshot/dump.py lays out a JSON dump (the loader streams files laid out so)
DUMP_HEAD = b'{"kind": "KcacheSnapshot", "version": 1, "items": ['
DUMP_META = b'], "meta": '
YAML_HEAD = b"kind: KcacheSnapshot\nversion: 1\nitems:\n"


class ReadDoc(msgspec.Struct, frozen=True, rename="camel"):
    """One recorded read; dumps written before selectors were recorded have none (`reads.Read`)."""

    resource: str = ""
    namespace: str | None = None
    status: str = "ok"
    count: int = 0
    verb: str = "list"
    message: str = ""
    label_selector: str = ""
    field_selector: str = ""


class ScopeDoc(msgspec.Struct, frozen=True):
    namespace: str | None = None


class MetaDoc(msgspec.Struct, frozen=True, rename="camel"):
    """A dump's meta (unknown fields ignored; scope and tool are informative)."""

    cluster: Any = ""
    server: Any = ""
    taken_at: Any = ""
    server_version: Any = ""
    reads: list[ReadDoc] | None = None
    scope: ScopeDoc | None = None
