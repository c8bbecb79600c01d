"""The renderer registry: every output format is one function registered under a name (krr-style).

A renderer module decorates its functions with `@renderer("json")` (or `@renderer("table", kind="plan")`
for another report kind); the CLI offers `formats()` and calls `render_doctor(...)`. Adding a format is
one new module imported by `report/__init__.py`. Renderers import rich, yaml and the like lazily, inside
the function, so that `kubectl kcache --help` stays fast.

A format that shows more than the report itself declares it: `@renderer("html", wants=("status",))`
receives `status=...` as a keyword argument when the caller has it (`wants(fmt)` tells the caller what to
compute, so that other formats do not pay for it). Context a renderer did not ask for is not passed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from ..errors import InputError

if TYPE_CHECKING:
    from ..checks.model import DoctorReport

DOCTOR = "doctor"


# A renderer is called as `render(report, out, color=..., **the context it wants)`; the signatures differ by
# what each one wants, so the type says only that much.
Renderer = Callable[..., None]
R = TypeVar("R", bound=Renderer)

_REGISTRY: dict[str, dict[str, Renderer]] = {}
_ORDER: dict[tuple[str, str], int] = {}
_WANTS: dict[tuple[str, str], tuple[str, ...]] = {}


def renderer(name: str, *, kind: str = DOCTOR, order: int = 100, wants: tuple[str, ...] = ()) -> Callable[[R], R]:
    """Register the decorated function as the `name` format for reports of `kind`.

    `order` places the format in `formats()` (lowest first: the default format has order 0). `wants` names
    the context keyword arguments the renderer takes besides the report (e.g. "status", "provenance").
    """

    def register(func: R) -> R:
        by_name = _REGISTRY.setdefault(kind, {})
        if name in by_name and by_name[name] is not func:
            raise ValueError(f"a {kind} renderer named {name!r} is already registered")
        by_name[name] = func
        _ORDER[(kind, name)] = order
        _WANTS[(kind, name)] = tuple(wants)
        return func

    return register


def formats(kind: str = DOCTOR) -> list[str]:
    """The registered format names for `kind`: the default (`table`) first, then by `order`."""
    names = list(_REGISTRY.get(kind, {}))
    return sorted(names, key=lambda n: (_ORDER[(kind, n)], names.index(n)))


def get_renderer(fmt: str, kind: str = DOCTOR) -> Renderer:
    by_name = _REGISTRY.get(kind, {})
    try:
        return by_name[fmt]
    except KeyError:
        known = ", ".join(by_name) or "none"
        raise InputError(f"unknown output format {fmt!r} (one of: {known})") from None


def wants(fmt: str, kind: str = DOCTOR) -> tuple[str, ...]:
    """The context the `fmt` renderer of `kind` takes besides the report (see `renderer`)."""
    get_renderer(fmt, kind)
    return _WANTS.get((kind, fmt), ())


def render(kind: str, report: Any, fmt: str, out: TextIO, *, color: bool = False, **context: Any) -> None:
    func = get_renderer(fmt, kind)
    wanted = _WANTS.get((kind, fmt), ())
    func(report, out, color=color, **{k: v for k, v in context.items() if k in wanted})


def render_doctor(report: DoctorReport, fmt: str, out: TextIO, *, color: bool = False, **context: Any) -> None:
    """Write `report` to `out` in format `fmt`. `color` only matters to the formats for people; `context`
    (e.g. `status=`) goes to the formats that want it."""
    render(DOCTOR, report, fmt, out, color=color, **context)
