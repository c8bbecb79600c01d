"""Text layout for people, shared by the human renderers: wrapping at spaces only (never inside a name,
label, selector, image or path), commands broken so they paste whole, cutting huge free text, and colour. The
width to lay out at is `terminal.terminal_width`'s.
Everything here is linear in the size of the text: a 5 MB field costs milliseconds.
"""

from __future__ import annotations

import re

MAX_FREE_TEXT = 400  # characters of one free-text field shown in human output
SENTENCE_SLACK = 30  # a cut text ends at a sentence's end this near its cut instead

SGR = {
    "bold": "1",
    "dim": "2",
    "red": "31",
    "green": "32",
    "yellow": "33",
    "blue": "34",
    "cyan": "36",
    "bright_black": "90",
}
SEVERITY_STYLES = {"error": "bold red", "warning": "bold yellow", "info": "bold cyan"}


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
        # a sentence that ends near the cut ends the text, not a fragment of the next (`It has ...`)
        end = max(head.rfind(". "), head.rfind("; "))
        if end > 0 and len(head) - end <= SENTENCE_SLACK:
            head = head[: end + 1]
    return f"{head.rstrip()} ... ({total} characters)"


_WORD = re.compile(r"\S+")


def wrap(text: str, width: int | None, first_indent: int = 0, indent: int = 0, keep: tuple[str, ...] = ()) -> list[str]:
    """`text` in lines of at most `width` columns (the first starting after `first_indent` columns already
    used, the others indented by `indent` spaces), broken only at spaces, never inside a phrase of `keep`
    (`-o wide lists all`). A word too long for an indented line starts further left, as far as it needs (a
    90-character image reference at 80 columns: alone, at column 0); it is never cut. `width` None: one line.
    Runs of spaces become one."""
    if keep and width is not None:
        for phrase in keep:
            text = text.replace(phrase, phrase.replace(" ", "\x00"))
        return [line.replace("\x00", " ") for line in wrap(text, width, first_indent, indent)]
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


def shell_words(cmd: str) -> list[str]:
    """The words of a command line as written (quotes kept), split at spaces outside quotes: a break between
    two of them, with a line continuation, leaves the command the shell runs the same."""
    words: list[str] = []
    word: list[str] = []
    quote = ""
    escaped = False
    for ch in cmd:
        if escaped:
            escaped = False
        elif ch == "\\" and quote != "'":  # in $'...' (ANSI-C quoting) a backslash escapes too
            escaped = True
        elif quote:
            quote = "" if ch == quote[-1] else quote
        elif ch in "'\"":
            quote = "$'" if ch == "'" and word[-1:] == ["$"] else ch
        elif ch == " ":
            if word:
                words.append("".join(word))
                word = []
            continue
        word.append(ch)
    if word:
        words.append("".join(word))
    return words


def _option_pairs(words: list[str]) -> list[str]:
    """A short option and its value as one unit (`-n team-llm`, `-c manager`): a break never parts them."""
    out: list[str] = []
    for word in words:
        if out and re.fullmatch(r"-[A-Za-z]", out[-1]) and not word.startswith("-"):
            out[-1] += " " + word
        else:
            out.append(word)
    return out


def command_lines(cmd: str, width: int | None, first_indent: int = 0, indent: int = 0) -> list[str]:
    """A command to run, whole and copyable: one line when it fits in `width` (after `first_indent` columns
    already used) or when there is no width; else broken between its shell words with a line continuation
    (` \\`), the next lines indented by `indent` spaces, so the terminal cuts nothing and a paste runs the same
    command. A word never breaks (a long JSON patch stays on a line of its own)."""
    if width is None or first_indent + len(cmd) <= width:
        return [cmd]
    lines: list[str] = []
    line: list[str] = []
    used = first_indent
    words = _option_pairs(shell_words(cmd))
    for i, word in enumerate(words):
        extra = len(word) + (1 if line else 0)
        if line and used + extra + (2 if i < len(words) - 1 else 0) > width:  # room for " \" unless last
            lines.append(" ".join(line) + " \\")
            line, used, extra = [], indent, len(word)
        line.append(word)
        used += extra
    lines.append(" ".join(line))
    return [lines[0], *(" " * indent + x for x in lines[1:])]


def paint(text: str, style: str, color: bool) -> str:
    """`text` in `style` (keys of SGR, space separated: `bold red`) when `color`, else as is."""
    if not (color and style and text):
        return text
    return f"\x1b[{';'.join(SGR[s] for s in style.split())}m{text}\x1b[0m"
