"""Text layout for people, shared by the human renderers: the width to lay out at, wrapping at spaces only
(never inside a name, label, selector, image or path), cutting huge free text, and colour.

Width: $COLUMNS when exported (a deliberate choice), else the terminal stdout is, else the controlling
terminal (stderr, stdin, /dev/tty: `doctor | less` still fits the screen), else None: no terminal at all,
so nothing is wrapped (as `kubectl get` prints into a file). A terminal reporting 0 columns is unknown; a
stream with no file descriptor (a StringIO) is no terminal.
Everything here is linear in the size of the text: a 5 MB field costs milliseconds.
"""

from __future__ import annotations

import os
import re
from typing import TextIO

from ..text import escape

MIN_WIDTH = 40  # narrower than this, wrapping helps nobody: lay out as if there were no limit
MAX_FREE_TEXT = 400  # characters of one free-text field shown in human output

STYLES = {
    "bold": "1",
    "dim": "2",
    "red": "31",
    "green": "32",
    "yellow": "33",
    "blue": "34",
    "magenta": "35",
    "cyan": "36",
    "bold red": "1;31",
    "bold yellow": "1;33",
    "bold cyan": "1;36",
    "bold green": "1;32",
}


def _columns_env() -> int | None:
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        return None
    return columns if 20 <= columns <= 10000 else None


def _fd_columns(fd: int) -> int | None:
    try:
        columns = os.get_terminal_size(fd).columns
    except (OSError, ValueError):
        return None
    return columns or None  # 0x0: a pty nobody sized


def _tty_columns() -> int | None:
    try:
        fd = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY)
    except OSError:
        return None
    try:
        return _fd_columns(fd)
    finally:
        os.close(fd)


def _fileno(stream: object) -> int | None:
    try:
        return int(stream.fileno())  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return None


def terminal_width(out: TextIO | None = None) -> int | None:
    """The width to lay out at for `out` (see the module's docstring); None: no limit, one item per line."""
    import sys

    width = _columns_env()
    target = out if out is not None else sys.stdout
    # text kept in memory (a StringIO) goes to no screen: only $COLUMNS sizes it
    if width is None and _fileno(target) is not None:
        for stream in (target, sys.stderr, sys.stdin):
            fd = _fileno(stream)
            if fd is not None and (width := _fd_columns(fd)) is not None:
                break
        else:
            width = _tty_columns()
    if width is None:
        return None
    return max(width, MIN_WIDTH)


def cut(text: str, limit: int = MAX_FREE_TEXT, slack: int = 0, total: int | None = None) -> str:
    """`text` whole when short (up to `limit` + `slack`: cutting a few words saves nothing), else its start
    (ended at a space when there is one near) and `... (N characters)`: a 5 MB message must not fill the
    screen. `total`: the length to report when `text` is already the start of a longer one. For human output
    only."""
    total = len(text) if total is None else total
    if total <= limit + slack:
        return text
    head = text[:limit]
    space = head.rfind(" ")
    if space > 0 or text[limit : limit + 1] == " ":  # never inside a name; only a blob with no space is cut
        head = head[:space] if text[limit : limit + 1] != " " else head
    return f"{head.rstrip()} ... ({total} characters)"


_WORD = re.compile(r"\S+")


def wrap(text: str, width: int | None, first_indent: int = 0, indent: int = 0) -> list[str]:
    """`text` in lines of at most `width` columns (the first starting after `first_indent` columns already
    used, the others indented by `indent` spaces), broken only at spaces. A word too long for an indented line
    starts further left, as far as it needs (a 90-character image reference at 80 columns: alone, at column 0);
    it is never cut. `width` None: one line. Runs of spaces become one."""
    words = _WORD.findall(text)
    if width is None:
        return [" ".join(words)]
    lines: list[str] = []
    current: list[str] = []
    pad = ""
    used = first_indent
    for word in words:
        extra = len(word) + (1 if current else 0)
        if current and used + extra > width:
            lines.append(pad + " ".join(current))
            current = []
            pad = " " * max(0, min(indent, width - len(word)))
            used = len(pad)
            extra = len(word)
        current.append(word)
        used += extra
    lines.append(pad + " ".join(current))
    return lines


def wrap_items(
    items: list[str], width: int | None, first_indent: int = 0, indent: int = 0, sep: str = ", "
) -> list[str]:
    """`items` joined by `sep` and wrapped as `wrap` does, never breaking inside an item (`agent 3`)."""
    glued = [item.replace(" ", "\x00") for item in items]
    return [line.replace("\x00", " ") for line in wrap(sep.join(glued), width, first_indent, indent)]


def paint(text: str, style: str, color: bool) -> str:
    """`text` in `style` (a key of STYLES) when `color`, else as is."""
    code = STYLES.get(style) if color and text else None
    return f"\x1b[{code}m{text}\x1b[0m" if code else text


def display(value: object) -> str:
    """A cluster value made safe for a terminal (control and bidi characters shown as \\xNN)."""
    return escape(str(value))
