"""A snapshot from `--from-file` input: the objects the files hold, and their reads: a dump's record of
them, or, for plain files, reads made up from what they hold."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from .. import kinds
from ..model import ClusterSnapshot, SnapshotMeta, assemble
from ..reads import NOT_IN_INPUT, Read
from .load import Selection, read_all
from .scope import last_reads


def load_files(paths: Iterable[str], select: Selection | None = None) -> ClusterSnapshot:
    """A snapshot from files: the dump format, `kind: List`, or plain documents; folders are walked.

    A dump brings its record of reads, each list at its last recorded status. For plain files the reads are
    made up from what they hold: `ok` (with the count) for a kind present or exported as a typed list (an
    empty `PodList` says there are none), `not-in-input` for one absent (unless a dump recorded it).
    `select` (a files.Selection) decodes only what one command reads."""
    loaded = read_all(paths, select)
    reads = last_reads(
        Read(r.resource, r.namespace, r.status, r.count, r.verb, r.message, r.label_selector, r.field_selector)
        for _, m in loaded.metas
        for r in (m.reads or ())
    )
    reads_assumed = bool(loaded.plain_files) or not loaded.metas
    if reads_assumed:
        recorded = {r.resource for r in reads}
        for plural in kinds.PLURALS:
            count = loaded.plain_counts.get(plural)
            if count is not None:  # objects of the kind, or its typed list (empty: none exist)
                reads.append(Read(plural, None, "ok", count))
            elif plural not in recorded:
                reads.append(Read(plural, None, NOT_IN_INPUT, 0, message="not in the input"))
    meta = SnapshotMeta(source="file", files=tuple(loaded.files))
    for _, m in loaded.metas:
        meta = SnapshotMeta(
            cluster=str(m.cluster or ""),
            taken_at=str(m.taken_at or ""),
            server_version=str(m.server_version or ""),
            source="file",
            server=str(m.server or ""),
            files=tuple(loaded.files),
            namespace=m.scope.namespace if m.scope else None,
        )
    if not meta.taken_at and loaded.newest_time:
        meta = msgspec.structs.replace(meta, clock=loaded.newest_time)
    return assemble(loaded.objects, meta=meta, reads=reads, reads_assumed=reads_assumed, warnings=loaded.warnings)
