"""Leader election on a coordination.k8s.io/v1 Lease, after client-go's leaderelection, plus a proof of
holding the Lease that every write is checked against.

- A candidate takes the Lease when it has no holder, or when its record (holder, renew time, duration,
  transitions) has not changed for leaseDurationSeconds of the candidate's own clock since the candidate
  first saw that record. Timestamps in the record are never compared with the local clock, so clock skew
  between machines does not matter (client-go's rule).
- The holder's proof (`Tenure`) is the monotonic time at which its last successful renewal was sent,
  taken before the request, plus the renew deadline. A candidate saw that renewal after it was sent and
  waits a lease duration from then, so the proof runs out at least (lease duration - renew deadline)
  before anyone else can take the Lease, as long as clocks tick at roughly the same rate.
- Every write checks the proof just before its bytes leave the process (`kube/write_guard.py`); renewals
  are checked too, so once the proof has run out this process sends no write at all, the Lease included.
  A watchdog resets unanswered writes the moment it runs out; the loop then stops (exit 3).

Clock: `write_guard.now`, CLOCK_BOOTTIME on Linux (it keeps counting while the machine is suspended,
unlike CLOCK_MONOTONIC), time.monotonic elsewhere; never the wall clock. Renew times in the record are
RFC 3339 with microseconds (metav1.MicroTime), for people and tools that read the Lease.
"""

from __future__ import annotations

import copy
import json
import math
import os
import socket
import threading
import uuid
from collections.abc import Callable
from typing import Any

from ..errors import Conflict, IncompleteError, NotFound
from ..kube import resources as r
from ..kube import write_guard
from ..kube.client import Client
from ..runtime.read_errors import ReadErrors
from .executor import micro_time
from .peers import label_lease


class LostLeadership(write_guard.WriteRefused):
    """This process can no longer prove it holds the Lease: it must not write."""


def new_identity() -> str:
    """`<pod or host>_<pid>_<random>`. In a pod, POD_NAME (the downward API; deploy/deployment.yaml) comes
    first: the API server's fence (deploy/fence.yaml) admits a write only from the pod whose name starts the
    holder identity, as the pod-bound token of that pod proves."""
    return f"{os.environ.get('POD_NAME') or socket.gethostname()}_{os.getpid()}_{uuid.uuid4().hex[:8]}"


class Tenure:
    """Proof of holding the Lease: valid until (send time of the last successful renewal) + renew deadline.

    It is the write guard itself: calling it checks, and `deadline()` gives the write guard's final check
    (in C, just before the system call) the time on `write_guard.now` after which nothing may be sent."""

    def __init__(self, renew_deadline: float, clock: Callable[[], float] = write_guard.now, what: str = "the lease"):
        self.renew_deadline = renew_deadline
        self.clock = clock
        self.what = what
        self._until = -math.inf
        self._sent = -math.inf
        self._revoked = False
        self._lock = threading.Lock()

    def renewed(self, sent_at: float) -> None:
        """A renewal (or the acquisition) sent at `sent_at` succeeded. After `revoke` nothing counts."""
        with self._lock:
            if not self._revoked and sent_at + self.renew_deadline > self._until:
                self._until = sent_at + self.renew_deadline
                self._sent = sent_at

    def revoke(self) -> None:
        """Give the proof up for good (another holder seen, the deadline passed, or released)."""
        with self._lock:
            self._revoked = True
            self._until = -math.inf

    def remaining(self) -> float:
        return self._until - self.clock()

    def holds(self) -> bool:
        return self.clock() < self._until

    def deadline(self) -> float:
        return self._until

    def __call__(self) -> None:
        self.check()

    def check(self) -> None:
        """The write guard: raises unless the proof holds at this moment."""
        if self.clock() < self._until:
            return
        if self._revoked:
            raise LostLeadership(f"leader election: no longer the holder of {self.what}; not writing")
        raise LostLeadership(
            f"leader election: {self.what} not renewed within the renew deadline "
            f"({self.renew_deadline:g}s since the last renewal was sent"
            + (f", {self.clock() - self._sent:.1f}s ago" if self._sent > -math.inf else "")
            + "); not writing"
        )


class Observation:
    """A candidate's view of the Lease record: what it last saw and when it first saw it (its own clock)."""

    def __init__(self) -> None:
        self.record: str | None = None
        self.seen_at = 0.0

    def see(self, record: dict[str, Any], now: float) -> None:
        key = json.dumps(record, sort_keys=True, default=str)
        if key != self.record:
            self.record = key
            self.seen_at = now

    def expired(self, now: float, duration: float) -> bool:
        """True once the record has stayed the same for `duration` seconds."""
        return self.record is not None and now - self.seen_at >= duration


def _record(spec: dict[str, Any]) -> dict[str, Any]:
    keys = ("holderIdentity", "renewTime", "acquireTime", "leaseDurationSeconds", "leaseTransitions")
    return {k: spec.get(k) for k in keys}


class LeaderElector:
    def __init__(
        self,
        client: Client,
        namespace: str,
        name: str,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        identity: str | None = None,
        clock: Callable[[], float] = write_guard.now,
        errors: ReadErrors | None = None,
    ):
        if renew_deadline >= lease_duration:
            raise ValueError("renew deadline must be shorter than the lease duration")
        self.client = copy.copy(client)  # each attempt gives up after the renew deadline (client-go: the same)
        self.client.timeout = min(client.timeout or renew_deadline, renew_deadline)
        self.namespace = namespace
        self.name = name
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.identity = identity or new_identity()
        self.clock = clock
        self.errors = errors or ReadErrors(lambda _m: None)
        self.tenure = Tenure(renew_deadline, clock, f"lease {namespace}/{name}")
        self.guard = self.tenure  # write_guard.abort_in_flight finds requests by it
        self.writer = self.client.guarded(self.guard)  # renewals and the release: only while the proof holds
        self.observed = Observation()
        self.state = "candidate"  # candidate | leader | lost
        self.holder = ""  # the holder last seen
        self.vanished = False  # the Lease was deleted while this process held it
        self.last_holder_duration = 0.0  # another holder's lease duration, last seen (0: none, or released)
        self._lock = threading.Lock()

    @property
    def reader(self) -> str:
        return f"lease {self.namespace}/{self.name}"

    # ---- one attempt ----------------------------------------------------------------------------
    def _try_acquire_or_renew(self) -> bool:
        sent_at = self.clock()  # before any request: the proof never starts later than the renewal
        now = micro_time()
        spec_new: dict[str, Any] = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": int(math.ceil(self.lease_duration)),
            "acquireTime": now,
            "renewTime": now,
            "leaseTransitions": 0,
        }
        try:
            lease = self.client.get(r.LEASES, self.name, self.namespace)
        except NotFound:
            if self.state == "leader":
                # deleted under us: from now on whoever creates it holds it, and that is not this process
                self.tenure.revoke()
                self.vanished = True
                self.holder = ""
                return False
            if self.last_holder_duration:
                # deleted under a holder that may still be writing: wait a lease duration, as for an expired one
                self.observed.see({"deleted": True}, self.clock())
                if not self.observed.expired(self.clock(), self.last_holder_duration):
                    return False
            body = label_lease(
                {
                    "apiVersion": "coordination.k8s.io/v1",
                    "kind": "Lease",
                    "metadata": {"name": self.name, "namespace": self.namespace},
                    "spec": spec_new,
                }
            )
            try:
                self.client.create(r.LEASES, body, self.namespace)
            except Conflict:
                return False
            self.tenure.renewed(sent_at)
            self.holder = self.identity
            return True
        spec = lease.get("spec") or {}
        self.observed.see(_record(spec), self.clock())
        self.holder = spec.get("holderIdentity") or ""
        if self.holder and self.holder != self.identity:
            self.last_holder_duration = float(spec.get("leaseDurationSeconds") or self.lease_duration)
        elif not self.holder:
            self.last_holder_duration = 0.0  # released: free at once
        if self.holder == self.identity:
            if not self.tenure.holds():
                return False  # the proof ran out: this process stops, whoever holds the record now
            spec["renewTime"] = now
            spec["leaseDurationSeconds"] = int(math.ceil(self.lease_duration))
            writer = self.writer
        else:
            duration = float(spec.get("leaseDurationSeconds") or self.lease_duration)
            if self.holder and not self.observed.expired(self.clock(), duration):
                return False
            transitions = int(spec.get("leaseTransitions") or 0) + (1 if self.holder else 0)
            spec = dict(spec_new, leaseTransitions=transitions)
            writer = self.client  # taking it: there is no proof to check yet
        lease["spec"] = spec
        label_lease(lease)
        try:
            writer.replace(r.LEASES, self.name, lease, self.namespace)  # with the resourceVersion read
        except Conflict:
            return False
        self.tenure.renewed(sent_at)
        self.holder = self.identity
        self.observed.see(_record(spec), self.clock())
        return True

    def _attempt(self) -> bool:
        with self._lock:
            try:
                ok = self._try_acquire_or_renew()
            except write_guard.WriteRefused:
                return False
            except IncompleteError as exc:
                self.errors.failed(self.reader, "get/update", f"leases {self.namespace}/{self.name}", exc)
                return False
        self.errors.ok(self.reader)
        return ok

    # ---- the API the loop uses ------------------------------------------------------------------
    def confirm_holder(self) -> bool:
        """Read the Lease now: does it name this process, with the proof still holding?"""
        try:
            lease = self.client.get(r.LEASES, self.name, self.namespace)
        except IncompleteError:
            return False
        return (lease.get("spec") or {}).get("holderIdentity") == self.identity and self.tenure.holds()

    def standing_by(self) -> bool:
        """A candidate whose last look at the Lease worked."""
        return self.state == "candidate" and not self.errors.current(self.reader)

    def acquire(self, stop: threading.Event, beat: Callable[[], None] = lambda: None) -> bool:
        """Block until leader (True) or stopped (False)."""
        while not stop.is_set():
            beat()
            if self._attempt():
                self.state = "leader"
                return True
            stop.wait(self.retry_period)
        return False

    def keep(self, stop: threading.Event, lost: threading.Event) -> None:
        """Start the renewer and the watchdog; `lost` is set when the proof runs out or another holder is seen."""
        threading.Thread(target=self._renew_forever, args=(stop, lost), daemon=True, name="lease-renew").start()
        threading.Thread(target=self._watch_deadline, args=(stop, lost), daemon=True, name="lease-watch").start()

    def _renew_forever(self, stop: threading.Event, lost: threading.Event) -> None:
        while not stop.is_set() and not lost.is_set():
            stop.wait(self.retry_period)
            if stop.is_set() or lost.is_set():
                return
            if not self._attempt() and (self.vanished or self.holder and self.holder != self.identity):
                self._lose(lost)  # deleted, or someone else holds it: at once, not at the deadline
                return

    def _watch_deadline(self, stop: threading.Event, lost: threading.Event) -> None:
        while not stop.is_set() and not lost.is_set():
            remaining = self.tenure.remaining()
            if remaining <= 0:
                self._lose(lost)
                return
            stop.wait(min(remaining, self.retry_period))

    def _lose(self, lost: threading.Event) -> None:
        self.tenure.revoke()
        self.state = "lost"
        lost.set()
        write_guard.abort_in_flight(self.guard)

    def release(self) -> None:
        """Give the Lease up so that another instance takes over at once (only while the proof holds; not
        while a renewal hangs: the Lease then expires by itself)."""
        if not self._lock.acquire(timeout=self.retry_period):
            self.tenure.revoke()
            return
        try:
            if self.tenure.holds():
                try:
                    lease = self.client.get(r.LEASES, self.name, self.namespace)
                    spec = lease.get("spec") or {}
                    if spec.get("holderIdentity") == self.identity:
                        spec["holderIdentity"] = ""
                        spec["leaseDurationSeconds"] = 1
                        spec["renewTime"] = micro_time()
                        lease["spec"] = spec
                        self.writer.replace(r.LEASES, self.name, lease, self.namespace)
                except IncompleteError:
                    pass
            self.tenure.revoke()
            if self.state == "leader":
                self.state = "released"
        finally:
            self._lock.release()
