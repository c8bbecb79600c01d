"""KServe's names, keys, reasons and message formats, exactly as its controller uses them."""

GROUP = "serving.kserve.io"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"

KIND_NODE_GROUP = "KernelCacheNodeGroup"
KIND_NODE = "KernelCacheNode"
KIND_CACHE = "KernelCache"
KIND_CAPTURE = "KernelCacheCapture"

PLURAL_NODE_GROUPS = "kernelcachenodegroups"
PLURAL_NODES = "kernelcachenodes"
PLURAL_CACHES = "kernelcaches"
PLURAL_CAPTURES = "kernelcachecaptures"
CRD_NAMES = {
    KIND_NODE_GROUP: f"{PLURAL_NODE_GROUPS}.{GROUP}",
    KIND_NODE: f"{PLURAL_NODES}.{GROUP}",
    KIND_CACHE: f"{PLURAL_CACHES}.{GROUP}",
    KIND_CAPTURE: f"{PLURAL_CAPTURES}.{GROUP}",
}

# KServe install
KSERVE_NAMESPACE = "kserve"
# the node agent records Warning events regarding its KernelCacheNode (cluster-scoped): they land here
AGENT_EVENTS_NAMESPACE = "default"
AGENT_EVENT_REASONS = ("ConfigError", "ReconcileError", "ImageValidationError")
AGENT_REPORTING_CONTROLLER = "kernelcachenode-agent"
CONFIGMAP_NAME = "inferenceservice-config"
CONFIG_KEY = "kernelcache"
AGENT_DAEMONSET = "kserve-kernelcachenode-agent"
AGENT_POD_LABEL = ("control-plane", "kserve-kernelcachenode-agent")
AGENT_CONTAINER = "manager"
CONTROLLER_DEPLOYMENT = "kserve-localmodel-controller-manager"
# what KServe's charts put on that Deployment, whatever its name or namespace
CONTROLLER_LABEL = ("control-plane", "kserve-localmodel-controller-manager")
WEBHOOK_CONFIGURATION = "kernelcache.serving.kserve.io"
WEBHOOK_NAME = "kernelcache.kserve-webhook-server.pod-mutator"
WEBHOOK_SERVICE = "localmodel-webhook-server-service"
WEBHOOK_CERT_SECRET = "localmodel-webhook-server-cert"
# Newer KServe names them -sa/-rb; older releases used the bare name for both.
PREFETCHER_SERVICE_ACCOUNTS = ("kernel-cache-prefetcher-sa", "kernel-cache-prefetcher")
PREFETCHER_ROLE_BINDINGS = ("kernel-cache-prefetcher-rb", "kernel-cache-prefetcher")
PREFETCHER_MANAGED_LABEL = "internal.serving.kserve.io/kernelcache-prefetcher"

# Agent placement when no group exists: a term no node carries, so no agent pod is scheduled.
AGENT_DISABLED_KEY = "serving.kserve.io/kernelcache-agent"
AGENT_DISABLED_VALUE = "disabled"

# Pod annotations and labels
ANNOTATION_SUPPORTED = "serving.kserve.io/kernelcache-supported"
ANNOTATION_SIDECAR_INJECTION = "serving.kserve.io/kernelcache-sidecar-injection"
ANNOTATION_NODE_GROUP = "serving.kserve.io/kernelcache-nodegroup"
ANNOTATION_USAGE = "internal.serving.kserve.io/kernelcache-usage"
ANNOTATION_SOURCE_URI = "internal.serving.kserve.io/storage-initializer-sourceuri"
LABEL_ISVC = "serving.kserve.io/inferenceservice"
LABEL_POD_TEMPLATE_HASH = "pod-template-hash"

# KernelCache and capture metadata
ANNOTATION_SELECTION_SOURCE = "internal.serving.kserve.io/kernelcache-nodegroup-selection-source"
LABEL_CAPTURE_GENERATED = "internal.serving.kserve.io/kernelcache-capture-generated"
SOURCE_ANNOTATION = "annotation"
SOURCE_AUTO = "auto"
SOURCE_DEFAULT = "default"

# Preparation Jobs
LABEL_JOB_CACHE_NAME = "serving.kserve.io/kernel-cache-name"
LABEL_JOB_CACHE_NAMESPACE = "serving.kserve.io/kernel-cache-namespace"
LABEL_JOB_NODE = "serving.kserve.io/kernel-cache-node"
ANNOTATION_JOB_CACHE_NAME = "internal.serving.kserve.io/kernel-cache-name"
ANNOTATION_JOB_CACHE_NAMESPACE = "internal.serving.kserve.io/kernel-cache-namespace"
ANNOTATION_JOB_NODE = "internal.serving.kserve.io/kernel-cache-node"

# Node-group selection: event reasons, action and messages (capture_cache_reconciler.go)
REASON_INVALID_REQUESTED = "InvalidRequestedNodeGroup"
REASON_PRODUCER_PENDING = "ProducerNodePending"
REASON_AMBIGUOUS = "AmbiguousNodeGroup"
REASON_NO_MATCH = "NoMatchingNodeGroup"
REASON_INVALID_DEFAULT = "InvalidDefaultNodeGroup"
EVENT_ACTION_SELECT = "SelectNodeGroup"
MSG_GROUP_NOT_FOUND = 'KernelCacheNodeGroup "{name}" was not found'
MSG_PRODUCER_PENDING = "producer Pod node assignment has not been observed yet"
MSG_AMBIGUOUS = "producer node {node} matches multiple node groups: {groups}; set " + ANNOTATION_NODE_GROUP
MSG_NO_MATCH = "no node group matched the producer node and no defaultNodeGroup is configured"
MSG_EMPTY_SELECTOR = 'KernelCacheNodeGroup "{name}" requires a non-empty nodeSelector'

# Capture phases and states
PHASE_COMPLETE = "Complete"
PHASE_UNCHANGED = "Unchanged"
PHASE_FAILED = "Failed"
CAPTURE_TERMINAL_PHASES = (PHASE_COMPLETE, PHASE_UNCHANGED, PHASE_FAILED)
# the Ready condition's message for a capture in progress when the sidecar reports none (§7.1; reason = phase)
CAPTURE_PHASE_MESSAGES = {
    "Pending": "waiting for the selected capture session",
    "WaitingForWorkload": "waiting for workload readiness",
    "Capturing": "capture is in progress",
    "Pushing": "cache image is being pushed",
}
RESULT_SUCCEEDED = "Succeeded"
RESULT_UNCHANGED = "Unchanged"
SIGNING_SKIPPED = "Skipped"
SIGNING_SUCCEEDED = "Succeeded"
SIGNING_FAILED = "Failed"

# KernelCache and cache entry states
CACHE_ERROR = "Error"
CACHE_READY = "Ready"
CACHE_PREPARING = "Preparing"
CACHE_PENDING = "Pending"
ENTRY_READY = "Ready"
ENTRY_ERROR = "Error"
ENTRY_STATES = ("Pending", "Pulling", "Extracting", "Ready", "Error")
MOUNT_TYPE_OCI = "oci"
# The KernelCache aggregate's reasons and messages (cache_status.go, §7.2)
REASON_CACHE_READY = "CacheReady"
REASON_PREPARING = "Preparing"
REASON_PREPARATION_FAILED = "PreparationFailed"
REASON_NO_MATCHING_NODES = "NoMatchingNodes"
REASON_NO_READY_NODES = "NoReadyNodes"
MSG_CACHE_READY = "cache is ready on all selected nodes"
MSG_PREPARING = "cache preparation is in progress"
MSG_WAITING_FOR_PREPARATION = "waiting for node cache preparation status"
MSG_NO_MATCHING_NODES = "no nodes match the referenced KernelCacheNodeGroup"
MSG_NO_READY_NODES = "matching nodes are not ready"

# Container waiting reasons the agent treats as a failed preparation pod
PREPARATION_FAILURE_REASONS = (
    "ErrImagePull",
    "ImagePullBackOff",
    "ErrImageNeverPull",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
    "ContainerCannotRun",
    "CrashLoopBackOff",
)
IMAGE_PULL_REASONS = ("ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName")

# The pod webhook's consumer side (pkg/webhook/admission/kernelcache/consumer.go, pkg/kernelcache/container.go)
SOURCE_VOLUME = "kernel-cache-source"
RUNTIME_VOLUME_PREFIX = "kernel-cache-runtime-"
LINKER_CONTAINER = "kernel-cache-linker"
LINKER_MOUNT_PATH = "/var/run/gkm/kernel-cache"
OCI_PATH_VLLM = "io.vllm.cache"
OCI_PATH_TRITON = "io.triton.cache"
VLLM_CACHE_ENV = "VLLM_CACHE_ROOT"
VLLM_DEFAULT_CACHE_PATH = "/root/.cache/vllm"
TRITON_CACHE_ENV = "TRITON_CACHE_DIR"  # the name KServe's sidecar tests use
# KServe's defaultTritonCachePath could not be read; Triton's own default for root (inferred). It only
# changes the path shown for a Triton cache path without containerPath and env, never a decision.
TRITON_DEFAULT_CACHE_PATH = "/root/.triton/cache"
SECURITY_MODES_ALLOWING_ANY = ("", "none")
VERIFICATION_SUCCEEDED = "Succeeded"
# Node agent (pkg/controller/v1alpha1/kernelcachenode): image validation against Node.status.images
MSG_ARTIFACT_NOT_ON_NODE = "OCI artifact is not present in Node.status.images"
NODE_STATUS_MAX_IMAGES = 50  # the kubelet's default nodeStatusMaxImages

# The capture sidecar the pod webhook injects after the cache (pkg/webhook/admission/kernelcache/sidecar.go,
# pkg/kernelcache/podconfig/reporter.go, pkg/kernelcache/reporter)
MCV_CONTAINER = "mcv"
MCV_CACHE_VOLUME_PREFIX = "mcv-cache-"
MCV_REPORTER_VOLUME = "mcv-reporter-access"
ANNOTATION_REPORTER_SECRET = "internal.serving.kserve.io/kernelcache-reporter-secret"
REPORTER_PREFIX = "kernel-cache-reporter-"
REPORTER_ACCESS_KEY = "access.json"
CAPTURE_READY_CONDITION = "Ready"
REASON_PRODUCER_GONE = "ProducerGone"

# The KernelCacheCapture status validator (pkg/webhook/admission/kernelcache/capture_validator.go)
CAPTURE_WEBHOOK_CONFIGURATION = "kernelcachecapture.serving.kserve.io"
CAPTURE_WEBHOOK_NAME = "kernelcachecapture.kserve-webhook-server.status-validator"
TOKEN_REQUESTER = "kserve-kernelcache-token-requester"  # RoleBinding and ClusterRole in each workload namespace

# The capture's identities in its namespace (capture_controller.go, registry_reconciler.go, pkg/kernelcache/
# reporter and registryauth): the reporter's (every auth type), the pusher's and the registry access Secret's
# (serviceAccountToken)
TOKEN_REQUESTER_LABEL = "internal.serving.kserve.io/kernelcache-token-requester"
REPORTER_LABEL = "internal.serving.kserve.io/kernelcache-reporter"
REGISTRY_LABEL = "internal.serving.kserve.io/kernelcache-registry"
PUSHER_PREFIX = "kernel-cache-pusher-"
ANNOTATION_ACCESS_SECRET = "internal.serving.kserve.io/kernelcache-access-secret"
ACCESS_SECRET_PREFIX = "mcv-registry-"
