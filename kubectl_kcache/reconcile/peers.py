"""Who else may be writing what reconcile owns, judged from what reconcile's informers keep (the read plan's
RECONCILE_PEERS lists and the watches of what it owns), so that asking costs no request and is asked before
every write:

- KServe's controller: a Deployment with ready replicas in any namespace, named or labelled as KServe
  installs it or running its image; its Lease (controller-runtime's leader election), held and renewed;
  or its writes, as they happen, to KernelCacheNodes or the agent DaemonSet under another field manager
  (`foreign_writes.py`) within the last FOREIGN_WINDOW seconds (`kernelcache/controller.py` says what
  identifies it);
- another kubectl-kcache controller: a Lease labelled as ours under another namespace or name, created
  before ours, whose record has changed within its lease duration (by our own clock, as a candidate judges
  a Lease), so two deployments with different Lease names do not both write.

The informers call the handlers (`on_deployment`, `on_lease`, `foreign.handler`); `--once` loads the lists it
made (`load`). `check()` raises ControllerActive.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from ..errors import IncompleteError
from ..kernelcache import controller as kserve
from ..objects import Deployment, Lease
from ..snapshot.model import ClusterSnapshot
from .foreign_writes import ForeignWrites

MANAGED_BY = kserve.PLUGIN_LEASE_LABEL  # on the Leases our controllers hold
FOREIGN_WINDOW = 300.0  # seconds another controller's last write to what we own keeps us standing back

Ref = tuple[str, str]  # (namespace, name)


class ControllerActive(IncompleteError):
    """Another controller writes what reconcile owns: not writing."""


def _ref(obj: Any) -> Ref:
    return obj.metadata.namespace or "", obj.metadata.name


def kserve_deployment(dep: Deployment) -> str:
    """Why a Deployment is KServe's controller, active now ("" when it is not both)."""
    why = kserve.why_controller(dep.name, dict(dep.meta.labels), dep.images)
    return why if why and dep.ready_replicas > 0 else ""


class Peers:
    def __init__(
        self,
        own_lease: Ref | None,
        force: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.own_lease = own_lease
        self.force = force
        self.clock = clock
        self.foreign = ForeignWrites(clock)
        self._lock = threading.Lock()
        self._active: dict[Ref, str] = {}  # KServe's controller Deployments with ready replicas -> why
        self._leases: dict[Ref, tuple[Lease, float]] = {}  # KServe's and ours -> (Lease, its record first seen at)

    # ---- what the informers see ---------------------------------------------------------------------
    def on_deployment(self, type_: str, old: Any, new: Any) -> None:
        ref = _ref(new if new is not None else old)
        why = kserve_deployment(new) if new is not None and type_ != "DELETED" else ""
        with self._lock:
            if why:
                self._active[ref] = why
            else:
                self._active.pop(ref, None)

    def on_lease(self, type_: str, old: Any, new: Any) -> None:
        ref = _ref(new if new is not None else old)
        now = self.clock()
        with self._lock:
            if new is None or type_ == "DELETED":
                self._leases.pop(ref, None)
                return
            seen = self._leases.get(ref)
            self._leases[ref] = (new, seen[1] if seen is not None and seen[0].record == new.record else now)

    def load(self, snapshot: ClusterSnapshot) -> None:
        """--once: the Deployments and Leases its one list of each brought."""
        for dep in snapshot.deployments:
            self.on_deployment("LISTED", None, dep)
        for lease in snapshot.leases:
            self.on_lease("LISTED", None, lease)

    # ---- the question -------------------------------------------------------------------------------
    def check(self) -> None:
        """Raise ControllerActive when another writer is active now."""
        with self._lock:
            active = sorted(self._active.items())
            leases = sorted(self._leases.items())
        if not self.force:
            self._foreign_writes()
            for (ns, name), why in active[:1]:
                raise ControllerActive(
                    f"KServe's controller is active (Deployment {ns}/{name} has ready replicas; {why}): not writing. "
                    "Stop it first, or pass --force to write anyway."
                )
            self._kserve_lease(leases)
        self._other_plugin_controller(leases)

    def _foreign_writes(self) -> None:
        last = self.foreign.last()
        if last is not None and self.clock() - last[2] < FOREIGN_WINDOW:
            manager, what, at = last
            raise ControllerActive(
                f"another controller writes what reconcile owns (field manager {manager!r} wrote {what} "
                f"{self.clock() - at:.0f}s ago): not writing. Stop it first (KServe's controller?), or pass "
                "--force to write anyway."
            )

    def _held_now(self, lease: Lease, seen_at: float) -> bool:
        """A Lease is held while its record changes within its duration, by our own clock (a candidate's
        rule: no timestamps of another machine are compared); one first seen counts as just renewed."""
        return bool(lease.holder) and self.clock() - seen_at < lease.duration

    def _kserve_lease(self, leases: list[tuple[Ref, tuple[Lease, float]]]) -> None:
        """KServe's controller with --leader-elect holds its Lease wherever it runs, even where its Deployment
        is not to be seen (another cluster's kubeconfig, a process on a host)."""
        for (ns, name), (lease, seen_at) in leases:
            if name in kserve.LEASES and self._held_now(lease, seen_at):
                raise ControllerActive(
                    f"KServe's controller is active (it holds Lease {ns}/{name}: {lease.holder}): not writing. "
                    "Stop it first, or pass --force to write anyway."
                )

    def _other_plugin_controller(self, leases: list[tuple[Ref, tuple[Lease, float]]]) -> None:
        """Of two kubectl-kcache controllers with different Leases, the one whose Lease the API server created
        first writes (creation times are the server's, so no clocks are compared); the other stands back while
        the first one's Lease is held and renewed."""
        key, value = MANAGED_BY
        ours = {ref: x for ref, x in leases if x[0].meta.labels.get(key) == value}
        own = ours.get(self.own_lease) if self.own_lease else None
        for ref, (lease, seen_at) in ours.items():
            if ref == self.own_lease:
                continue
            if own is not None and _age_key(own[0]) < _age_key(lease):
                continue  # ours is the older Lease: the other controller stands back
            if self._held_now(lease, seen_at):
                raise ControllerActive(
                    f"another kubectl-kcache controller holds Lease {ref[0]}/{ref[1]} ({lease.holder}): "
                    "not writing. Run one controller (the same --leader-elect-name and namespace for every "
                    "replica)."
                )


def _age_key(lease: Lease) -> tuple[str, str, str, str]:
    # creation times have whole seconds: two Leases of one second are ordered by when they were first
    # acquired (microseconds, the holders' clocks), then by name
    return (lease.meta.created or "~", lease.acquired or "~", *_ref(lease))


def label_lease(body: dict[str, Any]) -> dict[str, Any]:
    """Our Lease carries MANAGED_BY, so that other kubectl-kcache controllers see it."""
    labels = body.setdefault("metadata", {}).setdefault("labels", {}) or {}
    labels[MANAGED_BY[0]] = MANAGED_BY[1]
    body["metadata"]["labels"] = labels
    return body
