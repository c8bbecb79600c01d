"""THE READ PLAN: every list the commands make, named once, and which of them each command makes.

The live collector (`snapshot/live.py`), the reconcile informers (`reconcile/loop.py`), `status -w`, the doctor
checks' read declarations, the explanations' `require` calls and the read-only ClusterRole of
docs/checks.md all take their lists from here. Reading a new kind live: add its Kind (`snapshot/kinds.py`), one
`ListSpec` below, and put it in the plans of the commands that read it.

Two namespaces are placeholders, resolved when the command runs (`resolve`): `SCOPE` is the namespace of
`-n` (None: all namespaces), `JOB_NAMESPACE` the configured `kernelcache.jobNamespace`.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..kernelcache import constants as c
from ..kernelcache import controller as kserve_controller
from ..kube import resources as r
from . import kinds
from .kinds import ListSpec

SCOPE = "{namespace}"
JOB_NAMESPACE = "{jobNamespace}"


def by_name(name: str) -> str:
    return f"metadata.name={name}"


NODES = ListSpec(r.NODES)
NODE_GROUPS = ListSpec(r.NODE_GROUPS)
KERNEL_CACHE_NODES = ListSpec(r.KERNEL_CACHE_NODES)
KERNEL_CACHES = ListSpec(r.KERNEL_CACHES, SCOPE)
CAPTURES = ListSpec(r.CAPTURES, SCOPE)
CONFIGMAP = ListSpec(r.CONFIGMAPS, c.KSERVE_NAMESPACE, field_selector=by_name(c.CONFIGMAP_NAME))
AGENT_DAEMONSET = ListSpec(r.DAEMONSETS, c.KSERVE_NAMESPACE, field_selector=by_name(c.AGENT_DAEMONSET))
AGENT_PODS = ListSpec(r.PODS, c.KSERVE_NAMESPACE, label_selector="=".join(c.AGENT_POD_LABEL))
CONTROLLER = ListSpec(r.DEPLOYMENTS, c.KSERVE_NAMESPACE, field_selector=by_name(c.CONTROLLER_DEPLOYMENT))
WEBHOOK = ListSpec(r.MUTATING_WEBHOOKS, field_selector=by_name(c.WEBHOOK_CONFIGURATION))
CAPTURE_WEBHOOK = ListSpec(r.VALIDATING_WEBHOOKS, field_selector=by_name(c.CAPTURE_WEBHOOK_CONFIGURATION))
WEBHOOK_ENDPOINTS = ListSpec(
    r.ENDPOINT_SLICES, c.KSERVE_NAMESPACE, label_selector=f"kubernetes.io/service-name={c.WEBHOOK_SERVICE}"
)
CRDS = tuple(
    ListSpec(r.CRDS, field_selector=by_name(c.CRD_NAMES[kind]))
    for kind in (c.KIND_NODE_GROUP, c.KIND_NODE, c.KIND_CACHE, c.KIND_CAPTURE)
)
# all of them: the job namespace, and the labels the pod webhook's namespaceSelector reads
NAMESPACES = ListSpec(r.NAMESPACES)
PREPARATION_JOBS = ListSpec(r.JOBS, JOB_NAMESPACE, label_selector=c.LABEL_JOB_CACHE_NAME)
PREPARATION_PODS = ListSpec(r.PODS, JOB_NAMESPACE, label_selector=c.LABEL_JOB_CACHE_NAME)
PREFETCHER_SERVICE_ACCOUNTS = tuple(
    ListSpec(r.SERVICE_ACCOUNTS, JOB_NAMESPACE, field_selector=by_name(sa)) for sa in c.PREFETCHER_SERVICE_ACCOUNTS
)
PREFETCHER_ROLE_BINDINGS = tuple(
    ListSpec(r.ROLE_BINDINGS, SCOPE, field_selector=by_name(rb)) for rb in c.PREFETCHER_ROLE_BINDINGS
)
# the captures' identities in their namespaces (by KServe's managed labels; the token requester by name, so
# that one KServe does not manage is seen); Secrets by metadata only (`resources.SECRETS`)
TOKEN_REQUESTER_BINDINGS = ListSpec(r.ROLE_BINDINGS, SCOPE, field_selector=by_name(c.TOKEN_REQUESTER))
REPORTER_SERVICE_ACCOUNTS = ListSpec(r.SERVICE_ACCOUNTS, SCOPE, label_selector=f"{c.REPORTER_LABEL}=true")
REPORTER_ROLES = ListSpec(r.ROLES, SCOPE, label_selector=f"{c.REPORTER_LABEL}=true")
REPORTER_ROLE_BINDINGS = ListSpec(r.ROLE_BINDINGS, SCOPE, label_selector=f"{c.REPORTER_LABEL}=true")
REPORTER_SECRETS = ListSpec(r.SECRETS, SCOPE, label_selector=f"{c.REPORTER_LABEL}=true")
PUSHER_SERVICE_ACCOUNTS = ListSpec(r.SERVICE_ACCOUNTS, SCOPE, label_selector=f"{c.REGISTRY_LABEL}=true")
PUSHER_ROLE_BINDINGS = ListSpec(r.ROLE_BINDINGS, SCOPE, label_selector=f"{c.REGISTRY_LABEL}=true")
REGISTRY_SECRETS = ListSpec(r.SECRETS, SCOPE, label_selector=f"{c.REGISTRY_LABEL}=true")
CAPTURE_IDENTITIES = (
    TOKEN_REQUESTER_BINDINGS,
    REPORTER_SERVICE_ACCOUNTS,
    REPORTER_ROLES,
    REPORTER_ROLE_BINDINGS,
    REPORTER_SECRETS,
    PUSHER_SERVICE_ACCOUNTS,
    PUSHER_ROLE_BINDINGS,
    REGISTRY_SECRETS,
)
# InferenceService pods (by label): producers for captures and why-group, consumers for why-not-cached
ISVC_PODS = ListSpec(r.PODS, SCOPE, label_selector=c.LABEL_ISVC)
# their ReplicaSets: the pod templates the pod webhook will see (capture-sidecar)
ISVC_REPLICASETS = ListSpec(r.REPLICASETS, SCOPE, label_selector=c.LABEL_ISVC)
CAPTURE_WARNINGS = ListSpec(r.EVENTS, SCOPE, field_selector=f"involvedObject.kind={c.KIND_CAPTURE},type=Warning")
FAILED_CREATES = ListSpec(r.EVENTS, SCOPE, field_selector="involvedObject.kind=ReplicaSet,reason=FailedCreate")
# the Job controller's Warnings on preparation Jobs (FailedCreate: pod creation refused by PodSecurity, a
# ResourceQuota or a webhook), and the node agents' Warnings on their KernelCacheNodes (ConfigError,
# ReconcileError, ImageValidationError; cluster-scoped objects, so their events land in `default`)
JOB_WARNINGS = ListSpec(r.EVENTS, JOB_NAMESPACE, field_selector="involvedObject.kind=Job,type=Warning")
AGENT_WARNINGS = ListSpec(
    r.EVENTS, c.AGENT_EVENTS_NAMESPACE, field_selector=f"involvedObject.kind={c.KIND_NODE},type=Warning"
)


def pod(namespace: str, name: str) -> ListSpec:
    return ListSpec(r.PODS, namespace, field_selector=by_name(name))


def serving_pod(namespace: str, name: str) -> ListSpec:
    """What an explanation needs of its pod, an InferenceService pod: read by name (live), or among the
    InferenceService pods (a dump) both cover it."""
    return ListSpec(r.PODS, namespace, label_selector=c.LABEL_ISVC, field_selector=by_name(name))


def node(name: str) -> ListSpec:
    return ListSpec(r.NODES, field_selector=by_name(name))


def namespace(name: str) -> ListSpec:
    return ListSpec(r.NAMESPACES, field_selector=by_name(name))


# ---- per command -------------------------------------------------------------------------------------------

# doctor and dump, in the order they are made: the first lists (the ConfigMap among them names the job
# namespace), then those that need it. Each list has the part of `collect.Scope` it belongs to.
DOCTOR_FIRST: tuple[tuple[str, ListSpec], ...] = (
    ("nodes", NODES),
    ("core", NODE_GROUPS),
    ("core", KERNEL_CACHE_NODES),
    ("core", KERNEL_CACHES),
    ("capture_list", CAPTURES),  # also for producers: a capture's active session names its producer pod
    ("core", CONFIGMAP),
    ("install", AGENT_DAEMONSET),
    ("agent_pods", AGENT_PODS),
    ("install", CONTROLLER),
    ("install", WEBHOOK),
    ("install", CAPTURE_WEBHOOK),
    ("install", WEBHOOK_ENDPOINTS),
    *(("install", crd) for crd in CRDS),
)
DOCTOR_THEN: tuple[tuple[str, ListSpec], ...] = (
    ("namespaces", NAMESPACES),
    ("preparation", PREPARATION_JOBS),
    ("preparation", PREPARATION_PODS),
    *(("preparation", sa) for sa in PREFETCHER_SERVICE_ACCOUNTS),
    *(("preparation", rb) for rb in PREFETCHER_ROLE_BINDINGS),
    ("producers", ISVC_PODS),
    ("producers", ISVC_REPLICASETS),
    ("events", CAPTURE_WARNINGS),
    ("events", FAILED_CREATES),
    ("events", JOB_WARNINGS),
    ("events", AGENT_WARNINGS),
    *(("captures", spec) for spec in CAPTURE_IDENTITIES),
)
DOCTOR = tuple(spec for _, spec in DOCTOR_FIRST + DOCTOR_THEN)
# status (and status -w): the counts
STATUS = (NODES, NODE_GROUPS, KERNEL_CACHE_NODES, KERNEL_CACHES, CONFIGMAP, AGENT_PODS)
# reconcile: what its informers watch, and what --dry-run and --once list; a plan is made only when every
# one of them was read completely
# what a plan depends on
RECONCILE_PLAN = (
    NODES,
    NODE_GROUPS,
    KERNEL_CACHE_NODES,
    KERNEL_CACHES.in_namespace(None),
    CAPTURES.in_namespace(None),
    CONFIGMAP,
    AGENT_DAEMONSET,
)
# who else writes what reconcile owns (reconcile/peers.py; only a write is refused while one is active):
# every Deployment, since KServe's controller is known by name, labels or image in any namespace; KServe's
# managers' Leases by name, and other kubectl-kcache controllers' Leases by label
DEPLOYMENTS = ListSpec(r.DEPLOYMENTS)
KSERVE_LEASES = tuple(ListSpec(r.LEASES, field_selector=by_name(name)) for name in kserve_controller.LEASES)
PLUGIN_LEASES = ListSpec(r.LEASES, label_selector="=".join(kserve_controller.PLUGIN_LEASE_LABEL))
RECONCILE_PEERS = (DEPLOYMENTS, *KSERVE_LEASES, PLUGIN_LEASES)
# what its informers watch, and what --once lists
RECONCILE = RECONCILE_PLAN + RECONCILE_PEERS
# what grants or refuses its writes, as deploy/ ships them (the RBAC of deploy/rbac.yaml in its namespace,
# the fence of deploy/fence.yaml), by name and metadata only: a change re-probes a refused write at once
# (a grant made elsewhere is found by the next probe); not needed for a plan, so not waited for
RECONCILE_ACCESS_NAME = "kubectl-kcache-reconcile"
RECONCILE_FENCE_NAME = "kubectl-kcache-reconcile-fence"
RECONCILE_ACCESS = tuple(
    ListSpec(res, c.KSERVE_NAMESPACE if res.namespaced else None, field_selector=by_name(name))
    for res, name in zip(r.ACCESS_RULES, (RECONCILE_ACCESS_NAME,) * 4 + (RECONCILE_FENCE_NAME,) * 2, strict=True)
)


def why_group(ns: str, pod_name: str | None, nodes: Iterable[str] = ()) -> tuple[ListSpec, ...]:
    """What why-group reads: the namespace's captures (first: they may name the pod), the pod, the
    namespace's KernelCaches, the groups, the ConfigMap, and the nodes the decision looks at."""
    return (
        CAPTURES.in_namespace(ns),
        *((pod(ns, pod_name),) if pod_name else ()),
        KERNEL_CACHES.in_namespace(ns),
        NODE_GROUPS,
        CONFIGMAP,
        *(node(n) for n in nodes),
    )


def why_not_cached(ns: str, pod_name: str | None, nodes: Iterable[str] = ()) -> tuple[ListSpec, ...]:
    """What why-not-cached reads: the pod, every KernelCacheNode (KServe lists them all), the namespace's
    KernelCaches and captures (the sidecar step skips a revision whose capture is terminal), the ConfigMap, the
    pod webhook's configuration and its Service's endpoints (whether it can be called), the namespace, the
    groups, the pod's node."""
    return (
        *((pod(ns, pod_name),) if pod_name else ()),
        KERNEL_CACHE_NODES,
        KERNEL_CACHES.in_namespace(ns),
        CAPTURES.in_namespace(ns),
        CONFIGMAP,
        WEBHOOK,
        WEBHOOK_ENDPOINTS,
        namespace(ns),
        NODE_GROUPS,
        *(node(n) for n in nodes),
    )


def fields_of(command: str) -> frozenset[str]:
    """The snapshot fields the lists of `why-group` or `why-not-cached` fill: what a file selection decodes for
    it (snapshot/files), so that reading a new kind is one change here."""
    specs = {"why-group": why_group, "why-not-cached": why_not_cached}[command]("", "pod", ("node",))
    return frozenset(kinds.for_resource(spec.resource).field for spec in specs)


# why-not-ready: the chain of one KernelCache (§2.4) and, with -A, of every one in scope. Nodes with their
# image lists (the image presence check); the job namespace's lists after the ConfigMap names it.
WHY_NOT_READY_FIRST = (
    NODES,
    NODE_GROUPS,
    KERNEL_CACHE_NODES,
    KERNEL_CACHES,
    CAPTURES,
    CONFIGMAP,
    AGENT_DAEMONSET,
    AGENT_PODS,
    CONTROLLER,
    AGENT_WARNINGS,
)
WHY_NOT_READY_THEN = (
    NAMESPACES,
    PREPARATION_JOBS,
    PREPARATION_PODS,
    JOB_WARNINGS,
    *PREFETCHER_SERVICE_ACCOUNTS,
    *PREFETCHER_ROLE_BINDINGS,
)
WHY_NOT_READY = WHY_NOT_READY_FIRST + WHY_NOT_READY_THEN


def resolve(spec: ListSpec, scope: str | None = None, job_namespace: str | None = None) -> ListSpec:
    """`spec` with its placeholder namespace filled in (-n's namespace, or the job namespace)."""
    if spec.namespace == SCOPE:
        return spec.in_namespace(scope)
    if spec.namespace == JOB_NAMESPACE:
        return spec.in_namespace(job_namespace)
    return spec


def every_list() -> tuple[ListSpec, ...]:
    """Every list a read command makes, and what reconcile plans from (placeholders left in; per-name lists
    as their resource): the read-only ClusterRole grants exactly these resources. Reconcile's own role is
    deploy/rbac.yaml."""
    dynamic = (pod(SCOPE, "<pod>"), node("<node>"), namespace("<namespace>"))
    return tuple(dict.fromkeys(DOCTOR + STATUS + RECONCILE_PLAN + dynamic))
