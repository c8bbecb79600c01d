"""The API resources the plugin reads and writes."""

from .client import Resource

KSERVE_GROUP = "serving.kserve.io"
KSERVE_VERSION = "v1alpha1"

NODES = Resource("", "v1", "nodes", "Node", False)
NAMESPACES = Resource("", "v1", "namespaces", "Namespace", False)
PODS = Resource("", "v1", "pods", "Pod", True)
CONFIGMAPS = Resource("", "v1", "configmaps", "ConfigMap", True)
EVENTS = Resource("", "v1", "events", "Event", True)
SERVICE_ACCOUNTS = Resource("", "v1", "serviceaccounts", "ServiceAccount", True)
DAEMONSETS = Resource("apps", "v1", "daemonsets", "DaemonSet", True)
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment", True)
JOBS = Resource("batch", "v1", "jobs", "Job", True)
LEASES = Resource("coordination.k8s.io", "v1", "leases", "Lease", True)
ROLE_BINDINGS = Resource("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True)
MUTATING_WEBHOOKS = Resource(
    "admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", "MutatingWebhookConfiguration", False
)
ENDPOINT_SLICES = Resource("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", True)
CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False)
NODE_GROUPS = Resource(KSERVE_GROUP, KSERVE_VERSION, "kernelcachenodegroups", "KernelCacheNodeGroup", False)
KERNEL_CACHE_NODES = Resource(KSERVE_GROUP, KSERVE_VERSION, "kernelcachenodes", "KernelCacheNode", False)
KERNEL_CACHES = Resource(KSERVE_GROUP, KSERVE_VERSION, "kernelcaches", "KernelCache", True)
CAPTURES = Resource(KSERVE_GROUP, KSERVE_VERSION, "kernelcachecaptures", "KernelCacheCapture", True)
