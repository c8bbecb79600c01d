"""Writing the snapshot file of `kubectl kcache dump` as the pages arrive (bounded memory).

    {"kind": "KcacheSnapshot", "version": 1, "items": [...], "meta": {...}}

One item per line, so that `--from-file` can read the file line by line (snapshot/files/). Each item is written
as the API returned it (managedFields and Secret data dropped, kind and apiVersion
filled in: `kube.listing.raw_item`), copied as bytes in JSON; `meta` (the record of the reads, known only
at the end) comes after the items. JSON is ~10x faster to write and to load than YAML; YAML is written
item by item with libyaml.
"""

from __future__ import annotations

import os
from typing import IO, Any

from .. import __version__
from . import model as snap
from .files.layout import DUMP_HEAD, DUMP_META, YAML_HEAD

LARGE = 2000  # objects; past this, `dump -o yaml` suggests JSON


class DumpWriter:
    """Writes a dump document to a binary stream, one item at a time."""

    def __init__(self, out: IO[bytes], fmt: str):
        self.out, self.fmt = out, fmt
        self.count = 0
        self.started = False

    def _start(self) -> None:
        """The head of the document, written with the first item (nothing is written if the reads fail)."""
        if not self.started:
            self.started = True
            if self.fmt == "json":
                self.out.write(DUMP_HEAD)
            else:
                self.out.write(YAML_HEAD[: -len(b"items:\n")])

    def item(self, data: bytes, _kind: Any = None) -> None:
        self._start()
        if self.fmt == "json":
            self.out.write(b"\n" if self.count == 0 else b",\n")
            self.out.write(data)
        else:
            import msgspec

            if self.count == 0:
                self.out.write(b"items:\n")
            self.out.write(self._dump_yaml([msgspec.json.decode(data)]))
        self.count += 1

    def _dump_yaml(self, value: Any) -> bytes:
        from ..documents import yaml_text

        return yaml_text(value).encode("utf-8")

    def finish(self, meta: dict[str, Any]) -> None:
        self._start()
        if self.fmt == "json":
            import msgspec

            self.out.write(b"\n" + DUMP_META if self.count else DUMP_META)
            self.out.write(msgspec.json.encode(meta) + b"}\n")
        else:
            if self.count == 0:
                self.out.write(b"items: []\n")
            self.out.write(self._dump_yaml({"meta": meta}))
        self.out.flush()


def meta_document(snapshot: snap.ClusterSnapshot, scope: dict[str, Any]) -> dict[str, Any]:
    """The dump's meta: where it came from, when, by which tool, with what scope, and every read."""
    m = snapshot.meta
    return {
        "cluster": m.cluster,
        "server": m.server,
        "takenAt": m.taken_at,
        "serverVersion": m.server_version,
        "tool": f"kubectl-kcache {__version__}",
        "scope": scope,
        "reads": [r.to_dict() for r in snapshot.reads],
    }


def open_output(path: str | None) -> tuple[IO[bytes], str | None]:
    """The stream to write to: stdout, or a temporary file beside PATH (renamed into place at the end, so
    that a failed dump never leaves a truncated file under the name asked for)."""
    import sys

    if not path:
        return sys.stdout.buffer, None
    tmp = f"{path}.kcache-tmp-{os.getpid()}"
    return open(tmp, "wb"), tmp
