"""Keep a snapshot current from watches, for `status -w`: every list that `collect` made is watched from the
resourceVersion it was read at (with bookmarks), and each event updates one shared store of parsed objects.

- A `410 Gone` (the resourceVersion was compacted away) re-lists that kind at once and replaces what the
  store held from it; a watch the server ends (its timeout) is resumed from the last resourceVersion seen.
- A broken stream or an unreachable server backs off with jitter and resumes from the last resourceVersion
  seen (a 410 then re-lists); `problems()` says what is failing meanwhile, so the screen never passes
  stale counts off as current.
- A watch that is forbidden (RBAC may allow `list` and not `watch`) ends the watch with IncompleteError
  naming the verb and resource: no counts are shown as live that cannot be kept live.
- `wait()` returns once a burst of changes has settled (0.2 s of quiet, at most 1 s after its first
  event), so that 5,000 node updates re-render once, not 5,000 times.

The reconcile loop has its own informers (reconcile/loop.py); this module sits below the commands that
show data and above `collect`, which made the lists.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from . import kinds
from . import snapshot as snap
from .collect import Listed
from .errors import ApiError, Forbidden, Gone, IncompleteError, InputError
from .kube.client import Client, backoff_delays

QUIET_PERIOD = 0.2  # seconds without events before the screen is redrawn
MAX_DELAY = 1.0  # the screen is redrawn at the latest this long after the first event of a burst
WATCH_TIMEOUT = 240  # seconds the server keeps one watch open before we resume it

Key = tuple[str, str, str]  # (snapshot field, namespace, name)



def _where(listed: Listed) -> str:
    spec = listed.spec
    return f"{spec.resource.plural}" + (f" in namespace {spec.namespace}" if spec.namespace else "")


class LiveSnapshot:
    """A snapshot kept current by watches. `start()`, then `wait()` and `snapshot()` in a loop."""

    def __init__(self, client: Client, initial: snap.ClusterSnapshot, lists: Iterable[Listed],
                 clock: Callable[[], float] = time.monotonic):
        self.client = client
        self.meta = initial.meta
        self.reads = initial.reads
        self.lists = list(lists)
        self.objects: dict[Key, Any] = {}
        for field in kinds.FIELDS:
            for obj in getattr(initial, field):
                self.objects[(field, obj.metadata.namespace or "", obj.metadata.name)] = obj
        self.lock = threading.Lock()
        self.changed = threading.Event()
        self.stop_event = threading.Event()
        self.clock = clock
        self.first_change = 0.0
        self.last_change = 0.0
        self.fatal: IncompleteError | None = None
        self.errors: dict[str, str] = {}  # watch -> what is failing now
        self.relists = 0
        self.threads = [_Watcher(self, listed) for listed in self.lists]

    # ---- the caller's side ----------------------------------------------------------------------------
    def start(self) -> None:
        for t in self.threads:
            t.start()

    def stop(self) -> None:
        self.stop_event.set()
        self.changed.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until a burst of changes has settled (True), or `timeout` passed without one (False).
        Raises IncompleteError when a watch cannot be made (forbidden)."""
        deadline = None if timeout is None else self.clock() + timeout
        while True:
            self._raise_fatal()
            if self.changed.is_set():
                now = self.clock()
                if now - self.last_change >= QUIET_PERIOD or now - self.first_change >= MAX_DELAY:
                    self.changed.clear()
                    self._raise_fatal()
                    return not self.stop_event.is_set()
                self.stop_event.wait(0.05)
                continue
            if deadline is not None and self.clock() >= deadline:
                return False
            self.changed.wait(0.5 if deadline is None else max(0.0, min(0.5, deadline - self.clock())))

    def snapshot(self, taken_at: str = "") -> snap.ClusterSnapshot:
        """The objects as the watches have them now."""
        with self.lock:
            items = [(key[0], obj) for key, obj in self.objects.items()]
        meta = dataclasses.replace(self.meta, taken_at=taken_at or self.meta.taken_at)
        return snap.assemble(items, meta=meta, reads=self.reads)

    def problems(self) -> list[str]:
        """What is failing now (the counts of those kinds may be stale until it recovers)."""
        with self.lock:
            return [f"watch {what}: {why}; retrying" for what, why in sorted(self.errors.items())]

    def _raise_fatal(self) -> None:
        if self.fatal is not None:
            raise self.fatal

    # ---- the watchers' side ---------------------------------------------------------------------------
    def notify(self) -> None:
        now = self.clock()
        with self.lock:
            if not self.changed.is_set():
                self.first_change = now
            self.last_change = now
        self.changed.set()

    def set_error(self, what: str, why: str | None) -> None:
        with self.lock:
            had = self.errors.get(what)
            if why is None:
                self.errors.pop(what, None)
            else:
                self.errors[what] = why
        if had != why:
            self.notify()  # the screen says it (or that it is over)


class _Watcher(threading.Thread):
    """One list's watch: events into the shared store; 410 re-lists; errors back off."""

    def __init__(self, live: LiveSnapshot, listed: Listed):
        super().__init__(daemon=True, name=f"watch-{listed.spec.resource.plural}")
        self.live = live
        self.spec = listed.spec
        self.kind = kinds.for_resource(listed.spec.resource)
        self.keys: set[Key] = set(listed.keys)
        self.version = listed.resource_version
        self.what = _where(listed)

    def run(self) -> None:
        delays = backoff_delays()
        stop = self.live.stop_event
        while not stop.is_set():
            try:
                self._watch()
                delays = backoff_delays()
            except Gone:
                self._relist()
            except Forbidden as exc:
                self.live.fatal = IncompleteError(f"status --watch cannot watch {self.what} (forbidden: {exc})")
                self.live.notify()
                return
            except ApiError as exc:  # Unreachable, a broken stream, 5xx: resume from the last resourceVersion
                self.live.set_error(self.what, str(exc))
                stop.wait(next(delays))
            except Exception as exc:  # noqa: BLE001 - keep watching; the screen shows the error
                self.live.set_error(self.what, f"{type(exc).__name__}: {exc}")
                stop.wait(next(delays))

    def _watch(self) -> None:
        if not self.version:
            self._relist()
        spec = self.spec
        events = self.live.client.watch(spec.resource, self.version, spec.namespace, timeout_seconds=WATCH_TIMEOUT,
                                        label_selector=spec.label_selector, field_selector=spec.field_selector,
                                        decode=self._decode)
        for event in events:
            if event is None:  # an object this version cannot decode: said on the screen, the rest kept current
                continue
            self.version = event.resource_version or self.version
            if event.type == "BOOKMARK":
                continue
            self.live.set_error(self.what, None)
            obj = event.object
            key = (self.kind.field, obj.metadata.namespace or "", obj.metadata.name)
            with self.live.lock:
                if event.type == "DELETED":
                    self.live.objects.pop(key, None)
                    self.keys.discard(key)
                else:
                    self.live.objects[key] = obj
                    self.keys.add(key)
            self.live.notify()
            if self.live.stop_event.is_set():
                return

    def _decode(self, line: bytes) -> Any:
        try:
            return self.kind.decode_watch_line(line)
        except InputError as exc:
            self.live.set_error(self.what, str(exc))
            return None

    def _relist(self) -> None:
        """List again and replace what this list contributed to the store."""
        spec = self.spec
        got, version = self.live.client.list_all(spec.resource, spec.namespace, label_selector=spec.label_selector,
                                                 field_selector=spec.field_selector, decode=self.kind.decode_page)
        fresh = {(self.kind.field, obj.metadata.namespace or "", obj.metadata.name): obj for obj in got}
        with self.live.lock:
            for key in self.keys - fresh.keys():
                self.live.objects.pop(key, None)
            self.live.objects.update(fresh)
            self.keys = set(fresh)
            self.live.relists += 1
        self.version = version
        self.live.set_error(self.what, None)
        self.live.notify()
