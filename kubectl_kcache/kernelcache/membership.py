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

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, partial
from itertools import compress
from operator import attrgetter, is_not
from typing import TYPE_CHECKING

import msgspec

from ..objects import KernelCacheNode, Node, NodeGroup
from ..sharing import changed
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
    """The snapshot's membership, computed on first use and kept with the snapshot; over the next snapshot of a
    kept-current view (the monitor) whose groups are the same and whose nodes were only modified, each in the
    same groups as before, the last one's with those nodes replaced (`replaced_nodes`)."""

    def make() -> Membership:
        stale = snapshot.stale_derived("membership")
        if stale is not None and stale[1]["node_groups"] is snapshot.node_groups:
            made = replaced_nodes(
                stale[0], stale[1]["nodes"], snapshot.nodes, snapshot.node_groups, label_index_of(snapshot)
            )
            if made is not None:
                return made
        return membership(snapshot.nodes, snapshot.node_groups, label_index_of(snapshot))

    return snapshot.derived("membership", make, on=("nodes", "node_groups"), updatable=True)


def replaced_nodes(
    was: Membership, before: Sequence[Node], nodes: Sequence[Node], groups: Iterable[NodeGroup], index: LabelIndex
) -> Membership | None:
    """`was` (the membership of `before` in `groups`) for `nodes`, when `nodes` is `before` with a few nodes replaced
    by nodes of the same name in the very same groups (a node's status, or a label no selector reads, changed);
    None otherwise. The member lists without a replaced node are the very same lists."""
    if len(before) != len(nodes):
        return None
    moved = list(compress(range(len(nodes)), map(is_not, before, nodes)))  # the places holding another node
    if len(moved) * 10 > len(nodes):
        return None
    groups = list(groups)
    members, member_nodes = dict(was.members_of_group), list(was.member_nodes)
    copied: set[str] = set()
    for old, new in ((before[i], nodes[i]) for i in moved):
        mine = was.groups_of_node.get(old.name, [])
        if new.name != old.name or matching_groups(new.labels, groups) != mine:
            return None
        for listed in (member_nodes, *(members[g.name] for g in mine)):
            at = bisect_left(listed, old.name, key=_name)  # (in the nodes' order: by name)
            if at == len(listed) or listed[at] is not old:
                return None
        if mine:
            member_nodes[bisect_left(member_nodes, old.name, key=_name)] = new
        for g in mine:
            if g.name not in copied:  # (the last membership's list is left as it was)
                copied.add(g.name)
                members[g.name] = list(members[g.name])
            listed = members[g.name]
            listed[bisect_left(listed, old.name, key=_name)] = new
    return Membership(was.groups_of_node, members, member_nodes, index)


_name = attrgetter("name")


def member_objects(snapshot: ClusterSnapshot, group: str) -> list[object]:
    """A group's member nodes, then each one's KernelCacheNode (None without one): what a value computed per
    group or per KernelCache reads of the nodes and KernelCacheNodes (`snapshot.model.Reuse`); one list per
    group and snapshot, the very same list over the next snapshot of a kept-current view while the group's
    member list and the KernelCacheNodes are the same."""
    kept: dict[str, tuple[list[Node], list[object]]] = snapshot.derived(
        "member-objects", partial(_kept_member_objects, snapshot), on=("kcns",), updatable=True
    )
    members = membership_of(snapshot).members_of_group.get(group, [])
    hit = kept.get(group)
    if hit is None or hit[0] is not members:
        kcns = snapshot.kcn_by_name
        hit = kept[group] = (members, [*members, *(kcns.get(n.name) for n in members)])
    return hit[1]


def _kept_member_objects(snapshot: ClusterSnapshot) -> dict[str, tuple[list[Node], list[object]]]:
    """The last snapshot's member objects but those of the groups of the KernelCacheNodes that changed."""
    stale = snapshot.stale_derived("member-objects")
    if stale is None:
        return {}
    gone, came = changed(stale[1]["kcns"], snapshot.kcns)
    groups_of_node = membership_of(snapshot).groups_of_node
    kept = dict(stale[0])
    for kcn in (*gone, *came):
        for group in groups_of_node.get(kcn.name, ()):
            kept.pop(group.name, None)
    return kept


def is_ambiguous(groups_of_node: Iterable[NodeGroup]) -> bool:
    """A node in several groups: a capture from it without a requested group gets AmbiguousNodeGroup."""
    return len(list(groups_of_node)) > 1


class MembershipPlan(msgspec.Struct, frozen=True):
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
