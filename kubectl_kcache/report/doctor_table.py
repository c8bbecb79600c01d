"""`table` (the default, for people) and `wide`: checks in report order, a mark per status, the findings.

    ✖ group-taints   Member nodes' taints are tolerated
        error    Node/gpu-1    taint nvidia.com/gpu=present:NoSchedule is not tolerated by ...
                 kubectl describe node gpu-1
    ⊘ registry-pull  Preparation Jobs pull their images
        skipped: forbidden: list pods in kserve

    2 errors, 1 warning in 13 checks (1 skipped, 1 incomplete, 3 suppressed)

A clean report (no finding, no skipped check) is the single line `no problems found in N checks over M
objects`. Messages wrap in their column, at the terminal's width or, piped, at $COLUMNS or 80; no column
starts past column 60 at 80 columns (a cell too long for its column gets a line of its own). Hints (the next
command to run) are printed unwrapped on their own line so they stay copy-pasteable. In `table`, findings of
one cause that hit many objects (a taint on 3,000 nodes) are one entry with the count, a sample of names and
the command that lists them all; `wide` lists every object, adds the group column, evidence lines, every
check's reason and the suppressed findings. Every name and message is escaped (control and bidi characters
shown as \\xNN). Colour only when `color` is True: otherwise no escape codes.
"""

from __future__ import annotations

import io
import os
import re
import shutil
from typing import TYPE_CHECKING, Any, TextIO

from ..text import escape
from .doctor_common import (
    ASCII_BULLET,
    UNICODE_BULLET,
    UNICODE_MARKS,
    CheckGroup,
    FindingGroup,
    check_groups,
    clean_line,
    finding_groups,
    is_clean,
    marks_for,
    object_path,
    plain_width,
    summary_line,
    write_text,
)
from .registry import renderer

if TYPE_CHECKING:
    from ..checks.model import DoctorReport

MIN_WIDTH = 40
INDENT = 4
MIN_MESSAGE_WIDTH = 30  # narrower than this, a message column is unreadable: let the terminal wrap the line

MARK_STYLES = {"pass": "green", "fail": "bold red", "skipped": "yellow", "not-applicable": "dim"}
SEVERITY_STYLES = {"error": "bold red", "warning": "yellow", "info": "cyan"}
REASON_LABELS = {"skipped": "skipped", "not-applicable": "not applicable"}

# Trailing blanks that rich pads grid cells with, possibly followed by style-reset escapes.
_TRAILING_BLANKS = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)$", re.MULTILINE)


@renderer("table", order=0)
def render_table(report: DoctorReport, out: TextIO, *, color: bool = False) -> None:
    _render(report, out, color=color, wide=False)


@renderer("wide", order=1)
def render_wide(report: DoctorReport, out: TextIO, *, color: bool = False) -> None:
    _render(report, out, color=color, wide=True)


def _isatty(out: TextIO) -> bool:
    isatty = getattr(out, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # closed
        return False


def output_width(out: TextIO, color: bool) -> int:
    """The terminal's width when writing to one (or in colour), else $COLUMNS or 80."""
    if not (color or _isatty(out)):
        return plain_width()
    try:
        width = os.get_terminal_size(out.fileno()).columns
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        width = shutil.get_terminal_size((plain_width(), 24)).columns
    return max(width, MIN_WIDTH)


def _render(report: DoctorReport, out: TextIO, *, color: bool, wide: bool) -> None:
    if is_clean(report) and not wide:
        write_text(out, clean_line(report) + "\n")
        return

    from rich.console import Console

    buffer = io.StringIO()
    console = Console(file=buffer, width=output_width(out, color), force_terminal=color,
                      color_system="auto" if color else None, no_color=not color, highlight=False,
                      markup=False, emoji=False, soft_wrap=False, force_jupyter=False,
                      force_interactive=False, legacy_windows=False)
    _Layout(report, console, marks_for(out), wide=wide).render()
    write_text(out, _TRAILING_BLANKS.sub(r"\1", buffer.getvalue()))


class _Layout:
    def __init__(self, report: DoctorReport, console: Any, marks: dict[str, str], *, wide: bool):
        self.report = report
        self.console = console
        self.marks = marks
        self.wide = wide
        self.bullet = UNICODE_BULLET if marks is UNICODE_MARKS else ASCII_BULLET
        self.groups = check_groups(report)
        shown = [g for c in self.groups for g in self._shown(c)]
        self.mark_width = max(len(m) for m in marks.values())
        self.id_width = max((len(g.id) for g in self.groups), default=0)
        self.severity_width = max((len(g.severity) for g in shown), default=0)
        room = console.width * 2 // 5  # at 80 columns the message starts by column 47 (60 with the group)
        self.object_width = min(max((len(self._object(g)) for g in shown), default=0), max(16, room))
        self.group_width = min(max((len(g.first.group or "-") for g in shown), default=1), 12)
        # Hints and evidence start under the object column.
        self.detail_indent = INDENT + self.severity_width + 2

    def _shown(self, check: CheckGroup) -> list[FindingGroup]:
        if self.wide:
            return [FindingGroup((f,)) for f in check.findings]
        return finding_groups(check.active)

    @staticmethod
    def _object(group: FindingGroup) -> str:
        return group.kinds if group.grouped else escape(object_path(group.first.object))

    def render(self) -> None:
        from rich.text import Text

        for check in self.groups:
            self._check_line(check)
            if check.reason and (self.wide or check.status in REASON_LABELS):
                label = REASON_LABELS.get(check.status)
                reason = escape(f"{label}: {check.reason}" if label else check.reason)
                style = "yellow" if check.status == "skipped" else "dim"
                self._wrapped(Text(reason, style=style), INDENT)
            for group in self._shown(check):
                self._finding(group)
        self.console.print()
        if is_clean(self.report):
            self._unwrapped(clean_line(self.report), "green")
            return
        summary = self.report.summary()
        style = "bold red" if summary["errors"] else "yellow" if summary["warnings"] else "green"
        self._unwrapped(summary_line(self.report), style)

    def _check_line(self, group: CheckGroup) -> None:
        from rich.text import Text

        mark = self.marks.get(group.status, "?")
        line = Text()
        line.append(mark.ljust(self.mark_width), style=MARK_STYLES.get(group.status, ""))
        line.append(" ")
        line.append(escape(group.id), style="bold")
        if group.title:
            line.append(" " * (self.id_width - len(group.id) + 2) + escape(group.title))
        self.console.print(line)

    def _finding(self, group: FindingGroup) -> None:
        from rich.text import Text

        finding = group.first
        dim = "dim" if finding.suppressed else ""
        message = Text()
        if finding.suppressed:
            message.append("(suppressed) ", style="dim")
        if group.grouped:
            message.append(escape(f"{finding.cause}: {group.sample()}"), style=dim)
        else:
            message.append(escape(finding.message), style=dim)
        cells = [Text(group.severity, style=dim or SEVERITY_STYLES.get(group.severity, "")),
                 Text(self._object(group), style=dim)]
        widths = [self.severity_width, self.object_width]
        if self.wide:
            cells.append(Text(escape(finding.group or "-"), style="dim"))
            widths.append(self.group_width)
        prefix = Text(" " * INDENT)
        column = INDENT + sum(w + 2 for w in widths)
        if any(len(cell) > width for cell, width in zip(cells, widths, strict=True)):
            # a cell longer than its column gets a line of its own: no message starts further right
            # each cell on this line, folded under its own start when wider than the terminal
            at = INDENT
            for cell, width in zip(cells, widths, strict=True):
                cell.pad_right(width - len(cell))  # the columns before the long one stay aligned
                room = max(self.console.width - at, 8)
                pieces = [cell[i:i + room] for i in range(0, len(cell), room)] or [cell]
                prefix.append_text(pieces[0])
                for piece in pieces[1:]:
                    self.console.print(prefix, soft_wrap=True)
                    prefix = Text(" " * at)
                    prefix.append_text(piece)
                prefix.append("  ")
                at = len(prefix)
            prefix.rstrip()
            self.console.print(prefix, soft_wrap=True)
            self._wrapped(message, column)
        else:
            for cell, width in zip(cells, widths, strict=True):
                cell.pad_right(width - len(cell))
                prefix.append_text(cell)
                prefix.append("  ")
            self._wrapped(message, column, first=prefix)
        self._details(group)

    def _wrapped(self, text: Any, column: int, first: Any = None) -> None:
        """`text` wrapped whole in a column starting at `column` (over-long words fold); `first` is the start of
        its first line. Without room for a column, the line is printed whole."""
        from rich.text import Text

        room = self.console.width - column
        lines = list(text.wrap(self.console, room, overflow="fold")) if room >= MIN_MESSAGE_WIDTH else [text]
        head = first if first is not None else Text(" " * column)
        head.append_text(lines[0])
        self.console.print(head, soft_wrap=True)
        for line in lines[1:]:
            self.console.print(Text(" " * column) + line, soft_wrap=True)

    def _details(self, group: FindingGroup) -> None:
        """Evidence (wide), the hint and, for a group, the command listing every object: under the object
        column, never wrapped."""
        pad = " " * self.detail_indent
        finding = group.first
        if self.wide:
            for evidence in finding.evidence:
                lines = evidence.splitlines() or [""]
                self._unwrapped(f"{pad}{self.bullet} {escape(lines[0])}", "")
                for line in lines[1:]:
                    self._unwrapped(f"{pad}  {escape(line)}", "")
        hint = group.hint if group.grouped else finding.hint
        for line in hint.splitlines():
            self._unwrapped(pad + escape(line), "dim")
        if group.grouped and finding.lister:
            self._unwrapped(f"{pad}all {len(group.findings)}: {escape(finding.lister)}", "dim")

    def _unwrapped(self, line: str, style: str) -> None:
        """One line printed as is, however long: hints must stay copy-pasteable."""
        from rich.text import Text

        self.console.print(Text(line, style=style), soft_wrap=True)
