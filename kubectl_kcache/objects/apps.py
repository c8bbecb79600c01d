"""apps/v1 and batch/v1: DaemonSet, Deployment, ReplicaSet (their pod templates) and Job."""

from __future__ import annotations

from typing import Any

from msgspec.structs import force_setattr

from .. import apivalidation as av
from .base import Condition, Int, Items, Meta, OwnerRef, Str, StrMap, Toleration, _Obj, _Object, _Of, _refuse, _strs
from .core import Pod, PodSpec, _check_affinity


class _TemplateContainer(_Obj, frozen=True):
    name: Str = ""
    image: Str = ""  # what tells KServe's controller under another name (reconcile/peers.py)


class _TemplatePodSpec(_Obj, frozen=True):
    node_selector: StrMap | None = None
    affinity: dict[str, Any] | None = None
    tolerations: Items[Toleration] = ()
    volumes: list[_Volume] | None = None
    containers: Items[_TemplateContainer] = ()

    def __post_init__(self) -> None:
        _Obj.__post_init__(self)
        if self.node_selector:
            force_setattr(self, "node_selector", _strs(self.node_selector))
        if self.affinity:
            _check_affinity(self.affinity)


class _ImageSource(_Obj, frozen=True):
    reference: Any | None = None


class _Volume(_Obj, frozen=True):
    image: _ImageSource | None = None


class _PodTemplate(_Obj, frozen=True):
    spec: _TemplatePodSpec | None = None


class _TemplatedSpec(_Obj, frozen=True):
    template: _PodTemplate | None = None
    replicas: Int = 1
    ttl_seconds_after_finished: int | None = None
    suspend: bool | None = None  # a Job held by a queueing admission (Kueue) has no pod and no startTime

    @property
    def pod(self) -> _TemplatePodSpec:
        return (self.template.spec if self.template else None) or _TEMPLATE_POD


_TEMPLATE_POD = _TemplatePodSpec()
_TEMPLATED = _TemplatedSpec()


class DaemonSetStatus(_Obj, frozen=True):
    desired_number_scheduled: Int = 0
    current_number_scheduled: Int = 0
    number_ready: Int = 0
    updated_number_scheduled: Int = 0
    number_available: Int = 0
    number_misscheduled: Int = 0
    observed_generation: Int = 0

    def __post_init__(self) -> None:
        _Obj.__post_init__(self)
        for name in self.__struct_fields__:
            value = getattr(self, name)
            wire = self.__struct_encode_fields__[self.__struct_fields__.index(name)]
            bits = 64 if name == "observed_generation" else 32
            error = av.integer_error(value, bits, f"DaemonSetStatus.{wire}", nonnegative=True)
            if error:
                _refuse(wire, error)


_DS_STATUS = DaemonSetStatus()


class DaemonSet(_Object, frozen=True, dict=True):
    spec: _TemplatedSpec | None = None
    status: DaemonSetStatus | None = None

    desired = _Of[int]("status", _DS_STATUS, "desired_number_scheduled")
    current = _Of[int]("status", _DS_STATUS, "current_number_scheduled")
    ready = _Of[int]("status", _DS_STATUS, "number_ready")
    updated = _Of[int]("status", _DS_STATUS, "updated_number_scheduled")
    available = _Of[int]("status", _DS_STATUS, "number_available")
    misscheduled = _Of[int]("status", _DS_STATUS, "number_misscheduled")
    observed_generation = _Of[int]("status", _DS_STATUS, "observed_generation")
    node_selector = _Of[dict[str, str] | None]("spec", _TEMPLATED, "pod.node_selector")
    affinity = _Of[dict[str, Any] | None]("spec", _TEMPLATED, "pod.affinity")
    tolerations = _Of[tuple[Toleration, ...]]("spec", _TEMPLATED, "pod.tolerations")


class DeploymentStatus(_Obj, frozen=True):
    ready_replicas: Int = 0
    available_replicas: Int = 0
    conditions: Items[Condition] = ()


_DEPLOY_STATUS = DeploymentStatus()


class Deployment(_Object, frozen=True, dict=True):
    spec: _TemplatedSpec | None = None
    status: DeploymentStatus | None = None

    replicas = _Of[int]("spec", _TEMPLATED, "replicas")
    ready_replicas = _Of[int]("status", _DEPLOY_STATUS, "ready_replicas")
    available_replicas = _Of[int]("status", _DEPLOY_STATUS, "available_replicas")
    conditions = _Of[tuple[Condition, ...]]("status", _DEPLOY_STATUS, "conditions")

    @property
    def images(self) -> tuple[str, ...]:
        return tuple(x.image for x in (self.spec or _TEMPLATED).pod.containers)


class JobStatus(_Obj, frozen=True):
    conditions: Items[Condition] = ()
    active: Int = 0
    succeeded: Int = 0
    failed: Int = 0
    completion_time: Any | None = None
    start_time: Any | None = None


_JOB_STATUS = JobStatus()


class Job(_Object, frozen=True, dict=True):
    spec: _TemplatedSpec | None = None
    status: JobStatus | None = None

    conditions = _Of[tuple[Condition, ...]]("status", _JOB_STATUS, "conditions")
    active = _Of[int]("status", _JOB_STATUS, "active")
    succeeded = _Of[int]("status", _JOB_STATUS, "succeeded")
    failed = _Of[int]("status", _JOB_STATUS, "failed")
    ttl_seconds = _Of[int | None]("spec", _TEMPLATED, "ttl_seconds_after_finished")

    @property
    def completion_time(self) -> str:
        value = (self.status or _JOB_STATUS).completion_time
        return "" if value is None else str(value)

    @property
    def suspended(self) -> bool:
        return bool((self.spec or _TEMPLATED).suspend)

    @property
    def started(self) -> bool:
        """The Job controller has set status.startTime (never while the Job is suspended)."""
        return (self.status or _JOB_STATUS).start_time is not None

    @property
    def image_reference(self) -> str:
        """The image volume's reference (KServe's preparation Job mounts the cache as an image volume)."""
        image = ""
        for vol in (self.spec or _TEMPLATED).pod.volumes or ():
            if vol.image is not None and vol.image.reference:
                image = str(vol.image.reference)
        return image

    @property
    def node_selector(self) -> dict[str, str]:
        return (self.spec or _TEMPLATED).pod.node_selector or {}


class _TemplateMeta(_Obj, frozen=True):
    labels: StrMap = {}
    annotations: StrMap = {}


class _FullPodTemplate(_Obj, frozen=True):
    metadata: _TemplateMeta | None = None
    spec: PodSpec | None = None


class _ReplicaSetSpec(_Obj, frozen=True):
    replicas: Int = 1
    template: _FullPodTemplate | None = None


class _ReplicaSetStatus(_Obj, frozen=True):
    replicas: Int = 0


_RS_SPEC = _ReplicaSetSpec()


class ReplicaSet(_Object, frozen=True, dict=True):
    """A ReplicaSet with its whole pod template: what the pod webhook sees of each pod it creates."""

    spec: _ReplicaSetSpec | None = None
    status: _ReplicaSetStatus | None = None

    replicas = _Of[int]("spec", _RS_SPEC, "replicas")

    def template_pod(self) -> Pod:
        """A pod as the ReplicaSet creates it (name generated: the ReplicaSet's name and `-(new)`)."""
        template = (self.spec.template if self.spec is not None else None) or _FullPodTemplate()
        tmeta = template.metadata or _TemplateMeta()
        meta = Meta(
            name=f"{self.meta.name}-(new)",
            namespace=self.meta.namespace,
            labels=dict(tmeta.labels),
            annotations=dict(tmeta.annotations),
            owner_references=(OwnerRef(kind="ReplicaSet", name=self.meta.name),),
        )
        return Pod(metadata=meta, spec=template.spec or PodSpec())
