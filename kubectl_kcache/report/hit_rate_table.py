"""`why-not-cached -A` for people: a summary sentence, then one row per InferenceService (and per revision where
they differ), those that need something done first; `-o wide` adds one row per pod.

    12 serving pods in 3 InferenceServices: 5 cached at admission (50%), 5 cold, 2 producers (cold by design, not
    in the hit rate): 2 would be cached now (recreate them), 1 would be denied by the webhook; 4 pod templates decided

    NAMESPACE  INFERENCESERVICE  PODS  CACHED  COLD  NOW  DENIED  PRODUCER  TOP GATE       NEXT
    team-a     qwen                 4       2     1    1       0         1  footprint (1)  kubectl -n team-a rollout ...

Producers (the pod a capture's active session names) and the pods of a revision still being captured start cold
by design (`kernelcache.cold_start`): they are counted apart, never as cold or as a recreate that helps, and the hit
rate leaves them out.

Piped (no width), rows are whole lines, like `kubectl get`: the output stays greppable. On a terminal too narrow
for the whole table, the columns that do not fit move from the right under their row, the next command on a line
of its own, whole (a name or a command is never cut):

    NAMESPACE  INFERENCESERVICE          PODS  CACHED  COLD  NOW  DENIED
    team-a     llama-3-1-70b-instruct       4       2     2    1       0
        top gate: footprint (1)
        next: kubectl -n team-a rollout restart deployment llama-3-1-70b-instruct-predictor

Names are escaped; the commands are shell-quoted where they are made.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from ..text import escape
from .doctor_common import plural, write_text
from .layout import command_lines, paint, wrap
from .status_common import source_line
from .tables import plain_lines

if TYPE_CHECKING:
    from ..explain.fleet import FleetHitRate, PodResult, Row
    from ..provenance import Provenance

GAP = "  "


def summary_sentence(fleet: FleetHitRate) -> str:
    t = fleet.totals
    isvcs = len({(r.namespace, r.isvc) for r in fleet.rows})
    if not t.pods:
        return "no serving pods (pods with the label serving.kserve.io/inferenceservice) in scope"
    rate = t.hit_rate
    share = f" ({rate}%)" if rate is not None else ""
    text = (
        f"{plural(t.pods, 'serving pod')} in {plural(isvcs, 'InferenceService')}: {t.cached} cached at "
        f"admission{share}, {t.cold} cold"
    )
    if t.producer:
        text += f", {plural(t.producer, 'producer')} (cold by design, not in the hit rate)"
    extra = []
    if t.now:
        extra.append(f"{t.now} would be cached now (recreate {'it' if t.now == 1 else 'them'})")
    if t.denied:
        extra.append(f"{t.denied} would be denied by the webhook if recreated")
    if t.unprepared:
        extra.append(f"{t.unprepared} cached but on a node without a Ready entry (pulled cold)")
    if extra:
        text += ": " + ", ".join(extra)
    return text + f"; {plural(fleet.decisions, 'pod template')} decided"


def _wrap(text: str, width: int | None) -> list[str]:
    """A sentence wrapped at spaces; as it is when piped or when it fits (a cluster's name keeps its spaces)."""
    return [text] if width is None or len(text) <= width else wrap(text, width)


Cell = tuple[str, str]  # text, style
UNDER = "    "  # the indent of what moved under a row


def _fitted(
    titles: Sequence[str], right: set[int], rows: Sequence[Sequence[Cell]], color: bool, width: int | None
) -> list[str]:
    """The table, or, when it is wider than `width`, its first columns that fit (at least one) with the others
    under each row: the short ones on one line wrapped at spaces (plain), the last one (the next command) whole
    on its own line."""
    widths = [max([len(t)] + [len(row[i][0]) for row in rows]) for i, t in enumerate(titles)]
    keep = len(titles)
    while width is not None and keep > 1 and sum(widths[:keep]) + len(GAP) * (keep - 1) > width:
        keep -= 1
    if keep == len(titles):
        return _table(titles, right, rows, color)
    lines = _table(titles[:keep], right, [row[:keep] for row in rows], color)
    out = [lines[0]]
    last = len(titles) - 1
    for line, row in zip(lines[1:], rows, strict=True):
        out.append(line)
        moved = GAP.join(f"{titles[i].lower()}: {row[i][0]}" for i in range(keep, last) if row[i][0] not in ("", "-"))
        if moved:
            out += [UNDER + x + "\n" for x in _wrap(moved, None if width is None else width - len(UNDER))]
        text, style = row[last]
        if text not in ("", "-"):  # a command: broken between its words with ` \\` when wider than the line
            label = f"{UNDER}{titles[last].lower()}: "
            first, *more = command_lines(text, width, len(label), len(UNDER) + 2)
            out += [label + paint(first, style, color) + "\n", *(paint(x, style, color) + "\n" for x in more)]
    return out


def _table(titles: Sequence[str], right: set[int], rows: Sequence[Sequence[Cell]], color: bool) -> list[str]:
    cells = [[paint(t, "bold", color) for t in titles], *([paint(t, s, color) for t, s in row] for row in rows)]
    return plain_lines(cells, right)


def _n(value: int, style: str) -> tuple[str, str]:
    return str(value), style if value else ""


def _row_cells(r: Row, revisions: bool) -> list[tuple[str, str]]:
    cells = [(escape(r.namespace), ""), (escape(r.isvc) or "(empty)", "" if r.revision else "bold")]
    if revisions:
        cells.append((escape(r.revision) if r.revision else "(all)", "dim" if not r.revision else ""))
    gate = f"{r.gate} ({r.gate_count})" if r.gate else "-"
    return [*cells, *_counts(r), (gate, ""), (escape(r.next_command) or "-", "")]


def _counts(r: Row) -> list[Cell]:
    """PODS, CACHED, COLD, NOW, DENIED, PRODUCER."""
    return [
        (str(r.pods), ""),
        _n(r.cached, "green"),
        _n(r.cold, "yellow"),
        _n(r.now, "yellow"),
        _n(r.denied, "red"),
        (str(r.producer), ""),
    ]


def _rate(r: Row) -> str:
    return f"{r.hit_rate}%" if r.hit_rate is not None else "-"


def _pod_cells(p: PodResult) -> list[tuple[str, str]]:
    now = p.now_cache or f"({p.outcome})"
    return [
        (escape(p.namespace), ""),
        (escape(p.name), ""),
        (escape(p.isvc) or "(empty)", ""),
        (escape(p.node) or "-", ""),
        _cached_cell(p),
        (escape(p.kernel_cache) or "-", ""),
        (escape(now), ""),
        (p.blocked_by or ("unprepared node" if p.unprepared else "-"), ""),
        (escape(p.next_command) or "-", ""),
    ]


def _cached_cell(p: PodResult) -> tuple[str, str]:
    if p.cached:
        return "yes", "green"
    if p.cold_by_design is not None:
        return f"no ({p.cold_by_design['reason']})", ""
    return "no", "yellow"


def worst_first(rows: Sequence[Row]) -> list[Row]:
    """The InferenceServices that need something done first (pods a recreate would deny, then pods a recreate
    would cache, then cold pods, then pods pulled cold), each with its revisions under it; ties by name, and the
    fully cached last: the first screen holds what to act on."""
    blocks: list[list[Row]] = []
    for r in rows:
        if r.revision and blocks:
            blocks[-1].append(r)
        else:
            blocks.append([r])
    return [
        r
        for block in sorted(blocks, key=lambda b: (-b[0].denied, -b[0].now, -b[0].cold, -b[0].unprepared))
        for r in block
    ]


def hit_rate_text(
    fleet: FleetHitRate, provenance: Provenance, *, color: bool, width: int | None, wide: bool = False
) -> str:
    out = [paint(x, "dim", color) + "\n" for x in _wrap(escape(source_line(provenance)), width)]
    out += [paint(x, "bold", color) + "\n" for x in _wrap(summary_sentence(fleet), width)]
    if not fleet.rows:
        return "".join(out)
    revisions = any(r.revision for r in fleet.rows)
    names = ["NAMESPACE", "INFERENCESERVICE", *(["REVISION"] if revisions else [])]
    titles = [*names, "PODS", "CACHED", "COLD", "NOW", "DENIED", "PRODUCER", "TOP GATE", "NEXT"]
    numbers = set(range(len(names), len(titles) - 2))
    out.append("\n")
    out += _fitted(titles, numbers, [_row_cells(r, revisions) for r in worst_first(fleet.rows)], color, width)
    if wide:
        out.append("\n")
        out += _fitted(
            ["NAMESPACE", "POD", "INFERENCESERVICE", "NODE", "CACHED", "KERNELCACHE", "NOW", "BLOCKED BY", "NEXT"],
            set(),
            [_pod_cells(p) for p in fleet.pods],
            color,
            width,
        )
    return "".join(out)


def render_hit_rate(
    fleet: FleetHitRate, out: TextIO, *, color: bool, width: int | None, wide: bool = False, source: Provenance
) -> None:
    write_text(out, hit_rate_text(fleet, source, color=color, width=width, wide=wide))


def serving_lines(
    fleet: FleetHitRate | str | None, *, color: bool, width: int | None, problems: bool = False
) -> list[str]:
    """`status`'s serving pods section: the summary and one row per InferenceService (no revisions, no next
    command: `why-not-cached -A` has them), those with cold or denied pods first; `problems`: only those."""
    if fleet is None:
        return []
    if isinstance(fleet, str):
        return ["\n"] + [
            paint(x, "yellow", color) + "\n" for x in _wrap(f"serving pods not shown: {escape(fleet)}", width)
        ]
    out = ["\n"] + [paint(x, "bold", color) + "\n" for x in _wrap(summary_sentence(fleet), width)]
    rows = [r for r in worst_first(fleet.rows) if not r.revision]
    if problems:
        rows = [r for r in rows if r.cold or r.denied]
    if not rows:
        return out
    cells = [[(escape(r.namespace), ""), (escape(r.isvc) or "(empty)", ""), *_counts(r), (_rate(r), "")] for r in rows]
    return (
        out
        + ["\n"]
        + _fitted(
            ["NAMESPACE", "INFERENCESERVICE", "PODS", "CACHED", "COLD", "NOW", "DENIED", "PRODUCER", "HIT RATE"],
            {2, 3, 4, 5, 6, 7, 8},
            cells,
            color,
            width,
        )
    )
