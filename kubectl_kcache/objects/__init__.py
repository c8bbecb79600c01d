"""Slim, frozen views of the Kubernetes objects the plugin reads, declared as msgspec Structs.

A Struct mirrors the API's JSON for the fields the commands use; every other field is skipped by the
decoder and never built (a 30 KB GPU node keeps ~1 KB). The same types decode live list pages, watch
events, JSON files (bytes straight into Structs) and YAML files (`msgspec.convert` of libyaml's output):
see `objects/decode.py` for the functions and `snapshot/kinds.py` for which type each kind has.

Kubernetes' quirks kept here:
- null means absent: a field that is null takes its default (`_Obj.__post_init__`), as Go's decoder does;
- int-or-string: integers given as strings ("60") are accepted (lax decoding), label and other string-map
  values given as numbers (YAML's `gpu.count: 8`) become their string;
- booleans given as "true"/"false" are accepted.
A value of the wrong type is a `msgspec.ValidationError` with the path of the field, which `objects/decode.py`
turns into an `ObjectError` naming the file, the object and the path.

The attribute API (`node.name`, `node.labels`, `node.taints`, `node.ready`, `group.node_selector`,
`kc.artifact.footprints`, `capture.active_session`, `pod.containers`, ...) is kept as properties over the
wire layout; values derived from several fields are computed once (cached) or are cheap.
"""

from __future__ import annotations

import datetime as dt
import re
from array import array
from collections.abc import Callable, Mapping
from functools import cached_property, partial
from itertools import chain
from operator import attrgetter, is_not
from typing import TYPE_CHECKING, Any, Optional, TypeAlias, TypeVar

import msgspec
from msgspec import field
from msgspec.structs import force_setattr

from .. import apivalidation as av
from ..errors import InputError
from ..sharing import active as sharing_active
from ..sharing import share

_T = TypeVar("_T")

_I = TypeVar("_I")

if TYPE_CHECKING:  # what the attributes hold once decoded (null replaced by the default)
    Str = str
    Int = int
    Bool = bool
    StrMap = dict[str, str]
    RawArtifact: TypeAlias = "Artifact | None"
    Items: TypeAlias = tuple[_I, ...]
else:  # what the decoder accepts: null anywhere; numbers as string-map values
    # (typing.Optional: a generic alias that can be subscribed at runtime on Python 3.10)
    Str = Optional[str]  # noqa: UP045
    Int = Optional[int]  # noqa: UP045
    Bool = Optional[bool]  # noqa: UP045
    StrMap = Optional[dict[str, "str | int | float"]]  # noqa: UP045
    RawArtifact = Optional[dict[str, Any]]  # noqa: UP045
    Items = Optional[tuple[_I, ...]]  # noqa: UP045


class ObjectError(InputError):
    """An object does not have the shape its kind requires."""


_TYPES = {
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "a boolean",
    "object": "an object",
    "array": "a list",
    "null": "null",
    "dict": "an object",
    "list": "a list",
}
_EXPECTED = re.compile(r"^Expected `(.+?)`, got `(.+?)`$")


def describe(exc: msgspec.ValidationError, base: str = "$") -> str:
    """'$.items[3].spec.taints[0].effect: expected a string, got an object' from msgspec's message; paths
    of nested conversions ('... - at `$.x` - at `$.spec`') are joined, innermost last; `base` replaces
    the leading '$' (an item decoded alone is `$.items[3]` of its file)."""
    text = str(exc)
    parts = text.split(" - at `")
    message = parts[0]
    path = ""
    key = False  # msgspec's "at `key` in `$.m`": a key of the map at $.m, not one of its values
    for part in reversed(parts[1:]):
        part = part.rstrip("`")
        if part.startswith("key` in `"):
            key, part = True, part.removeprefix("key` in `")
        path += part.removeprefix("$")
    m = _EXPECTED.match(message)
    if m:
        wanted = [w.strip() for w in m.group(1).split("|") if w.strip() != "null"]
        if set(wanted) == {"int", "float", "str"}:  # a string map's values (numbers are taken as strings)
            wanted = ["str"]
        words = " or ".join(dict.fromkeys(_TYPES.get(w, w) for w in wanted))
        got = _TYPES.get(m.group(2), m.group(2))
        message = f"a key is {got}, expected {words}" if key else f"expected {words}, got {got}"
    elif message.startswith("Object missing required field `"):
        path += "." + message.split("`")[1]
        message = "required field missing"
    return f"{base}{path}: {message}"


_FILL_NULLS: dict[type, Callable[[Any], None]] = {}


def _filler(cls: type) -> Callable[[Any], None]:
    """The function that gives the fields of `cls` whose default is not None their default where the input had
    null. It is a chain of `is None` tests compiled once per class: it runs for every nested object decoded
    (millions for a large fleet), where a generic loop over the fields costs ~4x more on the common path."""
    fields = tuple(
        (f.name, f.default, f.default_factory)
        for f in msgspec.structs.fields(cls)
        if f.default is not None and not (f.default is msgspec.NODEFAULT and f.default_factory is msgspec.NODEFAULT)
    )
    if not fields:
        fn: Callable[[Any], None] = _no_nulls
    else:
        namespace: dict[str, Any] = {"fill": partial(_fill, fields)}
        test = " or ".join(f"self.{name} is None" for name, _, _ in fields)
        exec(f"def check(self):\n    if {test}:\n        fill(self)\n", namespace)
        fn = namespace["check"]
    _FILL_NULLS[cls] = fn
    return fn


def _share_parts(obj: Any, *names: str) -> None:
    """Each named field of `obj` swapped for an equal value already decoded (sharing.py)."""
    if not sharing_active():
        return
    for name in names:
        value = getattr(obj, name)
        if value:
            kept = share(value)
            if kept is not value:
                force_setattr(obj, name, kept)


def _no_nulls(_obj: Any) -> None:
    return None


def _fill(fields: tuple[tuple[str, Any, Any], ...], obj: Any) -> None:
    for name, default, factory in fields:
        if getattr(obj, name) is None:
            force_setattr(obj, name, factory() if default is msgspec.NODEFAULT else default)


def _strs(mapping: Any) -> dict[str, str]:
    """A string map whose values may have come as numbers (YAML): every value as its string."""
    for v in mapping.values():
        if type(v) is not str:
            return {k: v if isinstance(v, str) else _number_text(v) for k, v in mapping.items()}
    return mapping  # type: ignore[no-any-return]


def _set_strs(obj: Any, name: str) -> None:
    """The string map `name` of `obj` with numbers as their strings (set only when one was a number)."""
    mapping = getattr(obj, name)
    if mapping:
        fixed = _strs(mapping)
        if fixed is not mapping:
            force_setattr(obj, name, fixed)


def _number_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return str(value)


def _refuse(path: str, message: str) -> None:
    """A value the API server would refuse, in its words, at `path` under the Struct being decoded (the
    decoder puts the Struct's own path in front)."""
    raise ValueError(f"{message} - at `$.{path}`")


class _Obj(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True, gc=False):
    """Base of the Structs: null in the input means the field's default."""

    def __post_init__(self) -> None:
        (_FILL_NULLS.get(type(self)) or _filler(type(self)))(self)


def parse_time(value: str) -> dt.datetime | None:
    """A metav1.Time as the API writes it (RFC 3339), in UTC when it has no zone; None when empty, bad, or
    Go's zero time (`0001-01-01T00:00:00Z`, what an unset time.Time is written as: not a time)."""
    if not value:
        return None
    try:
        t = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    t = t if t.tzinfo else t.replace(tzinfo=dt.timezone.utc)
    try:
        zero = t.astimezone(dt.timezone.utc) == _GO_ZERO_TIME
    except OverflowError:  # year 1 with a zone east of UTC
        zero = True
    return None if zero else t


_GO_ZERO_TIME = dt.datetime(1, 1, 1, tzinfo=dt.timezone.utc)
_GO_ZERO_TEXT = ("0001-01-01T00:00:00Z", "0001-01-01T00:00:00.000000Z")


def time_text(value: Any) -> str:
    """A time field as text: '' when absent or Go's zero time (an unset time.Time is not a time to show)."""
    if value is None:
        return ""
    text = str(value)
    return (
        "" if text in _GO_ZERO_TEXT or (text.startswith("0001-01-01T00:00:00") and parse_time(text) is None) else text
    )


# ---- shared parts -------------------------------------------------------------------------------


class OwnerRef(_Obj, frozen=True):
    kind: Str = ""
    name: Str = ""
    controller: Bool = False
    uid: Str = ""


class Meta(_Obj, frozen=True):
    name: Str
    namespace: str | None = None
    uid: Str = ""
    labels: StrMap = {}
    annotations: StrMap = {}
    creation_timestamp: Any | None = None
    generation: Int = 0
    resource_version: Str = ""
    deletion_timestamp: Any | None = None
    owner_references: Items[OwnerRef] = ()
    finalizers: Items[str] = ()

    def __post_init__(self) -> None:
        _Obj.__post_init__(self)
        if not self.name:
            raise ValueError("metadata.name is missing or empty")
        if not self.namespace:
            force_setattr(self, "namespace", None)
        _set_strs(self, "labels")
        _set_strs(self, "annotations")
        if self.owner_references:
            force_setattr(self, "owner_references", share(self.owner_references))

    @property
    def created(self) -> str:
        return time_text(self.creation_timestamp)

    @property
    def deleting(self) -> bool:
        return self.deletion_timestamp is not None

    @property
    def owners(self) -> tuple[OwnerRef, ...]:
        return self.owner_references

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


class _Object(_Obj, frozen=True, dict=True, gc=True):
    """A top-level object: its metadata as `meta`, `name` and `namespace` ("" when cluster-scoped).
    `dict=True` lets subclasses cache derived values (functools.cached_property)."""

    metadata: Meta

    @classmethod
    def from_dict(cls: type[_T], data: Any) -> _T:
        """The object from plain data (a dict as the API returns it: YAML, fixtures, a GET's answer); an
        ObjectError naming the path of a bad field. The same decoding as `decode.convert`."""
        try:
            return msgspec.convert(data, cls, strict=False)
        except msgspec.ValidationError as exc:
            md = data.get("metadata") if isinstance(data, dict) else None
            name = md.get("name") if isinstance(md, dict) else None
            what = f"{cls.__name__} {name}" if isinstance(name, str) and name else cls.__name__
            raise ObjectError(f"{what}: {describe(exc)}") from None

    @property
    def meta(self) -> Meta:
        return self.metadata

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        return self.metadata.namespace or ""


class Condition(_Obj, frozen=True):
    type: Str = ""
    status: Str = ""
    reason: Str = ""
    message: Str = ""
    observed_generation: int | None = None
    last_transition_time: Any | None = None
    last_timestamp: Any | None = None

    @property
    def last_transition(self) -> str:
        return time_text(self.last_transition_time or self.last_timestamp)


def find_condition(conditions: tuple[Condition, ...], type_: str) -> Condition | None:
    for c in conditions:
        if c.type == type_:
            return c
    return None


class Taint(_Obj, frozen=True):
    key: Str = ""
    effect: Str = ""
    value: Str = ""

    def __post_init__(self) -> None:
        _Obj.__post_init__(self)
        if self.effect and self.effect not in av.TAINT_EFFECTS:
            _refuse("effect", av.not_supported(self.effect, av.TAINT_EFFECTS))

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"


class Toleration(_Obj, frozen=True):
    """A core/v1 Toleration. Empty strings stand for absent fields, as in Go."""

    key: Str = ""
    operator: Str = ""
    value: Str = ""
    effect: Str = ""
    toleration_seconds: int | None = None

    def __post_init__(self) -> None:
        _Obj.__post_init__(self)
        if self.toleration_seconds is not None:
            error = av.integer_error(self.toleration_seconds, 64, "Toleration.tolerationSeconds")
            if error:
                _refuse("tolerationSeconds", error)

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


class NamespacedName(_Obj, frozen=True):
    namespace: Str = ""
    name: Str = ""

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


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

    @property
    def cache_path_count(self) -> int:
        return len(self.cache_paths)


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


# ---- nodes and the Kernel Cache kinds -------------------------------------------------------------


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

    @property
    def node_selector(self) -> dict[str, str]:
        return (self.spec or _GROUP_SPEC).node_selector

    @property
    def tolerations(self) -> tuple[Toleration, ...]:
        return (self.spec or _GROUP_SPEC).tolerations


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

    def __post_init__(self) -> None:
        _Obj.__post_init__(self)  # a cache's entry is on every node of its group: its parts are kept once
        _share_parts(self, "kernel_cache_ref", "image_reference", "footprints")


class _KcnCounts(_Obj, frozen=True):
    total_pods_using: Int = 0


class KernelCacheNodeStatus(_Obj, frozen=True):
    cache_status: dict[str, CacheStatus] | None = None
    counts: _KcnCounts | None = None
    total_pods_using: Int = 0  # read at either place: KServe's counts are derived, not relied on


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
            ref = e.kernel_cache_ref
            if ref is None:
                ns, _, name = key.partition("/")
                ref = NamespacedName(ns, name)
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


class _NameRef(_Obj, frozen=True):
    name: Str = ""


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

    @property
    def usage_pods(self) -> tuple[PodUsage, ...]:
        usage = (self.status or _KC_STATUS).usage
        return usage.pods if usage is not None else ()

    @property
    def artifact(self) -> Artifact | None:
        return (self.spec or _KC_SPEC).artifact

    @property
    def node_group(self) -> str:
        ref = (self.spec or _KC_SPEC).node_group_ref
        return ref.name if ref else ""

    @property
    def mount_type(self) -> str:
        return (self.spec or _KC_SPEC).mount_type

    @property
    def state(self) -> str:
        return (self.status or _KC_STATUS).state

    @property
    def conditions(self) -> tuple[Condition, ...]:
        return (self.status or _KC_STATUS).conditions

    @property
    def verification(self) -> Verification | None:
        return (self.status or _KC_STATUS).verification

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

    @property
    def source_kind(self) -> str:
        return ((self.spec or _CAPTURE_SPEC).source_ref or _SOURCE).kind

    @property
    def source_name(self) -> str:
        return ((self.spec or _CAPTURE_SPEC).source_ref or _SOURCE).name

    @property
    def phase(self) -> str:
        return (self.status or _CAPTURE_STATUS).phase

    @property
    def cache_paths(self) -> tuple[CachePath, ...]:
        return (self.spec or _CAPTURE_SPEC).cache_paths

    @property
    def target_image(self) -> str:
        return (self.spec or _CAPTURE_SPEC).target_image

    @property
    def active_session(self) -> ActiveSession | None:
        return (self.status or _CAPTURE_STATUS).active_session

    @property
    def runtime_result(self) -> dict[str, str]:
        return (self.status or _CAPTURE_STATUS).runtime_result

    @property
    def artifact(self) -> Artifact | None:
        return (self.status or _CAPTURE_STATUS).artifact

    @property
    def kernel_cache_ref(self) -> NamespacedName | None:
        return (self.status or _CAPTURE_STATUS).kernel_cache_ref

    @property
    def signing(self) -> Signing | None:
        return (self.status or _CAPTURE_STATUS).signing

    @property
    def signing_profile(self) -> str:
        """spec.signing.profileRef.name ("" when not set)."""
        spec = (self.spec or _CAPTURE_SPEC).signing
        return spec.profile_ref.name if spec is not None and spec.profile_ref is not None else ""

    @property
    def conditions(self) -> tuple[Condition, ...]:
        return (self.status or _CAPTURE_STATUS).conditions


# ---- workloads ----------------------------------------------------------------------------------


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


# ---- the pod spec as KServe's pod webhook sees it (why-not-cached, consumer checks)


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
        _Obj.__post_init__(self)  # the same for every pod of a DaemonSet (containers hold dicts: not shared)
        _share_parts(self, "tolerations")


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


class _TemplatePodSpec(_Obj, frozen=True):
    node_selector: StrMap | None = None
    affinity: dict[str, Any] | None = None
    tolerations: Items[Toleration] = ()
    volumes: list[_Volume] | None = None

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

    @property
    def node_selector(self) -> dict[str, str] | None:
        return (self.spec or _TEMPLATED).pod.node_selector

    @property
    def affinity(self) -> dict[str, Any] | None:
        return (self.spec or _TEMPLATED).pod.affinity

    @property
    def tolerations(self) -> tuple[Toleration, ...]:
        return (self.spec or _TEMPLATED).pod.tolerations

    @property
    def desired(self) -> int:
        return (self.status or _DS_STATUS).desired_number_scheduled

    @property
    def current(self) -> int:
        return (self.status or _DS_STATUS).current_number_scheduled

    @property
    def ready(self) -> int:
        return (self.status or _DS_STATUS).number_ready

    @property
    def updated(self) -> int:
        return (self.status or _DS_STATUS).updated_number_scheduled

    @property
    def available(self) -> int:
        return (self.status or _DS_STATUS).number_available

    @property
    def misscheduled(self) -> int:
        return (self.status or _DS_STATUS).number_misscheduled

    @property
    def observed_generation(self) -> int:
        return (self.status or _DS_STATUS).observed_generation


class DeploymentStatus(_Obj, frozen=True):
    ready_replicas: Int = 0
    available_replicas: Int = 0
    conditions: Items[Condition] = ()


_DEPLOY_STATUS = DeploymentStatus()


class Deployment(_Object, frozen=True, dict=True):
    spec: _TemplatedSpec | None = None
    status: DeploymentStatus | None = None

    @property
    def replicas(self) -> int:
        return (self.spec or _TEMPLATED).replicas

    @property
    def ready_replicas(self) -> int:
        return (self.status or _DEPLOY_STATUS).ready_replicas

    @property
    def available_replicas(self) -> int:
        return (self.status or _DEPLOY_STATUS).available_replicas

    @property
    def conditions(self) -> tuple[Condition, ...]:
        return (self.status or _DEPLOY_STATUS).conditions


class JobStatus(_Obj, frozen=True):
    conditions: Items[Condition] = ()
    active: Int = 0
    succeeded: Int = 0
    failed: Int = 0
    completion_time: Any | None = None


_JOB_STATUS = JobStatus()


class Job(_Object, frozen=True, dict=True):
    spec: _TemplatedSpec | None = None
    status: JobStatus | None = None

    @property
    def conditions(self) -> tuple[Condition, ...]:
        return (self.status or _JOB_STATUS).conditions

    @property
    def active(self) -> int:
        return (self.status or _JOB_STATUS).active

    @property
    def succeeded(self) -> int:
        return (self.status or _JOB_STATUS).succeeded

    @property
    def failed(self) -> int:
        return (self.status or _JOB_STATUS).failed

    @property
    def completion_time(self) -> str:
        value = (self.status or _JOB_STATUS).completion_time
        return "" if value is None else str(value)

    @property
    def ttl_seconds(self) -> int | None:
        return (self.spec or _TEMPLATED).ttl_seconds_after_finished

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


# ---- events and the install ---------------------------------------------------------------------


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


class _ServiceRef(_Obj, frozen=True):
    namespace: Str = ""
    name: Str = ""
    path: Str = ""


class _ClientConfig(_Obj, frozen=True):
    service: _ServiceRef | None = None
    ca_bundle: Any | None = None
    url: Str = ""


_SERVICE = _ServiceRef()


class SelectorRequirement(_Obj, frozen=True):
    key: Str = ""
    operator: Str = ""
    values: Items[str] = ()

    def __post_init__(self) -> None:
        _Obj.__post_init__(self)
        bad_key = av.qualified_name_errors(self.key)
        if bad_key:  # the API server validates a selector's key as a label key
            _refuse("key", f"Invalid value: {av.go_quote(self.key)}: {bad_key[0]}")
        error = av.selector_requirement_error(self.operator, self.values)
        if error:
            _refuse("values" if error.startswith(("Required", "Forbidden")) else "operator", error)


class LabelSelector(_Obj, frozen=True):
    """A metav1.LabelSelector; `None` where an object holds one means "not set" (matches everything)."""

    match_labels: StrMap = {}
    match_expressions: Items[SelectorRequirement] = ()

    def __post_init__(self) -> None:
        _Obj.__post_init__(self)
        if self.match_labels:
            force_setattr(self, "match_labels", _strs(self.match_labels))


class WebhookRule(_Obj, frozen=True):
    operations: Items[str] = ()
    api_groups: Items[str] = ()
    api_versions: Items[str] = ()
    resources: Items[str] = ()
    scope: Str = ""


class _MatchCondition(_Obj, frozen=True):
    name: Str = ""
    expression: Str = ""


class WebhookEntry(_Obj, frozen=True):
    name: Str = ""
    failure_policy: Str = "Fail"
    client_config: _ClientConfig | None = None
    namespace_selector: LabelSelector | None = None
    object_selector: LabelSelector | None = None
    conditions: Items[_MatchCondition] = field(default=(), name="matchConditions")
    reinvocation_policy: Str = ""
    timeout_seconds: int | None = None
    rules: Items[WebhookRule] = ()

    @property
    def match_conditions(self) -> tuple[tuple[str, str], ...]:
        """(name, CEL expression) of each matchCondition."""
        return tuple((m.name, m.expression) for m in self.conditions)

    @property
    def url(self) -> str:
        return self.client_config.url if self.client_config else ""

    def __post_init__(self) -> None:
        _Obj.__post_init__(self)
        if not self.failure_policy:
            force_setattr(self, "failure_policy", "Fail")
        elif self.failure_policy not in av.FAILURE_POLICIES:
            _refuse("failurePolicy", av.not_supported(self.failure_policy, av.FAILURE_POLICIES))

    @property
    def _service(self) -> _ServiceRef:
        return (self.client_config.service if self.client_config else None) or _SERVICE

    @property
    def service_namespace(self) -> str:
        return self._service.namespace

    @property
    def service_name(self) -> str:
        return self._service.name

    @property
    def path(self) -> str:
        return self._service.path

    @property
    def has_ca_bundle(self) -> bool:
        return bool(self.client_config and self.client_config.ca_bundle)


class WebhookConfiguration(_Object, frozen=True, dict=True):
    """A Mutating- or ValidatingWebhookConfiguration (the fields the checks read are the same)."""

    webhooks: Items[WebhookEntry] = ()


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


class ReplicaSet(_Object, frozen=True, dict=True):
    """A ReplicaSet with its whole pod template: what the pod webhook sees of each pod it creates."""

    spec: _ReplicaSetSpec | None = None
    status: _ReplicaSetStatus | None = None

    @property
    def replicas(self) -> int:
        return self.spec.replicas if self.spec is not None else 1

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


class _EndpointConditions(_Obj, frozen=True):
    ready: bool | None = None


class _Endpoint(_Obj, frozen=True):
    conditions: _EndpointConditions | None = None


class EndpointSlice(_Object, frozen=True, dict=True):
    endpoints: list[_Endpoint] | None = None
    ready_endpoints: int = field(default=0, name="#readyEndpoints")

    def __post_init__(self) -> None:
        _Obj.__post_init__(self)
        ready = sum(1 for e in self.endpoints or () if e.conditions is None or e.conditions.ready is not False)
        force_setattr(self, "ready_endpoints", ready)
        force_setattr(self, "endpoints", None)


class ServiceAccount(_Object, frozen=True, dict=True):
    automount_service_account_token: bool | None = None

    @property
    def automount_token(self) -> bool | None:
        return self.automount_service_account_token


class _RoleRef(_Obj, frozen=True):
    kind: Str = ""
    name: Str = ""


class _Subject(_Obj, frozen=True):
    kind: Str = ""
    namespace: Str = ""
    name: Str = ""


class RoleBinding(_Object, frozen=True, dict=True):
    role_ref: _RoleRef | None = None
    subject_list: Items[_Subject] = field(default=(), name="subjects")

    @property
    def role_kind(self) -> str:
        return self.role_ref.kind if self.role_ref else ""

    @property
    def role_name(self) -> str:
        return self.role_ref.name if self.role_ref else ""

    @property
    def subjects(self) -> tuple[tuple[str, str, str], ...]:
        return tuple((s.kind, s.namespace, s.name) for s in self.subject_list)


class Role(_Object, frozen=True, dict=True):
    """A Role: only its metadata is read (KServe's controller rewrites the rules of the Roles it manages)."""


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


class _CrdNames(_Obj, frozen=True):
    kind: Str = ""


class _CrdVersion(_Obj, frozen=True):
    name: Str = ""
    served: Bool = True


class _CrdSpec(_Obj, frozen=True):
    group: Str = ""
    names: _CrdNames | None = None
    versions: Items[_CrdVersion] = ()


class _CrdStatus(_Obj, frozen=True):
    conditions: Items[Condition] = ()
    accepted_names: Any | None = None
    stored_versions: Any | None = None


class Crd(_Object, frozen=True, dict=True):
    spec: _CrdSpec | None = None
    status: _CrdStatus | None = None

    @property
    def group(self) -> str:
        return self.spec.group if self.spec else ""

    @property
    def kind(self) -> str:
        return self.spec.names.kind if self.spec and self.spec.names else ""

    @property
    def served_versions(self) -> tuple[str, ...]:
        return tuple(v.name for v in (self.spec.versions if self.spec else ()) if v.served)

    @property
    def established(self) -> bool:
        """Established, or no status at all (an object written by hand, not read from the API)."""
        if self.status is None or self.status == _CrdStatus():
            return True
        cond = find_condition(self.status.conditions, "Established")
        return bool(cond and cond.status == "True")


# the Structs decoded as top-level objects
OBJECT_TYPES: tuple[type[_Object], ...] = (
    Node,
    NodeGroup,
    KernelCacheNode,
    KernelCache,
    Capture,
    Pod,
    DaemonSet,
    Deployment,
    ReplicaSet,
    Job,
    Event,
    ConfigMap,
    WebhookConfiguration,
    EndpointSlice,
    ServiceAccount,
    RoleBinding,
    Role,
    Secret,
    Namespace,
    Crd,
)
