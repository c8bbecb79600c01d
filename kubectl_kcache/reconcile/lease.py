"""Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it.

A candidate takes the lease when it is free or expired (renewTime + leaseDurationSeconds in the past),
renews it every retry period, and counts itself leader only while its last successful renewal is
younger than the renew deadline (shorter than the lease duration). Writes are preceded by `ensure()`,
which also re-reads the lease, so a leader that was paused (SIGSTOP) past its lease and resumed makes no
write once another holder has taken over. Times are RFC 3339 with microseconds (metav1.MicroTime).
"""

from __future__ import annotations

import datetime as dt
import os
import socket
import threading
import time
import uuid
from typing import Any

from ..errors import Conflict, IncompleteError, NotFound
from ..kube import resources as r
from ..kube.client import Client
from .executor import micro_time


class LostLeadership(IncompleteError):
    """The lease is held by another instance, or could not be renewed in time."""


def parse_micro_time(text: str | None) -> dt.datetime | None:
    if not text:
        return None
    text = text.replace("Z", "+00:00")
    try:
        return dt.datetime.fromisoformat(text)
    except ValueError:
        return None


class LeaderElector:
    def __init__(self, client: Client, namespace: str, name: str, lease_duration: float = 15.0,
                 renew_deadline: float = 10.0, retry_period: float = 2.0, identity: str | None = None):
        if renew_deadline >= lease_duration:
            raise ValueError("renew deadline must be shorter than the lease duration")
        self.client = client
        self.namespace = namespace
        self.name = name
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.identity = identity or f"{socket.gethostname()}_{os.getpid()}_{uuid.uuid4().hex[:8]}"
        self.last_renew = 0.0  # monotonic time of the last successful acquire/renew
        self._lock = threading.Lock()

    # ---- one attempt ----------------------------------------------------------------------------
    def _try_acquire_or_renew(self) -> bool:
        now = dt.datetime.now(dt.timezone.utc)
        spec_new: dict[str, Any] = {"holderIdentity": self.identity,
                                    "leaseDurationSeconds": int(round(self.lease_duration)),
                                    "acquireTime": micro_time(now), "renewTime": micro_time(now),
                                    "leaseTransitions": 0}
        try:
            lease = self.client.get(r.LEASES, self.name, self.namespace)
        except NotFound:
            body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": self.name, "namespace": self.namespace}, "spec": spec_new}
            try:
                self.client.create(r.LEASES, body, self.namespace)
            except Conflict:
                return False
            self.last_renew = time.monotonic()
            return True
        spec = lease.get("spec") or {}
        holder = spec.get("holderIdentity") or ""
        renewed = parse_micro_time(spec.get("renewTime"))
        duration = float(spec.get("leaseDurationSeconds") or self.lease_duration)
        expired = renewed is None or (now - renewed).total_seconds() > duration
        if holder and holder != self.identity and not expired:
            return False
        if holder == self.identity:
            spec["renewTime"] = micro_time(now)
            spec["leaseDurationSeconds"] = int(round(self.lease_duration))
        else:
            transitions = int(spec.get("leaseTransitions") or 0) + (1 if holder else 0)
            spec = dict(spec_new, leaseTransitions=transitions)
        lease["spec"] = spec
        try:
            self.client.replace(r.LEASES, self.name, lease, self.namespace)
        except Conflict:
            return False
        self.last_renew = time.monotonic()
        return True

    # ---- the API the loop uses ------------------------------------------------------------------
    def acquire(self, stop: threading.Event) -> bool:
        """Block until leader (True) or stopped (False)."""
        while not stop.is_set():
            with self._lock:
                try:
                    if self._try_acquire_or_renew():
                        return True
                except IncompleteError:
                    pass
            stop.wait(self.retry_period)
        return False

    def renew_forever(self, stop: threading.Event, lost: threading.Event) -> None:
        """Renew every retry period; set `lost` when the renew deadline passes without success."""
        while not stop.is_set() and not lost.is_set():
            stop.wait(self.retry_period)
            if stop.is_set():
                return
            with self._lock:
                try:
                    ok = self._try_acquire_or_renew()
                except IncompleteError:
                    ok = False
            if not ok and (not self.is_leader() or self._held_by_other()):
                lost.set()

    def _held_by_other(self) -> bool:
        try:
            lease = self.client.get(r.LEASES, self.name, self.namespace)
        except IncompleteError:
            return False
        holder = (lease.get("spec") or {}).get("holderIdentity") or ""
        return bool(holder) and holder != self.identity

    def is_leader(self) -> bool:
        return self.last_renew > 0 and time.monotonic() - self.last_renew < self.renew_deadline

    def ensure(self) -> None:
        """Called before each batch of writes: still within the renew deadline and still the holder."""
        if not self.is_leader():
            raise LostLeadership(f"leader election: lease {self.namespace}/{self.name} not renewed within "
                                 f"{self.renew_deadline:g}s; not writing")
        lease = self.client.get(r.LEASES, self.name, self.namespace)
        holder = (lease.get("spec") or {}).get("holderIdentity") or ""
        if holder != self.identity:
            raise LostLeadership(f"leader election: lease {self.namespace}/{self.name} is held by {holder!r}; "
                                 "not writing")

    def release(self) -> None:
        """Give the lease up so that another instance takes over at once."""
        with self._lock:
            try:
                lease = self.client.get(r.LEASES, self.name, self.namespace)
                spec = lease.get("spec") or {}
                if spec.get("holderIdentity") != self.identity:
                    return
                spec["holderIdentity"] = ""
                spec["leaseDurationSeconds"] = 1
                spec["renewTime"] = micro_time()
                lease["spec"] = spec
                self.client.replace(r.LEASES, self.name, lease, self.namespace)
            except IncompleteError:
                pass
            self.last_renew = 0.0
