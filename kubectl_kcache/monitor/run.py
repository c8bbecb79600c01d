"""The monitor's loop: connect (list and watch), then evaluate whenever a burst of changes has settled, and at
least every `resync` seconds (findings that depend on time, such as a capture stuck for too long, change
without an event). Each evaluation replaces the published one; the HTTP endpoints read the published one.

Health:
* /healthz (liveness): the loop made progress within `LIVENESS_STALL` seconds and every watch thread runs;
* /readyz (readiness): the lists were made and every watch works now, no list was forbidden, and the last
  evaluation succeeded; a 503 lists why.

It never writes, except Events with --events (events.py).
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import __version__
from ..errors import EXIT_INTERRUPTED, EXIT_OK, IncompleteError, InputError
from ..kube.client import Client, backoff_delays
from ..provenance import now_rfc3339
from ..snapshot.live import Scope
from . import metrics
from .evaluate import Evaluation, evaluate
from .events import EventRecorder
from .server import HTML, METRICS, TEXT, Answer, serve
from .source import Source

LIVENESS_STALL = 120.0


ENDPOINTS = (
    ("/metrics", "Prometheus metrics: findings, node groups, KernelCaches, serving pods, the monitor's health"),
    ("/report", "the doctor's HTML page, as of the last evaluation"),
    ("/healthz", "liveness: the loop makes progress and every watch runs"),
    ("/readyz", "readiness: listed, every watch works, the last evaluation succeeded (503 says why)"),
)
INDEX = (
    "<!doctype html><html lang=en><head><meta charset=utf-8><title>kubectl kcache monitor</title></head><body>"
    "<h1>kubectl kcache monitor</h1><ul>"
    + "".join(f'<li><a href="{path}">{path}</a>: {what}</li>' for path, what in ENDPOINTS)
    + "</ul></body></html>\n"
).encode()


def _commit() -> str:
    from ..buildinfo import build_info

    return build_info().commit


@dataclass(frozen=True)
class MonitorOptions:
    port: int = 8080
    address: str = "0.0.0.0"
    resync: float = 60.0
    events: bool = False
    namespace: str | None = None


class Monitor:
    def __init__(self, client: Client, opts: MonitorOptions, log: Callable[[str], None] | None = None):
        client.user_agent = f"kubectl-kcache/{__version__} monitor"
        self.client = client
        self.opts = opts
        self.log = log or (lambda m: print(f"kcache-monitor: {m}", file=sys.stderr, flush=True))
        self.source = Source(client, Scope(namespace=opts.namespace))
        self.recorder = EventRecorder(client, log=self.log) if opts.events else None
        self.stop = threading.Event()
        self.published: Evaluation | None = None
        self.evaluations = 0
        self.last_read = 0.0
        self.eval_error = ""
        self.evaluated_since_list = False  # the published evaluation is of the current lists
        self.beat_at = time.monotonic()
        self.interrupted_by: int | None = None
        self.lock = threading.Lock()
        self.commit = _commit()

    # ---- the loop ------------------------------------------------------------------------------------
    def _connect(self) -> bool:
        delays = backoff_delays(1.0)
        while not self.stop.is_set():
            self.beat_at = time.monotonic()
            try:
                self.evaluated_since_list = False
                self.source.connect()
                self.log("listed; watching")
                return True
            except IncompleteError as exc:
                self.log(f"{exc}; retrying")
                self.stop.wait(next(delays))
        return False

    def run(self) -> int:
        if not self._connect():
            return EXIT_OK
        self._evaluate()
        next_resync = time.monotonic() + self.opts.resync
        while not self.stop.is_set():
            self.beat_at = time.monotonic()
            if self.source.due_for_reconnect():
                self._connect()
                self._evaluate()
                continue
            changed = self.source.wait(max(0.0, min(1.0, next_resync - time.monotonic())))
            if self.stop.is_set():
                break
            if changed or time.monotonic() >= next_resync:
                self._evaluate()
                next_resync = time.monotonic() + self.opts.resync
        return EXIT_OK

    def _evaluate(self) -> None:
        if not self.source.connected:
            return
        problems = self.source.problems()
        try:
            ev = evaluate(self.source.snapshot(now_rfc3339()), self.opts.namespace)
        except Exception as exc:  # noqa: BLE001 - a bad object must not stop the monitor; /readyz says it
            self.eval_error = f"evaluation failed: {type(exc).__name__}: {exc}"
            self.log(self.eval_error)
            return
        with self.lock:
            self.published = ev
            self.evaluations += 1
            self.eval_error = ""
            self.evaluated_since_list = True
            if not problems:
                self.last_read = ev.at
        if self.recorder is not None:
            self.recorder.observe(ev.report.findings)

    # ---- health --------------------------------------------------------------------------------------
    def liveness(self) -> tuple[bool, str]:
        stalled = time.monotonic() - self.beat_at
        if stalled > LIVENESS_STALL:
            return False, f"the monitor loop has not made progress for {stalled:.0f}s"
        dead = self.source.alive()
        if dead:
            return False, "watch thread(s) stopped: " + ", ".join(dead)
        return True, "ok"

    def readiness(self) -> tuple[bool, list[str]]:
        reasons = []
        if not self.source.connected and not self.source.failure:
            reasons.append("not listed yet")
        reasons += self.source.problems()
        if self.eval_error:
            reasons.append(self.eval_error)
        elif self.published is None:
            reasons.append("not evaluated yet")
        elif not self.evaluated_since_list:  # listed again: the published numbers are of the lists before
            reasons.append("not evaluated since it listed again")
        return not reasons, reasons

    def health(self) -> metrics.Health:
        rec = self.recorder
        return metrics.Health(
            ready=self.readiness()[0],
            read_errors=self.source.read_errors(),
            last_read=self.last_read,
            evaluations=self.evaluations,
            events=dict(rec.sent) if rec else None,
            events_dropped=dict(rec.dropped) if rec else {},
            version=__version__,
            commit=self.commit,
        )

    # ---- endpoints -----------------------------------------------------------------------------------
    def routes(self) -> dict[str, Callable[[], Answer]]:
        def healthz() -> Answer:
            alive, why = self.liveness()
            return (200, TEXT, b"ok\n") if alive else (503, TEXT, f"not alive: {why}\n".encode())

        def readyz() -> Answer:
            ready, reasons = self.readiness()
            text = "ok\n" if ready else "not ready:\n" + "".join(f"- {x}\n" for x in reasons)
            return 200 if ready else 503, TEXT, text.encode()

        def metrics_page() -> Answer:
            return 200, METRICS, metrics.render(self.published, self.health()).encode()

        def report() -> Answer:
            ev = self.published
            if ev is None:
                return 503, TEXT, b"not evaluated yet\n"
            return 200, HTML, ev.html.encode()

        def index() -> Answer:
            return 200, HTML, INDEX

        return {"/": index, "/healthz": healthz, "/readyz": readyz, "/metrics": metrics_page, "/report": report}

    def install_signals(self) -> None:
        def handler(signum: int, _frame: Any) -> None:
            self.interrupted_by = signum
            self.stop.set()
            self.source.stop()

        signal.signal(signal.SIGTERM, handler)
        signal.signal(signal.SIGINT, handler)


def run_monitor(client: Client, opts: MonitorOptions) -> int:
    mon = Monitor(client, opts)
    mon.install_signals()
    try:
        server = serve(opts.address, opts.port, mon.routes())
    except OSError as exc:
        raise InputError(f"cannot listen on {opts.address}:{opts.port}: {exc.strerror or exc}") from None
    mon.log(f"serving /metrics, /report, /healthz and /readyz on {opts.address}:{server.server_address[1]}")
    try:
        code = mon.run()
    finally:
        mon.stop.set()
        mon.source.stop()
        server.shutdown()
    return EXIT_INTERRUPTED if mon.interrupted_by == signal.SIGINT else code
