"""The reconcile controller's metrics: passes, errors, actions applied and overtaken, re-lists, read errors,
objects that cannot be decoded, leadership and readiness, as Prometheus text."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable


class Metrics:
    """The controller's counters and gauges, rendered as Prometheus text on /metrics."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reconciles = 0
        self.errors = 0
        self.actions: Counter = Counter()
        self.overtaken: Counter = Counter()  # (verb, kind, reason)
        self.relists: Callable[[], dict[str, int]] = dict  # resource -> lists after the first
        self.read_errors: Counter = Counter()  # (resource, reason); shared with ReadErrors
        self.decode_failures: Callable[[], dict[str, tuple[int, int]]] = dict  # resource -> (total, now)
        self.leader = 0
        self.ready: Callable[[], bool] = lambda: False

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
            lines += ["# HELP kcache_actions_overtaken_total Writes answered 409 or 404: already done by someone "
                      "else (already-exists, already-gone) or the object changed since the plan (changed).",
                      "# TYPE kcache_actions_overtaken_total counter"]
            for (verb, kind, reason), n in sorted(self.overtaken.items()):
                lines.append(f'kcache_actions_overtaken_total{{verb="{verb}",kind="{kind}",reason="{reason}"}} {n}')
            lines += ["# HELP kcache_relists_total Lists restarted (410 Gone, or after a failed list), by resource.",
                      "# TYPE kcache_relists_total counter"]
            for res, n in sorted(self.relists().items()):
                lines.append(f'kcache_relists_total{{resource="{res}"}} {n}')
            lines += ["# HELP kcache_read_errors_total Failed lists, watches and Lease reads, by resource and reason.",
                      "# TYPE kcache_read_errors_total counter"]
            for (res, reason), n in sorted(self.read_errors.items()):
                lines.append(f'kcache_read_errors_total{{resource="{res}",reason="{reason}"}} {n}')
            lines += ["# HELP kcache_decode_failures_total Objects or events skipped because they could not be "
                      "decoded, by resource.", "# TYPE kcache_decode_failures_total counter"]
            undecodable = self.decode_failures()
            for res, (total, _) in sorted(undecodable.items()):
                lines.append(f'kcache_decode_failures_total{{resource="{res}"}} {total}')
            lines += ["# HELP kcache_undecodable_objects Objects that cannot be decoded now (skipped), by resource.",
                      "# TYPE kcache_undecodable_objects gauge"]
            for res, (_, now) in sorted(undecodable.items()):
                lines.append(f'kcache_undecodable_objects{{resource="{res}"}} {now}')
            lines += ["# HELP kcache_leader 1 while this instance holds the lease.", "# TYPE kcache_leader gauge",
                      f"kcache_leader {self.leader}"]
        lines += ["# HELP kcache_ready 1 while /readyz answers 200.", "# TYPE kcache_ready gauge",
                  f"kcache_ready {int(self.ready())}"]
        return "\n".join(lines) + "\n"
