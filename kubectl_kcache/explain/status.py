"""`kubectl kcache status`: the fleet at a glance, counted from one snapshot (pure).

Per node group (every KernelCacheNodeGroup, by name):
* `members`: the nodes its selector matches (KServe's membership, readiness not considered), of which
  `notReady` (Ready condition not True, or none) and `cordoned` (`spec.unschedulable`);
* `kernelCacheNodes`: members that have their KernelCacheNode (the rest are missing);
* `agentReady`: members with a Running and Ready agent pod (one is desired on every member);
* `podsUsing`: what the members' KernelCacheNodes count as pods using any of their caches (totalPodsUsing);
* `caches`: per KernelCache in scope, its entries on the group's members. Every KernelCache whose effective
  group is this group is listed, with zeros when no member has its entry; a KernelCache of another group is
  listed too when some member carries its entry (a node in two groups, or an entry the agent has not
  dropped). Entries of KernelCaches outside the scope (another namespace with `-n`, or deleted) are not
  counted. Each cache's cell:
  * `Ready`, `Pending`, `Pulling`, `Error`: how many **Ready** members (Ready condition True; cordoned ones
    included, as KServe counts them) have its entry in that phase (`kernelcache.caches.entry_phase`);
  * `nodeCount`: the group's Ready members, KServe's `status.counts.nodeCount`;
  * `noEntry`: the Ready members without its entry (no KernelCacheNode, or no entry), which KServe counts
    as preparing: `nodeCount` = the four phases + `noEntry`;
  * `notReady`: the entries on NotReady members, by phase (same keys): KServe does not count them (an Error
    left on a NotReady node does not fail the cache), so they are shown apart and are never the cache's
    problem;
  * `state` and `reason`: the aggregate KServe computes for the cache on this group, its own
    (`kernelcache.aggregate.compute_aggregate`): `Ready/CacheReady`, `Preparing/Preparing`,
    `Error/PreparationFailed`, or `Pending/NoMatchingNodes` (no member), `Pending/NoReadyNodes` (no Ready
    member); both null in the cells of a group that is not the cache's own. It is the answer of the last
    step of KServe's pass: a stop before it (configuration, verification, job namespace; `doctor`) is not
    shown here.

  Version 1 counted the phases over every member, NotReady ones included, and had no `nodeCount`, `noEntry`,
  `notReady`, `state` or `reason`: the four phase keys stay (now over Ready members), the others are added.

KernelCaches whose effective group is unset or names no existing group are listed apart
(`unassignedCaches`), with why. `podsUsing` gives per KernelCache in scope the pods KServe records as using
it (`status.usage`). `totals` sums the cells of the caches' own groups (`entries*`, `noEntry`,
`entriesNotReady`) and the groups.

No answer on data that could not be read (`reads.require`): a read the counts depend on that was
forbidden or failed raises IncompleteError naming it (exit 3); plain files that do not hold a kind it
needs raise InputError (exit 2). A resource the API server does not serve (CRD not installed) is a fact:
none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from .. import objects as o
from ..kernelcache import constants as c
from ..kernelcache.aggregate import Aggregate, compute_aggregate, entry_index_of
from ..kernelcache.caches import PHASES, effective_group, entry_phase, pods_using
from ..kernelcache.config import read_config
from ..kernelcache.gostrings import trim_space
from ..kernelcache.membership import member_objects, membership_of
from ..provenance import Provenance
from ..snapshot import plan
from ..snapshot.model import ALL_BUT_MEMBERS, ClusterSnapshot
from ..snapshot.reads import require
from .fleet import FleetHitRate

KIND = "KcacheStatus"
VERSION = 1
_PHASE_INDEX = {p: i for i, p in enumerate(PHASES)}


# ---- the model ------------------------------------------------------------------------------------


class PhaseCounts(msgspec.Struct, frozen=True):
    """How many member nodes have a cache's entry in each phase."""

    ready: int = 0
    pending: int = 0
    pulling: int = 0
    error: int = 0

    @property
    def total(self) -> int:
        return self.ready + self.pending + self.pulling + self.error

    def as_tuple(self) -> tuple[int, int, int, int]:
        """In the order of `kernelcache.caches.PHASES`."""
        return (self.ready, self.pending, self.pulling, self.error)

    def to_dict(self) -> dict[str, int]:
        return dict(zip(PHASES, self.as_tuple(), strict=True))


class CacheCell(msgspec.Struct, frozen=True):
    """One KernelCache in one group: its entries on the group's Ready members by phase (`counts`), the
    entries on its NotReady members apart (`not_ready`), and on the cache's own group KServe's aggregate."""

    cache: str  # namespace/name
    counts: PhaseCounts  # entries on the group's Ready members
    assigned: bool  # the cache's effective group is this group
    node_count: int | None = None  # the group's Ready members (KServe's nodeCount); None: not counted here
    not_ready: PhaseCounts = PhaseCounts()  # entries on the group's NotReady members: KServe does not count them
    aggregate: Aggregate | None = None  # KServe's aggregate for the cache, on its own group only

    def ready_members(self, members: int) -> int:
        """The group's Ready members: `node_count`, else (a cell made without it) the `members` given."""
        return members if self.node_count is None else self.node_count

    def no_entry(self, members: int) -> int:
        """The Ready members without an entry for the cache (KServe counts them as preparing)."""
        return max(self.ready_members(members) - self.counts.total, 0)

    @property
    def state(self) -> str | None:
        """KServe's computed state on the cache's own group (`Pending` for NoMatchingNodes and NoReadyNodes);
        None in another group's cell."""
        return self.aggregate.state if self.aggregate is not None else None

    def to_dict(self, members: int) -> dict[str, Any]:
        """The `caches` value; `members`: the group's Ready members, for a cell made without `node_count`."""
        agg = self.aggregate
        return {
            **self.counts.to_dict(),
            "nodeCount": self.ready_members(members),
            "noEntry": self.no_entry(members),
            "notReady": self.not_ready.to_dict(),
            "state": agg.state if agg is not None else None,
            "reason": agg.reason if agg is not None else None,
        }


class GroupStatus(msgspec.Struct, frozen=True):
    name: str
    selector: Mapping[str, str]
    members: int
    not_ready: int
    cordoned: int
    kernel_cache_nodes: int
    agent_ready: int
    caches: tuple[CacheCell, ...] = ()
    pods_using: int = 0  # the members' KernelCacheNodes' totalPodsUsing: pods using any cache on them

    @property
    def ready(self) -> int:
        return self.members - self.not_ready

    @property
    def kernel_cache_nodes_missing(self) -> int:
        return self.members - self.kernel_cache_nodes

    @property
    def agent_desired(self) -> int:
        """One agent pod on every member (KServe places the agent by the groups' selectors)."""
        return self.members

    @property
    def assigned_caches(self) -> int:
        return sum(cell.assigned for cell in self.caches)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "selector": dict(sorted(self.selector.items())),
            "members": self.members,
            "notReady": self.not_ready,
            "cordoned": self.cordoned,
            "kernelCacheNodes": self.kernel_cache_nodes,
            "agentReady": self.agent_ready,
            "podsUsing": self.pods_using,
            "caches": {cell.cache: cell.to_dict(self.ready) for cell in self.caches},
        }


class UnassignedCache(msgspec.Struct, frozen=True):
    """A KernelCache in scope that no group prepares: no effective group, or one that does not exist."""

    cache: str
    group: str  # the effective group's name as KServe reads it; "" when none is set
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.cache, "group": self.group or None, "reason": self.reason}


class FleetStatus(msgspec.Struct, frozen=True):
    groups: tuple[GroupStatus, ...]
    unassigned: tuple[UnassignedCache, ...] = ()
    caches: tuple[str, ...] = ()  # every KernelCache in scope (namespace/name), sorted
    pods_using: Mapping[str, int] = msgspec.field(default_factory=dict)  # KernelCache -> its status.usage count

    def group(self, name: str) -> GroupStatus | None:
        return next((g for g in self.groups if g.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "groups": [g.to_dict() for g in self.groups],
            "unassignedCaches": [u.to_dict() for u in self.unassigned],
            "podsUsing": {k: self.pods_using.get(k, 0) for k in self.caches},
            "totals": self.totals(),
        }

    def totals(self) -> dict[str, int]:
        """Sums over the groups (a node in two groups counts in both) and the cells of the caches shown in their
        own groups: entries on Ready members by phase, Ready members without an entry, entries on NotReady
        members."""
        own = [(g, cell) for g in self.groups for cell in g.caches if cell.assigned]
        cells = [cell.counts for _, cell in own]
        return {
            "groups": len(self.groups),
            "members": sum(g.members for g in self.groups),
            "notReady": sum(g.not_ready for g in self.groups),
            "cordoned": sum(g.cordoned for g in self.groups),
            "kernelCacheNodesMissing": sum(g.kernel_cache_nodes_missing for g in self.groups),
            "agentsNotReady": sum(g.agent_desired - g.agent_ready for g in self.groups),
            "kernelCaches": len(self.caches),
            "unassignedCaches": len(self.unassigned),
            "podsUsing": sum(self.pods_using.get(k, 0) for k in self.caches),
            "entriesReady": sum(c.ready for c in cells),
            "entriesPending": sum(c.pending for c in cells),
            "entriesPulling": sum(c.pulling for c in cells),
            "entriesError": sum(c.error for c in cells),
            "noEntry": sum(cell.no_entry(g.ready) for g, cell in own),
            "entriesNotReady": sum(cell.not_ready.total for _, cell in own),
        }


class StatusReport(msgspec.Struct, frozen=True):
    """What `kubectl kcache status` renders: the counts and where they came from."""

    status: FleetStatus
    provenance: Provenance
    notes: tuple[str, ...] = ()
    # with --watch: {"state": "current" | "failing", "problems": [...]}, in every document
    watch: dict[str, Any] | None = None
    # the serving pods' hit rate (`why-not-cached -A`), or why it is not shown (a str); None: not computed
    serving: FleetHitRate | str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The `status -o json` document, with `source` as every machine format carries."""
        doc: dict[str, Any] = {"kind": KIND, "version": VERSION, "source": self.provenance.to_dict()}
        if self.watch is not None:
            doc["watch"] = self.watch
        doc.update(self.status.to_dict())
        if isinstance(self.serving, str):
            doc["servingPods"] = {"notShown": self.serving}
        elif self.serving is not None:
            doc["servingPods"] = {
                **self.serving.totals.to_dict(),
                "inferenceServices": [r.to_dict() for r in self.serving.rows],
            }
        return doc


# ---- reads ----------------------------------------------------------------------------------------


def _scoped_caches(snapshot: ClusterSnapshot, namespace: str | None) -> list[o.KernelCache]:
    return [kc for kc in snapshot.kernel_caches if namespace is None or kc.namespace == namespace]


def require_reads(snapshot: ClusterSnapshot, namespace: str | None, command: str = "status") -> None:
    """Raise IncompleteError naming every read the counts depend on that is not usable."""
    needs = [plan.resolve(spec, namespace) for spec in plan.STATUS if spec != plan.CONFIGMAP]
    if any(not kc.node_group for kc in _scoped_caches(snapshot, namespace)):  # defaultNodeGroup decides
        needs.append(plan.CONFIGMAP)
    require(snapshot, command, needs, absent_is_none=True)  # not served: there are none


# ---- counting -------------------------------------------------------------------------------------


def default_node_group(snapshot: ClusterSnapshot) -> tuple[str, str]:
    """The configured defaultNodeGroup as KServe reads it, and why there is none ("" when one is set)."""
    state = read_config(snapshot.configmap(c.KSERVE_NAMESPACE, c.CONFIGMAP_NAME))
    if state.config is None:
        if not state.present:
            return "", f"ConfigMap {c.KSERVE_NAMESPACE}/{c.CONFIGMAP_NAME} not found"
        return "", "the kernelcache configuration is invalid"
    if not state.config.default_node_group:
        return "", "no defaultNodeGroup is configured"
    return state.config.default_node_group, ""


def agent_running(pod: o.Pod) -> bool:
    """An agent pod that serves its node: Running, Ready and not being deleted."""
    return not pod.meta.deleting and pod.phase == "Running" and pod.ready


def _unassigned_reason(kc: o.KernelCache, group: str, no_default: str, groups: Mapping[str, o.NodeGroup]) -> str:
    if not group:
        return f"no spec.nodeGroupRef and {no_default}"
    source = "spec.nodeGroupRef" if kc.node_group else "defaultNodeGroup"
    reason = f"group {group!r} (from {source}) does not exist"
    if trim_space(group) in groups:
        reason += " (the name has surrounding white space, which KServe does not trim here)"
    return reason


def fleet_status(snapshot: ClusterSnapshot, namespace: str | None = None) -> FleetStatus:
    """The counts of `status` over `snapshot`, KernelCaches limited to `namespace` (None: all).

    Raises IncompleteError when a read the counts depend on is not usable (see `require_reads`)."""
    require_reads(snapshot, namespace)
    caches = _scoped_caches(snapshot, namespace)
    in_scope = {f"{kc.namespace}/{kc.name}" for kc in caches}
    default, no_default = default_node_group(snapshot)
    groups = snapshot.group_by_name

    assigned: dict[str, list[str]] = {}
    unassigned = []
    for kc in caches:
        key = f"{kc.namespace}/{kc.name}"
        group = effective_group(kc, default)
        if group in groups:
            assigned.setdefault(group, []).append(key)
        else:
            unassigned.append(UnassignedCache(key, group, _unassigned_reason(kc, group, no_default, groups)))

    key, value = c.AGENT_POD_LABEL
    agents = snapshot.derived(
        "running-agents",
        lambda: {p.node_name for p in snapshot.pods_labelled(c.KSERVE_NAMESPACE, key, value) if agent_running(p)},
        on=("pods",),
    )
    members = membership_of(snapshot).members_of_group
    # a KernelCacheNode's entries by cache, kept for the next snapshot of a kept-current view (the monitor) while
    # it and the KernelCaches stay the same
    kept_phases = snapshot.reuse(f"status-node-phases/{namespace}", on=("kernel_caches",))

    def phases_of(name: str) -> dict[str, str]:
        kcn = snapshot.kcn_by_name.get(name)
        if kcn is None:
            return {}
        found: dict[str, str] | None = kept_phases.get(name, None, (kcn,))
        if found is None:
            found = _node_phases(kcn, in_scope)
            kept_phases.keep(name, None, found, (kcn,))
        return found

    kc_by_key = {f"{kc.namespace}/{kc.name}": kc for kc in caches}
    # a group's counts read the nodes and KernelCacheNodes only through its members: the last snapshot's are
    # reused while every other field holds the same objects and its members and their KernelCacheNodes are the
    # very same (the monitor, after a node or a KernelCacheNode changed)
    kept = snapshot.reuse("status-groups", on=ALL_BUT_MEMBERS)
    out = []
    for g in snapshot.node_groups:
        nodes = members[g.name]
        objects = member_objects(snapshot, g.name)
        again = kept.get((namespace, g.name), objects)
        if again is not None:
            out.append(again)
            continue
        mine = assigned.get(g.name, ())
        counts: dict[str, list[int]] = {k: [0, 0, 0, 0] for k in mine}
        apart: dict[str, list[int]] = {}  # entries on NotReady members: KServe does not count them
        ready = 0
        for node in nodes:
            up = node.ready is True  # KServe's expected nodes: Ready condition True (cordoned ones included)
            ready += up
            into = counts if up else apart
            for cache, phase in phases_of(node.name).items():
                into.setdefault(cache, [0, 0, 0, 0])[_PHASE_INDEX[phase]] += 1
        cells = tuple(
            CacheCell(
                k,
                PhaseCounts(*counts.get(k, (0, 0, 0, 0))),
                k in mine,
                node_count=ready,
                not_ready=PhaseCounts(*apart.get(k, (0, 0, 0, 0))),
                aggregate=compute_aggregate(kc_by_key[k], nodes, snapshot.kcn_by_name, entry_index_of(snapshot))
                if k in mine
                else None,
            )
            for k in sorted(counts.keys() | apart.keys())
        )
        out.append(
            GroupStatus(
                name=g.name,
                selector=g.node_selector,
                members=len(nodes),
                not_ready=len(nodes) - ready,
                cordoned=sum(1 for n in nodes if n.unschedulable),
                kernel_cache_nodes=sum(1 for n in nodes if n.name in snapshot.kcn_by_name),
                agent_ready=sum(1 for n in nodes if n.name in agents),
                caches=cells,
                pods_using=sum(
                    snapshot.kcn_by_name[n.name].total_pods_using for n in nodes if n.name in snapshot.kcn_by_name
                ),
            )
        )
        kept.keep((namespace, g.name), objects, out[-1])
    return FleetStatus(
        groups=tuple(out),
        unassigned=tuple(unassigned),
        caches=tuple(sorted(in_scope)),
        pods_using={f"{kc.namespace}/{kc.name}": pods_using(kc) for kc in caches},
    )


def _node_phases(kcn: o.KernelCacheNode, in_scope: set[str]) -> dict[str, str]:
    """KernelCache (namespace/name) -> the phase of its entry on this node, for the caches in scope; a cache
    listed twice counts once (the first entry, by map key)."""
    out: dict[str, str] = {}
    for e in kcn.entries:
        cache = f"{e.ref.namespace}/{e.ref.name}"
        if cache in in_scope and cache not in out:
            out[cache] = entry_phase(e.state)
    return out
