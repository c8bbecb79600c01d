"""ClusterSnapshot: the typed objects of everything the commands read, and the record of the reads,
built from the API (collect.py), from files (files.py, through `load_files`) or from informer stores.

The snapshot file format (`kubectl kcache dump`, written by dumpfile.py) is
    {"kind": "KcacheSnapshot", "version": 1, "meta": {...}, "items": [...]}
`--from-file` also takes a `kind: List` and plain (multi-)documents, YAML or JSON, or a folder of them.
From plain files a kind absent from the input is read as "not-in-input", never as "none in the cluster".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from . import kinds
from . import objects as o
from .errors import InputError
from .provenance import FILE, Provenance

NOT_IN_INPUT = "not-in-input"


@dataclass(frozen=True)
class Read:
    """What happened when one kind was read: ok, forbidden (403), absent (404: resource not served), or
    not-in-input (from plain files that hold no object of the kind: nothing is known about it)."""

    resource: str
    namespace: str | None
    status: str
    count: int = 0
    verb: str = "list"
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "resource": self.resource,
            "namespace": self.namespace,
            "status": self.status,
            "count": self.count,
        }
        if self.verb != "list":
            out["verb"] = self.verb
        if self.message:
            out["message"] = self.message
        return out



@dataclass(frozen=True)
class SnapshotMeta:
    cluster: str = ""
    taken_at: str = ""
    server_version: str = ""
    source: str = "live"  # live | file
    server: str = ""  # the API server's URL (live, or recorded in a dump)
    files: tuple[str, ...] = ()  # the input files (from files)


def provenance(meta: SnapshotMeta, namespace: str | None = None) -> Provenance:
    """Where an answer made from a snapshot with this meta came from (`source` in every machine format)."""
    if meta.source == FILE:
        return Provenance.from_files(meta.files, meta.cluster, meta.taken_at, namespace, server=meta.server)
    return Provenance.live(meta.server, meta.cluster, meta.taken_at, namespace)


@dataclass(frozen=True)
class ClusterSnapshot:
    meta: SnapshotMeta = SnapshotMeta()
    reads: tuple[Read, ...] = ()
    nodes: tuple[o.Node, ...] = ()
    node_groups: tuple[o.NodeGroup, ...] = ()
    kcns: tuple[o.KernelCacheNode, ...] = ()
    kernel_caches: tuple[o.KernelCache, ...] = ()
    captures: tuple[o.Capture, ...] = ()
    pods: tuple[o.Pod, ...] = ()
    daemonsets: tuple[o.DaemonSet, ...] = ()
    deployments: tuple[o.Deployment, ...] = ()
    replica_sets: tuple[o.ReplicaSet, ...] = ()
    jobs: tuple[o.Job, ...] = ()
    events: tuple[o.Event, ...] = ()
    configmaps: tuple[o.ConfigMap, ...] = ()
    webhooks: tuple[o.WebhookConfiguration, ...] = ()
    validating_webhooks: tuple[o.WebhookConfiguration, ...] = ()
    endpoint_slices: tuple[o.EndpointSlice, ...] = ()
    service_accounts: tuple[o.ServiceAccount, ...] = ()
    role_bindings: tuple[o.RoleBinding, ...] = ()
    namespaces: tuple[o.Namespace, ...] = ()
    crds: tuple[o.Crd, ...] = ()
    # True when (some) input came from plain files without a record of reads: their reads are made up from
    # what the files hold (ok for a kind present, not-in-input for one absent)
    reads_assumed: bool = False
    warnings: tuple[str, ...] = field(default=(), compare=False)

    # ---- reads ----------------------------------------------------------------------------------
    def read_status(self, resource: str, namespace: str | None = None) -> Read | None:
        """The worst outcome of the reads of `resource` (in `namespace` when given): forbidden beats absent
        beats not-in-input beats ok; None if never read. Files record every kind's read (ok, or not in the
        input); a snapshot built from objects with `reads_assumed` (tests, fixtures) counts the rest as ok."""
        found = [r for r in self.reads if r.resource == resource
                 and (namespace is None or r.namespace in (namespace, None))]
        if not found:
            if self.reads_assumed:
                return Read(resource, None, "ok")
            return None
        for status in ("forbidden", "absent", NOT_IN_INPUT):
            for r in found:
                if r.status == status:
                    return r
        return found[0]

    # ---- indices --------------------------------------------------------------------------------
    @cached_property
    def node_by_name(self) -> dict[str, o.Node]:
        return {n.name: n for n in self.nodes}

    @cached_property
    def group_by_name(self) -> dict[str, o.NodeGroup]:
        return {g.name: g for g in self.node_groups}

    @cached_property
    def kcn_by_name(self) -> dict[str, o.KernelCacheNode]:
        return {k.name: k for k in self.kcns}

    @cached_property
    def kc_by_key(self) -> dict[str, o.KernelCache]:
        return {f"{k.namespace}/{k.name}": k for k in self.kernel_caches}

    def configmap(self, namespace: str, name: str) -> o.ConfigMap | None:
        return next((c for c in self.configmaps if c.meta.namespace == namespace and c.meta.name == name), None)

    def daemonset(self, namespace: str, name: str) -> o.DaemonSet | None:
        return next((d for d in self.daemonsets if d.meta.namespace == namespace and d.meta.name == name), None)

    def deployment(self, namespace: str, name: str) -> o.Deployment | None:
        return next((d for d in self.deployments if d.meta.namespace == namespace and d.meta.name == name), None)

    def namespace_exists(self, name: str) -> bool:
        return any(n.meta.name == name for n in self.namespaces)

    def pods_labelled(self, namespace: str | None, key: str, value: str | None = None) -> list[o.Pod]:
        return [
            p
            for p in self.pods
            if (namespace is None or p.namespace == namespace)
            and key in p.meta.labels
            and (value is None or p.meta.labels[key] == value)
        ]

    def object_count(self) -> int:
        return sum(len(getattr(self, f)) for f in kinds.FIELDS)


# ---- building from objects ----------------------------------------------------------------------


def assemble(parsed: Iterable[tuple[str, Any]], *, meta: SnapshotMeta = SnapshotMeta(), reads: Iterable[Read] = (),
             reads_assumed: bool = False, warnings: Iterable[str] = ()) -> ClusterSnapshot:
    """A snapshot from typed objects given as (snapshot field, object): per field, the last object of a
    namespace/name wins, sorted by it."""
    fields: dict[str, dict[tuple[str, str], Any]] = {f: {} for f in kinds.FIELDS}
    for name, obj in parsed:
        fields[name][(obj.metadata.namespace or "", obj.metadata.name)] = obj
    values = {name: tuple(v[k] for k in sorted(v)) for name, v in fields.items()}
    return ClusterSnapshot(meta=meta, reads=tuple(reads), reads_assumed=reads_assumed, warnings=tuple(warnings),
                           **values)


def parse_item(item: Any, origin: str = "", index: int = 0) -> tuple[str, Any] | None:
    """(snapshot field, typed object) of an API object given as plain data; None for kinds the plugin
    does not read. A malformed object is an ObjectError naming where it came from and the bad field."""
    from . import decode

    if not isinstance(item, Mapping):
        raise InputError(f"{origin or 'input'}: item {index} is not an object")
    kind_name, api_version = item.get("kind"), item.get("apiVersion")
    if not isinstance(kind_name, str) or not kind_name or not isinstance(api_version, str) or not api_version:
        raise InputError(f"{origin or 'input'}: item {index} has no kind or no apiVersion")
    kind = kinds.lookup(api_version, kind_name)
    if kind is None:
        return None
    try:
        return kind.field, kind.convert(item)
    except decode.msgspec.ValidationError as exc:
        what = decode.convert(item, decode.Head).describe()
        raise decode.object_error(exc, origin=origin or "input", what=f"{what} (item {index})") from None


def build(
    items: Iterable[Mapping[str, Any]],
    *,
    meta: SnapshotMeta = SnapshotMeta(),
    reads: Iterable[Read] = (),
    reads_assumed: bool = False,
    origin: str = "",
) -> ClusterSnapshot:
    """A snapshot from API objects given as plain data (tests, fixtures); kinds the plugin does not read
    are ignored."""
    parsed = [e for e in (parse_item(item, origin, i) for i, item in enumerate(items)) if e is not None]
    return assemble(parsed, meta=meta, reads=reads, reads_assumed=reads_assumed)


def load_files(paths: Iterable[str]) -> ClusterSnapshot:
    """A snapshot from files: the dump format, `kind: List`, or plain documents; folders are walked.

    A dump brings its record of reads. For plain files the reads are made up from what they hold: `ok`
    (with the count) for a kind present or exported as a typed list (an empty `PodList` says there are
    none), `not-in-input` for one absent (unless a dump recorded it)."""
    from .files import read_all

    loaded = read_all(paths)
    reads = [Read(r.resource, r.namespace, r.status, r.count, r.verb, r.message)
             for _, m in loaded.metas for r in (m.reads or ())]
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
        meta = SnapshotMeta(cluster=str(m.cluster or ""), taken_at=str(m.taken_at or ""),
                            server_version=str(m.server_version or ""), source="file", server=str(m.server or ""),
                            files=tuple(loaded.files))
    return assemble(loaded.objects, meta=meta, reads=reads, reads_assumed=reads_assumed, warnings=loaded.warnings)
