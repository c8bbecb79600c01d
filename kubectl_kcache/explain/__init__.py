"""Explanations: pure decision traces over a snapshot (why-group)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .why_group import WhyGroup, explain

__all__ = ["WhyGroup", "explain"]


def __getattr__(name: str) -> Any:
    # why-group's names, imported when asked for: why-not-cached and the others import their own module of this
    # package without why-group's (~10 ms of their start)
    if name in __all__:
        from . import why_group

        return getattr(why_group, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
