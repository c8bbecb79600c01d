"""`reconcile -o name`: the objects the plan writes, one per line as `kubectl get -o name` prints them (as
`kubectl apply --dry-run=server -o name` does); events are not objects written."""

from __future__ import annotations

from typing import Any, TextIO

from ..kinds import kubectl_name
from ..text import escape


def render_plan_names(doc: dict[str, Any], out: TextIO) -> None:
    seen: dict[str, None] = {}
    for a in doc["actions"]:
        if a["verb"] != "event":
            seen.setdefault(escape(kubectl_name(a["kind"], a["name"])), None)
    out.write("".join(line + "\n" for line in seen))
