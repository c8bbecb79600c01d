"""One evaluation of a snapshot: the doctor's report, the fleet status (entries per KernelCache and group), every
KernelCache's path to Ready (why-not-ready -A: its top cause) and the serving pods' hit rate, each computed by
the module the commands use; the HTML page on demand."""

from __future__ import annotations

import io
import time
from dataclasses import dataclass, field
from functools import cached_property

from msgspec.structs import replace

from ..checks import run_doctor
from ..checks.model import DoctorReport
from ..errors import IncompleteError, InputError
from ..explain.fleet import FleetHitRate, hit_rate
from ..explain.status import FleetStatus, fleet_status
from ..explain.why_not_ready import WhyNotReadyFleet, explain_all
from ..provenance import Provenance
from ..snapshot.model import ClusterSnapshot, provenance


@dataclass(frozen=True)
class Evaluation:
    report: DoctorReport
    status: FleetStatus | str  # a str says why there are no counts (a read they need was not possible)
    fleet: FleetHitRate | str
    readiness: WhyNotReadyFleet | str
    provenance: Provenance
    seconds: float  # how long the evaluation took
    at: float = field(default_factory=time.time)  # when (Unix time)

    @cached_property
    def metrics_text(self) -> str:
        """This evaluation's part of /metrics (`metrics.evaluation_text`), rendered on the first scrape."""
        from .metrics import evaluation_text

        return evaluation_text(self)

    @cached_property
    def html(self) -> str:
        """The page of `doctor -o html` for this evaluation."""
        from ..report import render_doctor

        out = io.StringIO()
        render_doctor(self.report, "html", out, provenance=self.provenance, status=self.status, fleet=self.fleet)
        return out.getvalue()


def evaluate(snapshot: ClusterSnapshot, namespace: str | None = None) -> Evaluation:
    """Everything the monitor serves, over `snapshot` (read with KernelCaches and pods limited to `namespace`)."""
    started = time.perf_counter()
    source = provenance(snapshot.meta, namespace)
    report = run_doctor(snapshot)
    report = replace(report, provenance=source.to_dict())
    status: FleetStatus | str
    fleet: FleetHitRate | str
    try:
        status = fleet_status(snapshot, namespace)
    except (IncompleteError, InputError) as exc:
        status = str(exc)
    try:
        fleet = hit_rate(snapshot, namespace)
    except (IncompleteError, InputError) as exc:
        fleet = str(exc)
    readiness: WhyNotReadyFleet | str
    try:
        readiness = explain_all(snapshot, namespace)
    except (IncompleteError, InputError) as exc:
        readiness = str(exc)
    return Evaluation(report, status, fleet, readiness, source, time.perf_counter() - started)
