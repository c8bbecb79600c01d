"""The reconcile controller's metrics: passes, errors, actions applied and overtaken, re-lists, read errors,
objects that cannot be decoded, leadership and readiness, as Prometheus text."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

from ..runtime import metrics as prometheus
from ..runtime.metrics import Family


class Metrics:
    """The controller's counters and gauges, rendered as Prometheus text on /metrics."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reconciles = 0
        self.errors = 0
        self.actions: Counter[tuple[str, str]] = Counter()
        self.overtaken: Counter[tuple[str, str, str]] = Counter()  # (verb, kind, reason)
        self.relists: Callable[[], dict[str, int]] = dict  # resource -> lists after the first
        self.read_errors: Counter[tuple[str, str]] = Counter()  # (resource, reason); shared with ReadErrors
        self.decode_failures: Callable[[], dict[str, tuple[int, int]]] = dict  # resource -> (total, now)
        self.leader = 0
        self.ready: Callable[[], bool] = lambda: False
        self.refused: Any = None  # refusals.Refusals: the writes the API server refuses now

    def render(self) -> str:
        def family(name: str, kind: str, help: str) -> Family:
            out = Family(f"kcache_{name}", kind, help)
            families.append(out)
            return out

        families: list[Family] = []
        with self.lock:
            family("reconcile_total", "counter", "Reconcile passes.").add(self.reconciles)
            family("reconcile_errors_total", "counter", "Failed passes or actions.").add(self.errors)
            family("actions_total", "counter", "Actions applied, by verb and kind.").add_counts(
                self.actions, "verb", "kind"
            )
            family(
                "actions_overtaken_total",
                "counter",
                "Writes answered 409 or 404: already done by "
                "someone else (already-exists, already-gone) or the object changed since the plan "
                "(changed).",
            ).add_counts(self.overtaken, "verb", "kind", "reason")
            family(
                "relists_total", "counter", "Lists restarted (410 Gone, or after a failed list), by resource."
            ).add_counts(self.relists(), "resource")
            family(
                "read_errors_total", "counter", "Failed lists, watches and Lease reads, by resource and reason."
            ).add_counts(self.read_errors, "resource", "reason")
            undecodable = self.decode_failures()
            family(
                "decode_failures_total",
                "counter",
                "Objects or events skipped because they could not be decoded, by resource.",
            ).add_counts({res: total for res, (total, _) in undecodable.items()}, "resource")
            family(
                "undecodable_objects", "gauge", "Objects that cannot be decoded now (skipped), by resource."
            ).add_counts({res: count for res, (_, count) in undecodable.items()}, "resource")
            family("leader", "gauge", "1 while this instance holds the lease.").add(self.leader)
            if self.refused is not None:
                refused = family(
                    "reconcile_refused",
                    "gauge",
                    "1 while writes of this verb on this resource (or some objects of it) are refused by the API "
                    "server and held back (reason rbac, admission or fence; verb and resource * for every write).",
                )
                marked = {(m.key.verb, m.key.resource, m.reason) for m in self.refused.current()}
                for verb, resource, reason in sorted(self.refused.series | marked):
                    refused.add(int((verb, resource, reason) in marked), verb=verb, resource=resource, reason=reason)
        family("ready", "gauge", "1 while /readyz answers 200.").add(int(self.ready()))
        return prometheus.render(families)
