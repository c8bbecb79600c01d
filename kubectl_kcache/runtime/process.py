"""One long-running process: SIGTERM/SIGINT set its stop event (SIGINT exits 130); alive (/healthz) while its
loop beat within `LIVENESS_STALL` seconds and no thread of its parts stopped unasked; ready (/readyz) when
none of its parts gives a reason not to be."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import EXIT_INTERRUPTED

LIVENESS_STALL = 120.0

Reasons = Callable[[], list[str]]


class Process:
    def __init__(
        self,
        loop: str,  # "the monitor loop": what liveness names when it stalls
        reasons: Sequence[Reasons] = (),  # each part: why it is not ready
        threads: Sequence[tuple[str, Reasons]] = (),  # each part: what its threads are, which of them stopped
        on_stop: Sequence[Callable[[], None]] = (),  # called from the signal handler
        stall: float = LIVENESS_STALL,
    ):
        self.loop, self.stall = loop, stall
        self.reasons, self.threads, self.on_stop = list(reasons), list(threads), list(on_stop)
        self.stop = threading.Event()
        self.beat_at = time.monotonic()
        self.interrupted_by: int | None = None

    def beat(self) -> None:
        self.beat_at = time.monotonic()

    def install_signals(self) -> None:
        def handler(signum: int, _frame: Any) -> None:
            self.interrupted_by = signum
            self.stop.set()
            for stop in self.on_stop:
                stop()

        signal.signal(signal.SIGTERM, handler)
        signal.signal(signal.SIGINT, handler)

    def exit_code(self, code: int) -> int:
        return EXIT_INTERRUPTED if self.interrupted_by == signal.SIGINT else code

    def liveness(self) -> tuple[bool, str]:
        stalled = time.monotonic() - self.beat_at
        if stalled > self.stall:
            return False, f"{self.loop} has not made progress for {stalled:.0f}s"
        for what, stopped in self.threads:
            dead = [] if self.stop.is_set() else stopped()
            if dead:
                return False, f"{what} stopped: " + ", ".join(dead)
        return True, "ok"

    def readiness(self) -> tuple[bool, list[str]]:
        reasons = [why for part in self.reasons for why in part()]
        return not reasons, reasons
