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
from dataclasses import dataclass

from ..objects import KernelCache, KernelCacheNode, Node
from . import constants as c


@dataclass(frozen=True)
class Counts:
    """`KernelCache.status.counts` as the aggregate writes it."""

    node_count: int
    nodes_ready: int
    nodes_preparing: int
    nodes_error: int


@dataclass(frozen=True)
class Aggregate:
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


def compute_aggregate(
    kc: KernelCache, members: Sequence[Node], kcn_by_name: Mapping[str, KernelCacheNode]
) -> Aggregate:
    """KServe's aggregate for `kc` over `members` (its group's member nodes, in node-list order; NotReady ones
    are left out here) and their KernelCacheNodes by node name."""
    if not members:
        return Aggregate(c.CACHE_PENDING, c.REASON_NO_MATCHING_NODES, c.MSG_NO_MATCHING_NODES, _NONE)
    expected = [n for n in members if n.ready is True]  # no Ready condition: not Ready
    if not expected:
        return Aggregate(c.CACHE_PENDING, c.REASON_NO_READY_NODES, c.MSG_NO_READY_NODES, _NONE)
    key = f"{kc.namespace}/{kc.name}"
    ready: list[str] = []
    preparing: list[str] = []
    missing: list[str] = []
    errors: list[str] = []
    message = ""
    for node in expected:
        kcn = kcn_by_name.get(node.name)
        entries = (kcn.status.cache_status if kcn is not None and kcn.status is not None else None) or {}
        entry = entries.get(key)
        if entry is None:
            missing.append(node.name)
            preparing.append(node.name)
        elif entry.state == c.ENTRY_READY:
            ready.append(node.name)
        elif entry.state == c.ENTRY_ERROR:
            errors.append(node.name)
            message = message or entry.message
        else:
            preparing.append(node.name)
    counts = Counts(len(expected), len(ready), len(preparing), len(errors))
    if errors:
        state, reason, text = c.CACHE_ERROR, c.REASON_PREPARATION_FAILED, message or c.MSG_WAITING_FOR_PREPARATION
    elif len(ready) == len(expected):
        state, reason, text = c.CACHE_READY, c.REASON_CACHE_READY, c.MSG_CACHE_READY
    else:
        state, reason, text = c.CACHE_PREPARING, c.REASON_PREPARING, c.MSG_PREPARING
    return Aggregate(state, reason, text, counts, tuple(errors), tuple(preparing), tuple(missing))
