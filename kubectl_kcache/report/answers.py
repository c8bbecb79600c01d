"""The formats of the other answers, registered like the doctor's: why-group and why-not-cached (`tree`, `wide`:
the answer first, then its evidence), the hit rate of many serving pods (why-not-cached without POD, same
choices), reconcile's plan (`table`, `name`), and `json`/`yaml` of each (its document with its `source`).
The tree and table modules are imported when they render, so that `--help` stays fast.

The doctor's and status's `json` and `yaml` are registered here too: exactly `DoctorReport.to_dict()`, the
`doctor -o json` contract of the user guide, and `StatusReport.to_dict()`, the documented `KcacheStatus` with
its `source` (its keys, and what version 1 added to each cache's cell: `nodeCount`, `noEntry`, `notReady`,
`state`, `reason`, are described in `explain/status.py`)."""

from __future__ import annotations

from typing import Any, TextIO

from ..documents import json_text, takes_unicode, yaml_text
from .registry import DOCTOR, renderer

STATUS = "status"
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
    # the doctor's and status's reports carry where they came from themselves: they take no `source`
    wants = () if kind in (DOCTOR, STATUS) else ("source",)

    @renderer("json", kind=kind, order=10, wants=wants)
    def render_json(report: Any, out: TextIO, *, color: bool = False, source: Any = None) -> None:
        out.write(json_text(_document(report, source)))
        out.write("\n")

    @renderer("yaml", kind=kind, order=11, wants=wants)
    def render_yaml(report: Any, out: TextIO, *, color: bool = False, source: Any = None) -> None:
        out.write(yaml_text(_document(report, source), unicode=takes_unicode(out)))


for _kind in (DOCTOR, STATUS, WHY_GROUP, WHY_NOT_CACHED, HIT_RATE, PLAN, WHY_NOT_READY, WHY_NOT_READY_ALL):
    _register_documents(_kind)


# Each kind's `tree` and `wide` (the same with wide=True): the module and function that lay it out, and the
# context it wants besides the width.
_TREES = (
    (WHY_GROUP, ".why_group_tree", "render", ()),
    (WHY_NOT_CACHED, ".why_not_cached_tree", "render", ()),
    (WHY_NOT_READY, ".why_not_ready_tree", "render", ()),
    (WHY_NOT_READY_ALL, ".why_not_ready_tree", "render_fleet", ()),
    (HIT_RATE, ".hit_rate_table", "render_hit_rate", ("source",)),
)


def _register_tree(kind: str, module: str, function: str, context: tuple[str, ...], fmt: str, wide: bool) -> None:
    @renderer(fmt, kind=kind, order=int(wide), wants=(*context, "width"))
    def render(report: Any, out: TextIO, *, color: bool = False, width: int | None = None, **given: Any) -> None:
        from importlib import import_module

        layout = getattr(import_module(module, __package__), function)
        layout(report, out, color=color, width=width, wide=wide, **given)


for _kind, _module, _function, _context in _TREES:
    _register_tree(_kind, _module, _function, _context, "tree", False)
    _register_tree(_kind, _module, _function, _context, "wide", True)


@renderer("table", kind=PLAN, order=0, wants=("width",))
def render_plan(doc: Any, out: TextIO, *, color: bool = False, width: int | None = None) -> None:
    from .plan_table import render_plan_table

    render_plan_table(doc, out, color=color, width=width)


@renderer("name", kind=PLAN, order=50)
def render_plan_names(doc: Any, out: TextIO, *, color: bool = False) -> None:
    from .doctor_name import render_plan_names as render

    render(doc, out)
