"""ClusterSnapshot: the typed objects of everything the commands read, and the record of the reads,
built from the API (snapshot/live.py), from files (snapshot/files/, through `load_files`) or from informer stores.

The snapshot file format (`kubectl kcache dump`, written by snapshot/dump.py) is
    {"kind": "KcacheSnapshot", "version": 1, "meta": {...}, "items": [...]}
`--from-file` also takes a `kind: List` and plain (multi-)documents, YAML or JSON, or a folder of them.
From plain files a kind absent from the input is read as "not-in-input", never as "none in the cluster".
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import compress
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from .. import objects as o
from ..errors import InputError
from ..provenance import FILE, Provenance
from ..sharing import SameObjects
from . import kinds
from .reads import Read

if TYPE_CHECKING:
    pass

_T = TypeVar("_T")
_V = TypeVar("_V")


class SnapshotMeta(msgspec.Struct, frozen=True):
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
        return Provenance.from_files(
            meta.files, meta.cluster, meta.taken_at, namespace, server=meta.server, clock=meta.clock
        )
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
    leases: tuple[o.Lease, ...] = ()  # reconcile's: other controllers' leader election
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

    @cached_property
    def capture_by_key(self) -> dict[str, o.Capture]:
        return {f"{k.namespace}/{k.name}": k for k in self.captures}

    def derived(self, key: str, compute: Callable[[], _T], on: tuple[str, ...] = (), updatable: bool = False) -> _T:
        """A value derived from this snapshot's objects, computed once (kernelcache/membership.py keeps the
        group membership here, so that every check, explanation and plan of one snapshot shares it). `on`: the
        only fields it is derived from, when it may be carried over to the next snapshot of a kept-current
        view that holds the very same objects in them (`carry_derived`); `updatable`: when they do not, the next
        snapshot's `compute` may update it from what changed (`stale_derived`)."""
        memo = self.__dict__.setdefault("_derived", {})
        if key not in memo:
            memo[key] = compute()
            if on:
                self.__dict__.setdefault("_derived_on", {})[key] = on
            if updatable:
                self.__dict__.setdefault("_derived_updatable", set()).add(key)
        return memo[key]  # type: ignore[no-any-return]

    def carry_derived(self, previous: ClusterSnapshot | None) -> list[str]:
        """Take over the indexes computed for `previous` (the last snapshot of the same kept-current view, see
        snapshot/follow.py) whose fields hold the very same tuple here: each built once per change of its
        inputs instead of once per snapshot. A value with a `carried()` method is carried as what it returns (a
        copy without the lookups it memoised for the previous snapshot). The keys carried."""
        if previous is None:
            return []
        same = {f for f in kinds.FIELDS if getattr(previous, f) is getattr(self, f)}
        carried = []
        for name, fields in _INDEXES.items():  # the cached_property indexes
            if name in previous.__dict__ and name not in self.__dict__ and same.issuperset(fields):
                self.__dict__[name] = previous.__dict__[name]
                carried.append(name)
        memo = self.__dict__.setdefault("_derived", {})
        deps = self.__dict__.setdefault("_derived_on", {})
        stale = self.__dict__.setdefault("_derived_stale", {})
        updatable: set[str] = previous.__dict__.get("_derived_updatable", set())
        for key, on in previous.__dict__.get("_derived_on", {}).items():
            if key in memo:
                continue
            if not same.issuperset(on):
                if key in updatable:  # the last snapshot's, for `stale_derived` (only this one is kept)
                    stale[key] = (previous.__dict__["_derived"][key], {f: getattr(previous, f) for f in on})
                continue
            value = previous.__dict__["_derived"][key]
            carry = getattr(value, "carried", None)
            memo[key], deps[key] = (carry() if callable(carry) else value), on
            if key in updatable:
                self.__dict__.setdefault("_derived_updatable", set()).add(key)
            carried.append(key)
        return carried

    def stale_derived(self, key: str) -> tuple[Any, dict[str, Any]] | None:
        """What `derived` computed for `key` over the last snapshot of a kept-current view when its fields `on`
        changed since (so it was not carried), with those fields as they were then: for a value that is cheaper
        to update from what changed than to compute again. Handed out once."""
        return self.__dict__.get("_derived_stale", {}).pop(key, None)  # type: ignore[no-any-return]

    def reuse(self, key: str, on: tuple[str, ...]) -> Reuse:
        """The `Reuse` of values kept under `key`, carried from the last snapshot of a kept-current view while
        the fields `on` hold the same objects."""
        return self.derived(key, Reuse, on=on)

    def judged(self, key: str, on: tuple[str, ...]) -> Judged:
        """The `Judged` values kept under `key`, carried from the last snapshot of a kept-current view while the
        fields `on` hold the same objects."""
        return self.derived(key, Judged, on=on)

    def configmap(self, namespace: str, name: str) -> o.ConfigMap | None:
        return next((c for c in self.configmaps if c.meta.namespace == namespace and c.meta.name == name), None)

    def daemonset(self, namespace: str, name: str) -> o.DaemonSet | None:
        return next((d for d in self.daemonsets if d.meta.namespace == namespace and d.meta.name == name), None)

    def deployment(self, namespace: str, name: str) -> o.Deployment | None:
        return next((d for d in self.deployments if d.meta.namespace == namespace and d.meta.name == name), None)

    def namespace_exists(self, name: str) -> bool:
        return any(n.meta.name == name for n in self.namespaces)

    def pods_labelled(self, namespace: str | None, key: str, value: str | None = None) -> list[o.Pod]:
        # asked by several checks, status and why-not-ready with the same arguments: one pass over the pods each
        found: dict[tuple[str | None, str, str | None], list[o.Pod]] = self.derived("pods-labelled", dict, on=("pods",))
        hit = found.get((namespace, key, value))
        if hit is None:
            hit = found[(namespace, key, value)] = [
                p
                for p in self.pods
                if (namespace is None or p.namespace == namespace)
                and key in p.meta.labels
                and (value is None or p.meta.labels[key] == value)
            ]
        return list(hit)

    def object_count(self) -> int:
        return sum(len(getattr(self, f)) for f in kinds.FIELDS)


class Reuse:
    """Values computed per key over one snapshot (a KernelCache's why-not-ready row, a group's status), offered to
    the next snapshot of a kept-current view: kept with the snapshot by `ClusterSnapshot.reuse(name, on)` and
    carried over while the fields `on` hold the same objects. A value is reused while what else it read is the
    same: `members` the very same objects in the same order (a group's member nodes), `same` the very same
    objects, `equal` equal."""

    def __init__(self, previous: dict[Any, tuple[Any, ...]] | None = None):
        self.previous = previous or {}
        self.current: dict[Any, tuple[Any, ...]] = {}
        self._same_members = SameObjects()

    def carried(self) -> Reuse:
        return Reuse({**self.previous, **self.current})

    def get(self, key: Any, members: Sequence[Any] | None, same: tuple[Any, ...] = (), equal: Any = None) -> Any:
        """The value kept for `key` when it is still valid (and kept again), else None."""
        hit = self.previous.get(key)
        if hit is None:
            return None
        was_members, was_same, was_equal, value = hit
        if len(was_same) != len(same) or not all(map(operator.is_, was_same, same)) or was_equal != equal:
            return None
        if was_members is not members and (
            was_members is None or members is None or not self._same_members(was_members, members)
        ):
            return None
        self.current[key] = (members, was_same, was_equal, value)
        return value

    def keep(
        self, key: Any, members: Sequence[Any] | None, value: Any, same: tuple[Any, ...] = (), equal: Any = None
    ) -> None:
        self.current[key] = (members, same, equal, value)


class Judged:
    """A value per item of a list (a member node's findings of one check), offered to the next snapshot of a
    kept-current view: kept with the snapshot by `ClusterSnapshot.judged(name, on)`, carried over while the fields
    `on` hold the same objects, and reused for an item while `context` is equal and the objects the item was
    judged from (`same(item)`: the item itself, by default) are the very same. Only the last snapshot's values
    are kept, so a deleted item is not held."""

    def __init__(
        self,
        previous: dict[Any, tuple[Any, Any]] | None = None,
        context: Any = None,
        judged: tuple[Sequence[Any], list[Any]] | None = None,
    ):
        self.previous, self.previous_context, self.previous_judged = previous or {}, context, judged
        self.current: dict[Any, tuple[Any, Any]] = {}  # key -> (the item, or what `same` gave; its value)
        self.context = context
        self.judged: tuple[Sequence[Any], list[Any]] | None = None  # the items and their values, in order
        self.computed = 0  # items judged (not reused) over this snapshot: what a change cost

    def carried(self) -> Judged:
        if not self.current:  # a snapshot never judged (not evaluated) offers what it was offered
            return Judged(self.previous, self.previous_context, self.previous_judged)
        return Judged(self.current, self.context, self.judged)

    def each(
        self,
        items: Iterable[_T],
        judge: Callable[[_T], _V],
        context: Any = None,
        key: Callable[[_T], Any] = operator.attrgetter("name"),
        same: Callable[[_T], tuple[Any, ...]] | None = None,
    ) -> list[_V]:
        """`judge(item)` for every item, in order, reusing the last snapshot's value where it holds. Items judged
        from themselves alone (no `same`), in a list of the last one's length: only those at the positions where
        the list holds another object are looked at (none when it is the very same list)."""
        last = self.previous_judged
        if same is None and last is not None and context == self.previous_context and isinstance(items, Sequence):
            if last[0] is items:
                self.context, self.current, self.judged = context, self.previous, last
                return last[1]
            if len(last[0]) == len(items):
                moved = list(compress(range(len(items)), map(operator.is_not, last[0], items)))
                if len(moved) * 10 <= len(items):
                    return self._replaced(last, items, moved, judge, key, context)
        found = (self.previous if context == self.previous_context else {}).get
        if self.current is self.previous:  # (taken over whole above): not written into
            self.current = {}
        self.context, current, out = context, self.current, []
        for item in items:
            objects: Any = item if same is None else same(item)
            hit = found(name := key(item))
            if hit is None or not (hit[0] is objects if same is None else _same(hit[0], objects)):
                self.computed += 1
                hit = (objects, judge(item))
            current[name] = hit
            out.append(hit[1])
        if isinstance(items, Sequence):
            self.judged = (items, out)
        return out

    def _replaced(
        self,
        last: tuple[Sequence[Any], list[Any]],
        items: Sequence[_T],
        moved: list[int],
        judge: Callable[[_T], _V],
        key: Callable[[_T], Any],
        context: Any,
    ) -> list[_V]:
        """`each` over `items`, the last list with other objects at the positions `moved`."""
        current, out = dict(self.previous), list(last[1])
        found = self.previous.get
        for i in moved:
            item, was = items[i], last[0][i]
            if key(was) != (name := key(item)):
                current.pop(key(was), None)
            hit = found(name)
            if hit is None or hit[0] is not item:
                self.computed += 1
                hit = (item, judge(item))
            current[name], out[i] = hit, hit[1]
        self.context, self.current, self.judged = context, current, (items, out)
        return out


def _same(was: Any, now: tuple[Any, ...]) -> bool:
    return type(was) is tuple and len(was) == len(now) and all(map(operator.is_, was, now))


# every field but the nodes and KernelCacheNodes: what a value read besides a group's member nodes and their
# KernelCacheNodes (`Reuse`, with `kernelcache.membership.member_objects`)
ALL_BUT_MEMBERS = tuple(f for f in kinds.FIELDS if f not in ("nodes", "kcns"))

# the cached_property indexes of a snapshot and the one field each is built from (`carry_derived`)
_INDEXES = {
    "node_by_name": ("nodes",),
    "group_by_name": ("node_groups",),
    "kcn_by_name": ("kcns",),
    "kc_by_key": ("kernel_caches",),
    "capture_by_key": ("captures",),
}


# ---- building from objects ----------------------------------------------------------------------


def assemble(
    parsed: Iterable[tuple[str, Any]],
    *,
    meta: SnapshotMeta = SnapshotMeta(),
    reads: Iterable[Read] = (),
    reads_assumed: bool = False,
    warnings: Iterable[str] = (),
) -> ClusterSnapshot:
    """A snapshot from typed objects given as (snapshot field, object): per field, the last object of a
    namespace/name wins, sorted by it."""
    fields: dict[str, dict[tuple[str, str], Any]] = {f: {} for f in kinds.FIELDS}
    for name, obj in parsed:
        fields[name][(obj.metadata.namespace or "", obj.metadata.name)] = obj
    values = {name: _sorted(v) for name, v in fields.items()}
    return ClusterSnapshot(
        meta=meta, reads=tuple(reads), reads_assumed=reads_assumed, warnings=tuple(warnings), **values
    )


def _sorted(by_key: dict[tuple[str, str], Any]) -> tuple[Any, ...]:
    return tuple(by_key[k] for k in sorted(by_key))


def parse_item(item: Any, origin: str = "", index: int = 0) -> tuple[str, Any] | None:
    """(snapshot field, typed object) of an API object given as plain data; None for kinds the plugin
    does not read. A malformed object is an ObjectError naming where it came from and the bad field."""
    from ..objects import decode

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
