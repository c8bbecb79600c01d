"""KernelCacheNodes whose node is gone or no longer a member of any KernelCacheNodeGroup.

KServe's node reconciler deletes a KernelCacheNode whose name is not a member node (node deleted, label
removed, group deleted or its selector changed) on its next pass; one that lingers means that pass is not
happening (controller not running, empty group selector, agent DaemonSet missing). The webhook lists all
KernelCacheNodes, so a stale one's Ready entries can still make a KernelCache look prepared. Same plan as
`kubectl kcache reconcile`, which deletes them.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..kernelcache import constants as c
from ..snapshot import plan as readplan
from ..snapshot.model import ClusterSnapshot
from ..suggest import kubectl
from .common import NODE_PASS_TRIGGERS, facts, touch_group_hint
from .model import CheckRead, Finding, NotApplicable, ObjectRef, finding_of
from .registry import check

ID = "kcn-orphaned"
finding = finding_of(ID)


@check(
    ID,
    "no KernelCacheNode without a member node",
    "warning",
    order=90,
    needs_feature=True,
    codes={
        "orphaned": ("warning", "a KernelCacheNode whose node is gone or no longer a member"),
    },
    reads=(
        CheckRead(readplan.NODE_GROUPS),
        CheckRead(readplan.NODES),
        CheckRead(readplan.KERNEL_CACHE_NODES),
    ),
)
def run(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    if not snapshot.kcns:
        raise NotApplicable("no KernelCacheNode exists")
    plan = facts(snapshot).membership_plan
    if plan.blocked_by:
        raise NotApplicable(
            f"KServe would not delete any KernelCacheNode: its node reconciler aborts because "
            f"{plan.blocked_by} (see group-selector)"
        )
    kcns = snapshot.kcn_by_name
    for name in plan.orphaned:
        why = (
            "Node {name} no longer exists"
            if name not in snapshot.node_by_name
            else "Node {name} matches no KernelCacheNodeGroup"
        ).format(name=name)
        ready = [e.key for e in kcns[name].entries if e.state == c.ENTRY_READY]
        its = why.replace(f"Node {name}", "its Node")  # a KernelCacheNode is named after its node
        message = f"KernelCacheNode {name} is orphaned: {its}; KServe deletes it on its next node pass"
        if ready:
            entries = "1 Ready entry" if len(ready) == 1 else f"{len(ready)} Ready entries"
            message += f" (until then the pod webhook may count its {entries})"
        message += f". {NODE_PASS_TRIGGERS}"
        first_group = min((g.name for g in snapshot.node_groups), default=None)
        yield finding(
            "warning",
            ObjectRef(c.KIND_NODE, name),
            message,
            hint=touch_group_hint(first_group),
            evidence=tuple(f"Ready entry: {k}" for k in ready),
            code="orphaned",
            shared=(NODE_PASS_TRIGGERS,),
            cause=why.replace(f"Node {name}", "the Node"),
            lister=kubectl("get kernelcachenodes"),
        )
