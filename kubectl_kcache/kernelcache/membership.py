"""Node-group membership and KernelCacheNode membership.

A node is in a group when it carries every selector label with that value (KServe's MatchingGroups; an
empty selector therefore matches every node, which the CRD forbids and the node reconciler refuses).
One KernelCacheNode, named after the node, exists per node in at least one group. Readiness is not
considered. Nothing happens while the feature is disabled (existing ones are kept).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..objects import KernelCacheNode, Node, NodeGroup
from . import constants as c
from .selectors import matching_groups


def groups_by_node(nodes: Iterable[Node], groups: Iterable[NodeGroup]) -> dict[str, list[NodeGroup]]:
    """Node name -> the groups it is in, sorted by name as KServe sorts them; nodes in no group are left out."""
    groups = list(groups)
    out: dict[str, list[NodeGroup]] = {}
    for node in nodes:
        found = matching_groups(node.labels, groups)
        if found:
            out[node.name] = found
    return out


def member_nodes(nodes: Iterable[Node], groups: Iterable[NodeGroup]) -> list[Node]:
    nodes = list(nodes)
    index = groups_by_node(nodes, groups)
    return [n for n in nodes if n.name in index]


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
    nodes: Iterable[Node], groups: Iterable[NodeGroup], kcns: Iterable[KernelCacheNode]
) -> MembershipPlan:
    groups = list(groups)
    blocked = node_pass_blocked_by(groups)
    if blocked:
        return MembershipPlan((), (), blocked)
    members = {n.name for n in member_nodes(nodes, groups)}
    existing = {k.name for k in kcns}
    return MembershipPlan(missing=tuple(sorted(members - existing)), orphaned=tuple(sorted(existing - members)))
