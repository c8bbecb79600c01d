"""What every kind is made of: the decoding rules (null is absent, lax numbers and booleans), object
metadata, conditions, taints and tolerations, label selectors, times."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from functools import partial
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Generic, Optional, TypeAlias, TypeVar

import msgspec
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
    from .serving import Artifact

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


def _share_parts(obj: Any, *names: str, keep: Callable[[Any], Any] = share) -> None:
    """Each named field of `obj` swapped for an equal value already decoded (sharing.py). For fields that hold
    dicts, `keep=share_encoded` keeps them by their encoding at once, where `share` would first try to hash them
    (and raise: ~5 us a field)."""
    if not sharing_active():
        return
    for name in names:
        value = getattr(obj, name)
        if value:
            kept = keep(value)
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


class PartialObject(_Object, frozen=True, dict=True):
    """An object listed or watched by its metadata alone (PartialObjectMetadata)."""


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


class SelectorRequirement(_Obj, frozen=True):
    key: Str = ""
    operator: Str = ""
    values: Items[str] = ()

    def __post_init__(self) -> None:
        _Obj.__post_init__(self)
        bad_key = av.qualified_name_errors(self.key)
        if bad_key:  # the API server validates a selector's key as a label key
            _refuse("key", av.invalid(self.key, bad_key[0]))
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


class _NameRef(_Obj, frozen=True):
    name: Str = ""


class _Of(Generic[_T]):
    """A read-only attribute of an object: `path` (a field, or dotted) of its part `part` (its spec, its
    status), or of `empty` (that part with every field at its default) when the object has none."""

    def __init__(self, part: str, empty: Any, path: str) -> None:
        self.part = part
        self.empty = empty
        self.read = attrgetter(path)

    def __get__(self, obj: Any, owner: type | None = None) -> _T:
        return self.read(getattr(obj, self.part) or self.empty)  # type: ignore[no-any-return]
