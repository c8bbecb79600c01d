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

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, NamedTuple

from msgspec.structs import replace as struct_replace

from ..objects import (
    CacheEntry,
    Capture,
    Container,
    KernelCache,
    KernelCacheNode,
    Pod,
    PodSpec,
    Verification,
    Volume,
    VolumeMount,
    WebhookConfiguration,
    WebhookEntry,
)
from . import constants as c
from . import sidecar as sc
from .config import ConfigState
from .identity import (
    CONTAINER_KSERVE,
    CONTAINER_MAIN,
    IMAGE_FLOATING,
    Identity,
    IdentityError,
    ModelSource,
    container_identity,
    model_source,
    runtime_container,
    workload_ref,
)
from .selectors import describe_label_selector, label_selector_matches

if TYPE_CHECKING:
    from ..snapshot import ClusterSnapshot

# ---- gate ids (stable: JSON gates[].id, candidates[].rejectedBy, result.now.blockedBy) -------------------
WEBHOOK_INSTALLED = "webhook-installed"
NAMESPACE_SELECTOR = "namespace-selector"
OBJECT_SELECTOR = "object-selector"
MATCH_CONDITIONS = "match-conditions"
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
POD_GATES = (WEBHOOK_INSTALLED, NAMESPACE_SELECTOR, OBJECT_SELECTOR, MATCH_CONDITIONS, ISVC_LABEL, SUPPORTED,
             CONFIG, ENABLED, SIDECAR_ANNOTATION, MODEL_SOURCE, RUNTIME_CONTAINER, RUNTIME_IMAGE, CANDIDATES,
             SELECTION, INJECTION, *SIDECAR_GATES)
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
CANDIDATE_GATES = (NAMESPACE, ENTRY_READY, FOOTPRINT, KERNELCACHE_EXISTS, ENTRY_MATCHES_SPEC, ARTIFACT, MOUNT_TYPE,
                   CACHE_CONTAINER, OCI_PATH, CONTAINER_PATH, VERIFICATION)

# effects of a failed pod gate, and the outcomes of a decision
NOT_CALLED, SKIP, REJECT = "not-called", "skip", "reject"
CACHED, NOT_CACHED, REJECTED = "cached", "not-cached", "rejected"
WORKLOAD, COMPATIBILITY = "Workload", "Compatibility"

_EFFECTS = {WEBHOOK_INSTALLED: NOT_CALLED, NAMESPACE_SELECTOR: NOT_CALLED, OBJECT_SELECTOR: NOT_CALLED,
            MATCH_CONDITIONS: NOT_CALLED, ISVC_LABEL: SKIP, SUPPORTED: SKIP, CONFIG: REJECT, ENABLED: SKIP,
            SIDECAR_ANNOTATION: REJECT, MODEL_SOURCE: SKIP, RUNTIME_CONTAINER: REJECT, RUNTIME_IMAGE: SKIP,
            CANDIDATES: SKIP, SELECTION: SKIP, INJECTION: REJECT, **{g: REJECT for g in SIDECAR_GATES}}


def entry_matches_cache(entry: CacheEntry, kc: KernelCache) -> bool:
    """candidateMatchesKernelCache for one entry: its imageReference and both footprints equal the
    KernelCache's artifact (missing fields are "")."""
    if kc.artifact is None:
        return False
    return entry.image_reference == kc.artifact.image_reference and entry.footprints == kc.artifact.footprints


# ---- results -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Gate:
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


@dataclass(frozen=True)
class Candidate:
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


@dataclass(frozen=True)
class Mount:
    container: str
    name: str
    path: str
    read_only: bool = False


@dataclass(frozen=True)
class Injection:
    """What the webhook adds to the pod for the winner (KServe's injectKernelCacheMount)."""

    kernel_cache: str
    image_reference: str
    volumes: tuple[Volume, ...]
    mounts: tuple[Mount, ...]
    linker_args: tuple[str, ...]
    linker_added: bool
    linker_image: str
    annotation: tuple[str, str]


@dataclass(frozen=True)
class Admission:
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
    return tuple(f"cachePaths[{i}] (ociPath {c.OCI_PATH_TRITON}, no containerPath): mounted at the path from "
                 f"{c.TRITON_CACHE_ENV}, else {c.TRITON_DEFAULT_CACHE_PATH}, which is inferred: KServe's stored code "
                 f"does not decide it (its 2-argument form would use {c.VLLM_CACHE_ENV}, else "
                 f"{c.VLLM_DEFAULT_CACHE_PATH})"
                 for i, p in enumerate(art.cache_paths) if p.oci_path == c.OCI_PATH_TRITON and not p.container_path)


@dataclass(frozen=True)
class EntryIndex:
    """The KernelCacheNodes' entries by KernelCache (`collect_entries`), with the lookups a decision makes:
    built once, it serves every decision against the same nodes."""

    by_ref: Mapping[tuple[str, str], list[NodeEntry]]
    ready: Mapping[tuple[str, str], list[NodeEntry]]  # the Ready entries (KernelCaches with one only)
    ready_in: Mapping[str, list[tuple[str, str]]]  # namespace -> KernelCaches with a Ready entry, sorted
    refs_in: Mapping[str, set[tuple[str, str]]]  # namespace -> KernelCaches with any entry
    by_compatibility: Mapping[str, list[tuple[str, str]]]  # a Ready entry's compatibility footprint -> sorted


@dataclass(frozen=True)
class Inputs:
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
    captures: Mapping[str, Capture] | None = field(default_factory=dict)
    # False for a manifest whose pod-template-hash is not known yet (a new revision: it has no capture)
    revision_known: bool = True
    # `index_entries(kcns)`, when the caller decides for many pods against the same KernelCacheNodes
    entries: EntryIndex | None = None


# ---- the pod before the webhook ----------------------------------------------------------------------------

def is_injected_volume(name: str) -> bool:
    return name == c.SOURCE_VOLUME or name.startswith(c.RUNTIME_VOLUME_PREFIX)


def _is_sidecar_volume(name: str) -> bool:
    return name == c.MCV_REPORTER_VOLUME or name.startswith(c.MCV_CACHE_VOLUME_PREFIX)


def pre_admission(pod: Pod) -> Pod:
    """The pod as its controller created it: without the webhook's kernel cache volumes, mounts, linker and
    usage annotation, and without its capture sidecar (container `mcv`, its volumes and the reporter
    annotation; only when that annotation says the webhook added it): a pod read from the cluster carries
    them."""
    sidecar = c.ANNOTATION_REPORTER_SECRET in pod.meta.annotations

    def injected(name: str) -> bool:
        return is_injected_volume(name) or (sidecar and _is_sidecar_volume(name))

    def strip(ctr: Container) -> Container:
        return struct_replace(ctr, volume_mounts=tuple(m for m in ctr.volume_mounts if not injected(m.name)))

    spec = pod.spec or PodSpec()
    dropped = (c.ANNOTATION_USAGE, c.ANNOTATION_REPORTER_SECRET) if sidecar else (c.ANNOTATION_USAGE,)
    annotations = {k: v for k, v in pod.meta.annotations.items() if k not in dropped}
    return struct_replace(
        pod,
        metadata=struct_replace(pod.metadata, annotations=annotations),
        spec=struct_replace(
            spec,
            containers=tuple(strip(x) for x in spec.containers if not (sidecar and x.name == c.MCV_CONTAINER)),
            init_containers=tuple(strip(x) for x in spec.init_containers if x.name != c.LINKER_CONTAINER),
            volumes=[v for v in spec.volumes or () if not injected(str(v.get("name") or ""))],
        ),
    )


def recorded_cache(pod: Pod) -> tuple[bool, str]:
    """(whether the pod carries the webhook's mutation, the KernelCache its usage annotation names or "")."""
    usage = pod.meta.annotations.get(c.ANNOTATION_USAGE, "")
    linker = any(x.name == c.LINKER_CONTAINER for x in pod.init_containers)
    source = any(v.name == c.SOURCE_VOLUME for v in pod.volumes)
    return bool(usage or linker or source), usage


# ---- API server side ---------------------------------------------------------------------------------------

_MATCH_TERM = re.compile(r"""^(?:has\(object\.metadata\.(labels|annotations)\)"""
                         r"""|(['"])(.*?)\2\s+in\s+object\.metadata\.(labels|annotations))$""")


def match_condition(expression: str, pod: Pod) -> bool | None:
    """A matchCondition of the shapes KServe uses (`has(object.metadata.labels) && 'k' in
    object.metadata.labels`, any conjunction of such terms); None for CEL this does not evaluate."""
    result = True
    for term in expression.split("&&"):
        m = _MATCH_TERM.match(term.strip())
        if m is None:
            return None
        if m.group(1):
            where = pod.meta.labels if m.group(1) == "labels" else pod.meta.annotations
            result = result and bool(where)
        else:
            where = pod.meta.labels if m.group(4) == "labels" else pod.meta.annotations
            result = result and m.group(3) in where
    return result


def rule_covers_pod_create(entry: WebhookEntry) -> bool:
    def has(values: Iterable[str], wanted: str) -> bool:
        return any(v in (wanted, "*") for v in values)
    return any(has(r.operations, "CREATE") and has(r.api_groups, "") and has(r.api_versions, "v1")
               and (has(r.resources, "pods")) for r in entry.rules)


def webhook_gates(inputs: Inputs) -> list[Gate]:
    pod = inputs.pod
    if not inputs.webhook_known:
        return [Gate(g, None, "the webhook configuration was not read (list mutatingwebhookconfigurations was "
                              "forbidden, or it is not in the input): not checked")
                for g in (WEBHOOK_INSTALLED, NAMESPACE_SELECTOR, OBJECT_SELECTOR, MATCH_CONDITIONS)]
    config = next((w for w in inputs.webhooks if w.meta.name == c.WEBHOOK_CONFIGURATION), None)
    entry = next((w for w in config.webhooks if w.name == c.WEBHOOK_NAME), None) if config else None
    gates: list[Gate] = []
    if config is None:
        gates.append(Gate(WEBHOOK_INSTALLED, False, f"MutatingWebhookConfiguration {c.WEBHOOK_CONFIGURATION} is "
                                                    "not installed: the API server calls no kernel cache webhook"))
    elif entry is None:
        gates.append(Gate(WEBHOOK_INSTALLED, False, f"MutatingWebhookConfiguration {c.WEBHOOK_CONFIGURATION} has no "
                                                    f"webhook {c.WEBHOOK_NAME}"))
    elif not rule_covers_pod_create(entry):
        gates.append(Gate(WEBHOOK_INSTALLED, False, f"webhook {c.WEBHOOK_NAME} has no rule for CREATE of v1 pods"))
    else:
        gates.append(Gate(WEBHOOK_INSTALLED, True, f"webhook {c.WEBHOOK_NAME} is installed for pod CREATE "
                                                   f"(failurePolicy {entry.failure_policy})"))
    if entry is None:
        return gates + [Gate(g, None, "no webhook to check") for g in (NAMESPACE_SELECTOR, OBJECT_SELECTOR,
                                                                        MATCH_CONDITIONS)]
    selector = describe_label_selector(entry.namespace_selector)
    if inputs.namespace_labels is None:
        gates.append(Gate(NAMESPACE_SELECTOR, None, f"namespace {inputs.namespace} was not read (list namespaces "
                                                    f"was forbidden, or it is not in the input): namespaceSelector "
                                                    f"{selector} not checked"))
    elif label_selector_matches(entry.namespace_selector, inputs.namespace_labels):
        gates.append(Gate(NAMESPACE_SELECTOR, True, f"namespace {inputs.namespace} matches namespaceSelector "
                                                    f"{selector}"))
    else:
        gates.append(Gate(NAMESPACE_SELECTOR, False, f"namespace {inputs.namespace} does not match the webhook's "
                                                     f"namespaceSelector {selector}: its pods are never sent to "
                                                     "the kernel cache webhook"))
    selector = describe_label_selector(entry.object_selector)
    if label_selector_matches(entry.object_selector, pod.meta.labels):
        gates.append(Gate(OBJECT_SELECTOR, True, f"the pod's labels match objectSelector {selector}"))
    else:
        gates.append(Gate(OBJECT_SELECTOR, False, f"the pod's labels do not match the webhook's objectSelector "
                                                  f"{selector}"))
    results = [(name, expr, match_condition(expr, pod)) for name, expr in entry.match_conditions]
    failed = [(n, e) for n, e, r in results if r is False]
    unknown_cel = [(n, e) for n, e, r in results if r is None]
    if failed:
        name, expr = failed[0]
        gates.append(Gate(MATCH_CONDITIONS, False, f"matchCondition {name} ({expr}) is false for the pod: the API "
                                                   "server does not call the webhook"))
    elif unknown_cel:
        name, expr = unknown_cel[0]
        gates.append(Gate(MATCH_CONDITIONS, None, f"matchCondition {name} ({expr}) is CEL this tool does not "
                                                  "evaluate"))
    else:
        gates.append(Gate(MATCH_CONDITIONS, True, f"{len(results)} matchCondition(s) true for the pod"
                          if results else "no matchConditions"))
    return gates


# ---- handler -------------------------------------------------------------------------------------------

def _config_error(config: ConfigState) -> str:
    if not config.present:
        return f'configmaps "{c.CONFIGMAP_NAME}" not found'
    return config.error


def handler_gates(inputs: Inputs) -> list[Gate]:
    pod, config = inputs.pod, inputs.config
    gates: list[Gate] = []
    isvc = pod.meta.labels.get(c.LABEL_ISVC, "")
    gates.append(Gate(ISVC_LABEL, bool(isvc), f"label {c.LABEL_ISVC}={isvc}" if isvc else
                      f"the pod has no (or an empty) {c.LABEL_ISVC} label: the webhook allows it untouched"))
    supported = pod.meta.annotations.get(c.ANNOTATION_SUPPORTED)
    gates.append(Gate(SUPPORTED, supported == "true", f'annotation {c.ANNOTATION_SUPPORTED}: "true"'
                      if supported == "true" else
                      f"annotation {c.ANNOTATION_SUPPORTED} is "
                      f"{'missing' if supported is None else repr(supported)}, not \"true\": the webhook skips the pod "
                      "(set it on the ServingRuntime's spec.annotations or the InferenceService)"))
    if config.config is None:
        gates.append(Gate(CONFIG, False, f"the kernelcache configuration cannot be loaded: the webhook rejects every "
                                         f"pod it is called for with HTTP 500 \"{_config_error(config)}\"",
                          message=_config_error(config)))
        gates.append(Gate(ENABLED, None, "no configuration to check"))
        gates.append(Gate(SIDECAR_ANNOTATION, None, "no configuration to check"))
        return gates
    gates.append(Gate(CONFIG, True, f"{c.KSERVE_NAMESPACE}/{c.CONFIGMAP_NAME} key {c.CONFIG_KEY} is valid"))
    cfg = config.config
    gates.append(Gate(ENABLED, cfg.enabled, "kernelcache.enabled is true" if cfg.enabled else
                      "kernelcache.enabled is false: the webhook allows every pod untouched"))
    value = pod.meta.annotations.get(c.ANNOTATION_SIDECAR_INJECTION)
    if not cfg.enabled:
        gates.append(Gate(SIDECAR_ANNOTATION, None, "not read while the feature is disabled"))
    elif value is None or value in ("true", "false"):
        gates.append(Gate(SIDECAR_ANNOTATION, True, f"annotation {c.ANNOTATION_SIDECAR_INJECTION}: {value}"
                          if value is not None else f"no {c.ANNOTATION_SIDECAR_INJECTION} annotation"))
    else:
        message = f"{c.ANNOTATION_SIDECAR_INJECTION} must be true or false"
        gates.append(Gate(SIDECAR_ANNOTATION, False, f"annotation {c.ANNOTATION_SIDECAR_INJECTION} is {value!r}: the "
                                                     f"webhook rejects the pod with HTTP 400 \"{message}\", before any "
                                                     "cache is looked at", message=message))
    return gates


# ---- identity --------------------------------------------------------------------------------------------

def identity_gates(pod: Pod, namespace: str) -> tuple[list[Gate], ModelSource | None, Identity | None]:
    """model-source, runtime-container and runtime-image, and the identity when all three pass."""
    try:
        workload = workload_ref(pod.meta.labels)
    except IdentityError:
        return ([Gate(g, None, f"needs the {c.LABEL_ISVC} label") for g in
                 (MODEL_SOURCE, RUNTIME_CONTAINER, RUNTIME_IMAGE)], None, None)
    gates: list[Gate] = []
    model = model_source(workload.kind, pod.meta.annotations)
    if model.known:
        gates.append(Gate(MODEL_SOURCE, True, f"model {model.uri} (modelURIHash {model.hash})"))
    else:
        gates.append(Gate(MODEL_SOURCE, False, f"{model.problem}: the webhook looks for no cache"))
    try:
        container = runtime_container(workload.kind, pod.spec_containers)
    except IdentityError as exc:
        names = ", ".join(x.name for x in pod.spec_containers) or "none"
        gates.append(Gate(RUNTIME_CONTAINER, False, f"no container named {CONTAINER_KSERVE} or {CONTAINER_MAIN} "
                                                    f"(containers: {names}): the webhook rejects the pod with HTTP "
                                                    f"500 \"{exc}\"", message=str(exc)))
        gates.append(Gate(RUNTIME_IMAGE, None, "no runtime container"))
        return gates, model, None
    gates.append(Gate(RUNTIME_CONTAINER, True, f"runtime container {container.name}"))
    # Build validates the image before the model hash (unreachable through the webhook) matters
    probe = model.hash or "sha256:" + "0" * 64
    try:
        ident = container_identity(namespace, workload, container, probe)
    except IdentityError as exc:
        gates.append(Gate(RUNTIME_IMAGE, False, f"image {container.image!r}: the webhook rejects the pod with HTTP "
                                                f"500 \"{exc}\"", effect=REJECT, message=str(exc)))
        return gates, model, None
    if ident.image_class == IMAGE_FLOATING:
        gates.append(Gate(RUNTIME_IMAGE, False, f"image {ident.runtime_image} is floating (latest or untagged): "
                                                "no footprint, so the webhook looks for no cache; pin a tag (a "
                                                "Compatibility match) or a digest (also a Workload match)"))
        return gates, model, None
    kinds = "workload and compatibility footprints" if ident.workload_footprint else "a compatibility footprint only"
    gates.append(Gate(RUNTIME_IMAGE, True, f"image {ident.runtime_image} is pinned by {ident.image_class}: "
                                           f"{kinds}"))
    return gates, model, ident if model.known else None


# ---- candidates ------------------------------------------------------------------------------------------

def _short(ref: str) -> str:
    """An image digest reference shortened for people: @sha256:4d61ab2c..."""
    at = ref.rfind("@sha256:")
    return f"@sha256:{ref[at + 8:at + 20]}..." if at >= 0 else ref or "(empty)"


def _fp(value: str) -> str:
    return f"{value[:19]}..." if value else "(none)"


def collect_entries(kcns: Iterable[KernelCacheNode]) -> dict[tuple[str, str], list[NodeEntry]]:
    """Every entry with a KernelCache name, by (namespace, name), nodes in name order."""
    out: dict[tuple[str, str], list[NodeEntry]] = {}
    for kcn in sorted(kcns, key=lambda k: k.name):
        for e in kcn.entries:
            if e.ref.name:
                out.setdefault((e.ref.namespace, e.ref.name), []).append(NodeEntry(kcn.name, e))
    return out


def index_entries(kcns: Iterable[KernelCacheNode]) -> EntryIndex:
    by_ref = collect_entries(kcns)
    ready = {k: r for k, v in by_ref.items() if (r := [e for e in v if e.entry.state == c.ENTRY_READY])}
    ready_in: dict[str, list[tuple[str, str]]] = {}
    refs_in: dict[str, set[tuple[str, str]]] = {}
    by_compat: dict[str, set[tuple[str, str]]] = {}
    for key in by_ref:
        refs_in.setdefault(key[0], set()).add(key)
    for key, entries in ready.items():
        ready_in.setdefault(key[0], []).append(key)
        for e in entries:
            if e.entry.footprints.compatibility:
                by_compat.setdefault(e.entry.footprints.compatibility, set()).add(key)
    return EntryIndex(by_ref, ready, {ns: sorted(v) for ns, v in ready_in.items()}, refs_in,
                      {fp: sorted(v) for fp, v in by_compat.items()})


def _workload_match(ident: Identity, entries: Sequence[NodeEntry]) -> bool:
    return bool(ident.workload_footprint) and bool(ident.compatibility_footprint) and any(
        e.entry.footprints.workload == ident.workload_footprint
        and e.entry.footprints.compatibility == ident.compatibility_footprint for e in entries)


def _compatibility_match(ident: Identity, entries: Sequence[NodeEntry]) -> bool:
    return bool(ident.compatibility_footprint) and any(
        e.entry.footprints.compatibility == ident.compatibility_footprint for e in entries)


_COMPATIBILITY_KEYS = ("runtimeImage", "modelURIHash")


def _footprint_miss(ident: Identity, kc: KernelCache | None,
                    entries: Sequence[NodeEntry]) -> tuple[str, tuple[str, ...]]:
    """Why no entry's footprints match the pod's, with the compatibility factors that differ when the
    KernelCache records its factors (spec.artifact.identity.factors)."""
    workload_only = ident.workload_footprint and any(
        e.entry.footprints.workload == ident.workload_footprint for e in entries)
    first = entries[0].entry.footprints
    if workload_only:
        detail = ("the workload footprint matches but the compatibility footprint differs on every Ready entry: a "
                  "runtime option or environment factor changed")
    else:
        detail = (f"no Ready entry has the pod's footprints (pod: compatibility {_fp(ident.compatibility_footprint)}"
                  f", workload {_fp(ident.workload_footprint)}; entry on {entries[0].node}: compatibility "
                  f"{_fp(first.compatibility)}, workload {_fp(first.workload)})")
    recorded = kc.artifact.factors if kc is not None and kc.artifact is not None else {}
    evidence: list[str] = []
    if recorded:
        mine = ident.factors
        keys = {k for k in set(mine) | set(recorded) if k in _COMPATIBILITY_KEYS or k.startswith(("option.", "env."))}
        for key in sorted(keys):
            if mine.get(key) != recorded.get(key):
                evidence.append(f"{key}: pod {mine.get(key, '(unset)')}, cache {recorded.get(key, '(unset)')}")
        if evidence:
            detail += "; differing factors: " + "; ".join(evidence)
    return detail, tuple(evidence)


def resolve_container(name: str, containers: Sequence[Container]) -> Container | str:
    """The container a cache path targets, or KServe's error text."""
    if name:
        found = next((x for x in containers if x.name == name), None)
        return found if found is not None else f'cache container "{name}" was not found'
    for default in (CONTAINER_KSERVE, CONTAINER_MAIN):
        found = next((x for x in containers if x.name == default), None)
        if found is not None:
            return found
    return "containerName is required when no standard KServe runtime container is present"


def resolve_oci_path(oci_path: str) -> tuple[str, str]:
    """(resolved path, KServe's error text or "")."""
    if not oci_path:
        return c.OCI_PATH_VLLM, ""
    if oci_path in (c.OCI_PATH_VLLM, c.OCI_PATH_TRITON):
        return oci_path, ""
    return "", (f'unsupported OCI path "{oci_path}"; supported paths are "{c.OCI_PATH_VLLM}" and '
                f'"{c.OCI_PATH_TRITON}"')


def resolve_container_path(container: Container, container_path: str, oci_path: str) -> tuple[str, str]:
    """ResolveContainerPath (the Triton-aware form): an explicit path, else the first env entry of the cache
    kind's variable (VLLM_CACHE_ROOT, or TRITON_CACHE_DIR for io.triton.cache), else the default path."""
    if container_path:
        return container_path, ""
    env_name, default = ((c.TRITON_CACHE_ENV, c.TRITON_DEFAULT_CACHE_PATH) if oci_path == c.OCI_PATH_TRITON
                         else (c.VLLM_CACHE_ENV, c.VLLM_DEFAULT_CACHE_PATH))
    env = next((e for e in container.env if e.name == env_name), None)
    if env is None:
        return default, ""
    if env.value_from:
        return "", f"{env_name} uses valueFrom; provide containerPath explicitly"
    if not env.value:
        return "", f"{env_name} is empty; provide containerPath explicitly"
    return env.value, ""


def can_mount(kc: KernelCache, namespace: str, containers: Sequence[Container]) -> tuple[str, str] | None:
    """cacheCanMountToPod: None when the cache can mount, else (gate id, why)."""
    art = kc.artifact
    if kc.namespace != namespace:
        return NAMESPACE, f"KernelCache {kc.namespace}/{kc.name} is not in the pod's namespace {namespace}"
    if art is None or not art.image_reference:
        return ARTIFACT, "spec.artifact.imageReference is empty"
    if not art.cache_paths:
        return ARTIFACT, "spec.artifact.cachePaths is empty"
    if kc.mount_type not in ("", c.MOUNT_TYPE_OCI):
        return MOUNT_TYPE, f'spec.mountType is "{kc.mount_type}": the webhook only mounts oci caches'
    for i, path in enumerate(art.cache_paths):
        found = resolve_container(path.container_name, containers)
        if isinstance(found, str):
            return CACHE_CONTAINER, f"cachePaths[{i}]: {found}"
        oci, problem = resolve_oci_path(path.oci_path)
        if problem:
            return OCI_PATH, f"cachePaths[{i}]: {problem}"
        _, problem = resolve_container_path(found, path.container_path, oci)
        if problem:
            return CONTAINER_PATH, f"cachePaths[{i}] (container {found.name}): {problem}"
    return None


def verification_allows_use(mode: str, verification: Verification | None) -> bool:
    """kernelCacheVerificationAllowsUse: with artifactSecurity.mode "" or "none" anything goes; otherwise the
    KernelCache's status.verification must carry the same mode, state Succeeded and verified true. The raw
    mode is compared: "disabled" passes config validation but the controller records mode "none", so every
    cache is skipped."""
    if mode in c.SECURITY_MODES_ALLOWING_ANY:
        return True
    return (verification is not None and verification.mode == mode
            and verification.state == c.VERIFICATION_SUCCEEDED and verification.verified)


def _verification_text(mode: str, v: Verification | None) -> str:
    if v is None:
        return f'artifactSecurity.mode is "{mode}" but the KernelCache has no status.verification yet'
    got = f"mode {v.mode or '(none)'}, state {v.state or '(none)'}, verified {str(v.verified).lower()}"
    why = ": ".join(x for x in (v.reason, v.message) if x)
    text = f'artifactSecurity.mode is "{mode}"; status.verification is {got}{f" ({why})" if why else ""}'
    if mode == "disabled":
        text += ('; the webhook compares the mode as written, and the controller records mode "none" when '
                 'verification is disabled, so no cache is ever used: set artifactSecurity.mode to "none"')
    return text


def load_candidate(cand: Candidate, inputs: Inputs, mode: str) -> tuple[str, str, tuple[str, ...]] | None:
    """loadKernelCacheCandidate: None when the KernelCache loads, else (gate id, why, evidence)."""
    kc = cand.kernel_cache
    if kc is None:
        return KERNELCACHE_EXISTS, (f"KernelCacheNode entries name KernelCache {cand.key}, which does not exist "
                                    "(deleted: the agents drop its entries on their next pass)"), ()
    art = kc.artifact
    if art is None or not any(entry_matches_cache(e.entry, kc) for e in cand.entries):
        e = cand.entries[0]
        spec_image = art.image_reference if art is not None else ""
        evidence = []
        for ne in cand.entries:
            if art is not None and ne.entry.image_reference != spec_image:
                evidence.append(f"entry on {ne.node} is Ready but its imageReference is "
                                f"{_short(ne.entry.image_reference)}, the KernelCache says {_short(spec_image)}")
            elif art is not None:
                evidence.append(f"entry on {ne.node} is Ready but its footprints differ from the KernelCache's")
        detail = evidence[0] if evidence else f"the KernelCache has no artifact (entry on {e.node})"
        if len(evidence) > 1:
            detail += f" (and {len(evidence) - 1} more entries alike)"
        return ENTRY_MATCHES_SPEC, detail + ": the node's agent has not prepared the current artifact", tuple(evidence)
    problem = can_mount(kc, inputs.namespace, inputs.pod.spec_containers)
    if problem is not None:
        return problem[0], problem[1], ()
    if not verification_allows_use(mode, kc.verification):
        return VERIFICATION, _verification_text(mode, kc.verification), ()
    return None


def _candidate_base(ns: str, name: str, entries: list[NodeEntry], kcs: Mapping[str, KernelCache]) -> Candidate:
    return Candidate(ns, name, tuple(entries), kcs.get(f"{ns}/{name}"))


def candidates(inputs: Inputs, ident: Identity | None) -> tuple[list[Candidate], Candidate | None]:
    """Every KernelCache worth showing with its first failing gate, and the winner KServe picks."""
    ns = inputs.namespace
    index = inputs.entries if inputs.entries is not None else index_entries(inputs.kcns)
    kserve = index.ready_in.get(ns, [])
    cands = {k: _candidate_base(k[0], k[1], index.ready[k], inputs.kernel_caches) for k in kserve}
    winner: Candidate | None = None
    mode = inputs.config.config.artifact_security.mode if inputs.config.config is not None else "none"
    if ident is not None:
        loaded: dict[tuple[str, str], tuple[str, str, tuple[str, ...]] | None] = {}
        for pass_name, matches in ((WORKLOAD, _workload_match), (COMPATIBILITY, _compatibility_match)):
            for key in kserve:
                cand = cands[key]
                if cand.match is not None or not matches(ident, cand.entries):
                    continue
                if key not in loaded:
                    loaded[key] = load_candidate(cand, inputs, mode)
                problem = loaded[key]
                if problem is None:
                    cands[key] = replace(cand, match=pass_name, detail=f"{pass_name} match")
                    if winner is None:
                        winner = cands[key]
                else:
                    cands[key] = replace(cand, match=pass_name, rejected_by=problem[0], detail=problem[1],
                                         evidence=problem[2])
        for key in kserve:
            cand = cands[key]
            if cand.match is None:
                detail, evidence = _footprint_miss(ident, cand.kernel_cache, cand.entries)
                cands[key] = replace(cand, rejected_by=FOOTPRINT, detail=detail, evidence=evidence)
            elif winner is not None and cand.rejected_by is None and cand.key != winner.key:
                cands[key] = replace(cand, detail=f"{cand.match} match, but {winner.key} comes first "
                                                  f"({winner.match} pass, then name order)")
    else:
        for key in kserve:
            cands[key] = replace(cands[key], evaluated=False,
                                 detail="not evaluated: the pod's footprints are unknown")
    out = [cands[k] for k in kserve]
    out += _non_candidates(inputs, ident, index, set(kserve))
    return out, winner


def _non_candidates(inputs: Inputs, ident: Identity | None, index: EntryIndex,
                    seen: set[tuple[str, str]]) -> list[Candidate]:
    """The pod namespace's KernelCaches with no Ready entry, and other namespaces' caches the pod matches."""
    ns = inputs.namespace
    by_ref = index.by_ref
    out: list[Candidate] = []
    keys = {(kc.namespace, kc.name) for kc in inputs.kernel_caches.values() if kc.namespace == ns}
    keys |= index.refs_in.get(ns, set())
    for key in sorted(keys - seen):
        entries = by_ref.get(key, [])
        states = ", ".join(f"{e.node} {e.entry.state or '(no state)'}" for e in entries)
        detail = (f"no Ready entry on any node ({states})" if 0 < len(entries) <= 3 else
                  "no Ready entry on any node" if entries else
                  "no KernelCacheNode has an entry for it: it is prepared on no node yet")
        out.append(Candidate(key[0], key[1], tuple(entries), inputs.kernel_caches.get(f"{key[0]}/{key[1]}"),
                             rejected_by=ENTRY_READY, detail=detail, candidate=False))
    if ident is None:
        return out
    # a workload match needs the compatibility footprint too: the caches with a Ready entry of the pod's
    # compatibility footprint are every match
    for key in (k for k in index.by_compatibility.get(ident.compatibility_footprint, ()) if k[0] != ns):
        ready = index.ready[key]
        if _compatibility_match(ident, ready) or _workload_match(ident, ready):
            out.append(Candidate(key[0], key[1], tuple(ready), inputs.kernel_caches.get(f"{key[0]}/{key[1]}"),
                                 rejected_by=NAMESPACE, candidate=False,
                                 detail=f"its footprints match the pod, but it lives in namespace {key[0]}: the "
                                        f"webhook only uses KernelCaches of the pod's namespace ({ns})"))
    return out


# ---- injection ---------------------------------------------------------------------------------------------

class InjectionError(ValueError):
    """The webhook fails while mounting the winner: the pod is rejected (HTTP 500) with this message."""


def _clean(p: str) -> str:
    cleaned = posixpath.normpath(p) if p else "."
    if cleaned.startswith("//"):
        cleaned = "/" + cleaned.lstrip("/")
    return cleaned.rstrip("/")


def paths_overlap(a: str, b: str) -> bool:
    x, y = _clean(a), _clean(b)
    return x == y or y.startswith(x + "/") or x.startswith(y + "/")


def validate_cache_path(container_path: str, oci_path: str) -> None:
    cleaned = posixpath.normpath(container_path) if container_path else "."
    if (not container_path.startswith("/") or cleaned in ("/", "//") or "$" in container_path
            or "\x00" in container_path):
        raise InjectionError(f'invalid cache containerPath "{container_path}"')
    if (not oci_path or oci_path.startswith("/") or oci_path in (".", "..") or oci_path.startswith("../")
            or "\x00" in oci_path):
        raise InjectionError(f'invalid cache ociPath "{oci_path}"')


def plan_injection(pod: Pod, kc: KernelCache, default_mount_type: str, prefetch_image: str) -> Injection:
    """injectKernelCacheMount on the pod as its controller created it; InjectionError with KServe's message."""
    art = kc.artifact
    key = f"{kc.namespace}/{kc.name}"
    if art is None or not art.cache_paths:
        raise InjectionError(f"KernelCache {key} has no cache paths")
    if not art.image_reference:
        raise InjectionError(f"KernelCache {key} has no artifact image reference")
    resolved: list[tuple[Container, str, str]] = []
    for path in art.cache_paths:
        found = resolve_container(path.container_name, pod.spec_containers)
        if isinstance(found, str):
            raise InjectionError(found)
        oci, problem = resolve_oci_path(path.oci_path)
        if problem:
            raise InjectionError(problem)
        target, problem = resolve_container_path(found, path.container_path, oci)
        if problem:
            raise InjectionError(problem)
        validate_cache_path(target, oci)
        resolved.append((found, target, oci))
    mount_type = kc.mount_type or default_mount_type or c.MOUNT_TYPE_OCI
    if mount_type != c.MOUNT_TYPE_OCI:
        raise InjectionError(f'unsupported KernelCache mount type "{mount_type}"')
    volumes = {v.name: v for v in pod.volumes}
    added: list[Volume] = []
    source = Volume(c.SOURCE_VOLUME, "image", {"image": {"reference": art.image_reference,
                                                         "pullPolicy": "IfNotPresent"}})
    if c.SOURCE_VOLUME in volumes and dict(volumes[c.SOURCE_VOLUME].spec) != dict(source.spec):
        raise InjectionError(f'conflicting volume "{c.SOURCE_VOLUME}"')
    if c.SOURCE_VOLUME not in volumes:
        added.append(source)
    mounts: dict[str, list[VolumeMount]] = {x.name: list(x.volume_mounts) for x in pod.spec_containers}
    new_mounts: list[Mount] = []
    linker = [VolumeMount(c.SOURCE_VOLUME, c.LINKER_MOUNT_PATH, True)]
    args: list[str] = []
    with_source: set[str] = set()
    for i, (ctr, target, oci) in enumerate(resolved):
        mount = _target_mount(ctr.name, mounts[ctr.name], target, i, volumes, added, new_mounts)
        _add_linker_mount(linker, mount)
        args += [f"{c.LINKER_MOUNT_PATH}/{posixpath.normpath(oci)}", target]
        if ctr.name not in with_source:
            _add_source_mount(ctr.name, mounts[ctr.name], new_mounts)
            with_source.add(ctr.name)
    usage = pod.meta.annotations.get(c.ANNOTATION_USAGE, "")
    if usage and usage != key:
        raise InjectionError(f'Pod already records KernelCache "{usage}"')
    return Injection(kernel_cache=key, image_reference=art.image_reference, volumes=tuple(added),
                     mounts=tuple(new_mounts), linker_args=tuple(args),
                     linker_added=not any(x.name == c.LINKER_CONTAINER for x in pod.init_containers),
                     linker_image=prefetch_image, annotation=(c.ANNOTATION_USAGE, key))


def _target_mount(container: str, mounts: list[VolumeMount], target: str, index: int, volumes: Mapping[str, Volume],
                  added: list[Volume], new_mounts: list[Mount]) -> VolumeMount:
    for m in mounts:
        if m.mount_path == target:
            if m.read_only:
                raise InjectionError(f'cache path "{target}" is read-only')
            return m
        if paths_overlap(m.mount_path, target):
            raise InjectionError(f'cache path "{target}" overlaps mount "{m.mount_path}"')
    name = f"{c.RUNTIME_VOLUME_PREFIX}{index}"
    volume = Volume(name, "emptyDir", {"emptyDir": {}})
    existing = volumes.get(name) or next((v for v in added if v.name == name), None)
    if existing is not None and dict(existing.spec) != dict(volume.spec):
        raise InjectionError(f'conflicting volume "{name}"')
    if existing is None:
        added.append(volume)
    mount = VolumeMount(name, target)
    mounts.append(mount)
    new_mounts.append(Mount(container, name, target))
    return mount


def _add_linker_mount(linker: list[VolumeMount], mount: VolumeMount) -> None:
    for m in linker:
        if m.mount_path == mount.mount_path:
            if m.name != mount.name:
                raise InjectionError(f'conflicting mount at "{mount.mount_path}"')
            return
        if paths_overlap(m.mount_path, mount.mount_path):
            raise InjectionError(f'mount path "{mount.mount_path}" overlaps mount "{m.mount_path}"')
    linker.append(mount)


def _add_source_mount(container: str, mounts: list[VolumeMount], new_mounts: list[Mount]) -> None:
    for m in mounts:
        if m.mount_path == c.LINKER_MOUNT_PATH:
            if m.name != c.SOURCE_VOLUME or not m.read_only:
                raise InjectionError(f'conflicting mount at "{c.LINKER_MOUNT_PATH}"')
            return
        if paths_overlap(m.mount_path, c.LINKER_MOUNT_PATH):
            raise InjectionError(f'mount path "{c.LINKER_MOUNT_PATH}" overlaps mount "{m.mount_path}"')
    mounts.append(VolumeMount(c.SOURCE_VOLUME, c.LINKER_MOUNT_PATH, True))
    new_mounts.append(Mount(container, c.SOURCE_VOLUME, c.LINKER_MOUNT_PATH, True))


# ---- the whole decision -------------------------------------------------------------------------------------

def decide(inputs: Inputs) -> Admission:
    """KServe's admission of `inputs.pod` (as its controller created it: see `pre_admission`)."""
    gates, cands, ident, model, winner, injection = _cache_step(inputs)
    gates = _effects(gates)
    gates += sidecar_gates(inputs, gates, injection)
    return Admission(tuple(_effects(gates)), tuple(cands), ident, model, winner, injection)


def _cache_step(inputs: Inputs) -> tuple[list[Gate], list[Candidate], Identity | None, ModelSource | None,
                                         Candidate | None, Injection | None]:
    pod = inputs.pod
    gates = webhook_gates(inputs) + handler_gates(inputs)
    id_gates, model, ident = identity_gates(pod, inputs.namespace)
    gates += id_gates
    cands, winner = candidates(inputs, ident)
    n_ready = sum(1 for x in cands if x.candidate)
    if not n_ready:
        gates.append(Gate(CANDIDATES, False, f"no KernelCacheNode has a Ready entry for a KernelCache in namespace "
                                             f"{inputs.namespace}: nothing to select"))
    else:
        gates.append(Gate(CANDIDATES, True, f"{n_ready} KernelCache(s) with a Ready entry in namespace "
                                            f"{inputs.namespace}"))
    if ident is None:
        gates.append(Gate(SELECTION, None, "not evaluated: the pod's footprints are unknown"))
        gates.append(Gate(INJECTION, None, "nothing selected"))
        return gates, cands, None, model, None, None
    if winner is None:
        gates.append(Gate(SELECTION, False if n_ready else None,
                          "no candidate passes every check (see candidates)" if n_ready else "no candidate"))
        gates.append(Gate(INJECTION, None, "nothing selected"))
        return gates, cands, ident, model, None, None
    gates.append(Gate(SELECTION, True, f"{winner.key} ({winner.match} match)"))
    assert winner.kernel_cache is not None
    cfg = inputs.config.config
    try:
        injection = plan_injection(pod, winner.kernel_cache, cfg.default_mount_type if cfg else c.MOUNT_TYPE_OCI,
                                   cfg.prefetch_image if cfg else "")
    except InjectionError as exc:
        gates.append(Gate(INJECTION, False, f"mounting {winner.key} fails: the webhook rejects the pod with HTTP "
                                            f"500 \"{exc}\" (it does not fall back to another KernelCache)",
                          message=str(exc)))
        return gates, cands, ident, model, winner, None
    gates.append(Gate(INJECTION, True, f"volume {c.SOURCE_VOLUME} (image {injection.image_reference}), init "
                                       f"container {c.LINKER_CONTAINER}, annotation {c.ANNOTATION_USAGE}={winner.key}"))
    return gates, cands, ident, model, winner, injection


def with_injection(pod: Pod, injection: Injection | None) -> Pod:
    """The pod as the cache step leaves it: the injection's volumes and mounts added (what the sidecar step
    sees)."""
    if injection is None:
        return pod
    spec = pod.spec or PodSpec()
    extra: dict[str, list[VolumeMount]] = {}
    for m in injection.mounts:
        extra.setdefault(m.container, []).append(VolumeMount(m.name, m.path, m.read_only))

    def add(ctr: Container) -> Container:
        return struct_replace(ctr, volume_mounts=(*ctr.volume_mounts, *extra.get(ctr.name, ())))

    volumes = [*(spec.volumes or ()), *({"name": v.name, **dict(v.spec)} for v in injection.volumes)]
    return struct_replace(pod, spec=struct_replace(spec, containers=tuple(add(x) for x in spec.containers),
                                                   volumes=volumes))


def sidecar_gates(inputs: Inputs, gates: Sequence[Gate], injection: Injection | None) -> list[Gate]:
    """The capture sidecar step's gates: not reached when an earlier gate ended admission (anything but a
    cache miss), else whether it runs and each of its checks."""
    stop = next((g for g in gates if g.passed is False and not (g.effect == SKIP and g.id in CACHE_MISSES)), None)
    cfg = inputs.config.config
    if stop is not None or cfg is None:
        why = f"not reached: admission ends at {stop.id}" if stop is not None else "no configuration to check"
        return [Gate(g, None, why) for g in SIDECAR_GATES]
    on, source = sc.injection_enabled(cfg, inputs.pod.meta.annotations)
    if not on:
        return [Gate(SIDECAR, True, f"skipped: {source}: no capture sidecar is injected")] + \
            [Gate(g, None, "the sidecar step is skipped") for g in sc.STEPS]
    step = sc.plan(with_injection(inputs.pod, injection), inputs.namespace, cfg, inputs.captures,
                   revision_known=inputs.revision_known)
    if step.runs is None:
        return [Gate(SIDECAR, None, f"{source}; {step.why}: not checked")] + \
            [Gate(g, None, "not checked: whether the sidecar step runs is not known") for g in sc.STEPS]
    if not step.runs:
        return [Gate(SIDECAR, True, f"skipped: {step.why}")] + \
            [Gate(g, None, "the sidecar step is skipped") for g in sc.STEPS]
    out = [Gate(SIDECAR, True, f"runs ({source}; {step.why}): the webhook injects the capture sidecar "
                               f"{c.MCV_CONTAINER}")]
    done = dict(step.passed)
    for g in sc.STEPS:
        if g in done:
            out.append(Gate(g, True, done[g]))
        elif step.error is not None and step.error.step == g:
            out.append(Gate(g, False, f"the webhook rejects the pod with HTTP 500 \"{step.error}\" in the capture "
                                      "sidecar step" + (", after mounting the cache" if injection is not None else
                                                        " (the image class is not checked there)"),
                            message=str(step.error)))
        else:
            out.append(Gate(g, None, "not reached: an earlier sidecar check fails"))
    return out


def _effects(gates: Iterable[Gate]) -> list[Gate]:
    """Each failed gate with its effect; the denial message of a rejecting gate stays in its detail."""
    return [replace(g, effect=g.effect or _EFFECTS[g.id]) if g.passed is False else g for g in gates]


def denial_message(admission: Admission) -> str:
    """What the API server says when the webhook rejects the pod (a FailedCreate event on its ReplicaSet)."""
    gate = admission.blocked_by
    if gate is None or gate.effect != REJECT:
        return ""
    return f'admission webhook "{c.WEBHOOK_NAME}" denied the request: {gate.message}'


# ---- inputs from a snapshot ----------------------------------------------------------------------------------

def snapshot_inputs(snapshot: ClusterSnapshot, namespace: str, pod: Pod, *, webhook_known: bool,
                    captures_known: bool, revision_known: bool = True, config: ConfigState | None = None,
                    kernel_caches: Mapping[str, KernelCache] | None = None,
                    entries: EntryIndex | None = None) -> Inputs:
    """The decision's inputs for `pod` (as its controller creates it) from a snapshot: only the namespace's
    KernelCaches and captures, as the webhook reads them. Whether the webhook configuration and the captures
    were read is the caller's to say (`webhook_known`, `captures_known`). A caller deciding for many pods
    passes what they share: the config, the namespace's KernelCaches, `index_entries(kcns)`."""
    from .config import read_config

    ns_obj = next((n for n in snapshot.namespaces if n.meta.name == namespace), None)
    return Inputs(
        pod=pod,
        namespace=namespace,
        config=config if config is not None else read_config(snapshot.configmap(c.KSERVE_NAMESPACE,
                                                                                 c.CONFIGMAP_NAME)),
        kcns=snapshot.kcns,
        kernel_caches=kernel_caches if kernel_caches is not None else {
            k: v for k, v in snapshot.kc_by_key.items() if v.namespace == namespace},
        entries=entries,
        webhooks=snapshot.webhooks,
        webhook_known=webhook_known,
        namespace_labels=ns_obj.meta.labels if ns_obj is not None else None,
        captures={x.name: x for x in snapshot.captures if x.namespace == namespace} if captures_known else None,
        revision_known=revision_known,
    )
