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
from .candidates import (
    can_mount as can_mount,
)
from .candidates import (
    index_entries as index_entries,
)
from .candidates import (
    resolve_container as resolve_container,
)
from .candidates import (
    resolve_container_path as resolve_container_path,
)
from .candidates import (
    resolve_oci_path as resolve_oci_path,
)
from .candidates import (
    verification_allows_use as verification_allows_use,
)
from .decision import (
    decide as decide,
)
from .decision import (
    denial_message as denial_message,
)
from .decision import (
    snapshot_inputs as snapshot_inputs,
)
from .gates import (
    ARTIFACT as ARTIFACT,
)
from .gates import (
    CACHE_CONTAINER as CACHE_CONTAINER,
)
from .gates import (
    CACHED as CACHED,
)
from .gates import (
    CANDIDATE_GATES as CANDIDATE_GATES,
)
from .gates import (
    CANDIDATES as CANDIDATES,
)
from .gates import (
    CAPTURE_MOUNTS as CAPTURE_MOUNTS,
)
from .gates import (
    CAPTURE_PATHS as CAPTURE_PATHS,
)
from .gates import (
    CAPTURE_TARGET as CAPTURE_TARGET,
)
from .gates import (
    CONFIG as CONFIG,
)
from .gates import (
    CONTAINER_PATH as CONTAINER_PATH,
)
from .gates import (
    ENABLED as ENABLED,
)
from .gates import (
    ENTRY_MATCHES_SPEC as ENTRY_MATCHES_SPEC,
)
from .gates import (
    ENTRY_READY as ENTRY_READY,
)
from .gates import (
    FOOTPRINT as FOOTPRINT,
)
from .gates import (
    INJECTION as INJECTION,
)
from .gates import (
    ISVC_LABEL as ISVC_LABEL,
)
from .gates import (
    KERNELCACHE_EXISTS as KERNELCACHE_EXISTS,
)
from .gates import (
    MATCH_CONDITIONS as MATCH_CONDITIONS,
)
from .gates import (
    MODEL_SOURCE as MODEL_SOURCE,
)
from .gates import (
    MOUNT_TYPE as MOUNT_TYPE,
)
from .gates import (
    NAMESPACE as NAMESPACE,
)
from .gates import (
    NAMESPACE_SELECTOR as NAMESPACE_SELECTOR,
)
from .gates import (
    NOT_CACHED as NOT_CACHED,
)
from .gates import (
    NOT_CALLED as NOT_CALLED,
)
from .gates import (
    OBJECT_SELECTOR as OBJECT_SELECTOR,
)
from .gates import (
    OCI_PATH as OCI_PATH,
)
from .gates import (
    POD_GATES as POD_GATES,
)
from .gates import (
    READINESS_PROBE as READINESS_PROBE,
)
from .gates import (
    REJECT as REJECT,
)
from .gates import (
    REJECTED as REJECTED,
)
from .gates import (
    RUNTIME_CONTAINER as RUNTIME_CONTAINER,
)
from .gates import (
    RUNTIME_IMAGE as RUNTIME_IMAGE,
)
from .gates import (
    SELECTION as SELECTION,
)
from .gates import (
    SIDECAR as SIDECAR,
)
from .gates import (
    SIDECAR_ANNOTATION as SIDECAR_ANNOTATION,
)
from .gates import (
    SIDECAR_GATES as SIDECAR_GATES,
)
from .gates import (
    SKIP as SKIP,
)
from .gates import (
    SUPPORTED as SUPPORTED,
)
from .gates import (
    VERIFICATION as VERIFICATION,
)
from .gates import (
    WEBHOOK_INSTALLED as WEBHOOK_INSTALLED,
)
from .gates import (
    Admission as Admission,
)
from .gates import (
    Candidate as Candidate,
)
from .gates import (
    EntryIndex as EntryIndex,
)
from .gates import (
    Gate as Gate,
)
from .gates import (
    Injection as Injection,
)
from .gates import (
    Inputs as Inputs,
)
from .gates import (
    Mount as Mount,
)
from .gates import (
    entry_matches_cache as entry_matches_cache,
)
from .injection import (
    InjectionError as InjectionError,
)
from .injection import (
    plan_injection as plan_injection,
)
from .reach import (
    match_condition as match_condition,
)
from .reach import (
    pre_admission as pre_admission,
)
from .reach import (
    recorded_cache as recorded_cache,
)
from .reach import (
    rule_covers_pod_create as rule_covers_pod_create,
)
