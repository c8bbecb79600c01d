"""`markdown`: a report to paste into a ticket: a heading, the summary, a table of the checks, then the
findings as a list with each hint (the next command to run) as code. One cause hitting many objects is one
item with the count, a sample and the command listing them all. Names are escaped (control characters)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, TextIO

from ..text import escape
from .doctor_common import (
    CheckGroup,
    check_groups,
    clean_line,
    finding_groups,
    is_clean,
    marks_for,
    object_path,
    summary_line,
    write_text,
)
from .registry import renderer
from .tables import markdown_lines

if TYPE_CHECKING:
    from ..checks.model import DoctorReport, Finding

_INLINE_SPECIALS = re.compile(r"([\\*_\[\]<>])")


def escape_inline(text: str) -> str:
    """Markdown's emphasis, link and HTML characters taken literally (backticks are left to make code)."""
    return _INLINE_SPECIALS.sub(r"\\\1", escape(text))


def escape_cell(text: str) -> str:
    """A table cell's text: pipes escaped (GFM needs it even inside code spans), newlines as <br>."""
    return text.replace("|", "\\|").replace("\r\n", "\n").replace("\n", "<br>")


def code_span(text: str) -> str:
    """`text` as inline code, fenced with more backticks than it contains in a row."""
    text = escape(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    # CommonMark strips one space from each side when both are there: pad then, and next to a backtick.
    both_spaces = text.startswith(" ") and text.endswith(" ") and bool(text.strip())
    pad = " " if text[:1] == "`" or text[-1:] == "`" or both_spaces else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def code_block(text: str, indent: str) -> list[str]:
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{indent}{fence}sh", *(f"{indent}{line}" for line in text.splitlines()), f"{indent}{fence}"]


@renderer("markdown", order=40)
def render_markdown(report: DoctorReport, out: TextIO, *, color: bool = False) -> None:
    marks = marks_for(out)
    groups = check_groups(report)
    title = "kubectl-kcache doctor" + (f": {report.cluster}" if report.cluster else "")
    lines = [f"# {escape_inline(title)}", ""]
    verdict = clean_line(report) if is_clean(report) else summary_line(report)
    lines += [f"**{verdict}**", "", f"Source: {escape_inline(_where(report))}, objects read: {report.object_count}", ""]

    rows = []
    for g in groups:
        found = str(len(g.active)) + (f" (+{len(g.suppressed)} suppressed)" if g.suppressed else "")
        cells = [
            marks.get(g.status, "?"),
            code_span(g.id),
            escape_inline(g.title),
            g.status,
            found,
            escape_inline(g.reason),
        ]
        rows.append([escape_cell(c) for c in cells])
    lines += markdown_lines(["", "Check", "Title", "Status", "Findings", "Reason"], rows)

    for heading, part in (("Findings", lambda g: g.active), ("Suppressed findings", lambda g: g.suppressed)):
        shown = [(g, part(g)) for g in groups if part(g)]
        if shown:
            lines += ["", f"## {heading}"]
            for g, findings in shown:
                lines += _section(g, findings)
    write_text(out, "\n".join(lines) + "\n")


def _where(report: DoctorReport) -> str:
    """`live https://api:6443, read 2026-11-30T10:00:00Z, kubectl-kcache 0.1.0, all namespaces`."""
    prov = report.provenance
    if not prov:
        return report.source
    origin = ", ".join(prov.get("files") or ()) or prov.get("server") or prov.get("cluster") or ""
    scope = (prov.get("scope") or {}).get("namespace")
    parts = [
        f"{report.source} {origin}".strip(),
        f"read {prov['takenAt']}" if prov.get("takenAt") else "",
        prov.get("tool", ""),
        f"namespace {scope}" if scope else "all namespaces",
    ]
    return ", ".join(p for p in parts if p)


def _section(group: CheckGroup, findings: tuple[Finding, ...]) -> list[str]:
    heading = code_span(group.id) + (f": {escape_inline(group.title)}" if group.title else "")
    lines = ["", f"### {heading}", ""]
    for g in finding_groups(findings):
        f = g.first
        if g.grouped:
            groups = g.node_groups
            where = escape_inline(g.kinds)
            if groups:
                where += f" (group {code_span(groups[0])})" if len(groups) == 1 else f" (in {len(groups)} groups)"
            lines.append(f"- **{g.severity}** {where}: {escape_inline(f.cause)}: {code_span(g.sample())}")
            if g.lister:
                lines.append(f"  - all {len(g.findings)}: {code_span(g.lister)}")
            hint = g.hint
        else:
            where = code_span(object_path(f.object))
            if f.group:
                where += f" (group {code_span(f.group)})"
            lines.append(f"- **{f.severity}** {where}: {escape_inline(f.message)}")
            lines.extend(f"  - evidence: {code_span(e)}" for e in f.evidence)
            hint = f.hint
        if hint and "\n" in hint:
            lines += ["  - next:", "", *code_block(escape(hint, keep_newlines=True), "    "), ""]
        elif hint:
            lines.append(f"  - next: {code_span(hint)}")
    return lines
