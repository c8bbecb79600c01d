"""`table` (the default, for people) and `wide`: checks in report order, a mark per status, the findings.

    ✖ group-taints   Member nodes' taints are tolerated
        error    Node/gpu-1    taint nvidia.com/gpu=present:NoSchedule is not tolerated by ...
                 kubectl describe node gpu-1
    ⊘ registry-pull  Preparation Jobs pull their images
        skipped: list pods in kserve is forbidden

    2 errors, 1 warning in 13 checks (1 skipped, 3 suppressed)

A clean report (no finding, no skipped check) is the single line `no problems found in N checks over M
objects`. Messages wrap but are never cut; hints (the next command to run) are printed unwrapped on their
own line so they stay copy-pasteable. `wide` adds the group column, evidence lines, every check's reason
and the suppressed findings, marked as such. Colour only when `color` is True: otherwise no escape codes.
"""

from __future__ import annotations

import io
import os
import re
import shutil
from typing import TYPE_CHECKING, Any, TextIO

from .doctor_common import (
    ASCII_BULLET,
    UNICODE_BULLET,
    UNICODE_MARKS,
    CheckGroup,
    check_groups,
    clean_line,
    is_clean,
    marks_for,
    object_path,
    summary_line,
    write_text,
)
from .registry import renderer

if TYPE_CHECKING:
    from ..checks.model import DoctorReport, Finding

PLAIN_WIDTH = 120
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
    """The terminal's width when writing to one (or in colour), else a fixed 120."""
    if not (color or _isatty(out)):
        return PLAIN_WIDTH
    try:
        width = os.get_terminal_size(out.fileno()).columns
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        width = shutil.get_terminal_size((PLAIN_WIDTH, 24)).columns
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
    _Layout(report, console, marks_for(out), wide=wide, wrap=color or _isatty(out)).render()
    write_text(out, _TRAILING_BLANKS.sub(r"\1", buffer.getvalue()))


class _Layout:
    def __init__(self, report: DoctorReport, console: Any, marks: dict[str, str], *, wide: bool, wrap: bool):
        self.report = report
        self.console = console
        self.marks = marks
        self.wide = wide
        self.wrap = wrap
        self.bullet = UNICODE_BULLET if marks is UNICODE_MARKS else ASCII_BULLET
        self.groups = check_groups(report)
        shown = [f for g in self.groups for f in self._shown(g)]
        self.mark_width = max(len(m) for m in marks.values())
        self.id_width = max((len(g.id) for g in self.groups), default=0)
        self.severity_width = max((len(f.severity) for f in shown), default=0)
        longest_object = max((len(object_path(f.object)) for f in shown), default=0)
        self.object_width = min(longest_object, max(24, console.width * 2 // 5))
        self.group_width = max((len(f.group or "-") for f in shown), default=1)
        # Hints and evidence start under the object column.
        self.detail_indent = INDENT + self.severity_width + 2

    def _shown(self, group: CheckGroup) -> tuple[Finding, ...]:
        return group.findings if self.wide else group.active

    def render(self) -> None:
        from rich.text import Text

        for group in self.groups:
            self._check_line(group)
            if group.reason and (self.wide or group.status in REASON_LABELS):
                label = REASON_LABELS.get(group.status)
                reason = f"{label}: {group.reason}" if label else group.reason
                style = "yellow" if group.status == "skipped" else "dim"
                self.console.print(Text(" " * INDENT + reason, style=style), soft_wrap=not self.wrap)
            for finding in self._shown(group):
                self._finding(finding)
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
        line.append(group.id, style="bold")
        if group.title:
            line.append(" " * (self.id_width - len(group.id) + 2) + group.title)
        self.console.print(line, soft_wrap=not self.wrap)

    def _finding(self, finding: Finding) -> None:
        from rich.text import Text

        dim = "dim" if finding.suppressed else ""
        message = Text()
        if finding.suppressed:
            message.append("(suppressed) ", style="dim")
        message.append(finding.message, style=dim)
        cells = [
            Text(finding.severity, style=dim or SEVERITY_STYLES.get(finding.severity, "")),
            Text(object_path(finding.object), style=dim),
        ]
        widths = [self.severity_width, self.object_width]
        if self.wide:
            cells.append(Text(finding.group or "-", style="dim"))
            widths.append(self.group_width)
        prefix = Text(" " * INDENT)
        for cell, width in zip(cells, widths, strict=True):
            cell.pad_right(max(width - len(cell), 0))  # a longer cell pushes this row's message right
            prefix.append_text(cell)
            prefix.append("  ")
        room = self.console.width - len(prefix)
        if self.wrap and room >= MIN_MESSAGE_WIDTH:
            # On a terminal: the message wraps in its own column, whole (over-long words fold).
            lines = list(message.wrap(self.console, room, overflow="fold"))
        else:
            # Not on a terminal (or no room): one line per finding, however long; logs stay greppable.
            lines = [message]
        first = prefix.copy()
        first.append_text(lines[0])
        self.console.print(first, soft_wrap=True)
        indent = " " * len(prefix)
        for line in lines[1:]:
            self.console.print(Text(indent) + line, soft_wrap=True)
        self._details(finding)

    def _details(self, finding: Finding) -> None:
        """Evidence (wide) and the hint, under the object column, never wrapped."""
        pad = " " * self.detail_indent
        if self.wide:
            for evidence in finding.evidence:
                lines = evidence.splitlines() or [""]
                self._unwrapped(f"{pad}{self.bullet} {lines[0]}", "")
                for line in lines[1:]:
                    self._unwrapped(f"{pad}  {line}", "")
        for line in finding.hint.splitlines():
            self._unwrapped(pad + line, "dim")

    def _unwrapped(self, line: str, style: str) -> None:
        """One line printed as is, however long: hints must stay copy-pasteable."""
        from rich.text import Text

        self.console.print(Text(line, style=style), soft_wrap=True)
