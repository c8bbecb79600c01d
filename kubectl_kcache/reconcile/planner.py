"""The planner: a pure function from a snapshot to the actions KServe's controller would take for its
node-group duties. Everything is gated on `kernelcache.enabled`.

- node pass (node_reconciler.go): abort on a group with an empty selector; the agent DaemonSet must exist
  (KServe fails the pass before touching KernelCacheNodes otherwise); patch its placement when KServe's
  comparison says it differs; create a KernelCacheNode per member node; delete the others.
- capture pass (capture_cache_reconciler.go): for each complete capture without a kernelCacheRef, select
  the node group; on success create the KernelCache under KServe's generated name (unless it exists)
  and link it from the capture's status; on failure, one Warning event and nothing else.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from ..kernelcache import constants as c
from ..kernelcache.capture import needs_kernel_cache
from ..kernelcache.config import ConfigState, read_config
from ..kernelcache.membership import plan_memberships
from ..kernelcache.names import generated_kernel_cache_name
from ..kernelcache.placement import placement_diff, placement_patch
from ..kernelcache.selection import select_node_group
from ..objects import Capture
from ..snapshot import ClusterSnapshot
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


def plan(snapshot: ClusterSnapshot) -> Plan:
    out = Plan()
    state = read_config(snapshot.configmap(c.KSERVE_NAMESPACE, c.CONFIGMAP_NAME))
    if state.config is None:
        out.notes.append(f"kernel cache configuration unusable: {state.error}; nothing planned")
        return out
    if not state.config.enabled:
        out.notes.append("kernel cache is disabled in inferenceservice-config (kernelcache.enabled is false); "
                         "nothing planned")
        return out
    _plan_nodes(snapshot, out)
    _plan_captures(snapshot, state, out)
    return out


def _plan_nodes(snapshot: ClusterSnapshot, out: Plan) -> None:
    groups = list(snapshot.node_groups)
    memberships = plan_memberships(snapshot.nodes, groups, snapshot.kcns)
    if memberships.blocked_by:
        out.notes.append(f"{memberships.blocked_by}: KServe aborts the node pass (no placement or "
                         "KernelCacheNode changes)")
        return
    ds = snapshot.daemonset(c.KSERVE_NAMESPACE, c.AGENT_DAEMONSET)
    if ds is None:
        out.notes.append(f"DaemonSet {c.KSERVE_NAMESPACE}/{c.AGENT_DAEMONSET} not found: KServe fails the node "
                         "pass before touching KernelCacheNodes (get KernelCacheNode agent DaemonSet)")
        return
    diff = placement_diff(ds, groups)
    if diff:
        out.actions.append(a.Action(a.PATCH, "DaemonSet", c.AGENT_DAEMONSET, "; ".join(diff.describe()),
                                    namespace=c.KSERVE_NAMESPACE, body=placement_patch(ds, groups)))
    for name in memberships.missing:
        out.actions.append(a.Action(a.CREATE, c.KIND_NODE, name, f"node {name} matches a KernelCacheNodeGroup",
                                    body={"apiVersion": c.API_VERSION, "kind": c.KIND_NODE,
                                          "metadata": {"name": name}}))
    for name in memberships.orphaned:
        kcn = snapshot.kcn_by_name[name]
        why = "node is gone" if name not in snapshot.node_by_name else "node matches no KernelCacheNodeGroup"
        out.actions.append(a.Action(a.DELETE, c.KIND_NODE, name, why, uid=kcn.meta.uid))


def _plan_captures(snapshot: ClusterSnapshot, state: ConfigState, out: Plan) -> None:
    config = state.config
    assert config is not None
    for capture in sorted(snapshot.captures, key=lambda x: (x.namespace, x.name)):
        if not needs_kernel_cache(capture):
            continue
        assert capture.artifact is not None
        decision = select_node_group(capture.active_session, snapshot.group_by_name, snapshot.node_by_name,
                                     config.default_node_group)
        if not decision.ok:
            out.actions.append(a.Action(a.EVENT, "Event", capture.name, "node-group selection failed",
                                        namespace=capture.namespace, event_reason=decision.reason,
                                        message=decision.message, uid=capture.meta.uid))
            continue
        name = generated_kernel_cache_name(capture.name, capture.artifact.image_reference)
        existing = snapshot.kc_by_key.get(f"{capture.namespace}/{name}")
        if existing is None:
            out.actions.append(a.Action(
                a.CREATE, c.KIND_CACHE, name, f"captured by {capture.name}", namespace=capture.namespace,
                node_group=decision.group, selection_source=decision.source,
                body=kernel_cache_body(capture, name, decision.group or "", decision.source or "",
                                       config.default_mount_type)))
        elif existing.artifact is None or dict(existing.artifact.raw) != dict(capture.artifact.raw):
            out.notes.append(f"KernelCache {capture.namespace}/{name} artifact does not match KernelCacheCapture "
                             f"{capture.namespace}/{capture.name}")
            continue
        out.actions.append(a.Action(a.UPDATE_STATUS, c.KIND_CAPTURE, capture.name,
                                    f"link KernelCache {name} (status.kernelCacheRef)", namespace=capture.namespace,
                                    uid=capture.meta.uid, related=name))


def kernel_cache_body(capture: Capture, name: str, group: str, source: str, mount_type: str) -> dict[str, object]:
    assert capture.artifact is not None
    return {
        "apiVersion": c.API_VERSION, "kind": c.KIND_CACHE,
        "metadata": {"name": name, "namespace": capture.namespace,
                     "annotations": {c.ANNOTATION_SELECTION_SOURCE: source}},
        "spec": {"artifact": copy.deepcopy(dict(capture.artifact.raw)), "mountType": mount_type or c.MOUNT_TYPE_OCI,
                 "nodeGroupRef": {"name": group}},
    }
