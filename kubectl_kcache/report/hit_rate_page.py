"""`why-not-cached -A -o html`: the serving pods' hit rate as a page of its own, to share with the teams that
own the InferenceServices. It is the doctor page's header and "Serving pods" section (the same functions, the
same style sheet), without the checklist: one file, nothing fetched, every value escaped."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from .answers import HIT_RATE
from .doctor_common import write_text
from .doctor_html import document, header, serving_pods_section
from .registry import renderer

if TYPE_CHECKING:
    from ..explain.fleet import FleetHitRate
    from ..provenance import Provenance

HEADING = "Kernel Cache hit rate"


@renderer("html", kind=HIT_RATE, order=50, wants=("source", "run"))
def render_hit_rate_page(
    fleet: FleetHitRate,
    out: TextIO,
    *,
    color: bool = False,
    source: Provenance | None = None,
    run: dict[str, str] | None = None,
) -> None:
    write_text(out, page(fleet, source, run))


def page(fleet: FleetHitRate, provenance: Provenance | None, run: dict[str, str] | None = None) -> str:
    """`run` as for the doctor's page (`doctor_html.page`)."""
    cluster = provenance.cluster if provenance else ""
    narrowed = [f"pods with labels {fleet.selector}" if fleet.selector else ""]
    narrowed.append(f"InferenceService {fleet.isvc}" if fleet.isvc else "")
    body = [
        header(HEADING, cluster, provenance, run or {}, scope=", ".join(x for x in narrowed if x)),
        serving_pods_section(fleet),
    ]
    return document(HEADING, cluster, body, "kubectl kcache why-not-cached -A -o html")
