"""The controller loop: list+watch per kind into local stores, a coalescing work queue, passes that plan
over the stores and apply through the executor, and a periodic full resync.

- One informer thread per kind lists (paginated) then watches from the list's resourceVersion. A broken
  watch makes the store unsynced until a watch from the last resourceVersion is accepted again; a 410
  Gone re-lists. Failures back off with jitter and are reported (logged once per cause, counted).
- No pass runs over a store known to be stale (any informer unsynced); what our own writes returned goes
  into the stores at once, so a pass does not plan a write the previous one made.
- Every change marks the queue dirty; the loop waits a short quiet period so that a burst (5,000 node
  events) becomes one pass, not 5,000.
- Events for blocked captures are emitted when the inputs of that capture's selection changed since its
  last event, never on a periodic resync that changed nothing.
- Another controller active (peers.py) is judged from the informers' stores and events, before each write;
  a write the API server refuses is learned, held back and probed again on a growing interval
  (refusals.py), at once when RBAC objects or admission policies change. After the informers synced, the
  loop makes no list.
- With --leader-elect, informers run while standing by; passes run only while leading, and every write is
  checked against the proof of the Lease (lease.py). Losing it stops the loop (exit 3).
- /healthz: the loop is alive; /readyz: it can see the cluster and leads or stands by; /metrics.
- SIGTERM/SIGINT stop the loop cleanly (the lease is released). Each pass is idempotent: an interrupted
  pass loses nothing, the next one finishes the work.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from .. import __version__
from ..errors import EXIT_INCOMPLETE, EXIT_OK, ApiError, Forbidden, Unreachable
from ..kernelcache import constants as c
from ..kube import write_guard
from ..kube.client import Client, backoff_delays
from ..runtime import memory, probes
from ..runtime.process import Process
from ..runtime.read_errors import ReadErrors
from ..snapshot import kinds
from ..snapshot import model as snap
from ..snapshot import plan as plan_lists
from ..snapshot.follow import LiveSnapshot
from ..snapshot.informer import LISTED, ListerWatcher
from ..snapshot.kinds import ListSpec
from ..snapshot.live import collect_for_reconcile
from ..snapshot.reads import ListMade, require
from ..text import escape
from . import actions as a
from .executor import Executor, Fenced, Result, pin_preconditions
from .lease import LeaderElector, LostLeadership, new_identity
from .metrics import Metrics
from .peers import ControllerActive, Peers
from .planner import Plan, plan
from .refusals import EVERY_WRITE, FENCE, Refusals

QUIET_PERIOD = 0.3  # seconds without new events before a pass starts
MAX_DELAY = 2.0  # a pass starts at the latest this long after the first event of a burst
RECONNECTED = "reconnected"  # what an informer reports when its watch is accepted again after a break


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


def selection_signature(action: a.Action, snapshot: snap.ClusterSnapshot) -> str:
    """What a capture's node-group selection depended on; an event is emitted again only when it changes."""
    capture = snapshot.capture_by_key.get(f"{action.namespace}/{action.name}")
    session = capture.active_session if capture else None
    node = snapshot.node_by_name.get(session.node_name) if session and session.node_name else None
    cm = snapshot.configmap(c.KSERVE_NAMESPACE, c.CONFIGMAP_NAME)
    doc = {
        "reason": action.event_reason,
        "message": action.message,
        "session": session.to_dict() if session else None,
        "node": dict(node.labels) if node else None,
        "groups": sorted((g.name, sorted(g.node_selector.items())) for g in snapshot.node_groups),
        "config": cm.data.get(c.CONFIG_KEY) if cm else None,
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()


FENCE_READER = "the API server's fence"
# deploy/fence.yaml's refusal: the pod the request's token is bound to, and the holder the API server has
FENCE_POD = re.compile(r"pod (\S+) does not hold Lease \S+ \(holder: ([^)]*)\)")


class Controller:
    def __init__(
        self,
        client: Client,
        opts: LoopOptions,
        log: Callable[[str], None] | None = None,
        lister_watcher: Callable[[ListMade], ListerWatcher] | None = None,  # tests: a fake API server
    ):
        self.opts = opts
        self.log = log or (lambda m: print(f"kcache-reconcile: {escape(m)}", file=sys.stderr, flush=True))
        self.identity = new_identity()
        # the identity in the user agent tells replicas apart in the API server's audit log
        client.user_agent = f"kubectl-kcache/{__version__} reconcile/{self.identity}"
        self.client = client
        self.process = Process("the reconcile loop", [self._reasons], [("informer thread(s)", self._stopped)])
        self.stop = self.process.stop
        self.beat = self.process.beat
        self.liveness, self.readiness = self.process.liveness, self.process.readiness
        self.reconnected = threading.Event()
        self.metrics = Metrics()
        self.errors = ReadErrors(self.log)
        # informers run in every replica, the leader and those standing by (a warm takeover; readiness); the
        # access lists are not waited for: their changes only make a refused write due at once
        self.live = LiveSnapshot(
            client,
            None,
            [ListMade(spec, "") for spec in plan_lists.RECONCILE + plan_lists.RECONCILE_ACCESS],
            owner="reconcile",
            kind=kinds.with_writers,
            on_change=lambda spec, what: self.changed(what) if spec in plan_lists.RECONCILE else None,
            on_error=lambda spec, verb, exc: self.errors.failed(_reader(spec), verb, spec.plural, exc),
            on_ok=lambda spec: self.errors.ok(_reader(spec)),
            stop=self.stop,
            quiet=QUIET_PERIOD,
            max_delay=MAX_DELAY,
            lister_watcher=lister_watcher,
        )
        self.work = self.live.coalescer
        self.informers = self.live.of(*plan_lists.RECONCILE)
        self.pass_errors = ReadErrors(self.log)  # failed passes: logged the same way, counted as reconcile errors
        self.write_errors = ReadErrors(self.log)  # the fence's refusals right after a takeover
        self.refusals = Refusals(self.log)  # writes the API server refuses: learned, held back, probed
        self._pass_delays = backoff_delays(1.0)
        self.metrics.read_errors = self.errors.counts
        self.metrics.ready = lambda: self.readiness()[0]
        self.metrics.refused = self.refusals
        self.metrics.relists = lambda: {inf.spec.plural: inf.relists for inf in self.informers}
        self.metrics.decode_failures = lambda: {
            inf.spec.plural: (inf.decode_failures, len(inf.poisoned)) for inf in self.informers
        }
        self.elector: LeaderElector | None = None
        if opts.leader_elect:
            self.elector = LeaderElector(
                client,
                opts.lease_namespace,
                opts.lease_name,
                opts.lease_duration,
                opts.renew_deadline,
                opts.retry_period,
                identity=self.identity,
                errors=self.errors,
            )
        own = (opts.lease_namespace, opts.lease_name) if opts.leader_elect else None
        self.peers = Peers(own, force=opts.force)
        self.executor = Executor(
            client, guard=self.elector.guard if self.elector else None, peers=self.peers, refusals=self.refusals
        )
        self.live.add_handler(plan_lists.DEPLOYMENTS, self.peers.on_deployment)
        for spec in (*plan_lists.KSERVE_LEASES, plan_lists.PLUGIN_LEASES):
            self.live.add_handler(spec, self.peers.on_lease)
        for spec in (plan_lists.KERNEL_CACHE_NODES, plan_lists.AGENT_DAEMONSET):
            self.live.add_handler(spec, self.peers.foreign.handler(spec.resource.kind))
        for spec in plan_lists.RECONCILE_ACCESS:  # RBAC and admission policies: their changes re-probe
            self.live.add_handler(spec, self._access_changed)
        self.lost = threading.Event()
        self.fenced = ""  # the API server's fence refused a write: what it said
        self.emitted: dict[tuple[str, str], str] = {}  # capture -> signature of its last event

    # ---- change tracking --------------------------------------------------------------------------
    def changed(self, what: str) -> None:
        if what == RECONNECTED:
            self.reconnected.set()
        self.work.notify()

    def _wait_for_work(self, next_resync: float) -> bool:
        """Block until a burst of changes has settled (True) or the resync is due (False)."""
        return self.work.wait(lambda: self.stop.is_set() or self.lost.is_set(), next_resync, beat=self.beat)

    def _back_off(self, delay: float) -> None:
        """Wait before the next pass; an informer that reconnects (the server is back) ends the wait early."""
        self.reconnected.clear()
        deadline = time.monotonic() + delay
        while not self.stop.is_set() and not self.reconnected.is_set() and time.monotonic() < deadline:
            self.beat()
            self.reconnected.wait(min(1.0, max(0.0, deadline - time.monotonic())))

    # ---- health -----------------------------------------------------------------------------------
    def _stopped(self) -> list[str]:
        return [inf.spec.plural for inf in self.live.informers if not inf.is_alive()]

    def _reasons(self) -> list[str]:
        """Why not ready: it must see the cluster (every informer synced and able to list/watch now) and lead, or
        stand by as a candidate that can read the Lease."""
        reasons = []
        for inf in self.informers:
            if not inf.synced.is_set():
                reasons.append(
                    f"{inf.spec.plural}: "
                    + (self.errors.current(_reader(inf.spec)) or "not synced yet (listing or re-watching)")
                )
            for why in inf.poison_lines():  # the store lacks it: no pass plans from it
                reasons.append(f"{inf.spec.plural}: skipped, cannot be decoded: {why}")
        if self.elector is not None:
            if self.elector.state == "leader" and not self.elector.tenure.holds():
                reasons.append(f"{self.elector.reader}: not renewed within the renew deadline")
            elif self.elector.state == "candidate" and not self.elector.standing_by():
                reasons.append(self.errors.current(self.elector.reader) or f"{self.elector.reader}: not read yet")
            elif self.elector.state not in ("leader", "candidate"):
                reasons.append(f"{self.elector.reader}: {self.elector.state}")
        if self.pass_errors.current("reconcile pass"):
            reasons.append(self.pass_errors.current("reconcile pass"))
        reasons.extend(self.write_errors.failing())
        reasons.extend(self.refusals.reasons())
        if self.lost.is_set():
            reasons.append("lost leadership; stopping")
        return reasons

    # ---- one pass ---------------------------------------------------------------------------------
    def run_pass(self, snapshot: snap.ClusterSnapshot) -> tuple[Plan, Result]:
        p = plan(snapshot)
        for note in p.notes:
            self.log(note)
        self.peers.check()  # and again before each write
        events, signatures = [], {}
        for act in p.events:
            key = (act.namespace or "", act.name)
            sig = selection_signature(act, snapshot)
            if self.emitted.get(key) != sig:
                events.append(replace(act, signature=sig))
                signatures[key] = sig
        todo = pin_preconditions(p.writes, snapshot) + events
        result = self.executor.apply(todo, progress=self.beat) if todo else Result()
        for act in result.applied:  # an event not sent (the pass stopped) is sent by a later pass
            if act.verb == a.EVENT:
                self.emitted[(act.namespace or "", act.name)] = signatures[(act.namespace or "", act.name)]
        self._update_stores(result)
        with self.metrics.lock:
            self.metrics.reconciles += 1
            self.metrics.actions.update(result.done)
            self.metrics.overtaken.update(result.overtaken)
            self.metrics.errors += len(result.errors) + result.refused
        for err in result.errors:
            self.log(f"error: {err}")
        if result.admitted_again and result.held:
            self.changed("admitted")  # what was held back behind a refusal that ended can go now
        if result.done:
            self.write_errors.ok(FENCE_READER)
            self.log("applied " + ", ".join(f"{n} {verb} {kind}" for (verb, kind), n in sorted(result.done.items())))
        if result.overtaken:
            self.log(
                "already done or changed since planned (409/404, not retried): "
                + ", ".join(
                    f"{n} {verb} {kind} ({reason})" for (verb, kind, reason), n in sorted(result.overtaken.items())
                )
            )
        return p, result

    def _update_stores(self, result: Result) -> None:
        """Our own writes, in the stores now: the next pass does not plan them again while the watch echo is
        on its way (or lost in a restart)."""
        by_resource = {inf.spec.plural: inf for inf in self.informers}
        for resource, raw in result.written:
            if resource in by_resource:
                by_resource[resource].written(raw)
        for resource, namespace, name, uid in result.removed:
            if resource in by_resource:
                by_resource[resource].removed(namespace, name, uid)

    # ---- leadership -------------------------------------------------------------------------------
    def lead(self) -> bool:
        """With --leader-elect: wait for the Lease (False if stopped first), then keep it."""
        if self.elector is None:
            return True
        self.log(f"waiting for lease {self.opts.lease_namespace}/{self.opts.lease_name} as {self.elector.identity}")
        if not self.elector.acquire(self.stop, beat=self.beat):
            return False
        self.metrics.leader = 1
        self.log("became leader")
        self.elector.keep(self.stop, self.lost)
        return True

    def _fenced(self, exc: Fenced) -> None:
        """The API server's fence refused a write. Right after taking the Lease its admission cache may not
        have seen the new holder yet: if the Lease names us, wait and try again; otherwise we lost it."""
        if self._fence_misconfigured(str(exc)):
            return
        if self.elector is not None and self.elector.confirm_holder():
            # said once, then with backoff, and on /readyz: if it lasts, the API server's copy of the Lease is
            # stale (kubernetes/kubernetes#133827: restart kube-apiserver)
            self.write_errors.failed(
                FENCE_READER,
                "write",
                "as the Lease's holder",
                Forbidden(f"{exc}; the Lease names this replica: the API server has not seen it yet, retrying", 403),
            )
            self.changed("retry")
            self._back_off(0.5)
            return
        self.fenced = str(exc)
        if self.elector is not None:
            self.elector.tenure.revoke()
        self.lost.set()

    def _fence_misconfigured(self, refusal: str) -> bool:
        """The fence refuses this replica although the Lease the API server has names it (or its requests carry
        no pod at all): the identity it was given does not start with its pod's name. Said once, clearly;
        the controller stands back and probes again as for any refusal."""
        identity = self.elector.identity if self.elector is not None else self.identity
        match = FENCE_POD.search(refusal)
        if "carries no pod identity" in refusal:
            how = (
                "its requests carry no pod identity: the fence admits only a pod-bound ServiceAccount token (the "
                "token a pod of the controller's ServiceAccount gets), not --as impersonation or a long-lived "
                "token; run it as deploy/deployment.yaml does"
            )
        elif match and match.group(2) == identity and not identity.startswith(match.group(1) + "_"):
            how = (
                f"its requests come from pod {match.group(1)}, so the fence expects the Lease holder to start "
                f"with {match.group(1)}_, but this replica's identity is {identity}: set POD_NAME to the pod's name "
                "(deploy/deployment.yaml sets it from the downward API: env POD_NAME, fieldRef metadata.name)"
            )
        else:
            return False
        self.refusals.refused(
            EVERY_WRITE, FENCE, f"the API server's fence (deploy/fence.yaml) refuses every write of this replica: {how}"
        )
        return True

    def _lost_message(self) -> str:
        if self.fenced:
            return f"lost leadership: {self.fenced}; stopping"
        if self.elector is not None and self.elector.vanished:
            return f"lost leadership: lease {self.opts.lease_namespace}/{self.opts.lease_name} was deleted; stopping"
        holder = self.elector.holder if self.elector else ""
        if holder and self.elector is not None and holder != self.elector.identity:
            return (
                f"lost leadership: lease {self.opts.lease_namespace}/{self.opts.lease_name} is held by {holder}; "
                "stopping"
            )
        return "lost leadership: the lease was not renewed within the renew deadline; stopping"

    # ---- modes ------------------------------------------------------------------------------------
    def run_once(self, report: Callable[[list[a.Action]], None] | None = None) -> int:
        if not self.lead():
            return EXIT_OK
        snapshot = collect_for_reconcile(self.client)
        require(snapshot, "reconcile", plan_lists.RECONCILE_PLAN)  # no plan from lists not read
        self.peers.load(snapshot)
        try:
            p, result = self.run_pass(snapshot)
        except (ControllerActive, write_guard.WriteRefused) as exc:
            self.log(str(exc))
            return EXIT_INCOMPLETE
        if report:
            report(p.writes + p.events)
        return EXIT_INCOMPLETE if result.errors else EXIT_OK

    def _access_changed(self, type_: str, _old: Any, _new: Any) -> None:
        if type_ != LISTED and self.refusals.access_changed():
            self.log("RBAC or an admission policy changed: probing the refused writes now")
            self.changed("access")

    def _current(self) -> bool:
        """Every store of the plan known to be current and complete (synced, no object it could not decode)."""
        return self.live.current(plan_lists.RECONCILE)

    def run_forever(self) -> int:
        self.live.start()
        if not self.lead():
            return EXIT_OK
        next_resync = time.monotonic() + self.opts.resync_period
        warned_active = False
        while not self.stop.is_set():
            self.beat()
            if self.lost.is_set():
                self.log(self._lost_message())
                return EXIT_INCOMPLETE
            if not self._current():
                self.stop.wait(0.1)  # a store known to be stale or incomplete is never planned from
                continue
            probe_at = self.refusals.next_due()
            triggered = self._wait_for_work(min(next_resync, probe_at) if probe_at is not None else next_resync)
            if self.stop.is_set() or self.lost.is_set():
                continue
            if not self._current():
                self.changed("stale")  # run it once they are current again
                continue
            if not triggered and time.monotonic() >= next_resync:
                next_resync = time.monotonic() + self.opts.resync_period
            snapshot = self.live.snapshot()  # the membership carried over unless nodes or groups changed
            try:
                self.refusals.unanswered()  # a probe the last pass handed out and never sent is due again
                self.run_pass(snapshot)
                warned_active = False
                self.pass_errors.ok("reconcile pass")
                self._pass_delays = backoff_delays(1.0)
            except ControllerActive as exc:
                if not warned_active:
                    self.log(str(exc))
                    warned_active = True
            except LostLeadership:
                self.lost.set()
            except Fenced as exc:
                self._fenced(exc)
            except (Unreachable, ApiError) as exc:
                if self.lost.is_set():
                    continue
                with self.metrics.lock:
                    self.metrics.errors += 1
                self.pass_errors.failed("reconcile pass", "apply", "the plan", exc)
                self.changed("retry")
                self._back_off(next(self._pass_delays))
        return EXIT_OK


def _reader(spec: ListSpec) -> str:
    return f"list/watch {spec.describe()}"


def run_loop(client: Client, opts: LoopOptions, report: Callable[[list[a.Action]], None] | None = None) -> int:
    with memory.long_lived():
        return _run_loop(client, opts, report)


def _run_loop(client: Client, opts: LoopOptions, report: Callable[[list[a.Action]], None] | None) -> int:
    ctrl = Controller(client, opts)
    ctrl.process.install_signals()
    if opts.health_port:
        about = "passes, actions, refused writes, read errors, leadership"
        probes.serve(
            "0.0.0.0",
            opts.health_port,
            "kubectl kcache reconcile",
            probes.endpoints(ctrl.process, ctrl.metrics.render, about),
        )
    try:
        code = ctrl.run_once(report) if opts.once else ctrl.run_forever()
    finally:
        ctrl.stop.set()
        if ctrl.elector is not None:
            ctrl.elector.release()
            ctrl.metrics.leader = 0
    return ctrl.process.exit_code(code)
