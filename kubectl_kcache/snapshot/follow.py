"""THE kept-current snapshot, of `status -w`, `monitor` and `reconcile`: one informer (`snapshot/informer.py`)
per plan list, the snapshot assembled from their stores.

- A list starts from where it was made (`ListMade` with its resourceVersion: `status -w` and the monitor,
  which listed everything first), or is listed by its informer (a `ListMade` without one: reconcile's lists,
  and a list the monitor was refused).
- Consumers of the changes themselves add a handler per list (`add_handler`: reconcile's peers, foreign
  writes and access lists); the owner hears of every change (`on_change`, by default a wake-up of `wait()`).
- ONE policy for a failing list or watch, the informer's: said to the owner (`on_error`, `on_ok`: each
  command counts and logs it through runtime/read_errors.py), shown in `problems()` (the monitor's /readyz,
  `status -w`'s screen and documents), retried from the last resourceVersion after a jittered backoff growing
  to 30 s, and a refused (403) read at most every 2 s, so that access granted again is seen within 2 s. The
  owner decides whether a refusal is fatal (`forbidden_is_fatal`): `status -w` shows no counts as live that
  cannot be kept live, and ends with IncompleteError naming the verb and resource; the monitor and
  reconcile stay up, unready, and recover by themselves.
- `wait()` returns once a burst of changes has settled (0.2 s of quiet, at most 1 s after its first event,
  by default), so that 5,000 node updates re-render once, not 5,000 times.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import Any

import msgspec

from ..errors import IncompleteError
from ..kube.resources import Resource
from . import kinds
from . import model as snap
from .informer import ClientListerWatcher, Coalescer, Handler, Informer, ListerWatcher
from .kinds import ListSpec
from .reads import OK, ListMade, Read

QUIET_PERIOD = 0.2  # seconds without events before the screen is redrawn
MAX_DELAY = 1.0  # the screen is redrawn at the latest this long after the first event of a burst


class LiveSnapshot:
    """A snapshot kept current by watches. `start()`, then `wait()` and `snapshot()` in a loop."""

    def __init__(
        self,
        client: Any,
        initial: snap.ClusterSnapshot | None,
        lists: Iterable[ListMade],
        *,
        forbidden_is_fatal: bool = False,
        owner: str = "status --watch",  # who stops on a fatal refusal, in its error
        kind: Callable[[Resource], kinds.Kind] = kinds.for_resource,
        on_change: Callable[[ListSpec, str], None] | None = None,
        on_error: Callable[[ListSpec, str, BaseException], None] = lambda _spec, _verb, _exc: None,
        on_ok: Callable[[ListSpec], None] = lambda _spec: None,
        stop: threading.Event | None = None,
        quiet: float = QUIET_PERIOD,
        max_delay: float = MAX_DELAY,
        clock: Callable[[], float] = time.monotonic,
        lister_watcher: Callable[[ListMade], ListerWatcher] | None = None,
        delays: Callable[[], Iterator[float]] | None = None,
    ):
        initial = initial or snap.ClusterSnapshot()
        self.meta, self.reads, self.owner = initial.meta, initial.reads, owner
        self.stop_event = stop or threading.Event()
        self.coalescer = Coalescer(quiet, max_delay, clock)
        self.on_change = on_change
        by_key = {
            (field, obj.metadata.namespace or "", obj.metadata.name): obj
            for field in kinds.FIELDS
            for obj in getattr(initial, field)
        }
        make = lister_watcher or (lambda listed: ClientListerWatcher(client, listed.spec))
        self.informers = [
            Informer(
                make(listed),
                listed.spec,
                stop=self.stop_event,
                on_change=partial(self._changed, listed.spec),
                on_error=partial(on_error, listed.spec),
                on_ok=partial(on_ok, listed.spec),
                forbidden_is_fatal=forbidden_is_fatal,
                initial=([by_key[k] for k in listed.keys if k in by_key], listed.resource_version),
                kind=kind(listed.spec.resource),
                **({"delays": delays} if delays else {}),
            )
            for listed in lists
        ]

        self._by_field: dict[str, list[Informer]] = {}  # the informers of each snapshot field, in list order
        for inf in self.informers:
            if inf.kind.field:
                self._by_field.setdefault(inf.kind.field, []).append(inf)
        # field -> (store changes, value, its objects by key, their keys in order)
        self._fields: dict[str, tuple[tuple[int, ...], tuple[Any, ...], dict[tuple[str, str], Any], list[Any]]] = {}
        self._last: snap.ClusterSnapshot | None = None

    @property
    def relists(self) -> int:
        return sum(inf.relists for inf in self.informers)

    def of(self, *specs: ListSpec) -> list[Informer]:
        """The informers of these lists."""
        return [inf for inf in self.informers if inf.spec in specs]

    def add_handler(self, spec: ListSpec, handler: Handler) -> None:
        """`handler(type, old, new)` for every change of that list (before `start()`: its first list too)."""
        for inf in self.of(spec):
            inf.add_handler(handler)

    def current(self, specs: Iterable[ListSpec] | None = None) -> bool:
        """Every store (of `specs`) known to be current and complete: synced, no object it could not decode."""
        wanted = self.informers if specs is None else self.of(*specs)
        return all(inf.synced.is_set() and not inf.poisoned for inf in wanted)

    # ---- the caller's side ----------------------------------------------------------------------------
    def start(self) -> None:
        for inf in self.informers:
            inf.start()

    def stop(self) -> None:
        self.stop_event.set()
        self.coalescer.notify()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until a burst of changes has settled (True), or `timeout` passed without one (False).
        Raises IncompleteError when a read is refused and the owner said that is fatal."""
        self._raise_fatal()
        deadline = None if timeout is None else self.coalescer.clock() + timeout
        settled = self.coalescer.wait(self.stop_event.is_set, deadline, beat=self._raise_fatal)
        self._raise_fatal()
        return settled and not self.stop_event.is_set()

    def snapshot(self, taken_at: str = "") -> snap.ClusterSnapshot:
        """The objects as the watches have them now; a list refused at first and listed since reads ok.

        Made again after every settled burst (the monitor, `status -w`, reconcile's passes), so it is made from
        what changed: a field whose lists' stores have not changed since the last snapshot is the very same
        tuple, and the indexes built for the last snapshot over fields that did not change are carried over
        (`ClusterSnapshot.carry_derived`): a node relabelled rebuilds the node indexes, not the entries'. Only
        the last snapshot is kept (for that), never the one before."""
        fields: dict[str, Any] = {}
        for field, infs in self._by_field.items():
            stamp = tuple(inf.changes for inf in infs)
            kept = self._fields.get(field)
            if kept is not None and kept[0] == stamp:
                fields[field] = kept[1]
                continue
            by_key: dict[tuple[str, str], Any] = {}  # as `model.field_value` makes a field: the last list's wins
            counted = []
            for inf in infs:
                store, changes = inf.store_changed()
                by_key.update(store)
                counted.append(changes)
            # sorted by key, in the last order while the keys are the same (objects modified, none added or deleted)
            order = kept[3] if kept is not None and kept[2].keys() == by_key.keys() else sorted(by_key)
            fields[field] = tuple(map(by_key.__getitem__, order))
            self._fields[field] = (tuple(counted), fields[field], by_key, order)
        meta = msgspec.structs.replace(self.meta, taken_at=taken_at or self.meta.taken_at)
        made = snap.ClusterSnapshot(meta=meta, reads=tuple(self._reads()), **fields)
        made.carry_derived(self._last)
        self._last = made
        return made

    def _reads(self) -> Iterator[Read]:
        listed = {Read.of(inf.spec, OK): inf for inf in self.informers if inf.listed}
        for read in self.reads:
            inf = None if read.ok else listed.get(msgspec.structs.replace(read, status=OK, count=0, message=""))
            yield read if inf is None else Read.of(inf.spec, OK, len(inf.items()))

    def problems(self) -> list[str]:
        """What is failing now (the counts of those kinds may be stale until it recovers)."""
        out = []
        for inf in sorted(self.informers, key=lambda i: i.spec.describe()):
            if inf.problem:
                out.append(f"watch {inf.spec.describe()}: {inf.problem}; retrying")
            elif not inf.listed:
                out.append(f"list {inf.spec.describe()}: not listed yet")
            out += [f"watch {inf.spec.describe()}: skipped, cannot be decoded: {why}" for why in inf.poison_lines()]
        return out

    def watch_state(self) -> dict[str, Any]:
        """The state of the watches, as every `status -w -o json/yaml` document carries it."""
        problems = self.problems()
        return {"state": "failing" if problems else "current", "problems": problems}

    def _raise_fatal(self) -> None:
        for inf in self.informers:
            if inf.fatal is not None:
                raise IncompleteError(f"{self.owner} {inf.fatal}")

    def _changed(self, spec: ListSpec, what: str) -> None:
        if self.on_change is None:
            self.coalescer.notify()
        else:
            self.on_change(spec, what)
