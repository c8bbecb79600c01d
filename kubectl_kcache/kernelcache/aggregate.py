"""The aggregate KServe computes for a KernelCache from its group's Ready members and their entries (§7.2,
`cache_status.go`): the one place this rule lives.

* The expected nodes are the group's **Ready** members (Ready condition True; a cordoned node still counts,
  a NotReady one does not: an entry, even in Error, on a NotReady member is not counted).
  `counts.nodeCount` is their number.
* Per expected node, its KernelCacheNode's `status.cacheStatus["<namespace>/<name>"]`: missing (no
  KernelCacheNode, or no entry) -> preparing; state `Ready` -> ready; `Error` -> error; anything else
  (Pending, Pulling, the legacy Extracting, none) -> preparing. The entry is counted by its state only:
  its artifact is not compared.
* Any error -> `Error/PreparationFailed`, with the first non-empty message among the Error entries, in
  node-list order (all empty: "waiting for node cache preparation status"); else all ready (nodeCount > 0)
  -> `Ready/CacheReady`; else `Preparing/Preparing`.
* Before the aggregate, the group itself: no member at all -> `Pending/NoMatchingNodes`, no Ready member ->
  `Pending/NoReadyNodes`; both written with every count 0.

What KServe checks earlier in its pass (configuration, verification, the group's existence, the job namespace,
the prefetch identity; `cache_pass`) is not part of this rule: this is the answer when the pass gets this far.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import msgspec

from ..objects import CacheStatus, KernelCache, KernelCacheNode, Node
from ..sharing import SameObjects, changed
from . import constants as c

if TYPE_CHECKING:  # kernelcache is below snapshot: the type only
    from ..snapshot.model import ClusterSnapshot


class Counts(msgspec.Struct, frozen=True):
    """`KernelCache.status.counts` as the aggregate writes it."""

    node_count: int
    nodes_ready: int
    nodes_preparing: int
    nodes_error: int


class Aggregate(msgspec.Struct, frozen=True):
    """The state, the Ready condition's reason and message, the counts, and the Ready members behind them
    (node names in node-list order). `preparing_nodes` holds every member counted as preparing, those
    without an entry (`missing_nodes`) included."""

    state: str
    reason: str
    message: str
    counts: Counts
    error_nodes: tuple[str, ...] = ()
    preparing_nodes: tuple[str, ...] = ()
    missing_nodes: tuple[str, ...] = ()

    @property
    def ready(self) -> bool:
        return self.state == c.CACHE_READY


_NONE = Counts(0, 0, 0, 0)


class EntryIndex:
    """Every KernelCacheNode entry once, by cache key and node, for the aggregates of many KernelCaches over one
    snapshot (the doctor and status compute thousands): each aggregate then walks its cache's own entries and
    takes the members without one as a set difference, instead of looking up every member of its group. The
    Ready members of a group are kept per member list."""

    def __init__(self, kcn_by_name: Mapping[str, KernelCacheNode]):
        self.by_cache: dict[str, dict[str, tuple[str, str]]] = {}
        for node, kcn in kcn_by_name.items():
            for key, entry in _entries(kcn).items():
                self.by_cache.setdefault(key, {})[node] = (entry.state, entry.message)
        self._ready: dict[int, tuple[Sequence[Node], list[str], dict[str, int]]] = {}
        # the aggregates computed against this index, by cache key and member list: the doctor's cache-status,
        # status and why-not-ready -A (all three in one monitor evaluation) ask for the same ones
        self._aggregates: dict[tuple[str, int], tuple[Sequence[Node], Aggregate]] = {}
        # the last snapshot's aggregates by cache key (`carried`): the same entries, so each one holds while its
        # member list holds the very same nodes in the same order (a node relabelled changes one group's list)
        self._previous: dict[str, tuple[Sequence[Node], Aggregate]] = {}
        self._same_members = SameObjects()

    def carried(self) -> EntryIndex:
        """The same entries for the next snapshot of a kept-current view, without this one's member lists; its
        aggregates are offered to the next one."""
        copy = EntryIndex({})
        copy.by_cache = self.by_cache
        # (those not asked for this time are offered again; a cache no entry names any more is dropped)
        offered = {**self._previous, **{key: hit for (key, _), hit in self._aggregates.items()}}
        copy._previous = {key: hit for key, hit in offered.items() if key in self.by_cache}
        return copy

    def updated(self, was: Sequence[KernelCacheNode], kcns: Sequence[KernelCacheNode]) -> EntryIndex | None:
        """This index (of the KernelCacheNodes `was`) for `kcns`: the entries of those that changed (an agent's
        status write) taken out and put in again, the aggregates of the caches none of whose entries changed
        offered to the next one as `carried` offers them; None when many changed (then built again)."""
        gone, came = changed(was, kcns)
        if (len(gone) + len(came)) * 10 > len(kcns):
            return None
        copy = self.carried()
        by_cache = copy.by_cache = dict(self.by_cache)
        touched: set[str] = set()

        def entries_of(key: str) -> dict[str, tuple[str, str]]:
            if key not in touched:  # the last index's dict is left as it was
                touched.add(key)
                by_cache[key] = dict(by_cache.get(key, {}))
            return by_cache[key]

        for kcn in gone:
            for key in _entries(kcn):
                entries_of(key).pop(kcn.name, None)
        for kcn in came:
            for key, entry in _entries(kcn).items():
                entries_of(key)[kcn.name] = (entry.state, entry.message)
        for key in touched:
            if not by_cache[key]:
                del by_cache[key]
        copy._previous = {key: hit for key, hit in copy._previous.items() if key not in touched}
        return copy

    def previous(self, key: str, members: Sequence[Node]) -> Aggregate | None:
        """The last snapshot's aggregate of `key`, when its members were the very same nodes in the same order."""
        hit = self._previous.get(key)
        return hit[1] if hit is not None and self._same_members(hit[0], members) else None

    def ready_members(self, members: Sequence[Node]) -> tuple[list[str], dict[str, int]]:
        """The Ready members' names in order, and each one's position."""
        hit = self._ready.get(id(members))
        if hit is None or hit[0] is not members:
            names = [n.name for n in members if n.ready is True]  # no Ready condition: not Ready
            hit = (members, names, {n: i for i, n in enumerate(names)})
            self._ready[id(members)] = hit
        return hit[1], hit[2]


def _entries(kcn: KernelCacheNode) -> Mapping[str, CacheStatus]:
    return (kcn.status.cache_status if kcn.status is not None else None) or {}


def entry_index_of(snapshot: ClusterSnapshot) -> EntryIndex:
    """The snapshot's entry index, built on first use and kept with the snapshot; over the next snapshot of a
    kept-current view (the monitor), updated from the last one's for the KernelCacheNodes that changed."""

    def make() -> EntryIndex:
        stale = snapshot.stale_derived("entry-index")
        made = stale[0].updated(stale[1]["kcns"], snapshot.kcns) if stale is not None else None
        return made if made is not None else EntryIndex(snapshot.kcn_by_name)

    return snapshot.derived("entry-index", make, on=("kcns",), updatable=True)


def compute_aggregate(
    kc: KernelCache,
    members: Sequence[Node],
    kcn_by_name: Mapping[str, KernelCacheNode],
    index: EntryIndex | None = None,
) -> Aggregate:
    """KServe's aggregate for `kc` over `members` (its group's member nodes, in node-list order; NotReady ones
    are left out here) and their KernelCacheNodes by node name; `index`: the entries of these KernelCacheNodes,
    when many aggregates are computed over one snapshot (the same answer, faster)."""
    if not members:
        return Aggregate(c.CACHE_PENDING, c.REASON_NO_MATCHING_NODES, c.MSG_NO_MATCHING_NODES, _NONE)
    if index is None:
        index = EntryIndex({n.name: kcn_by_name[n.name] for n in members if n.name in kcn_by_name})
    memo = (f"{kc.namespace}/{kc.name}", id(members))
    hit = index._aggregates.get(memo)
    if hit is not None and hit[0] is members:
        return hit[1]
    made = index.previous(memo[0], members)
    if made is None:
        made = _aggregate(memo[0], members, index)
    index._aggregates[memo] = (members, made)
    return made


def _aggregate(key: str, members: Sequence[Node], index: EntryIndex) -> Aggregate:
    expected, position = index.ready_members(members)
    if not expected:
        return Aggregate(c.CACHE_PENDING, c.REASON_NO_READY_NODES, c.MSG_NO_READY_NODES, _NONE)
    mine = index.by_cache.get(key, {})
    present = sorted((position[n], n, state, message) for n, (state, message) in mine.items() if n in position)
    ready = [n for _, n, state, _ in present if state == c.ENTRY_READY]
    errors = [(n, message) for _, n, state, message in present if state == c.ENTRY_ERROR]
    if len(position) == len(expected):  # (node names are unique) the members without an entry, in order
        missing = [n for n in expected if n not in mine]
    else:
        missing = sorted(position.keys() - mine.keys(), key=position.__getitem__)
    waiting = [n for _, n, state, _ in present if state not in (c.ENTRY_READY, c.ENTRY_ERROR)]
    preparing = sorted([*missing, *waiting], key=position.__getitem__) if waiting else missing
    counts = Counts(len(expected), len(ready), len(preparing), len(errors))
    if errors:
        message = next((m for _, m in errors if m), "")
        state, reason, text = c.CACHE_ERROR, c.REASON_PREPARATION_FAILED, message or c.MSG_WAITING_FOR_PREPARATION
    elif len(ready) == len(expected):
        state, reason, text = c.CACHE_READY, c.REASON_CACHE_READY, c.MSG_CACHE_READY
    else:
        state, reason, text = c.CACHE_PREPARING, c.REASON_PREPARING, c.MSG_PREPARING
    return Aggregate(state, reason, text, counts, tuple(n for n, _ in errors), tuple(preparing), tuple(missing))
