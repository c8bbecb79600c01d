"""ClusterSnapshot: the typed objects of everything the commands read, and the record of the reads,
built from the API (collect.py), from files (files.py, through `load_files`) or from informer stores.

The snapshot file format (`kubectl kcache dump`, written by dumpfile.py) is
    {"kind": "KcacheSnapshot", "version": 1, "meta": {...}, "items": [...]}
`--from-file` also takes a `kind: List` and plain (multi-)documents, YAML or JSON, or a folder of them.
From plain files a kind absent from the input is read as "not-in-input", never as "none in the cluster".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from . import kinds
from . import objects as o
from .errors import EXIT_INCOMPLETE, EXIT_USAGE, IncompleteError, InputError
from .provenance import FILE, Provenance

if TYPE_CHECKING:
    from .files import Selection

OK = "ok"
FORBIDDEN = "forbidden"  # 403
ABSENT = "absent"  # 404: the resource is not served (a CRD not installed)
FAILED = "failed"  # any other failure recorded in a dump
NOT_IN_INPUT = "not-in-input"  # from files that hold no object of the kind: nothing is known about it
NOT_READ = "not-read"  # no read covers the list (a live command that did not make it)
# which of several covering reads speaks for a list when none was ok: the worst first
_RANK = {FORBIDDEN: 0, FAILED: 1, ABSENT: 3, NOT_IN_INPUT: 4, NOT_READ: 5}
_T = TypeVar("_T")


@dataclass(frozen=True)
class Read:
    """One list that was made, with its full spec, and what happened: ok, forbidden (403), absent (404:
    resource not served), failed, or not-in-input (from plain files that hold no object of the kind).

    A dump written before selectors were recorded has none: such a read covers every list of its resource
    in its namespace, which is what it named."""

    resource: str
    namespace: str | None
    status: str
    count: int = 0
    verb: str = "list"
    message: str = ""
    label_selector: str = ""
    field_selector: str = ""

    @property
    def ok(self) -> bool:
        return self.status == OK

    @property
    def incomplete(self) -> bool:
        """The cluster could not be read (exit 3), as opposed to input files lacking the kind (exit 2) or
        a resource that is not served (a fact)."""
        return self.status not in (OK, ABSENT, NOT_IN_INPUT)

    @property
    def failed(self) -> bool:
        """The read was made and the cluster refused or failed it (forbidden, failed, ...)."""
        return self.incomplete and self.status != NOT_READ

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "resource": self.resource,
            "namespace": self.namespace,
            "status": self.status,
            "count": self.count,
        }
        if self.label_selector:
            out["labelSelector"] = self.label_selector
        if self.field_selector:
            out["fieldSelector"] = self.field_selector
        if self.verb != "list":
            out["verb"] = self.verb
        if self.message:
            out["message"] = self.message
        return out

    @classmethod
    def of(cls, spec: kinds.ListSpec, status: str, count: int = 0, message: str = "") -> Read:
        return cls(spec.plural, spec.namespace, status, count, message=message, label_selector=spec.label_selector,
                   field_selector=spec.field_selector)


def _terms(selector: str) -> frozenset[str]:
    """The requirements of a selector (`a=b,c in (x,y)` -> {a=b, c in (x,y)}), commas inside () kept."""
    out, depth, term = [], 0, ""
    for ch in selector:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            out.append(term)
            term = ""
        else:
            term += ch
    out.append(term)
    return frozenset(t.strip().replace(" ", "") for t in out if t.strip())


def covers(read: Read, spec: kinds.ListSpec) -> bool:
    """Whether `read` returned (or would have returned) every object `spec` lists: the same resource, all
    namespaces or the same one, and selectors that ask for no more than the spec's (each requirement of
    the read's selector is one of the spec's)."""
    return (read.resource == spec.plural
            and (read.namespace is None or read.namespace == spec.namespace)
            and _terms(read.label_selector) <= _terms(spec.label_selector)
            and _terms(read.field_selector) <= _terms(spec.field_selector))


def covering(snapshot: ClusterSnapshot, spec: kinds.ListSpec) -> Read:
    """THE read rule: the read that speaks for the list `spec`. An ok read that covers it (its objects are
    all there); else the worst covering read (forbidden, failed, absent, not in the input); else a
    made-up one: ok for a snapshot whose reads are assumed (tests, fixtures), not-in-input from files, or
    not-read."""
    found = [r for r in snapshot.reads if covers(r, spec)]
    ok = next((r for r in found if r.ok), None)
    if ok is not None:
        return ok
    if found:
        return min(found, key=lambda r: _RANK.get(r.status, 2))
    if snapshot.reads_assumed:
        return Read.of(spec, OK)
    return Read.of(spec, NOT_IN_INPUT if snapshot.meta.source == FILE else NOT_READ,
                   message="not in the input" if snapshot.meta.source == FILE else "not read")


@dataclass(frozen=True)
class Unread:
    """A list an answer needs that is not usable, and why (the read that speaks for it)."""

    spec: kinds.ListSpec
    read: Read

    @property
    def exit_code(self) -> int:
        """3: the cluster could not be read; 2: input files lack it."""
        return EXIT_USAGE if self.read.status == NOT_IN_INPUT else EXIT_INCOMPLETE

    @property
    def what(self) -> str:
        return f"{self.read.verb} {self.spec.plural}" + (f" in {self.spec.namespace}" if self.spec.namespace else "")

    def __str__(self) -> str:
        """`forbidden: list pods in kserve`, `not in the input: list jobs in x`, `failed: list nodes (...)`."""
        status = self.read.status
        if status == ABSENT:
            return f"{self.spec.plural} is not served by the API server"
        if status == NOT_IN_INPUT:
            return f"not in the input: {self.what}"
        if status == NOT_READ:
            return f"not read: {self.what}"
        tail = f" ({self.read.message})" if status != FORBIDDEN and self.read.message else ""
        return f"{status}: {self.what}{tail}"


def unusable(snapshot: ClusterSnapshot, spec: kinds.ListSpec, absent_is_none: bool = False) -> Unread | None:
    """Why the list `spec` cannot be trusted, or None when it was read (`absent_is_none`: a resource the
    API server does not serve means there are none)."""
    read = covering(snapshot, spec)
    if read.ok or (absent_is_none and read.status == ABSENT):
        return None
    return Unread(spec, read)


class Unreadable(IncompleteError):
    """An answer needs lists that could not be read (exit 3); `unread` names each."""

    def __init__(self, message: str, unread: tuple[Unread, ...]):
        super().__init__(message)
        self.unread = unread


class NotInInput(InputError):
    """An answer needs lists the input files do not hold (exit 2); `unread` names each."""

    def __init__(self, message: str, unread: tuple[Unread, ...]):
        super().__init__(message)
        self.unread = unread


def require(snapshot: ClusterSnapshot, command: str, specs: Iterable[kinds.ListSpec],
            absent_is_none: bool = False) -> None:
    """No answer on data that was not read: raise naming every list of `specs` that is not usable, exit 3
    (`Unreadable`) when the cluster could not be read, exit 2 (`NotInInput`) when only input files lack them."""
    unread: list[Unread] = []
    for spec in specs:
        problem = unusable(snapshot, spec, absent_is_none)
        if problem is not None and str(problem) not in map(str, unread):
            unread.append(problem)
    if not unread:
        return
    text = f"{command} cannot answer: {'; '.join(_problem_text(u) for u in unread)}"
    if all(u.exit_code == EXIT_USAGE for u in unread):
        raise NotInInput(text + " (add them to the files, or read the cluster live)", tuple(unread))
    error = Unreadable(text, tuple(unread))
    error.refused = tuple(r for r in snapshot.reads if r.status == "forbidden")  # for the access hint
    raise error


def _problem_text(u: Unread) -> str:
    what = f"{u.read.verb} {u.spec.plural}" + (f" in namespace {u.spec.namespace}" if u.spec.namespace else "")
    if u.read.status == NOT_IN_INPUT:
        return f"{u.spec.plural}{' in namespace ' + u.spec.namespace if u.spec.namespace else ''} {IN_INPUT_FILES}"
    if u.read.status == FORBIDDEN:
        return f"cannot {what} (forbidden)"
    if u.read.status == ABSENT:
        return f"cannot {what}: the API server does not serve {u.spec.plural}"
    if u.read.status == NOT_READ:
        return f"{u.spec.plural}{' in namespace ' + u.spec.namespace if u.spec.namespace else ''} were not read"
    return f"cannot {what} ({u.read.status}{': ' + u.read.message if u.read.message else ''})"


IN_INPUT_FILES = "are not in the input files"


@dataclass(frozen=True)
class SnapshotMeta:
    cluster: str = ""
    taken_at: str = ""
    server_version: str = ""
    source: str = "live"  # live | file
    server: str = ""  # the API server's URL (live, or recorded in a dump)
    files: tuple[str, ...] = ()  # the input files (from files)
    # from files that do not say when they were read (no takenAt): their newest time, taken as "now" by
    # time-based verdicts instead of today's clock
    clock: str = ""
    # the namespace a dump was taken in (`dump -n`): its namespaced lists cover only that one
    namespace: str | None = None


def provenance(meta: SnapshotMeta, namespace: str | None = None) -> Provenance:
    """Where an answer made from a snapshot with this meta came from (`source` in every machine format)."""
    if meta.source == FILE:
        return Provenance.from_files(meta.files, meta.cluster, meta.taken_at, namespace, server=meta.server,
                                     clock=meta.clock)
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
    roles: tuple[o.Role, ...] = ()
    secrets: tuple[o.Secret, ...] = ()  # metadata only
    namespaces: tuple[o.Namespace, ...] = ()
    crds: tuple[o.Crd, ...] = ()
    # True when (some) input came from plain files without a record of reads: their reads are made up from
    # what the files hold (ok for a kind present, not-in-input for one absent)
    reads_assumed: bool = False
    warnings: tuple[str, ...] = field(default=(), compare=False)

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

    def derived(self, key: str, compute: Callable[[], _T]) -> _T:
        """A value derived from this snapshot's objects, computed once (kernelcache/membership.py keeps the
        group membership here, so that every check, explanation and plan of one snapshot shares it)."""
        memo = self.__dict__.setdefault("_derived", {})
        if key not in memo:
            memo[key] = compute()
        return memo[key]  # type: ignore[no-any-return]

    def derived_so_far(self, key: str) -> Any:
        """The value `derived` computed for `key`, or None when it has not been asked for."""
        return self.__dict__.get("_derived", {}).get(key)

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


def load_files(paths: Iterable[str], select: Selection | None = None) -> ClusterSnapshot:
    """A snapshot from files: the dump format, `kind: List`, or plain documents; folders are walked.

    A dump brings its record of reads. For plain files the reads are made up from what they hold: `ok`
    (with the count) for a kind present or exported as a typed list (an empty `PodList` says there are
    none), `not-in-input` for one absent (unless a dump recorded it). `select` (a files.Selection) decodes
    only what one command reads."""
    from .files import read_all

    loaded = read_all(paths, select)
    reads = [Read(r.resource, r.namespace, r.status, r.count, r.verb, r.message, r.label_selector, r.field_selector)
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
                            files=tuple(loaded.files), namespace=m.scope.namespace if m.scope else None)
    if not meta.taken_at and loaded.newest_time:
        meta = dataclasses.replace(meta, clock=loaded.newest_time)
    return assemble(loaded.objects, meta=meta, reads=reads, reads_assumed=reads_assumed, warnings=loaded.warnings)
