"""`why-not-ready KERNELCACHE`: why a KernelCache is not Ready on the nodes of its group, the whole chain in
KServe's order (pure; reference §2.4).

Cache level (one KernelCache pass; the first gate that stops decides for every node): `exists` (and not
terminating), `capture-link`, `usage`, `config`, `verification`, `group`, `job-namespace`,
`prefetcher-identity`, `requeue`. Node level, per member node (and for a node asked about with `--node`):
`member`, `ready`, `kernelcachenode`, `agent-pod`, `agent-pass`, `entry`, `job`, `pod`, `pull`,
`image-present`, `entry-state`. A node's `blockedBy` is its first gate that did not pass (None when its entry
is Ready, as KServe counts it). Then the nodes are folded by cause, and the aggregate KServe computes
(`kernelcache.aggregate`) is set beside the status it wrote.

Every rule comes from kernelcache/: the Job the agent reads and what it writes (`preparation`), the
prefetcher identity and the requeue (`prefetcher`), where the pass stops (`cache_pass`), the aggregate. A
gate whose input was not read says so (`passed` None) and the answer is incomplete (exit 3).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from .. import objects as o
from ..kernelcache import constants as c
from ..kernelcache.admission import entry_matches_cache
from ..kernelcache.aggregate import Aggregate, EntryIndex, compute_aggregate, entry_index_of
from ..kernelcache.caches import effective_group
from ..kernelcache.config import ConfigState, read_config
from ..kernelcache.membership import member_objects, membership_of
from ..snapshot.model import ALL_BUT_MEMBERS, ClusterSnapshot
from .ready_cache import CacheContext, cache_gates, written_condition
from .ready_index import chain_index
from .ready_model import (
    CACHE_GATES,
    KIND,
    NODE_GATES,
    VERSION,
    WAITING,
    CacheGate,
    Cause,
    NodeGate,
    NodeTrace,
    WhyNotReady,
)
from .ready_nodes import NodeInputs, node_chain, node_inputs, pull_summary, schedule_summary

__all__ = [
    "CACHE_GATES",
    "KIND",
    "NODE_GATES",
    "VERSION",
    "WAITING",
    "CacheGate",
    "Cause",
    "NodeGate",
    "NodeTrace",
    "WhyNotReady",
    "WhyNotReadyFleet",
    "explain",
    "explain_all",
    "pull_summary",
    "schedule_summary",
]


def _fold(nodes: Iterable[NodeTrace | tuple[str, str, str, str | None]]) -> tuple[Cause, ...]:
    """One line per distinct cause of the Ready members not Ready (NotReady members apart, last); a node is a
    trace, or (name, blocking gate, cause, next) when no chain was kept (-A)."""
    groups: dict[tuple[str, str], list[tuple[str, str | None]]] = {}
    for n in nodes:
        name, gate, cause, nxt = (n.name, n.blocked_by, n.cause, n.next) if isinstance(n, NodeTrace) else n
        if gate is None:
            continue
        groups.setdefault((gate, cause), []).append((name, nxt))
    out = [
        Cause(cause, gate, tuple(x for x, _ in ts), next((y for _, y in ts if y), None))
        for (gate, cause), ts in groups.items()
    ]
    order = {g: i for i, g in enumerate(NODE_GATES)}
    return tuple(sorted(out, key=lambda x: (x.gate in ("member", "ready"), -len(x.nodes), order.get(x.gate, 99))))


# ---- the answer -----------------------------------------------------------------------------------------


def explain(
    snapshot: ClusterSnapshot,
    namespace: str,
    name: str,
    nodes: Iterable[str] = (),
    index: EntryIndex | None = None,
    summary: bool = False,
) -> WhyNotReady:
    """The chain for KernelCache `namespace/name`; `nodes`: nodes to trace besides the group's members; `index`:
    the snapshot's entry index, when many caches are explained (-A); `summary`: keep no node chains, only the
    causes (the members the aggregate counts Ready are not traced, and members in the same situation without a
    Job share one chain)."""
    kc = snapshot.kc_by_key.get(f"{namespace}/{name}")
    if kc is None:
        return WhyNotReady(namespace, name, None, False, (CacheGate("exists", False, "not found"),), (), None, None)
    config = _config(snapshot)
    cfg = config.config
    default_group = cfg.default_node_group if cfg is not None else ""
    group_name = effective_group(kc, default_group)
    ctx = CacheContext(
        snapshot,
        kc,
        config,
        cfg.job_namespace if cfg is not None else "",
        group_name,
        snapshot.group_by_name.get(group_name),
        [],
    )
    gates = tuple(cache_gates(ctx))
    stop = next((g for g in gates if g.passed is not True and g.passed is not None), None)
    sh = node_inputs(ctx, stop)
    members = membership_of(snapshot).members_of_group.get(group_name, []) if ctx.group is not None else []
    if summary:
        return _summary(ctx, sh, gates, members, index)
    traces = [node_chain(ctx, sh, n, True, []) for n in members]
    seen = {n.name for n in members}
    for extra in nodes:
        if extra in seen:
            continue
        node = snapshot.node_by_name.get(extra)
        if node is None:
            continue
        missing = (
            [
                f"{k}={v} wanted, has {node.labels[k]!r}" if k in node.labels else f"no label {k}"
                for k, v in sorted(ctx.group.node_selector.items())
                if node.labels.get(k) != v
            ]
            if ctx.group is not None
            else []
        )
        traces.append(node_chain(ctx, sh, node, False, missing))
    aggregate = compute_aggregate(kc, members, snapshot.kcn_by_name, index) if ctx.group is not None else None
    written = _written(kc)
    admission = _admission_note(snapshot, kc)
    return WhyNotReady(
        namespace,
        name,
        group_name or None,
        True,
        gates,
        tuple(traces),
        aggregate,
        written,  # type: ignore[arg-type]
        admission,
        tuple(ctx.unread),
        _fold(traces),
    )


def _config(snapshot: ClusterSnapshot) -> ConfigState:
    """The kernelcache configuration, read once per snapshot (-A explains every KernelCache of it)."""
    return snapshot.derived(
        "kernelcache-config", lambda: read_config(snapshot.configmap(c.KSERVE_NAMESPACE, c.CONFIGMAP_NAME))
    )


def _written(kc: o.KernelCache) -> Any:
    """(state, reason, message, counts) of the status KServe wrote, or None."""
    if kc.status is None:
        return None
    k = kc.status.counts
    return (
        *written_condition(kc),
        (k.node_count, k.nodes_ready, k.nodes_preparing, k.nodes_error) if k else (0, 0, 0, 0),
    )


def _summary(
    ctx: CacheContext, sh: NodeInputs, gates: tuple[CacheGate, ...], members: list[o.Node], index: EntryIndex | None
) -> WhyNotReady:
    """-A's answer for one KernelCache: the causes of the Ready members the aggregate does not count Ready. A
    member with no Job for the cache is in a situation its KernelCacheNode, agent, agent events and entry
    decide: one chain per distinct situation (a fleet where thousands of nodes lack the same entry builds one)."""
    kc, snap = ctx.kc, ctx.snapshot
    aggregate = compute_aggregate(kc, members, snap.kcn_by_name, index) if ctx.group is not None else None
    key = f"{kc.namespace}/{kc.name}"
    seen: dict[Any, tuple[str | None, str, str | None]] = {}
    records: list[tuple[str, str, str, str | None]] = []
    # (this loop runs for every held member of every KernelCache, a million at 50,000 nodes: kept lean)
    kcn_by_name, node_by_name, any_jobs = snap.kcn_by_name, snap.node_by_name, bool(sh.index.jobs)
    situations, situation_of = sh.index.situations, sh.index.situation
    mine = index.by_cache.get(key, {}) if index is not None else None  # the nodes with an entry of the cache
    for name in _held(aggregate, members, index):
        node = node_by_name[name]
        situation: Any = None
        if not any_jobs or not sh.jobs_for(kc, name):
            kcn = kcn_by_name.get(name)
            sit = situations.get(name) or situation_of(node, kcn is not None)
            entry = None
            if kcn is not None and (mine is None or name in mine):
                entry = ((kcn.status.cache_status if kcn.status is not None else None) or {}).get(key)
            # a member without the entry: its situation alone (equal situations are one tuple: by identity)
            situation = (
                id(sit)
                if entry is None
                else (sit, (entry.state, entry.message, entry.image_reference, entry.footprints))
            )
        found = seen.get(situation) if situation is not None else None
        if found is None:
            trace = node_chain(ctx, sh, node, True, [])
            found = (trace.blocked_by, trace.cause, trace.next)
            if situation is not None:
                seen[situation] = found
        if found[0] is not None:
            records.append((name, found[0], found[1], found[2]))
    counted = aggregate.counts.node_count if aggregate is not None else 0
    ready = aggregate.counts.nodes_ready if aggregate is not None else 0
    return WhyNotReady(
        kc.namespace,
        kc.name,
        ctx.group_name or None,
        True,
        gates,
        (),
        aggregate,
        _written(kc),
        "",
        tuple(ctx.unread),
        _fold(records),
        summary=(counted, ready),
    )


def _held(aggregate: Aggregate | None, members: list[o.Node], index: EntryIndex | None) -> Iterable[str]:
    """The Ready members the aggregate does not count Ready (Error or preparing), in member order."""
    if aggregate is None or not aggregate.error_nodes:
        return aggregate.preparing_nodes if aggregate is not None else ()
    if not aggregate.preparing_nodes:
        return aggregate.error_nodes
    position = index.ready_members(members)[1] if index is not None else {n.name: i for i, n in enumerate(members)}
    return sorted((*aggregate.error_nodes, *aggregate.preparing_nodes), key=position.__getitem__)


def _admission_note(snapshot: ClusterSnapshot, kc: o.KernelCache) -> str:
    """Whether the pod webhook can use the cache today: the feature on and its configuration valid, the
    verification the configured mode asks for (§2.3 5), and any KernelCacheNode, of any node, with a Ready entry
    of the spec's image and footprints (Ready on the KernelCache is not required)."""
    from ..kernelcache.admission.candidates import verification_allows_use

    config = _config(snapshot)
    if config.config is None:
        return "the pod webhook cannot mount it today: the kernelcache configuration does not load"
    if not config.config.enabled:
        return "the pod webhook cannot mount it today: the feature is disabled in inferenceservice-config"
    mode = config.config.artifact_security.mode
    if not verification_allows_use(mode, kc.verification):
        return (
            f'the pod webhook cannot mount it today: artifactSecurity.mode is "{mode}" and the KernelCache\'s '
            "status.verification does not show it verified in that mode"
        )
    key = f"{kc.namespace}/{kc.name}"
    where = [
        k.name
        for k in snapshot.kcns
        for e in k.entries
        if e.key == key and e.state == c.ENTRY_READY and entry_matches_cache(e, kc)
    ]
    if where:
        return (
            f"the pod webhook can mount it today: {len(where)} KernelCacheNode(s) have a Ready entry with its "
            f"artifact (e.g. {where[0]}); Ready on the KernelCache is not required"
        )
    return "the pod webhook cannot mount it today: no KernelCacheNode has a Ready entry with its artifact"


class WhyNotReadyFleet(msgspec.Struct, frozen=True):
    """why-not-ready without a KernelCache: the chain of every KernelCache in scope, not Ready ones first."""

    rows: tuple[WhyNotReady, ...]

    @property
    def all_ready(self) -> bool:
        return all(w.ready for w in self.rows)

    @property
    def unread(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(u for w in self.rows for u in w.unread))

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "WhyNotReadyList",
            "version": VERSION,
            "items": [w.to_dict() for w in self.rows],
        }


def explain_all(
    snapshot: ClusterSnapshot, namespace: str | None, selector: str = "", group: str = ""
) -> WhyNotReadyFleet:
    """The chain of every KernelCache in `namespace` (None: all), with these labels (`-l`, kubectl's syntax)
    and in this group (`--group`): not Ready first, then by namespace and name."""
    from ..kernelcache.selectors import label_selector_matches
    from .fleet import check_selector

    match = check_selector(selector) if selector else None
    config = _config(snapshot)
    default_group = config.config.default_node_group if config.config is not None else ""
    # a row reads the nodes and KernelCacheNodes only through its group's members: the last snapshot's row of a
    # KernelCache is reused while every other field holds the same objects (a node relabelled or a KernelCacheNode
    # written explains again the KernelCaches of that node's groups, not the other thousands: the monitor)
    memo = snapshot.reuse("why-not-ready-rows", on=ALL_BUT_MEMBERS)
    members = membership_of(snapshot).members_of_group
    job_ns = config.config.job_namespace if config.config is not None else ""
    images_known = chain_index(snapshot, job_ns).images_known
    rows = []
    for kc in snapshot.kernel_caches:
        if namespace is not None and kc.namespace != namespace:
            continue
        if match is not None and not label_selector_matches(match, kc.meta.labels):
            continue
        kc_group = effective_group(kc, default_group)
        if group and kc_group != group:
            continue
        key, inputs = (kc.namespace, kc.name), (snapshot.reads, images_known)
        objects = member_objects(snapshot, kc_group) if kc_group in members else None
        row = memo.get(key, objects, (kc,), inputs)
        if row is None:
            row = explain(snapshot, kc.namespace, kc.name, index=entry_index_of(snapshot), summary=True)
            memo.keep(key, objects, row, (kc,), inputs)
        rows.append(row)
    rows.sort(key=lambda w: (w.ready, w.namespace, w.name))
    return WhyNotReadyFleet(tuple(rows))
