"""Doctor at the wire: each check runs as soon as every list it reads has arrived, while the others (the
node list, on a large cluster) are still being read.

The live reads call `EarlyChecks` after each list arrives (`snapshot.live.collect(on_list=...)`), with the lists done
so far and a way to make the snapshot of only those. A check whose reads (optional ones included, and the
ConfigMap, which every check asks for the feature) are all among them runs on that snapshot: what it reads
there is exactly what it reads in the final one, since nothing else it reads can change. `run_doctor` then
takes these results instead of running the checks again; the checks whose lists were the last to arrive
run there, on the full snapshot. Same checks, same reads, same report; only the wall time changes.
"""

from __future__ import annotations

from collections.abc import Callable

from ..snapshot import plan as readplan
from ..snapshot.kinds import ListSpec
from ..snapshot.model import ClusterSnapshot
from .common import checks_running, facts
from .model import CheckResult, CheckSpec, Finding
from .registry import all_checks


class EarlyChecks:
    """The checks run so far, by id: `run_doctor(early=...)` reuses them."""

    def __init__(self, specs: list[CheckSpec] | None = None):
        self.specs = list(specs if specs is not None else all_checks())
        self.results: dict[str, tuple[CheckResult, list[Finding]]] = {}
        self._namespaces: tuple[str | None, str | None] | None = None  # (scope, job namespace), once known

    def needs(self, spec: CheckSpec) -> set[ListSpec] | None:
        """The lists `spec` reads, placeholders resolved; None while the job namespace is not known."""
        if self._namespaces is None:
            return None
        scope, job_ns = self._namespaces
        out = {readplan.CONFIGMAP}
        for read in spec.reads:
            for lst in read.lists:
                if lst.namespace == readplan.JOB_NAMESPACE and not job_ns:
                    return None  # not made without a job namespace: the check runs with the rest
                out.add(readplan.resolve(lst, scope, job_ns))
        return out

    def __call__(self, done: frozenset[ListSpec], snapshot_of_done: Callable[[], ClusterSnapshot]) -> None:
        if readplan.CONFIGMAP not in done:
            return
        partial: ClusterSnapshot | None = None
        if self._namespaces is None:
            partial = snapshot_of_done()
            self._namespaces = (partial.meta.namespace, facts(partial).config.job_namespace or None)
        ready = []
        for spec in self.specs:
            if spec.id in self.results:
                continue
            needs = self.needs(spec)
            if needs is not None and needs <= done:
                ready.append(spec)
        if not ready:
            return
        from .runner import run_check

        partial = partial if partial is not None else snapshot_of_done()
        with checks_running():
            for spec in ready:
                self.results[spec.id] = run_check(spec, partial)
