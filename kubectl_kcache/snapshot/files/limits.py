"""The bounds every input is read within (files, folders' files, dumps, streams, `--config`): its size (the one
limit a user may move, `--max-input-size`), the nesting of its values, the digits of a number and how far YAML
aliases may widen it. Each is refused with exit 2 and says what it is."""

from __future__ import annotations

import re

from ...errors import InputError

DEFAULT_MAX_INPUT_BYTES = 2 << 30  # the largest dump measured (50,000 nodes of 30 KB) is 1.7 GB
MAX_NESTING = 500  # Kubernetes objects nest a few tens of levels; parsers recurse
MAX_NUMBER_DIGITS = 100  # Kubernetes numbers are 64-bit; Python refuses past 4,300 digits with a ValueError
SIZE_FLAG = "--max-input-size"

_limit = {"bytes": DEFAULT_MAX_INPUT_BYTES}

_UNITS = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_BINARY = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}
_SIZE = re.compile(r"([0-9]+)(Ki|Mi|Gi|Ti|k|M|G|T|)")


def max_input_bytes() -> int:
    return _limit["bytes"]


def set_max_input_bytes(size: int) -> None:
    _limit["bytes"] = size


def parse_size(text: str) -> int:
    """A size as Kubernetes writes quantities (`2Gi`, `500M`, `1048576`); ValueError when it is none or 0."""
    m = _SIZE.fullmatch(text.strip())
    if m is None or int(m.group(1)) == 0:
        raise ValueError(text)
    return int(m.group(1)) * {**_UNITS, **_BINARY}[m.group(2)]


def shown_size(size: int) -> str:
    """`2 GiB`, `64 KiB`, `1.5 MiB`: the unit that keeps the number small."""
    for unit, factor in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= factor:
            value = size / factor
            return f"{value:.0f} {unit}" if value == int(value) or value >= 10 else f"{value:.1f} {unit}"
    return f"{size} bytes"


def _flag_value(size: int) -> str:
    """The smallest power-of-two quantity above `size`, as the flag takes it (`4Gi`)."""
    for suffix, factor in (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if size >= factor:
            n = 1
            while n * factor <= size:
                n *= 2
            return f"{n}{suffix}"
    return str(size + 1)


def too_large(name: str, size: int | None = None) -> InputError:
    """Input past the cap: its size when known (a regular file), else only that it goes on (a stream, a file
    that grows while read)."""
    limit = max_input_bytes()
    known = f"{shown_size(size)}, " if size is not None else ""
    return InputError(
        f"{name}: {known}more than the {shown_size(limit)} read from one input: give {SIZE_FLAG} "
        f"{_flag_value(max(size or 0, limit))} if it is meant to be read"
    )


def too_deep(name: str) -> InputError:
    return InputError(f"{name}: nested too deeply (more than {MAX_NESTING} levels)")


def number_too_long(name: str, where: str, digits: int) -> InputError:
    return InputError(f"{name}: {where}: a number of {digits:,} digits (at most {MAX_NUMBER_DIGITS} are read)")


_BRACKETS = re.compile(rb"[\[\]{}]")


def nested_too_deeply(data: bytes) -> bool:
    """Flow-style or JSON nesting deeper than MAX_NESTING (parsers recurse: PyYAML's C parser can crash on tens
    of thousands of levels, msgspec and Python raise RecursionError). Brackets inside quoted strings are
    counted too: a false alarm needs hundreds of them."""
    depth = 0
    for m in _BRACKETS.finditer(data):
        depth += 1 if m.group() in b"[{" else -1
        if depth > MAX_NESTING:
            return True
    return False
