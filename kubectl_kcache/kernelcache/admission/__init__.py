"""KServe's pod webhook on the consumer side: whether a new pod gets a KernelCache mounted, step by step
(pkg/webhook/admission/kernelcache/pod_mutator.go, consumer.go, selector.go; spec: KServe's newest sources).

`decide()` replays the decision for one pod against a snapshot and records every gate with a stable id, in
the order the API server and then the webhook apply them. A failed gate has an effect:

* ``not-called``: the API server does not send the pod to the webhook (no configuration, selectors, match
  conditions): the pod is created untouched;
* ``skip``: the webhook allows the pod without a cache, silently (no event, no status, no log line that names
  the miss);
* ``reject``: the webhook denies the pod (HTTP 400/500): the pod is not created and its ReplicaSet shows a
  FailedCreate event with the message.

Pod gates, in order: `webhook-installed`, `namespace-selector`, `object-selector`, `match-conditions` (API
server), `isvc-label`, `kernelcache-supported`, `config`, `enabled`, `sidecar-annotation` (handler),
`model-source`, `runtime-container`, `runtime-image`, `candidates`, `selection`, `injection` (selection and
mounting). Candidate gates, in the order KServe checks a candidate: `namespace`, `entry-ready` (these two
decide what is a candidate at all), `footprint` (Workload pass, then Compatibility pass), then
`loadKernelCacheCandidate`: `kernelcache-exists`, `entry-matches-spec`, `cacheCanMountToPod` (`artifact`,
`mount-type`, then per cache path `cache-container`, `oci-path`, `container-path`), `verification`. The first
candidate that passes (Workload pass first) is mounted; an error while mounting it rejects the pod, with no
fallback to the next candidate.

Then, in the same admission, the capture sidecar step (`sidecar.py`): `sidecar` (whether it runs: injection
on, an InferenceService pod of a ReplicaSet, the revision's capture not terminal), `capture-paths`,
`readiness-probe`, `capture-target`, `capture-mounts`. It runs on the pod as the cache step left it, also
when the cache step found no cache (a miss in `model-source`, `runtime-image`, `candidates` or `selection`
does not end admission), and any failure rejects the pod, a matched cache included.

Facts the webhook does not check and this module does not either: the KernelCache's own `status.state` and
`deletionTimestamp` (a terminating cache is still mounted), the node the pod will run on (no node affinity
is added), the image class in the sidecar step.
"""

# The decision's surface, as callers use it (`from ..kernelcache import admission as a`; `a.decide(...)`).
from ..identity import resolve_container, resolve_oci_path
from .candidates import (
    can_mount,
    entries_of,
    identity_gates,
    index_entries,
    resolve_container_path,
    update_entries,
    verification_allows_use,
)
from .decision import decide, denial_message, snapshot_inputs
from .gates import (
    ARTIFACT,
    CACHE_CONTAINER,
    CACHED,
    CANDIDATE_GATES,
    CANDIDATES,
    CAPTURE_MOUNTS,
    CAPTURE_PATHS,
    CAPTURE_TARGET,
    CONFIG,
    CONTAINER_PATH,
    ENABLED,
    ENTRY_MATCHES_SPEC,
    ENTRY_READY,
    FOOTPRINT,
    INJECTION,
    ISVC_LABEL,
    KERNELCACHE_EXISTS,
    MATCH_CONDITIONS,
    MODEL_SOURCE,
    MOUNT_TYPE,
    NAMESPACE,
    NAMESPACE_SELECTOR,
    NOT_CACHED,
    NOT_CALLED,
    OBJECT_SELECTOR,
    OCI_PATH,
    POD_GATES,
    READINESS_PROBE,
    REJECT,
    REJECTED,
    RUNTIME_CONTAINER,
    RUNTIME_IMAGE,
    SELECTION,
    SIDECAR,
    SIDECAR_ANNOTATION,
    SIDECAR_GATES,
    SKIP,
    SUPPORTED,
    VERIFICATION,
    WEBHOOK_INSTALLED,
    WEBHOOK_REACHABLE,
    Admission,
    Candidate,
    EntryIndex,
    Gate,
    Injection,
    Inputs,
    Mount,
    entry_matches_cache,
)
from .injection import InjectionError, plan_injection
from .reach import match_condition, pre_admission, recorded_cache, rule_covers_pod_create

__all__ = [
    "ARTIFACT",
    "Admission",
    "CACHED",
    "CACHE_CONTAINER",
    "CANDIDATES",
    "CANDIDATE_GATES",
    "CAPTURE_MOUNTS",
    "CAPTURE_PATHS",
    "CAPTURE_TARGET",
    "CONFIG",
    "CONTAINER_PATH",
    "Candidate",
    "ENABLED",
    "ENTRY_MATCHES_SPEC",
    "ENTRY_READY",
    "EntryIndex",
    "FOOTPRINT",
    "Gate",
    "INJECTION",
    "ISVC_LABEL",
    "Injection",
    "InjectionError",
    "Inputs",
    "KERNELCACHE_EXISTS",
    "MATCH_CONDITIONS",
    "WEBHOOK_REACHABLE",
    "MODEL_SOURCE",
    "MOUNT_TYPE",
    "Mount",
    "NAMESPACE",
    "NAMESPACE_SELECTOR",
    "NOT_CACHED",
    "NOT_CALLED",
    "OBJECT_SELECTOR",
    "OCI_PATH",
    "POD_GATES",
    "READINESS_PROBE",
    "REJECT",
    "REJECTED",
    "RUNTIME_CONTAINER",
    "RUNTIME_IMAGE",
    "SELECTION",
    "SIDECAR",
    "SIDECAR_ANNOTATION",
    "SIDECAR_GATES",
    "SKIP",
    "SUPPORTED",
    "VERIFICATION",
    "WEBHOOK_INSTALLED",
    "can_mount",
    "decide",
    "denial_message",
    "entry_matches_cache",
    "identity_gates",
    "entries_of",
    "index_entries",
    "update_entries",
    "match_condition",
    "plan_injection",
    "pre_admission",
    "recorded_cache",
    "resolve_container",
    "resolve_container_path",
    "resolve_oci_path",
    "rule_covers_pod_create",
    "snapshot_inputs",
    "verification_allows_use",
]
