"""Where each API resource the plugin reads or writes lives (group, version, plural, kind, scope).

These are the API coordinates of the registry of kinds (`kubectl_kcache/snapshot/kinds.py` binds each to its
Struct and snapshot field); they live here because the transport below the objects needs them too.
"""

from __future__ import annotations

from typing import Generic, TypeVar
from urllib.parse import quote

import msgspec

T = TypeVar("T")


class Resource(msgspec.Struct, frozen=True):
    """An API resource: where it lives and whether it is namespaced."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    # listed as PartialObjectMetadataList: the API server sends names, labels and owners, never the values
    metadata_only: bool = False

    def path(self, namespace: str | None = None, name: str | None = None, sub: str | None = None) -> str:
        base = f"/api/{self.version}" if not self.group else f"/apis/{self.group}/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{quote(namespace, safe='')}"
        base += f"/{self.plural}"
        if name:
            base += f"/{quote(name, safe='')}"
        if sub:
            base += f"/{sub}"
        return base

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


class Page(msgspec.Struct, Generic[T], frozen=True):
    """One page of a list: its items, the list's resourceVersion and the continue token ("" at the end)."""

    items: list[T]
    resource_version: str
    continue_token: str


KSERVE_GROUP = "serving.kserve.io"
KSERVE_VERSION = "v1alpha1"

NODES = Resource("", "v1", "nodes", "Node", False)
NAMESPACES = Resource("", "v1", "namespaces", "Namespace", False)
PODS = Resource("", "v1", "pods", "Pod", True)
CONFIGMAPS = Resource("", "v1", "configmaps", "ConfigMap", True)
EVENTS = Resource("", "v1", "events", "Event", True)
EVENTS_V1 = Resource("events.k8s.io", "v1", "events", "Event", True)
SERVICE_ACCOUNTS = Resource("", "v1", "serviceaccounts", "ServiceAccount", True)
DAEMONSETS = Resource("apps", "v1", "daemonsets", "DaemonSet", True)
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment", True)
REPLICASETS = Resource("apps", "v1", "replicasets", "ReplicaSet", True)
JOBS = Resource("batch", "v1", "jobs", "Job", True)
LEASES = Resource("coordination.k8s.io", "v1", "leases", "Lease", True)
ROLES = Resource("rbac.authorization.k8s.io", "v1", "roles", "Role", True)
# Secrets: only ever listed by metadata (a Secret's data is never asked for, kept or shown)
SECRETS = Resource("", "v1", "secrets", "Secret", True, metadata_only=True)
ROLE_BINDINGS = Resource("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True)
MUTATING_WEBHOOKS = Resource(
    "admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", "MutatingWebhookConfiguration", False
)
VALIDATING_WEBHOOKS = Resource(
    "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", "ValidatingWebhookConfiguration", False
)
ENDPOINT_SLICES = Resource("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", True)
CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False)
NODE_GROUPS = Resource(KSERVE_GROUP, KSERVE_VERSION, "kernelcachenodegroups", "KernelCacheNodeGroup", False)
KERNEL_CACHE_NODES = Resource(KSERVE_GROUP, KSERVE_VERSION, "kernelcachenodes", "KernelCacheNode", False)
KERNEL_CACHES = Resource(KSERVE_GROUP, KSERVE_VERSION, "kernelcaches", "KernelCache", True)
CAPTURES = Resource(KSERVE_GROUP, KSERVE_VERSION, "kernelcachecaptures", "KernelCacheCapture", True)

# what grants or refuses reconcile's writes (RBAC, admission policies), watched by metadata only: a change
# re-probes a refused write at once
_RBAC = "rbac.authorization.k8s.io"
_ADMISSION = "admissionregistration.k8s.io"
ACCESS_RULES = (
    Resource(_RBAC, "v1", "clusterroles", "ClusterRole", False, metadata_only=True),
    Resource(_RBAC, "v1", "clusterrolebindings", "ClusterRoleBinding", False, metadata_only=True),
    Resource(_RBAC, "v1", "roles", "Role", True, metadata_only=True),
    Resource(_RBAC, "v1", "rolebindings", "RoleBinding", True, metadata_only=True),
    Resource(_ADMISSION, "v1", "validatingadmissionpolicies", "ValidatingAdmissionPolicy", False, metadata_only=True),
    Resource(
        _ADMISSION,
        "v1",
        "validatingadmissionpolicybindings",
        "ValidatingAdmissionPolicyBinding",
        False,
        metadata_only=True,
    ),
)
