"""`kubectl kcache reconcile --dry-run`: the plan as a kubectl-style table, with the diff of the agent
DaemonSet's placement under its patch. Names are escaped.

On a terminal each action is one row `VERB KIND NAMESPACE/NAME`, its reason word-wrapped below it (so the
table fits 80 columns and no name is cut), verbs coloured (DELETE red, CREATE green, PATCH yellow) and diff
lines red/green. Without a terminal every action stays one greppable line, its reason last, as
`kubectl get` prints.
"""

from __future__ import annotations

from typing import Any, TextIO

from ..text import escape
from .doctor_common import write_text
from .layout import paint, wrap

VERB_STYLES = {
    "DELETE": "bold red",
    "CREATE": "bold green",
    "PATCH": "bold yellow",
    "UPDATE": "bold yellow",
    "EVENT": "cyan",
}
REASON_INDENT = "    "


def _reason(act: dict[str, Any]) -> str:
    if act["verb"] == "event":
        return f"Warning {act.get('eventReason')}: {act.get('message')}"
    if act.get("nodeGroup"):
        return f"nodeGroup={act['nodeGroup']} source={act.get('selectionSource')}; {act['reason']}"
    return str(act["reason"])


def _diff_lines(text: str, width: int | None) -> list[str]:
    """A diff line; on a terminal too narrow for it, broken between the elements of its JSON list."""
    line = REASON_INDENT + text
    if width is None or len(line) <= width:
        return [line]
    pieces = text.replace(": [{", ": [\x00{").replace("},{", "},\x00{").split("\x00")
    out = [REASON_INDENT + pieces[0]]
    for piece in pieces[1:]:  # an element still too long breaks after the commas between its fields
        line = REASON_INDENT + "    "
        for field in piece.replace(',"', ',\x00"').split("\x00"):
            if line.strip() and len(line) + len(field) > width:
                out.append(line)
                line = REASON_INDENT + "      "
            line += field
        out.append(line)
    return out


def render_plan_table(doc: dict[str, Any], out: TextIO, *, color: bool = False, width: int | None = None) -> None:
    actions = doc.get("actions") or []
    if not actions:
        out.write("nothing to do: the cluster is already as KServe's controller would make it\n")
        return
    verbs = [a["verb"].upper() for a in actions]
    kinds = [str(a["kind"]) for a in actions]
    names = [escape("/".join(p for p in (a.get("namespace") or "", a["name"]) if p)) for a in actions]
    w_verb = max(len("VERB"), *map(len, verbs))
    w_kind = max(len("KIND"), *map(len, kinds))
    stacked = width is not None
    w_name = max(len("NAME"), *map(len, names))
    header = f"{'VERB':<{w_verb}}  {'KIND':<{w_kind}}  " + ("NAME" if stacked else f"{'NAME':<{w_name}}  WHY")
    lines = [header]
    for act, verb, kind, name in zip(actions, verbs, kinds, names, strict=True):
        head = f"{paint(verb, VERB_STYLES.get(verb, ''), color)}{' ' * (w_verb - len(verb))}  {kind:<{w_kind}}  "
        reason = escape(_reason(act))
        if width is not None:  # stacked
            lines.append(head + name)
            if len(REASON_INDENT) + len(reason) <= width:  # as it is: wrapping never rewrites a name's spaces
                lines.append(REASON_INDENT + reason)
            else:
                first, *more = wrap(reason, width, first_indent=len(REASON_INDENT), indent=len(REASON_INDENT))
                lines += [REASON_INDENT + first, *more]
        else:
            lines.append(f"{head}{name:<{w_name}}  {reason}")
        for change in act.get("diff") or []:
            text = escape(change)
            style = "red" if text.startswith("- ") else "green" if text.startswith("+ ") else ""
            lines += [paint(piece, style, color) for piece in _diff_lines(text, width)]
    writes = sum(a["verb"] != "event" for a in actions)
    deletes = sum(a["verb"] == "delete" for a in actions)
    summary = f"{writes} write(s), {len(actions) - writes} event(s) planned"
    if deletes:
        summary += f" ({paint(f'{deletes} DELETE', VERB_STYLES['DELETE'], color)})"
    write_text(out, "\n".join(line.rstrip() for line in lines) + f"\n\n{summary}\n")
