"""Tables as text, laid out by tabulate (setup.cfg says why it is a dependency): rows of one line each, columns
two spaces apart, as `kubectl get` prints them (piped output, and a terminal table that fits), and GitHub
Markdown tables. Cells are taken as written: no number parsing (`3/4` and `0%` stay as they are), and colour
codes count for no width. A table wider than the terminal is folded by its renderer, not here."""

from __future__ import annotations

from collections.abc import Collection, Sequence


def plain_lines(rows: Sequence[Sequence[str]], right: Collection[int] = ()) -> list[str]:
    """`rows` (the column titles first, when shown) as lines ending in a newline, the columns in `right`
    right-aligned, nothing after a row's last cell."""
    if not rows:
        return []
    from tabulate import tabulate

    align = ["right" if i in right else "left" for i in range(len(rows[0]))]
    text = tabulate(rows, tablefmt="plain", disable_numparse=True, colalign=align)
    return [line.rstrip() + "\n" for line in text.split("\n")]


def markdown_lines(titles: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A GitHub Markdown table; the cells already escaped for it (a `|` as `\\|`)."""
    from tabulate import tabulate

    return tabulate(rows, headers=titles, tablefmt="github", disable_numparse=True).split("\n")
