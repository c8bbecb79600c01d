"""YAML text to plain data within the input limits (`limits`): nesting checked before the parser recurses,
integers of more digits than any Kubernetes number refused before Python converts them, aliases refused when
written out they would hold far more values or characters than the text (an alias bomb). For `--from-file`
and the files a command is given besides (`--config`)."""

from __future__ import annotations

import re
from typing import Any

from ... import apivalidation
from ...errors import InputError
from .limits import MAX_NUMBER_DIGITS, nested_too_deeply, number_too_long, too_deep

ALIAS_VALUES_FLOOR = 100_000  # values; past max(this, a third of the text's length) aliases are refused
ALIAS_CHARACTERS_FLOOR = 1_000_000  # characters of strings; past max(this, 10x the text's length) likewise
ALIAS_CHARACTERS_RATIO = 10


def _long_number_error() -> type:
    import yaml

    class LongNumber(yaml.YAMLError):
        def __init__(self, digits: int, mark: Any):
            super().__init__(f"a number of {digits} digits")
            self.digits, self.mark = digits, mark

    return LongNumber


_LONG_NUMBER: Any = None
_LOADER: Any = None


def yaml_loader() -> Any:
    """A safe loader (libyaml when present) that keeps timestamps as strings, as kubectl does, and refuses an
    integer of more than MAX_NUMBER_DIGITS digits (Python's own limit is a ValueError at 4,300)."""
    global _LOADER, _LONG_NUMBER
    if _LOADER is not None:
        return _LOADER
    import yaml

    _LONG_NUMBER = _long_number_error()
    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):  # type: ignore[valid-type,misc]
        pass

    Loader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in base.yaml_implicit_resolvers.items()
    }

    def integer(loader: Any, node: Any) -> Any:
        digits = sum(ch.isalnum() for ch in str(node.value))
        if digits > MAX_NUMBER_DIGITS:
            raise _LONG_NUMBER(digits, node.start_mark)
        return base.construct_yaml_int(loader, node)

    Loader.add_constructor("tag:yaml.org,2002:int", integer)
    _LOADER = Loader
    return Loader


_ALIAS = re.compile(r"(?:^|[\s\[{,])\*[^\s,\[\]{}]", re.MULTILINE)


def alias_at(text: str) -> tuple[int, int, str] | None:
    """(line, column, name) of the first YAML alias in `text`, None when it has none. A cheap search for
    what may be one (`*name` after a space, a bracket, a comma or a line start); only then are the parser's
    events read to tell an alias from a `*` in a plain value."""
    if not _ALIAS.search(text):
        return None
    import yaml

    try:
        for event in yaml.parse(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            if isinstance(event, yaml.AliasEvent):
                mark = event.start_mark
                line, col = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
                return line, col, str(event.anchor)
    except yaml.YAMLError:
        return None  # the load reports it
    return None


def _strings(node: Any, children: Any) -> int:
    keys = sum(len(k) for k in node if isinstance(k, str)) if isinstance(node, dict) else 0
    return keys + sum(len(c) for c in children if isinstance(c, str))


def expands_past(docs: list[Any], values: int, characters: int) -> str | None:
    """What the documents, with every alias written out, hold more of than allowed: "values" (containers
    and scalars) or "characters" (of strings: a few aliases of a long value widen the input as much as many
    of a short one); None within both. libyaml shares an aliased value instead of copying it, so this walks
    each distinct value once (memoised), and what is decoded next (msgspec, which copies) costs at most that."""
    sizes: dict[int, tuple[int, int]] = {}
    open_: set[int] = set()  # being sized: met again below itself, it is a value that contains itself
    total = (0, 0)
    for doc in docs:
        stack: list[tuple[Any, bool]] = [(doc, False)]
        while stack:
            node, done = stack.pop()
            if not isinstance(node, (list, dict)):
                continue
            key = id(node)
            if key in sizes:
                continue
            children = list(node.values()) if isinstance(node, dict) else node
            if not done:
                if key in open_:
                    return "values"
                open_.add(key)
                stack.append((node, True))
                stack.extend((c, False) for c in children if isinstance(c, (list, dict)) and id(c) not in sizes)
                continue
            inner = [sizes.get(id(c), (0, 0)) for c in children if isinstance(c, (list, dict))]
            count = 1 + len(children) + sum(v for v, _ in inner)
            chars = _strings(node, children) + sum(c for _, c in inner)
            sizes[key] = (min(count, values + 1), min(chars, characters + 1))
            open_.discard(key)
        if isinstance(doc, (list, dict)):
            size = sizes.get(id(doc), (0, 0))
        else:
            size = (1, len(doc) if isinstance(doc, str) else 0)
        total = (total[0] + size[0], total[1] + size[1])
        if total[0] > values:
            return "values"
        if total[1] > characters:
            return "characters"
    return None


def check_aliases(name: str, text: str, docs: list[Any]) -> None:
    """YAML aliases are refused when they multiply the input: kubectl never writes them, but other tools
    (PyYAML for a shared value) do, a little; an alias bomb of 1 KB would expand to gigabytes."""
    found = alias_at(text)
    if found is None:
        return
    values = max(len(text) // 3, ALIAS_VALUES_FLOOR)  # written out in full, a value takes 3 characters or more
    characters = max(len(text) * ALIAS_CHARACTERS_RATIO, ALIAS_CHARACTERS_FLOOR)
    past = expands_past(docs, values, characters)
    if past is not None:
        line, col, alias = found
        raise InputError(
            f"{name}: YAML aliases (the first at line {line}, column {col}: "
            f"*{apivalidation.shown(alias, 30)}) expand to more than "
            f"{values if past == 'values' else characters:,} {past}: write the objects out in full, as "
            "kubectl does"
        )


def yaml_documents(name: str, data: bytes, json_error: str = "") -> list[Any]:
    """The documents of a YAML (or JSON) text, each checked against the limits; `json_error`: what the JSON
    reader said of it, reported instead of YAML's complaint."""
    if nested_too_deeply(data):
        raise too_deep(name)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{name}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    import yaml

    loader = yaml_loader()
    try:
        docs = [doc for doc in yaml.load_all(text, Loader=loader) if doc is not None]
        check_aliases(name, text, docs)
        return docs
    except _LONG_NUMBER as exc:
        where = f"line {exc.mark.line + 1}, column {exc.mark.column + 1}" if exc.mark else "a value"
        raise number_too_long(name, where, exc.digits) from None
    except yaml.YAMLError as exc:
        if json_error:
            raise InputError(f"{name}: not valid JSON: {json_error}") from None
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"{name}: not valid YAML or JSON{where}: {problem}") from None
    except RecursionError:
        raise too_deep(name) from None
    except (MemoryError, ValueError, TypeError, OverflowError) as exc:
        raise InputError(f"{name}: not valid YAML or JSON: {type(exc).__name__}") from None
