"""Equal values decoded again and again, kept once while a snapshot is read.

A fleet repeats itself: every agent pod of the DaemonSet carries the same tolerations, containers and
owner reference; the same KernelCache's entry (its reference, artifact image, footprints) sits in the
KernelCacheNode of every node of its group. The decoder builds each copy anew; inside `sharing()`, the
objects' hooks swap a decoded part for an equal one already seen (`share`), so that the copy is freed at
once. At 50,000 nodes this is several hundred MB less to hold.

Only immutable values are shared (str, and tuples of frozen Structs); anything unhashable is kept as
decoded. Outside `sharing()` (tests, reconcile's long-lived informers, whose objects are replaced and
must not be kept alive by a table) `share` returns its argument.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

_V = TypeVar("_V")

_table: dict[Any, Any] | None = None


def share(value: _V) -> _V:
    """An equal value seen before in this `sharing()` block, else `value` (then remembered)."""
    table = _table
    if table is None or not value:
        return value
    try:
        return table.setdefault(value, value)  # type: ignore[no-any-return]
    except TypeError:  # unhashable (a part holding a dict): kept as decoded
        return value


def active() -> bool:
    """Whether a `sharing()` block is open (objects' hooks skip their lookups otherwise)."""
    return _table is not None


@contextmanager
def sharing() -> Iterator[None]:
    """Share equal values among the objects decoded inside (nested blocks use the outer table)."""
    global _table
    if _table is not None:
        yield
        return
    _table = {}
    try:
        yield
    finally:
        _table = None
