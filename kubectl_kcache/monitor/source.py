"""The monitor's view of the cluster: the lists `doctor` makes (`snapshot.live.collect`), kept current by the
one kept-current snapshot (`snapshot/follow.py`). This is the only module of the monitor that touches the
read side: re-point `Source` and nothing else changes.

- `connect()` lists everything (retried with backoff by the caller while it fails) and starts the watches.
  A list refused then is listed by its informer once it is allowed (within 2 s); a refused or failing watch is
  retried the same way (the one policy of `LiveSnapshot`), never fatal: the monitor stays up, unready.
- `wait(timeout)` returns True once a burst of changes has settled (0.2 s of quiet, at most 1 s after the
  first event), False on timeout.
- `problems()` says what cannot be read now; every failure is said once per cause and counted by what was
  read (runtime/read_errors.py), for the log and the metrics.
- `due_for_reconnect()`: the configuration names another job namespace than the one the lists were made in
  (or none was readable then): its lists are made again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import IncompleteError
from ..kernelcache.config import read_config
from ..kube.client import Client
from ..runtime.read_errors import ReadErrors
from ..snapshot import model as snap
from ..snapshot import plan
from ..snapshot.follow import LiveSnapshot
from ..snapshot.live import Scope, collect
from ..snapshot.reads import ListMade

EVERYTHING = "the doctor's lists"  # the reader of the first lists, counted as "list"


def _job_namespace(configmaps: Sequence[Any]) -> str | None:
    config = read_config(configmaps[0] if configmaps else None).config
    return config.job_namespace if config else None


class Source:
    def __init__(self, client: Client, scope: Scope = Scope(), errors: ReadErrors | None = None):
        self.client = client
        self.scope = scope
        self.errors = errors or ReadErrors(lambda _m: None)
        self.errors.expect("list")
        self.live: LiveSnapshot | None = None
        self.failure = ""  # why the source is not connected ("" while it is)
        self.job_namespace: str | None = None  # the one the lists were made in

    # ---- connecting ------------------------------------------------------------------------------
    def connect(self) -> snap.ClusterSnapshot:
        """List everything and start watching; IncompleteError (counted, kept as `failure`) when the lists
        cannot be made."""
        lists: list[ListMade] = []
        try:
            initial = collect(self.client, self.scope, lists=lists)
        except IncompleteError as exc:
            self.failure = f"cannot list: {exc}"
            self.errors.failed(EVERYTHING, "list", "", exc)
            raise
        self.errors.ok(EVERYTHING)
        self.follow(initial, lists)
        return initial

    def follow(
        self,
        initial: snap.ClusterSnapshot,
        lists: list[ListMade],
        lister_watcher: Callable[[ListMade], Any] | None = None,
    ) -> None:
        """Keep `initial`, made by `lists`, current."""
        live = LiveSnapshot(
            self.client,
            initial,
            lists,
            on_error=lambda spec, verb, exc: self.errors.failed(spec.describe(), verb, spec.describe(), exc),
            on_ok=lambda spec: self.errors.ok(spec.describe()),
            lister_watcher=lister_watcher,
        )
        for made in lists:  # a counter is exported from 0, so that increase() sees its first failure
            self.errors.expect(*(f"{verb} {made.spec.describe()}" for verb in ("list", "watch")))
        live.start()  # before it is published: no thread of it is seen as stopped
        if self.live is not None:
            self.live.stop()
        self.live, self.job_namespace = live, _job_namespace(initial.configmaps)
        self.failure = ""

    @property
    def connected(self) -> bool:
        return self.live is not None and not self.failure

    def due_for_reconnect(self) -> bool:
        if not self.connected or self.live is None:
            return False
        cms = [obj for inf in self.live.of(plan.CONFIGMAP) for obj in inf.items()]
        return _job_namespace(cms) != self.job_namespace

    # ---- reading -------------------------------------------------------------------------------------
    def wait(self, timeout: float) -> bool:
        """True when a burst of changes has settled; False when `timeout` passed (or the source is down)."""
        if self.live is None or self.failure:
            time.sleep(min(timeout, 0.5))
            return False
        return self.live.wait(timeout)

    def snapshot(self, taken_at: str) -> snap.ClusterSnapshot:
        assert self.live is not None
        return self.live.snapshot(taken_at)

    def problems(self) -> list[str]:
        """What cannot be read now: the first lists, a list or watch failing or refused."""
        if self.failure or self.live is None:
            return [self.failure] if self.failure else []
        return self.live.problems()

    def alive(self) -> list[str]:
        """The watch threads that stopped although nothing asked them to (empty while all run)."""
        live = self.live
        if live is None or live.stop_event.is_set() or self.failure:
            return []
        return [t.name for t in live.informers if not t.is_alive()]

    def read_errors(self) -> dict[str, int]:
        return self.errors.by_read()

    def stop(self) -> None:
        if self.live is not None:
            self.live.stop()
