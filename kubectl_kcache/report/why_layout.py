"""The layout the why-* answers share: the verdict, a paragraph, the next command, then trees of evidence.

Text is laid out first and coloured after, so colour never changes where a line breaks. Lines wrap at
spaces only, at the terminal's width (never when there is no terminal); a command is never wrapped and
never drawn inside tree guides, so it copies whole. Every value is escaped (names from a cluster are
data), and the glyphs fall back to ASCII when the output's encoding cannot take them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TextIO

from ..text import escape
from . import layout
from .doctor_common import can_encode, write_text
from .layout import command_lines

Span = tuple[str, str]  # (text, style)
Part = str | Span

STYLE_OK = "green"
STYLE_BAD = "red"
STYLE_WARN = "yellow"
STYLE_DIM = "dim"

UNICODE = {
    "ok": "✓",
    "no": "✗",
    "warn": "⚠",
    "unknown": "?",
    "to": "→",
    "back": "←",
    "branch": "├── ",
    "last": "└── ",
    "pipe": "│   ",
    "space": "    ",
}
ASCII = {
    "ok": "+",
    "no": "x",
    "warn": "!",
    "unknown": "?",
    "to": "->",
    "back": "<-",
    "branch": "|-- ",
    "last": "`-- ",
    "pipe": "|   ",
    "space": "    ",
}


def glyphs_for(out: TextIO) -> dict[str, str]:
    return UNICODE if can_encode(out, "".join(UNICODE.values())) else ASCII


def spans(*parts: Part) -> list[Span]:
    """Spans from parts; every text is escaped (it may hold names from the cluster)."""
    return [(escape(p), "") if isinstance(p, str) else (escape(p[0]), p[1]) for p in parts if p]


@dataclass
class Node:
    """A tree node: a label and its children."""

    label: list[Span]
    children: list[Node] = field(default_factory=list)

    def add(self, *parts: Part) -> Node:
        child = Node(spans(*parts))
        self.children.append(child)
        return child


def paint(line: list[Span], color: bool) -> str:
    line = list(line)
    while line and not line[-1][0].rstrip():
        line.pop()
    if line:
        line[-1] = (line[-1][0].rstrip(), line[-1][1])
    return "".join(layout.paint(text, style, color) for text, style in line)


def wrap_spans(line: list[Span], width: int | None, first: str, indent: str) -> list[list[Span]]:
    """`line` broken at spaces into lines of at most `width` characters (a word longer than a line stays
    whole); `first` leads the first line, `indent` the others. Styles follow their characters."""
    text = "".join(t for t, _ in line)
    if width is None or len(first) + len(text) <= width:
        return [[(first, "")] + line]
    styles: list[str] = []
    for t, s in line:
        styles.extend([s] * len(t))
    ranges: list[list[tuple[int, int]]] = [[]]
    used = len(first)
    pos = 0
    for word in text.split(" "):
        start, end = pos, pos + len(word)
        pos = end + 1
        if ranges[-1] and used + 1 + len(word) > width:
            ranges.append([])
            used = len(indent)
        if not word and not ranges[-1]:
            continue  # runs of spaces at a line break go with the break
        if ranges[-1]:
            prev = ranges[-1][-1]
            ranges[-1][-1] = (prev[0], end)  # the space between two words stays with them
            used += 1 + len(word)
        else:
            ranges[-1].append((start, end))
            used += len(word)
    out = []
    for k, row in enumerate(ranges):
        row_spans: list[Span] = [(first if k == 0 else indent, "")]
        for a, b in row:
            i = a
            while i < b:
                j = i
                while j < b and styles[j] == styles[i]:
                    j += 1
                row_spans.append((text[i:j], styles[i]))
                i = j
        out.append(row_spans)
    return out


class Page:
    """The lines of an answer, laid out at `width` (None: no wrapping)."""

    def __init__(self, out: TextIO, *, color: bool, width: int | None):
        self.out = out
        self.color = color
        self.width = width
        self.g = glyphs_for(out)
        self.lines: list[list[Span]] = []

    def mark(self, passed: object) -> Span:
        """The mark of a gate: passed (True), failed (False), not known (None: its input was not read), or
        waiting (anything else)."""
        if passed is True:
            return self.g["ok"], STYLE_OK
        if passed is False:
            return self.g["no"], STYLE_BAD
        return (self.g["unknown"], STYLE_DIM) if passed is None else (self.g["warn"], STYLE_WARN)

    def line(self, *parts: Part, indent: str = "") -> None:
        self.lines += wrap_spans(spans(*parts), self.width, indent, indent)

    def unread(self, reads: tuple[str, ...], what: str) -> None:
        """The reads an answer could not make, each on a line: `what` is not checked."""
        if reads:
            self.line(("Not read ", "bold"), (f"({what} not checked):", STYLE_DIM))
        for line in reads:
            self.line((f"{self.g['warn']} {line}", STYLE_WARN), indent="  ")

    def para(self, label: str, text: str, style: str = "bold") -> None:
        """`label` then `text`, wrapped under itself: `Why: ...`."""
        lead = f"{label} " if label else ""
        wrapped = wrap_spans(spans(text), self.width, lead, " " * min(len(lead), 6))
        wrapped[0][0:1] = [(lead, style)]
        self.lines += wrapped

    def command(self, label: str, cmd: str, indent: str = "  ") -> None:
        """A command on lines of its own after its label (none: under the line before), broken only between
        its shell words with a line continuation when it is wider than the page (`layout.command_lines`)."""
        if label:
            self.lines.append([(label, "bold")])
        for i, line in enumerate(command_lines(escape(cmd), self.width, len(indent), len(indent) + 2)):
            self.lines.append([(indent if i == 0 else "", ""), (line, "bold")])

    def blank(self) -> None:
        if self.lines and self.lines[-1]:
            self.lines.append([])

    def tree(self, root: Node) -> None:
        self.lines += wrap_spans(root.label, self.width, "", "")
        self._children(root.children, "")

    def _children(self, children: list[Node], prefix: str) -> None:
        g = self.g
        for i, child in enumerate(children):
            last = i == len(children) - 1
            guide = prefix + (g["last"] if last else g["branch"])
            below = prefix + (g["space"] if last else g["pipe"])
            self.lines += wrap_spans(child.label, self.width, guide, below)  # continued under its label
            self._children(child.children, below)

    def write(self) -> None:
        text = "".join(paint(line, self.color).rstrip() + "\n" for line in _trimmed(self.lines))
        write_text(self.out, text)


def _trimmed(lines: Iterable[list[Span]]) -> list[list[Span]]:
    out = list(lines)
    while out and not out[-1]:
        out.pop()
    return out
