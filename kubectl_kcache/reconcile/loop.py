"""The controller loop: list+watch per kind into local stores, a coalescing work queue, passes that plan
over the stores and apply through the executor, and a periodic full resync.

- One informer thread per kind lists (paginated) then watches from the list's resourceVersion; a 410
  Gone or a broken stream re-lists; errors back off with jitter (also on 429 and 5xx).
- Every change marks the queue dirty; the loop waits a short quiet period so that a burst (5,000 node
  events) becomes one pass, not 5,000.
- Events for blocked captures are emitted when the inputs of that capture's selection changed since its
  last event, never on a periodic resync that changed nothing.
- SIGTERM/SIGINT stop the loop cleanly (the lease is released). Each pass is idempotent: an interrupted
  pass loses nothing, the next one finishes the work.
"""

from __future__ import annotations

import hashlib
import json
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import kinds
from .. import snapshot as snap
from ..errors import (
    EXIT_INCOMPLETE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    ApiError,
    Gone,
    IncompleteError,
    Unreachable,
)
from ..kernelcache import constants as c
from ..kube import resources as r
from ..kube.client import Client, backoff_delays
from . import actions as a
from .executor import Executor, Result
from .lease import LeaderElector, LostLeadership
from .planner import Plan, plan

QUIET_PERIOD = 0.3   # seconds without new events before a pass starts
MAX_DELAY = 2.0      # a pass starts at the latest this long after the first event of a burst


@dataclass(frozen=True)
class LoopOptions:
    once: bool = False
    force: bool = False
    leader_elect: bool = False
    lease_name: str = "kubectl-kcache-reconcile"
    lease_namespace: str = "kserve"
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    resync_period: float = 300.0
    health_port: int = 0


@dataclass(frozen=True)
class Watched:
    resource: r.Resource
    namespace: str | None = None
    field_selector: str = ""


def _by_name(name: str) -> str:
    return f"metadata.name={name}"


WATCHED = (
    Watched(r.NODES),
    Watched(r.NODE_GROUPS),
    Watched(r.KERNEL_CACHE_NODES),
    Watched(r.KERNEL_CACHES),
    Watched(r.CAPTURES),
    Watched(r.CONFIGMAPS, c.KSERVE_NAMESPACE, _by_name(c.CONFIGMAP_NAME)),
    Watched(r.DAEMONSETS, c.KSERVE_NAMESPACE, _by_name(c.AGENT_DAEMONSET)),
    Watched(r.DEPLOYMENTS, c.KSERVE_NAMESPACE, _by_name(c.CONTROLLER_DEPLOYMENT)),
)


def collect_for_reconcile(client: Client) -> snap.ClusterSnapshot:
    """One list of every kind reconcile reads (for --dry-run and --once), parsed page by page."""
    parsed: list[tuple[str, Any]] = []
    reads = []
    for w in WATCHED:
        kind = kinds.for_resource(w.resource)
        got = client.list_all(w.resource, w.namespace, field_selector=w.field_selector, decode=kind.decode_page).items
        parsed.extend((kind.field, x) for x in got)
        reads.append(snap.Read(w.resource.plural, w.namespace, "ok", len(got)))
    return snap.assemble(parsed, reads=reads)


class Metrics:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reconciles = 0
        self.errors = 0
        self.actions: Counter = Counter()
        self.relists: Counter = Counter()
        self.leader = 0

    def render(self) -> str:
        with self.lock:
            lines = ["# HELP kcache_reconcile_total Reconcile passes.", "# TYPE kcache_reconcile_total counter",
                     f"kcache_reconcile_total {self.reconciles}",
                     "# HELP kcache_reconcile_errors_total Failed passes or actions.",
                     "# TYPE kcache_reconcile_errors_total counter", f"kcache_reconcile_errors_total {self.errors}",
                     "# HELP kcache_actions_total Actions applied, by verb and kind.",
                     "# TYPE kcache_actions_total counter"]
            for (verb, kind), n in sorted(self.actions.items()):
                lines.append(f'kcache_actions_total{{verb="{verb}",kind="{kind}"}} {n}')
            lines += ["# HELP kcache_relists_total Lists restarted (410 Gone or a broken watch), by resource.",
                      "# TYPE kcache_relists_total counter"]
            for res, n in sorted(self.relists.items()):
                lines.append(f'kcache_relists_total{{resource="{res}"}} {n}')
            lines += ["# HELP kcache_leader 1 while this instance holds the lease.", "# TYPE kcache_leader gauge",
                      f"kcache_leader {self.leader}"]
        return "\n".join(lines) + "\n"


class Informer(threading.Thread):
    """List, then watch from the list's resourceVersion, into a store; re-list on 410 or a broken watch."""

    def __init__(self, client: Client, watched: Watched, on_change: Callable[[str], None], stop: threading.Event,
                 metrics: Metrics, log: Callable[[str], None]):
        super().__init__(daemon=True, name=f"informer-{watched.resource.plural}")
        self.client, self.w, self.on_change, self.stop_event = client, watched, on_change, stop
        self.metrics, self.log = metrics, log
        self.store: dict[tuple[str, str], Any] = {}
        self.lock = threading.Lock()
        self.synced = threading.Event()
        self.error: str = ""
        self.kind = kinds.for_resource(self.w.resource)
        self.field = self.kind.field

    def snapshot_items(self) -> list[Any]:
        with self.lock:
            return list(self.store.values())


    def run(self) -> None:
        delays = backoff_delays()
        while not self.stop_event.is_set():
            try:
                # decoded page by page into typed objects: the raw list (30 KB per GPU node) is never held
                objs, rv = self.client.list_all(self.w.resource, self.w.namespace, field_selector=self.w.field_selector,
                                                decode=self.kind.decode_page)
                with self.lock:
                    self.store = {(o.meta.namespace or "", o.meta.name): o for o in objs}
                self.synced.set()
                self.error = ""
                self.on_change(self.w.resource.plural)
                delays = backoff_delays()
                while not self.stop_event.is_set():
                    for event in self.client.watch(self.w.resource, rv, self.w.namespace, timeout_seconds=240,
                                                   field_selector=self.w.field_selector,
                                                   decode=self.kind.decode_watch_line):
                        rv = event.resource_version or rv
                        if event.type == "BOOKMARK":
                            continue
                        obj = event.object
                        key = (obj.metadata.namespace or "", obj.metadata.name)
                        with self.lock:
                            if event.type == "DELETED":
                                self.store.pop(key, None)
                            else:
                                self.store[key] = obj
                        self.on_change(self.w.resource.plural)
                        if self.stop_event.is_set():
                            return
            except Gone:
                self.metrics.relists[self.w.resource.plural] += 1
                continue  # re-list at once
            except (IncompleteError, ValueError) as exc:
                self.error = str(exc)
                self.metrics.relists[self.w.resource.plural] += 1
                self.stop_event.wait(next(delays))
            except Exception as exc:  # noqa: BLE001 - keep the informer alive; report in the loop's log
                self.error = f"{type(exc).__name__}: {exc}"
                self.log(f"informer {self.w.resource.plural}: {self.error}")
                self.stop_event.wait(next(delays))


def selection_signature(action: a.Action, snapshot: snap.ClusterSnapshot) -> str:
    """What a capture's node-group selection depended on; an event is emitted again only when it changes."""
    capture = next((x for x in snapshot.captures if x.namespace == action.namespace and x.name == action.name), None)
    session = capture.active_session if capture else None
    node = snapshot.node_by_name.get(session.node_name) if session and session.node_name else None
    cm = snapshot.configmap(c.KSERVE_NAMESPACE, c.CONFIGMAP_NAME)
    doc = {
        "reason": action.event_reason, "message": action.message,
        "session": session.to_dict() if session else None,
        "node": dict(node.labels) if node else None,
        "groups": sorted((g.name, sorted(g.node_selector.items())) for g in snapshot.node_groups),
        "config": cm.data.get(c.CONFIG_KEY) if cm else None,
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()


class Controller:
    def __init__(self, client: Client, opts: LoopOptions, log: Callable[[str], None] | None = None):
        self.client = client
        self.opts = opts
        self.log = log or (lambda m: print(f"kcache-reconcile: {m}", file=sys.stderr, flush=True))
        self.stop = threading.Event()
        self.dirty = threading.Event()
        self.first_change = 0.0
        self.last_change = 0.0
        self.metrics = Metrics()
        self.executor = Executor(client)
        self.elector: LeaderElector | None = None
        self.lost = threading.Event()
        self.emitted: dict[tuple[str, str], str] = {}  # capture -> signature of its last event
        self.interrupted_by: int | None = None

    # ---- change tracking --------------------------------------------------------------------------
    def changed(self, _what: str) -> None:
        now = time.monotonic()
        if not self.dirty.is_set():
            self.first_change = now
        self.last_change = now
        self.dirty.set()

    def _wait_for_work(self, next_resync: float) -> bool:
        """Block until a burst of changes has settled (True) or the resync is due (False)."""
        while not self.stop.is_set():
            now = time.monotonic()
            if self.dirty.is_set():
                quiet = now - self.last_change >= QUIET_PERIOD
                late = now - self.first_change >= MAX_DELAY
                if quiet or late:
                    self.dirty.clear()
                    return True
                self.stop.wait(0.05)
                continue
            if now >= next_resync:
                return False
            self.dirty.wait(min(1.0, max(0.0, next_resync - now)))
        return False

    # ---- one pass ---------------------------------------------------------------------------------
    def controller_active(self, snapshot: snap.ClusterSnapshot) -> bool:
        dep = snapshot.deployment(c.KSERVE_NAMESPACE, c.CONTROLLER_DEPLOYMENT)
        return dep is not None and dep.ready_replicas > 0

    def run_pass(self, snapshot: snap.ClusterSnapshot) -> tuple[Plan, Result]:
        p = plan(snapshot)
        for note in p.notes:
            self.log(note)
        if self.controller_active(snapshot) and not self.opts.force:
            raise ControllerActive(
                f"KServe's controller is active (Deployment {c.KSERVE_NAMESPACE}/{c.CONTROLLER_DEPLOYMENT} has "
                "ready replicas): not writing. Stop it first, or pass --force to write anyway.")
        events = []
        for act in p.events:
            key = (act.namespace or "", act.name)
            sig = selection_signature(act, snapshot)
            if self.emitted.get(key) != sig:
                events.append(act)
                self.emitted[key] = sig
        todo = p.writes + events
        before = self.elector.ensure if self.elector else None
        result = self.executor.apply(todo, before_writes=before) if todo else Result()
        with self.metrics.lock:
            self.metrics.reconciles += 1
            self.metrics.actions.update(result.done)
            self.metrics.errors += len(result.errors)
        for err in result.errors:
            self.log(f"error: {err}")
        if result.done:
            self.log("applied " + ", ".join(f"{n} {verb} {kind}" for (verb, kind), n in sorted(result.done.items())))
        return p, result

    # ---- modes ------------------------------------------------------------------------------------
    def run_once(self, report: Callable[[list[a.Action]], None] | None = None) -> int:
        snapshot = collect_for_reconcile(self.client)
        try:
            p, result = self.run_pass(snapshot)
        except ControllerActive as exc:
            self.log(str(exc))
            return EXIT_INCOMPLETE
        if report:
            report(p.writes + p.events)
        return EXIT_INCOMPLETE if result.errors else EXIT_OK

    def run_forever(self) -> int:
        informers = [Informer(self.client, w, self.changed, self.stop, self.metrics, self.log) for w in WATCHED]
        for inf in informers:
            inf.start()
        next_resync = time.monotonic() + self.opts.resync_period
        warned_active = False
        while not self.stop.is_set():
            if self.lost.is_set():
                self.log("lost leadership; stopping")
                return EXIT_INCOMPLETE
            if not all(inf.synced.is_set() for inf in informers):
                self.stop.wait(0.1)
                continue
            triggered = self._wait_for_work(next_resync)
            if self.stop.is_set():
                break
            if not triggered:
                next_resync = time.monotonic() + self.opts.resync_period
            snapshot = snap.assemble((inf.field, obj) for inf in informers for obj in inf.snapshot_items())
            try:
                self.run_pass(snapshot)
                warned_active = False
            except ControllerActive as exc:
                if not warned_active:
                    self.log(str(exc))
                    warned_active = True
            except LostLeadership as exc:
                self.log(str(exc))
                return EXIT_INCOMPLETE
            except (Unreachable, ApiError) as exc:
                with self.metrics.lock:
                    self.metrics.errors += 1
                self.log(f"pass failed: {exc}; retrying")
                self.changed("retry")
                self.stop.wait(next(backoff_delays(1.0)))
        return EXIT_OK

    def install_signals(self) -> None:
        def handler(signum: int, _frame: Any) -> None:
            self.interrupted_by = signum
            self.stop.set()

        signal.signal(signal.SIGTERM, handler)
        signal.signal(signal.SIGINT, handler)


class ControllerActive(IncompleteError):
    pass


def _serve_health(port: int, ctrl: Controller) -> None:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the standard library's name
            if self.path == "/healthz":
                body, code = b"ok\n", 200
            elif self.path == "/metrics":
                body, code = ctrl.metrics.render().encode(), 200
            else:
                body, code = b"not found\n", 404
            self.send_response(code)
            self.send_header("Content-Type", "text/plain; version=0.0.4" if self.path == "/metrics" else "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: Any) -> None:
            return

    server = ThreadingHTTPServer(("0.0.0.0", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True, name="health").start()


def run_loop(client: Client, opts: LoopOptions, report: Callable[[list[a.Action]], None] | None = None) -> int:
    ctrl = Controller(client, opts)
    ctrl.install_signals()
    if opts.health_port:
        _serve_health(opts.health_port, ctrl)
    renewer = None
    if opts.leader_elect:
        ctrl.elector = LeaderElector(client, opts.lease_namespace, opts.lease_name, opts.lease_duration,
                                     opts.renew_deadline, opts.retry_period)
        ctrl.log(f"waiting for lease {opts.lease_namespace}/{opts.lease_name} as {ctrl.elector.identity}")
        if not ctrl.elector.acquire(ctrl.stop):
            return EXIT_INTERRUPTED if ctrl.interrupted_by == signal.SIGINT else EXIT_OK
        ctrl.metrics.leader = 1
        ctrl.log("became leader")
        renewer = threading.Thread(target=ctrl.elector.renew_forever, args=(ctrl.stop, ctrl.lost), daemon=True)
        renewer.start()
    try:
        code = ctrl.run_once(report) if opts.once else ctrl.run_forever()
    finally:
        ctrl.stop.set()
        if ctrl.elector is not None:
            ctrl.elector.release()
            ctrl.metrics.leader = 0
    if ctrl.interrupted_by == signal.SIGINT:
        return EXIT_INTERRUPTED
    return code
