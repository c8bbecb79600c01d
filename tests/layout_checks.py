"""What the tests hold every text layout to: the width rule (docs/user-guide.md, "First run"), and commands
that paste whole when they are broken over lines."""

from __future__ import annotations

import re

# one word no line can hold (a JSON patch, an image reference), with its short option (`-p '{...}'`) and a line
# continuation: the only thing allowed past the width
UNBREAKABLE = re.compile(r"(-[A-Za-z] )?\S+( \\)?")


def fits(line: str, columns: int) -> bool:
    """Within the width, or one unbreakable word after its indent."""
    return len(line) <= columns or bool(UNBREAKABLE.fullmatch(line.strip()))


def pasted(lines: list[str]) -> list[str]:
    """The lines as a shell reads a paste of them: a line ending in ` \\` goes on with the next one."""
    out: list[str] = []
    carry = ""
    for line in lines:
        if line.endswith(" \\"):
            carry += (line if not carry else line.lstrip())[:-2] + " "
            continue
        out.append(carry + (line.lstrip() if carry else line))
        carry = ""
    return out
