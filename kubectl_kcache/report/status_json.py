"""`status -o json|yaml`: exactly `StatusReport.to_dict()`, the documented `KcacheStatus` with its `source`
(its keys, and what version 1 added to each cache's cell: `nodeCount`, `noEntry`, `notReady`, `state`,
`reason`, are described in `explain/status.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TextIO

from ..documents import json_text, takes_unicode, yaml_text
from .registry import renderer

if TYPE_CHECKING:
    from ..explain.status import StatusReport

STATUS = "status"


@renderer("json", kind=STATUS, order=10)
def render_status_json(report: StatusReport, out: TextIO, *, color: bool = False, **_: Any) -> None:
    out.write(json_text(report.to_dict()))
    out.write("\n")


@renderer("yaml", kind=STATUS, order=11)
def render_status_yaml(report: StatusReport, out: TextIO, *, color: bool = False, **_: Any) -> None:
    out.write(yaml_text(report.to_dict(), unicode=takes_unicode(out)))
