"""`why-not-ready KERNELCACHE`: why a KernelCache is not Ready on the nodes of its group, the whole chain in
KServe's order (pure; reference §2.4).

Cache level (one KernelCache pass; the first gate that stops decides for every node): `exists` (and not
terminating), `capture-link`, `usage`, `config`, `verification`, `group`, `job-namespace`,
`prefetcher-identity`, `requeue`. Node level, per member node (and for a node asked about with `--node`):
`member`, `ready`, `kernelcachenode`, `agent-pod`, `agent-pass`, `entry`, `job`, `pod`, `pull`,
`image-present`, `entry-state`. A node's `blockedBy` is its first gate that did not pass (None when its entry
is Ready, as KServe counts it). Then the nodes are folded by cause, and the aggregate KServe computes
(`kernelcache.aggregate`) is set beside the status it wrote.

Every rule comes from kernelcache/: the Job the agent reads and what it writes (`preparation`), the
prefetcher identity and the requeue (`prefetcher`), where the pass stops (`cache_pass`), the aggregate. A
gate whose input was not read says so (`passed` None) and the answer is incomplete (exit 3).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .. import objects as o
from ..apivalidation import subdomain_errors
from ..kernelcache import constants as c
from ..kernelcache import preparation as prep
from ..kernelcache.admission import entry_matches_cache
from ..kernelcache.agent_events import agent_warnings
from ..kernelcache.aggregate import Aggregate, EntryIndex, compute_aggregate, entry_index_of
from ..kernelcache.cache_pass import LINK, NODE_GROUP, PREFETCH_REQUEUE, pass_stop
from ..kernelcache.caches import effective_group
from ..kernelcache.capture import cache_outcomes
from ..kernelcache.config import SECURITY_CERT, ConfigState, read_config
from ..kernelcache.membership import membership_of
from ..kernelcache.names import label_value, preparation_job_name
from ..kernelcache.prefetcher import identity_error, requeue_holders
from ..snapshot import plan
from ..snapshot.model import ClusterSnapshot
from ..snapshot.reads import unusable
from ..text import command

KIND = "WhyNotReady"
VERSION = 1
WAITING = "waiting"
CACHE_GATES = (
    "exists",
    "capture-link",
    "usage",
    "config",
    "verification",
    "group",
    "job-namespace",
    "prefetcher-identity",
    "requeue",
)
NODE_GATES = (
    "member",
    "ready",
    "kernelcachenode",
    "agent-pod",
    "agent-pass",
    "entry",
    "job",
    "pod",
    "pull",
    "image-present",
    "entry-state",
)
Passed = bool | str | None  # True, False, "waiting", or None: not read / not evaluated


def _valid(*names: str) -> bool:
    return all(n and not subdomain_errors(n) for n in names)


def _cmd(*words: str, names: Iterable[str] = ()) -> str | None:
    """A command to run, or None when a name in it is not a valid object name (a value from the cluster is
    never put where kubectl could read it as an option)."""
    return command(*words) if _valid(*names) else None


# ---- the model ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CacheGate:
    id: str
    passed: Passed
    detail: str
    kserve: tuple[str, str, str] | None = None  # (state, reason, message) KServe writes at this gate
    evidence: tuple[str, ...] = ()
    next: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "passed": self.passed,
            "detail": self.detail,
            "kserve": None
            if self.kserve is None
            else {"state": self.kserve[0], "reason": self.kserve[1], "message": self.kserve[2]},
            "evidence": list(self.evidence),
            "next": self.next,
        }


@dataclass(frozen=True)
class NodeGate:
    id: str
    passed: Passed
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "passed": self.passed, "detail": self.detail}


@dataclass(frozen=True)
class NodeTrace:
    name: str
    member: bool
    ready: bool
    cordoned: bool
    gates: tuple[NodeGate, ...]
    entry: o.CacheEntry | None = None
    job: tuple[str, str] | None = None  # (name, state)
    pod: tuple[str, str] | None = None  # (name, failure)
    cause: str = ""  # the blocking gate's cause, in words shared by every node it holds
    next: str | None = None

    @property
    def blocked_by(self) -> str | None:
        if self.entry is not None and self.entry.state == c.ENTRY_READY and self.member and self.ready:
            return None
        gate = next((g for g in self.gates if g.passed is not True and g.passed is not None), None)
        return gate.id if gate is not None else None

    @property
    def counted(self) -> bool:
        """A Ready member: KServe counts it in nodeCount."""
        return self.member and self.ready

    def to_dict(self) -> dict[str, Any]:
        e = self.entry
        return {
            "name": self.name,
            "member": self.member,
            "ready": self.ready,
            "cordoned": self.cordoned,
            "gates": [g.to_dict() for g in self.gates],
            "blockedBy": self.blocked_by,
            "entry": None if e is None else {"state": e.state, "message": e.message, "lastUpdate": e.last_update},
            "job": None if self.job is None else {"name": self.job[0], "state": self.job[1]},
            "pod": None if self.pod is None else {"name": self.pod[0], "failure": self.pod[1]},
        }


@dataclass(frozen=True)
class Cause:
    cause: str
    gate: str
    nodes: tuple[str, ...]
    next: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"cause": self.cause, "gate": self.gate, "nodes": list(self.nodes), "next": self.next}


@dataclass(frozen=True)
class WhyNotReady:
    namespace: str
    name: str
    group: str | None
    found: bool
    cache: tuple[CacheGate, ...]
    nodes: tuple[NodeTrace, ...]
    aggregate: Aggregate | None
    written: tuple[str, str, str, tuple[int, int, int, int]] | None  # state, reason, message, counts
    admission: str = ""
    unread: tuple[str, ...] = ()
    causes: tuple[Cause, ...] = field(default=())
    # -A: no node chains are kept, only (Ready members, those Ready as KServe counts) and the causes
    summary: tuple[int, int] | None = None

    @property
    def cache_blocked_by(self) -> CacheGate | None:
        return next((g for g in self.cache if g.passed is not True and g.passed is not None), None)

    @property
    def counted(self) -> tuple[NodeTrace, ...]:
        return tuple(n for n in self.nodes if n.counted)

    @property
    def counted_count(self) -> int:
        """How many Ready members KServe counts (nodeCount)."""
        return self.summary[0] if self.summary is not None else len(self.counted)

    @property
    def ready(self) -> bool:
        """Ready on every Ready member, as KServe counts (and at least one)."""
        return 0 < self.counted_count == self.ready_count and self.cache_blocked_by is None

    @property
    def ready_count(self) -> int:
        if self.summary is not None:
            return self.summary[1]
        return sum(1 for n in self.counted if n.blocked_by is None)

    @property
    def lagging(self) -> bool:
        if self.aggregate is None or self.written is None:
            return False
        a = self.aggregate
        counts = (a.counts.node_count, a.counts.nodes_ready, a.counts.nodes_preparing, a.counts.nodes_error)
        return (a.state, a.reason, counts) != (self.written[0], self.written[1], self.written[3])

    @property
    def verdict(self) -> str:
        """Line 1, in KServe's terms."""
        if not self.found:
            return f"KernelCache {self.namespace}/{self.name} does not exist"
        kserve = self.written[0] if self.written and self.written[0] else "no status yet"
        no_members = self.summary is None and not any(n.member for n in self.nodes)
        if (
            self.group is None
            or no_members
            or (
                self.aggregate is not None
                and not self.aggregate.counts.node_count
                and self.aggregate.reason == c.REASON_NO_MATCHING_NODES
            )
        ):
            where = f"group {self.group}" if self.group else "no group"
            return f"Ready on no node: {where} has no member; KServe: {kserve}"
        return f"Ready on {self.ready_count} of {self.counted_count} Ready members of {self.group}; KServe: {kserve}"

    @property
    def next_command(self) -> str | None:
        gate = self.cache_blocked_by
        if gate is not None and gate.next:
            return gate.next
        return next((x.next for x in self.causes if x.next), None)

    @property
    def exit_ready(self) -> bool:
        return self.ready

    def to_dict(self) -> dict[str, Any]:
        agg: dict[str, Any] | None = None
        if self.aggregate is not None:
            a = self.aggregate
            agg = {
                "computed": {
                    "state": a.state,
                    "reason": a.reason,
                    "message": a.message,
                    "counts": {
                        "nodeCount": a.counts.node_count,
                        "nodesReady": a.counts.nodes_ready,
                        "nodesPreparing": a.counts.nodes_preparing,
                        "nodesError": a.counts.nodes_error,
                    },
                },
                "written": None
                if self.written is None
                else {
                    "state": self.written[0],
                    "reason": self.written[1],
                    "message": self.written[2],
                    "counts": dict(
                        zip(("nodeCount", "nodesReady", "nodesPreparing", "nodesError"), self.written[3], strict=True)
                    ),
                },
                "lagging": self.lagging,
            }
        return {
            "kind": KIND,
            "version": VERSION,
            "kernelCache": {"namespace": self.namespace, "name": self.name, "group": self.group},
            "result": {
                "ready": self.ready,
                "verdict": self.verdict,
                "cache": [g.to_dict() for g in self.cache],
                **({} if self.summary is not None else {"nodes": [n.to_dict() for n in self.nodes]}),
                "causes": [x.to_dict() for x in self.causes],
                "aggregate": agg,
                **({} if self.summary is not None else {"admission": self.admission}),
                "notRead": list(self.unread),
            },
        }


# ---- the cache level ------------------------------------------------------------------------------------


@dataclass
class _Context:
    snapshot: ClusterSnapshot
    kc: o.KernelCache
    config: ConfigState
    job_namespace: str
    group_name: str
    group: o.NodeGroup | None
    unread: list[str]

    def read(self, spec: Any, what: str) -> bool:
        """Whether the list was read; if not, note it once."""
        from ..snapshot.plan import resolve

        if isinstance(spec, tuple):  # the newest of KServe's names speaks for the list
            spec = spec[0]
        spec = resolve(spec, self.kc.namespace, self.job_namespace)
        # the same lists are asked about for every KernelCache (-A): each one's answer is kept with the snapshot
        problem = self.snapshot.derived(f"why-not-ready-read/{spec}", lambda: unusable(self.snapshot, spec, True))
        if problem is None:
            return True
        text = f"{problem} ({what})"
        if text not in self.unread:
            self.unread.append(text)
        return False


def _kc_cmd(ctx: _Context, *words: str) -> str | None:
    kc = ctx.kc
    return _cmd("kubectl", "-n", kc.namespace, *words, f"{c.PLURAL_CACHES}/{kc.name}", names=(kc.namespace, kc.name))


def _cache_gates(ctx: _Context) -> list[CacheGate]:
    kc, snap = ctx.kc, ctx.snapshot
    gates: list[CacheGate] = []
    written = _written_tuple(kc)
    if kc.meta.deleting:
        held = ", ".join(kc.meta.finalizers) or "none"
        gates.append(
            CacheGate(
                "exists",
                False,
                f"terminating since {kc.meta.deletion_timestamp}: KServe does nothing for it (no link, no status, "
                "no Jobs)",
                evidence=(f"finalizers: {held}",),
                next=_kc_cmd(ctx, "get", "-o", "yaml"),
            )
        )
        return gates
    gates.append(CacheGate("exists", True, "exists, not terminating"))
    captures_read = ctx.read(plan.CAPTURES, "the capture link is not checked")
    outcomes = cache_outcomes(snap.captures, snap.kc_by_key) if captures_read else {}
    mine = [(name, out) for (ns, name), out in outcomes.items() if ns == kc.namespace]
    stop = pass_stop(
        kc,
        outcomes=mine,
        config_ok=False,  # the later steps are gates of their own below
        group=None,
        role_bindings=(),
        jobs=(),
        job_namespace=ctx.job_namespace,
    )
    if stop is not None and stop.name == LINK:
        gates.append(CacheGate("capture-link", False, stop.text, next=_kc_cmd(ctx, "get", "-o", "yaml")))
        return gates
    gates.append(CacheGate("capture-link", True if captures_read else None, "no artifact mismatch with its capture"))
    gates.append(CacheGate("usage", True, "the usage bookkeeping does not stop the pass (KServe returns its errors)"))
    cfg = ctx.config
    edit = command("kubectl", "-n", c.KSERVE_NAMESPACE, "edit", "configmap", c.CONFIGMAP_NAME)
    if cfg.config is None:
        gates.append(CacheGate("config", False, cfg.error, ("Error", "ConfigError", cfg.error), next=edit))
        return gates
    mount = kc.mount_type or cfg.config.default_mount_type
    if kc.mount_type and kc.mount_type != c.MOUNT_TYPE_OCI:
        text = f'unsupported KernelCache mount type "{kc.mount_type}"'
        gates.append(CacheGate("config", False, text, ("Error", "ConfigError", text), next=_kc_cmd(ctx, "edit")))
        return gates
    if not cfg.config.enabled:
        text = "kernel cache is disabled in inferenceservice-config"
        gates.append(
            CacheGate(
                "config",
                False,
                f"{text}: the node reconciler and the agents are idle too",
                ("Pending", "FeatureDisabled", text),
                next=edit,
            )
        )
        return gates
    gates.append(CacheGate("config", True, f"configuration loads, feature enabled, mountType {mount}"))
    gates.append(_verification(ctx, written))
    if gates[-1].passed is False:
        return gates
    group_gate = _group_gate(ctx)
    gates.append(group_gate)
    if group_gate.passed is not True:
        return gates
    ns_gate = _job_namespace_gate(ctx)
    gates.append(ns_gate)
    if ns_gate.passed is not True:
        return gates
    identity = _identity_gate(ctx)
    gates.append(identity)
    if identity.passed is False:
        return gates
    gates.append(_requeue_gate(ctx))
    return gates


def _written_tuple(kc: o.KernelCache) -> tuple[str, str, str]:
    cond = o.find_condition(kc.conditions, "Ready")
    return (kc.state, cond.reason if cond else "", cond.message if cond else "")


def _verification(ctx: _Context, written: tuple[str, str, str]) -> CacheGate:
    assert ctx.config.config is not None
    mode = ctx.config.config.artifact_security.mode
    if mode != SECURITY_CERT:
        return CacheGate("verification", True, f"artifactSecurity.mode {mode}: KServe does not verify before Jobs")
    v = ctx.kc.verification
    if written[1] == "VerificationFailed":
        return CacheGate(
            "verification",
            False,
            f"verification failed in cert mode: KServe stops before groups and Jobs, so no node gets a Job "
            f"(entries appear and stay Pending){': ' + v.message if v is not None and v.message else ''}",
            ("Error", "VerificationFailed", written[2]),
            evidence=tuple(
                x for x in (f"verification: {v.state} {v.reason}".strip() if v is not None else "",) if x.strip()
            ),
            next=_kc_cmd(ctx, "get", "-o", "yaml"),
        )
    if v is not None and v.state == "Succeeded" and v.verified:
        return CacheGate("verification", True, "verified (cert mode)")
    return CacheGate(
        "verification",
        WAITING,
        "cert mode: not verified yet (KServe verifies on its next pass; no Job before it succeeds)",
        next=_kc_cmd(ctx, "get", "-o", "yaml"),
    )


def _group_gate(ctx: _Context) -> CacheGate:
    name, group = ctx.group_name, ctx.group
    if not name:
        text = "nodeGroupRef.name is required and default node group is not specified"
        return CacheGate("group", False, text, ("Error", "NodeGroupNotFound", text), next=_kc_cmd(ctx, "edit"))
    if group is None:
        if not ctx.read(plan.NODE_GROUPS, "the group is not checked"):
            return CacheGate("group", None, f"group {name} not read")
        text = "referenced KernelCacheNodeGroup was not found"
        return CacheGate(
            "group",
            False,
            f"group {name!r} does not exist: {text}",
            ("Error", "NodeGroupNotFound", text),
            next=command("kubectl", "get", c.PLURAL_NODE_GROUPS),
        )
    if not group.node_selector:
        stop = pass_stop(
            ctx.kc,
            outcomes=(),
            config_ok=True,
            group=group,
            role_bindings=(),
            jobs=(),
            job_namespace=ctx.job_namespace,
        )
        text = stop.text if stop is not None and stop.name == NODE_GROUP else "empty nodeSelector"
        return CacheGate(
            "group", False, text, next=_cmd("kubectl", "edit", f"{c.PLURAL_NODE_GROUPS}/{name}", names=(name,))
        )
    members = membership_of(ctx.snapshot).members_of_group.get(name, [])
    ready = [n for n in members if n.ready is True]
    lister = _cmd("kubectl", "get", "nodes", "-l", _selector_text(group), names=(name,))
    if not members:
        text = c.MSG_NO_MATCHING_NODES
        return CacheGate(
            "group", False, f"group {name} matches no node", ("Pending", "NoMatchingNodes", text), next=lister
        )
    if not ready:
        text = c.MSG_NO_READY_NODES
        return CacheGate(
            "group",
            False,
            f"none of the {len(members)} members of {name} is Ready",
            ("Pending", "NoReadyNodes", text),
            next=lister,
        )
    cordoned = sum(1 for n in ready if n.unschedulable)
    extra = f" ({cordoned} cordoned: they count and their Job's pod cannot be scheduled)" if cordoned else ""
    return CacheGate("group", True, f"group {name}: {len(ready)} Ready of {len(members)} members = nodeCount{extra}")


def _selector_text(group: o.NodeGroup) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(group.node_selector.items()))


def _job_namespace_gate(ctx: _Context) -> CacheGate:
    ns = ctx.job_namespace
    if not ctx.read(plan.namespace(ns), f"whether namespace {ns} exists is not checked"):
        return CacheGate("job-namespace", None, f"namespace {ns} not read")
    if ctx.snapshot.namespace_exists(ns):
        return CacheGate("job-namespace", True, f"job namespace {ns} exists")
    text = f'job namespace "{ns}" was not found; create it before using KernelCache'
    return CacheGate(
        "job-namespace",
        False,
        text,
        ("Error", "StorageError", text),
        next=_cmd("kubectl", "create", "namespace", ns, names=(ns,)),
    )


def _identity_gate(ctx: _Context) -> CacheGate:
    assert ctx.config.config is not None
    sa_read = ctx.read(plan.PREFETCHER_SERVICE_ACCOUNTS, "the prefetcher ServiceAccount is not checked")
    rb_read = ctx.read(plan.PREFETCHER_ROLE_BINDINGS, "the prefetcher RoleBinding is not checked")
    error = identity_error(
        ctx.config.config, ctx.kc.namespace, ctx.snapshot.service_accounts, ctx.snapshot.role_bindings
    )
    if error:
        where = ctx.job_namespace if "ServiceAccount" in error.split(" managed", 1)[0] else ctx.kc.namespace
        kind = "serviceaccount" if "ServiceAccount " in error and "RoleBinding" not in error else "rolebinding"
        name = c.PREFETCHER_SERVICE_ACCOUNTS[0] if kind == "serviceaccount" else c.PREFETCHER_ROLE_BINDINGS[0]
        return CacheGate(
            "prefetcher-identity",
            False,
            f"{error}: every KernelCache of the namespace fails before its Jobs",
            ("Error", "StorageError", error),
            next=_cmd("kubectl", "-n", where, "get", f"{kind}/{name}", "-o", "yaml", names=(where,)),
        )
    if not (sa_read and rb_read):
        return CacheGate("prefetcher-identity", None, "not read")
    return CacheGate(
        "prefetcher-identity", True, "the prefetcher ServiceAccount and RoleBinding are as KServe needs them"
    )


def _requeue_gate(ctx: _Context) -> CacheGate:
    if not ctx.read(plan.PREPARATION_JOBS, "the requeue held by running prefetch Jobs is not checked"):
        return CacheGate("requeue", None, "prefetch Jobs not read")
    snap, kc = ctx.snapshot, ctx.kc
    existing = [(k.namespace, k.name) for k in snap.kernel_caches]
    holders = requeue_holders(kc.namespace, snap.role_bindings, snap.jobs, ctx.job_namespace, existing)
    if not holders:
        return CacheGate("requeue", True, "no running prefetch Job holds the namespace's passes")
    stop = pass_stop(
        kc,
        outcomes=(),
        config_ok=True,
        group=ctx.group,
        role_bindings=snap.role_bindings,
        jobs=snap.jobs,
        job_namespace=ctx.job_namespace,
        existing=existing,
    )
    text = stop.text if stop is not None and stop.name == PREFETCH_REQUEUE else "prefetch Jobs hold the pass"
    orphans = [h for h in holders if h.orphan]
    first = (orphans or list(holders))[0].job
    evidence = tuple(
        f"Job {h.job.meta.namespace}/{h.job.meta.name}: for {h.cache}" + (" (deleted)" if h.orphan else "")
        for h in holders[:5]
    )
    jns = first.meta.namespace or ctx.job_namespace
    nxt = (
        _cmd("kubectl", "-n", jns, "delete", f"job/{first.meta.name}", names=(jns, first.meta.name))
        if orphans
        else _cmd("kubectl", "-n", jns, "get", "jobs", "-l", c.LABEL_JOB_CACHE_NAMESPACE, names=(jns,))
    )
    return CacheGate("requeue", False if orphans else WAITING, text, evidence=evidence, next=nxt)


# ---- the node level -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Index:
    """What every chain of one snapshot looks up, indexed once (-A explains thousands of caches): agent pods and
    the agents' events by node, preparation Jobs by the KernelCache and node their labels name, their pods and
    the Job controller's events by Job."""

    agent_pods: dict[str, list[o.Pod]]
    agent_events: dict[str, list[o.Event]]
    jobs: dict[tuple[str, str, str], list[o.Job]]
    pods_by_job: dict[str, list[o.Pod]]
    events_by_job: dict[str, list[o.Event]]
    images_known: bool


def _index(snap: ClusterSnapshot, job_ns: str) -> _Index:
    def build() -> _Index:
        key, value = c.AGENT_POD_LABEL
        agents: dict[str, list[o.Pod]] = {}
        for pod in snap.pods_labelled(c.KSERVE_NAMESPACE, key, value):
            agents.setdefault(pod.node_name, []).append(pod)
        jobs: dict[tuple[str, str, str], list[o.Job]] = {}
        for j in snap.jobs:
            if j.meta.namespace == job_ns:
                lab = j.meta.labels
                target = (
                    lab.get(c.LABEL_JOB_CACHE_NAMESPACE, ""),
                    lab.get(c.LABEL_JOB_CACHE_NAME, ""),
                    lab.get(c.LABEL_JOB_NODE, ""),
                )
                jobs.setdefault(target, []).append(j)
        pods: dict[str, list[o.Pod]] = {}
        for p in snap.pods:
            if p.namespace == job_ns:
                name = p.meta.labels.get(prep.JOB_NAME_LABEL, p.meta.labels.get("job-name"))
                if name:
                    pods.setdefault(name, []).append(p)
        events: dict[str, list[o.Event]] = {}
        for e in snap.events:
            if e.involved_namespace == job_ns and e.involved_kind == "Job":
                events.setdefault(e.involved_name, []).append(e)
        return _Index(
            agents,
            agent_warnings(snap.events),
            jobs,
            pods,
            events,
            any(n.image_count or n.images.keys for n in snap.nodes),
        )

    return snap.derived(f"why-not-ready-index/{job_ns}", build)


_label = functools.lru_cache(maxsize=65536)(label_value)  # a node's or cache's label value, asked per cache


@dataclass(frozen=True)
class _Shared:
    """What every node's chain of one KernelCache reads: the snapshot's index and which lists were read."""

    kcn_by_name: dict[str, o.KernelCacheNode]
    index: _Index
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


def _shared(ctx: _Context, cache_stop: CacheGate | None) -> _Shared:
    snap = ctx.snapshot
    return _Shared(
        kcn_by_name=snap.kcn_by_name,
        index=_index(snap, ctx.job_namespace),
        kcn_read=ctx.read(plan.KERNEL_CACHE_NODES, "KernelCacheNodes and their entries are not checked"),
        agents_read=ctx.read(plan.AGENT_PODS, "the agent pods are not checked"),
        agent_events_read=ctx.read(plan.AGENT_WARNINGS, "the agents' Warning events are not checked"),
        jobs_read=ctx.read(plan.PREPARATION_JOBS, "preparation Jobs are not checked"),
        pods_read=ctx.read(plan.PREPARATION_PODS, "preparation pods are not checked"),
        cache_stop=cache_stop,
    )


def _node_chain(ctx: _Context, sh: _Shared, node: o.Node, member: bool, missing_pairs: list[str]) -> NodeTrace:
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
    if not member:
        pairs = ", ".join(missing_pairs) or "its selector"
        return stop(
            "member",
            False,
            f"not a member of {group}: {pairs}",
            f"not in group {group} ({pairs})",
            _cmd("kubectl", "get", f"node/{node.name}", "--show-labels", names=(node.name,)),
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
            _cmd("kubectl", "describe", f"node/{node.name}", names=(node.name,)),
        )
    gates.append(
        NodeGate(
            "ready",
            True,
            "Ready, but cordoned: it counts in nodeCount and its Job's pod cannot be scheduled while it stays cordoned"
            if cordoned
            else "Ready",
        )
    )
    kcn = sh.kcn_by_name.get(node.name)
    if not sh.kcn_read:
        return stop("kernelcachenode", None, "KernelCacheNodes not read", "not read", None)
    if kcn is None:
        return stop(
            "kernelcachenode",
            False,
            "no KernelCacheNode: KServe's node reconciler has not run its pass (feature off or config invalid, the "
            "agent DaemonSet missing, a group with an empty selector or an invalid toleration, or the controller "
            "down); no Job, and the node counts as preparing",
            "no KernelCacheNode: KServe's node reconciler has not made it",
            command("kubectl", "kcache", "doctor", "--only", "kcn-missing"),
        )
    gates.append(NodeGate("kernelcachenode", True, f"KernelCacheNode {node.name} exists"))
    entry = next((e for e in kcn.entries if e.key == key), None)
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
            command("kubectl", "kcache", "doctor", "--only", "agent"),
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
                _cmd("kubectl", "-n", c.KSERVE_NAMESPACE, "describe", f"pod/{agent.name}", names=(agent.name,)),
            )
            if entry is None or entry.state != c.ENTRY_READY:
                return trace
        else:
            gates.append(NodeGate("agent-pod", True, f"agent pod {running[0].name} Running and Ready"))
    warnings = sh.index.agent_events.get(node.name, [])
    if not sh.agent_events_read:
        gates.append(NodeGate("agent-pass", None, "the agent's events not read"))
    elif warnings:
        w = warnings[0]
        text = f"{w.reason}: {w.message}"
        trace = stop(
            "agent-pass",
            False,
            f"the agent's pass fails (its Warning event on KernelCacheNode {node.name}, {w.count or 1}x, last "
            f"{w.last_seen or 'unknown'}): {text}",
            f"the agent's pass fails: {text}",
            _cmd(
                "kubectl",
                "-n",
                c.AGENT_EVENTS_NAMESPACE,
                "get",
                "events",
                "--field-selector",
                f"involvedObject.name={node.name}",
                names=(node.name,),
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
            _cmd(
                "kubectl",
                "-n",
                c.KSERVE_NAMESPACE,
                "logs",
                f"pod/{pods[0].name}" if pods else f"daemonset/{c.AGENT_DAEMONSET}",
                names=(pods[0].name,) if pods else (),
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
        _cmd("kubectl", "-n", jns, "describe", f"job/{job.meta.name}", names=(jns, job.meta.name)) if job else None
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
            _kc_cmd(ctx, "get", "-o", "yaml"),
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
            _cmd("kubectl", "-n", jns, "delete", f"job/{job.meta.name}", names=(jns, job.meta.name)),
        )
    elif p.state == prep.JOB_NOT_STARTED:
        gates.append(NodeGate("job", WAITING, f"Job {job.meta.name} has not started yet (no startTime)"))
    else:
        gates.append(NodeGate("job", True, f"Job {job.meta.name} {p.state}"))
    # the pod, only while the Job is not terminal
    if job is not None and not p.terminal:
        if p.failure is not None and p.failed_pod is not None:
            pod_info = (p.failed_pod.name, p.failure.message)
            describe_pod = _cmd(
                "kubectl", "-n", jns, "describe", f"pod/{p.failed_pod.name}", names=(jns, p.failed_pod.name)
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
                _cmd("kubectl", "-n", jns, "describe", f"pod/{unsched.name}", names=(jns, unsched.name)),
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
    if entry.state == c.ENTRY_ERROR:
        gates.append(NodeGate("entry-state", False, f"{state_text}{when}"))
        return NodeTrace(
            node.name,
            member,
            ready,
            cordoned,
            tuple(gates),
            entry,
            job_info,
            pod_info,
            f"the entry is Error: {entry.message}",
            describe_job,
        )
    gates.append(NodeGate("entry-state", WAITING, f"{state_text}{when}"))
    return NodeTrace(
        node.name,
        member,
        ready,
        cordoned,
        tuple(gates),
        entry,
        job_info,
        pod_info,
        f"preparing: {entry.state or 'Pending'}" + (f" ({entry.message})" if entry.message else ""),
        describe_job,
    )


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


def _fold(nodes: Iterable[NodeTrace | tuple[str, str, str, str | None]]) -> tuple[Cause, ...]:
    """One line per distinct cause of the Ready members not Ready (NotReady members apart, last); a node is a
    trace, or (name, blocking gate, cause, next) when no chain was kept (-A)."""
    groups: dict[tuple[str, str], list[tuple[str, str | None]]] = {}
    for n in nodes:
        name, gate, cause, nxt = (n.name, n.blocked_by, n.cause, n.next) if isinstance(n, NodeTrace) else n
        if gate is None:
            continue
        groups.setdefault((gate, cause), []).append((name, nxt))
    out = [
        Cause(cause, gate, tuple(x for x, _ in ts), next((y for _, y in ts if y), None))
        for (gate, cause), ts in groups.items()
    ]
    order = {g: i for i, g in enumerate(NODE_GATES)}
    return tuple(sorted(out, key=lambda x: (x.gate in ("member", "ready"), -len(x.nodes), order.get(x.gate, 99))))


# ---- the answer -----------------------------------------------------------------------------------------


def explain(
    snapshot: ClusterSnapshot,
    namespace: str,
    name: str,
    nodes: Iterable[str] = (),
    index: EntryIndex | None = None,
    summary: bool = False,
) -> WhyNotReady:
    """The chain for KernelCache `namespace/name`; `nodes`: nodes to trace besides the group's members; `index`:
    the snapshot's entry index, when many caches are explained (-A); `summary`: keep no node chains, only the
    causes (the members the aggregate counts Ready are not traced, and members in the same situation without a
    Job share one chain)."""
    kc = snapshot.kc_by_key.get(f"{namespace}/{name}")
    if kc is None:
        return WhyNotReady(namespace, name, None, False, (CacheGate("exists", False, "not found"),), (), None, None)
    config = read_config(snapshot.configmap(c.KSERVE_NAMESPACE, c.CONFIGMAP_NAME))
    cfg = config.config
    default_group = cfg.default_node_group if cfg is not None else ""
    group_name = effective_group(kc, default_group)
    ctx = _Context(
        snapshot,
        kc,
        config,
        cfg.job_namespace if cfg is not None else "",
        group_name,
        snapshot.group_by_name.get(group_name),
        [],
    )
    gates = tuple(_cache_gates(ctx))
    stop = next((g for g in gates if g.passed is not True and g.passed is not None), None)
    sh = _shared(ctx, stop)
    members = membership_of(snapshot).members_of_group.get(group_name, []) if ctx.group is not None else []
    if summary:
        return _summary(ctx, sh, gates, members, index)
    traces = [_node_chain(ctx, sh, n, True, []) for n in members]
    seen = {n.name for n in members}
    for extra in nodes:
        if extra in seen:
            continue
        node = snapshot.node_by_name.get(extra)
        if node is None:
            continue
        missing = (
            [
                f"{k}={v} wanted, has {node.labels[k]!r}" if k in node.labels else f"no label {k}"
                for k, v in sorted(ctx.group.node_selector.items())
                if node.labels.get(k) != v
            ]
            if ctx.group is not None
            else []
        )
        traces.append(_node_chain(ctx, sh, node, False, missing))
    aggregate = compute_aggregate(kc, members, snapshot.kcn_by_name, index) if ctx.group is not None else None
    written = _written(kc)
    admission = _admission_note(snapshot, kc)
    return WhyNotReady(
        namespace,
        name,
        group_name or None,
        True,
        gates,
        tuple(traces),
        aggregate,
        written,  # type: ignore[arg-type]
        admission,
        tuple(ctx.unread),
        _fold(traces),
    )


def _written(kc: o.KernelCache) -> Any:
    """(state, reason, message, counts) of the status KServe wrote, or None."""
    if kc.status is None:
        return None
    k = kc.status.counts
    return (*_written_tuple(kc), (k.node_count, k.nodes_ready, k.nodes_preparing, k.nodes_error) if k else (0, 0, 0, 0))


def _summary(
    ctx: _Context, sh: _Shared, gates: tuple[CacheGate, ...], members: list[o.Node], index: EntryIndex | None
) -> WhyNotReady:
    """-A's answer for one KernelCache: the causes of the Ready members the aggregate does not count Ready. A
    member with no Job for the cache is in a situation its KernelCacheNode, agent, agent events and entry
    decide: one chain per distinct situation (a fleet where thousands of nodes lack the same entry builds one)."""
    kc, snap = ctx.kc, ctx.snapshot
    aggregate = compute_aggregate(kc, members, snap.kcn_by_name, index) if ctx.group is not None else None
    held = set(aggregate.error_nodes) | set(aggregate.preparing_nodes) if aggregate is not None else set()
    key = f"{kc.namespace}/{kc.name}"
    seen: dict[tuple[Any, ...], tuple[str | None, str, str | None]] = {}
    records: list[tuple[str, str, str, str | None]] = []
    for node in members:
        if node.name not in held:
            continue
        situation: tuple[Any, ...] | None = None
        if not sh.jobs_for(kc, node.name):
            kcn = snap.kcn_by_name.get(node.name)
            status = kcn.status if kcn is not None else None
            entry = ((status.cache_status if status is not None else None) or {}).get(key)
            agents = tuple((p.phase, p.ready, p.meta.deleting) for p in sh.index.agent_pods.get(node.name, ()))
            warnings = sh.index.agent_events.get(node.name)
            situation = (
                node.unschedulable,
                kcn is not None,
                agents,
                (warnings[0].reason, warnings[0].message) if warnings else None,
                None if entry is None else (entry.state, entry.message, entry.image_reference, entry.footprints),
            )
        found = seen.get(situation) if situation is not None else None
        if found is None:
            trace = _node_chain(ctx, sh, node, True, [])
            found = (trace.blocked_by, trace.cause, trace.next)
            if situation is not None:
                seen[situation] = found
        if found[0] is not None:
            records.append((node.name, found[0], found[1], found[2]))
    counted = aggregate.counts.node_count if aggregate is not None else 0
    ready = aggregate.counts.nodes_ready if aggregate is not None else 0
    return WhyNotReady(
        kc.namespace,
        kc.name,
        ctx.group_name or None,
        True,
        gates,
        (),
        aggregate,
        _written(kc),
        "",
        tuple(ctx.unread),
        _fold(records),
        summary=(counted, ready),
    )


def _admission_note(snapshot: ClusterSnapshot, kc: o.KernelCache) -> str:
    """Whether the pod webhook can use the cache today: any KernelCacheNode, of any node, with a Ready entry
    of the spec's image and footprints (Ready on the KernelCache is not required)."""
    key = f"{kc.namespace}/{kc.name}"
    where = [
        k.name
        for k in snapshot.kcns
        for e in k.entries
        if e.key == key and e.state == c.ENTRY_READY and entry_matches_cache(e, kc)
    ]
    if where:
        return (
            f"the pod webhook can mount it today: {len(where)} KernelCacheNode(s) have a Ready entry with its "
            f"artifact (e.g. {where[0]}); Ready on the KernelCache is not required"
        )
    return "the pod webhook cannot mount it today: no KernelCacheNode has a Ready entry with its artifact"


@dataclass(frozen=True)
class WhyNotReadyFleet:
    """why-not-ready without a KernelCache: the chain of every KernelCache in scope, not Ready ones first."""

    rows: tuple[WhyNotReady, ...]

    @property
    def all_ready(self) -> bool:
        return all(w.ready for w in self.rows)

    @property
    def unread(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(u for w in self.rows for u in w.unread))

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "WhyNotReadyList",
            "version": VERSION,
            "items": [w.to_dict() for w in self.rows],
        }


def explain_all(
    snapshot: ClusterSnapshot, namespace: str | None, selector: str = "", group: str = ""
) -> WhyNotReadyFleet:
    """The chain of every KernelCache in `namespace` (None: all), with these labels (`-l`, kubectl's syntax)
    and in this group (`--group`): not Ready first, then by namespace and name."""
    from ..kernelcache.selectors import label_selector_matches
    from .fleet import check_selector

    match = check_selector(selector) if selector else None
    config = read_config(snapshot.configmap(c.KSERVE_NAMESPACE, c.CONFIGMAP_NAME))
    default_group = config.config.default_node_group if config.config is not None else ""
    rows = []
    for kc in snapshot.kernel_caches:
        if namespace is not None and kc.namespace != namespace:
            continue
        if match is not None and not label_selector_matches(match, kc.meta.labels):
            continue
        if group and effective_group(kc, default_group) != group:
            continue
        rows.append(explain(snapshot, kc.namespace, kc.name, index=entry_index_of(snapshot), summary=True))
    rows.sort(key=lambda w: (w.ready, w.namespace, w.name))
    return WhyNotReadyFleet(tuple(rows))
