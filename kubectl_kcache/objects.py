"""Slim, frozen views of the Kubernetes objects the plugin reads.

Each `from_dict` takes an object as the API returns it (a dict from JSON or YAML) and keeps only the
fields the commands use, so that thousands of nodes cost little memory. Parsing is lenient: unknown
fields are ignored and missing optional fields take KServe's defaults; a value of the wrong type is
an `ObjectError` naming the field, which the loaders turn into a clear message.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import InputError


class ObjectError(InputError):
    """An object does not have the shape its kind requires."""


def _map(obj: Any, where: str) -> Mapping[str, Any]:
    if obj is None:
        return {}
    if not isinstance(obj, Mapping):
        raise ObjectError(f"{where} must be an object, got {type(obj).__name__}")
    return obj


def _list(obj: Any, where: str) -> list[Any]:
    if obj is None:
        return []
    if not isinstance(obj, list):
        raise ObjectError(f"{where} must be a list, got {type(obj).__name__}")
    return obj


def _str(obj: Any, where: str) -> str:
    if obj is None:
        return ""
    if isinstance(obj, bool) or not isinstance(obj, (str, int, float)):
        raise ObjectError(f"{where} must be a string, got {type(obj).__name__}")
    return str(obj)


def _int(obj: Any, where: str, default: int = 0) -> int:
    if obj is None:
        return default
    if isinstance(obj, bool) or not isinstance(obj, (int, str)):
        raise ObjectError(f"{where} must be an integer, got {type(obj).__name__}")
    try:
        return int(obj)
    except ValueError as exc:
        raise ObjectError(f"{where} must be an integer, got {obj!r}") from exc


def _opt_int(obj: Any, where: str) -> int | None:
    return None if obj is None else _int(obj, where)


def _bool(obj: Any, where: str, default: bool = False) -> bool:
    if obj is None:
        return default
    if isinstance(obj, bool):
        return obj
    if isinstance(obj, str) and obj.lower() in ("true", "false"):
        return obj.lower() == "true"
    raise ObjectError(f"{where} must be a boolean, got {obj!r}")


def _strmap(obj: Any, where: str) -> dict[str, str]:
    return {str(k): _str(v, f"{where}.{k}") for k, v in _map(obj, where).items()}


@dataclass(frozen=True)
class OwnerRef:
    kind: str
    name: str
    controller: bool = False


@dataclass(frozen=True)
class Meta:
    name: str
    namespace: str | None = None
    uid: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    created: str = ""
    generation: int = 0
    resource_version: str = ""
    deleting: bool = False
    owners: tuple[OwnerRef, ...] = ()

    @staticmethod
    def from_dict(obj: Mapping[str, Any], kind: str) -> Meta:
        md = _map(obj.get("metadata"), f"{kind}.metadata")
        name = _str(md.get("name"), f"{kind}.metadata.name")
        if not name:
            raise ObjectError(f"{kind} without metadata.name")
        owners = tuple(
            OwnerRef(
                kind=_str(o.get("kind"), "ownerReferences.kind"),
                name=_str(o.get("name"), "ownerReferences.name"),
                controller=_bool(o.get("controller"), "ownerReferences.controller"),
            )
            for o in (_map(x, "ownerReferences[]") for x in _list(md.get("ownerReferences"), "ownerReferences"))
        )
        return Meta(
            name=name,
            namespace=_str(md.get("namespace"), f"{kind}.metadata.namespace") or None,
            uid=_str(md.get("uid"), "uid"),
            labels=_strmap(md.get("labels"), f"{kind} {name}: metadata.labels"),
            annotations=_strmap(md.get("annotations"), f"{kind} {name}: metadata.annotations"),
            created=_str(md.get("creationTimestamp"), "creationTimestamp"),
            generation=_int(md.get("generation"), "generation"),
            resource_version=_str(md.get("resourceVersion"), "resourceVersion"),
            deleting=md.get("deletionTimestamp") is not None,
            owners=owners,
        )

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


class _Namespaced:
    """name and namespace of a namespaced object's Meta."""

    meta: Meta

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def namespace(self) -> str:
        return self.meta.namespace or ""


@dataclass(frozen=True)
class Condition:
    type: str
    status: str
    reason: str = ""
    message: str = ""
    observed_generation: int | None = None
    last_transition: str = ""

    @staticmethod
    def list_from(items: Any, where: str) -> tuple[Condition, ...]:
        out = []
        for raw in _list(items, where):
            c = _map(raw, where)
            out.append(
                Condition(
                    type=_str(c.get("type"), f"{where}.type"),
                    status=_str(c.get("status"), f"{where}.status"),
                    reason=_str(c.get("reason"), f"{where}.reason"),
                    message=_str(c.get("message"), f"{where}.message"),
                    observed_generation=_opt_int(c.get("observedGeneration"), f"{where}.observedGeneration"),
                    last_transition=_str(c.get("lastTransitionTime") or c.get("lastTimestamp"), where),
                )
            )
        return tuple(out)


def find_condition(conditions: tuple[Condition, ...], type_: str) -> Condition | None:
    for c in conditions:
        if c.type == type_:
            return c
    return None


@dataclass(frozen=True)
class Taint:
    key: str
    effect: str
    value: str = ""

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"


@dataclass(frozen=True)
class Toleration:
    """A core/v1 Toleration. Empty strings stand for absent fields, as in Go."""

    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    @staticmethod
    def list_from(items: Any, where: str) -> tuple[Toleration, ...]:
        out = []
        for raw in _list(items, where):
            t = _map(raw, where)
            out.append(
                Toleration(
                    key=_str(t.get("key"), f"{where}.key"),
                    operator=_str(t.get("operator"), f"{where}.operator"),
                    value=_str(t.get("value"), f"{where}.value"),
                    effect=_str(t.get("effect"), f"{where}.effect"),
                    toleration_seconds=_opt_int(t.get("tolerationSeconds"), f"{where}.tolerationSeconds"),
                )
            )
        return tuple(out)

    def to_dict(self) -> dict[str, Any]:
        """The toleration as JSON with Go's field order, empty fields left out (omitempty)."""
        out: dict[str, Any] = {}
        for name, value in (
            ("key", self.key),
            ("operator", self.operator),
            ("value", self.value),
            ("effect", self.effect),
        ):
            if value:
                out[name] = value
        if self.toleration_seconds is not None:
            out["tolerationSeconds"] = self.toleration_seconds
        return out


def _image_key(name: str) -> bytes:
    return hashlib.blake2b(name.encode("utf-8", "surrogatepass"), digest_size=8).digest()


@dataclass(frozen=True)
class NodeImages:
    """The names in Node.status.images, kept as 8-byte digests (a GPU node lists ~50 images with ~100
    names: 5,000 nodes would otherwise hold ~40 MB of strings), and the smallest image size listed (the
    kubelet lists at most nodeStatusMaxImages images, largest first, so anything smaller is left out)."""

    keys: bytes = b""
    smallest_bytes: int | None = None

    def lists(self, name: str) -> bool:
        key = _image_key(name)
        return any(self.keys[i:i + 8] == key for i in range(0, len(self.keys), 8))

    @staticmethod
    def from_list(items: Any, where: str) -> NodeImages:
        keys = bytearray()
        sizes = []
        for raw in _list(items, where):
            image = _map(raw, f"{where}[]")
            for name in _list(image.get("names"), f"{where}[].names"):
                keys += _image_key(_str(name, f"{where}[].names[]"))
            if image.get("sizeBytes") is not None:
                sizes.append(_int(image.get("sizeBytes"), f"{where}[].sizeBytes"))
        return NodeImages(bytes(keys), min(sizes) if sizes else None)


@dataclass(frozen=True)
class Node:
    meta: Meta
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    ready: bool | None = None
    ready_reason: str = ""
    ready_message: str = ""
    kubelet_version: str = ""
    image_count: int = 0
    # why-not-cached / node-images: which names Node.status.images lists (see NodeImages)
    images: NodeImages = field(default_factory=lambda: NodeImages())

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def labels(self) -> Mapping[str, str]:
        return self.meta.labels

    def lists_image(self, reference: str) -> bool:
        """Whether Node.status.images has an entry with exactly this name (KServe's agent checks this)."""
        return self.images.lists(reference)

    @staticmethod
    def from_dict(obj: Mapping[str, Any]) -> Node:
        meta = Meta.from_dict(obj, "Node")
        spec = _map(obj.get("spec"), "Node.spec")
        status = _map(obj.get("status"), "Node.status")
        taints = tuple(
            Taint(
                key=_str(t.get("key"), "taint.key"),
                effect=_str(t.get("effect"), "taint.effect"),
                value=_str(t.get("value"), "taint.value"),
            )
            for t in (_map(x, "Node.spec.taints[]") for x in _list(spec.get("taints"), "Node.spec.taints"))
        )
        ready = find_condition(Condition.list_from(status.get("conditions"), "Node.status.conditions"), "Ready")
        info = _map(status.get("nodeInfo"), "Node.status.nodeInfo")
        return Node(
            meta=meta,
            taints=taints,
            unschedulable=_bool(spec.get("unschedulable"), "Node.spec.unschedulable"),
            ready=None if ready is None else ready.status == "True",
            ready_reason=ready.reason if ready else "",
            ready_message=ready.message if ready else "",
            kubelet_version=_str(info.get("kubeletVersion"), "Node.status.nodeInfo.kubeletVersion"),
            image_count=len(_list(status.get("images"), "Node.status.images")),
            images=NodeImages.from_list(status.get("images"), f"Node {meta.name}: status.images"),
        )


@dataclass(frozen=True)
class NodeGroup:
    meta: Meta
    node_selector: Mapping[str, str]
    tolerations: tuple[Toleration, ...] = ()

    @property
    def name(self) -> str:
        return self.meta.name

    @staticmethod
    def from_dict(obj: Mapping[str, Any]) -> NodeGroup:
        meta = Meta.from_dict(obj, "KernelCacheNodeGroup")
        spec = _map(obj.get("spec"), "KernelCacheNodeGroup.spec")
        where = f"KernelCacheNodeGroup {meta.name}: spec"
        return NodeGroup(
            meta=meta,
            node_selector=_strmap(spec.get("nodeSelector"), f"{where}.nodeSelector"),
            tolerations=Toleration.list_from(spec.get("tolerations"), f"{where}.tolerations"),
        )


@dataclass(frozen=True)
class Footprints:
    workload: str = ""
    compatibility: str = ""

    @staticmethod
    def from_dict(obj: Any, where: str) -> Footprints:
        m = _map(obj, where)
        return Footprints(
            workload=_str(m.get("workloadFootprint"), f"{where}.workloadFootprint"),
            compatibility=_str(m.get("compatibilityFootprint"), f"{where}.compatibilityFootprint"),
        )


@dataclass(frozen=True)
class CachePath:
    """A KernelCachePath: empty fields take KServe's defaults when the cache is mounted."""

    container_name: str = ""
    container_path: str = ""
    oci_path: str = ""

    @staticmethod
    def list_from(items: Any, where: str) -> tuple[CachePath, ...]:
        out = []
        for raw in _list(items, where):
            p = _map(raw, f"{where}[]")
            out.append(CachePath(container_name=_str(p.get("containerName"), f"{where}[].containerName"),
                                 container_path=_str(p.get("containerPath"), f"{where}[].containerPath"),
                                 oci_path=_str(p.get("ociPath"), f"{where}[].ociPath")))
        return tuple(out)


@dataclass(frozen=True)
class Artifact:
    image_reference: str
    footprints: Footprints
    cache_path_count: int
    raw: Mapping[str, Any] = field(compare=True, default_factory=dict)
    cache_paths: tuple[CachePath, ...] = ()
    factors: Mapping[str, str] = field(default_factory=dict)  # identity.factors, informational

    @staticmethod
    def from_dict(obj: Any, where: str) -> Artifact | None:
        if obj is None:
            return None
        m = _map(obj, where)
        identity = _map(m.get("identity"), f"{where}.identity")
        paths = CachePath.list_from(m.get("cachePaths"), f"{where}.cachePaths")
        return Artifact(
            image_reference=_str(m.get("imageReference"), f"{where}.imageReference"),
            footprints=Footprints.from_dict(identity.get("footprints"), f"{where}.identity.footprints"),
            cache_path_count=len(paths),
            raw=dict(m),
            cache_paths=paths,
            factors=_strmap(identity.get("factors"), f"{where}.identity.factors"),
        )


@dataclass(frozen=True)
class ObjectRef:
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"

    @staticmethod
    def from_dict(obj: Any, where: str) -> ObjectRef | None:
        if obj is None:
            return None
        m = _map(obj, where)
        return ObjectRef(_str(m.get("namespace"), f"{where}.namespace"), _str(m.get("name"), f"{where}.name"))


@dataclass(frozen=True)
class CacheEntry:
    key: str
    ref: ObjectRef
    image_reference: str = ""
    state: str = ""
    message: str = ""
    last_update: str = ""
    footprints: Footprints = Footprints()


@dataclass(frozen=True)
class KernelCacheNode:
    meta: Meta
    entries: tuple[CacheEntry, ...] = ()

    @property
    def name(self) -> str:
        return self.meta.name

    @staticmethod
    def from_dict(obj: Mapping[str, Any]) -> KernelCacheNode:
        meta = Meta.from_dict(obj, "KernelCacheNode")
        status = _map(obj.get("status"), "KernelCacheNode.status")
        where = f"KernelCacheNode {meta.name}: status.cacheStatus"
        entries = []
        for key, raw in sorted(_map(status.get("cacheStatus"), where).items(), key=lambda kv: str(kv[0])):
            e = _map(raw, f"{where}[{key}]")
            ref = ObjectRef.from_dict(e.get("kernelCacheRef"), f"{where}[{key}].kernelCacheRef")
            if ref is None:
                ns, _, name = str(key).partition("/")
                ref = ObjectRef(ns, name)
            entries.append(
                CacheEntry(
                    key=str(key),
                    ref=ref,
                    image_reference=_str(e.get("imageReference"), f"{where}[{key}].imageReference"),
                    state=_str(e.get("state"), f"{where}[{key}].state"),
                    message=_str(e.get("message"), f"{where}[{key}].message"),
                    last_update=_str(e.get("lastUpdate"), f"{where}[{key}].lastUpdate"),
                    footprints=Footprints.from_dict(e.get("footprints"), f"{where}[{key}].footprints"),
                )
            )
        return KernelCacheNode(meta=meta, entries=tuple(entries))


@dataclass(frozen=True)
class Verification:
    mode: str = ""
    state: str = ""
    reason: str = ""
    message: str = ""
    verified: bool = False


@dataclass(frozen=True)
class UsagePod:
    """An entry of KernelCache.status.usage.pods (written by KServe's controller from the usage annotation)."""

    uid: str = ""
    namespace: str = ""
    name: str = ""
    node_name: str = ""


@dataclass(frozen=True)
class KernelCache(_Namespaced):
    meta: Meta
    artifact: Artifact | None
    node_group: str = ""
    mount_type: str = ""
    state: str = ""
    conditions: tuple[Condition, ...] = ()
    verification: Verification | None = None
    node_count: int = 0
    nodes_ready: int = 0
    nodes_error: int = 0
    usage: tuple[UsagePod, ...] = ()
    total_pods_using: int = 0

    @staticmethod
    def from_dict(obj: Mapping[str, Any]) -> KernelCache:
        meta = Meta.from_dict(obj, "KernelCache")
        where = f"KernelCache {meta.key}"
        spec = _map(obj.get("spec"), f"{where}: spec")
        status = _map(obj.get("status"), f"{where}: status")
        ngr = _map(spec.get("nodeGroupRef"), f"{where}: spec.nodeGroupRef")
        ver = status.get("verification")
        verification = None
        if ver is not None:
            v = _map(ver, f"{where}: status.verification")
            verification = Verification(
                mode=_str(v.get("mode"), "mode"),
                state=_str(v.get("state"), "state"),
                reason=_str(v.get("reason"), "reason"),
                message=_str(v.get("message"), "message"),
                verified=_bool(v.get("verified"), "verified"),
            )
        counts = _map(status.get("counts"), f"{where}: status.counts")
        usage = _map(status.get("usage"), f"{where}: status.usage")
        users = []
        for raw in _list(usage.get("pods"), f"{where}: status.usage.pods"):
            u = _map(raw, f"{where}: status.usage.pods[]")
            ref = _map(u.get("podRef"), "podRef")
            users.append(UsagePod(uid=_str(u.get("podUID"), "podUID"),
                                  namespace=_str(ref.get("namespace"), "namespace"),
                                  name=_str(ref.get("name"), "name"), node_name=_str(u.get("nodeName"), "nodeName")))
        return KernelCache(
            meta=meta,
            artifact=Artifact.from_dict(spec.get("artifact"), f"{where}: spec.artifact"),
            node_group=_str(ngr.get("name"), f"{where}: spec.nodeGroupRef.name"),
            mount_type=_str(spec.get("mountType"), f"{where}: spec.mountType"),
            state=_str(status.get("state"), f"{where}: status.state"),
            conditions=Condition.list_from(status.get("conditions"), f"{where}: status.conditions"),
            verification=verification,
            node_count=_int(counts.get("nodeCount"), "nodeCount"),
            nodes_ready=_int(counts.get("nodesReady"), "nodesReady"),
            nodes_error=_int(counts.get("nodesError"), "nodesError"),
            usage=tuple(users),
            total_pods_using=_int(usage.get("totalPodsUsing"), "totalPodsUsing"),
        )


@dataclass(frozen=True)
class ActiveSession:
    id: str = ""
    pod_name: str = ""
    node_name: str = ""
    requested_node_group: str = ""

    def to_dict(self) -> dict[str, str]:
        out = {"id": self.id, "podName": self.pod_name}
        if self.node_name:
            out["nodeName"] = self.node_name
        if self.requested_node_group:
            out["requestedNodeGroup"] = self.requested_node_group
        return out


@dataclass(frozen=True)
class Signing:
    mode: str = ""
    state: str = ""
    signed: bool = False
    reason: str = ""
    message: str = ""


@dataclass(frozen=True)
class Capture(_Namespaced):
    meta: Meta
    source_kind: str = ""
    source_name: str = ""
    phase: str = ""
    active_session: ActiveSession | None = None
    runtime_result: Mapping[str, str] = field(default_factory=dict)
    artifact: Artifact | None = None
    kernel_cache_ref: ObjectRef | None = None
    signing: Signing | None = None
    conditions: tuple[Condition, ...] = ()

    @staticmethod
    def from_dict(obj: Mapping[str, Any]) -> Capture:
        meta = Meta.from_dict(obj, "KernelCacheCapture")
        where = f"KernelCacheCapture {meta.key}"
        spec = _map(obj.get("spec"), f"{where}: spec")
        status = _map(obj.get("status"), f"{where}: status")
        src = _map(spec.get("sourceRef"), f"{where}: spec.sourceRef")
        session = None
        if status.get("activeSession") is not None:
            s = _map(status.get("activeSession"), f"{where}: status.activeSession")
            session = ActiveSession(
                id=_str(s.get("id"), "activeSession.id"),
                pod_name=_str(s.get("podName"), "activeSession.podName"),
                node_name=_str(s.get("nodeName"), "activeSession.nodeName"),
                requested_node_group=_str(s.get("requestedNodeGroup"), "activeSession.requestedNodeGroup"),
            )
        signing = None
        if status.get("signing") is not None:
            g = _map(status.get("signing"), f"{where}: status.signing")
            signing = Signing(
                mode=_str(g.get("mode"), "signing.mode"),
                state=_str(g.get("state"), "signing.state"),
                signed=_bool(g.get("signed"), "signing.signed"),
                reason=_str(g.get("reason"), "signing.reason"),
                message=_str(g.get("message"), "signing.message"),
            )
        return Capture(
            meta=meta,
            source_kind=_str(src.get("kind"), "sourceRef.kind"),
            source_name=_str(src.get("name"), "sourceRef.name"),
            phase=_str(status.get("phase"), f"{where}: status.phase"),
            active_session=session,
            runtime_result=_strmap(status.get("runtimeResult"), f"{where}: status.runtimeResult"),
            artifact=Artifact.from_dict(status.get("artifact"), f"{where}: status.artifact"),
            kernel_cache_ref=ObjectRef.from_dict(status.get("kernelCacheRef"), f"{where}: status.kernelCacheRef"),
            signing=signing,
            conditions=Condition.list_from(status.get("conditions"), f"{where}: status.conditions"),
        )


@dataclass(frozen=True)
class ContainerState:
    name: str
    ready: bool = False
    restarts: int = 0
    waiting_reason: str = ""
    waiting_message: str = ""
    terminated_reason: str = ""
    terminated_message: str = ""
    exit_code: int | None = None
    image: str = ""


# ---- pod spec: what KServe's pod webhook reads and writes (why-not-cached, consumer checks) ----------


@dataclass(frozen=True)
class EnvVar:
    """An env entry: a literal `value`, or `value_from` (a Secret, ConfigMap or field: unknown at admission)."""

    name: str
    value: str = ""
    value_from: bool = False


@dataclass(frozen=True)
class VolumeMount:
    name: str
    mount_path: str = ""
    read_only: bool = False


@dataclass(frozen=True)
class Container:
    """A container of a pod spec (the parts the webhook reads)."""

    name: str
    image: str = ""
    command: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    env: tuple[EnvVar, ...] = ()
    volume_mounts: tuple[VolumeMount, ...] = ()

    @staticmethod
    def list_from(items: Any, where: str) -> tuple[Container, ...]:
        out = []
        for raw in _list(items, where):
            ctr = _map(raw, f"{where}[]")
            name = _str(ctr.get("name"), f"{where}[].name")
            at = f"{where}[{name}]"
            env = tuple(
                EnvVar(name=_str(e.get("name"), f"{at}.env[].name"), value=_str(e.get("value"), f"{at}.env[].value"),
                       value_from=e.get("valueFrom") is not None)
                for e in (_map(x, f"{at}.env[]") for x in _list(ctr.get("env"), f"{at}.env"))
            )
            mounts = tuple(
                VolumeMount(name=_str(m.get("name"), f"{at}.volumeMounts[].name"),
                            mount_path=_str(m.get("mountPath"), f"{at}.volumeMounts[].mountPath"),
                            read_only=_bool(m.get("readOnly"), f"{at}.volumeMounts[].readOnly"))
                for m in (_map(x, f"{at}.volumeMounts[]") for x in _list(ctr.get("volumeMounts"), f"{at}.volumeMounts"))
            )
            out.append(Container(
                name=name, image=_str(ctr.get("image"), f"{at}.image"),
                command=tuple(_str(x, f"{at}.command[]") for x in _list(ctr.get("command"), f"{at}.command")),
                args=tuple(_str(x, f"{at}.args[]") for x in _list(ctr.get("args"), f"{at}.args")),
                env=env, volume_mounts=mounts))
        return tuple(out)


@dataclass(frozen=True)
class Volume:
    """A pod volume: its name, the kind of its source (`image`, `emptyDir`, ...) and the source as given."""

    name: str
    source: str = ""
    spec: Mapping[str, Any] = field(default_factory=dict)  # the volume without its name (for deep-equal)

    @property
    def image_reference(self) -> str:
        image = self.spec.get("image")
        return str(image.get("reference") or "") if isinstance(image, Mapping) else ""

    @staticmethod
    def list_from(items: Any, where: str) -> tuple[Volume, ...]:
        out = []
        for raw in _list(items, where):
            vol = _map(raw, f"{where}[]")
            spec = {str(k): v for k, v in vol.items() if k != "name"}
            out.append(Volume(name=_str(vol.get("name"), f"{where}[].name"), source=next(iter(spec), ""), spec=spec))
        return tuple(out)


@dataclass(frozen=True)
class Pod(_Namespaced):
    meta: Meta
    node_name: str = ""
    phase: str = ""
    ready: bool = False
    reason: str = ""
    message: str = ""
    scheduled_reason: str = ""
    scheduled_message: str = ""
    containers: tuple[ContainerState, ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    # the spec as KServe's pod webhook sees it
    spec_containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    volumes: tuple[Volume, ...] = ()
    image_pull_secrets: tuple[str, ...] = ()

    @staticmethod
    def from_dict(obj: Mapping[str, Any]) -> Pod:
        meta = Meta.from_dict(obj, "Pod")
        where = f"Pod {meta.key}"
        spec = _map(obj.get("spec"), f"{where}: spec")
        status = _map(obj.get("status"), f"{where}: status")
        conds = Condition.list_from(status.get("conditions"), f"{where}: status.conditions")
        ready = find_condition(conds, "Ready")
        sched = find_condition(conds, "PodScheduled")
        containers = []
        for key in ("initContainerStatuses", "containerStatuses"):
            for raw in _list(status.get(key), f"{where}: status.{key}"):
                cs = _map(raw, f"{where}: status.{key}[]")
                state = _map(cs.get("state"), "state")
                waiting = _map(state.get("waiting"), "state.waiting")
                term = _map(state.get("terminated"), "state.terminated")
                if not term:
                    term = _map(_map(cs.get("lastState"), "lastState").get("terminated"), "lastState.terminated")
                containers.append(
                    ContainerState(
                        name=_str(cs.get("name"), "name"),
                        ready=_bool(cs.get("ready"), "ready"),
                        restarts=_int(cs.get("restartCount"), "restartCount"),
                        waiting_reason=_str(waiting.get("reason"), "waiting.reason"),
                        waiting_message=_str(waiting.get("message"), "waiting.message"),
                        terminated_reason=_str(term.get("reason"), "terminated.reason"),
                        terminated_message=_str(term.get("message"), "terminated.message"),
                        exit_code=_opt_int(term.get("exitCode"), "terminated.exitCode"),
                        image=_str(cs.get("image"), "image"),
                    )
                )
        return Pod(
            meta=meta,
            node_name=_str(spec.get("nodeName"), f"{where}: spec.nodeName"),
            phase=_str(status.get("phase"), f"{where}: status.phase"),
            ready=bool(ready and ready.status == "True"),
            reason=_str(status.get("reason"), "status.reason"),
            message=_str(status.get("message"), "status.message"),
            scheduled_reason=sched.reason if sched and sched.status != "True" else "",
            scheduled_message=sched.message if sched and sched.status != "True" else "",
            containers=tuple(containers),
            tolerations=Toleration.list_from(spec.get("tolerations"), f"{where}: spec.tolerations"),
            spec_containers=Container.list_from(spec.get("containers"), f"{where}: spec.containers"),
            init_containers=Container.list_from(spec.get("initContainers"), f"{where}: spec.initContainers"),
            volumes=Volume.list_from(spec.get("volumes"), f"{where}: spec.volumes"),
            image_pull_secrets=tuple(
                _str(_map(x, "imagePullSecrets[]").get("name"), "imagePullSecrets[].name")
                for x in _list(spec.get("imagePullSecrets"), f"{where}: spec.imagePullSecrets")),
        )


@dataclass(frozen=True)
class DaemonSet:
    meta: Meta
    node_selector: Mapping[str, str] | None
    affinity: Mapping[str, Any] | None
    tolerations: tuple[Toleration, ...]
    desired: int = 0
    current: int = 0
    ready: int = 0
    updated: int = 0
    available: int = 0
    misscheduled: int = 0
    observed_generation: int = 0

    @staticmethod
    def from_dict(obj: Mapping[str, Any]) -> DaemonSet:
        meta = Meta.from_dict(obj, "DaemonSet")
        where = f"DaemonSet {meta.key}"
        spec = _map(obj.get("spec"), f"{where}: spec")
        pod_spec = _map(_map(spec.get("template"), "template").get("spec"), f"{where}: spec.template.spec")
        status = _map(obj.get("status"), f"{where}: status")
        ns = pod_spec.get("nodeSelector")
        aff = pod_spec.get("affinity")
        return DaemonSet(
            meta=meta,
            node_selector=None if ns is None else _strmap(ns, f"{where}: nodeSelector"),
            affinity=None if aff is None else dict(_map(aff, f"{where}: affinity")),
            tolerations=Toleration.list_from(pod_spec.get("tolerations"), f"{where}: tolerations"),
            desired=_int(status.get("desiredNumberScheduled"), "desiredNumberScheduled"),
            current=_int(status.get("currentNumberScheduled"), "currentNumberScheduled"),
            ready=_int(status.get("numberReady"), "numberReady"),
            updated=_int(status.get("updatedNumberScheduled"), "updatedNumberScheduled"),
            available=_int(status.get("numberAvailable"), "numberAvailable"),
            misscheduled=_int(status.get("numberMisscheduled"), "numberMisscheduled"),
            observed_generation=_int(status.get("observedGeneration"), "observedGeneration"),
        )


@dataclass(frozen=True)
class Deployment:
    meta: Meta
    replicas: int = 1
    ready_replicas: int = 0
    available_replicas: int = 0
    conditions: tuple[Condition, ...] = ()

    @staticmethod
    def from_dict(obj: Mapping[str, Any]) -> Deployment:
        meta = Meta.from_dict(obj, "Deployment")
        spec = _map(obj.get("spec"), "Deployment.spec")
        status = _map(obj.get("status"), "Deployment.status")
        return Deployment(
            meta=meta,
            replicas=_int(spec.get("replicas"), "spec.replicas", default=1),
            ready_replicas=_int(status.get("readyReplicas"), "readyReplicas"),
            available_replicas=_int(status.get("availableReplicas"), "availableReplicas"),
            conditions=Condition.list_from(status.get("conditions"), "Deployment.status.conditions"),
        )


@dataclass(frozen=True)
class Job:
    meta: Meta
    conditions: tuple[Condition, ...] = ()
    active: int = 0
    succeeded: int = 0
    failed: int = 0
    completion_time: str = ""
    ttl_seconds: int | None = None
    image_reference: str = ""
    node_selector: Mapping[str, str] = field(default_factory=dict)

    @staticmethod
    def from_dict(obj: Mapping[str, Any]) -> Job:
        meta = Meta.from_dict(obj, "Job")
        where = f"Job {meta.key}"
        spec = _map(obj.get("spec"), f"{where}: spec")
        status = _map(obj.get("status"), f"{where}: status")
        pod_spec = _map(_map(spec.get("template"), "template").get("spec"), f"{where}: template.spec")
        image = ""
        for vol in _list(pod_spec.get("volumes"), f"{where}: volumes"):
            ref = _map(_map(vol, "volume").get("image"), "volume.image").get("reference")
            if ref:
                image = _str(ref, "volume.image.reference")
        return Job(
            meta=meta,
            conditions=Condition.list_from(status.get("conditions"), f"{where}: status.conditions"),
            active=_int(status.get("active"), "active"),
            succeeded=_int(status.get("succeeded"), "succeeded"),
            failed=_int(status.get("failed"), "failed"),
            completion_time=_str(status.get("completionTime"), "completionTime"),
            ttl_seconds=_opt_int(spec.get("ttlSecondsAfterFinished"), "ttlSecondsAfterFinished"),
            image_reference=image,
            node_selector=_strmap(pod_spec.get("nodeSelector"), f"{where}: nodeSelector"),
        )


@dataclass(frozen=True)
class Event:
    meta: Meta
    type: str = ""
    reason: str = ""
    message: str = ""
    involved_kind: str = ""
    involved_name: str = ""
    involved_namespace: str = ""
    count: int = 1
    last_seen: str = ""
    action: str = ""
    reporting_controller: str = ""

    @staticmethod
    def from_dict(obj: Mapping[str, Any]) -> Event:
        meta = Meta.from_dict(obj, "Event")
        inv = _map(obj.get("involvedObject") or obj.get("regarding"), "Event.involvedObject")
        series = _map(obj.get("series"), "Event.series")
        count = _int(obj.get("count") or obj.get("deprecatedCount") or series.get("count"), "count", default=1)
        return Event(
            meta=meta,
            type=_str(obj.get("type"), "Event.type"),
            reason=_str(obj.get("reason"), "Event.reason"),
            message=_str(obj.get("message") or obj.get("note"), "Event.message"),
            involved_kind=_str(inv.get("kind"), "involvedObject.kind"),
            involved_name=_str(inv.get("name"), "involvedObject.name"),
            involved_namespace=_str(inv.get("namespace"), "involvedObject.namespace"),
            count=count,
            last_seen=_str(
                series.get("lastObservedTime") or obj.get("lastTimestamp") or obj.get("eventTime") or meta.created,
                "Event.lastTimestamp",
            ),
            action=_str(obj.get("action"), "Event.action"),
            reporting_controller=_str(
                obj.get("reportingComponent") or obj.get("reportingController"), "Event.reportingComponent"
            ),
        )


@dataclass(frozen=True)
class ConfigMap:
    meta: Meta
    data: Mapping[str, str] = field(default_factory=dict)

    @staticmethod
    def from_dict(obj: Mapping[str, Any]) -> ConfigMap:
        meta = Meta.from_dict(obj, "ConfigMap")
        return ConfigMap(meta=meta, data=_strmap(obj.get("data"), f"ConfigMap {meta.key}: data"))


@dataclass(frozen=True)
class SelectorRequirement:
    key: str
    operator: str
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class LabelSelector:
    """A metav1.LabelSelector; `None` where an object holds one means "not set" (matches everything)."""

    match_labels: Mapping[str, str] = field(default_factory=dict)
    match_expressions: tuple[SelectorRequirement, ...] = ()

    @staticmethod
    def from_dict(obj: Any, where: str) -> LabelSelector | None:
        if obj is None:
            return None
        m = _map(obj, where)
        exprs = tuple(
            SelectorRequirement(key=_str(e.get("key"), f"{where}.matchExpressions[].key"),
                                operator=_str(e.get("operator"), f"{where}.matchExpressions[].operator"),
                                values=tuple(_str(v, "values[]") for v in _list(e.get("values"), "values")))
            for e in (_map(x, f"{where}.matchExpressions[]")
                      for x in _list(m.get("matchExpressions"), f"{where}.matchExpressions"))
        )
        return LabelSelector(match_labels=_strmap(m.get("matchLabels"), f"{where}.matchLabels"),
                             match_expressions=exprs)


@dataclass(frozen=True)
class WebhookRule:
    operations: tuple[str, ...] = ()
    api_groups: tuple[str, ...] = ()
    api_versions: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    scope: str = ""


@dataclass(frozen=True)
class WebhookEntry:
    name: str
    failure_policy: str = "Fail"
    service_namespace: str = ""
    service_name: str = ""
    path: str = ""
    has_ca_bundle: bool = False
    url: str = ""
    namespace_selector: LabelSelector | None = None
    object_selector: LabelSelector | None = None
    match_conditions: tuple[tuple[str, str], ...] = ()  # (name, CEL expression)
    reinvocation_policy: str = ""
    timeout_seconds: int | None = None
    rules: tuple[WebhookRule, ...] = ()


@dataclass(frozen=True)
class WebhookConfiguration:
    meta: Meta
    webhooks: tuple[WebhookEntry, ...] = ()

    @staticmethod
    def from_dict(obj: Mapping[str, Any]) -> WebhookConfiguration:
        meta = Meta.from_dict(obj, "MutatingWebhookConfiguration")
        hooks = []
        for raw in _list(obj.get("webhooks"), "webhooks"):
            w = _map(raw, "webhooks[]")
            cc = _map(w.get("clientConfig"), "clientConfig")
            svc = _map(cc.get("service"), "clientConfig.service")
            rules = tuple(
                WebhookRule(
                    operations=tuple(_str(x, "operations[]") for x in _list(r.get("operations"), "operations")),
                    api_groups=tuple(_str(x, "apiGroups[]") for x in _list(r.get("apiGroups"), "apiGroups")),
                    api_versions=tuple(_str(x, "apiVersions[]") for x in _list(r.get("apiVersions"), "apiVersions")),
                    resources=tuple(_str(x, "resources[]") for x in _list(r.get("resources"), "resources")),
                    scope=_str(r.get("scope"), "scope"),
                )
                for r in (_map(x, "rules[]") for x in _list(w.get("rules"), "webhooks[].rules"))
            )
            conditions = tuple(
                (_str(mc.get("name"), "matchConditions[].name"),
                 _str(mc.get("expression"), "matchConditions[].expression"))
                for mc in (_map(x, "matchConditions[]") for x in _list(w.get("matchConditions"), "matchConditions"))
            )
            hooks.append(
                WebhookEntry(
                    name=_str(w.get("name"), "webhooks[].name"),
                    failure_policy=_str(w.get("failurePolicy"), "failurePolicy") or "Fail",
                    service_namespace=_str(svc.get("namespace"), "service.namespace"),
                    service_name=_str(svc.get("name"), "service.name"),
                    path=_str(svc.get("path"), "service.path"),
                    has_ca_bundle=bool(cc.get("caBundle")),
                    url=_str(cc.get("url"), "clientConfig.url"),
                    namespace_selector=LabelSelector.from_dict(w.get("namespaceSelector"), "namespaceSelector"),
                    object_selector=LabelSelector.from_dict(w.get("objectSelector"), "objectSelector"),
                    match_conditions=conditions,
                    reinvocation_policy=_str(w.get("reinvocationPolicy"), "reinvocationPolicy"),
                    timeout_seconds=_opt_int(w.get("timeoutSeconds"), "timeoutSeconds"),
                    rules=rules,
                )
            )
        return WebhookConfiguration(meta=meta, webhooks=tuple(hooks))


@dataclass(frozen=True)
class EndpointSlice:
    meta: Meta
    ready_endpoints: int = 0

    @staticmethod
    def from_dict(obj: Mapping[str, Any]) -> EndpointSlice:
        meta = Meta.from_dict(obj, "EndpointSlice")
        ready = 0
        for raw in _list(obj.get("endpoints"), "endpoints"):
            cond = _map(_map(raw, "endpoints[]").get("conditions"), "conditions")
            if cond.get("ready") is not False:
                ready += 1
        return EndpointSlice(meta=meta, ready_endpoints=ready)


@dataclass(frozen=True)
class ServiceAccount:
    meta: Meta
    automount_token: bool | None = None

    @staticmethod
    def from_dict(obj: Mapping[str, Any]) -> ServiceAccount:
        a = obj.get("automountServiceAccountToken")
        return ServiceAccount(
            meta=Meta.from_dict(obj, "ServiceAccount"),
            automount_token=None if a is None else _bool(a, "automountServiceAccountToken"),
        )


@dataclass(frozen=True)
class RoleBinding:
    meta: Meta
    role_kind: str = ""
    role_name: str = ""
    subjects: tuple[tuple[str, str, str], ...] = ()

    @staticmethod
    def from_dict(obj: Mapping[str, Any]) -> RoleBinding:
        meta = Meta.from_dict(obj, "RoleBinding")
        ref = _map(obj.get("roleRef"), "roleRef")
        subjects = tuple(
            (_str(s.get("kind"), "kind"), _str(s.get("namespace"), "namespace"), _str(s.get("name"), "name"))
            for s in (_map(x, "subjects[]") for x in _list(obj.get("subjects"), "subjects"))
        )
        return RoleBinding(
            meta=meta,
            role_kind=_str(ref.get("kind"), "roleRef.kind"),
            role_name=_str(ref.get("name"), "roleRef.name"),
            subjects=subjects,
        )


@dataclass(frozen=True)
class Namespace:
    meta: Meta
    phase: str = "Active"

    @staticmethod
    def from_dict(obj: Mapping[str, Any]) -> Namespace:
        status = _map(obj.get("status"), "Namespace.status")
        return Namespace(meta=Meta.from_dict(obj, "Namespace"), phase=_str(status.get("phase"), "phase") or "Active")


@dataclass(frozen=True)
class Crd:
    meta: Meta
    group: str = ""
    kind: str = ""
    served_versions: tuple[str, ...] = ()
    established: bool = False

    @staticmethod
    def from_dict(obj: Mapping[str, Any]) -> Crd:
        meta = Meta.from_dict(obj, "CustomResourceDefinition")
        spec = _map(obj.get("spec"), "CustomResourceDefinition.spec")
        status = _map(obj.get("status"), "CustomResourceDefinition.status")
        versions = tuple(
            _str(v.get("name"), "versions[].name")
            for v in (_map(x, "versions[]") for x in _list(spec.get("versions"), "spec.versions"))
            if v.get("served", True)
        )
        est = find_condition(Condition.list_from(status.get("conditions"), "CRD conditions"), "Established")
        return Crd(
            meta=meta,
            group=_str(spec.get("group"), "spec.group"),
            kind=_str(_map(spec.get("names"), "spec.names").get("kind"), "spec.names.kind"),
            served_versions=versions,
            established=bool(est and est.status == "True") or not status,
        )
