"""The Kernel Cache kinds of serving.kserve.io/v1alpha1: KernelCacheNodeGroup, KernelCacheNode,
KernelCache, KernelCacheCapture, and the artifact they share."""

from __future__ import annotations

from functools import cached_property
from typing import Any

import msgspec
from msgspec import field
from msgspec.structs import force_setattr

from ..sharing import active as sharing_active
from ..sharing import share
from .base import (
    Bool,
    Condition,
    Int,
    Items,
    NamespacedName,
    RawArtifact,
    Str,
    StrMap,
    Toleration,
    _NameRef,
    _Obj,
    _Object,
    _Of,
    _share_parts,
    _strs,
    time_text,
)


class Footprints(_Obj, frozen=True):
    workload: Str = field(default="", name="workloadFootprint")
    compatibility: Str = field(default="", name="compatibilityFootprint")


class _Identity(_Obj, frozen=True):
    footprints: Footprints | None = None
    factors: StrMap = {}

    def __post_init__(self) -> None:
        _Obj.__post_init__(self)
        if self.factors:
            force_setattr(self, "factors", _strs(self.factors))


class CachePath(_Obj, frozen=True):
    """A KernelCachePath: empty fields take KServe's defaults when the cache is mounted."""

    container_name: Str = ""
    container_path: Str = ""
    oci_path: Str = ""


class Artifact(_Obj, frozen=True):
    """An artifact (KernelCache spec, capture status). `raw` is the whole artifact as given, unknown fields
    included: reconcile copies it into the KernelCache it creates and compares it."""

    image_reference: Str = ""
    identity: _Identity | None = None
    cache_paths: Items[CachePath] = ()
    raw: dict[str, Any] = field(default_factory=dict, name="#raw")

    @property
    def footprints(self) -> Footprints:
        return (self.identity.footprints if self.identity else None) or _NO_FOOTPRINTS

    @property
    def factors(self) -> dict[str, str]:
        """identity.factors (informational: KServe matches footprints)."""
        return self.identity.factors if self.identity else {}


_NO_FOOTPRINTS = Footprints()


def _artifact(raw: Any, where: str) -> Artifact | None:
    """The typed view of a raw artifact (decoded as a dict so that `raw` keeps every field)."""
    if raw is None:
        return None
    try:
        art = msgspec.convert(raw, Artifact, strict=False)
    except msgspec.ValidationError as exc:
        raise ValueError(_nest(str(exc), where)) from None
    force_setattr(art, "raw", raw)
    return art


def _nest(message: str, where: str) -> str:
    """A ValidationError message of a nested conversion, with its path put under `where`."""
    text, sep, path = message.rpartition(" - at `$")
    if not sep:
        return f"{message} - at `$.{where}`"
    return f"{text} - at `$.{where}{path}"


class NodeGroupSpec(_Obj, frozen=True):
    node_selector: StrMap = {}
    tolerations: Items[Toleration] = ()

    def __post_init__(self) -> None:
        _Obj.__post_init__(self)
        if self.node_selector:
            force_setattr(self, "node_selector", _strs(self.node_selector))


_GROUP_SPEC = NodeGroupSpec()


class NodeGroup(_Object, frozen=True, dict=True):
    spec: NodeGroupSpec | None = None

    node_selector = _Of[dict[str, str]]("spec", _GROUP_SPEC, "node_selector")
    tolerations = _Of[tuple[Toleration, ...]]("spec", _GROUP_SPEC, "tolerations")


class CacheEntry(msgspec.Struct, frozen=True, gc=False):
    """One entry of a KernelCacheNode's status.cacheStatus (keyed "namespace/name")."""

    key: str
    ref: NamespacedName
    image_reference: str = ""
    state: str = ""
    message: str = ""
    last_update: str = ""
    footprints: Footprints = _NO_FOOTPRINTS


class CacheStatus(_Obj, frozen=True):
    kernel_cache_ref: NamespacedName | None = None
    image_reference: Str = ""
    state: Str = ""
    message: Str = ""
    last_update: Any | None = None
    footprints: Footprints | None = None

    def ref_under(self, key: str) -> NamespacedName:
        """The KernelCache this entry, kept under `key` in cacheStatus, stands for: its kernelCacheRef, else
        the key read as "namespace/name"."""
        if self.kernel_cache_ref is not None:
            return self.kernel_cache_ref
        ns, _, name = key.partition("/")
        return NamespacedName(ns, name)


class _KcnCounts(_Obj, frozen=True):
    total_pods_using: Int = 0


class KernelCacheNodeStatus(_Obj, frozen=True):
    cache_status: dict[str, CacheStatus] | None = None
    counts: _KcnCounts | None = None
    total_pods_using: Int = 0  # read at either place: KServe's counts are derived, not relied on

    def __post_init__(self) -> None:
        _Obj.__post_init__(self)
        if self.cache_status and sharing_active():
            # a cache's entry is on every node of its group, most often the same (state, time, message): the
            # entry and its key are kept once; an entry that differs still keeps its parts once
            force_setattr(self, "cache_status", {share(k): _shared_entry(v) for k, v in self.cache_status.items()})


def _shared_entry(entry: CacheStatus) -> CacheStatus:
    kept = share(entry)
    if kept is entry:
        _share_parts(entry, "kernel_cache_ref", "image_reference", "footprints", "state", "last_update")
    return kept


class KernelCacheNode(_Object, frozen=True, dict=True):
    status: KernelCacheNodeStatus | None = None

    @property
    def total_pods_using(self) -> int:
        st = self.status
        if st is None:
            return 0
        return (st.counts.total_pods_using if st.counts is not None else 0) or st.total_pods_using

    @cached_property
    def entries(self) -> tuple[CacheEntry, ...]:
        cache = (self.status.cache_status if self.status else None) or {}
        out = []
        for key in sorted(cache):
            e = cache[key]
            ref = e.ref_under(key)
            when = e.last_update  # a time not in year 1 is its own text (time_text), without the call
            out.append(
                CacheEntry(
                    key,
                    ref,
                    e.image_reference,
                    e.state,
                    e.message,
                    when if type(when) is str and not when.startswith("0001-") else time_text(when),
                    e.footprints or _NO_FOOTPRINTS,
                )
            )
        return tuple(out)


class Verification(_Obj, frozen=True):
    mode: Str = ""
    state: Str = ""
    reason: Str = ""
    message: Str = ""
    verified: Bool = False


class KernelCacheSpec(_Obj, frozen=True):
    artifact: RawArtifact = None
    node_group_ref: _NameRef | None = None
    mount_type: Str = ""

    def __post_init__(self) -> None:
        _Obj.__post_init__(self)
        force_setattr(self, "artifact", _artifact(self.artifact, "artifact"))


class _Counts(_Obj, frozen=True):
    node_count: Int = 0
    nodes_ready: Int = 0
    nodes_error: Int = 0
    nodes_preparing: Int = 0


class _PodRef(_Obj, frozen=True):
    namespace: Str = ""
    name: Str = ""


class PodUsage(_Obj, frozen=True):
    """A pod using a KernelCache (KernelCachePodUsage): written by KServe from the pod's usage annotation."""

    pod_uid: Str = field(default="", name="podUID")
    pod_ref: _PodRef | None = None
    node_name: Str = ""

    @property
    def name(self) -> str:
        return self.pod_ref.name if self.pod_ref else ""


class Usage(_Obj, frozen=True):
    pods: Items[PodUsage] = ()
    total_pods_using: Int = 0


class KernelCacheStatus(_Obj, frozen=True):
    state: Str = ""
    conditions: Items[Condition] = ()
    verification: Verification | None = None
    counts: _Counts | None = None
    usage: Usage | None = None


_KC_SPEC = KernelCacheSpec()
_KC_STATUS = KernelCacheStatus()
_COUNTS = _Counts()


class KernelCache(_Object, frozen=True, dict=True):
    spec: KernelCacheSpec | None = None
    status: KernelCacheStatus | None = None

    artifact = _Of[Artifact | None]("spec", _KC_SPEC, "artifact")
    mount_type = _Of[str]("spec", _KC_SPEC, "mount_type")
    state = _Of[str]("status", _KC_STATUS, "state")
    conditions = _Of[tuple[Condition, ...]]("status", _KC_STATUS, "conditions")
    verification = _Of[Verification | None]("status", _KC_STATUS, "verification")

    @property
    def usage_pods(self) -> tuple[PodUsage, ...]:
        usage = (self.status or _KC_STATUS).usage
        return usage.pods if usage is not None else ()

    @property
    def node_group(self) -> str:
        ref = (self.spec or _KC_SPEC).node_group_ref
        return ref.name if ref else ""

    @property
    def node_count(self) -> int:
        return ((self.status or _KC_STATUS).counts or _COUNTS).node_count

    @property
    def nodes_ready(self) -> int:
        return ((self.status or _KC_STATUS).counts or _COUNTS).nodes_ready

    @property
    def nodes_error(self) -> int:
        return ((self.status or _KC_STATUS).counts or _COUNTS).nodes_error


class ActiveSession(_Obj, frozen=True):
    id: Str = ""
    pod_name: Str = ""
    node_name: Str = ""
    requested_node_group: Str = ""

    def to_dict(self) -> dict[str, str]:
        out = {"id": self.id, "podName": self.pod_name}
        if self.node_name:
            out["nodeName"] = self.node_name
        if self.requested_node_group:
            out["requestedNodeGroup"] = self.requested_node_group
        return out


class Signing(_Obj, frozen=True):
    mode: Str = ""
    state: Str = ""
    signed: Bool = False
    reason: Str = ""
    message: Str = ""


class _SourceRef(_Obj, frozen=True):
    kind: Str = ""
    name: Str = ""


class _CaptureSigning(_Obj, frozen=True):
    profile_ref: _SourceRef | None = None  # {name}


class CaptureSpec(_Obj, frozen=True):
    source_ref: _SourceRef | None = None
    cache_paths: Items[CachePath] = ()
    target_image: Str = ""
    signing: _CaptureSigning | None = None


class CaptureStatus(_Obj, frozen=True):
    phase: Str = ""
    active_session: ActiveSession | None = None
    runtime_result: StrMap = {}
    artifact: RawArtifact = None
    kernel_cache_ref: NamespacedName | None = None
    signing: Signing | None = None
    conditions: Items[Condition] = ()

    def __post_init__(self) -> None:
        _Obj.__post_init__(self)
        force_setattr(self, "artifact", _artifact(self.artifact, "artifact"))
        if self.runtime_result:
            force_setattr(self, "runtime_result", _strs(self.runtime_result))


_CAPTURE_SPEC = CaptureSpec()
_CAPTURE_STATUS = CaptureStatus()
_SOURCE = _SourceRef()


class Capture(_Object, frozen=True, dict=True):
    spec: CaptureSpec | None = None
    status: CaptureStatus | None = None

    phase = _Of[str]("status", _CAPTURE_STATUS, "phase")
    cache_paths = _Of[tuple[CachePath, ...]]("spec", _CAPTURE_SPEC, "cache_paths")
    target_image = _Of[str]("spec", _CAPTURE_SPEC, "target_image")
    active_session = _Of[ActiveSession | None]("status", _CAPTURE_STATUS, "active_session")
    runtime_result = _Of[dict[str, str]]("status", _CAPTURE_STATUS, "runtime_result")
    artifact = _Of[Artifact | None]("status", _CAPTURE_STATUS, "artifact")
    kernel_cache_ref = _Of[NamespacedName | None]("status", _CAPTURE_STATUS, "kernel_cache_ref")
    signing = _Of[Signing | None]("status", _CAPTURE_STATUS, "signing")
    conditions = _Of[tuple[Condition, ...]]("status", _CAPTURE_STATUS, "conditions")

    @property
    def source_name(self) -> str:
        return ((self.spec or _CAPTURE_SPEC).source_ref or _SOURCE).name

    @property
    def signing_profile(self) -> str:
        """spec.signing.profileRef.name ("" when not set)."""
        spec = (self.spec or _CAPTURE_SPEC).signing
        return spec.profile_ref.name if spec is not None and spec.profile_ref is not None else ""
