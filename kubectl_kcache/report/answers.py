"""The formats of the other answers, registered like the doctor's: why-group and why-not-cached (`tree`, `wide`:
the answer first, then its evidence), the hit rate of many serving pods (why-not-cached without POD, same
choices), reconcile's plan (`table`, `name`), and `json`/`yaml` of each (its document with its `source`).
The tree and table modules are imported when they render, so that `--help` stays fast."""

from __future__ import annotations

from typing import Any, TextIO

from ..documents import json_text, takes_unicode, yaml_text
from .registry import renderer

WHY_GROUP = "why-group"
WHY_NOT_CACHED = "why-not-cached"
HIT_RATE = "hit-rate"  # why-not-cached without POD
PLAN = "plan"
WHY_NOT_READY = "why-not-ready"
WHY_NOT_READY_ALL = "why-not-ready-all"  # without a KernelCache: every one in scope


def _document(report: Any, source: Any) -> Any:
    doc = report.to_dict() if hasattr(report, "to_dict") else report
    if source is None:
        return doc
    from ..provenance import with_source

    return with_source(doc, source)


def _register_documents(kind: str) -> None:
    @renderer("json", kind=kind, order=10, wants=("source",))
    def render_json(report: Any, out: TextIO, *, color: bool = False, source: Any = None) -> None:
        out.write(json_text(_document(report, source)))
        out.write("\n")

    @renderer("yaml", kind=kind, order=11, wants=("source",))
    def render_yaml(report: Any, out: TextIO, *, color: bool = False, source: Any = None) -> None:
        out.write(yaml_text(_document(report, source), unicode=takes_unicode(out)))


for _kind in (WHY_GROUP, WHY_NOT_CACHED, HIT_RATE, PLAN, WHY_NOT_READY, WHY_NOT_READY_ALL):
    _register_documents(_kind)


@renderer("tree", kind=WHY_GROUP, order=0, wants=("width",))
def render_why_group(why: Any, out: TextIO, *, color: bool = False, width: int | None = None) -> None:
    from .why_group_tree import render

    render(why, out, color=color, width=width)


@renderer("wide", kind=WHY_GROUP, order=1, wants=("width",))
def render_why_group_wide(why: Any, out: TextIO, *, color: bool = False, width: int | None = None) -> None:
    from .why_group_tree import render

    render(why, out, color=color, width=width, wide=True)


@renderer("tree", kind=WHY_NOT_CACHED, order=0, wants=("width",))
def render_why_not_cached(why: Any, out: TextIO, *, color: bool = False, width: int | None = None) -> None:
    from .why_not_cached_tree import render

    render(why, out, color=color, width=width)


@renderer("wide", kind=WHY_NOT_CACHED, order=1, wants=("width",))
def render_why_not_cached_wide(why: Any, out: TextIO, *, color: bool = False, width: int | None = None) -> None:
    from .why_not_cached_tree import render

    render(why, out, color=color, width=width, wide=True)


@renderer("tree", kind=WHY_NOT_READY, order=0, wants=("width",))
def render_why_not_ready(why: Any, out: TextIO, *, color: bool = False, width: int | None = None) -> None:
    from .why_not_ready_tree import render

    render(why, out, color=color, width=width)


@renderer("wide", kind=WHY_NOT_READY, order=1, wants=("width",))
def render_why_not_ready_wide(why: Any, out: TextIO, *, color: bool = False, width: int | None = None) -> None:
    from .why_not_ready_tree import render

    render(why, out, color=color, width=width, wide=True)


@renderer("tree", kind=WHY_NOT_READY_ALL, order=0, wants=("width",))
def render_why_not_ready_all(fleet: Any, out: TextIO, *, color: bool = False, width: int | None = None) -> None:
    from .why_not_ready_tree import render_fleet

    render_fleet(fleet, out, color=color, width=width)


@renderer("wide", kind=WHY_NOT_READY_ALL, order=1, wants=("width",))
def render_why_not_ready_all_wide(fleet: Any, out: TextIO, *, color: bool = False, width: int | None = None) -> None:
    from .why_not_ready_tree import render_fleet

    render_fleet(fleet, out, color=color, width=width)


@renderer("tree", kind=HIT_RATE, order=0, wants=("source", "width"))
def render_hit_rate(
    fleet: Any, out: TextIO, *, color: bool = False, source: Any = None, width: int | None = None
) -> None:
    from .hit_rate_table import render_hit_rate as render

    render(fleet, source, out, color=color, width=width)


@renderer("wide", kind=HIT_RATE, order=1, wants=("source", "width"))
def render_hit_rate_wide(
    fleet: Any, out: TextIO, *, color: bool = False, source: Any = None, width: int | None = None
) -> None:
    from .hit_rate_table import render_hit_rate as render

    render(fleet, source, out, color=color, width=width, wide=True)


@renderer("table", kind=PLAN, order=0, wants=("width",))
def render_plan(doc: Any, out: TextIO, *, color: bool = False, width: int | None = None) -> None:
    from .plan_table import render_plan_table

    render_plan_table(doc, out, color=color, width=width)


@renderer("name", kind=PLAN, order=50)
def render_plan_names(doc: Any, out: TextIO, *, color: bool = False) -> None:
    from .doctor_name import render_plan_names as render

    render(doc, out)
