"""`status -o json|yaml`: exactly `StatusReport.to_dict()`, the documented `KcacheStatus` with its `source`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TextIO

from .doctor_json import _is_utf
from .registry import renderer

if TYPE_CHECKING:
    from ..explain.status import StatusReport

STATUS = "status"


@renderer("json", kind=STATUS, order=10)
def render_status_json(report: StatusReport, out: TextIO, *, color: bool = False, **_: Any) -> None:
    json.dump(report.to_dict(), out, indent=2)
    out.write("\n")


@renderer("yaml", kind=STATUS, order=11)
def render_status_yaml(report: StatusReport, out: TextIO, *, color: bool = False, **_: Any) -> None:
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    from ..text import escape

    doc = report.to_dict()
    text = yaml.dump(doc, Dumper=dumper, sort_keys=False, default_flow_style=False, width=1 << 30,
                     allow_unicode=_is_utf(out))
    if escape(text, keep_newlines=True) != text:  # bidi or invisible characters: YAML's own escapes instead
        text = yaml.dump(doc, Dumper=dumper, sort_keys=False, default_flow_style=False, width=1 << 30,
                         allow_unicode=False)
    out.write(text)
