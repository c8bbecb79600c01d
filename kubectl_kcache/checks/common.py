"""What several checks need from one snapshot, computed once: the kernelcache configuration as KServe
reads it, group membership, the agent's DaemonSet and pods, the snapshot's clock; and small helpers
that word findings and hints the same way everywhere."""

from __future__ import annotations

import datetime as dt
import gc
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import cached_property
from itertools import chain
from typing import Any, TypeVar

import msgspec

from .. import apivalidation
from .. import objects as o
from ..kernelcache import constants as c
from ..kernelcache import webhook_reach
from ..kernelcache.capture import CaptureCache, capture_caches
from ..kernelcache.config import ConfigState, KernelCacheConfig, read_config
from ..kernelcache.membership import Membership, MembershipPlan, membership_of, plan_memberships
from ..objects import parse_time as parse_time  # checks read times through common
from ..snapshot import plan as readplan
from ..snapshot.kinds import ListSpec
from ..snapshot.model import ClusterSnapshot
from ..snapshot.reads import NOT_IN_INPUT, NOT_READ, Read, covering
from ..suggest import Json, Name, Namespace, Selector, kubectl, kubectl_or_none
from .model import Finding, ObjectRef

_T = TypeVar("_T")

# ---- reads ----------------------------------------------------------------------------------------


def resolved(snapshot: ClusterSnapshot, spec: ListSpec) -> ListSpec:
    """A list of the read plan in this snapshot's terms: its scope namespace and the configured job namespace."""
    if spec.namespace not in (readplan.SCOPE, readplan.JOB_NAMESPACE):
        return spec
    job_ns = facts(snapshot).config.job_namespace if spec.namespace == readplan.JOB_NAMESPACE else None
    return readplan.resolve(spec, snapshot.meta.namespace, job_ns)


def read_of(snapshot: ClusterSnapshot, what: ListSpec | tuple[ListSpec, ...]) -> Read:
    """The read that speaks for a list of the plan (`reads.covering`); of several, the first not ok. Kept per
    snapshot: checks ask it for each of thousands of objects."""
    memo: dict[Any, Read] = snapshot.derived("read-of", dict)
    found = memo.get(what)
    if found is None:
        reads = [covering(snapshot, resolved(snapshot, s)) for s in (what if isinstance(what, tuple) else (what,))]
        found = memo[what] = next((r for r in reads if not r.ok), reads[0])
    return found


def ready_endpoints(snapshot: ClusterSnapshot, namespace: str, service: str) -> int | None:
    """Ready endpoints behind a webhook's Service, or None when its EndpointSlices could not be read."""
    if not observed(snapshot, readplan.WEBHOOK_ENDPOINTS, bool(snapshot.endpoint_slices)):
        return None
    return webhook_reach.ready_endpoints(snapshot.endpoint_slices, namespace, service)


def endpoints_command(namespace: str, service: str) -> str:
    return kubectl(
        "-n {ns} get endpointslices -l {selector}",
        ns=Namespace(namespace),
        selector=Selector.of({"kubernetes.io/service-name": service}),
    )


def read_ok(snapshot: ClusterSnapshot, what: ListSpec | tuple[ListSpec, ...]) -> bool:
    return read_of(snapshot, what).ok


def observed(snapshot: ClusterSnapshot, what: ListSpec | tuple[ListSpec, ...], present: bool) -> bool:
    """Whether the absence of an object of a list can be trusted: the read was ok and, for plain files
    (every read only assumed ok), the files hold at least one object of that kind (`present`), so that a
    user who did not export, say, Namespaces does not get told the job namespace is missing."""
    if not read_ok(snapshot, what):
        return False
    return present or not snapshot.reads_assumed


# ---- the feature's configuration ------------------------------------------------------------------


class Feature(msgspec.Struct, frozen=True):
    """The kernelcache configuration as KServe sees it, or what is assumed when it could not be read."""

    read: str  # the status of its read: ok | forbidden | absent | failed | not-in-input | not-read
    state: ConfigState | None  # None unless read ok

    @property
    def known(self) -> bool:
        return self.state is not None

    @property
    def valid(self) -> bool:
        return self.state is not None and self.state.config is not None

    @property
    def config(self) -> KernelCacheConfig:
        """The effective configuration; KServe's defaults (enabled) when it could not be read."""
        if self.state is not None and self.state.config is not None:
            return self.state.config
        if self.state is None:
            return KernelCacheConfig(enabled=True)
        return KernelCacheConfig()

    @property
    def enabled(self) -> bool:
        return self.state.enabled if self.state is not None else True

    def not_applicable(self) -> str | None:
        """Why checks of the feature do not apply, or None when they do (or it is unknown)."""
        if self.state is None:
            return None
        if self.state.config is None:
            return (
                "the kernelcache configuration is missing or invalid (see check config): KServe's "
                "kernel cache controllers do nothing until it is fixed"
            )
        if not self.state.config.enabled:
            return "the kernel cache feature is disabled (kernelcache.enabled is false; see check config)"
        return None

    def assumption(self) -> str:
        """Said on checks that ran without the configuration."""
        if self.state is not None:
            return ""
        why = {NOT_READ: "not read", NOT_IN_INPUT: "not in the input"}.get(self.read, self.read)
        return f"assumed enabled with KServe's default settings ({why}: list configmaps in {c.KSERVE_NAMESPACE})"


def feature(snapshot: ClusterSnapshot) -> Feature:
    return facts(snapshot).feature


# ---- facts ----------------------------------------------------------------------------------------


class Facts:
    """Derived data of one snapshot, each computed on first use."""

    def __init__(self, snapshot: ClusterSnapshot):
        self.s = snapshot

    @cached_property
    def feature(self) -> Feature:
        r = covering(self.s, readplan.CONFIGMAP)
        if not r.ok:
            return Feature(r.status, None)
        return Feature("ok", read_config(self.s.configmap(c.KSERVE_NAMESPACE, c.CONFIGMAP_NAME)))

    @property
    def config(self) -> KernelCacheConfig:
        return self.feature.config

    @property
    def membership(self) -> Membership:
        """The snapshot's group membership (computed once per snapshot, from its label index)."""
        return membership_of(self.s)

    @property
    def groups_of_node(self) -> dict[str, list[o.NodeGroup]]:
        """Node name -> the groups it is a member of (sorted by name); members only."""
        return self.membership.groups_of_node

    @property
    def members_of_group(self) -> dict[str, list[o.Node]]:
        return self.membership.members_of_group

    @property
    def member_nodes(self) -> list[o.Node]:
        return self.membership.member_nodes

    def first_group(self, node: str) -> str | None:
        groups = self.groups_of_node.get(node)
        return groups[0].name if groups else None

    @cached_property
    def membership_plan(self) -> MembershipPlan:
        """KServe's KernelCacheNode plan (the one `reconcile` executes)."""
        return plan_memberships(self.s.nodes, self.s.node_groups, self.s.kcns, self.membership)

    @cached_property
    def capture_caches(self) -> dict[tuple[str, str], CaptureCache]:
        """(namespace, name) of each capture -> what KServe's KernelCache reconciler does with it (the plan
        `kubectl kcache reconcile` executes)."""
        return {
            (cc.capture.namespace, cc.capture.name): cc
            for cc in capture_caches(
                self.s.captures,
                self.s.kc_by_key,
                self.s.group_by_name,
                self.s.node_by_name,
                self.config.default_node_group,
                self.membership,
            )
        }

    @cached_property
    def agent_daemonset(self) -> o.DaemonSet | None:
        return self.s.daemonset(c.KSERVE_NAMESPACE, c.AGENT_DAEMONSET)

    @cached_property
    def agent_pods_by_node(self) -> dict[str, list[o.Pod]]:
        def by_node() -> dict[str, list[o.Pod]]:
            key, value = c.AGENT_POD_LABEL
            out: dict[str, list[o.Pod]] = {}
            for pod in self.s.pods_labelled(c.KSERVE_NAMESPACE, key, value):
                out.setdefault(pod.node_name, []).append(pod)
            return out

        return self.s.derived("agent-pods-by-node", by_node, on=("pods",))

    @cached_property
    def now(self) -> dt.datetime:
        """The snapshot's time (when it was taken), else the newest time in input files that do not say when
        they were taken, else (live) the current time."""
        meta = self.s.meta
        return parse_time(meta.taken_at) or parse_time(meta.clock) or dt.datetime.now(dt.timezone.utc)


_LAST: list[tuple[ClusterSnapshot, Facts]] = []


def forget() -> None:
    """Drop the kept Facts (and with them the snapshot)."""
    _LAST.clear()


@contextmanager
def checks_running() -> Iterator[None]:
    """Around checks run on a snapshot: the cyclic GC off, then the kept Facts dropped. The checks make many
    small short-lived objects next to a large, long-lived snapshot: without this the cyclic GC rescans the whole
    snapshot again and again (more than half the time on 5,000 nodes)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        forget()
        if enabled:
            gc.enable()


def facts(snapshot: ClusterSnapshot) -> Facts:
    """The Facts of `snapshot`; the last one is kept, so the checks of one doctor run share it."""
    if _LAST and _LAST[0][0] is snapshot:
        return _LAST[0][1]
    f = Facts(snapshot)
    _LAST[:] = [(snapshot, f)]
    return f


def judged_each(
    snapshot: ClusterSnapshot,
    check: str,
    items: Iterable[_T],
    judge: Callable[[_T], Iterable[Finding]],
    on: tuple[str, ...],
    context: Any = None,
    same: Callable[[_T], tuple[Any, ...]] | None = None,
) -> Iterator[Finding]:
    """A check's findings of every item (a member node, a KernelCacheNode), `judge(item)` each, in order. Over
    the next snapshot of a kept-current view (the monitor) an item's findings are reused while what it was judged
    from holds: the fields `on` the very same objects, `context` (what else the judge reads) equal, and the
    objects `same(item)` (the item itself, by default) the very same; so a node changed is judged again, not
    the other 50,000 (`snapshot.model.Judged`)."""
    # (kept as tuples: the findings of most nodes are the one empty tuple)
    kept = snapshot.judged(f"judged/{check}", on).each(items, lambda item: tuple(judge(item)), context, same=same)
    return chain.from_iterable(kept)


# ---- time -----------------------------------------------------------------------------------------


def rfc3339(t: dt.datetime) -> str:
    """A time as the API writes it (UTC, seconds). Messages give absolute times, never "5m ago", so that a
    report from the live cluster and one from its dump taken moments later are identical."""
    return t.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc3339_after(t: dt.datetime, seconds: float) -> str:
    """The time `seconds` after `t`, as rfc3339 writes it; past year 9999 (a TTL of 1e15 seconds) in words."""
    try:
        return rfc3339(t + dt.timedelta(seconds=seconds))
    except (OverflowError, ValueError):
        return "after the year 9999"


# ---- wording --------------------------------------------------------------------------------------


def fmt_selector(selector: Mapping[str, str]) -> str:
    """A nodeSelector for a message: `k=v,k2=v2`, a key or value Kubernetes would refuse as a label quoted
    (a key holding `=` or `,` must not read as two labels)."""

    def word(text: str, errors: list[str]) -> str:
        return apivalidation.go_quote(text) if errors else text

    return ",".join(
        f"{word(k, apivalidation.qualified_name_errors(k))}={word(v, apivalidation.label_value_errors(v))}"
        for k, v in sorted(selector.items())
    )


def selector_arg(selector: Mapping[str, str]) -> str | None:
    """The selector as `kubectl get -l` takes it; None when a key or value is not a valid label (no node can
    carry it, and kubectl would read it as something else)."""
    for k, v in selector.items():
        if apivalidation.qualified_name_errors(k) or apivalidation.label_value_errors(v):
            return None
    return ",".join(f"{k}={v}" for k, v in sorted(selector.items()))


def nodes_command(group: o.NodeGroup, selector: Mapping[str, str] | None = None, columns: str = "") -> str:
    """`kubectl get nodes -l SELECTOR` for a group's selector (or `selector`), with the `columns` named
    (taints, ready, cordoned, kubelet); the group itself when the selector cannot be a label selector."""
    sel = Selector.of(dict(sorted((group.node_selector if selector is None else selector).items())))
    if sel.problem() is not None:
        return show_group_command(group.name)
    if columns == "taints":
        return kubectl("get nodes -l {s} -o custom-columns=NAME:.metadata.name,TAINTS:.spec.taints[*].key", s=sel)
    if columns == "ready":
        return kubectl(
            "get nodes -l {s} -o "
            "custom-columns=NAME:.metadata.name,READY:.status.conditions[?(@.type=='Ready')].status",
            s=sel,
        )
    if columns == "cordoned":
        return kubectl("get nodes -l {s} -o custom-columns=NAME:.metadata.name,CORDONED:.spec.unschedulable", s=sel)
    if columns == "kubelet":
        return kubectl(
            "get nodes -l {s} -o custom-columns=NAME:.metadata.name,KUBELET:.status.nodeInfo.kubeletVersion", s=sel
        )
    return kubectl("get nodes -l {s}", s=sel)


def pod_logs(namespace: str, pod: str, container: str) -> str:
    """`kubectl logs` of a pod's container."""
    return kubectl(
        "-n {ns} logs {pod} -c {container}",
        ns=Namespace(namespace),
        pod=Name("pod", pod),
        container=Name("container", container),
    )


def show_group_command(name: str) -> str:
    return kubectl("get kernelcachenodegroup {group} -o yaml", group=Name("kernelcachenodegroup", name))


def join_names(names: Iterable[str], limit: int = 10) -> str:
    names = list(names)
    if len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[:limit]) + f" and {len(names) - limit} more"


def node_ref(name: str) -> ObjectRef:
    return ObjectRef("Node", name)


def group_ref(name: str) -> ObjectRef:
    return ObjectRef(c.KIND_NODE_GROUP, name)


def config_ref() -> ObjectRef:
    return ObjectRef("ConfigMap", c.CONFIGMAP_NAME, c.KSERVE_NAMESPACE)


EDIT_CONFIG = f"kubectl -n {c.KSERVE_NAMESPACE} edit configmap {c.CONFIGMAP_NAME}"
RECONCILE = "kubectl kcache reconcile --once"
# KServe's node reconciler watches KernelCacheNodeGroups, Nodes and its ConfigMap only (node_reconciler.go).
NODE_PASS_TRIGGERS = (
    "KServe's node pass runs on KernelCacheNodeGroup, Node and inferenceservice-config changes, "
    "not on KernelCacheNode or DaemonSet changes: where kubelets update their Node every few "
    "minutes it is repaired within minutes; if it lasts, KServe's controller is not running or "
    "its pass fails (touch a group to trigger a pass, or run `kubectl kcache reconcile --once`)"
)


def touch_group_hint(group: str | None) -> str:
    """A command that triggers KServe's node pass now (a group change), else the embedded reconcile."""
    if not group:
        return RECONCILE
    annotate = kubectl_or_none("annotate kernelcachenodegroup {group}", group=Name("kernelcachenodegroup", group))
    return annotate + ' kcache.kserve.io/touched-at="$(date +%s)" --overwrite' if annotate else RECONCILE


def toleration_for(taint: o.Taint) -> dict[str, str]:
    """The toleration to add for a taint: its key with Exists (any value) and its effect."""
    return {"key": taint.key, "operator": "Exists", "effect": taint.effect}


def add_tolerations_hint(group: o.NodeGroup, taints: Iterable[o.Taint]) -> str:
    """`kubectl patch kernelcachenodegroup` with a JSON patch that appends a toleration per taint."""
    tols: list[dict[str, str]] = []
    ops: list[dict[str, object]]
    for t in taints:
        tol = toleration_for(t)
        if tol not in tols:
            tols.append(tol)
    if group.tolerations:
        ops = [{"op": "add", "path": "/spec/tolerations/-", "value": t} for t in tols]
    else:
        ops = [{"op": "add", "path": "/spec/tolerations", "value": tols}]
    return kubectl(
        "patch kernelcachenodegroup {group} --type=json -p {ops}",
        group=Name("kernelcachenodegroup", group.name),
        ops=Json(ops),
    )


def condition_text(cond: o.Condition | None) -> str:
    """`Reason: message` of a condition ('' when absent)."""
    if cond is None:
        return ""
    if cond.reason and cond.message:
        return f"{cond.reason}: {cond.message}"
    return cond.reason or cond.message


_VERSION = re.compile(r"^v?(\d+)\.(\d+)")


def minor_version(version: str) -> tuple[int, int] | None:
    """(major, minor) of a Kubernetes version such as v1.33.2-eks-1 or v1.31.0+k3s1."""
    m = _VERSION.match(version.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None
