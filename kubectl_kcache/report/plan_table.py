"""`kubectl kcache reconcile --dry-run`: the plan as a kubectl-style table."""

from __future__ import annotations

from typing import Any, TextIO


def render_plan_table(doc: dict[str, Any], out: TextIO, *, color: bool = False) -> None:
    from tabulate import tabulate

    actions = doc.get("actions") or []
    if not actions:
        out.write("nothing to do: the cluster is already as KServe's controller would make it\n")
        return
    rows = []
    for act in actions:
        if act["verb"] == "event":
            detail = f"Warning {act.get('eventReason')}: {act.get('message')}"
        elif act.get("nodeGroup"):
            detail = f"nodeGroup={act['nodeGroup']} source={act.get('selectionSource')}; {act['reason']}"
        else:
            detail = act["reason"]
        rows.append([act["verb"].upper(), act["kind"], act.get("namespace") or "", act["name"], detail])
    out.write(tabulate(rows, headers=["VERB", "KIND", "NAMESPACE", "NAME", "WHY"], tablefmt="plain") + "\n")
    writes = sum(a["verb"] != "event" for a in actions)
    out.write(f"\n{writes} write(s), {len(actions) - writes} event(s) planned\n")
