"""`status` for people: a groups table, then one heat row per KernelCache and group.

    cluster prod-eu · https://10.0.0.1:6443 · read 2026-06-18T09:40:00Z · all namespaces

    GROUP  SELECTOR                    MEMBERS  READY  NOTREADY  CORDONED  KCN  MISSING  AGENTS  CACHES
    h100   nvidia.com/gpu.product=H100       4      4         0         0    4        0     3/4       2

    KERNELCACHE           GROUP  NODES  HEAT        READY  PENDING  PULLING  ERROR  NO ENTRY
    team-llm/llama-70b    h100       4  ████▒▒████      0        0        1      2         1

In colour (a terminal, NO_COLOR unset) the HEAT column is a bar split by phase (Ready green, Pulling
blue, Pending yellow, Error red, no entry grey); without colour it is left out and the counts say the
same. A cache's cells in groups other than its own (a node in two groups, or an entry the agent has not
dropped yet) are marked `*`. Names are escaped (control characters never reach the terminal); piped
output never wraps, so that every row stays one greppable line.
"""

from __future__ import annotations

import io
import re
from typing import TYPE_CHECKING, Any, TextIO

from ..text import escape
from .doctor_common import write_text
from .doctor_table import output_width
from .registry import renderer
from .status_common import (
    ERROR,
    NO_ENTRY,
    PENDING,
    PULLING,
    READY,
    bar_widths,
    cell_counts,
    cells_by_cache,
    selector_text,
    source_line,
)

if TYPE_CHECKING:
    from ..explain.status import StatusReport

STATUS = "status"
BAR_WIDTH = 12
PLAIN_WIDTH = 10_000  # piped: never wrap
SEGMENT_STYLES = {READY: "green", PULLING: "blue", PENDING: "yellow", ERROR: "red", NO_ENTRY: "bright_black"}
NOT_OWN_MARK = "*"
_TRAILING_BLANKS = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)$", re.MULTILINE)


@renderer("table", kind=STATUS, order=0)
def render_status_table(report: StatusReport, out: TextIO, *, color: bool = False, **_: Any) -> None:
    write_text(out, status_text(report, color=color, width=output_width(out, color) if color else None))


def status_text(report: StatusReport, *, color: bool, width: int | None, header: str = "") -> str:
    """The whole screen as text (`status -w` redraws it). `width` None: no wrapping (piped output)."""
    from rich.console import Console

    buffer = io.StringIO()
    console = Console(file=buffer, width=width or PLAIN_WIDTH, force_terminal=color,
                      color_system="auto" if color else None, no_color=not color, highlight=False, markup=False,
                      emoji=False, soft_wrap=False, force_jupyter=False, force_interactive=False,
                      legacy_windows=False)
    _Screen(report, console, color=color, wrap=width is not None).render(header)
    return _TRAILING_BLANKS.sub(r"\1", buffer.getvalue())


class _Screen:
    def __init__(self, report: StatusReport, console: Any, *, color: bool, wrap: bool):
        self.report = report
        self.status = report.status
        self.console = console
        self.color = color
        self.wrap = wrap

    def render(self, header: str) -> None:
        from rich.text import Text

        line = source_line(self.report.provenance)
        if header:
            line = f"{header} · {line}"
        self.console.print(Text(escape(line), style="dim"), soft_wrap=not self.wrap)
        for note in self.report.notes:
            self.console.print(Text(escape(note), style="yellow"), soft_wrap=not self.wrap)
        self.console.print()
        if not self.status.groups:
            self.console.print(Text("no KernelCacheNodeGroups"), soft_wrap=True)
        else:
            self._groups()
        self.console.print()
        self._caches()
        self._unassigned()

    def _table(self, *headers: tuple[str, str]) -> Any:
        from rich.table import Table

        table = Table(box=None, show_edge=False, pad_edge=False, padding=(0, 2, 0, 0),
                      header_style="bold", collapse_padding=True)
        for title, justify in headers:
            # Numbers, the heat bar and headers never break; names and selectors fold (whole, over several
            # lines) when the terminal is too narrow, and never when piped.
            fixed = justify == "right" or title == "HEAT"
            width = BAR_WIDTH if title == "HEAT" else len(title) if fixed else min(len(title), 8)
            table.add_column(title, justify=justify, overflow="fold",  # type: ignore[arg-type]
                             no_wrap=fixed or not self.wrap, min_width=width)
        return table

    def _groups(self) -> None:
        from rich.text import Text

        table = self._table(("GROUP", "left"), ("SELECTOR", "left"), ("MEMBERS", "right"), ("READY", "right"),
                            ("NOTREADY", "right"), ("CORDONED", "right"), ("KCN", "right"), ("MISSING", "right"),
                            ("AGENTS", "right"), ("CACHES", "right"))
        for g in self.status.groups:
            table.add_row(
                Text(escape(g.name), style="bold"),
                Text(escape(selector_text(g.selector)), style="dim" if g.selector else "red"),
                Text(str(g.members), style="" if g.members else "yellow"),
                str(g.ready),
                _count(g.not_ready, "yellow"),
                _count(g.cordoned, "yellow"),
                str(g.kernel_cache_nodes),
                _count(g.kernel_cache_nodes_missing, "red"),
                Text(f"{g.agent_ready}/{g.agent_desired}", style="red" if g.agent_ready < g.agent_desired else ""),
                str(g.assigned_caches),
            )
        self.console.print(table)

    def _caches(self) -> None:
        from rich.text import Text

        rows = cells_by_cache(self.status.groups)
        if not self.status.caches:
            self.console.print(Text("no KernelCaches" + (f" in namespace {self.report.provenance.namespace}"
                                                         if self.report.provenance.namespace else "")))
            return
        if not rows:
            return
        headers = [("KERNELCACHE", "left"), ("GROUP", "left"), ("NODES", "right")]
        if self.color:
            headers.append(("HEAT", "left"))
        headers += [(READY.upper(), "right"), (PENDING.upper(), "right"), (PULLING.upper(), "right"),
                    (ERROR.upper(), "right"), (NO_ENTRY.upper(), "right")]
        table = self._table(*headers)
        marked = False
        for cache, cells in rows.items():
            for index, (group, cell) in enumerate(cells):
                counts = cell_counts(cell, group.members)
                name = Text(escape(cache) if index == 0 else "")
                group_name = escape(group.name) + ("" if cell.assigned else NOT_OWN_MARK)
                marked = marked or not cell.assigned
                row: list[Any] = [name, Text(group_name, style="" if cell.assigned else "dim"), str(group.members)]
                if self.color:
                    row.append(self._bar(counts))
                row += [_count(counts[READY], "green"), _count(counts[PENDING], "yellow"),
                        _count(counts[PULLING], "blue"), _count(counts[ERROR], "red"),
                        _count(counts[NO_ENTRY], "bright_black")]
                table.add_row(*row)
        self.console.print(table)
        if marked:
            self.console.print(Text(f"{NOT_OWN_MARK} not the KernelCache's group: entries on members that are also "
                                    "in its group, or that the agent has not dropped yet", style="dim"),
                               soft_wrap=not self.wrap)

    def _bar(self, counts: dict[str, int]) -> Any:
        from rich.text import Text

        bar = Text()
        for segment, width in ((s, w) for s, w in bar_widths(counts, BAR_WIDTH).items() if w):
            bar.append("█" * width, style=SEGMENT_STYLES[segment])
        return bar

    def _unassigned(self) -> None:
        from rich.text import Text

        if not self.status.unassigned:
            return
        self.console.print()
        self.console.print(Text("KernelCaches no group prepares:", style="bold red"), soft_wrap=True)
        for u in self.status.unassigned:
            self.console.print(Text(f"  {escape(u.cache)}  {escape(u.reason)}"), soft_wrap=not self.wrap)


def _count(n: int, style: str) -> Any:
    from rich.text import Text

    return Text(str(n), style=style if n else "")

