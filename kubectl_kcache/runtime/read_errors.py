"""Failures to see the cluster (a list, a watch, the Lease), for both long-running commands: said once per
distinct cause, then again with backoff while it lasts, counted by resource and reason (reconcile's
`kcache_read_errors_total`) and by verb and what was read (the monitor's `kcache_monitor_read_errors_total`),
and kept as each reader's current state for /readyz.

A process that cannot read is blind: it must say so on stderr, in its metrics and in its readiness,
never look healthy while it plans or evaluates nothing.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import ApiError, Forbidden, Gone, NotFound, Unreachable

FIRST_REPEAT = 30.0  # seconds before a cause that persists is logged again
MAX_REPEAT = 600.0  # the interval doubles up to this


def reason_of(exc: BaseException) -> str:
    """A short, stable label for a metric."""
    if isinstance(exc, Unreachable):
        return "unreachable"
    if isinstance(exc, Forbidden):
        return "forbidden"
    if isinstance(exc, NotFound):
        return "not-found"
    if isinstance(exc, Gone):
        return "expired"
    if isinstance(exc, ApiError):
        if exc.status == 401:
            return "unauthorized"
        if exc.status == 429:
            return "throttled"
        if exc.status >= 500:
            return "server-error"
        return f"http-{exc.status}" if exc.status else "error"
    if isinstance(exc, ValueError):
        return "bad-response"
    return "error"


def one_line(text: str) -> str:
    """Server-provided text on one line, control characters escaped."""
    return "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in text)


@dataclass
class _Failing:
    cause: str
    since: float
    count: int
    next_log: float
    interval: float


class ReadErrors:
    def __init__(
        self,
        log: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
        first_repeat: float = FIRST_REPEAT,
        max_repeat: float = MAX_REPEAT,
    ):
        self.log = log
        self.clock = clock
        self.first_repeat = first_repeat
        self.max_repeat = max_repeat
        self.counts: Counter[tuple[str, str]] = Counter()  # (resource, reason) -> failures
        self.reads: Counter[str] = Counter()  # "list nodes" -> failures; `expect` puts a read at 0
        self._failing: dict[str, _Failing] = {}  # reader -> what is wrong now
        self._lock = threading.Lock()

    def failed(self, reader: str, verb: str, resource: str, exc: BaseException) -> None:
        cause = one_line(f"cannot {verb} {resource}: {exc}")
        now = self.clock()
        message = ""
        with self._lock:
            self.counts[(resource, reason_of(exc))] += 1
            self.reads[f"{verb} {resource}".strip()] += 1  # "list": no resource named
            state = self._failing.get(reader)
            if state is None or state.cause != cause:
                self._failing[reader] = _Failing(cause, now, 1, now + self.first_repeat, self.first_repeat)
                message = f"{cause}; retrying with backoff"
            else:
                state.count += 1
                if now >= state.next_log:
                    message = f"{cause} (still failing: {state.count} attempts in {now - state.since:.0f}s)"
                    state.interval = min(state.interval * 2, self.max_repeat)
                    state.next_log = now + state.interval
        if message:
            self.log(message)

    def expect(self, *reads: str) -> None:
        """Count these reads ("list nodes") from 0: a counter exported before its first failure lets
        `increase()` see that failure."""
        with self._lock:
            for read in reads:
                self.reads.setdefault(read, 0)

    def by_read(self) -> dict[str, int]:
        with self._lock:
            return dict(self.reads)

    def ok(self, reader: str) -> None:
        with self._lock:
            state = self._failing.pop(reader, None)
        if state is not None:
            self.log(
                f"{reader}: working again after {state.count} failed attempt(s) in {self.clock() - state.since:.0f}s"
            )

    def current(self, reader: str) -> str:
        """What is wrong with `reader` now ("" when its last attempt worked)."""
        with self._lock:
            state = self._failing.get(reader)
            return state.cause if state else ""

    def failing(self) -> list[str]:
        """Every cause failing now, in the order they started."""
        with self._lock:
            return [state.cause for state in sorted(self._failing.values(), key=lambda st: st.since)]
