"""THE width output for people is laid out at (docs/user-guide.md, "First run", states the same rule):

1. `--width N` says it (N = 0: no wrapping), for `less -R`, CI logs, or a file meant to be read at N columns;
2. else $COLUMNS, when exported (shells set it but do not export it: exporting it is a choice);
3. else the terminal standard output is, at its size;
4. else nothing is wrapped: standard output is a pipe or a file, read anywhere, so each finding or row stays
   one line with its code and object, as `kubectl get` prints (`grep` finds whole findings).

Colour never changes the width (`--color=always` into `less -R` is rule 2 or 4 like any pipe). A terminal that
reports 0 columns (a pty nobody sized) is no terminal; a stream without a file descriptor (a StringIO) neither.
"""

from __future__ import annotations

import os
from typing import TextIO

MIN_WIDTH = 40  # narrower than this, wrapping helps nobody: lay out at this width
_chosen: dict[str, int | None] = {"width": None}  # --width, for this run


def choose_width(width: int | None) -> None:
    """`--width N`: every renderer of this run lays out at N columns (0: no wrapping); None: the rule decides."""
    _chosen["width"] = width


def _columns_env() -> int | None:
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        return None
    return columns if 20 <= columns <= 10000 else None


def _size_of(out: TextIO) -> int | None:
    try:
        fd = out.fileno()
        if not os.isatty(fd):
            return None
        return os.get_terminal_size(fd).columns or None
    except (AttributeError, OSError, ValueError):
        return None


def terminal_width(out: TextIO | None = None) -> int | None:
    """The columns to lay out at for `out` (default: standard output), or None: one line per item."""
    import sys

    chosen = _chosen["width"]
    if chosen is not None:
        return max(chosen, MIN_WIDTH) if chosen > 0 else None
    width = _columns_env() or _size_of(out if out is not None else sys.stdout)
    return max(width, MIN_WIDTH) if width else None
