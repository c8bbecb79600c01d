"""`-o name`: the objects with findings, one per line as `kubectl get -o name` prints them, for a pipe into
kubectl (`kubectl kcache doctor -o name | xargs -n1 kubectl describe`). Suppressed findings are left out, as
in the table; each object once, in the report's order. Like kubectl, the namespace is not part of the name:
use `-n` to keep to one, or `-o json` to see it."""

from __future__ import annotations

from typing import Any, TextIO

from ..kinds import kubectl_name
from ..text import escape
from .registry import renderer


@renderer("name", order=50)
def render_name(report: Any, out: TextIO, *, color: bool) -> None:
    seen: dict[str, None] = {}
    for f in report.findings:
        if not f.suppressed:
            seen.setdefault(escape(kubectl_name(f.object.kind, f.object.name)), None)
    out.write("".join(line + "\n" for line in seen))
