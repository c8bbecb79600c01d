"""Keep a snapshot current from watches, for `status -w`: every list that `collect` made gets an informer
(`snapshot/informer.py`) that watches it from the resourceVersion it was read at; the snapshot is assembled from
their stores.

- What is failing now (a broken stream, an unreachable server, an object that cannot be decoded) is in
  `problems()` and in `watch_state()`, so neither the screen nor a JSON or YAML document passes stale
  counts off as current.
- A watch that is forbidden (RBAC may allow `list` and not `watch`) ends the watch with IncompleteError
  naming the verb and resource: no counts are shown as live that cannot be kept live.
- `wait()` returns once a burst of changes has settled (0.2 s of quiet, at most 1 s after its first
  event), so that 5,000 node updates re-render once, not 5,000 times.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import IncompleteError
from . import kinds
from . import model as snap
from .informer import ClientListerWatcher, Coalescer, Informer, ListerWatcher
from .reads import ListMade

QUIET_PERIOD = 0.2  # seconds without events before the screen is redrawn
MAX_DELAY = 1.0  # the screen is redrawn at the latest this long after the first event of a burst


class LiveSnapshot:
    """A snapshot kept current by watches. `start()`, then `wait()` and `snapshot()` in a loop."""

    def __init__(
        self,
        client: Any,
        initial: snap.ClusterSnapshot,
        lists: Iterable[ListMade],
        clock: Callable[[], float] = time.monotonic,
        lister_watcher: Callable[[ListMade], ListerWatcher] | None = None,
    ):
        self.meta = initial.meta
        self.reads = initial.reads
        self.stop_event = threading.Event()
        self.coalescer = Coalescer(QUIET_PERIOD, MAX_DELAY, clock)
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
                on_change=self._changed,
                forbidden_is_fatal=True,
                initial=([by_key[k] for k in listed.keys if k in by_key], listed.resource_version),
            )
            for listed in lists
        ]

    @property
    def relists(self) -> int:
        return sum(inf.relists for inf in self.informers)

    # ---- the caller's side ----------------------------------------------------------------------------
    def start(self) -> None:
        for inf in self.informers:
            inf.start()

    def stop(self) -> None:
        self.stop_event.set()
        self.coalescer.notify()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until a burst of changes has settled (True), or `timeout` passed without one (False).
        Raises IncompleteError when a watch cannot be made (forbidden)."""
        self._raise_fatal()
        deadline = None if timeout is None else self.coalescer.clock() + timeout
        settled = self.coalescer.wait(self.stop_event.is_set, deadline, beat=self._raise_fatal)
        self._raise_fatal()
        return settled and not self.stop_event.is_set()

    def snapshot(self, taken_at: str = "") -> snap.ClusterSnapshot:
        """The objects as the watches have them now."""
        items = [(inf.kind.field, obj) for inf in self.informers for obj in inf.items()]
        meta = dataclasses.replace(self.meta, taken_at=taken_at or self.meta.taken_at)
        return snap.assemble(items, meta=meta, reads=self.reads)

    def problems(self) -> list[str]:
        """What is failing now (the counts of those kinds may be stale until it recovers)."""
        out = []
        for inf in sorted(self.informers, key=lambda i: i.spec.describe()):
            if inf.problem:
                out.append(f"watch {inf.spec.describe()}: {inf.problem}; retrying")
            out += [f"watch {inf.spec.describe()}: skipped, cannot be decoded: {why}" for why in inf.poison_lines()]
        return out

    def watch_state(self) -> dict[str, Any]:
        """The state of the watches, as every `status -w -o json/yaml` document carries it."""
        problems = self.problems()
        return {"state": "failing" if problems else "current", "problems": problems}

    def _raise_fatal(self) -> None:
        for inf in self.informers:
            if inf.fatal is not None:
                raise IncompleteError(f"status --watch {inf.fatal}")

    def _changed(self, _what: str) -> None:
        self.coalescer.notify()
