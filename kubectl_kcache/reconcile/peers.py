"""Who else may be writing what reconcile owns, asked of the API server at the start of every pass and
again while a batch runs, so that reconcile stops within one batch when another writer appears:

- KServe's controller: a Deployment named as KServe installs it, or labelled as its charts label it
  (`control-plane: kserve-localmodel-controller-manager`), in any namespace, with ready replicas;
- another kubectl-kcache controller: a Lease labelled as ours under another namespace or name, created
  before ours, whose record has changed within its lease duration (by our own clock, as a candidate judges
  a Lease), so two deployments with different Lease names do not both write.
"""

from __future__ import annotations

import contextlib
import copy
import json
import time
from collections.abc import Callable
from typing import Any

from ..errors import IncompleteError
from ..kernelcache import constants as c
from ..kube import resources as r
from ..kube.client import Client

MANAGED_BY = ("app.kubernetes.io/managed-by", "kubectl-kcache")  # on the Leases our controllers hold
RECHECK_EVERY = 1.0  # seconds between checks while a batch runs
CHECK_TIMEOUT = 2.0  # seconds a check may take


class ControllerActive(IncompleteError):
    """Another controller writes what reconcile owns: not writing."""


class Peers:
    def __init__(self, client: Client, own_lease: tuple[str, str] | None, force: bool = False,
                 clock: Callable[[], float] = time.monotonic):
        # a short budget: a check runs inside a batch, which must stay able to stop at once when the Lease
        # is lost (a partitioned server answers nothing; a check that cannot be made stops the batch)
        self.client = copy.copy(client)
        self.client.timeout = min(getattr(client, "timeout", None) or CHECK_TIMEOUT, CHECK_TIMEOUT)
        self.own_lease = own_lease
        self.force = force
        self.clock = clock
        self._seen: dict[tuple[str, str], tuple[str, float]] = {}  # lease -> (record, first seen at)
        self._checked_at = -1e18

    def check(self) -> None:
        """Raise ControllerActive when another writer is active now."""
        self._checked_at = self.clock()
        if not self.force:
            self._kserve_controller()
        self._other_plugin_controller()

    def recheck(self) -> None:
        """While a batch runs: at most once a second."""
        if self.clock() - self._checked_at >= RECHECK_EVERY:
            self.check()

    def _kserve_controller(self) -> None:
        key, value = c.CONTROLLER_LABEL
        found = self.client.list_all(r.DEPLOYMENTS, None, label_selector=f"{key}={value}").items
        # not installed under its usual name (404), or not readable there: the labelled list decides
        with contextlib.suppress(IncompleteError):
            found.append(self.client.get(r.DEPLOYMENTS, c.CONTROLLER_DEPLOYMENT, c.KSERVE_NAMESPACE))
        for dep in found:
            md = dep.get("metadata") or {}
            if int((dep.get("status") or {}).get("readyReplicas") or 0) > 0:
                raise ControllerActive(
                    f"KServe's controller is active (Deployment {md.get('namespace')}/{md.get('name')} has ready "
                    "replicas): not writing. Stop it first, or pass --force to write anyway.")

    def _other_plugin_controller(self) -> None:
        """Of two kubectl-kcache controllers with different Leases, the one whose Lease the API server created
        first writes (creation times are the server's, so no clocks are compared); the other stands back while
        the first one's Lease is held and renewed."""
        key, value = MANAGED_BY
        now = self.clock()
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
            record = json.dumps({k: spec.get(k) for k in ("holderIdentity", "renewTime", "leaseTransitions")},
                                sort_keys=True, default=str)
            seen = self._seen.get(ref)
            if seen is None or seen[0] != record:
                self._seen[ref] = seen = (record, now)
            duration = float(spec.get("leaseDurationSeconds") or 15)
            if now - seen[1] < duration:
                raise ControllerActive(
                    f"another kubectl-kcache controller holds Lease {ref[0]}/{ref[1]} ({spec['holderIdentity']}): "
                    "not writing. Run one controller (the same --leader-elect-name and namespace for every "
                    "replica).")


def label_lease(body: dict[str, Any]) -> dict[str, Any]:
    """Our Lease carries MANAGED_BY, so that other kubectl-kcache controllers see it."""
    labels = body.setdefault("metadata", {}).setdefault("labels", {}) or {}
    labels[MANAGED_BY[0]] = MANAGED_BY[1]
    body["metadata"]["labels"] = labels
    return body
