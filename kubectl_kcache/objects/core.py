"""core/v1: Node, Pod (the pod spec as KServe's pod webhook sees it), Event, ConfigMap, ServiceAccount,
Secret (metadata only), Namespace."""

from __future__ import annotations

from array import array
from collections.abc import Mapping
from functools import cached_property, partial
from itertools import chain
from operator import attrgetter, is_not
from typing import Any

import msgspec
from msgspec import field
from msgspec.structs import force_setattr

from ..sharing import share, share_encoded
from .base import (
    Bool,
    Condition,
    Int,
    Items,
    Str,
    StrMap,
    Taint,
    Toleration,
    _NameRef,
    _Obj,
    _Object,
    _share_parts,
    _strs,
    find_condition,
)


class NodeSpec(_Obj, frozen=True):
    taints: Items[Taint] = ()
    unschedulable: Bool = False

    def __post_init__(self) -> None:
        _Obj.__post_init__(self)
        if self.taints:
            force_setattr(self, "taints", share(self.taints))


class NodeInfo(_Obj, frozen=True):
    kubelet_version: Str = ""


class NodeImages(msgspec.Struct, frozen=True, gc=False):
    """The names in Node.status.images, kept as their 64-bit string hashes in an array (a GPU node lists ~130
    images with ~260 names: 50,000 nodes would otherwise hold ~1 GB of strings; the hash is the one Python
    computes for any str, valid within this process, which is all the index lives for), and the smallest
    image size listed (the kubelet lists at most nodeStatusMaxImages images, largest first, so anything
    smaller is left out)."""

    keys: bytes = b""  # hash(name) of every name, as native 64-bit integers
    smallest_bytes: int | None = None

    def lists(self, name: str) -> bool:
        return bool(self.keys) and hash(name) in memoryview(self.keys).cast("q")


class _Image(msgspec.Struct, frozen=True, gc=False, rename="camel"):
    """One entry of Node.status.images: decoded for the index, then dropped. Null fields are read as absent
    here, not by _Obj's hook (there are ~130 of these per GPU node)."""

    names: list[str] | None = None
    size_bytes: int | None = None


_NAMES, _SIZE, _IS_SET = attrgetter("names"), attrgetter("size_bytes"), partial(is_not, None)


class NodeStatus(_Obj, frozen=True):
    conditions: Items[Condition] = ()
    node_info: NodeInfo | None = None
    # read, then dropped (it is ~80 % of a GPU node's bytes): kept as a count and NodeImages
    images: list[_Image] | None = None
    image_count: int = field(default=0, name="#imageCount")
    image_index: NodeImages | None = field(default=None, name="#imageIndex")

    def __post_init__(self) -> None:
        _Obj.__post_init__(self)
        images = self.images
        if images is not None:
            keys = array("q", map(hash, chain.from_iterable(filter(None, map(_NAMES, images))))).tobytes()
            smallest = min(filter(_IS_SET, map(_SIZE, images)), default=None)
            force_setattr(self, "image_count", len(images))
            force_setattr(self, "image_index", NodeImages(keys, smallest))
            force_setattr(self, "images", None)
        _share_parts(self, "conditions", "node_info")


_NODE_SPEC = NodeSpec()
_NODE_STATUS = NodeStatus()
_NO_IMAGES = NodeImages()


class Node(_Object, frozen=True, dict=True):
    spec: NodeSpec | None = None
    status: NodeStatus | None = None

    @property
    def labels(self) -> dict[str, str]:
        return self.metadata.labels

    @property
    def taints(self) -> tuple[Taint, ...]:
        return (self.spec or _NODE_SPEC).taints

    @property
    def unschedulable(self) -> bool:
        return (self.spec or _NODE_SPEC).unschedulable

    @cached_property
    def _ready(self) -> Condition | None:
        return find_condition((self.status or _NODE_STATUS).conditions, "Ready")

    @property
    def ready(self) -> bool | None:
        cond = self._ready
        return None if cond is None else cond.status == "True"

    @property
    def ready_reason(self) -> str:
        return self._ready.reason if self._ready else ""

    @property
    def ready_message(self) -> str:
        return self._ready.message if self._ready else ""

    @property
    def kubelet_version(self) -> str:
        info = (self.status or _NODE_STATUS).node_info
        return info.kubelet_version if info else ""

    @property
    def image_count(self) -> int:
        return (self.status or _NODE_STATUS).image_count

    @property
    def images(self) -> NodeImages:
        return (self.status or _NODE_STATUS).image_index or _NO_IMAGES

    def lists_image(self, reference: str) -> bool:
        """Whether Node.status.images has an entry with exactly this name (KServe's agent checks this)."""
        return self.images.lists(reference)


class _StatusWithoutImages(_Obj, frozen=True):
    """Node.status with `images` skipped by the decoder (never built): for commands that do not look at them."""

    conditions: Items[Condition] = ()
    node_info: NodeInfo | None = None
    image_count: int = field(default=0, name="#imageCount")
    image_index: NodeImages | None = field(default=None, name="#imageIndex")


class NodeWithoutImages(Node, frozen=True, dict=True):
    """A Node whose `status.images` is not read (~80 % of a GPU node's bytes, most of its decoding): it lists
    no image. why-group and why-not-cached read nodes so from a file; only the doctor looks at images."""

    status: _StatusWithoutImages | None = None  # type: ignore[assignment]


class ContainerState(msgspec.Struct, frozen=True, gc=False):
    """A container's state as the checks read it (from status.initContainerStatuses/containerStatuses)."""

    name: str
    ready: bool = False
    restarts: int = 0
    waiting_reason: str = ""
    waiting_message: str = ""
    terminated_reason: str = ""
    terminated_message: str = ""
    exit_code: int | None = None
    image: str = ""


class _Waiting(_Obj, frozen=True):
    reason: Str = ""
    message: Str = ""


class _Terminated(_Obj, frozen=True):
    reason: Str = ""
    message: Str = ""
    exit_code: int | None = None


class _State(_Obj, frozen=True):
    waiting: _Waiting | None = None
    terminated: _Terminated | None = None


class ContainerStatus(_Obj, frozen=True):
    name: Str = ""
    ready: Bool = False
    restart_count: Int = 0
    image: Str = ""
    state: _State | None = None
    last_state: _State | None = None

    def view(self) -> ContainerState:
        waiting = (self.state.waiting if self.state else None) or _Waiting()
        term = self.state.terminated if self.state else None
        if term is None:
            term = self.last_state.terminated if self.last_state else None
        term = term or _Terminated()
        return ContainerState(
            name=self.name,
            ready=self.ready,
            restarts=self.restart_count,
            waiting_reason=waiting.reason,
            waiting_message=waiting.message,
            terminated_reason=term.reason,
            terminated_message=term.message,
            exit_code=term.exit_code,
            image=self.image,
        )


class EnvVar(_Obj, frozen=True):
    """An env entry: a literal `value`, or `value_from` (a Secret, ConfigMap or field: unknown at admission)."""

    name: Str = ""
    value: Str = ""
    value_from: Any | None = None


class VolumeMount(_Obj, frozen=True):
    name: Str = ""
    mount_path: Str = ""
    read_only: Bool = False


class HTTPGetAction(_Obj, frozen=True):
    """A probe's httpGet; `port` is an IntOrString as given (None when absent: Go's zero, the int 0)."""

    path: Str = ""
    port: int | str | None = None
    host: Str = ""
    scheme: Str = ""


class Probe(_Obj, frozen=True):
    http_get: HTTPGetAction | None = None


class ContainerPort(_Obj, frozen=True):
    name: Str = ""
    container_port: Int = 0


class Container(_Obj, frozen=True):
    """A container of a pod spec (the parts the webhook reads)."""

    name: Str = ""
    image: Str = ""
    command: Items[str] = ()
    args: Items[str] = ()
    env: Items[EnvVar] = ()
    volume_mounts: Items[VolumeMount] = ()
    ports: Items[ContainerPort] = ()
    readiness_probe: Probe | None = None


class Volume(msgspec.Struct, frozen=True, gc=False):
    """A pod volume: its name, the kind of its source (`image`, `emptyDir`, ...) and the source as given."""

    name: str
    source: str = ""
    spec: Mapping[str, Any] = field(default_factory=dict)  # the volume without its name (for deep-equal)

    @property
    def image_reference(self) -> str:
        image = self.spec.get("image")
        return str(image.get("reference") or "") if isinstance(image, Mapping) else ""

    @staticmethod
    def of(raw: Mapping[str, Any]) -> Volume:
        spec = {str(k): v for k, v in raw.items() if k != "name"}
        return Volume(name=str(raw.get("name") or ""), source=next(iter(spec), ""), spec=spec)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, **self.spec}


class PodSpec(_Obj, frozen=True):
    """The fields of a pod spec the commands read (add one here to read it)."""

    node_name: Str = ""
    tolerations: Items[Toleration] = ()
    containers: Items[Container] = ()
    init_containers: Items[Container] = ()
    volumes: list[dict[str, Any]] | None = None  # as given: a volume's source is compared whole
    image_pull_secrets: Items[_NameRef] = ()

    def __post_init__(self) -> None:
        _Obj.__post_init__(self)  # the same for every pod of a DaemonSet (containers and volumes hold dicts:
        # kept once by their encoding)
        _share_parts(self, "tolerations")
        _share_parts(self, "containers", "init_containers", "volumes", keep=share_encoded)


class PodStatus(_Obj, frozen=True):
    phase: Str = ""
    reason: Str = ""
    message: Str = ""
    conditions: Items[Condition] = ()
    init_container_statuses: Items[ContainerStatus] = ()
    container_statuses: Items[ContainerStatus] = ()

    def __post_init__(self) -> None:
        _Obj.__post_init__(self)
        _share_parts(self, "conditions", "container_statuses")


_POD_SPEC = PodSpec()
_POD_STATUS = PodStatus()


class Pod(_Object, frozen=True, dict=True):
    spec: PodSpec | None = None
    status: PodStatus | None = None

    @property
    def node_name(self) -> str:
        return (self.spec or _POD_SPEC).node_name

    @property
    def tolerations(self) -> tuple[Toleration, ...]:
        return (self.spec or _POD_SPEC).tolerations

    @property
    def phase(self) -> str:
        return (self.status or _POD_STATUS).phase

    @property
    def reason(self) -> str:
        return (self.status or _POD_STATUS).reason

    @property
    def message(self) -> str:
        return (self.status or _POD_STATUS).message

    @property
    def ready(self) -> bool:
        cond = find_condition((self.status or _POD_STATUS).conditions, "Ready")
        return bool(cond and cond.status == "True")

    @property
    def _unscheduled(self) -> Condition | None:
        cond = find_condition((self.status or _POD_STATUS).conditions, "PodScheduled")
        return cond if cond and cond.status != "True" else None

    @property
    def scheduled_reason(self) -> str:
        cond = self._unscheduled
        return cond.reason if cond else ""

    @property
    def scheduled_message(self) -> str:
        cond = self._unscheduled
        return cond.message if cond else ""

    @cached_property
    def containers(self) -> tuple[ContainerState, ...]:
        status = self.status or _POD_STATUS
        return tuple(cs.view() for cs in (*status.init_container_statuses, *status.container_statuses))

    @property
    def spec_containers(self) -> tuple[Container, ...]:
        return (self.spec or _POD_SPEC).containers

    @property
    def init_containers(self) -> tuple[Container, ...]:
        return (self.spec or _POD_SPEC).init_containers

    @cached_property
    def volumes(self) -> tuple[Volume, ...]:
        return tuple(Volume.of(v) for v in (self.spec or _POD_SPEC).volumes or () if isinstance(v, Mapping))

    @property
    def image_pull_secrets(self) -> tuple[str, ...]:
        return tuple(s.name for s in (self.spec or _POD_SPEC).image_pull_secrets)


class _NodeSelectorRequirement(msgspec.Struct, frozen=True):
    key: str = ""
    operator: str = ""
    values: list[str] | None = None


class _NodeSelectorTerm(msgspec.Struct, frozen=True, rename="camel"):
    match_expressions: list[_NodeSelectorRequirement] | None = None
    match_fields: list[_NodeSelectorRequirement] | None = None


class _RequiredNodeAffinity(msgspec.Struct, frozen=True, rename="camel"):
    node_selector_terms: list[_NodeSelectorTerm] | None = None


class _PreferredNodeAffinity(msgspec.Struct, frozen=True):
    weight: int = 0
    preference: _NodeSelectorTerm | None = None


class _NodeAffinity(msgspec.Struct, frozen=True):
    requiredDuringSchedulingIgnoredDuringExecution: _RequiredNodeAffinity | None = None
    preferredDuringSchedulingIgnoredDuringExecution: list[_PreferredNodeAffinity] | None = None


class _AffinityShape(msgspec.Struct, frozen=True, rename="camel"):
    """The node affinity as the API types it. The affinity itself is kept as plain data (KServe's patch keeps
    every part it does not own), so its shape is checked against this once, when the object is read."""

    node_affinity: _NodeAffinity | None = None
    pod_affinity: dict[str, Any] | None = None
    pod_anti_affinity: dict[str, Any] | None = None


def _check_affinity(affinity: Any) -> None:
    try:
        msgspec.convert(affinity, _AffinityShape)
    except msgspec.ValidationError as exc:
        text = str(exc)
        message, _, where = text.partition(" - at `$")
        raise ValueError(f"{message} - at `$.affinity{where}") from None


class _Involved(_Obj, frozen=True):
    kind: Str = ""
    name: Str = ""
    namespace: Str = ""


class _Series(_Obj, frozen=True):
    count: Int = 0
    last_observed_time: Any | None = None


class Event(_Object, frozen=True, dict=True):
    """core/v1 and events.k8s.io/v1 Events in one type (the fields of both shapes)."""

    type: Str = ""
    reason: Str = ""
    action: Str = ""
    core_message: Str = field(default="", name="message")
    note: Str = ""
    involved_object: _Involved | None = None
    regarding: _Involved | None = None
    core_count: Int = field(default=0, name="count")
    deprecated_count: Int = 0
    series: _Series | None = None
    last_timestamp: Any | None = None
    event_time: Any | None = None
    reporting_component: Str = ""
    reporting_controller_field: Str = field(default="", name="reportingController")

    @property
    def message(self) -> str:
        return self.core_message or self.note

    @property
    def _involved(self) -> _Involved:
        return self.involved_object or self.regarding or _INVOLVED

    @property
    def involved_kind(self) -> str:
        return self._involved.kind

    @property
    def involved_name(self) -> str:
        return self._involved.name

    @property
    def involved_namespace(self) -> str:
        return self._involved.namespace

    @property
    def count(self) -> int:
        return self.core_count or self.deprecated_count or (self.series.count if self.series else 0) or 1

    @property
    def last_seen(self) -> str:
        value = (
            (self.series.last_observed_time if self.series else None)
            or self.last_timestamp
            or self.event_time
            or self.metadata.creation_timestamp
        )
        return "" if value is None else str(value)

    @property
    def reporting_controller(self) -> str:
        return self.reporting_component or self.reporting_controller_field


_INVOLVED = _Involved()


class ConfigMap(_Object, frozen=True, dict=True):
    data: StrMap = {}

    def __post_init__(self) -> None:
        _Obj.__post_init__(self)
        if self.data:
            force_setattr(self, "data", _strs(self.data))


class ServiceAccount(_Object, frozen=True, dict=True):
    automount_service_account_token: bool | None = None

    @property
    def automount_token(self) -> bool | None:
        return self.automount_service_account_token


class Secret(_Object, frozen=True, dict=True):
    """A Secret's metadata: the only part ever read (listed as PartialObjectMetadata; never its data). Its
    annotations are dropped too: `kubectl apply` keeps the whole object, values included, in one of them."""

    def __post_init__(self) -> None:
        _Object.__post_init__(self)
        if self.metadata.annotations:
            force_setattr(self, "metadata", msgspec.structs.replace(self.metadata, annotations={}))


class _Phase(_Obj, frozen=True):
    phase: Str = ""


class Namespace(_Object, frozen=True, dict=True):
    status: _Phase | None = None

    @property
    def phase(self) -> str:
        return (self.status.phase if self.status else "") or "Active"
