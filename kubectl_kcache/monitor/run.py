"""The monitor's loop: connect (list and watch), then evaluate whenever a burst of changes has settled, and at
least every `resync` seconds (findings that depend on time, such as a capture stuck for too long, change
without an event). Each evaluation replaces the published one; the HTTP endpoints read the published one.

Ready once the lists were made, every list and watch works now and the last evaluation succeeded. It never
writes, except Events with --events (events.py).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from .. import __version__
from ..errors import EXIT_OK, IncompleteError
from ..kube.client import Client, backoff_delays
from ..provenance import now_rfc3339
from ..runtime import memory, probes
from ..runtime.process import Process
from ..runtime.read_errors import ReadErrors
from ..snapshot.live import Scope
from . import metrics
from .evaluate import Evaluation, evaluate
from .events import EventRecorder
from .source import Source


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
        self.source = Source(client, Scope(namespace=opts.namespace), ReadErrors(self.log))
        self.recorder = EventRecorder(client, log=self.log) if opts.events else None
        watches = ("watch thread(s)", self.source.alive)
        self.process = Process("the monitor loop", [self._reasons], [watches], on_stop=[self.source.stop])
        self.stop = self.process.stop
        self.published: Evaluation | None = None
        self.evaluations = 0
        self.last_read = 0.0
        self.eval_error = ""
        self.evaluated_since_list = False  # the published evaluation is of the current lists, every one read
        self.lock = threading.Lock()
        self.commit = _commit()

    # ---- the loop ------------------------------------------------------------------------------------
    def _connect(self) -> bool:
        delays = backoff_delays(1.0)
        while not self.stop.is_set():
            self.process.beat()
            try:
                self.evaluated_since_list = False
                self.source.connect()
                self.log("listed; watching")
                return True
            except IncompleteError:  # said once per cause, and counted, by the source
                self.stop.wait(next(delays))
        return False

    def run(self) -> int:
        if not self._connect():
            return EXIT_OK
        self._evaluate()
        memory.trim()  # the first lists' pages and the first evaluation's work are garbage now
        next_resync = time.monotonic() + self.opts.resync
        while not self.stop.is_set():
            self.process.beat()
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
            self.evaluated_since_list = not problems  # of every list, current
            if not problems:
                self.last_read = ev.at
        if self.recorder is not None:
            self.recorder.observe(ev.report.findings)

    # ---- health --------------------------------------------------------------------------------------
    def _reasons(self) -> list[str]:
        """Not ready: not listed, a read failing now, or no evaluation of the current lists."""
        reasons = []
        if not self.source.connected and not self.source.failure:
            reasons.append("not listed yet")
        reasons += self.source.problems()
        if self.eval_error:
            reasons.append(self.eval_error)
        elif self.published is None:
            reasons.append("not evaluated yet")
        elif not self.evaluated_since_list and not reasons:  # the published numbers are of reads that failed
            reasons.append("not evaluated since every read works")
        return reasons

    def health(self) -> metrics.Health:
        rec = self.recorder
        return metrics.Health(
            ready=self.process.readiness()[0],
            read_errors=self.source.read_errors(),
            last_read=self.last_read,
            evaluations=self.evaluations,
            events=dict(rec.sent) if rec else None,
            events_dropped=dict(rec.dropped) if rec else {},
            version=__version__,
            commit=self.commit,
        )

    # ---- endpoints -----------------------------------------------------------------------------------
    def endpoints(self) -> list[probes.Endpoint]:
        def report() -> probes.Answer:
            ev = self.published
            if ev is None:
                return 503, probes.TEXT, b"not evaluated yet\n"
            return 200, probes.HTML, ev.html.encode()

        return probes.endpoints(
            self.process,
            lambda: metrics.render(self.published, self.health()),
            "findings, node groups, KernelCaches, serving pods, the monitor's health",
            [probes.Endpoint("/report", "the doctor's HTML page, as of the last evaluation", report)],
        )


def run_monitor(client: Client, opts: MonitorOptions) -> int:
    with memory.long_lived():
        return _run_monitor(client, opts)


def _run_monitor(client: Client, opts: MonitorOptions) -> int:
    mon = Monitor(client, opts)
    mon.process.install_signals()
    server = probes.serve(opts.address, opts.port, "kubectl kcache monitor", mon.endpoints())
    mon.log(f"serving /metrics, /report, /healthz and /readyz on {opts.address}:{server.server_address[1]}")
    try:
        code = mon.run()
    finally:
        mon.stop.set()
        mon.source.stop()
        server.shutdown()
    return mon.process.exit_code(code)
