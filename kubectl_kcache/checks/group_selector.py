"""Every KernelCacheNodeGroup has a non-empty nodeSelector that matches at least one node.

A group with an empty selector (possible only when CRD validation was bypassed) makes KServe's node
reconciler abort every pass with `KernelCacheNodeGroup "<name>" requires a non-empty nodeSelector`:
no KernelCacheNode is created or deleted and the agent DaemonSet is not updated, for all groups. When a
KernelCache references it (its `nodeGroupRef`, or `defaultNodeGroup` for one without), it is worse: every
Ready node's agent fails its whole status pass, so all entries freeze cluster-wide, and the KernelCache
reconciler fails for that group's KernelCaches without writing status (`cache-status` says so).
A group that matches no node (warning) gets no KernelCacheNodes and its KernelCaches stay
`Pending/NoMatchingNodes`. Membership is pure label equality; near misses (nodes with some of the
labels, or with every key but another value) are listed with the labels they lack and the wanted value,
and the hint labels the closest node.
"""

from __future__ import annotations

from collections.abc import Iterator

from .. import objects as o
from ..kernelcache import constants as c
from ..kernelcache.selectors import LabelMismatch, label_mismatch, near_misses
from ..snapshot import plan as readplan
from ..snapshot.model import ClusterSnapshot
from ..suggest import Json, Labels, Name, Selector, kubectl
from ..text import PLACEHOLDER_LABEL, PLACEHOLDER_VALUE
from .common import facts, fmt_selector, group_ref, join_names, selector_arg, show_group_command
from .model import CheckRead, Finding, NotApplicable, finding_of
from .registry import check

ID = "group-selector"
finding = finding_of(ID)
SHOWN = 5


def describe_mismatch(node: str, mm: LabelMismatch) -> str:
    parts = [f"lacks {k}={v}" for k, v in mm.missing.items()]
    parts += [f"has {k}={have} (wants {want})" for k, (want, have) in mm.different.items()]
    return f"{node} {', '.join(parts)}"


def label_hint(group: o.NodeGroup, node: str, mm: LabelMismatch) -> str:
    """`kubectl label node` with the labels the node lacks; the group itself when a label is one no node can
    carry (Kubernetes refuses such a key or value, and one like `--overwrite` would be read as a flag: valid
    keys, values and node names never start with `-`)."""
    labels = Labels.of(mm.wanted)
    if labels.problem() is not None:
        return show_group_command(group.name)
    if mm.different:
        return kubectl("label node {node} {labels} --overwrite", node=Name("node", node), labels=labels)
    return kubectl("label node {node} {labels}", node=Name("node", node), labels=labels)


@check(
    ID,
    "node groups have a selector that matches nodes",
    "error",
    order=40,
    needs_feature=True,
    codes={
        "empty-selector": ("error", "a group with an empty nodeSelector: KServe's node pass aborts for every group"),
        "no-match": ("warning", "a group whose selector matches no node (near misses listed)"),
    },
    reads=(
        CheckRead(readplan.NODE_GROUPS),
        CheckRead(readplan.NODES),
        CheckRead(readplan.KERNEL_CACHES, optional=True, note="the KernelCaches using a group not named"),
    ),
)
def run(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    if not snapshot.node_groups:
        raise NotApplicable("no KernelCacheNodeGroup exists (create one to choose the nodes that prepare caches)")
    f = facts(snapshot)
    members = f.members_of_group
    default = f.config.default_node_group
    for group in snapshot.node_groups:
        if not group.node_selector:
            users = sorted(
                f"{k.namespace}/{k.name}" for k in snapshot.kernel_caches if (k.node_group or default) == group.name
            )
            failed = c.MSG_EMPTY_SELECTOR.format(name=group.name)
            agents = (
                f"; KernelCaches reference it ({join_names(users, 5)}), so every Ready node's agent fails its "
                f'status pass ("discover KernelCaches for node ...: {failed}"): all KernelCacheNode entries '
                "freeze cluster-wide, and KServe's KernelCache reconciler fails for those KernelCaches without "
                "writing status"
                if users
                else ""
            )
            yield finding(
                "error",
                group_ref(group.name),
                f"{failed}: KServe's node reconciler aborts every "
                "pass on this, so no KernelCacheNode is created or deleted and the agent DaemonSet is not "
                f"updated for any group{agents}",
                group=group.name,
                hint=kubectl(
                    "patch kernelcachenodegroup {group} --type=merge -p {body}",
                    group=Name("kernelcachenodegroup", group.name),
                    body=Json({"spec": {"nodeSelector": {PLACEHOLDER_LABEL: PLACEHOLDER_VALUE}}}),
                ),
                code="empty-selector",
            )
            continue
        if members[group.name]:
            continue
        yield _no_match(snapshot, group)


def _no_match(snapshot: ClusterSnapshot, group: o.NodeGroup) -> Finding:
    index = facts(snapshot).membership.index
    near = near_misses(group, index)
    near_names = {n.name for n, _ in near}
    for i in index.with_keys(group.node_selector):  # every key, other values: as near as it gets for one label
        node = index.nodes[i]
        mm = label_mismatch(group.node_selector, node.labels)
        if node.name not in near_names and not mm.missing and mm.different:
            near.append((node, mm))
    near.sort(key=lambda x: (x[1].count, x[0].name))
    selector = fmt_selector(group.node_selector)
    message = (
        f"KernelCacheNodeGroup {group.name} matches no node (nodeSelector {selector}): its KernelCaches stay "
        "Pending/NoMatchingNodes"
    )
    evidence = [f"nodeSelector: {selector}"]
    if near:
        shown = [describe_mismatch(n.name, mm) for n, mm in near[:SHOWN]]
        more = f" and {len(near) - SHOWN} more" if len(near) > SHOWN else ""
        message += f"; near miss{'es' if len(shown) > 1 else ''}: {'; '.join(shown)}{more}"
        evidence += [f"near miss: {s}" for s in shown]
        hint = label_hint(group, near[0][0].name, near[0][1])
    elif selector_arg(group.node_selector) is None:
        hint = show_group_command(group.name)
    else:
        hint = kubectl("get nodes -L {keys}", keys=Selector.has(*sorted(group.node_selector)))
    return finding(
        "warning",
        group_ref(group.name),
        message,
        group=group.name,
        hint=hint,
        evidence=tuple(evidence),
        code="no-match",
    )
