"""why-not-ready's cache level: one KernelCache pass in KServe's order (§2.4 A, §7.2's order of checks); the
first gate that stops decides for every node."""

from __future__ import annotations

from typing import Any

import msgspec

from .. import objects as o
from ..kernelcache import constants as c
from ..kernelcache import preparation as prep
from ..kernelcache.cache_pass import LINK, NODE_GROUP, PREFETCH_REQUEUE, pass_stop
from ..kernelcache.capture import cache_outcomes
from ..kernelcache.config import SECURITY_CERT, ConfigState
from ..kernelcache.membership import membership_of
from ..kernelcache.names import label_value
from ..kernelcache.prefetcher import identity_error, requeue_holders
from ..snapshot import plan
from ..snapshot.model import ClusterSnapshot
from ..snapshot.reads import unusable
from ..suggest import Name, Namespace, Selector, kubectl, kubectl_or_none
from .ready_index import chain_index
from .ready_model import WAITING, CacheGate

# ---- the cache level ------------------------------------------------------------------------------------


class CacheContext(msgspec.Struct):
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
        answers: dict[Any, Any] = self.snapshot.derived("why-not-ready-reads", dict)
        if spec not in answers:
            answers[spec] = unusable(self.snapshot, spec, True)
        problem = answers[spec]
        if problem is None:
            return True
        text = f"{problem} ({what})"
        if text not in self.unread:
            self.unread.append(text)
        return False


def kc_command(ctx: CacheContext, edit: bool = False) -> str | None:
    """The KernelCache as YAML, or opened in an editor."""
    cache_ns, cache = Namespace(ctx.kc.namespace), Name("kernelcache", ctx.kc.name)
    if edit:
        return kubectl_or_none("-n {ns} edit kernelcaches/{kc}", ns=cache_ns, kc=cache)
    return kubectl_or_none("-n {ns} get -o yaml kernelcaches/{kc}", ns=cache_ns, kc=cache)


def cache_gates(ctx: CacheContext) -> list[CacheGate]:
    kc, snap = ctx.kc, ctx.snapshot
    gates: list[CacheGate] = []
    written = written_condition(kc)
    if kc.meta.deleting:
        held = ", ".join(kc.meta.finalizers) or "none"
        gates.append(
            CacheGate(
                "exists",
                False,
                f"terminating since {kc.meta.deletion_timestamp}: KServe does nothing for it (no link, no status, "
                "no Jobs)",
                evidence=(f"finalizers: {held}",),
                next=kc_command(ctx),
            )
        )
        return gates
    gates.append(CacheGate("exists", True, "exists, not terminating"))
    captures_read = ctx.read(plan.CAPTURES, "the capture link is not checked")
    outcomes = (
        snap.derived("capture-outcomes", lambda: cache_outcomes(snap.captures, snap.kc_by_key)) if captures_read else {}
    )
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
        gates.append(CacheGate("capture-link", False, stop.text, next=kc_command(ctx)))
        return gates
    gates.append(CacheGate("capture-link", True if captures_read else None, "no artifact mismatch with its capture"))
    gates.append(CacheGate("usage", True, "the usage bookkeeping does not stop the pass (KServe returns its errors)"))
    cfg = ctx.config
    edit = kubectl(
        "-n {ns} edit configmap {cm}", ns=Namespace(c.KSERVE_NAMESPACE), cm=Name("configmap", c.CONFIGMAP_NAME)
    )
    if cfg.config is None:
        gates.append(CacheGate("config", False, cfg.error, ("Error", "ConfigError", cfg.error), next=edit))
        return gates
    mount = kc.mount_type or cfg.config.default_mount_type
    if kc.mount_type and kc.mount_type != c.MOUNT_TYPE_OCI:
        text = f'unsupported KernelCache mount type "{kc.mount_type}"'
        gates.append(CacheGate("config", False, text, ("Error", "ConfigError", text), next=kc_command(ctx, edit=True)))
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


def written_condition(kc: o.KernelCache) -> tuple[str, str, str]:
    cond = o.find_condition(kc.conditions, "Ready")
    return (kc.state, cond.reason if cond else "", cond.message if cond else "")


def _verification(ctx: CacheContext, written: tuple[str, str, str]) -> CacheGate:
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
            next=kc_command(ctx),
        )
    if v is not None and v.state == "Succeeded" and v.verified:
        return CacheGate("verification", True, "verified (cert mode)")
    return CacheGate(
        "verification",
        WAITING,
        "cert mode: not verified yet (KServe verifies on its next pass; no Job before it succeeds)",
        next=kc_command(ctx),
    )


def _group_gate(ctx: CacheContext) -> CacheGate:
    name, group = ctx.group_name, ctx.group
    if not name:
        text = "nodeGroupRef.name is required and default node group is not specified"
        return CacheGate("group", False, text, ("Error", "NodeGroupNotFound", text), next=kc_command(ctx, edit=True))
    if group is None:
        if not ctx.read(plan.NODE_GROUPS, "the group is not checked"):
            return CacheGate("group", None, f"group {name} not read")
        text = "referenced KernelCacheNodeGroup was not found"
        return CacheGate(
            "group",
            False,
            f"group {name!r} does not exist: {text}",
            ("Error", "NodeGroupNotFound", text),
            next=kubectl("get kernelcachenodegroups"),
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
            "group",
            False,
            text,
            next=kubectl_or_none("edit kernelcachenodegroups/{group}", group=Name("kernelcachenodegroup", name)),
        )
    members = membership_of(ctx.snapshot).members_of_group.get(name, [])
    ready = ctx.snapshot.derived(f"ready-members/{name}", lambda: [n for n in members if n.ready is True])
    # the same for every KernelCache of the group (-A and the monitor explain thousands): once per snapshot
    lister = ctx.snapshot.derived(
        f"group-lister/{name}",
        lambda: kubectl_or_none(
            "get nodes -l {selector}", selector=Selector.of(dict(sorted(group.node_selector.items())))
        ),
    )
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
    cordoned = ctx.snapshot.derived(f"ready-cordoned/{name}", lambda: sum(1 for n in ready if n.unschedulable))
    extra = f" ({cordoned} cordoned: they count and their Job's pod cannot be scheduled)" if cordoned else ""
    return CacheGate("group", True, f"group {name}: {len(ready)} Ready of {len(members)} members = nodeCount{extra}")


def _job_namespace_gate(ctx: CacheContext) -> CacheGate:
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
        next=kubectl_or_none("create namespace {ns}", ns=Namespace(ns)),
    )


def _identity_gate(ctx: CacheContext) -> CacheGate:
    assert ctx.config.config is not None
    sa_read = ctx.read(plan.PREFETCHER_SERVICE_ACCOUNTS, "the prefetcher ServiceAccount is not checked")
    rb_read = ctx.read(plan.PREFETCHER_ROLE_BINDINGS, "the prefetcher RoleBinding is not checked")
    error = identity_error(
        ctx.config.config, ctx.kc.namespace, ctx.snapshot.service_accounts, ctx.snapshot.role_bindings
    )
    if error:
        if "RoleBinding" in error:  # the binding in the KernelCache's namespace: its namespace's caches fail
            scope = "of the namespace"
            nxt = kubectl_or_none(
                "-n {ns} get rolebinding/{rb} -o yaml",
                ns=Namespace(ctx.kc.namespace),
                rb=Name("rolebinding", c.PREFETCHER_ROLE_BINDINGS[0]),
            )
        elif "ServiceAccount" in error:  # the one in the job namespace: every KernelCache of the cluster fails
            scope = "of the cluster"
            nxt = kubectl_or_none(
                "-n {ns} get serviceaccount/{sa} -o yaml",
                ns=Namespace(ctx.job_namespace),
                sa=Name("serviceaccount", c.PREFETCHER_SERVICE_ACCOUNTS[0]),
            )
        else:  # the configuration (pullRoleRef)
            scope = "of the cluster"
            nxt = kubectl(
                "-n {ns} edit configmap {cm}", ns=Namespace(c.KSERVE_NAMESPACE), cm=Name("configmap", c.CONFIGMAP_NAME)
            )
        return CacheGate(
            "prefetcher-identity",
            False,
            f"{error}: every KernelCache {scope} fails before its Jobs",
            ("Error", "StorageError", error),
            next=nxt,
        )
    if not (sa_read and rb_read):
        return CacheGate("prefetcher-identity", None, "not read")
    return CacheGate(
        "prefetcher-identity", True, "the prefetcher ServiceAccount and RoleBinding are as KServe needs them"
    )


def _never_ends(snap: ClusterSnapshot, job: o.Job) -> bool:
    """A running prefetch Job that will not finish by itself: suspended, refused its pods, or its pod stuck on
    a failure the kubelet retries for ever (ImagePullBackOff never fails the pod)."""
    index = chain_index(snap, job.meta.namespace or "")
    p = prep.preparation(job, index.pods_by_job.get(job.meta.name, []), index.events_by_job.get(job.meta.name, []))
    return p.state in (prep.JOB_SUSPENDED, prep.JOB_FAILED_CREATE) or p.failure is not None


def _requeue_gate(ctx: CacheContext) -> CacheGate:
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
    stuck = [h for h in holders if not h.orphan and _never_ends(snap, h.job)]
    if stuck and not orphans:  # a Job of this namespace that never ends by itself holds the passes for good
        first = stuck[0].job
        text = (
            f"prefetch Job {first.meta.namespace}/{first.meta.name} (for {stuck[0].cache}) will not finish by itself "
            f"(its pod is stuck, or it is suspended or gets no pod) and the managed RoleBinding "
            f"{kc.namespace}/{c.PREFETCHER_ROLE_BINDINGS[0]} exists: KServe requeues every KernelCache pass of "
            "the namespace every minute before it creates Jobs or writes status, until someone deletes the Job"
        )
        orphans = stuck
    jns = first.meta.namespace or ctx.job_namespace
    nxt = (
        kubectl_or_none("-n {ns} delete job/{job}", ns=Namespace(jns), job=Name("job", first.meta.name))
        if orphans
        else kubectl_or_none(
            "-n {ns} get jobs -l {selector}",
            ns=Namespace(jns),
            selector=Selector.of({c.LABEL_JOB_CACHE_NAMESPACE: label_value(kc.namespace)}),
        )
    )
    return CacheGate("requeue", False if orphans else WAITING, text, evidence=evidence, next=nxt)
