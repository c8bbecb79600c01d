"""Who else may be writing what reconcile owns, asked of the API server at the start of every pass and
again while a batch runs, so that reconcile stops within one batch when another writer appears:

- KServe's controller: a Deployment with ready replicas in any namespace, named or labelled as KServe
  installs it or running its image; its Lease (controller-runtime's leader election), held and renewed;
  or its writes, as they happen, to KernelCacheNodes under another field manager (`foreign_writes.py`)
  within the last FOREIGN_WINDOW seconds (`kernelcache/controller.py` says what identifies it);
- another kubectl-kcache controller: a Lease labelled as ours under another namespace or name, created
  before ours, whose record has changed within its lease duration (by our own clock, as a candidate judges
  a Lease), so two deployments with different Lease names do not both write.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Callable
from typing import Any

from ..errors import IncompleteError
from ..kernelcache import constants as c
from ..kernelcache import controller as kserve
from ..kube import resources as r
from ..kube.client import Client
from .foreign_writes import ForeignWrites

MANAGED_BY = ("app.kubernetes.io/managed-by", "kubectl-kcache")  # on the Leases our controllers hold
RECHECK_EVERY = 1.0  # seconds between checks while a batch runs
CHECK_TIMEOUT = 2.0  # seconds a check may take
FOREIGN_WINDOW = 300.0  # seconds another controller's last write to what we own keeps us standing back


class ControllerActive(IncompleteError):
    """Another controller writes what reconcile owns: not writing."""


class Peers:
    def __init__(
        self,
        client: Client,
        own_lease: tuple[str, str] | None,
        force: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ):
        # a short budget: a check runs inside a batch, which must stay able to stop at once when the Lease
        # is lost (a partitioned server answers nothing; a check that cannot be made stops the batch)
        self.watch_client = client
        self.client = copy.copy(client)
        self.client.timeout = min(getattr(client, "timeout", None) or CHECK_TIMEOUT, CHECK_TIMEOUT)
        self.own_lease = own_lease
        self.force = force
        self.clock = clock
        self._seen: dict[tuple[str, str], tuple[str, float]] = {}  # lease -> (record, first seen at)
        self._checked_at = -1e18
        self.foreign: list[ForeignWrites] = []

    def check(self) -> None:
        """Raise ControllerActive when another writer is active now."""
        self._checked_at = self.clock()
        if not self.force:
            self._watch_foreign_writes()
            self._kserve_controller()
            self._kserve_lease()
        self._other_plugin_controller()

    def recheck(self) -> None:
        """While a batch runs: at most once a second."""
        if self.clock() - self._checked_at >= RECHECK_EVERY:
            self.check()

    def _watch_foreign_writes(self) -> None:
        if not self.foreign:
            stop = threading.Event()
            self.foreign = [
                ForeignWrites(self.watch_client, stop, r.KERNEL_CACHE_NODES, clock=self.clock),
                ForeignWrites(
                    self.watch_client,
                    stop,
                    r.DAEMONSETS,
                    c.KSERVE_NAMESPACE,
                    field_selector=f"metadata.name={c.AGENT_DAEMONSET}",
                    clock=self.clock,
                ),
            ]
            for watcher in self.foreign:
                watcher.start()
        seen = [x for x in (w.last() for w in self.foreign) if x is not None]
        last = max(seen, key=lambda x: x[2]) if seen else None
        if last is not None and self.clock() - last[2] < FOREIGN_WINDOW:
            manager, what, at = last
            raise ControllerActive(
                f"another controller writes what reconcile owns (field manager {manager!r} wrote {what} "
                f"{self.clock() - at:.0f}s ago): not writing. Stop it first (KServe's controller?), or pass "
                "--force to write anyway."
            )

    def _kserve_controller(self) -> None:
        for dep in self.client.list_all(r.DEPLOYMENTS, None).items:
            md, spec = dep.get("metadata") or {}, dep.get("spec") or {}
            containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") or []
            why = kserve.why_controller(
                str(md.get("name") or ""),
                md.get("labels") or {},
                (str(x.get("image") or "") for x in containers if isinstance(x, dict)),
            )
            if why and int((dep.get("status") or {}).get("readyReplicas") or 0) > 0:
                raise ControllerActive(
                    f"KServe's controller is active (Deployment {md.get('namespace')}/{md.get('name')} has ready "
                    f"replicas; {why}): not writing. Stop it first, or pass --force to write anyway."
                )

    def _kserve_lease(self) -> None:
        """KServe's controller with --leader-elect holds its Lease wherever it runs, even where its Deployment
        is not to be seen (another cluster's kubeconfig, a process on a host)."""
        for name in kserve.LEASES:
            for lease in self.client.list_all(r.LEASES, None, field_selector=f"metadata.name={name}").items:
                md, spec = lease.get("metadata") or {}, lease.get("spec") or {}
                ref = (str(md.get("namespace") or ""), str(md.get("name") or ""))
                if spec.get("holderIdentity") and self._held_now(ref, spec):
                    raise ControllerActive(
                        f"KServe's controller is active (it holds Lease {ref[0]}/{ref[1]}: {spec['holderIdentity']})"
                        ": not writing. Stop it first, or pass --force to write anyway."
                    )

    def _held_now(self, ref: tuple[str, str], spec: dict[str, Any]) -> bool:
        """A Lease is held while its record changes within its duration, by our own clock (a candidate's
        rule: no timestamps of another machine are compared); one first seen counts as just renewed."""
        now = self.clock()
        record = json.dumps(
            {k: spec.get(k) for k in ("holderIdentity", "renewTime", "leaseTransitions")}, sort_keys=True, default=str
        )
        seen = self._seen.get(ref)
        if seen is None or seen[0] != record:
            self._seen[ref] = seen = (record, now)
        return now - seen[1] < float(spec.get("leaseDurationSeconds") or 15)

    def _other_plugin_controller(self) -> None:
        """Of two kubectl-kcache controllers with different Leases, the one whose Lease the API server created
        first writes (creation times are the server's, so no clocks are compared); the other stands back while
        the first one's Lease is held and renewed."""
        key, value = MANAGED_BY
        leases = self.client.list_all(r.LEASES, None, label_selector=f"{key}={value}").items

        def ref_of(lease: dict[str, Any]) -> tuple[str, str]:
            md = lease.get("metadata") or {}
            return str(md.get("namespace") or ""), str(md.get("name") or "")

        def age_key(lease: dict[str, Any]) -> tuple[str, str, str, str]:
            # creation times have whole seconds: two Leases of one second are ordered by when they were first
            # acquired (microseconds, the holders' clocks), then by name
            created = str((lease.get("metadata") or {}).get("creationTimestamp") or "~")
            return (created, str((lease.get("spec") or {}).get("acquireTime") or "~"), *ref_of(lease))

        own = next((x for x in leases if ref_of(x) == self.own_lease), None)
        for lease in leases:
            ref, spec = ref_of(lease), lease.get("spec") or {}
            if ref == self.own_lease or not spec.get("holderIdentity"):
                continue
            if own is not None and age_key(own) < age_key(lease):
                continue  # ours is the older Lease: the other controller stands back
            if self._held_now(ref, spec):
                raise ControllerActive(
                    f"another kubectl-kcache controller holds Lease {ref[0]}/{ref[1]} ({spec['holderIdentity']}): "
                    "not writing. Run one controller (the same --leader-elect-name and namespace for every "
                    "replica)."
                )


def label_lease(body: dict[str, Any]) -> dict[str, Any]:
    """Our Lease carries MANAGED_BY, so that other kubectl-kcache controllers see it."""
    labels = body.setdefault("metadata", {}).setdefault("labels", {}) or {}
    labels[MANAGED_BY[0]] = MANAGED_BY[1]
    body["metadata"]["labels"] = labels
    return body
