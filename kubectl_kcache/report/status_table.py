"""`status` for people: the answer, a groups table, then one heat row per KernelCache and group, and the answer
again as the last line.

    4 node groups: 1 with problems; 4 nodes: 1 NotReady; 1 KernelCache: 1 not Ready; serving pods: 61% cached
    cluster prod-eu · https://10.0.0.1:6443 · read 2026-06-18T09:40:00Z · all namespaces

    GROUP  SELECTOR                    MEMBERS  READY  NOTREADY  CORDONED  KCN  MISSING  AGENTS  CACHES  PODS
    h100   nvidia.com/gpu.product=H100       4      3         1         0    4        0     3/4       2     5

    KERNELCACHE           GROUP  STATE  NODES  HEAT          READY  PENDING  PULLING  ERROR  NO ENTRY  PODS
    team-llm/llama-70b    h100   Error      3  ███▒▒▒▒▒▒███      0        0        1      1         1     0

    Entries on NotReady members (KServe does not count them):
    KERNELCACHE           GROUP  READY  PENDING  PULLING  ERROR
    team-llm/llama-70b    h100       0        0        0      1

A cache's counts are over its group's Ready members, as KServe counts them (cordoned ones included):
NODES is KServe's nodeCount, NO ENTRY the Ready members without the cache's entry (KServe counts them as
preparing). Rows are ordered by KServe's state for the cache on its own group (Error, then Pending for no
(Ready) member or preparing with members lacking an entry, then Preparing, then Ready); `--problems` keeps
the caches that are not Ready. Entries on NotReady members are listed apart, after the table, and are never
the cache's problem (an Error there does not fail the cache); not with `--problems` or `--no-headers`.
`-o wide` adds the groups' selectors (on a terminal a line under each group's row, piped a column) and the
caches' STATE (KServe's, `-` in another group's cells). Problem rows come first in every table; `--problems`
keeps only them, and the answer still counts every row.

PODS: a group's is what its members' KernelCacheNodes count as pods using any cache (totalPodsUsing); a
KernelCache's is what KServe records in its status.usage (running, scheduled pods carrying its usage
annotation).

In colour (a terminal, NO_COLOR unset) the HEAT column is a bar split by phase (Ready green, Pulling
blue, Pending yellow, Error red, no entry grey); without colour it is left out and the counts say the
same. A cache's cells in groups other than its own (a node in two groups, or an entry the agent has not
dropped yet) are marked `*`. Names are escaped (control characters never reach the terminal).

Piped output never wraps, like `kubectl get`: every row stays one greppable line. On a terminal, names and
selectors fold (whole, over several lines) when the table is wider than the terminal; numbers never do.
A table that fits (and every piped one) is laid out by tabulate (report/tables.py); one wider than the
terminal is folded here. Not by rich: 2,000 KernelCaches are 2,000 rows, which rich's tables take seconds
to lay out (tabulate about 0.2 s).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from ..kernelcache import constants as c
from ..text import escape
from .answers import STATUS
from .doctor_common import can_encode, write_text
from .hit_rate_table import serving_lines
from .layout import paint, wrap
from .registry import renderer
from .status_common import (
    ERROR,
    NO_ENTRY,
    PENDING,
    PULLING,
    READY,
    bar_widths,
    cell_counts,
    cell_problem,
    cells_by_cache,
    group_problem,
    not_ready_cells,
    problems_first,
    selector_text,
    source_line,
    totals_line,
)
from .tables import plain_lines
from .terminal import terminal_width

if TYPE_CHECKING:
    from ..explain.status import CacheCell, StatusReport

BAR_WIDTH = 12
HEAT_MIN_WIDTH = 100  # narrower terminals get the counts only: the numbers say what the bar shows
GAP = "  "
SEGMENT_STYLES = {READY: "green", PULLING: "blue", PENDING: "yellow", ERROR: "red", NO_ENTRY: "bright_black"}
NOT_OWN_MARK = "*"
FOOTNOTE = (
    f"{NOT_OWN_MARK} not the KernelCache's group: entries on members that are also in its group, or that "
    "the agent has not dropped yet"
)
NOT_READY_TITLE = "Entries on NotReady members (KServe does not count them):"
STATE_STYLES = {c.CACHE_READY: "green", c.CACHE_PREPARING: "blue", c.CACHE_PENDING: "yellow", c.CACHE_ERROR: "red"}

Span = tuple[str, str]  # (text, style)


@dataclass(frozen=True)
class View:
    """What the table shows: `wide` adds the groups' selectors and the caches' state; `problems` keeps only
    unhealthy rows (a cache: not Ready as KServe computes it);
    `headers` False drops the column titles (as `kubectl get --no-headers`)."""

    wide: bool = False
    problems: bool = False
    headers: bool = True


@renderer("table", kind=STATUS, order=0)
def render_status_table(report: StatusReport, out: TextIO, *, color: bool = False, **_: Any) -> None:
    write_text(out, for_stream(status_text(report, color=color, width=terminal_width(out)), out))


@renderer("wide", kind=STATUS, order=1)
def render_status_wide(report: StatusReport, out: TextIO, *, color: bool = False, **_: Any) -> None:
    text = status_text(report, color=color, width=terminal_width(out), view=View(wide=True))
    write_text(out, for_stream(text, out))


def for_stream(text: str, out: TextIO) -> str:
    """`text` as `out` can show it: the header's separators in ASCII when its encoding has no `·`."""
    return text if can_encode(out, "·█") else text.replace(" · ", " - ")


def status_text(
    report: StatusReport,
    *,
    color: bool,
    width: int | None,
    header: str = "",
    view: View | None = None,
    totals: str | None = None,
) -> str:
    """The whole screen as text (`status -w` redraws it). `width` None: no wrapping (piped output). `totals`:
    the answer line, when `report` holds only some rows (`--problems`); else it is counted from `report`."""
    screen = _Screen(report, color=color, width=width, view=view or View())
    return "".join(screen.lines(header, totals or totals_line(report.status, report.serving)))


def state_text(cell: CacheCell) -> str:
    """KServe's state for the cache (`Pending/NoReadyNodes` with the reason when Pending); `-` in another
    group's cell."""
    agg = cell.aggregate
    if agg is None:
        return "-"
    return f"{agg.state}/{agg.reason}" if agg.state == c.CACHE_PENDING else agg.state


@dataclass(frozen=True)
class Column:
    title: str
    right: bool = False  # numbers: right-aligned, never folded
    fold: bool = False  # names and selectors: may fold on a narrow terminal
    min_width: int = 0


def _numbers(*titles: str) -> list[Column]:
    return [Column(title, right=True) for title in titles]


class _Table:
    """Rows of cells (each a list of styled spans) laid out in columns two spaces apart."""

    def __init__(self, columns: Sequence[Column]):
        self.columns = list(columns)
        self.rows: list[list[list[Span]]] = []

    def add(self, *cells: str | Span | list[Span]) -> None:
        row: list[list[Span]] = []
        for cell in cells:
            if isinstance(cell, str):
                row.append([(cell, "")])
            elif isinstance(cell, tuple):
                row.append([cell])
            else:
                row.append(cell)
        self.rows.append(row)

    def render(self, color: bool, width: int | None, headers: bool = True) -> list[str]:
        widths = [
            max([len(c.title), c.min_width] + [sum(len(t) for t, _ in row[i]) for row in self.rows])
            for i, c in enumerate(self.columns)
        ]
        if width is None or not self._fit(widths, width):  # one line a row: tabulate lays it out
            titles = [paint(c.title, "bold", color) for c in self.columns] if headers else None
            cells = [["".join(paint(t, s, color) for t, s in cell) for cell in row] for row in self.rows]
            right = {i for i, column in enumerate(self.columns) if column.right}
            return plain_lines([titles, *cells] if titles else cells, right)
        for i, column in enumerate(self.columns):  # as wide as the longest cell that still fits in it
            if column.fold:
                fits = [n for row in self.rows if (n := sum(len(t) for t, _ in row[i])) <= widths[i]]
                widths[i] = max([len(column.title), column.min_width, *fits])
        lines = [self._line([[(c.title, "bold")] for c in self.columns], widths, color)] if headers else []
        for row in self.rows:
            lines.append(self._line(row, widths, color))
        return lines

    def _fit(self, widths: list[int], width: int) -> bool:
        """Narrow the widest foldable columns until the table fits (not below their title); whether any was."""
        narrowed = False
        while sum(widths) + len(GAP) * (len(widths) - 1) > width:
            foldable = [i for i, c in enumerate(self.columns) if c.fold and widths[i] > len(c.title)]
            if not foldable:
                break
            widest = max(foldable, key=lambda i: widths[i])
            widths[widest] -= 1
            narrowed = True
        return narrowed

    def _line(self, row: list[list[Span]], widths: list[int], color: bool) -> str:
        """One row. A name wider than its column is never cut: it goes whole on a line of its own, at its
        column, and the rest of the row follows on the next line."""
        above: list[str] = []
        parts = []
        offset = 0
        for column, w, cell in zip(self.columns, widths, row, strict=True):
            length = sum(len(t) for t, _ in cell)
            text = "".join(paint(t, s, color) for t, s in cell)
            if length > w and column.fold:
                above.append(" " * offset + text + "\n")
                text, length = "", 0
            pad = " " * max(w - length, 0)
            parts.append(pad + text if column.right else text + pad)
            offset += w + len(GAP)
        return "".join(above) + GAP.join(parts).rstrip() + "\n"


def _count(n: int, style: str) -> Span:
    return (str(n), style if n else "")


class _Screen:
    def __init__(self, report: StatusReport, *, color: bool, width: int | None, view: View):
        self.report = report
        self.status = report.status
        self.color = color
        self.width = width
        self.view = view

    def _text(self, text: str, style: str = "") -> str:
        return paint(text, style, self.color) + "\n"

    def lines(self, header: str, totals: str) -> list[str]:
        if not self.view.headers:  # as `kubectl get --no-headers`: the rows only
            return self._groups() + self._caches()
        line = source_line(self.report.provenance)
        if header:
            line = f"{header} · {line}"
        answer = self._answer(escape(totals))  # the first line and the last, as the doctor's summary
        out = answer + self._wrapped(escape(line), "dim")
        for note in self.report.notes:
            out += self._wrapped(escape(note), "yellow")
        out.append("\n")
        out += self._groups() if self.status.groups else [self._text("no KernelCacheNodeGroups")]
        out.append("\n")
        out += self._caches()
        out += self._not_ready()
        out += self._unassigned()
        out += serving_lines(self.report.serving, color=self.color, width=self.width, problems=self.view.problems)
        return [*out, "\n", *answer]

    def _groups(self) -> list[str]:
        # -o wide: piped, the selector is a column (a row is one line, as kubectl's); on a terminal a line of its
        # own under the row (as a column it folded above every row at 120 columns, and numbers fell to column 0)
        selector_column = self.view.wide and self.width is None
        columns = [Column("GROUP", fold=True)]
        if selector_column:
            columns.append(Column("SELECTOR", fold=True))
        columns += _numbers("MEMBERS", "READY", "NOTREADY", "CORDONED", "KCN", "MISSING", "AGENTS", "CACHES", "PODS")
        table = _Table(columns)
        shown = [g for g in problems_first(self.status.groups) if not self.view.problems or group_problem(g)]
        for g in shown:
            row: list[Any] = [(escape(g.name), "bold")]
            if selector_column:
                row.append((escape(selector_text(g.selector)), "dim" if g.selector else "red"))
            row += [
                (str(g.members), "" if g.members else "yellow"),
                str(g.ready),
                _count(g.not_ready, "yellow"),
                _count(g.cordoned, "yellow"),
                str(g.kernel_cache_nodes),
                _count(g.kernel_cache_nodes_missing, "red"),
                (f"{g.agent_ready}/{g.agent_desired}", "red" if g.agent_ready < g.agent_desired else ""),
                str(g.assigned_caches),
                str(g.pods_using),
            ]
            table.add(*row)
        if not table.rows:
            return [self._text("no node group with a problem")]
        lines = table.render(self.color, self.width, self.view.headers)
        if not self.view.wide or selector_column:
            return lines
        head, rows = lines[: len(lines) - len(shown)], lines[len(lines) - len(shown) :]
        out = head
        for g, row_line in zip(shown, rows, strict=True):
            out.append(row_line)
            text = f"selector: {escape(selector_text(g.selector))}"
            for part in wrap(text, self.width, first_indent=len(GAP), indent=2 * len(GAP)):
                out.append(self._text(GAP + part if not part.startswith(" ") else part, "dim" if g.selector else "red"))
        return out

    def _caches(self) -> list[str]:
        if not self.status.caches and self.view.problems:  # `problems_only` left none
            return [self._text("no KernelCache with a problem")]
        if not self.status.caches:
            scope = self.report.provenance.namespace
            return [self._text("no KernelCaches" + (f" in namespace {escape(scope)}" if scope else ""))]
        rows = cells_by_cache(self.status.groups)
        if not rows:
            return []
        columns = [Column("KERNELCACHE", fold=True), Column("GROUP", fold=True)]
        if self.view.wide:
            columns.append(Column("STATE", fold=True))  # at 80 columns a long state goes above its row
        columns.append(Column("NODES", right=True))
        heat = self.color and (self.width is None or self.width >= HEAT_MIN_WIDTH)
        if heat:
            columns.append(Column("HEAT", min_width=BAR_WIDTH))
        columns += _numbers(*(s.upper() for s in (READY, PENDING, PULLING, ERROR, NO_ENTRY)), "PODS")
        table = _Table(columns)
        marked = False
        ordered = []
        for cache, cells in rows.items():
            own = [(group, cell) for group, cell in cells if cell.assigned] or cells
            worst = max(cell_problem(cell, group.members) for group, cell in own)
            ordered.append((-worst, cache, cells))
        ordered.sort(key=lambda x: x[:2])  # problems first (Error, then missing entries, then preparing)
        for worst, cache, cells in ordered:
            if self.view.problems and not worst:
                continue
            for index, (group, cell) in enumerate(cells):
                counts = cell_counts(cell, group.members)
                marked = marked or not cell.assigned
                row: list[Any] = [
                    escape(cache) if index == 0 else "",
                    (escape(group.name) + ("" if cell.assigned else NOT_OWN_MARK), "" if cell.assigned else "dim"),
                ]
                if self.view.wide:
                    row.append((state_text(cell), STATE_STYLES.get(cell.state or "", "dim")))
                row.append(str(cell.ready_members(group.members)))
                if heat:
                    row.append([("█" * w, SEGMENT_STYLES[s]) for s, w in bar_widths(counts, BAR_WIDTH).items() if w])
                row += [
                    _count(counts[READY], "green"),
                    _count(counts[PENDING], "yellow"),
                    _count(counts[PULLING], "blue"),
                    _count(counts[ERROR], "red"),
                    _count(counts[NO_ENTRY], "bright_black"),
                    str(self.status.pods_using.get(cache, 0)) if index == 0 else "",
                ]
                table.add(*row)
        if not table.rows:
            return [self._text("no KernelCache with a problem")]
        out = table.render(self.color, self.width, self.view.headers)
        if marked and self.view.headers:
            out += self._wrapped(FOOTNOTE, "dim")
        return out

    def _not_ready(self) -> list[str]:
        """The caches' entries on NotReady members, apart: KServe does not count them, so they are never the
        cache's problem (left out with --problems, and with --no-headers, whose rows are the two tables')."""
        rows = not_ready_cells(self.status.groups)
        if not rows or self.view.problems or not self.view.headers:
            return []
        names = [Column("KERNELCACHE", fold=True), Column("GROUP", fold=True)]
        table = _Table(names + _numbers(*(s.upper() for s in (READY, PENDING, PULLING, ERROR))))
        for cache, cells in rows.items():
            for index, (group, cell) in enumerate(cells):
                n = cell.not_ready
                table.add(
                    escape(cache) if index == 0 else "",
                    (escape(group.name) + ("" if cell.assigned else NOT_OWN_MARK), "" if cell.assigned else "dim"),
                    _count(n.ready, "green"),
                    _count(n.pending, "yellow"),
                    _count(n.pulling, "blue"),
                    _count(n.error, "red"),
                )
        return ["\n", *self._wrapped(NOT_READY_TITLE, "bold"), *table.render(self.color, self.width)]

    def _answer(self, totals: str) -> list[str]:
        """The answer, broken between its parts (`200 KernelCaches: 22 not Ready` stays on one line) when each
        fits a line; else at words."""
        parts = totals.split("; ")
        if self.width is None or len(totals) <= self.width or max(len(p) + 1 for p in parts) > self.width:
            return self._wrapped(totals, "bold")
        lines = [parts[0]]
        for part in parts[1:]:
            if len(lines[-1]) + 2 + len(part) + 1 <= self.width:  # room for `; ` and the `;` ending the line
                lines[-1] += f"; {part}"
            else:
                lines[-1] += ";"
                lines.append(part)
        return [self._text(x, "bold") for x in lines]

    def _wrapped(self, text: str, style: str) -> list[str]:
        """A sentence, wrapped at word boundaries to the terminal's width (whole when piped)."""
        if self.width is None or len(text) <= self.width:
            return [self._text(text, style)]
        return [self._text(x, style) for x in wrap(text, self.width)]  # layout's one wrap: a long word stays whole

    def _unassigned(self) -> list[str]:
        if not self.status.unassigned:
            return []
        out = ["\n", self._text("KernelCaches no group prepares:", "bold red")]
        for u in self.status.unassigned:
            out += self._wrapped(f"  {escape(u.cache)}  {escape(u.reason)}", "")
        return out


CHANGED_MARK = "~"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def with_changes(text: str, previous: str, color: bool) -> str:
    """`text` with ` ~` after every table row that was not on the previous screen (a watch's redraw); the
    header lines (the time changes every time), the answer (first and last), column titles and footnotes are
    never marked."""
    before = set(previous.splitlines())
    lines = text.splitlines()
    head = set(lines[: next((i for i, x in enumerate(lines) if not x.strip()), len(lines))])  # the answer too
    out = []
    in_tables = False
    for line in lines:
        plain = _ANSI.sub("", line)
        if not plain.strip():
            in_tables = True
        elif (
            in_tables
            and line not in before
            and line not in head
            and not plain.startswith(("GROUP", "KERNELCACHE", "* "))
        ):
            line += " " + paint(CHANGED_MARK, "yellow", color)
        out.append(line + "\n")
    return "".join(out)
