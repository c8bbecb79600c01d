"""The width output for people is laid out at, and word wrapping that never cuts a word.

The width is the terminal's: stdout's when it is one, else, when stdout is a pipe, the controlling
terminal's (`kcache ... | less` is read on that terminal); $COLUMNS overrides both. None means there is no
terminal to fit (`> file`, cron, CI) or it reports no size (a 0x0 pty): then nothing is wrapped, one item a
line, as `kubectl get`.
"""

from __future__ import annotations

import os
from typing import TextIO

MIN_WIDTH = 40


def _size_of(fd: int) -> int | None:
    try:
        columns = os.get_terminal_size(fd).columns
    except (OSError, ValueError):
        return None
    return columns if columns > 0 else None


def _is_pipe(fd: int) -> bool:
    import stat

    try:
        return stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        return False


def terminal_width(out: TextIO | None = None) -> int | None:
    """Columns of the terminal `out` is read on, or None when there is none (or it reports no size).
    $COLUMNS, when set to a sane number, says it instead (shells do not export it: setting it is a choice)."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if 20 <= columns <= 1000:
        return max(columns, MIN_WIDTH)
    fd: int | None
    try:
        fd = out.fileno() if out is not None else None
    except (AttributeError, OSError, ValueError):
        fd = None
    if fd is not None and os.isatty(fd):
        width = _size_of(fd)
        return max(width, MIN_WIDTH) if width else None
    if fd is None or not _is_pipe(fd):  # `> file`: a file is read anywhere; nothing to fit
        return None
    try:
        tty = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY)
    except OSError:
        return None
    try:
        width = _size_of(tty)
    finally:
        os.close(tty)
    return max(width, MIN_WIDTH) if width else None


def wrap(text: str, width: int | None, indent: str = "", first: str | None = None) -> list[str]:
    """`text` as lines of at most `width` characters, broken at spaces only (a word longer than the line
    stays whole on a line of its own). `first` prefixes the first line (default: `indent`), `indent` the
    others. With `width` None the text is one line."""
    lead = indent if first is None else first
    if width is None:
        return [lead + text]
    lines: list[str] = []
    line = lead
    bare = True
    for word in text.split(" "):
        if not bare and len(line) + 1 + len(word) > width:
            lines.append(line)
            line, bare = indent + word, False
        elif bare:
            line, bare = line + word, False
        else:
            line += " " + word
    lines.append(line)
    return lines
