"""KernelCaches and their per-node entries.

* `spec.mountType` other than `oci` (error): KServe's only mount type; the cache goes to
  `Error/ConfigError` `unsupported KernelCache mount type "<m>"` and the webhook never selects it.
* The effective group (`spec.nodeGroupRef.name`, else the configured `defaultNodeGroup`, not trimmed:
  KServe does not trim it here) is unset or missing (error, KServe's `NodeGroupNotFound` message), has no
  member node (warning, `NoMatchingNodes`) or no Ready member (warning, `NoReadyNodes`).
* State `Error` (error) with the Ready condition's reason and message: VerificationFailed (with
  `status.verification`), PreparationFailed, NodeGroupNotFound, ConfigError, StorageError. A Pending
  `NoMatchingNodes`/`NoReadyNodes` that the snapshot no longer explains is reported as a stale status.
* Where KServe's pass stops before it writes status, the status is not judged; instead: a terminating
  KernelCache (warning: no link, no status, no Jobs; what holds it, its finalizers; KServe re-creates it from
  its capture once it is gone; the pod webhook still mounts it), an artifact mismatch with its capture or a
  group with an empty nodeSelector (error: the pass fails before status, which is stale), and prefetch Jobs
  of the namespace still running while the managed prefetcher RoleBinding exists (info: KServe requeues
  every minute before Jobs and status, so the status lags and new nodes get no Job yet); when one of those
  Jobs was left by a deleted KernelCache (error): it never finishes by itself, so the namespace is held for
  good until it is deleted (the hint).
* KernelCacheNode entries of the cache in state Error on the group's Ready members (error, naming the node,
  with the agent's message and the preparation Job to look at); an Error entry left on a NotReady node (or one
  no longer in the group) is not counted by KServe's aggregate and does not fail the cache (info); entries
  whose imageReference or footprints differ from the KernelCache's artifact (warning): the pod webhook never
  counts them, so they are never ready for admission until the node's agent refreshes them.
* Findings about one KernelCache's preparation on nodes (its Error or mismatched or missing entries, a
  PreparationFailed state) point to `kubectl kcache why-not-ready NAME -n NAMESPACE`, which walks the whole
  path to Ready; the Job or agent command is kept in the evidence.
* A Ready member of the cache's group whose KernelCacheNode exists and whose agent pod is Running and Ready,
  with no entry for the cache (error, folded per cache): the agent has not discovered it, KServe makes no
  preparation Job for a node without an entry and counts the node as preparing, so the cache stays Preparing
  for good (a KernelCache younger than a minute is given time to be discovered).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Sequence
from functools import lru_cache

from msgspec.structs import replace

from .. import objects as o
from ..kernelcache import cache_pass as cp
from ..kernelcache import constants as c
from ..kernelcache.admission import entries_of, entry_matches_cache
from ..kernelcache.aggregate import Aggregate, compute_aggregate, entry_index_of
from ..kernelcache.cache_pass import Stop, stops_by_cache
from ..kernelcache.caches import effective_group
from ..kernelcache.commands import why_not_ready_command
from ..kernelcache.gostrings import trim_space
from ..kernelcache.membership import member_objects
from ..kernelcache.names import label_value, preparation_job_name
from ..kernelcache.prefetcher import requeue_holders
from ..kernelcache.security import verification_advice
from ..snapshot import plan as readplan
from ..snapshot.model import ALL_BUT_MEMBERS, ClusterSnapshot
from ..suggest import Json, Name, Namespace, Selector, kubectl
from ..text import PLACEHOLDER_GROUP
from .common import EDIT_CONFIG, condition_text, facts, fmt_selector, nodes_command, parse_time, pod_logs, read_ok
from .model import CheckRead, Finding, NotApplicable, ObjectRef, finding_of
from .registry import check

ID = "cache-status"
finding = finding_of(ID)
GROUP_REASONS = ("NodeGroupNotFound", "NoMatchingNodes", "NoReadyNodes")
MSG_NO_GROUP_NAME = "nodeGroupRef.name is required and default node group is not specified"
MSG_GROUP_MISSING = "referenced KernelCacheNodeGroup was not found"
MSG_NO_MATCH = "no nodes match the referenced KernelCacheNodeGroup"
MSG_NOT_READY = "matching nodes are not ready"
# the agent discovers a new KernelCache from its watch at once; a younger one may not have its entries yet
DISCOVERY_GRACE = dt.timedelta(seconds=60)


@lru_cache(maxsize=1)
def _kcn_lister() -> str:
    """`kubectl get kernelcachenodes`, built once (a finding per KernelCache carries it)."""
    return kubectl("get kernelcachenodes")


def why_not_ready(namespace: str, name: str) -> str | None:
    """`kubectl kcache why-not-ready NAME -n NAMESPACE` (kernelcache.commands), or None for a name Kubernetes
    would not accept."""
    return why_not_ready_command(namespace, name)


@check(
    ID,
    "KernelCaches and their node entries healthy",
    "error",
    order=120,
    needs_feature=True,
    codes={
        "mount-type": ("error", "a KernelCache whose mountType is not oci"),
        "no-group": ("error", "a KernelCache without nodeGroupRef and no defaultNodeGroup"),
        "group-missing": ("error", "a KernelCache whose node group does not exist"),
        "no-matching-nodes": ("warning", "a KernelCache whose group matches no node"),
        "no-ready-nodes": ("warning", "a KernelCache whose group has no Ready node"),
        "stale-status": ("warning", "a KernelCache status the snapshot no longer explains"),
        "error-state": ("error", "a KernelCache in Error (verification, preparation, storage, config, group)"),
        "entry-error": ("error", "a node's entry for a KernelCache is in Error"),
        "entry-mismatch": ("warning", "a node's entry has another image or footprints than its KernelCache"),
        "entry-error-uncounted": (
            "info",
            "an Error entry on a node that is not a Ready member of the cache's group: KServe does not count it",
        ),
        "entry-missing": (
            "error",
            "a Ready member's KernelCacheNode has no entry for a KernelCache of its group although its agent runs: "
            "no Job is made, the cache stays Preparing",
        ),
        "terminating": ("warning", "a terminating KernelCache: KServe no longer reconciles it, its status is frozen"),
        "pass-stopped": (
            "error",
            "KServe's pass stops before status (artifact mismatch, empty group selector): the status shown is stale",
        ),
        "status-lagging": ("info", "prefetch Jobs of the namespace run: KServe requeues before writing status"),
        "status-held": (
            "error",
            "an unfinished prefetch Job of a deleted KernelCache holds the namespace: KServe requeues before "
            "writing status, for good",
        ),
    },
    reads=(
        CheckRead(readplan.KERNEL_CACHES),
        CheckRead(readplan.NODE_GROUPS),
        CheckRead(readplan.NODES),
        CheckRead(readplan.KERNEL_CACHE_NODES, optional=True, note="per-node entries not checked"),
        CheckRead(readplan.AGENT_PODS, optional=True, note="entries missing on nodes whose agent runs not checked"),
        CheckRead(readplan.CAPTURES, optional=True, note="an artifact mismatch with the capture is not seen"),
        CheckRead(
            readplan.PREPARATION_JOBS, optional=True, note="a status lagging behind running prefetch Jobs is not seen"
        ),
        CheckRead(
            readplan.PREFETCHER_ROLE_BINDINGS,
            optional=True,
            note="a status lagging behind running prefetch Jobs is not seen",
        ),
    ),
)
def run(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    if not snapshot.kernel_caches:
        raise NotApplicable("no KernelCache exists")
    # each KernelCache's entries (node, entry), in node order: the very same list while none of them changed
    entries = entries_of(snapshot).by_ref if read_ok(snapshot, readplan.KERNEL_CACHE_NODES) else {}
    f = facts(snapshot)
    stops = stops_by_cache(
        snapshot.kernel_caches,
        {k: v.outcome for k, v in f.capture_caches.items()},
        config_ok=f.feature.valid and f.config.enabled,
        groups=snapshot.group_by_name,
        default_group=f.config.default_node_group,
        role_bindings=snapshot.role_bindings,
        jobs=snapshot.jobs,
        job_namespace=f.config.job_namespace,
    )
    # a KernelCache's findings read the nodes and KernelCacheNodes only through its group's members and its own
    # entries: the last snapshot's are reused while every other field holds the same objects, its members and
    # their KernelCacheNodes and its entries are the very same, and its stop and the reads are equal (a node
    # relabelled judges again the KernelCaches of that node's group, not the other thousands: the monitor). A
    # KernelCache younger than the discovery grace is judged every time (its findings change with the clock).
    memo = snapshot.reuse("cache-status-findings", on=ALL_BUT_MEMBERS)
    members = f.members_of_group
    reads = snapshot.derived("reads-without-counts", lambda: repr([replace(r, count=0) for r in snapshot.reads]))
    for kc in snapshot.kernel_caches:
        stop = stops.get(f"{kc.namespace}/{kc.name}")
        mine = entries.get((kc.namespace, kc.name), ())
        group = effective_group(kc, f.config.default_node_group)
        key = (kc.namespace, kc.name)
        objects = member_objects(snapshot, group) if group in members else None
        same = (kc, mine)
        found: list[Finding] | None = memo.get(key, objects, same, (reads, stop))
        if found is None:
            found = list(_judged(snapshot, kc, stop, mine))
            created = parse_time(kc.meta.created)
            if created is None or f.now - created >= DISCOVERY_GRACE:
                memo.keep(key, objects, found, same, (reads, stop))
        yield from found


def _judged(
    snapshot: ClusterSnapshot, kc: o.KernelCache, stop: Stop | None, entries: Sequence[tuple[str, o.CacheEntry]]
) -> Iterator[Finding]:
    if stop is not None:
        yield _stopped(snapshot, kc, stop)
        if stop.frozen:
            return  # the status shown is not KServe's current answer: judge the entries only
    yield from _cache(snapshot, kc, entries, judge_status=stop is None)


def _stopped(snapshot: ClusterSnapshot, kc: o.KernelCache, stop: Stop) -> Finding:
    ref = ObjectRef(c.KIND_CACHE, kc.name, kc.namespace)
    ready = o.find_condition(kc.conditions, "Ready")
    shown = f"{kc.state or 'no state'}/{ready.reason}" if ready is not None else (kc.state or "no status")
    code, severity, hint = {
        cp.TERMINATING: (
            "terminating",
            "warning",
            kubectl(
                "-n {ns} get kernelcache {kc} -o jsonpath={{.metadata.finalizers}}",
                ns=Namespace(kc.namespace),
                kc=Name("kernelcache", kc.name),
            ),
        ),
        cp.LINK: ("pass-stopped", "error", kubectl("kcache doctor --only capture")),
        cp.NODE_GROUP: ("pass-stopped", "error", kubectl("kcache doctor --only group-selector")),
        cp.PREFETCH_REQUEUE: (
            "status-lagging",
            "info",
            kubectl("kcache doctor --only registry-pull"),
        ),
    }[stop.name]
    if stop.name == cp.PREFETCH_REQUEUE:
        # unfinished Jobs of deleted KernelCaches hold the namespace for good, not until they finish
        job_ns = facts(snapshot).config.job_namespace
        existing = [(k.namespace, k.name) for k in snapshot.kernel_caches]
        holders = requeue_holders(kc.namespace, snapshot.role_bindings, snapshot.jobs, job_ns, existing)
        orphan = next((h.job for h in holders if h.orphan), None)
        if orphan is not None:
            code, severity = "status-held", "error"
            hint = kubectl(
                "-n {ns} delete job {job}",
                ns=Namespace(orphan.meta.namespace or job_ns),
                job=Name("job", orphan.meta.name),
            )
    return finding(
        severity,
        ref,
        f"KernelCache {kc.namespace}/{kc.name}: KServe's pass stops at step {stop.step} "
        f"({stop.name}): {stop.text}; the status shown ({shown}) is not judged here",
        group=kc.node_group or None,
        hint=hint,
        code=code,
        evidence=tuple(f"finalizer {x}" for x in kc.meta.finalizers),
    )


def _cache(
    snapshot: ClusterSnapshot, kc: o.KernelCache, entries: Sequence[tuple[str, o.CacheEntry]], judge_status: bool = True
) -> Iterator[Finding]:
    f = facts(snapshot)
    ref = ObjectRef(c.KIND_CACHE, kc.name, kc.namespace)
    key = f"{kc.namespace}/{kc.name}"
    from_ref = bool(kc.node_group)
    group = effective_group(kc, f.config.default_node_group)
    ready = o.find_condition(kc.conditions, "Ready")
    reason = ready.reason if ready else ""
    if kc.mount_type not in ("", c.MOUNT_TYPE_OCI):
        yield finding(
            "error",
            ref,
            f"KernelCache {key} has mountType {kc.mount_type!r}: KServe reports Error/ConfigError "
            f'unsupported KernelCache mount type "{kc.mount_type}" and only mounts oci caches; recreate it '
            "with mountType oci (the field is immutable in some KServe versions)",
            group=group or None,
            hint=kubectl(
                "-n {ns} get kernelcache {kc} -o yaml", ns=Namespace(kc.namespace), kc=Name("kernelcache", kc.name)
            ),
            code="mount-type",
        )
        return
    group_finding = _group(snapshot, kc, ref, group, from_ref)
    if group_finding is not None:
        yield group_finding
    g = snapshot.group_by_name.get(group)
    errors = [(n, e) for n, e in entries if e.state == c.ENTRY_ERROR]
    uncounted: list[tuple[str, o.CacheEntry]] = []
    if g is not None and g.node_selector and read_ok(snapshot, readplan.KERNEL_CACHE_NODES):
        # KServe's aggregate counts the entries of the group's Ready members only
        agg = compute_aggregate(kc, f.members_of_group.get(group, []), snapshot.kcn_by_name, entry_index_of(snapshot))
        yield from _missing(snapshot, kc, group, agg)
        uncounted = [(n, e) for n, e in errors if n not in agg.error_nodes]
        errors = [(n, e) for n, e in errors if n in agg.error_nodes]
    if not judge_status:
        pass  # KServe's pass requeues before status: neither the state nor its staleness is current
    elif (
        kc.state == c.CACHE_ERROR
        and not (group_finding is not None and reason in GROUP_REASONS)
        and not (reason == "PreparationFailed" and errors)
    ):
        yield _error_state(kc, ref, ready, group, f.config.job_namespace, group_finding is None)
    elif reason in ("NoMatchingNodes", "NoReadyNodes") and group_finding is None and group in snapshot.group_by_name:
        n_ready = sum(1 for n in f.members_of_group.get(group, []) if n.ready)
        yield finding(
            "warning",
            ref,
            f"KernelCache {key} is {kc.state or 'Pending'}/{condition_text(ready)}, but {n_ready} Ready "
            f"nodes match group {group} now: the status is stale (is KServe's controller running?)",
            group=group,
            hint=kubectl(
                "-n {ns} describe kernelcache {kc}", ns=Namespace(kc.namespace), kc=Name("kernelcache", kc.name)
            ),
            code="stale-status",
        )
    job_ns = f.config.job_namespace
    why = why_not_ready(kc.namespace, kc.name)
    for node, e in errors:
        job = preparation_job_name(kc.namespace, kc.name, kc.artifact.image_reference if kc.artifact else "", node)
        describe = kubectl("-n {ns} describe job {job}", ns=Namespace(job_ns), job=Name("job", job))
        yield finding(
            "error",
            ObjectRef(c.KIND_NODE, node),
            f"KernelCache {key} failed to prepare on node {node}: {e.message or 'no message'}",
            group=group or None,
            hint=why or describe,
            code="entry-error",
            cause=f"KernelCaches failed to prepare: {e.message or 'no message'}",
            lister=kubectl(
                "-n {ns} get jobs -l {selector}",
                ns=Namespace(job_ns),
                selector=Selector.of({c.LABEL_JOB_CACHE_NAME: label_value(kc.name)}),
            ),
            evidence=(f"KernelCacheNode {node} entry {e.key}: state Error", *((f"Job: {describe}",) if why else ())),
        )
    for node, e in uncounted:
        n = snapshot.node_by_name.get(node)
        why = (
            f"node {node} is not Ready"
            if n is not None and group in {x.name for x in f.groups_of_node.get(node, [])}
            else f"node {node} is not a member of group {group}"
        )
        yield finding(
            "info",
            ObjectRef(c.KIND_NODE, node),
            f"KernelCacheNode {node} keeps an Error entry for KernelCache {key} ({e.message or 'no message'}), "
            f"but {why}: KServe counts the entries of the group's Ready members only, so it does not fail the "
            "cache (the node's agent drops the entry at its next pass)",
            group=group or None,
            hint=why_not_ready(kc.namespace, kc.name)
            or kubectl("get kernelcachenode {kcn} -o yaml", kcn=Name("kernelcachenode", node)),
            code="entry-error-uncounted",
            cause=f"Error entries of KernelCache {key} on nodes KServe does not count",
            lister=_kcn_lister(),
        )
    if kc.artifact is None:
        return
    for node, e in entries:
        if e.state == c.ENTRY_ERROR or entry_matches_cache(e, kc):
            continue
        what = []
        said = []  # as `what`, a digest that alone differs said once (the repository is the same)
        if e.image_reference != kc.artifact.image_reference:
            what.append(f"imageReference {e.image_reference or '(empty)'} instead of {kc.artifact.image_reference}")
            said.append(_other_reference(e.image_reference, kc.artifact.image_reference))
        if e.footprints != kc.artifact.footprints:
            what.append("footprints differ")
            said.append("footprints differ")
        agent = kubectl(
            "-n {ns} get pods -l {selector} --field-selector spec.nodeName={node}",
            ns=Namespace(c.KSERVE_NAMESPACE),
            selector=Selector.of(dict([c.AGENT_POD_LABEL])),
            node=Name("node", node),
        )
        yield finding(
            "warning",
            ObjectRef(c.KIND_NODE, node),
            f"KernelCacheNode {node}: the {e.state or 'unset'} entry for KernelCache {key} does not match its "
            "artifact, so the pod webhook does not count it until the node's agent refreshes it. It has "
            f"{' and '.join(said)}",
            group=group or None,
            code="entry-mismatch",
            cause=f"entries of KernelCache {key} with {' and '.join(what)}",
            lister=_kcn_lister(),
            hint=why or agent,
            evidence=(*what, *((f"agent pod: {agent}",) if why else ())),
        )


def _other_reference(have: str, want: str) -> str:
    """`imageReference R@sha256:a instead of digest sha256:b` when only the digests differ, else both whole."""
    repo, at, digest = want.partition("@")
    if have and at and have.startswith(repo + "@"):
        return f"imageReference {have} instead of digest {digest}"
    return f"imageReference {have or '(empty)'} instead of {want}"


MISSING_SHOWN = 20  # nodes named in an entry-missing finding's evidence


def _healthy_agents(pods_by_node: dict[str, list[o.Pod]]) -> dict[str, o.Pod]:
    """Node -> its Running and Ready agent pod (not terminating)."""
    out = {}
    for node, pods in pods_by_node.items():
        pod = next((p for p in pods if p.phase == "Running" and p.ready and not p.meta.deleting), None)
        if pod is not None:
            out[node] = pod
    return out


def _missing(snapshot: ClusterSnapshot, kc: o.KernelCache, group: str, agg: Aggregate) -> Iterator[Finding]:
    """Ready members of the group whose KernelCacheNode exists and whose agent pod runs, with no entry for `kc`
    (KServe's aggregate counts them as preparing; no Job is made for a node without an entry): one finding per
    KernelCache naming its nodes (a fleet where agents miss many caches gives one line per cache, not one per
    node and cache). Nodes without a KernelCacheNode (kcn-missing) or a Running and Ready agent pod (agent)
    are reported by those checks."""
    f = facts(snapshot)
    if not agg.missing_nodes or not read_ok(snapshot, readplan.AGENT_PODS):
        return
    created = parse_time(kc.meta.created)
    if created is not None and f.now - created < DISCOVERY_GRACE:
        return
    key = f"{kc.namespace}/{kc.name}"
    healthy = snapshot.derived("healthy-agents", lambda: _healthy_agents(f.agent_pods_by_node), on=("pods",))
    # the group's members with a KernelCacheNode and a healthy agent, kept per group: each cache's missing
    # nodes are looked up in a set of its group's size, not in the fleet's (cache misses at 130,000 nodes)
    eligible: dict[str, set[str]] = snapshot.derived("entry-missing-eligible", dict)
    in_group = eligible.get(group)
    if in_group is None:
        kcns = snapshot.kcn_by_name
        in_group = eligible[group] = {
            n.name for n in f.members_of_group.get(group, []) if n.name in healthy and n.name in kcns
        }
    names = [node for node in agg.missing_nodes if node in in_group]
    if not names:
        return
    node, pod = names[0], healthy[names[0]]
    n = len(names)
    where = (
        f"KernelCacheNode {node} has no entry for KernelCache {key}, although {node} is a Ready member of group "
        f"{group} and its agent pod {c.KSERVE_NAMESPACE}/{pod.name} is Running"
        if n == 1
        else f"{n} KernelCacheNodes have no entry for KernelCache {key} (e.g. {node}), although their nodes are Ready "
        f"members of group {group} and their agent pods are Running"
    )
    # the caches of a group mostly name the same agent pod first (2,000 caches, 250 pods at 5,000 nodes)
    logs_of: dict[str, str] = snapshot.derived("agent-logs-command", dict)
    logs = logs_of.get(pod.name)
    if logs is None:
        logs = logs_of[pod.name] = pod_logs(c.KSERVE_NAMESPACE, pod.name, c.AGENT_CONTAINER)
    hint = why_not_ready(kc.namespace, kc.name)
    yield finding(
        "error",
        ObjectRef(c.KIND_CACHE, kc.name, kc.namespace),
        f"{where}: the agent has not discovered the cache (its pass fails, or it cannot read KernelCaches or "
        f"groups), so KServe makes no preparation Job for {'the node' if n == 1 else 'them'} and counts "
        f"{'it' if n == 1 else 'them'} as preparing: the cache stays Preparing for good",
        group=group,
        hint=hint or logs,
        evidence=(
            f"nodes without the entry ({n}): {', '.join(names[:MISSING_SHOWN])}"
            + (f" and {n - MISSING_SHOWN} more" if n > MISSING_SHOWN else ""),
            *((f"agent log: {logs}",) if hint else ()),
        ),
        code="entry-missing",
        cause="KernelCaches have no entry on nodes whose agent runs",
        lister=_kcn_lister(),
    )


def _group(snapshot: ClusterSnapshot, kc: o.KernelCache, ref: ObjectRef, group: str, from_ref: bool) -> Finding | None:
    key = f"{kc.namespace}/{kc.name}"
    if not group:
        return finding(
            "error",
            ref,
            f"KernelCache {key} has no nodeGroupRef and no defaultNodeGroup is configured: KServe reports "
            f'Error/NodeGroupNotFound "{MSG_NO_GROUP_NAME}"',
            hint=kubectl(
                "-n {ns} patch kernelcache {kc} --type=merge -p {body}",
                ns=Namespace(kc.namespace),
                kc=Name("kernelcache", kc.name),
                body=Json({"spec": {"nodeGroupRef": {"name": PLACEHOLDER_GROUP}}}),
            ),
            code="no-group",
        )
    source = "spec.nodeGroupRef" if from_ref else "defaultNodeGroup"
    g = snapshot.group_by_name.get(group)
    if g is None:
        extra = ""
        if trim_space(group) in snapshot.group_by_name:
            extra = " (the name has surrounding white space, which KServe does not trim here)"
        return finding(
            "error",
            ref,
            f"KernelCache {key}: group {group!r} (from {source}) does not exist{extra}: KServe reports "
            f'Error/NodeGroupNotFound "{MSG_GROUP_MISSING}"',
            group=group,
            hint=f"kubectl get {c.PLURAL_NODE_GROUPS}" if from_ref else EDIT_CONFIG,
            code="group-missing",
        )
    if not g.node_selector:
        return None  # group-selector reports it
    members = facts(snapshot).members_of_group.get(group, [])
    if not members:
        return finding(
            "warning",
            ref,
            f"KernelCache {key}: no node matches group {group} (nodeSelector "
            f'{fmt_selector(g.node_selector)}): KServe reports Pending/NoMatchingNodes "{MSG_NO_MATCH}"',
            group=group,
            hint="kubectl kcache doctor --only group-selector",
            code="no-matching-nodes",
        )
    if not any(n.ready for n in members):
        return finding(
            "warning",
            ref,
            f"KernelCache {key}: none of the {len(members)} nodes of group {group} is Ready: KServe reports "
            f'Pending/NoReadyNodes "{MSG_NOT_READY}"',
            group=group,
            hint=nodes_command(g),
            code="no-ready-nodes",
        )
    return None


def _error_state(
    kc: o.KernelCache, ref: ObjectRef, ready: o.Condition | None, group: str, job_ns: str, group_ok: bool
) -> Finding:
    key = f"{kc.namespace}/{kc.name}"
    reason = ready.reason if ready else ""
    message = f"KernelCache {key} is in Error"
    message += f": {condition_text(ready)}" if ready else " (no Ready condition)"
    hint = kubectl("-n {ns} describe kernelcache {kc}", ns=Namespace(kc.namespace), kc=Name("kernelcache", kc.name))
    evidence: list[str] = []
    v = kc.verification
    if reason == "VerificationFailed" and v is not None:
        detail = ": ".join(x for x in (v.reason, v.message) if x)
        message += f" (verification {v.state or 'unknown'}{f', {detail}' if detail else ''})"
        evidence.append(f"verification: mode {v.mode}, state {v.state}, reason {v.reason}")
        if verification_advice(v.reason):
            evidence.append(verification_advice(v.reason))
        hint = kubectl(
            "-n {ns} get kernelcache {kc} -o jsonpath={{.status.verification}}",
            ns=Namespace(kc.namespace),
            kc=Name("kernelcache", kc.name),
        )
    elif reason == "PreparationFailed":
        jobs = kubectl(
            "-n {ns} get jobs,pods -l {selector}",
            ns=Namespace(job_ns),
            selector=Selector.of({c.LABEL_JOB_CACHE_NAME: label_value(kc.name)}),
        )
        hint = why_not_ready(kc.namespace, kc.name) or jobs
        if hint != jobs:
            evidence.append(f"preparation: {jobs}")
    elif reason == "ConfigError":
        hint = EDIT_CONFIG
    elif reason == "StorageError" and ready is not None:
        if ready.message.startswith("job namespace "):
            hint = kubectl("create namespace {ns}", ns=Namespace(job_ns))
        elif "ServiceAccount" in ready.message or "RoleBinding" in ready.message:
            hint = "kubectl kcache doctor --only registry-pull"
    elif reason == "NodeGroupNotFound" and group_ok:
        message += f" (group {group} exists now: the status is stale)"
    return finding("error", ref, message, group=group or None, hint=hint, evidence=tuple(evidence), code="error-state")
