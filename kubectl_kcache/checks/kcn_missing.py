"""Member nodes without a KernelCacheNode.

KServe's node reconciler creates a KernelCacheNode, named exactly after the node, for every node that
matches at least one group's selector (readiness is not considered). The node's agent only writes the
status of that object, so without it nothing reports the node's caches and KernelCaches of its groups
wait (`Pending/WaitingForPreparation` or `Preparing`). A lasting gap means KServe's controller is not
doing its pass: it is not running, a group has an empty selector (then it creates none at all), or the
agent DaemonSet is missing (the pass fails before KernelCacheNodes are touched). The plan is the same
function `kubectl kcache reconcile` uses to create them.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..kernelcache import constants as c
from ..snapshot import plan as readplan
from ..snapshot.model import ClusterSnapshot
from ..suggest import kubectl
from .common import NODE_PASS_TRIGGERS, facts, node_ref, read_ok, touch_group_hint
from .model import CheckRead, Finding, NotApplicable, finding_of
from .registry import check

ID = "kcn-missing"
finding = finding_of(ID)


@check(
    ID,
    "every member node has a KernelCacheNode",
    "error",
    order=80,
    needs_feature=True,
    codes={
        "missing": ("error", "a member node without a KernelCacheNode"),
    },
    reads=(
        CheckRead(readplan.NODE_GROUPS),
        CheckRead(readplan.NODES),
        CheckRead(readplan.KERNEL_CACHE_NODES),
        CheckRead(readplan.AGENT_DAEMONSET, optional=True, note="agent DaemonSet presence not considered"),
    ),
)
def run(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    if not snapshot.node_groups:
        raise NotApplicable("no KernelCacheNodeGroup exists")
    plan = facts(snapshot).membership_plan
    if plan.blocked_by:
        raise NotApplicable(
            f"KServe would not create any KernelCacheNode: its node reconciler aborts because "
            f"{plan.blocked_by} (see group-selector)"
        )
    f = facts(snapshot)
    evidence: tuple[str, ...] = ()
    if read_ok(snapshot, readplan.AGENT_DAEMONSET) and f.agent_daemonset is None:
        evidence = (
            f"DaemonSet {c.KSERVE_NAMESPACE}/{c.AGENT_DAEMONSET} is missing: KServe's node reconciler "
            "fails before it creates KernelCacheNodes (see agent)",
        )
    for name in plan.missing:
        group = f.first_group(name)
        groups = ", ".join(g.name for g in f.groups_of_node.get(name, []))
        yield finding(
            "error",
            node_ref(name),
            f"Node {name} is a member of {groups} but has no KernelCacheNode: its agent has nowhere to "
            "report cache status, so KernelCaches of the group are never Ready there. "
            f"{NODE_PASS_TRIGGERS}",
            group=group,
            hint=touch_group_hint(group),
            evidence=evidence,
            code="missing",
            shared=(NODE_PASS_TRIGGERS,),
            cause="member nodes without a KernelCacheNode",
            lister=kubectl("get kernelcachenodes"),
        )
