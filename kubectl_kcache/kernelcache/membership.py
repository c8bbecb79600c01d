"""Node-group membership and KernelCacheNode membership.

A node is in a group when it carries every selector label with that value (KServe's MatchingGroups; an
empty selector therefore matches every node, which the CRD forbids and the node reconciler refuses).
One KernelCacheNode, named after the node, exists per node in at least one group. Readiness is not
considered. Nothing happens while the feature is disabled (existing ones are kept).

Membership is computed once per snapshot (`membership_of`), from a label index: each group's members are the
intersection of its selector pairs' node sets, O(labels + members) instead of O(nodes x groups). Every check,
explanation, the status counts and reconcile's planner read that one result.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from ..objects import KernelCacheNode, Node, NodeGroup
from . import constants as c
from .selectors import LabelIndex, matching_groups

if TYPE_CHECKING:  # kernelcache is below snapshot: the type only
    from ..snapshot.model import ClusterSnapshot


@dataclass(frozen=True)
class Membership:
    """Which nodes are in which groups. `groups_of_node`: member node name -> its groups, sorted by name as
    KServe sorts them (nodes in no group left out); `members_of_group`: every group's name -> its member nodes
    in the order of the nodes given; `member_nodes`: the nodes in at least one group, in that order."""

    groups_of_node: dict[str, list[NodeGroup]]
    members_of_group: dict[str, list[Node]]
    member_nodes: list[Node]
    index: LabelIndex = field(compare=False, repr=False)

    def groups_for(self, node: Node, groups: Iterable[NodeGroup]) -> list[NodeGroup]:
        """The groups `node` is in, `groups` being the groups this membership was computed for: looked up when
        `node` is one of its nodes, else (a node from elsewhere) matched."""
        if self._node_by_name.get(node.name) is node:
            return self.groups_of_node.get(node.name, [])
        return matching_groups(node.labels, groups)

    @cached_property
    def _node_by_name(self) -> dict[str, Node]:
        return {n.name: n for n in self.index.nodes}


def membership(nodes: Iterable[Node], groups: Iterable[NodeGroup], index: LabelIndex | None = None) -> Membership:
    """The membership of `nodes` in `groups` (KServe's MatchingGroups for every node at once); `index`: the
    label index of these nodes, when one exists."""
    nodes = nodes if isinstance(nodes, (list, tuple)) else list(nodes)
    index = index if index is not None else LabelIndex(nodes)
    of_position: dict[int, list[NodeGroup]] = {}
    members: dict[str, list[Node]] = {}
    for group in sorted(groups, key=lambda g: g.name):
        positions = index.matching(group.node_selector)
        members.setdefault(group.name, []).extend(nodes[i] for i in positions)
        for i in positions:
            hit = of_position.get(i)
            if hit is None:
                of_position[i] = [group]
            else:
                hit.append(group)
    ordered = sorted(of_position)
    return Membership(
        groups_of_node={nodes[i].name: of_position[i] for i in ordered},
        members_of_group=members,
        member_nodes=[nodes[i] for i in ordered],
        index=index,
    )


def label_index_of(snapshot: ClusterSnapshot) -> LabelIndex:
    """The label index of the snapshot's nodes, kept with the snapshot."""
    return snapshot.derived("label-index", lambda: LabelIndex(snapshot.nodes), on=("nodes",))


def membership_of(snapshot: ClusterSnapshot) -> Membership:
    """The snapshot's membership, computed on first use and kept with the snapshot."""
    return snapshot.derived(
        "membership",
        lambda: membership(snapshot.nodes, snapshot.node_groups, label_index_of(snapshot)),
        on=("nodes", "node_groups"),
    )


def member_objects(snapshot: ClusterSnapshot, group: str) -> list[object]:
    """A group's member nodes, then each one's KernelCacheNode (None without one): what a value computed per
    group or per KernelCache reads of the nodes and KernelCacheNodes (`snapshot.model.Reuse`); one list per
    group and snapshot."""

    def make() -> list[object]:
        members = membership_of(snapshot).members_of_group.get(group, [])
        kcns = snapshot.kcn_by_name
        return [*members, *(kcns.get(n.name) for n in members)]

    return snapshot.derived(f"member-objects/{group}", make)


def is_ambiguous(groups_of_node: Iterable[NodeGroup]) -> bool:
    """A node in several groups: a capture from it without a requested group gets AmbiguousNodeGroup."""
    return len(list(groups_of_node)) > 1


@dataclass(frozen=True)
class MembershipPlan:
    missing: tuple[str, ...]  # member nodes without a KernelCacheNode: create
    orphaned: tuple[str, ...]  # KernelCacheNodes whose node is gone or no longer a member: delete
    blocked_by: str = ""  # why KServe would not run this pass at all (empty selector)


def node_pass_blocked_by(groups: Iterable[NodeGroup]) -> str:
    """Why KServe's node reconciler aborts the whole pass (a group with an empty selector), or ""."""
    empty = sorted(g.name for g in groups if not g.node_selector)
    return c.MSG_EMPTY_SELECTOR.format(name=empty[0]) if empty else ""


def plan_memberships(
    nodes: Iterable[Node],
    groups: Iterable[NodeGroup],
    kcns: Iterable[KernelCacheNode],
    members_of: Membership | None = None,
) -> MembershipPlan:
    """`members_of`: the membership of these nodes in these groups, when already computed."""
    groups = list(groups)
    blocked = node_pass_blocked_by(groups)
    if blocked:
        return MembershipPlan((), (), blocked)
    members = set((members_of or membership(nodes, groups)).groups_of_node)
    existing = {k.name for k in kcns}
    return MembershipPlan(missing=tuple(sorted(members - existing)), orphaned=tuple(sorted(existing - members)))
