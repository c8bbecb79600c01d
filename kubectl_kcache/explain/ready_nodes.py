"""why-not-ready's node level: per member node, its chain in the order the node reconciler, the agent and
KServe's Jobs act (§2.4 B); the first gate that does not pass holds the node."""

from __future__ import annotations

import functools
import re

import msgspec

from .. import objects as o
from ..kernelcache import constants as c
from ..kernelcache import preparation as prep
from ..kernelcache.admission import entry_matches_cache
from ..kernelcache.names import label_value, preparation_job_name
from ..kernelcache.taints import tolerated_by
from ..snapshot import plan
from ..suggest import Name, Namespace, kubectl, kubectl_or_none
from .ready_cache import CacheContext, kc_command
from .ready_index import ChainIndex, chain_index
from .ready_model import WAITING, CacheGate, NodeGate, NodeTrace, Passed

# ---- the node level -------------------------------------------------------------------------------------


_label = functools.lru_cache(maxsize=65536)(label_value)  # a node's or cache's label value, asked per cache


class NodeInputs(msgspec.Struct, frozen=True):
    """What every node's chain of one KernelCache reads: the snapshot's index and which lists were read."""

    kcn_by_name: dict[str, o.KernelCacheNode]
    index: ChainIndex
    kcn_read: bool
    agents_read: bool
    agent_events_read: bool
    jobs_read: bool
    pods_read: bool
    cache_stop: CacheGate | None

    def jobs_for(self, kc: o.KernelCache, node: str) -> list[o.Job]:
        if not self.index.jobs:
            return []
        return self.index.jobs.get((_label(kc.namespace), _label(kc.name), _label(node)), [])


def node_inputs(ctx: CacheContext, cache_stop: CacheGate | None) -> NodeInputs:
    snap = ctx.snapshot
    return NodeInputs(
        kcn_by_name=snap.kcn_by_name,
        index=chain_index(snap, ctx.job_namespace),
        kcn_read=ctx.read(plan.KERNEL_CACHE_NODES, "KernelCacheNodes and their entries are not checked"),
        agents_read=ctx.read(plan.AGENT_PODS, "the agent pods are not checked"),
        agent_events_read=ctx.read(plan.AGENT_WARNINGS, "the agents' Warning events are not checked"),
        jobs_read=ctx.read(plan.PREPARATION_JOBS, "preparation Jobs are not checked"),
        pods_read=ctx.read(plan.PREPARATION_PODS, "preparation pods are not checked"),
        cache_stop=cache_stop,
    )


UNSCHEDULABLE = "node.kubernetes.io/unschedulable"


def _since(entry: o.CacheEntry | None, warning: o.Event) -> bool:
    """The entry was last written after the Warning was last seen (RFC 3339 times compared as instants)."""
    if entry is None or not entry.last_update or not warning.last_seen:
        return False
    written, seen = o.parse_time(entry.last_update), o.parse_time(warning.last_seen)
    return written is not None and seen is not None and written > seen


def _empty_referenced_groups(ctx: CacheContext) -> list[str]:
    """Groups with an empty nodeSelector that some KernelCache references (its nodeGroupRef, or the default
    group for one without): the agents fail their whole pass on them (kept per snapshot)."""
    snap = ctx.snapshot
    cfg = ctx.config.config
    default = cfg.default_node_group if cfg is not None else ""

    def find() -> list[str]:
        referenced = {k.node_group or default for k in snap.kernel_caches}
        return sorted(g.name for g in snap.node_groups if g.name in referenced and not g.node_selector)

    return snap.derived("empty-referenced-groups", find)


def node_chain(ctx: CacheContext, sh: NodeInputs, node: o.Node, member: bool, missing_pairs: list[str]) -> NodeTrace:
    kc = ctx.kc
    key = f"{kc.namespace}/{kc.name}"
    gates: list[NodeGate] = []
    ready = node.ready is True
    cordoned = node.unschedulable
    entry: o.CacheEntry | None = None
    job_info: tuple[str, str] | None = None
    pod_info: tuple[str, str] | None = None

    def stop(gate: str, passed: Passed, detail: str, why: str, then: str | None) -> NodeTrace:
        gates.append(NodeGate(gate, passed, detail))
        return NodeTrace(node.name, member, ready, cordoned, tuple(gates), entry, job_info, pod_info, why, then)

    group = ctx.group_name
    # what the node's KernelCacheNode holds for the cache, whatever stops the chain (shown for every node)
    own = sh.kcn_by_name.get(node.name)
    entry = next((e for e in own.entries if e.key == key), None) if own is not None else None
    if not member:
        pairs = ", ".join(missing_pairs) or "its selector"
        return stop(
            "member",
            False,
            f"not a member of {group}: {pairs}",
            f"not in group {group} ({pairs})",
            kubectl_or_none("get node/{node} --show-labels", node=Name("node", node.name)),
        )
    gates.append(NodeGate("member", True, f"matches every selector pair of {group}"))
    if not ready:
        why = node.ready_reason or ("no Ready condition" if node.ready is None else "NotReady")
        return stop(
            "ready",
            False,
            f"NotReady ({why}): not in nodeCount, and its agent drops its entries (an Error left here does not "
            "fail the cache)",
            f"NotReady ({why})",
            kubectl_or_none("describe node/{node}", node=Name("node", node.name)),
        )
    # a cordon is the taint node.kubernetes.io/unschedulable:NoSchedule; the Job's pod has the group's tolerations
    blocks = cordoned and (
        ctx.group is None
        or tolerated_by(o.Taint(key=UNSCHEDULABLE, effect="NoSchedule"), ctx.group.tolerations) is None
    )
    gates.append(
        NodeGate(
            "ready",
            True,
            "Ready, but cordoned: it counts in nodeCount and its Job's pod cannot be scheduled while it stays cordoned"
            if blocks
            else "Ready, cordoned: the group's tolerations let its Job's pod on"
            if cordoned
            else "Ready",
        )
    )
    if not sh.kcn_read:
        return stop("kernelcachenode", None, "KernelCacheNodes not read", "not read", None)
    if own is None:
        return stop(
            "kernelcachenode",
            False,
            "no KernelCacheNode: KServe's node reconciler has not run its pass (feature off or config invalid, the "
            "agent DaemonSet missing, a group with an empty selector or an invalid toleration, or the controller "
            "down); no Job, and the node counts as preparing",
            "no KernelCacheNode: KServe's node reconciler has not made it",
            kubectl("kcache doctor --only kcn-missing"),
        )
    gates.append(NodeGate("kernelcachenode", True, f"KernelCacheNode {node.name} exists"))
    pods = sh.index.agent_pods.get(node.name, [])
    if not sh.agents_read:
        gates.append(NodeGate("agent-pod", None, "agent pods not read"))
    elif not pods:
        trace = stop(
            "agent-pod",
            False,
            "no agent pod on the node: the DaemonSet's affinity (one term per group) or tolerations (the union of "
            "the groups') do not place it, or the DaemonSet is missing",
            "no agent pod: nothing prepares caches here",
            kubectl("kcache doctor --only agent"),
        )
        if entry is None or entry.state != c.ENTRY_READY:
            return trace
        gates.pop()
        gates.append(NodeGate("agent-pod", False, "no agent pod on the node (its entry is Ready from before)"))
    else:
        running = [p for p in pods if p.phase == "Running" and p.ready and not p.meta.deleting]
        if not running:
            agent = pods[0]
            state = "Running but not Ready" if agent.phase == "Running" else agent.phase or "not running"
            trace = stop(
                "agent-pod",
                False,
                f"agent pod {agent.name} is {state}",
                f"the agent pod is {state}",
                kubectl_or_none(
                    "-n {ns} describe pod/{pod}", ns=Namespace(c.KSERVE_NAMESPACE), pod=Name("pod", agent.name)
                ),
            )
            if entry is None or entry.state != c.ENTRY_READY:
                return trace
        else:
            gates.append(NodeGate("agent-pod", True, f"agent pod {running[0].name} Running and Ready"))
    warnings = sh.index.agent_events.get(node.name, [])
    empty = _empty_referenced_groups(ctx)
    if empty:  # every Ready node's agent fails its whole status pass (§2.2 "Empty selector")
        text = c.MSG_EMPTY_SELECTOR.format(name=empty[0])
        return stop(
            "agent-pass",
            False,
            f'the agent\'s pass fails on every Ready node: "{text}" (group {empty[0]} is referenced by a '
            "KernelCache); the entries freeze where they are",
            f"every agent's pass fails: {text}",
            kubectl_or_none("edit kernelcachenodegroups/{group}", group=Name("kernelcachenodegroup", empty[0])),
        )
    if not sh.agent_events_read:
        gates.append(NodeGate("agent-pass", None, "the agent's events not read"))
    elif warnings and _since(entry, warnings[0]):
        # the pass wrote the entry after the agent's newest Warning: it has run since, the Warning is history
        w = warnings[0]
        gates.append(
            NodeGate(
                "agent-pass",
                True,
                f"the agent's last Warning ({w.reason}, {w.last_seen}) is older than the entry's lastUpdate "
                f"({entry.last_update if entry is not None else ''}): its pass has run since",
            )
        )
    elif warnings:
        w = warnings[0]
        text = f"{w.reason}: {w.message}"
        trace = stop(
            "agent-pass",
            False,
            f"the agent's pass fails (its Warning event on KernelCacheNode {node.name}, {w.count or 1}x, last "
            f"{w.last_seen or 'unknown'}): {text}",
            f"the agent's pass fails: {text}",
            kubectl_or_none(
                "-n {ns} get events --field-selector involvedObject.name={kcn}",
                ns=Namespace(c.AGENT_EVENTS_NAMESPACE),
                kcn=Name("kernelcachenode", node.name),
            ),
        )
        if entry is None or entry.state != c.ENTRY_READY:
            return trace
    else:
        gates.append(NodeGate("agent-pass", True, "no Warning event from the agent"))
    # the entry
    if entry is None:
        return stop(
            "entry",
            False,
            f"KernelCacheNode {node.name} has no entry for {key}: the agent has not discovered it, so KServe makes "
            "no Job; the node counts as preparing and the cache stays Preparing for good",
            "no entry: the agent has not discovered the cache (no Job is made)",
            kubectl_or_none("-n {ns} logs pod/{pod}", ns=Namespace(c.KSERVE_NAMESPACE), pod=Name("pod", pods[0].name))
            if pods
            else kubectl(
                "-n {ns} logs daemonset/{ds}",
                ns=Namespace(c.KSERVE_NAMESPACE),
                ds=Name("daemonset", c.AGENT_DAEMONSET),
            ),
        )
    same = entry_matches_cache(entry, kc)
    if same:
        gates.append(NodeGate("entry", True, f"entry {entry.state or '(no state)'} with the KernelCache's artifact"))
    else:
        gates.append(
            NodeGate(
                "entry",
                WAITING,
                "the entry's imageReference or footprints differ from the KernelCache's: the agent resets it to "
                "Pending (the aggregate still counts it by state; the pod webhook ignores it)",
            )
        )
    # the preparation Job
    art = kc.artifact.image_reference if kc.artifact is not None else ""
    expected_job = preparation_job_name(kc.namespace, kc.name, art, node.name)
    job = prep.agent_job(sh.jobs_for(kc, node.name), kc, node.name, ctx.job_namespace) if sh.jobs_read else None
    job_name = job.meta.name if job is not None else ""
    mine = sh.index.pods_by_job.get(job_name, [])
    p = prep.preparation(job, mine, sh.index.events_by_job.get(job_name, []), entry.state)
    if job is not None:
        job_info = (job.meta.name, p.state)
    jns = ctx.job_namespace
    describe_job = (
        kubectl_or_none("-n {ns} describe job/{job}", ns=Namespace(jns), job=Name("job", job.meta.name))
        if job
        else None
    )
    if entry.state == c.ENTRY_READY and same and job is None:
        gates.append(NodeGate("job", True, "no Job needed: the entry is Ready with the same artifact"))
    elif not sh.jobs_read:
        gates.append(NodeGate("job", None, "preparation Jobs not read"))
    elif job is None:
        if sh.cache_stop is not None:
            return stop(
                "job",
                WAITING,
                f"no Job {expected_job}: KServe's pass stops at the {sh.cache_stop.id} gate before it makes Jobs",
                f"no Job: KServe's pass stops at {sh.cache_stop.id}",
                sh.cache_stop.next,
            )
        return stop(
            "job",
            WAITING,
            f"no Job {expected_job} yet: KServe makes it on its next KernelCache pass",
            "no Job yet",
            kc_command(ctx),
        )
    elif p.state == prep.JOB_SUSPENDED:
        return stop(
            "job",
            False,
            f"Job {job.meta.name} is suspended (spec.suspend, e.g. held by a queueing admission such as Kueue): no "
            "pod and no startTime; the entry stays Pulling for good (KServe does not watch Jobs)",
            "the preparation Job is suspended",
            describe_job,
        )
    elif p.state == prep.JOB_FAILED_CREATE:
        refusal = p.refusals[0]
        return stop(
            "job",
            False,
            f"Job {job.meta.name} gets no pod: the Job controller's pod creation is refused (FailedCreate): "
            f"{refusal}; the entry stays Pulling for good, and nothing re-creates the Job while it exists",
            f"pod creation refused (FailedCreate): {prep.refusal_reason(refusal)}",
            describe_job,
        )
    elif p.state == prep.JOB_FAILED:
        ttl = job.ttl_seconds
        return stop(
            "job",
            False,
            f"Job {job.meta.name} failed: {p.entry_message}; KServe makes no new Job while it exists (its TTL "
            f"{ttl if ttl is not None else '?'}s deletes it)",
            f"the preparation Job failed ({p.entry_message}); it blocks the retry until its TTL deletes it",
            kubectl_or_none("-n {ns} delete job/{job}", ns=Namespace(jns), job=Name("job", job.meta.name)),
        )
    elif p.state == prep.JOB_NOT_STARTED:
        gates.append(NodeGate("job", WAITING, f"Job {job.meta.name} has not started yet (no startTime)"))
    else:
        gates.append(NodeGate("job", True, f"Job {job.meta.name} {p.state}"))
    # the pod, only while the Job is not terminal
    if job is not None and not p.terminal:
        if p.failure is not None and p.failed_pod is not None:
            pod_info = (p.failed_pod.name, p.failure.message)
            describe_pod = kubectl_or_none(
                "-n {ns} describe pod/{pod}", ns=Namespace(jns), pod=Name("pod", p.failed_pod.name)
            )
            if p.failure.kind == prep.WAITING and p.failure.reason in c.IMAGE_PULL_REASONS:
                gates.append(NodeGate("pod", True, f"pod {p.failed_pod.name} scheduled"))
                return stop(
                    "pull",
                    False,
                    f"the kubelet cannot pull the artifact (an image volume: node credentials, or the pull role "
                    f"bound to the prefetcher ServiceAccount): {p.failure.reason}: {p.failure.message}; the agent "
                    f"marks the entry Error",
                    pull_summary(p.failure.message, art),
                    describe_pod,
                )
            return stop(
                "pod",
                False,
                f"pod {p.failed_pod.name}: {p.failure.message}; the agent marks the entry Error with it",
                f"the preparation pod fails: {p.failure.message}",
                describe_pod,
            )
        unsched = next((q for q in mine if q.scheduled_reason == "Unschedulable"), None)
        if unsched is not None:
            pod_info = (unsched.name, "")
            return stop(
                "pod",
                False,
                f"pod {unsched.name} cannot be scheduled ({unsched.scheduled_message or 'Unschedulable'}): it "
                "tolerates only the group's taints, and a cordoned node takes no pod; the entry stays Pulling",
                "the preparation pod cannot be scheduled: "
                + ("the node is cordoned" if cordoned else schedule_summary(unsched.scheduled_message)),
                kubectl_or_none("-n {ns} describe pod/{pod}", ns=Namespace(jns), pod=Name("pod", unsched.name)),
            )
        if not sh.pods_read:
            gates.append(NodeGate("pod", None, "preparation pods not read"))
        elif mine:
            pod_info = (mine[0].name, "")
            gates.append(
                NodeGate("pod", WAITING if mine[0].phase != "Running" else True, f"pod {mine[0].name} {mine[0].phase}")
            )
        elif p.state == prep.JOB_RUNNING:
            gates.append(NodeGate("pod", WAITING, "no pod seen yet"))
        gates.append(NodeGate("pull", True if p.failure is None else WAITING, "no pull error reported"))
    elif job is not None:
        gates.append(NodeGate("pod", True, f"not read by the agent: the Job is {p.state}"))
        gates.append(NodeGate("pull", True, "done" if p.state == prep.JOB_COMPLETE else "not reached"))
    # the image presence check: an entry without Job, or Ready
    if job is None or entry.state == c.ENTRY_READY:
        if not sh.index.images_known:
            gates.append(NodeGate("image-present", None, "node image lists not read"))
        elif node.lists_image(art):
            gates.append(NodeGate("image-present", True, "Node.status.images lists the artifact"))
        elif entry.state == c.ENTRY_READY and job is None:
            gates.append(
                NodeGate(
                    "image-present",
                    WAITING,
                    "Node.status.images does not list the artifact: the agent's next check marks the entry Pending "
                    f'"{c.MSG_ARTIFACT_NOT_ON_NODE}" and a Job is made',
                )
            )
        else:
            gates.append(NodeGate("image-present", True, "not listed yet (the Job pulls it)"))
    state_text = f"{entry.state or '(none)'}" + (f": {entry.message}" if entry.message else "")
    when = f" (lastUpdate {entry.last_update})" if entry.last_update else ""
    if entry.state == c.ENTRY_READY:
        gates.append(NodeGate("entry-state", True, f"{state_text}{when}"))
        return NodeTrace(node.name, member, ready, cordoned, tuple(gates), entry, job_info, pod_info)
    error = entry.state == c.ENTRY_ERROR
    gates.append(NodeGate("entry-state", False if error else WAITING, f"{state_text}{when}"))
    cause = (
        f"the entry is Error: {entry.message}"
        if error
        else f"preparing: {entry.state or 'Pending'}" + (f" ({entry.message})" if entry.message else "")
    )
    return NodeTrace(node.name, member, ready, cordoned, tuple(gates), entry, job_info, pod_info, cause, describe_job)


_STATUS_CODE = re.compile(r"(?:status code|answered|returned)[^:]*:\s*(\d{3}\s+[A-Za-z][A-Za-z ]*)\s*$")
_TAIL_CODE = re.compile(r"\b([45]\d{2} (?:Unauthorized|Forbidden|Not Found|Too Many Requests))\b")
_ONE_NODE = re.compile(r"\b1 node\(s\) ([^,.]+)")


def pull_summary(message: str, image: str) -> str:
    """The registry's answer in a few words, for a cause line ("the registry answers 401 Unauthorized for
    REPO"); the kubelet's whole message stays in the node's chain."""
    repo = image.split("@", 1)[0]
    m = _STATUS_CODE.search(message) or _TAIL_CODE.search(message)
    if m:
        return f"the registry answers {m.group(1).strip()} for {repo}"
    low = message.lower()
    for word in ("not found", "unauthorized", "denied", "forbidden", "timeout", "no such host"):
        if word in low:
            return f"the pull of {repo} fails: {word}"
    return f"the pull of {repo} fails: {message}"


def schedule_summary(message: str) -> str:
    """What keeps a pod pinned to one node off it, from the scheduler's message (its one-node clause)."""
    m = _ONE_NODE.search(message)
    return f"the node {m.group(1).strip()}" if m else message
