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

import operator
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from itertools import compress
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
    except TypeError:  # unhashable (a part holding a dict): kept once by its type and its encoding
        return share_encoded(value)


def share_encoded(value: _V) -> _V:
    """`share` for a value holding dicts or lists (an agent pod's containers with an env `valueFrom`, its
    volumes): an equal value seen before, told by its type and its JSON encoding (dicts in their order, so the
    one kept reads the same), else `value`. Never mutated once decoded, so it may be shared."""
    import msgspec

    table = _table
    if table is None or not value:
        return value
    try:
        key = (_ENCODED, type(value), msgspec.json.encode(value))
    except (TypeError, msgspec.EncodeError):
        return value
    return table.setdefault(key, value)  # type: ignore[no-any-return]


_ENCODED = object()  # marks the keys of values kept by their encoding (no decoded value is this tuple)


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


class SameObjects:
    """Whether two lists hold the very same objects in the same order (a group's member nodes in two snapshots of
    a kept-current view), each pair compared once. Both lists are held by whoever asks, so their ids stay theirs."""

    def __init__(self) -> None:
        self._known: dict[tuple[int, int], bool] = {}

    def __call__(self, was: Sequence[Any], now: Sequence[Any]) -> bool:
        if was is now:
            return True
        pair = (id(was), id(now))
        same = self._known.get(pair)
        if same is None:
            same = self._known[pair] = len(was) == len(now) and all(map(operator.is_, was, now))
        return same


def changed(was: Sequence[_V], now: Sequence[_V]) -> tuple[list[_V], list[_V]]:
    """The objects of `was` that `now` no longer holds, and those it holds anew, told by identity: what changed
    between two snapshots' values of a field of a kept-current view (most of its objects the very same, in the
    same places when none was added or deleted: then only the places holding another object are looked at)."""
    if len(was) == len(now):
        at = list(compress(range(len(now)), map(operator.is_not, was, now)))
        was, now = [was[i] for i in at], [now[i] for i in at]
    before, after = {id(x) for x in was}, {id(x) for x in now}
    return [x for x in was if id(x) not in after], [x for x in now if id(x) not in before]
