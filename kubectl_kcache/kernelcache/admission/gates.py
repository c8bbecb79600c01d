"""KServe's admission of a pod, the data of its decision: the stable gate ids, their effects and the results
(gates, candidates, mounts, the injection, the admission) and the inputs of one decision."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import NamedTuple

import msgspec

from ...objects import CacheEntry, Capture, KernelCache, KernelCacheNode, Pod, Volume, WebhookConfiguration
from .. import constants as c
from .. import sidecar as sc
from ..config import ConfigState
from ..identity import Identity, ModelSource

# ---- gate ids (stable: JSON gates[].id, candidates[].rejectedBy, result.now.blockedBy) -------------------
WEBHOOK_INSTALLED = "webhook-installed"
NAMESPACE_SELECTOR = "namespace-selector"
OBJECT_SELECTOR = "object-selector"
MATCH_CONDITIONS = "match-conditions"
WEBHOOK_REACHABLE = "webhook-reachable"
ISVC_LABEL = "isvc-label"
SUPPORTED = "kernelcache-supported"
CONFIG = "config"
ENABLED = "enabled"
SIDECAR_ANNOTATION = "sidecar-annotation"
MODEL_SOURCE = "model-source"
RUNTIME_CONTAINER = "runtime-container"
RUNTIME_IMAGE = "runtime-image"
CANDIDATES = "candidates"
SELECTION = "selection"
INJECTION = "injection"
SIDECAR = sc.SIDECAR
CAPTURE_PATHS = sc.CAPTURE_PATHS
READINESS_PROBE = sc.READINESS_PROBE
CAPTURE_TARGET = sc.CAPTURE_TARGET
CAPTURE_MOUNTS = sc.CAPTURE_MOUNTS
SIDECAR_GATES = sc.GATES
POD_GATES = (
    WEBHOOK_INSTALLED,
    NAMESPACE_SELECTOR,
    OBJECT_SELECTOR,
    MATCH_CONDITIONS,
    WEBHOOK_REACHABLE,
    ISVC_LABEL,
    SUPPORTED,
    CONFIG,
    ENABLED,
    SIDECAR_ANNOTATION,
    MODEL_SOURCE,
    RUNTIME_CONTAINER,
    RUNTIME_IMAGE,
    CANDIDATES,
    SELECTION,
    INJECTION,
    *SIDECAR_GATES,
)
# cache-step misses after which admission goes on to the sidecar step (which may still reject the pod)
CACHE_MISSES = (MODEL_SOURCE, RUNTIME_IMAGE, CANDIDATES, SELECTION)

NAMESPACE = "namespace"
ENTRY_READY = "entry-ready"
FOOTPRINT = "footprint"
KERNELCACHE_EXISTS = "kernelcache-exists"
ENTRY_MATCHES_SPEC = "entry-matches-spec"
ARTIFACT = "artifact"
MOUNT_TYPE = "mount-type"
CACHE_CONTAINER = "cache-container"
OCI_PATH = "oci-path"
CONTAINER_PATH = "container-path"
VERIFICATION = "verification"
CANDIDATE_GATES = (
    NAMESPACE,
    ENTRY_READY,
    FOOTPRINT,
    KERNELCACHE_EXISTS,
    ENTRY_MATCHES_SPEC,
    ARTIFACT,
    MOUNT_TYPE,
    CACHE_CONTAINER,
    OCI_PATH,
    CONTAINER_PATH,
    VERIFICATION,
)

# effects of a failed pod gate, and the outcomes of a decision
NOT_CALLED, SKIP, REJECT = "not-called", "skip", "reject"
CACHED, NOT_CACHED, REJECTED = "cached", "not-cached", "rejected"
WORKLOAD, COMPATIBILITY = "Workload", "Compatibility"

_EFFECTS = {
    WEBHOOK_INSTALLED: NOT_CALLED,
    NAMESPACE_SELECTOR: NOT_CALLED,
    OBJECT_SELECTOR: NOT_CALLED,
    MATCH_CONDITIONS: NOT_CALLED,
    WEBHOOK_REACHABLE: REJECT,  # with failurePolicy Fail; the gate says SKIP itself with Ignore
    ISVC_LABEL: SKIP,
    SUPPORTED: SKIP,
    CONFIG: REJECT,
    ENABLED: SKIP,
    SIDECAR_ANNOTATION: REJECT,
    MODEL_SOURCE: SKIP,
    RUNTIME_CONTAINER: REJECT,
    RUNTIME_IMAGE: SKIP,
    CANDIDATES: SKIP,
    SELECTION: SKIP,
    INJECTION: REJECT,
    **{g: REJECT for g in SIDECAR_GATES},
}


def entry_matches_cache(entry: CacheEntry, kc: KernelCache) -> bool:
    """candidateMatchesKernelCache for one entry: its imageReference and both footprints equal the
    KernelCache's artifact (missing fields are "")."""
    if kc.artifact is None:
        return False
    return entry.image_reference == kc.artifact.image_reference and entry.footprints == kc.artifact.footprints


# ---- results -------------------------------------------------------------------------------------------


class Gate(msgspec.Struct, frozen=True):
    """One check. `passed` is None when it could not be evaluated (an input was not read, or an earlier
    failure leaves nothing to check); `effect` says what a failure does (not-called, skip, reject)."""

    id: str
    passed: bool | None
    detail: str
    effect: str = ""
    message: str = ""  # for a rejecting gate: the webhook's own message


class NodeEntry(NamedTuple):
    """A KernelCacheNode's entry for a KernelCache (the node is the KernelCacheNode's name); a NamedTuple: a
    decision over every KernelCacheNode builds 200,000 of them at 50,000 nodes."""

    node: str
    entry: CacheEntry


class Candidate(msgspec.Struct, frozen=True):
    """A KernelCache KServe looked at (or, for the explanation, one it did not because of its namespace or
    because none of its entries is Ready), with the first gate that rejected it."""

    namespace: str
    name: str
    entries: tuple[NodeEntry, ...]
    kernel_cache: KernelCache | None
    rejected_by: str | None = None
    detail: str = ""
    evidence: tuple[str, ...] = ()
    match: str | None = None  # the pass whose footprint matched: Workload or Compatibility
    candidate: bool = True  # False: not collected by KServe (other namespace, or no Ready entry)
    evaluated: bool = True  # False: the pod's footprints are unknown

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


class Mount(msgspec.Struct, frozen=True):
    container: str
    name: str
    path: str
    read_only: bool = False


class Injection(msgspec.Struct, frozen=True):
    """What the webhook adds to the pod for the winner (KServe's injectKernelCacheMount)."""

    kernel_cache: str
    image_reference: str
    volumes: tuple[Volume, ...]
    mounts: tuple[Mount, ...]
    linker_args: tuple[str, ...]
    linker_added: bool
    linker_image: str
    annotation: tuple[str, str]


class Admission(msgspec.Struct, frozen=True):
    """The decision for one pod, as KServe's webhook would make it against the given state."""

    gates: tuple[Gate, ...]
    candidates: tuple[Candidate, ...] = ()
    identity: Identity | None = None
    model: ModelSource | None = None
    winner: Candidate | None = None
    injection: Injection | None = None

    @property
    def blocked_by(self) -> Gate | None:
        """The gate that decides: the first failure, except that a cache miss gives way to a later failure
        of the sidecar step (the webhook goes on after a miss and rejects the pod there)."""
        failed = [g for g in self.gates if g.passed is False]
        if not failed:
            return None
        first = failed[0]
        if first.effect == SKIP and first.id in CACHE_MISSES:
            return next((g for g in failed if g.id in SIDECAR_GATES), first)
        return first

    @property
    def outcome(self) -> str:
        gate = self.blocked_by
        if gate is None:
            return CACHED if self.winner is not None else NOT_CACHED
        return {NOT_CALLED: NOT_CALLED, SKIP: NOT_CACHED, REJECT: REJECTED}[gate.effect]

    @property
    def match(self) -> str | None:
        return self.winner.match if self.winner is not None and self.outcome == CACHED else None

    @property
    def cached_kernel_cache(self) -> str | None:
        return self.winner.key if self.winner is not None and self.outcome == CACHED else None

    def gate(self, gate_id: str) -> Gate | None:
        return next((g for g in self.gates if g.id == gate_id), None)

    @property
    def inferred(self) -> tuple[str, ...]:
        """What the answer rests on that KServe's stored code does not decide (the Triton container path)."""
        kc = self.winner.kernel_cache if self.winner is not None else None
        return inferred_paths(kc) if kc is not None and self.injection is not None else ()


def inferred_paths(kc: KernelCache) -> tuple[str, ...]:
    """Cache paths with ociPath io.triton.cache and no containerPath: the 3-argument ResolveContainerPath the
    newest injection calls is not in KServe's stored code, so where they are mounted (TRITON_CACHE_DIR, else
    /root/.triton/cache here) is inferred; every stored 2-argument form would use the vLLM rule instead."""
    art = kc.artifact
    if art is None:
        return ()
    return tuple(
        f"cachePaths[{i}] (ociPath {c.OCI_PATH_TRITON}, no containerPath): mounted at the path from "
        f"{c.TRITON_CACHE_ENV}, else {c.TRITON_DEFAULT_CACHE_PATH}, which is inferred: KServe's stored code "
        f"does not decide it (its 2-argument form would use {c.VLLM_CACHE_ENV}, else "
        f"{c.VLLM_DEFAULT_CACHE_PATH})"
        for i, p in enumerate(art.cache_paths)
        if p.oci_path == c.OCI_PATH_TRITON and not p.container_path
    )


class EntryIndex(msgspec.Struct, frozen=True, dict=True):
    """The KernelCacheNodes' entries by KernelCache (`collect_entries`), with the lookups a decision makes:
    built once, it serves every decision against the same nodes."""

    by_ref: Mapping[tuple[str, str], list[NodeEntry]]
    ready: Mapping[tuple[str, str], list[NodeEntry]]  # the Ready entries (KernelCaches with one only)
    ready_in: Mapping[str, list[tuple[str, str]]]  # namespace -> KernelCaches with a Ready entry, sorted
    refs_in: Mapping[str, set[tuple[str, str]]]  # namespace -> KernelCaches with any entry
    by_compatibility: Mapping[str, list[tuple[str, str]]]  # a Ready entry's compatibility footprint -> sorted

    # footprint misses without text (`Inputs.miss_details` False), built once for every decision; a memo,
    # not a field, so that it is not compared nor shown
    @cached_property
    def misses(self) -> dict[tuple[str, str], Candidate]:
        return {}

    def carried(self) -> EntryIndex:
        """The same entries for the next snapshot of a kept-current view (`ClusterSnapshot.carry_derived`),
        without the misses built against this one's KernelCaches."""
        return msgspec.structs.replace(self)


class Inputs(msgspec.Struct, frozen=True):
    """What the decision reads. `None` stands for "could not be read" (forbidden, or not in the input) for
    the webhook configuration (`webhook_known` False) and the namespace's labels."""

    pod: Pod
    namespace: str
    config: ConfigState
    kcns: Sequence[KernelCacheNode]
    kernel_caches: Mapping[str, KernelCache]  # "ns/name" -> KernelCache (at least the pod's namespace)
    webhooks: Sequence[WebhookConfiguration] = ()
    webhook_known: bool = True
    namespace_labels: Mapping[str, str] | None = None
    # the namespace's KernelCacheCaptures by name; None: not read (the sidecar step is then not decided)
    captures: Mapping[str, Capture] | None = msgspec.field(default_factory=dict)
    # False for a manifest whose pod-template-hash is not known yet (a new revision: it has no capture)
    revision_known: bool = True
    # `index_entries(kcns)`, when the caller decides for many pods against the same KernelCacheNodes
    entries: EntryIndex | None = None
    # False for a caller that counts outcomes (the fleet): a footprint miss keeps no text, the costliest part
    # of a decision with many KernelCaches in the namespace
    miss_details: bool = True
    # ready endpoints behind the webhook's Service; None: not read (whether it can be called is then not judged)
    webhook_endpoints: int | None = None
