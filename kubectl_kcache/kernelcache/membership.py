"""KernelCacheNode membership: one KernelCacheNode, named after the node, per node in at least one group.

Readiness is not considered. Nothing happens while the feature is disabled (existing ones are kept).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..objects import KernelCacheNode, Node, NodeGroup
from .selectors import selector_matches


def member_nodes(nodes: Iterable[Node], groups: Iterable[NodeGroup]) -> list[Node]:
    groups = list(groups)
    return [n for n in nodes if any(selector_matches(g.node_selector, n.labels) for g in groups)]


@dataclass(frozen=True)
class MembershipPlan:
    missing: tuple[str, ...]  # member nodes without a KernelCacheNode: create
    orphaned: tuple[str, ...]  # KernelCacheNodes whose node is gone or no longer a member: delete
    blocked_by: str = ""  # why KServe would not run this pass at all (empty selector)


def plan_memberships(
    nodes: Iterable[Node], groups: Iterable[NodeGroup], kcns: Iterable[KernelCacheNode]
) -> MembershipPlan:
    groups = list(groups)
    empty = sorted(g.name for g in groups if not g.node_selector)
    if empty:
        return MembershipPlan((), (), f'KernelCacheNodeGroup "{empty[0]}" requires a non-empty nodeSelector')
    members = {n.name for n in member_nodes(nodes, groups)}
    existing = {k.name for k in kcns}
    return MembershipPlan(missing=tuple(sorted(members - existing)), orphaned=tuple(sorted(existing - members)))
