"""Slim, frozen views of the Kubernetes objects the plugin reads, declared as msgspec Structs.

A Struct mirrors the API's JSON for the fields the commands use; every other field is skipped by the
decoder and never built (a 30 KB GPU node keeps ~1 KB). The same types decode live list pages, watch
events, JSON files (bytes straight into Structs) and YAML files (`msgspec.convert` of libyaml's output):
see `objects/decode.py` for the functions and `snapshot/kinds.py` for which type each kind has. The types live
by API group: `base.py` (the decoding rules, metadata, conditions, taints, tolerations, label selectors, times),
`serving.py` (the Kernel Cache kinds), `core.py` (nodes, pods, events, ConfigMaps, ServiceAccounts, Secrets,
Namespaces), `apps.py` (DaemonSets, Deployments, ReplicaSets, Jobs) and `cluster.py` (webhook configurations,
EndpointSlices, RBAC, CRDs); this package exports those the other packages read.

Kubernetes' quirks kept here:
- null means absent: a field that is null takes its default (`_Obj.__post_init__`), as Go's decoder does;
- int-or-string: integers given as strings ("60") are accepted (lax decoding), label and other string-map
  values given as numbers (YAML's `gpu.count: 8`) become their string;
- booleans given as "true"/"false" are accepted.
A value of the wrong type is a `msgspec.ValidationError` with the path of the field, which `objects/decode.py`
turns into an `ObjectError` naming the file, the object and the path.

The attribute API (`node.name`, `node.labels`, `node.taints`, `node.ready`, `group.node_selector`,
`kc.artifact.footprints`, `capture.active_session`, `pod.containers`, ...) is kept as properties over the
wire layout; values derived from several fields are computed once (cached) or are cheap.
"""

from __future__ import annotations

from .apps import DaemonSet, DaemonSetStatus, Deployment, Job, ReplicaSet
from .base import (
    Condition,
    Items,
    LabelSelector,
    Meta,
    NamespacedName,
    ObjectError,
    OwnerRef,
    PartialObject,
    SelectorRequirement,
    Taint,
    Toleration,
    _Object,
    describe,
    find_condition,
    parse_time,
)
from .cluster import Crd, EndpointSlice, Role, RoleBinding, WebhookConfiguration, WebhookEntry
from .coordination import Lease
from .core import (
    ConfigMap,
    Container,
    EnvVar,
    Event,
    Namespace,
    Node,
    NodeSpec,
    NodeWithoutImages,
    Pod,
    PodSpec,
    Secret,
    ServiceAccount,
    Volume,
    VolumeMount,
)
from .serving import (
    ActiveSession,
    Artifact,
    CacheEntry,
    CachePath,
    CacheStatus,
    Capture,
    Footprints,
    KernelCache,
    KernelCacheNode,
    NodeGroup,
    Signing,
    Usage,
    Verification,
)
from .writers import DaemonSetWriters, KernelCacheNodeWriters

# the Structs decoded as top-level objects
OBJECT_TYPES: tuple[type[_Object], ...] = (
    Node,
    NodeGroup,
    KernelCacheNode,
    KernelCache,
    Capture,
    Pod,
    DaemonSet,
    Deployment,
    ReplicaSet,
    Job,
    Event,
    ConfigMap,
    WebhookConfiguration,
    EndpointSlice,
    ServiceAccount,
    RoleBinding,
    Role,
    Secret,
    Namespace,
    Crd,
    Lease,
)

__all__ = [
    "KernelCacheNodeWriters",
    "Lease",
    "ActiveSession",
    "Artifact",
    "CacheEntry",
    "CachePath",
    "CacheStatus",
    "Capture",
    "Condition",
    "ConfigMap",
    "DaemonSetWriters",
    "Container",
    "Crd",
    "DaemonSet",
    "DaemonSetStatus",
    "Deployment",
    "EndpointSlice",
    "EnvVar",
    "Event",
    "Footprints",
    "Items",
    "Job",
    "KernelCache",
    "KernelCacheNode",
    "LabelSelector",
    "Meta",
    "Namespace",
    "NamespacedName",
    "Node",
    "NodeGroup",
    "NodeSpec",
    "NodeWithoutImages",
    "OBJECT_TYPES",
    "ObjectError",
    "OwnerRef",
    "PartialObject",
    "Pod",
    "PodSpec",
    "ReplicaSet",
    "Role",
    "RoleBinding",
    "Secret",
    "SelectorRequirement",
    "ServiceAccount",
    "Signing",
    "Taint",
    "Toleration",
    "Usage",
    "Verification",
    "Volume",
    "VolumeMount",
    "WebhookConfiguration",
    "WebhookEntry",
    "describe",
    "find_condition",
    "parse_time",
]
