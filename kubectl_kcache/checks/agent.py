"""The node agent: DaemonSet `kserve/kserve-kernelcachenode-agent` and its pods on member nodes.

* Missing DaemonSet (error): KServe's node reconciler fails ("get KernelCacheNode agent DaemonSet: ...")
  before it creates or deletes any KernelCacheNode, and no node reports cache status.
* Placement (error): KServe keeps the pod template's nodeSelector empty, its required node affinity at
  one term per group and its tolerations at the union of the groups' tolerations, in Go's JSON order.
  A difference means KServe's controller has not done its pass (the same comparison KServe makes).
* Rollout (warning; error when no pod is wanted although member nodes exist): ready and updated pods
  against the desired number, pods on nodes outside the placement, a generation not yet observed.
* Per Ready member node, a Running and Ready agent pod (error when absent), with why: no pod (a taint
  it does not tolerate, a placement that does not select the node, or the DaemonSet controller has not
  made one), the container's waiting reason and message (CrashLoopBackOff, ImagePullBackOff, ...), a
  failed or not-ready pod. Needs the agent pods (label control-plane=kserve-kernelcachenode-agent in
  kserve); NotReady nodes are left to the `nodes` check.
* The agents' Warning events on their KernelCacheNodes (warning; reasons ConfigError, ReconcileError,
  ImageValidationError, reporting controller `kernelcachenode-agent`, in namespace `default` since
  KernelCacheNodes are cluster-scoped): the agent's status pass on that node fails with the event's note, so
  its entries are not updated. One finding per node and message, newest first, folded by message across
  nodes. Events expire (an hour by default) and a later pass that succeeds records none: the event says the
  pass failed then, the agent's log says whether it still does. Their absence proves nothing (whether the
  agent's role may create events is not known).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping
from typing import Any

from .. import objects as o
from ..kernelcache import constants as c
from ..kernelcache.agent_events import is_agent_warning
from ..kernelcache.placement import placement_changes, placement_diff
from ..kernelcache.taints import daemon_pod_tolerations, untolerated_taints
from ..snapshot import plan as readplan
from ..snapshot.model import ClusterSnapshot
from ..suggest import Name, Namespace, kubectl
from .common import (
    NODE_PASS_TRIGGERS,
    RECONCILE,
    facts,
    judged_each,
    parse_time,
    pod_logs,
    read_ok,
    rfc3339,
    touch_group_hint,
)
from .model import CheckRead, Finding, ObjectRef, finding_of
from .registry import check

ID = "agent"
finding = finding_of(ID)
NS = c.KSERVE_NAMESPACE
DS_NAME = f"DaemonSet {NS}/{c.AGENT_DAEMONSET}"
DS_REF = ObjectRef("DaemonSet", c.AGENT_DAEMONSET, NS)
DESCRIBE_DS = f"kubectl -n {NS} describe daemonset {c.AGENT_DAEMONSET}"
AGENT_PODS = kubectl("-n {ns} get pods -l control-plane=kserve-kernelcachenode-agent -o wide", ns=Namespace(NS))


@check(
    ID,
    "agent DaemonSet placed, rolled out and running on member nodes",
    "error",
    order=100,
    needs_feature=True,
    codes={
        "missing": ("error", "the agent DaemonSet does not exist"),
        "placement-stale": ("error", "the DaemonSet's placement differs from what the node groups imply"),
        "rollout": ("warning", "the DaemonSet's rollout is not healthy (error when it wants no pod at all)"),
        "no-pod": ("error", "a Ready member node without an agent pod"),
        "pod-failed": ("error", "an agent pod that is Failed, waiting, not Ready or Pending"),
        "pass-failing": ("warning", "the agent reports a failed status pass on its KernelCacheNode (Warning event)"),
    },
    reads=(
        CheckRead(readplan.AGENT_DAEMONSET),
        CheckRead(readplan.NODE_GROUPS),
        CheckRead(readplan.NODES),
        CheckRead(readplan.AGENT_PODS, optional=True, note="agent pods per member node not checked"),
        CheckRead(readplan.AGENT_WARNINGS, optional=True, note="the agents' Warning events not checked"),
    ),
)
def run(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    f = facts(snapshot)
    ds = f.agent_daemonset
    if ds is None:
        yield finding(
            "error",
            DS_REF,
            f"{DS_NAME} is missing: KServe's node reconciler fails (\"get KernelCacheNode agent DaemonSet: "
            '...") before it creates or deletes any KernelCacheNode, and no node reports cache status',
            hint=f"kubectl -n {NS} get daemonsets  # reinstall KServe's LocalModel resources",
            code="missing",
        )
        return
    groups = list(snapshot.node_groups)
    diff = None
    empty = sorted(g.name for g in groups if not g.node_selector)
    if not empty:
        diff = placement_diff(ds, groups)
        if diff:
            yield finding(
                "error",
                DS_REF,
                f"{DS_NAME} placement differs from what the node groups imply: {'; '.join(diff.describe())}, "
                f"so agent pods run on the wrong nodes. {NODE_PASS_TRIGGERS}",
                hint=touch_group_hint(min((g.name for g in groups), default=None)),
                evidence=tuple(placement_changes(ds, groups)),
                code="placement-stale",
                shared=(NODE_PASS_TRIGGERS,),
            )
    yield from _rollout(ds, len(f.member_nodes))
    if read_ok(snapshot, readplan.AGENT_WARNINGS):
        yield from _pass_failing(snapshot)
    if not read_ok(snapshot, readplan.AGENT_PODS):
        return
    pods = f.agent_pods_by_node
    unscheduled = [p for p in pods.get("", []) if not p.meta.deleting]
    groups_of_node = f.groups_of_node

    def judge(node: o.Node) -> list[Finding]:
        if node.ready is not True:
            return []
        group = groups_of_node[node.name][0].name
        mine = [p for p in pods.get(node.name, []) if not p.meta.deleting]
        if any(p.phase == "Running" and p.ready for p in mine):
            return []
        if mine:
            return [_pod_problem(node, mine, group)]
        return [_no_pod(node, ds, bool(diff), unscheduled, group)]

    # a node's findings read the node, its agent pods, its first group and the DaemonSet's placement: judged
    # again when one of those changed
    placement = (ds.tolerations, ds.node_selector, ds.affinity, bool(diff), unscheduled)
    yield from judged_each(
        snapshot,
        ID,
        f.member_nodes,
        judge,
        on=("node_groups",),
        context=placement,
        same=lambda node: (node, *pods.get(node.name, ())),
    )


EVENTS_LISTER = kubectl(
    "-n {ns} get events --field-selector involvedObject.kind=KernelCacheNode,type=Warning",
    ns=Namespace(c.AGENT_EVENTS_NAMESPACE),
)


def _pass_failing(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    """The agents' Warning events on their KernelCacheNodes, one finding per node and message, newest first."""
    f = facts(snapshot)
    mine = [e for e in snapshot.events if is_agent_warning(e)]
    seen: dict[tuple[str, str], list[o.Event]] = {}
    oldest = dt.datetime.min.replace(tzinfo=dt.timezone.utc)
    for e in sorted(mine, key=lambda e: parse_time(e.last_seen) or oldest, reverse=True):
        seen.setdefault((e.involved_name, e.message), []).append(e)
    for (node, message), events in seen.items():
        newest = events[0]
        at = parse_time(newest.last_seen)
        when = f", last at {rfc3339(at)}" if at is not None else ""
        count = sum(e.count for e in events)
        pods = [p for p in f.agent_pods_by_node.get(node, []) if not p.meta.deleting]
        hint = (
            pod_logs(NS, pods[0].name, c.AGENT_CONTAINER)
            if pods
            else kubectl(
                "-n {ns} get events --field-selector "
                "involvedObject.kind=KernelCacheNode,involvedObject.name={kcn},type=Warning",
                ns=Namespace(c.AGENT_EVENTS_NAMESPACE),
                kcn=Name("kernelcachenode", node),
            )
        )
        yield finding(
            "warning",
            ObjectRef(c.KIND_NODE, node),
            f"the node agent reports {newest.reason} on KernelCacheNode {node} ({count} time"
            f"{'s' if count != 1 else ''}{when}): {message or 'no message'}: its status pass on the node fails, "
            "so the node's cache entries are not updated (events expire; the agent's log says whether it still "
            "fails)",
            hint=hint,
            code="pass-failing",
            cause=f"node agents report {newest.reason}: {message.replace(node, '<node>') if node else message}",
            lister=EVENTS_LISTER,
        )


def _rollout(ds: o.DaemonSet, members: int) -> Iterator[Finding]:
    if not ds.observed_generation:
        return  # no status reported yet (or the object came without one)
    issues = []
    severity = "warning"
    if ds.desired == 0 and members:
        severity = "error"
        issues.append(
            f"it wants no pod (desiredNumberScheduled 0) although {members} member nodes exist: its "
            "placement selects none of them, or taints keep it off"
        )
    else:
        if ds.ready < ds.desired:
            issues.append(f"{ds.ready}/{ds.desired} pods ready")
        if ds.updated < ds.desired:
            issues.append(f"{ds.updated}/{ds.desired} pods updated (rollout in progress or stuck)")
    if ds.misscheduled:
        issues.append(f"{ds.misscheduled} pods run on nodes outside its placement")
    if ds.observed_generation and ds.observed_generation < ds.meta.generation:
        issues.append(f"generation {ds.meta.generation} not yet observed (observedGeneration {ds.observed_generation})")
    if issues:
        yield finding(
            severity,
            DS_REF,
            f"{DS_NAME} rollout is not healthy: {'; '.join(issues)}",
            hint=DESCRIBE_DS,
            evidence=(
                f"desired {ds.desired}, current {ds.current}, ready {ds.ready}, updated "
                f"{ds.updated}, available {ds.available}, misscheduled {ds.misscheduled}",
            ),
            code="rollout",
        )


def _no_pod(node: o.Node, ds: o.DaemonSet, stale: bool, unscheduled: list[o.Pod], group: str | None) -> Finding:
    taints = untolerated_taints(node, daemon_pod_tolerations(ds.tolerations))
    evidence: list[str] = []
    hint = DESCRIBE_DS
    if taints:
        why = (
            f"taint {', '.join(str(t) for t in taints)} is not tolerated by the DaemonSet's tolerations (see "
            "group-taints)"
        )
    elif not node_in_placement(ds, node):
        why = "the DaemonSet's nodeSelector and required node affinity do not select this node"
        if stale:
            why += " (its placement is stale, see above)"
            hint = RECONCILE
    else:
        why = "the DaemonSet controller has not created one"
        if unscheduled:
            why += f"; {len(unscheduled)} agent pods are Pending without a node"
            for p in unscheduled[:3]:
                detail = ": ".join(x for x in (p.scheduled_reason, p.scheduled_message) if x)
                evidence.append(f"pod {p.name}: {detail or p.phase or 'Pending'}")
    return finding(
        "error",
        ObjectRef("Node", node.name),
        f"no agent pod on {node.name}: {why}; nothing reports the node's cache status",
        group=group,
        hint=hint,
        evidence=tuple(evidence),
        code="no-pod",
        cause=f"no agent pod: {why}",
        lister=AGENT_PODS,
    )


def _pod_problem(node: o.Node, pods: list[o.Pod], group: str | None) -> Finding:
    pod = pods[0]
    ref = ObjectRef("Pod", pod.name, NS)
    describe = kubectl("-n {ns} describe pod {pod}", ns=Namespace(NS), pod=Name("pod", pod.name))
    waiting = next((cs for cs in pod.containers if cs.waiting_reason), None)
    evidence = tuple(f"container {cs.name}: restarts {cs.restarts}" for cs in pod.containers if cs.restarts)
    lead = f"agent pod {NS}/{pod.name} on {node.name}"
    tail = "; nothing reports the node's cache status"
    if pod.phase in ("Failed", "Succeeded"):
        detail = ": ".join(x for x in (pod.reason, pod.message) if x) or "no reason given"
        return finding(
            "error",
            ref,
            f"{lead} is {pod.phase} ({detail}){tail}",
            group=group,
            hint=describe,
            evidence=evidence,
            cause=f"agent pods {pod.phase}: {detail}",
            code="pod-failed",
            lister=AGENT_PODS,
        )
    if waiting is not None:
        # CrashLoopBackOff's message only names the container and pod again (`back-off 5m0s restarting failed
        # container=manager pod=...`): the evidence keeps it, the exit code below says why
        crash = waiting.waiting_reason == "CrashLoopBackOff"
        text = (
            f"{waiting.waiting_reason}: {waiting.waiting_message}"
            if waiting.waiting_message and not crash
            else waiting.waiting_reason
        )
        if crash and waiting.waiting_message:
            evidence += (f"container {waiting.name}: {waiting.waiting_reason}: {waiting.waiting_message}",)
        if waiting.terminated_reason or waiting.exit_code:
            last = ": ".join(x for x in (waiting.terminated_reason, waiting.terminated_message) if x)
            text += f" (last exit code {waiting.exit_code}{f', {last}' if last else ''})"
        hint = describe
        if waiting.waiting_reason == "CrashLoopBackOff":
            hint = kubectl(
                "-n {ns} logs {pod} -c {container} -p",  # kubectl logs -p: the previous instance
                ns=Namespace(NS),
                pod=Name("pod", pod.name),
                container=Name("container", waiting.name),
            )
        return finding(
            "error",
            ref,
            f"{lead} is not running: container {waiting.name} is waiting: {text}{tail}",
            group=group,
            hint=hint,
            evidence=evidence,
            cause=f"agent pods waiting: {waiting.waiting_reason}",
            code="pod-failed",
            lister=AGENT_PODS,
        )
    if pod.phase == "Running":
        return finding(
            "error",
            ref,
            f"{lead} is Running but not Ready (its readiness probe /readyz fails){tail}",
            group=group,
            hint=pod_logs(NS, pod.name, c.AGENT_CONTAINER),
            evidence=evidence,
            cause="agent pods Running but not Ready",
            code="pod-failed",
            lister=AGENT_PODS,
        )
    detail = ": ".join(x for x in (pod.reason, pod.message) if x)
    return finding(
        "error",
        ref,
        f"{lead} is {pod.phase or 'Pending'}{f' ({detail})' if detail else ''}{tail}",
        group=group,
        hint=describe,
        evidence=evidence,
        cause=f"agent pods {pod.phase or 'Pending'}",
        code="pod-failed",
        lister=AGENT_PODS,
    )


# ---- Kubernetes node affinity (the scheduler's rule; not a KServe rule) ---------------------------


def _values_match(op: str, value: str | None, values: list[Any]) -> bool:
    if op == "In":
        return value is not None and value in values
    if op == "NotIn":
        return value is None or value not in values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt") and value is not None and len(values) == 1:
        try:
            have, want = int(value), int(values[0])
        except (TypeError, ValueError):
            return False
        return have > want if op == "Gt" else have < want
    return False


def _term_matches(term: Mapping[str, Any], node: o.Node) -> bool:
    exprs = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not exprs and not fields:
        return False  # an empty term selects nothing
    for e in exprs:
        if not _values_match(
            str(e.get("operator", "")), node.labels.get(str(e.get("key", ""))), list(e.get("values") or [])
        ):
            return False
    for e in fields:
        value = node.name if e.get("key") == "metadata.name" else None
        if not _values_match(str(e.get("operator", "")), value, list(e.get("values") or [])):
            return False
    return True


def node_in_placement(ds: o.DaemonSet, node: o.Node) -> bool:
    """Whether the DaemonSet's pod template (nodeSelector and required node affinity) selects the node."""
    if not all(node.labels.get(k) == v for k, v in (ds.node_selector or {}).items()):
        return False
    node_affinity = (ds.affinity or {}).get("nodeAffinity") or {}
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if not required:
        return True
    return any(_term_matches(t, node) for t in required.get("nodeSelectorTerms") or [])
