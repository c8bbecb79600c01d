"""The planner: a pure function from a snapshot to the actions KServe's controller would take for its
node-group duties.

- node pass (node_reconciler.go), only while `kernelcache.enabled`: abort on a group with an empty selector;
  the agent DaemonSet must exist (KServe fails the pass before touching KernelCacheNodes otherwise); refuse
  when a group's toleration is one Kubernetes rejects (KServe's patch then fails every pass); patch its
  placement when KServe's comparison says it differs; create a KernelCacheNode per member node; delete the
  others.
- capture pass (cache_reconciler.go, capture_cache_reconciler.go), per KernelCache name generated from a
  complete capture (`kernelcache.capture.capture_caches`): when the KernelCache does not exist (whatever the
  capture's kernelCacheRef says) and the feature is enabled, select the node group; on success create it and
  link it, on failure one Warning event and nothing else; when it exists, only link (no selection, no event;
  also while the feature is disabled, as KServe links before it reads its configuration).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from ..kernelcache import constants as c
from ..kernelcache.capture import CREATE, LINK, MISMATCH, SHADOWED, TERMINATING, capture_caches
from ..kernelcache.config import KernelCacheConfig, read_config
from ..kernelcache.membership import membership_of, plan_memberships
from ..kernelcache.placement import placement_changes, placement_diff, placement_patch, rejected_tolerations
from ..objects import Capture
from ..snapshot.model import ClusterSnapshot
from ..snapshot.plan import RECONCILE_PLAN
from ..snapshot.reads import require
from . import actions as a


@dataclass
class Plan:
    actions: list[a.Action] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # why parts of the work were not planned

    @property
    def writes(self) -> list[a.Action]:
        return [x for x in self.actions if x.is_write]

    @property
    def events(self) -> list[a.Action]:
        return [x for x in self.actions if not x.is_write]


def checked_plan(snapshot: ClusterSnapshot) -> Plan:
    """The plan, made only from complete reads of every list it depends on (`readplan.RECONCILE_PLAN`):
    otherwise exit 3 naming the lists the cluster did not give, or 2 when input files lack them. A plan
    from unread data would delete what exists or re-create what is there."""
    require(snapshot, "reconcile", RECONCILE_PLAN)
    return plan(snapshot)


def plan(snapshot: ClusterSnapshot) -> Plan:
    """The plan over a snapshot whose reads are known to be complete (the informers' stores; `checked_plan`)."""
    out = Plan()
    state = read_config(snapshot.configmap(c.KSERVE_NAMESPACE, c.CONFIGMAP_NAME))
    config = state.config
    if config is None:
        out.notes.append(
            f"kernel cache configuration unusable: {state.error}; KServe runs no node pass and "
            "creates no KernelCache until it is fixed (it still links captures to existing ones)"
        )
    elif not config.enabled:
        out.notes.append(
            "kernel cache is disabled in inferenceservice-config (kernelcache.enabled is false): KServe "
            "runs no node pass and creates no KernelCache (it still links captures to existing ones)"
        )
    else:
        _plan_nodes(snapshot, out)
    _plan_captures(snapshot, config if config is not None and config.enabled else None, out)
    return out


def _plan_nodes(snapshot: ClusterSnapshot, out: Plan) -> None:
    groups = list(snapshot.node_groups)
    memberships = plan_memberships(snapshot.nodes, groups, snapshot.kcns, membership_of(snapshot))
    if memberships.blocked_by:
        out.notes.append(
            f"{memberships.blocked_by}: KServe aborts the node pass (no placement or KernelCacheNode changes)"
        )
        return
    ds = snapshot.daemonset(c.KSERVE_NAMESPACE, c.AGENT_DAEMONSET)
    if ds is None:
        out.notes.append(
            f"DaemonSet {c.KSERVE_NAMESPACE}/{c.AGENT_DAEMONSET} not found: KServe fails the node "
            "pass before touching KernelCacheNodes (get KernelCacheNode agent DaemonSet)"
        )
        return
    rejected = rejected_tolerations(groups)
    if rejected:
        out.notes.append(
            f"{'; '.join(rejected.lines())}: Kubernetes rejects these tolerations, so KServe's node "
            f"pass fails at the agent DaemonSet patch ({rejected.api_text}); not patching it, and no "
            "KernelCacheNode is created or deleted, as in KServe, until the group is fixed"
        )
        return
    diff = placement_diff(ds, groups)
    if diff:
        out.actions.append(
            a.Action(
                a.PATCH,
                "DaemonSet",
                c.AGENT_DAEMONSET,
                "; ".join(diff.describe()),
                namespace=c.KSERVE_NAMESPACE,
                body=placement_patch(ds, groups),
                diff=tuple(placement_changes(ds, groups)),
            )
        )
    for name in memberships.missing:
        out.actions.append(
            a.Action(
                a.CREATE,
                c.KIND_NODE,
                name,
                f"node {name} matches a KernelCacheNodeGroup",
                body={"apiVersion": c.API_VERSION, "kind": c.KIND_NODE, "metadata": {"name": name}},
            )
        )
    for name in memberships.orphaned:
        kcn = snapshot.kcn_by_name[name]
        why = "node is gone" if name not in snapshot.node_by_name else "node matches no KernelCacheNodeGroup"
        out.actions.append(a.Action(a.DELETE, c.KIND_NODE, name, why, uid=kcn.meta.uid))


def _plan_captures(snapshot: ClusterSnapshot, config: KernelCacheConfig | None, out: Plan) -> None:
    """KServe's KernelCache reconciler, per generated name: create (only while enabled) or link."""
    for cc in capture_caches(
        snapshot.captures,
        snapshot.kc_by_key,
        snapshot.group_by_name,
        snapshot.node_by_name,
        config.default_node_group if config is not None else "",
        membership_of(snapshot),
    ):
        capture, outcome = cc.capture, cc.outcome
        name = outcome.kernel_cache
        if outcome.outcome == MISMATCH:
            out.notes.append(f"{outcome.reason}: KServe refuses to link them and stops that KernelCache's pass")
        elif outcome.outcome == TERMINATING:  # never link a capture to a dying KernelCache
            out.notes.append(outcome.reason)
        elif outcome.outcome == SHADOWED:
            out.notes.append(
                f"capture {capture.namespace}/{capture.name} maps to KernelCache {name} like capture "
                f"{outcome.owner}: KServe links only one capture per KernelCache name"
            )
        elif outcome.outcome == LINK:
            out.actions.append(_link(capture, name, outcome.ref_was))
        elif outcome.outcome == CREATE and config is not None:
            assert cc.decision is not None and capture.artifact is not None
            decision = cc.decision
            if not decision.ok:
                out.actions.append(
                    a.Action(
                        a.EVENT,
                        "Event",
                        capture.name,
                        "node-group selection failed",
                        namespace=capture.namespace,
                        event_reason=decision.reason,
                        message=decision.message,
                        uid=capture.meta.uid,
                    )
                )
                continue
            why = f"captured by {capture.name}"
            if capture.kernel_cache_ref is not None and not outcome.ref_was:
                why += " (it was deleted: KServe re-creates it)"
            out.actions.append(
                a.Action(
                    a.CREATE,
                    c.KIND_CACHE,
                    name,
                    why,
                    namespace=capture.namespace,
                    node_group=decision.group,
                    selection_source=decision.source,
                    body=kernel_cache_body(
                        capture, name, decision.group or "", decision.source or "", config.default_mount_type
                    ),
                )
            )
            if capture.kernel_cache_ref is None or outcome.ref_was:  # setCaptureKernelCacheRef: no-op when equal
                out.actions.append(_link(capture, name, outcome.ref_was))


def _link(capture: Capture, name: str, ref_was: str) -> a.Action:
    why = f"link KernelCache {name} (status.kernelCacheRef" + (f", was {ref_was})" if ref_was else ")")
    planned = {
        "captureSessionID": capture.runtime_result.get("captureSessionID", ""),
        "artifact": dict(capture.artifact.raw) if capture.artifact is not None else None,
    }
    return a.Action(
        a.UPDATE_STATUS,
        c.KIND_CAPTURE,
        capture.name,
        why,
        namespace=capture.namespace,
        uid=capture.meta.uid,
        related=name,
        body=planned,
    )


def kernel_cache_body(capture: Capture, name: str, group: str, source: str, mount_type: str) -> dict[str, object]:
    assert capture.artifact is not None
    return {
        "apiVersion": c.API_VERSION,
        "kind": c.KIND_CACHE,
        "metadata": {
            "name": name,
            "namespace": capture.namespace,
            "annotations": {c.ANNOTATION_SELECTION_SOURCE: source},
        },
        "spec": {
            "artifact": copy.deepcopy(dict(capture.artifact.raw)),
            "mountType": mount_type or c.MOUNT_TYPE_OCI,
            "nodeGroupRef": {"name": group},
        },
    }
