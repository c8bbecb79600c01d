"""`-o name`: objects one per line as `kubectl get -o name` prints them, each once, for a pipe into kubectl
(`kubectl kcache doctor -o name | xargs -n1 kubectl describe`). For doctor the objects with unsuppressed
findings, in the report's order; for reconcile the objects the plan writes (events are not objects
written), as `kubectl apply --dry-run=server -o name` does. Like kubectl, the namespace is not part of the
name: use `-n` to keep to one, or `-o json` to see it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TextIO

from ..text import escape
from .registry import renderer


@renderer("name", order=50)
def render_name(report: Any, out: TextIO, *, color: bool) -> None:
    _write_names(((f.object.kind, f.object.name) for f in report.findings if not f.suppressed), out)


def render_plan_names(doc: dict[str, Any], out: TextIO) -> None:
    _write_names(((a["kind"], a["name"]) for a in doc["actions"] if a["verb"] != "event"), out)


def _write_names(objects: Iterable[tuple[str, str]], out: TextIO) -> None:
    from ..snapshot.kinds import kubectl_name  # not at import: the registry is read by `--help`

    names = dict.fromkeys(escape(kubectl_name(kind, name)) for kind, name in objects)
    out.write("".join(line + "\n" for line in names))
