"""Taints on member nodes that the preparation Jobs or the agent do not tolerate.

Preparation Job pods are pinned to their node and carry the group's `spec.tolerations` and nothing else:
a NoSchedule or NoExecute taint those do not tolerate keeps the Job Pending (error, per node and group),
so the node's cache entry never leaves Pending/Pulling. The agent pods carry the DaemonSet template's
tolerations (which KServe sets to the union of all groups' tolerations) plus the ones the DaemonSet
controller adds itself (not-ready, unreachable, disk/memory/pid-pressure, unschedulable): a taint not
tolerated by those means no agent on the node (error, per node), so nothing reports its cache status.

Warnings: PreferNoSchedule taints the group does not tolerate (a soft preference; the Job is pinned to
the node, but say so explicitly), and NoExecute taints tolerated only for `tolerationSeconds` (the pods
are evicted after that). The node-condition taints `node.kubernetes.io/*` (not-ready, cordoned, ...)
are left to the `nodes` check. The hint is the JSON patch adding the toleration to the group.
"""

from __future__ import annotations

from collections.abc import Iterator

from .. import objects as o
from ..kernelcache import constants as c
from ..kernelcache.placement import agent_tolerations, rejected_tolerations
from ..kernelcache.taints import PREFER_NO_SCHEDULE, TaintJoin, daemon_pod_tolerations
from ..snapshot import plan as readplan
from ..snapshot.model import ClusterSnapshot
from ..suggest import Name, kubectl
from .common import (
    RECONCILE,
    add_tolerations_hint,
    facts,
    group_ref,
    judged_each,
    node_ref,
    nodes_command,
    read_ok,
)
from .model import CheckRead, Finding, NotApplicable, finding_of
from .registry import check

ID = "group-taints"
finding = finding_of(ID)
CONDITION_TAINTS = frozenset(
    f"node.kubernetes.io/{k}"
    for k in (
        "not-ready",
        "unreachable",
        "unschedulable",
        "memory-pressure",
        "disk-pressure",
        "pid-pressure",
        "network-unavailable",
    )
)
DS = f"DaemonSet {c.KSERVE_NAMESPACE}/{c.AGENT_DAEMONSET}"


def _invalid_tolerations(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    """Tolerations the CRD accepts and Kubernetes rejects (the same rule reconcile refuses with)."""
    rejected = rejected_tolerations(snapshot.node_groups)
    for group, problem in rejected.problems:
        yield finding(
            "error",
            group_ref(group),
            f'KernelCacheNodeGroup "{group}" {problem}: Kubernetes rejects this toleration, so KServe\'s '
            "node pass fails at the agent DaemonSet patch on every attempt (no KernelCacheNode is created or "
            f"deleted for any group) and every preparation Job of {group} fails (its KernelCaches go to "
            "Error/StorageError)",
            group=group,
            hint=kubectl("edit kernelcachenodegroup {group}", group=Name("kernelcachenodegroup", group)),
            evidence=(f"the API server would answer: {rejected.api_text}",),
            code="invalid-toleration",
        )


def _relevant(taints: list[o.Taint]) -> list[o.Taint]:
    return [t for t in taints if t.key not in CONDITION_TAINTS]


def _listed(taints: list[o.Taint]) -> str:
    """`taint k=v:NoSchedule` / `taints a:NoSchedule, b:NoExecute`."""
    return ("taint " if len(taints) == 1 else "taints ") + ", ".join(str(t) for t in taints)


def _taints(taints: list[o.Taint]) -> str:
    """`taint k=v:NoSchedule is` / `taints a:NoSchedule, b:NoExecute are`."""
    listed = ", ".join(str(t) for t in taints)
    return f"taint {listed} is" if len(taints) == 1 else f"taints {listed} are"


@check(
    ID,
    "member nodes' taints tolerated by preparation Jobs and the agent",
    "error",
    order=60,
    needs_feature=True,
    codes={
        "invalid-toleration": ("error", "a group toleration Kubernetes rejects (the CRD accepts it)"),
        "blocks-jobs": ("error", "a NoSchedule/NoExecute taint the group's tolerations do not tolerate"),
        "prefer-no-schedule": ("warning", "a PreferNoSchedule taint the group does not tolerate"),
        "evicts-jobs": ("warning", "a NoExecute taint the group tolerates only for tolerationSeconds"),
        "blocks-agent": ("error", "a taint the agent DaemonSet's pods do not tolerate"),
        "evicts-agent": ("warning", "a NoExecute taint the agent tolerates only for tolerationSeconds"),
    },
    reads=(
        CheckRead(readplan.NODE_GROUPS),
        CheckRead(readplan.NODES),
        CheckRead(readplan.AGENT_DAEMONSET, optional=True, note="agent tolerations not checked"),
    ),
)
def run(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    f = facts(snapshot)
    invalid = list(_invalid_tolerations(snapshot))
    if not f.member_nodes and not invalid:
        raise NotApplicable("no node is a member of a KernelCacheNodeGroup")
    yield from invalid
    if not f.member_nodes:
        return
    ds = f.agent_daemonset if read_ok(snapshot, readplan.AGENT_DAEMONSET) else None
    tolerations = ds.tolerations if ds is not None else None
    desired = TaintJoin(daemon_pod_tolerations(agent_tolerations(snapshot.node_groups)))
    agent = TaintJoin(daemon_pod_tolerations(tolerations)) if tolerations is not None else None
    jobs: dict[str, TaintJoin] = {}  # group name -> its tolerations against each distinct set of taints
    groups_of_node = f.groups_of_node

    def judge(node: o.Node) -> list[Finding]:
        found: list[Finding] = []
        groups = groups_of_node[node.name]
        for group in groups:
            join = jobs.get(group.name)
            if join is None:
                join = jobs[group.name] = TaintJoin(group.tolerations)
            found += _job(node, group, join)
        if agent is not None:
            found += _agent(node, groups[0], agent, desired)
        return found

    # a node's findings read the node, its groups and the agent's tolerations: judged again when one of those changed
    yield from judged_each(snapshot, ID, f.member_nodes, judge, on=("node_groups",), context=tolerations)


def _job(node: o.Node, group: o.NodeGroup, join: TaintJoin) -> Iterator[Finding]:
    ref = node_ref(node.name)
    blocking = _relevant(join.untolerated(node))
    if blocking:
        yield finding(
            "error",
            ref,
            f"preparation Jobs cannot run on {node.name}: node group {group.name} does not tolerate "
            f"{_listed(blocking)}, so the node's cache entries stay Pending/Pulling",
            group=group.name,
            hint=add_tolerations_hint(group, blocking),
            evidence=tuple(f"untolerated taint: {t}" for t in blocking),
            code="blocks-jobs",
            cause=f"{_taints(blocking)} not tolerated by preparation Jobs of {group.name}",
            lister=nodes_command(group, columns="taints"),
        )
    soft = _relevant(join.untolerated(node, effects=(PREFER_NO_SCHEDULE,)))
    if soft:
        yield finding(
            "warning",
            ref,
            f"on {node.name}, {_taints(soft)} not tolerated by KernelCacheNodeGroup {group.name}: "
            "the scheduler avoids the node for preparation Jobs when it can (they are pinned to it, so "
            "they still run); tolerate it to say so",
            group=group.name,
            hint=add_tolerations_hint(group, soft),
            evidence=tuple(f"untolerated taint: {t}" for t in soft),
            code="prefer-no-schedule",
            cause=f"{_taints(soft)} not tolerated by {group.name}",
            lister=nodes_command(group, columns="taints"),
        )
    by = f"KernelCacheNodeGroup {group.name}"
    yield from _evicted(node, group, join, "evicts-jobs", ("preparation Job pods are", by, group.name))


def _agent(node: o.Node, group: o.NodeGroup, agent: TaintJoin, desired: TaintJoin) -> Iterator[Finding]:
    """`agent`: the agent DaemonSet's pods' tolerations; `desired`: those the node groups imply."""
    ref = node_ref(node.name)
    blocking = _relevant(agent.untolerated(node))
    if blocking:
        missing = _relevant(desired.untolerated(node))
        stale = not missing
        if stale:  # the groups tolerate them: KServe has not written their union into the DaemonSet yet
            why = "the DaemonSet's tolerations are stale"
            text = (
                f"the node groups tolerate {_listed(blocking)}, but KServe's controller has not updated the "
                "agent's DaemonSet"
            )
            hint = RECONCILE
        else:
            why = "no node group tolerates it"
            text = f"no node group tolerates {_listed(missing)}, so neither does the agent"  # it gets their union
            hint = add_tolerations_hint(group, blocking)
        yield finding(
            "error",
            ref,
            f"no agent can run on {node.name}: {text}; nothing reports the node's cache status",
            group=group.name,
            hint=hint,
            evidence=tuple(f"untolerated taint: {t}" for t in blocking),
            code="blocks-agent",
            cause=f"{_taints(blocking)} not tolerated by the agent ({why})",
            lister=nodes_command(group, columns="taints"),
        )
    yield from _evicted(node, group, agent, "evicts-agent", ("the agent is", DS, "the agent"))


def _evicted(
    node: o.Node, group: o.NodeGroup, join: TaintJoin, code: str, words: tuple[str, str, str]
) -> Iterator[Finding]:
    """NoExecute taints `join` tolerates only for tolerationSeconds; `words`: who is evicted, who tolerates the
    taint, and that in short (the group's preparation Jobs, or the agent)."""
    who, by, short = words
    for taint, seconds in join.evicting(node):
        if taint.key in CONDITION_TAINTS:
            continue
        yield finding(
            "warning",
            node_ref(node.name),
            f"{who} evicted from {node.name} after {seconds}s: taint {taint} is tolerated by {by} only with "
            "tolerationSeconds",
            group=group.name,
            hint=kubectl("edit kernelcachenodegroup {group}", group=Name("kernelcachenodegroup", group.name)),
            evidence=(f"taint: {taint}", f"tolerationSeconds: {seconds}"),
            code=code,
            cause=f"taint {taint} tolerated by {short} for {seconds}s",
            lister=nodes_command(group, columns="taints"),
        )
