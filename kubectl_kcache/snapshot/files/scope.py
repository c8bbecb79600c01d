"""What dumps let a command judge: their record of reads (each list at its last recorded status), the namespace
a dump was taken in, and whether several dumps are of one cluster. Beyond that record nothing was read, and
no verdict is given on it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ...errors import IncompleteError, InputError
from ...provenance import FILE
from ..reads import Read

if TYPE_CHECKING:
    from ..model import ClusterSnapshot


def last_reads(reads: Iterable[Read]) -> list[Read]:
    """Each list once, with its last recorded status, in the order of those last reads: a list that failed
    after it was read ok (a retry, a later dump of the cluster) is not read."""
    latest: dict[tuple[str, str | None, str, str, str], Read] = {}
    for read in reads:
        key = (read.resource, read.namespace, read.verb, read.label_selector, read.field_selector)
        latest.pop(key, None)
        latest[key] = read
    return list(latest.values())


def different_clusters(metas: Sequence[tuple[str, Any]]) -> tuple[tuple[str, str], tuple[str, str]] | None:
    """Two dumps (file, what names its cluster) that cannot be of one cluster, else None. Dumps are compared by
    what both record: the API server's URL when both have one (kubeconfigs name one cluster differently),
    else the cluster's name; a dump that records neither, or not the same of them, contradicts none."""
    for i, (file_a, a) in enumerate(metas):
        for file_b, b in metas[i + 1 :]:
            for key in ("server", "cluster"):
                va, vb = str(getattr(a, key) or ""), str(getattr(b, key) or "")
                if va and vb:
                    if va != vb:
                        return (file_a, va), (file_b, vb)
                    break  # the same server: one cluster, whatever each kubeconfig calls it
    return None


def check_same_cluster(metas: Sequence[tuple[str, Any]]) -> None:
    found = different_clusters(metas)
    if found is not None:
        (file_a, a), (file_b, b) = found
        raise InputError(
            f"the dumps come from different clusters ({file_a}: {a}; {file_b}: {b}): load one cluster at a time"
        )


def check_recorded(snapshot: ClusterSnapshot) -> None:
    """Dumps that record no read say nothing about any list: every check would be skipped and the run look
    clean."""
    if snapshot.meta.source == FILE and not snapshot.reads_assumed and not snapshot.reads:
        files = ", ".join(snapshot.meta.files) or "the input"
        raise IncompleteError(
            f"{files}: the dump records no read (meta.reads is empty): nothing in it can be judged; take the dump again"
        )


def check_namespace_scope(snapshot: ClusterSnapshot, command: str, everywhere: bool, asked: str | None) -> None:
    """A dump taken with -n NS read for all namespaces (-A) or for another namespace (-n OTHER): the lists of
    NS say nothing of the others, so there is no verdict (exit 3, as for any list that was not read)."""
    namespace = snapshot.meta.namespace
    if snapshot.meta.source != FILE or not namespace or not (everywhere or (asked and asked != namespace)):
        return
    everywhere_read = {r.resource for r in snapshot.reads if r.namespace is None}
    scoped = list(dict.fromkeys(r.resource for r in snapshot.reads if r.namespace == namespace))
    unread = [resource for resource in scoped if resource not in everywhere_read]
    if not unread:
        return
    target = "all namespaces" if everywhere else f"namespace {asked}"
    raise IncompleteError(
        f"{command} cannot answer for {target}: the input was dumped with -n {namespace} and read "
        f"{', '.join(unread)} only in namespace {namespace} (give -n {namespace}, or dump with "
        f"{'-A' if everywhere else f'-n {asked} or -A'})"
    )
