"""Writes the API server refuses, learned rather than repeated (client-go's answer: a failing key is backed
off, and a controller that cannot do its work says so without hammering the server).

- A refusal by RBAC marks the verb on the resource (`create kernelcachenodes`); one by an admission policy
  or webhook marks that object alone (its answer may depend on the object); the fence (deploy/fence.yaml),
  when it refuses this replica whatever it writes, marks every write.
- A marked write is not sent. One request probes it again once the mark is due: PROBE_FIRST seconds after
  the refusal, the interval doubling up to PROBE_MAX; a change of what grants or refuses writes (RBAC
  objects, admission policies, seen by informers) makes every mark due at once.
- A mark is said once when it starts and once when it ends, is on /readyz while it lasts, and is a series
  of `kcache_reconcile_refused{verb,resource,reason}`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

PROBE_FIRST = 5.0  # seconds from a refusal to its first probe
PROBE_MAX = 300.0  # the probe interval doubles up to this

RBAC, ADMISSION, FENCE = "rbac", "admission", "fence"


@dataclass(frozen=True)
class Key:
    verb: str  # as RBAC names it (create, delete, patch, update), or * for every write
    resource: str  # kernelcachenodes, kernelcachecaptures/status, ..., or *
    object: str = ""  # namespace/name, for a refusal of that object alone

    def __str__(self) -> str:
        what = "every write" if self.verb == "*" else f"{self.verb} {self.resource}"
        return f"{what} {self.object}" if self.object else what


EVERY_WRITE = Key("*", "*")


@dataclass
class Mark:
    key: Key
    reason: str  # rbac | admission | fence
    message: str
    since: float
    interval: float
    due: float
    refused: int = 1  # requests refused while marked (the first included)
    probing: bool = False  # a probe has been handed out and not answered yet


class Refusals:
    """The marks, shared by the writer threads (`may_send`, `refused`, `admitted`) and the loop."""

    def __init__(
        self,
        log: Callable[[str], None] = lambda _line: None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.log, self.clock = log, clock
        self._marks: dict[Key, Mark] = {}
        self._lock = threading.Lock()
        self.series: set[tuple[str, str, str]] = set()  # (verb, resource, reason) ever marked: kept at 0 after

    def refused(self, key: Key, reason: str, message: str) -> None:
        """`key` was refused now: mark it (said once), or push its next probe further out."""
        now = self.clock()
        with self._lock:
            mark = self._marks.get(key)
            if mark is None:
                self._marks[key] = Mark(key, reason, message, now, PROBE_FIRST, now + PROBE_FIRST)
                self.series.add((key.verb, key.resource, reason))
            else:
                mark.refused += 1
                mark.message = message
                if mark.probing:  # the probe's answer (not a write that was in flight with the first refusal)
                    mark.probing = False
                    mark.interval = min(mark.interval * 2, PROBE_MAX)
                    mark.due = now + mark.interval
                return
        self.log(
            f"{key} refused ({reason}): {message}; not sent again until access changes, probing it with one "
            f"request after {PROBE_FIRST:.0f}s, then less often (up to every {PROBE_MAX:.0f}s)"
        )

    def admitted(self, keys: Iterable[Key]) -> bool:
        """A write under these keys was admitted: their marks end (said once). True when one did."""
        with self._lock:
            ended = [self._marks.pop(k) for k in keys if k in self._marks]
        now = self.clock()
        for mark in ended:
            self.log(f"{mark.key}: admitted again after {mark.refused} refused request(s) in {now - mark.since:.0f}s")
        return bool(ended)

    def may_send(self, keys: Iterable[Key]) -> bool:
        """Whether a write under these keys may be sent now: none is marked, or every mark on it is due and
        this write is their one probe."""
        now = self.clock()
        with self._lock:
            marks = [m for m in (self._marks.get(k) for k in keys) if m is not None]
            if any(m.probing or now < m.due for m in marks):
                return False
            for m in marks:
                m.probing = True
            return True

    def unanswered(self) -> None:
        """Probes handed out but never sent (the pass stopped first): due again."""
        with self._lock:
            for m in self._marks.values():
                m.probing = False

    def access_changed(self) -> bool:
        """What grants or refuses writes changed: every mark is due now. True when there was one."""
        now = self.clock()
        with self._lock:
            for m in self._marks.values():
                m.due = min(m.due, now)
            return bool(self._marks)

    def next_due(self) -> float | None:
        """When the next probe is due (on `clock`), None without marks."""
        with self._lock:
            return min((m.due for m in self._marks.values()), default=None)

    def current(self) -> list[Mark]:
        with self._lock:
            return sorted(self._marks.values(), key=lambda m: m.since)

    def reasons(self) -> list[str]:
        """For /readyz: each mark, what the API server said, and when it is probed next."""
        now = self.clock()
        return [
            f"{m.key} refused ({m.reason}, {m.refused} request(s) in {now - m.since:.0f}s, next probe in "
            f"{max(0.0, m.due - now):.0f}s): {m.message}"
            for m in self.current()
        ]
