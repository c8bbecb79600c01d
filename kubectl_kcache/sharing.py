"""Equal values decoded again and again, kept once while a snapshot is read.

A fleet repeats itself: every agent pod of the DaemonSet carries the same tolerations, containers and
owner reference; the same KernelCache's entry (its reference, artifact image, footprints) sits in the
KernelCacheNode of every node of its group. The decoder builds each copy anew; inside `sharing()`, the
objects' hooks swap a decoded part for an equal one already seen (`share`), so that the copy is freed at
once. At 50,000 nodes this is several hundred MB less to hold.

Only immutable values are shared (str, and tuples of frozen Structs); anything unhashable is kept as
decoded. Outside `sharing()` and `lasting()` (tests) `share` returns its argument.

A one-shot command's table lives as long as its snapshot (`sharing()`). A long-running process (the monitor,
reconcile, `status -w`) decodes objects for days: every node's status is rewritten every few minutes, agents
rewrite their KernelCacheNodes. Its table (`lasting()`) lets go of the values no object holds any more, so that
what it keeps is what its stores hold, and the objects of a watch event share with those of the first lists.
"""

from __future__ import annotations

import operator
import sys
import threading
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
        kept = table.setdefault(value, value)
    except TypeError:  # unhashable (a part holding a dict): kept once by its type and its encoding
        return share_encoded(value)
    if kept is value and type(table) is Lasting and len(table) > table.limit:
        table.prune()
    return kept  # type: ignore[no-any-return]


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
    kept = table.setdefault(key, value)
    if kept is value and type(table) is Lasting and len(table) > table.limit:
        table.prune()
    return kept  # type: ignore[no-any-return]


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


class Lasting(dict):  # type: ignore[type-arg]
    """The table of a long-running process: each time it has doubled since it was last pruned, the values only
    the table still holds are let go (told by their reference counts, against two probes counted the same way),
    so it holds what the live objects hold plus at most as many values again."""

    FLOOR = 1 << 16  # entries before the first pruning

    def __init__(self, floor: int = FLOOR) -> None:
        super().__init__()
        self.floor = self.limit = floor
        self.prunings = 0
        self._pruning = threading.Lock()

    def prune(self) -> None:
        if not self._pruning.acquire(blocking=False):
            return  # another thread prunes now
        try:
            self._prune()
        finally:
            self._pruning.release()

    def _prune(self) -> None:
        # what a value held by the table alone counts, for each way it is kept: as its own key (share) or
        # under its encoding (share_encoded); each probe is also held by its local name here, hence the - 1
        same = (_PROBE, object())
        encoded, key = [_PROBE], (_ENCODED, _PROBE, object())
        self[same] = same
        self[key] = encoded
        try:
            entries: list[Any] = list(self.items())  # one C call: other threads may add entries meanwhile
        except RuntimeError:  # changed during the copy (an interpreter without the GIL): at the next entry
            self.pop(same, None)
            self.pop(key, None)
            return
        alone = {True: -1, False: -1}
        for i in range(len(entries) - 1, -1, -1):  # the probes, the last added (or nearly)
            if entries[i][1] is same or entries[i][1] is encoded:
                n, is_key = _count(entries, i)
                alone[is_key] = n - 1
                entries[i] = None
                if min(alone.values()) >= 0:
                    break
        self.pop(same, None)
        self.pop(key, None)
        # in the order they came: a value let go is freed at once (its entry here too), so that the parts it
        # held, most often added after it, count one less when their turn comes; a part added before a value
        # that held it goes in the next pass
        for _ in range(4):
            freed = 0
            for i in range(len(entries)):
                if entries[i] is None:
                    continue
                n, is_key = _count(entries, i)
                if n <= alone[is_key]:
                    self.pop(entries[i][0], None)  # another thread may take it meanwhile: kept once more, no harm
                    entries[i] = None
                    freed += 1
            if not freed:
                break
        self.prunings += 1
        self.limit = max(self.floor, 2 * len(self))


def _count(entries: list[Any], i: int) -> tuple[int, bool]:
    """The references to the i-th entry's value, and whether it is its own key (the probes are counted here
    too, so the two agree on any interpreter)."""
    k, v = entries[i]
    return sys.getrefcount(v), k is v


_PROBE = object()


@contextmanager
def lasting(floor: int = Lasting.FLOOR) -> Iterator[Lasting]:
    """Share equal values among every object decoded in this process from now on, for as long as the block
    lasts (a long-running command's life), letting go of those no object holds any more."""
    global _table
    outer = _table
    table = outer if type(outer) is Lasting else Lasting(floor)
    _table = table
    try:
        yield table
    finally:
        _table = outer


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
