"""The monitor's view of the cluster: the lists `doctor` makes (`collect.collect`), kept current by the
informers of `watch.LiveSnapshot` (`snapshot/informer.py`). This is the only module of the monitor that touches
informer code: re-point `Source` and nothing else changes.

- `connect()` lists everything (retried with backoff by the caller while it fails) and starts the watches.
- `wait(timeout)` returns True once a burst of changes has settled (the watches' coalescing: 0.2 s of quiet,
  at most 1 s after the first event), False on timeout.
- `problems()` says what cannot be read now (a failing watch, a forbidden list or watch); a forbidden watch
  ends that watch and a forbidden list starts none (RBAC will not change by retrying at once), so the source
  lists and watches again after `RECONNECT_AFTER` seconds (doubling up to `RELIST_CAP` while a list is still
  refused): a monitor started before its role was bound becomes ready once it is.
- Every failure is counted by what was read (`errors`), for the metrics.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable

from ..errors import IncompleteError
from ..kube.client import Client
from ..snapshot import model as snap
from ..snapshot.follow import LiveSnapshot
from ..snapshot.live import Scope, collect
from ..snapshot.reads import ListMade

RECONNECT_AFTER = 30.0  # seconds before listing again after a watch or list was refused
RELIST_CAP = 300.0  # at most this long between lists while one is still refused


class Source:
    def __init__(self, client: Client, scope: Scope = Scope(), clock: Callable[[], float] = time.monotonic):
        self.client = client
        self.scope = scope
        self.clock = clock
        self.live: LiveSnapshot | None = None
        self.errors: Counter = Counter({"list": 0, "watch": 0})  # what was read -> failures
        self.lock = threading.Lock()
        self.failure = ""  # why the source is not connected ("" while it is)
        self.list_again = False  # a list was forbidden: list everything again at `reconnect_at`
        self.refused_lists = 0  # connections in a row with a forbidden list
        self.reconnect_at = 0.0

    def _count(self, what: str) -> None:
        with self.lock:
            self.errors[what] += 1

    def _counter(self, what: str) -> Callable[[str, BaseException], None]:
        """An informer's `on_error`: each failure counted by its verb and what was read."""
        return lambda verb, _exc: self._count(f"{verb} {what}")

    # ---- connecting ------------------------------------------------------------------------------
    def connect(self) -> snap.ClusterSnapshot:
        """List everything and start watching; IncompleteError (counted, kept as `failure`) when the lists
        cannot be made."""
        lists: list[ListMade] = []
        try:
            initial = collect(self.client, self.scope, lists=lists)
        except IncompleteError as exc:
            self._count("list")
            self.failure = f"cannot list: {exc}"
            raise
        forbidden = [read for read in initial.reads if read.status == "forbidden"]
        for read in forbidden:
            self._count(f"list {read.resource}")
        self.list_again = bool(forbidden)
        self.refused_lists = self.refused_lists + 1 if forbidden else 0
        # every list is made again: wait longer each time the same refusal comes back (a partial role)
        self.reconnect_at = self.clock() + min(RECONNECT_AFTER * 2 ** max(self.refused_lists - 1, 0), RELIST_CAP)
        if self.live is not None:
            self.live.stop()
        self.live = LiveSnapshot(self.client, initial, lists)
        for inf in self.live.informers:  # each failure counted by what was read
            inf.on_error = self._counter(inf.spec.describe())
            with self.lock:  # a counter is exported from 0, so that increase() sees its first failure
                for verb in ("list", "watch"):
                    self.errors.setdefault(f"{verb} {inf.spec.describe()}", 0)
        self.live.start()
        self.failure = ""
        return initial

    @property
    def connected(self) -> bool:
        return self.live is not None and not self.failure

    def due_for_reconnect(self) -> bool:
        return (bool(self.failure) or self.list_again) and self.clock() >= self.reconnect_at

    # ---- reading -------------------------------------------------------------------------------------
    def wait(self, timeout: float) -> bool:
        """True when a burst of changes has settled; False when `timeout` passed (or the source is down)."""
        if self.live is None or self.failure:
            time.sleep(min(timeout, 0.5))
            return False
        try:
            return self.live.wait(timeout)
        except IncompleteError as exc:  # a watch was refused: say it, and list again later
            self._count("watch")
            self.failure = str(exc)
            self.reconnect_at = self.clock() + RECONNECT_AFTER
            self.live.stop()
            return True

    def snapshot(self, taken_at: str) -> snap.ClusterSnapshot:
        assert self.live is not None
        return self.live.snapshot(taken_at)

    def problems(self) -> list[str]:
        """What cannot be read now: a refused watch, failing watches, forbidden lists."""
        out = [self.failure] if self.failure else []
        if self.live is not None and not self.failure:
            out += self.live.problems()
            out += [
                f"cannot list {r.resource}{f' in {r.namespace}' if r.namespace else ''} (forbidden)"
                for r in self.live.reads
                if r.status == "forbidden"
            ]
        return out

    def alive(self) -> list[str]:
        """The watch threads that stopped although nothing asked them to (empty while all run)."""
        live = self.live
        if live is None or live.stop_event.is_set() or self.failure:
            return []
        return [t.name for t in live.informers if not t.is_alive()]

    def read_errors(self) -> dict[str, int]:
        with self.lock:
            return dict(self.errors)

    def stop(self) -> None:
        if self.live is not None:
            self.live.stop()
