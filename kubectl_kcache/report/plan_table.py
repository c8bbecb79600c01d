"""`kubectl kcache reconcile --dry-run`: the plan as a kubectl-style table, with the diff of the agent
DaemonSet's placement under its patch. Names are escaped. On a terminal the verbs are coloured (tabulate
aligns the columns on the visible text, not on the colour codes)."""

from __future__ import annotations

from typing import Any, TextIO

from ..text import escape

VERB_COLOR = {"CREATE": "32", "DELETE": "31", "PATCH": "33", "UPDATE": "33", "EVENT": "2"}  # SGR codes


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
        verb = act["verb"].upper()
        if color and verb in VERB_COLOR:
            verb = f"\x1b[{VERB_COLOR[verb]}m{verb}\x1b[0m"
        rows.append([verb, act["kind"], escape(act.get("namespace") or ""), escape(act["name"]),
                     escape(detail)])
    lines = tabulate(rows, headers=["VERB", "KIND", "NAMESPACE", "NAME", "WHY"], tablefmt="plain").splitlines()
    out.write(lines[0] + "\n")
    for act, line in zip(actions, lines[1:], strict=True):
        out.write(line + "\n")
        for change in act.get("diff") or []:
            out.write(f"    {escape(change)}\n")
    writes = sum(a["verb"] != "event" for a in actions)
    out.write(f"\n{writes} write(s), {len(actions) - writes} event(s) planned\n")
