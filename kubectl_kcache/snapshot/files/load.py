"""Reading `--from-file` input: files, folders and stdin; dumps, `kind: List`, typed lists (`NodeList`),
plain (multi-)documents; JSON or YAML in UTF-8, UTF-8 with a BOM or UTF-16/32 with a BOM.

JSON is decoded straight from the bytes: the container is read with its items left as `msgspec.Raw`
(unparsed), each item's kind and apiVersion are decoded alone (`decode.Head`-like, every other field
skipped), then the item is decoded into its kind's Struct. No tree of dicts is ever built. YAML goes
through libyaml, then `msgspec.convert`. Items of a typed list (`kubectl get --raw` output) that lack kind
or apiVersion take them from the list (NodeList -> Node, the list's apiVersion); anywhere else an object
must carry both.

Errors are InputErrors naming the file, the object and the path of the bad field. A folder's non-regular
files (FIFOs, sockets, devices) are skipped with a warning, never opened (a FIFO would block forever).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import msgspec

from ... import apivalidation
from ...errors import InputError
from ...objects import decode as d
from ...sharing import sharing
from ...text import json_type
from .. import kinds
from .layout import DUMP_HEAD, DUMP_META, SNAPSHOT_KIND, SNAPSHOT_VERSION, YAML_HEAD, MetaDoc
from .limits import max_input_bytes, nested_too_deeply, too_deep, too_large
from .paths import check_size, find_files, read_bytes, shown_path, stat_error
from .scope import check_same_cluster
from .yaml_docs import alias_at, yaml_documents, yaml_loader

# a dump's item as the API server writes it, and `dump` after it (kube/listing.raw_item): apiVersion, kind, then
# metadata's name, maybe generateName, then namespace
_ITEM_HEAD = re.compile(rb'\{"apiVersion":"[^"\\]+","kind":"[^"\\]+",')
_NAME = re.compile(_ITEM_HEAD.pattern + rb'"metadata":\{"name":"([^"\\]+)"[,}]')
_NAMESPACE = re.compile(
    _ITEM_HEAD.pattern + rb'"metadata":\{"name":"[^"\\]*",(?:"generateName":"[^"\\]*",)?"namespace":"([^"\\]*)"[,}]'
)
_RUN_NAMES = re.compile(rb"^" + _NAME.pattern, re.M)  # each line's head and name in a held run (`_run_plan`)
_RUN_LINES = re.compile(rb"\n" + _NAME.pattern)  # `_RUN_NAMES` of every line after the first (from its newline)
# from the `T` (a literal the regex engine finds fast), the date checked behind it
_TIMES = (re.compile(rb"T\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)"), re.compile(rb"\d{4}-\d\d-\d\d"))
_SPACE: Any = re.compile(rb"[ \t\r\n]*")  # matches always


def _truncated(name: str, objects: int) -> InputError:
    """A file laid out as `dump` writes it that ends before the record of its reads (`meta`, written last):
    cut short while it was written (the dump failed, or its output was closed) or copied. Its reads are
    unknown, so nothing can be said from it."""
    return InputError(
        f"{name}: the dump is truncated: it ends after {objects} object{'s' if objects != 1 else ''}, "
        "before the record of its reads (it was cut short while written or copied); take the dump "
        "again"
    )


class Loaded(msgspec.Struct):
    """What the files hold: typed objects, the dumps' meta, what plain files held, and warnings."""

    objects: list[tuple[str, Any]] = msgspec.field(default_factory=list)  # (snapshot field, object)
    metas: list[tuple[str, MetaDoc]] = msgspec.field(default_factory=list)  # (file, meta) of each dump
    plain_counts: dict[str, int] = msgspec.field(default_factory=dict)  # plural -> objects from non-dump input
    plain_files: list[str] = msgspec.field(default_factory=list)
    files: list[str] = msgspec.field(default_factory=list)
    object_count: int = 0  # every object seen, of any kind
    other_kinds: set[str] = msgspec.field(default_factory=set)  # kinds seen that the plugin does not read
    newest_time: str = ""  # the latest RFC 3339 time in files read whole (not after the real clock)
    warnings: list[str] = msgspec.field(default_factory=list)
    uids: dict[tuple[str, str, str], tuple[str, str]] = msgspec.field(default_factory=dict)


def _found(needle: Any, data: bytes) -> Iterator[int]:
    """Where a Scan's needle is found in `data`, at most once per line. A needle is bytes, found as they are,
    or (bytes, a regex, values or None): where the bytes are found, the regex matches from there, and its first
    group is one of the values when they are given. The bytes are looked for by the string search, which skips
    ahead by their length (the regex engine tries each `"` of a JSON line), and a value by a lookup (an
    alternation of many values tries each of them at every hit)."""
    literal, regex, values = (needle, None, None) if isinstance(needle, bytes) else needle
    at = data.find(literal)
    while at >= 0:
        m = regex.match(data, at) if regex is not None else None
        if regex is None or (m is not None and (values is None or m.group(1).decode("utf-8", "replace") in values)):
            yield at
            after = data.find(NEWLINE, at)
            if after < 0:
                return
            at = data.find(literal, after)
        else:
            at = data.find(literal, at + 1)


class _Where:
    """`$.items[N]` of a line of a held run (the run's first line's N, where the run starts in its file, where
    the line starts in the run), counted from the file when it is shown (a bad line): the run's bytes are not
    kept for it."""

    def __init__(self, first: int, path: str, offset: int, start: int):
        self.first, self.path, self.offset, self.start = first, path, offset, start

    def __str__(self) -> str:
        with open(self.path, "rb") as fh:
            fh.seek(self.offset)
            return f"$.items[{self.first + fh.read(self.start).count(NEWLINE)}]"


class _Every:
    def __contains__(self, name: object) -> bool:
        return True


_EVERY = _Every()


class Scan(msgspec.Struct, frozen=True):
    """What a Selection.later picker answers when which objects its command reads shows in their bytes: the
    objects named `names`, and those whose line one of `needles` (bytes regexes) finds: more than it reads,
    never fewer, as long as `enough` says so of the objects decoded; else every object of the field is."""

    names: frozenset[str]
    needles: tuple[Any, ...]  # bytes, or (bytes, a regex matched where they are, the values of its group or None)
    enough: Callable[[list[Any]], bool] = lambda objects: True
    # of the objects named or found, those the command reads (told a line's bytes or a decoded object); a
    # decoded object (a file read whole) is not looked for by its bytes: it is told this alone. None: all
    keeps: Callable[[Any], bool] | None = None

    def finds(self, line: bytes, name: str) -> bool:
        return name in self.names or any(next(_found(n, line), None) is not None for n in self.needles)

    def keeps_held(self, held: Any, name: str) -> bool:
        """Whether an object held on its own (not in a run) is read: its line's bytes, or decoded."""
        if isinstance(held, bytes) and not self.finds(held, name):
            return False
        return self.keeps is None or self.keeps(held)


class Selection(msgspec.Struct, frozen=True):
    """What a command reads of the input, as its live reads would: the snapshot fields to decode (None: all)
    and, per field, the one namespace whose objects are kept. Everything else is counted, not decoded, so
    why-group on a 50,000-node dump does not build 50,000 agent pods; a snapshot loaded so holds nothing
    else and serves only the command that chose the selection."""

    fields: frozenset[str] | None = None
    namespaces: Mapping[str, str] = msgspec.field(default_factory=dict)
    types: Mapping[str, type] = msgspec.field(default_factory=dict)  # field -> the Struct to decode it into instead
    # field -> which of its objects (by name) the command needs, known only once the rest is read (the pod's
    # node): told the objects of the other fields, it names them; only those are decoded, after the rest
    later: Mapping[str, Callable[[list[tuple[str, Any]]], set[str]]] = msgspec.field(default_factory=dict)
    # field -> what `later` names its held objects by instead of their name: told an item's bytes (a streamed
    # dump) or its decoded object, it gives the key (e.g. the node a pod runs on)
    later_keys: Mapping[str, Callable[[Any], str]] = msgspec.field(default_factory=dict)
    share: bool = False  # a fleet view: it holds whole fleets, so equal parts are kept once, as without a selection

    def key_of(self, kind: kinds.Kind, raw_or_obj: Any, name: str) -> str:
        """The key a held object is picked by: its name, unless `later_keys` says otherwise."""
        keyed = self.later_keys.get(kind.field)
        return keyed(raw_or_obj) if keyed is not None else name

    def skips(self, kind: kinds.Kind, raw: Any) -> bool:
        """Whether an item (JSON bytes, or plain data from YAML) is left out by its field or namespace."""
        if self.fields is not None and kind.field not in self.fields:
            return True
        namespace = self.namespaces.get(kind.field)
        if namespace is None or not isinstance(raw, dict):
            return namespace is not None and namespace_of(raw) != namespace
        md = raw.get("metadata")
        return (md.get("namespace") if isinstance(md, dict) else None) != namespace


class _Meta(msgspec.Struct, frozen=True):
    name: Any = None
    namespace: Any = None


class _MetaHead(msgspec.Struct, frozen=True):
    metadata: _Meta | None = None


def name_of(raw: Any) -> str:
    """metadata.name of an item (the bytes of a dump's line, also for a Selection's `later_keys`): read from
    the bytes that follow its head in a dump (the API server writes the name first), else decoded (every
    other field skipped)."""
    m = _NAME.match(raw)
    if m is not None:
        return str(m.group(1).decode("utf-8"))
    try:
        head = d.decode_json(raw, _MetaHead)
    except msgspec.ValidationError:
        return ""
    name = head.metadata.name if head.metadata is not None else None
    return name if isinstance(name, str) else ""


def namespace_of(raw: Any) -> Any:
    """metadata.namespace of an item (the bytes of a dump's line, also for a Selection's `later_keys`): from
    its first bytes as the API server writes them (name, maybe generateName, then namespace), else decoded
    (every other field skipped)."""
    m = _NAMESPACE.match(raw)
    if m is not None:
        return m.group(1).decode("utf-8")
    try:
        head = d.decode_json(raw, _MetaHead)
    except msgspec.ValidationError:
        return None  # decoded (and refused) in full
    return head.metadata.namespace if head.metadata is not None else None


def _line_col(data: bytes, offset: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, offset) + 1
    return line, offset - (data.rfind(b"\n", 0, offset) + 1) + 1


def _newest_time(data: bytes, out: Loaded) -> None:
    """Keep the latest RFC 3339 time written in `data` (creation times, conditions, events, entries): a
    plain export says nothing of when it was taken, and that is the closest it comes. Times after the real
    clock are not data about the past and are left out."""
    now = dt.datetime.now(dt.timezone.utc)
    best: tuple[dt.datetime, str] | None = None
    clock, date = _TIMES
    seen = {
        data[m.start() - 10 : m.end()]
        for m in clock.finditer(data)
        if m.start() >= 10 and date.fullmatch(data, m.start() - 10, m.start())
    }
    for raw in seen:  # each distinct time once
        text = raw.decode()
        t = _parse(text)
        if t is not None and t <= now and (best is None or t > best[0]):
            best = (t, text)
    if best is not None:
        current = _parse(out.newest_time)
        if current is None or best[0] > current:
            out.newest_time = best[1]


def _parse(text: str) -> Any:
    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None
    except ValueError:
        return None


# ---- JSON -----------------------------------------------------------------------------------------


class _Top(msgspec.Struct, frozen=True, rename="camel"):
    """The head of an object or container; everything but these fields is skipped."""

    kind: Any = None
    api_version: Any = None
    version: Any = None
    meta_raw: msgspec.Raw = msgspec.field(default=msgspec.Raw(b""), name="meta")
    items_raw: msgspec.Raw = msgspec.field(default=msgspec.Raw(b""), name="items")

    @property
    def meta(self) -> msgspec.Raw | None:
        return _present(self.meta_raw)

    @property
    def items(self) -> msgspec.Raw | None:
        return _present(self.items_raw)


LINES_CHUNK = 16 << 20


class _Lines:
    """The lines of a file (each with its end of line), read 16 MB at a time and given as views of the chunk:
    a 1.7 GB dump is not copied line by line. `rest()`: what follows the last line given."""

    def __init__(self, fh: Any, name: str):
        self.fh = fh
        self.name = name
        self.chunk = b""
        self.pos = 0
        self.size = 0

    def _read(self, size: int = -1) -> bytes:
        """Up to the cap, whatever the file grows to while it is read."""
        room = max_input_bytes() + 1 - self.size
        data: bytes = self.fh.read(room if size < 0 else min(size, room))
        self.size += len(data)
        if self.size > max_input_bytes():
            raise too_large(self.name)
        return data

    def __iter__(self) -> Iterator[memoryview]:
        carry = b""
        while True:
            chunk = self._read(LINES_CHUNK)
            if not chunk:
                if carry:  # a last line without its end
                    self.chunk, self.pos = carry, len(carry)
                    yield memoryview(carry)
                return
            view, pos = memoryview(chunk), 0
            if carry:  # the line cut by the previous chunk's end
                nl = chunk.find(b"\n")
                if nl < 0:
                    carry += chunk
                    continue
                self.chunk, self.pos = chunk, nl + 1
                line, carry = carry + chunk[: nl + 1], b""
                yield memoryview(line)
                pos = self.pos  # (`run` may have moved on)
            while True:
                nl = chunk.find(b"\n", pos)
                if nl < 0:
                    carry = chunk[pos:]
                    self.chunk, self.pos = b"", 0
                    break
                self.chunk, self.pos = chunk, nl + 1
                yield view[pos : nl + 1]
                pos = self.pos

    def run(self, ends: Any, head: bytes) -> tuple[int, int]:
        """Passes over the whole lines that follow the line just given, up to the first newline `ends` finds
        (a regex from a newline: where the run of alike lines stops) or the chunk's last whole line; returns
        (lines, bytes) passed over, never a line cut by the chunk's end. Every line of a run starts with
        `head` after its newline (how they are counted)."""
        chunk, pos = self.chunk, self.pos
        if not pos or pos >= len(chunk):
            return 0, 0
        m = ends.search(chunk, pos - 1)
        end = m.start() if m is not None else chunk.rfind(b"\n")
        if end < pos:
            return 0, 0
        self.pos = end + 1
        return chunk.count(head, pos - 1, end), end + 1 - pos

    def rest(self) -> bytes:
        tail = self._read()
        return bytes(self.chunk[self.pos :]) + tail


_HEADS: dict[bytes, _Top] = {}


def _dump_prefix(line: Any) -> tuple[bytes, _Top] | None:
    """(the head's bytes, the head): the kind and apiVersion of a dump's item from its first bytes, where `dump`
    writes them (`{"apiVersion":"v1","kind":"Node",`, kube/listing.raw_item), without parsing the rest of the
    item: the objects a command does not read (most of a 50,000-node dump for why-group) are skipped unparsed.
    None when the item does not start so (then its head is decoded)."""
    m = _ITEM_HEAD.match(line)
    if m is None:
        return None
    prefix = m.group(0)
    top = _HEADS.get(prefix)
    if top is None:
        text = prefix.decode("utf-8")
        api_version, kind = text[len('{"apiVersion":"') :].split('","kind":"')
        top = _HEADS[prefix] = _Top(kind=kind[:-2], api_version=api_version)
    return prefix, top


NEWLINE = b"\n"
_RUN = "\x00run"  # Loader.held: a run of a streamed dump's lines, held by name together (no name has a NUL)


def _present(raw: msgspec.Raw) -> msgspec.Raw | None:
    """None for a field that is absent or null."""
    return None if len(raw) == 0 or bytes(raw).strip() == b"null" else raw


def _open_regular(path: str) -> Any:
    """The file opened for reading, or None when it is not a regular file (a pipe can be read once only: the
    caller reads it whole)."""
    try:
        return open(path, "rb") if stat.S_ISREG(os.stat(path).st_mode) else None
    except OSError:
        return None


class _Loader:
    def __init__(self, loaded: Loaded, select: Selection | None = None):
        self.out = loaded
        self.select = select
        self.offset = -1  # where the item being read starts in its file (streamed dumps), else -1
        self.path = ""  # the streamed dump
        # Selection.later: (file, name, where, kind, dump, object or None, offset, length) of each held back
        self.held: list[tuple[str, str, str, kinds.Kind, bool, Any, int, int]] = []
        # a dump line's head -> (the regex where a run of lines the selection reads alike ends, held or not)
        self.plans: dict[bytes, tuple[Any, bool] | None] = {}

    def finish(self) -> None:
        """The objects held back for Selection.later: those the command names, decoded (again read from
        their file when the dump was streamed), in input order. One field after the other, in the order of
        `later`: a picker is told the objects of the fields picked before it too."""
        if not self.held or self.select is None:
            return
        found: list[tuple[tuple[int, int], kinds.Kind, str, Any, bool]] = []  # (input order, kind, file, obj, dump)
        for f, pick in self.select.later.items():
            want = pick(self.out.objects + [(f0, o) for _, k, _, o, _ in found for f0 in (k.field,)])
            picked = self._picked(f, want)
            if isinstance(want, Scan) and not want.enough([o for _, _, _, o, _ in picked]):
                picked = self._picked(f, _EVERY)  # every object of the field, in input order
            found += picked
        found.sort(key=lambda x: x[0])
        for _, kind, path, obj, dump in found:
            self._add(shown_path(path), kind, obj, dump)
        self.held.clear()

    def _picked(self, field: str, want: Any) -> list[tuple[tuple[int, int], kinds.Kind, str, Any, bool]]:
        """The held objects of `field` that `want` picks (a set of keys, anything that answers `in`, a Scan),
        decoded, each with its place in the input."""
        scan = want if isinstance(want, Scan) else None
        out: list[tuple[tuple[int, int], kinds.Kind, str, Any, bool]] = []
        for i, (path, name, where, kind, dump, obj, offset, length) in enumerate(self.held):
            if kind.field != field:
                continue
            if name is _RUN:
                picks = self._run_picks(path, int(where), kind, offset, length, want)
            elif scan is not None and want is not _EVERY:
                x = obj if obj is not None else self._reread(path, offset, length)
                picks = [(kind, path, where, x, dump)] if scan.keeps_held(x, name) else []
            elif want is _EVERY or name in want:
                picks = [(kind, path, where, obj if obj is not None else self._reread(path, offset, length), dump)]
            else:
                picks = []
            if not picks:
                self._skipped(kind, dump)
            for j, (kind, path, where, x, dump) in enumerate(picks):
                out.append(((i, j), kind, path, self._held_object(kind, path, where, x), dump))
        return out

    @staticmethod
    def _reread(path: str, offset: int, length: int) -> bytes:
        with open(path, "rb") as fh:
            fh.seek(offset)
            return fh.read(length)

    def _held_object(self, kind: kinds.Kind, path: str, where: Any, x: Any) -> Any:
        """A held object, decoded from its bytes when it was held so."""
        if not isinstance(x, bytes):
            return x
        try:
            return self._decode(kind, x)
        except msgspec.ValidationError as exc:
            what = f"{kind.kind} {name_of(x)}"
            raise d.object_error(exc, origin=shown_path(path), what=what, base=str(where)) from None

    def _run_picks(
        self, path: str, first: int, kind: kinds.Kind, offset: int, length: int, wanted: Any
    ) -> list[tuple[kinds.Kind, str, Any, Any, bool]]:
        """The lines of a held run (`_run_plan`) that the command wants, as bytes, in input order: by name (a
        set, or anything that answers `in`), or for a `Scan` its names and the lines its needles find."""
        data = self._reread(path, offset, length)
        names = _RUN_NAMES
        scan = wanted if isinstance(wanted, Scan) else None
        by_name = scan.names if scan is not None else wanted
        starts: set[int] = set()
        if isinstance(by_name, (set, frozenset)) and len(by_name) <= 4:
            # a few names: each found by its bytes, then checked to be its line's name (`"NAME`: the needle
            # ends on a character of the name, which the string search skips by faster than a quote)
            for want in by_name:
                if not isinstance(want, str) or not want:
                    continue
                needle = b'"' + want.encode("utf-8")
                at = data.find(needle)
                while at >= 0:
                    start = data.rfind(NEWLINE, 0, at) + 1
                    m = names.match(data, start)
                    if m is not None and m.start(1) == at + 1 and m.end(1) == at + len(needle):
                        starts.add(start)
                    at = data.find(needle, at + 1)
        else:  # each line's head (from its newline: a literal the regex engine looks for fast)
            first_line = names.match(data)
            if first_line is not None and first_line.group(1).decode("utf-8") in by_name:
                starts.add(0)
            starts.update(m.start() + 1 for m in _RUN_LINES.finditer(data) if m.group(1).decode("utf-8") in by_name)
        if scan is not None:
            for needle in scan.needles:
                starts.update(data.rfind(NEWLINE, 0, at) + 1 for at in _found(needle, data))
        out: list[tuple[kinds.Kind, str, Any, Any, bool]] = []
        for start in sorted(starts):
            end = data.find(NEWLINE, start)
            end = len(data) if end < 0 else end
            while end > start and data[end - 1] in b"\r\n":
                end -= 1
            if end > start and data[end - 1] == 44:  # b","
                end -= 1
            line = data[start:end]
            if scan is not None and scan.keeps is not None and not scan.keeps(line):
                continue
            out.append((kind, path, _Where(first, path, offset, start), line, True))  # (where: counted if bad)
        return out

    def _run_plan(self, prefix: bytes, top: _Top) -> tuple[Any, bool] | None:
        """How the lines that follow a streamed dump's line with this head are read together, when the selection
        reads them alike without decoding them: (a regex finding the newline after the last line of such a run,
        whether the run is held for `Selection.later` by name). Skipped alike: an unread kind or field, or
        another namespace than the field's (as `Selection.skips` reads it from the line); held alike: a field
        named later by name (`_name_of`). None: each line is read on its own."""
        if prefix in self.plans:
            return self.plans[prefix]
        select = self.select
        kind = kinds.lookup(top.api_version, top.kind) if isinstance(top.kind, str) else None
        head = re.escape(prefix)
        plan: tuple[Any, bool] | None = None
        if select is None or not isinstance(top.kind, str) or not isinstance(top.api_version, str):
            plan = None
        elif kind is None or (select.fields is not None and kind.field not in select.fields):
            plan = (re.compile(rb"\n(?!" + head + rb")"), False)
        elif kind.field in select.namespaces:
            ns = re.escape(select.namespaces[kind.field].encode("utf-8"))
            other = (
                rb'"metadata":\{"name":"[^"\\]*",(?:"generateName":"[^"\\]*",)?"namespace":"(?!'
                + ns
                + rb'")[^"\\]*"[,}]'
            )
            plan = (re.compile(rb"\n(?!" + head + other + rb")"), False)
        elif kind.field in select.later and kind.field not in select.later_keys:
            plan = (re.compile(rb"\n(?!" + head + rb'"metadata":\{"name":"[^"\\]+"[,}])'), True)
        self.plans[prefix] = plan
        return plan

    # -- per file --
    def load(self, path: str) -> None:
        if path != "-" and (
            self._streamed(path, DUMP_HEAD + b"\n", self._stream_dump)
            or self._streamed(path, YAML_HEAD, self._stream_yaml_dump)
        ):
            return
        data = read_bytes(path)
        _newest_time(data, self.out)
        start = len(data) - len(data.lstrip())
        if data[start : start + 1] in (b"{", b"["):
            try:
                json_error = self._json_or_stream(path, data)
            except RecursionError:
                raise too_deep(shown_path(path)) from None
            if json_error is not None:
                self._yaml(path, data, json_error)  # JSON is YAML too (e.g. flow style with unquoted keys)
            return
        self._yaml(path, data, "")

    def _json_or_stream(self, path: str, data: bytes) -> str | None:
        """JSON read: one value, or several one after the other; else the problem, for the YAML reader."""
        try:
            self._json(path, data)
            return None
        except msgspec.DecodeError as exc:
            values = _json_values(data) if "trailing characters" in str(exc) else None
            if isinstance(values, str):
                raise InputError(f"{shown_path(path)}: not valid JSON: {values}") from None
            if values is not None:  # `>>` of two `kubectl get -o json`, or JSON Lines
                self._json_stream(path, data, values)
                return None
            if len(data) > 10_000_000:  # too large to parse again as YAML for a better message
                raise InputError(f"{shown_path(path)}: not valid JSON: {_json_problem(exc, data)}") from None
            return _json_problem(exc, data)

    def _mark(self) -> tuple[int, int, dict[str, int], int, int]:
        out = self.out
        return len(out.objects), out.object_count, dict(out.plain_counts), len(out.warnings), len(self.held)

    def _forget(self, mark: tuple[int, int, dict[str, int], int, int]) -> None:
        """Forget what was read since `mark`."""
        del self.out.objects[mark[0] :]
        self.out.object_count, self.out.plain_counts = mark[1], mark[2]
        del self.out.warnings[mark[3] :]
        del self.held[mark[4] :]

    def _streamed(self, path: str, head: bytes, read: Callable[[Any, str, str], bool]) -> bool:
        """A regular file laid out as `dump` writes it (starting with `head`) is read as it streams in, by
        `read(file, path, shown name)`, so that it never sits in memory whole. False, with nothing kept,
        when it is laid out any other way (`read` says so from its head on): the caller reads it whole."""
        fh = _open_regular(path)
        if fh is None:
            return False
        with fh:
            if fh.read(len(head)) != head:
                return False
            check_size(path, os.fstat(fh.fileno()).st_size)
            start = self._mark()
            if read(fh, path, shown_path(path)):
                return True
        self._forget(start)
        return False

    def _stream_dump(self, fh: Any, path: str, name: str) -> bool:
        """A dump as `kubectl kcache dump -o json` writes it (snapshot/dump.py: one item per line, meta last),
        its head read (`_streamed`): read line by line; False when it is laid out any other way."""
        offset = len(DUMP_HEAD) + 1
        self.path = path
        lines = _Lines(fh, name)
        objects = 0
        index = -1
        for line in lines:
            index += 1
            self.offset, offset = offset, offset + len(line)
            if line[: len(DUMP_META)] == DUMP_META:
                meta = bytes(line[len(DUMP_META) :]).rstrip()
                rest = lines.rest().strip()
                if not meta.endswith(b"}}") and line[-1] != 10 and not rest:
                    raise _truncated(name, index)  # cut in the middle of the meta
                if not meta.endswith(b"}}") or rest:
                    break
                try:
                    self._meta(path, msgspec.Raw(meta[:-1]))
                except InputError:
                    break
                return True
            end = len(line)  # the item is the line without its end and comma, as a view (no copy)
            while end and line[end - 1] in b"\r\n":
                end -= 1
            if end and line[end - 1] == 44:  # b","
                end -= 1
            if not line or line[0] != 123:  # b"{"
                break
            item = line[:end]
            where = f"$.items[{index}]"
            try:
                found = _dump_prefix(line)
                top = found[1] if found is not None else self._head(name, item, where)
                self._json_object(name, item, where, None, top=top, dump=True)
            except (msgspec.DecodeError, InputError):
                if line[-1] != 10 and not lines.rest():
                    raise _truncated(name, index) from None  # the last line, cut in its middle
                break  # read whole: the error is then reported with its line and column
            finally:
                self.offset = -1
            objects = index + 1
            plan = self._run_plan(*found) if found is not None and self.select is not None else None
            if plan is not None and found is not None:  # the lines after it the selection reads alike, together
                count, size = lines.run(plan[0], NEWLINE + found[0])
                if count:
                    if plan[1]:
                        self.held.append(
                            (self.path, _RUN, str(index + 1), self._kind_of(top), True, None, offset, size)
                        )
                    self.out.object_count += count
                    index += count
                    offset += size
                    objects = index + 1
        else:
            raise _truncated(name, objects)  # every line an object, and the end before the meta
        return False  # not laid out as written by dump: read it whole

    def _stream_yaml_dump(self, fh: Any, path: str, name: str) -> bool:
        """A YAML dump as `dump -o yaml` writes it (`kind`, `version`, `items:` then each item as a `- `
        block at column 0, `meta:` last), its head read (`_streamed`), is parsed item by item: libyaml builds
        one item's tree at a time instead of the whole document's (gigabytes for a large cluster). False for
        any other layout."""
        import yaml

        loader = yaml_loader()
        chunk: list[bytes] = []
        index = 0

        def flush() -> bool:
            nonlocal index
            if not chunk:
                return True
            text = b"".join(chunk)
            chunk.clear()
            try:
                if nested_too_deeply(text):
                    return False
                decoded = text.decode("utf-8")
                if alias_at(decoded) is not None:
                    return False  # read whole: the error is then reported with its line
                items = yaml.load(decoded, Loader=loader)
            except (yaml.YAMLError, UnicodeDecodeError, RecursionError, ValueError, TypeError):
                return False
            if not isinstance(items, list) or len(items) != 1 or not isinstance(items[0], dict):
                return False
            try:
                self._py_object(name, items[0], f"$.items[{index}]", None, dump=True)
            except InputError:
                return False
            index += 1
            return True

        read = len(YAML_HEAD)
        for line in fh:
            read += len(line)
            if read > max_input_bytes():
                raise too_large(name)
            if line.startswith(b"- "):
                if not flush():
                    break
                chunk.append(line)
            elif line.startswith(b"meta:"):
                if not flush():
                    break
                try:
                    rest = fh.read(max_input_bytes() + 1 - read)
                    if read + len(rest) > max_input_bytes():
                        raise too_large(name)
                    text = (line + rest).decode("utf-8")
                    if alias_at(text) is not None:
                        break
                    doc = yaml.load(text, Loader=loader)
                except (yaml.YAMLError, UnicodeDecodeError, RecursionError, ValueError, TypeError):
                    break
                if not isinstance(doc, dict) or set(doc) != {"meta"} or not isinstance(doc["meta"], dict):
                    break
                try:
                    self._meta(path, doc["meta"])
                except InputError:
                    break
                return True
            elif (line.startswith((b" ", b"\t")) or not line.strip()) and chunk:
                chunk.append(line)  # (a blank line belongs to a multi-line scalar of the item)
            else:
                break
        else:
            flush()  # a last item cut in its middle is not counted
            raise _truncated(name, index)  # the end before the meta
        return False

    def _json(self, path: str, data: bytes) -> None:
        name = shown_path(path)
        if data.lstrip()[:1] == b"[":
            elements = d.decode_json(data, list[msgspec.Raw])
            self.out_is_plain(path)
            for i, raw in enumerate(elements):
                self._json_value(name, raw, f"$[{i}]", None)
            return
        top = self._head(name, data, "$")
        if top.kind == SNAPSHOT_KIND:
            self._snapshot_head(name, top.version)
            if top.meta is None and data.startswith(DUMP_HEAD + b"\n"):
                raise _truncated(name, len(d.decode_json(top.items, list[msgspec.Raw])) if top.items else 0)
            items = self._json_items(name, top.items, "$.items", "snapshot")
            self._meta(path, top.meta)
            for i, raw in enumerate(items):
                self._json_object(name, raw, f"$.items[{i}]", None, dump=True)
            return
        self.out_is_plain(path)
        self._json_value(name, data, "$", None, top=top)

    def _json_stream(self, path: str, data: bytes, values: list[tuple[int, int]]) -> None:
        """Several top-level JSON values in one file, each read in turn as kubectl's decoder reads them."""
        name = shown_path(path)
        self.out_is_plain(path)
        line, counted = 1, 0  # line numbers counted on from the previous value's: linear in the file
        for start, end in values:
            raw = data[start:end]
            line += data.count(b"\n", counted, start)
            counted = start
            where = f"line {line}: $"
            try:
                if raw[:1] == b"{" and self._head(name, raw, where).kind == SNAPSHOT_KIND:
                    raise InputError(f"{name}: {where}: a KcacheSnapshot must be the only document of its file")
                self._json_value(name, raw, where, None)
            except msgspec.DecodeError as exc:
                raise InputError(f"{name}: not valid JSON: {_json_problem(exc, data, start)}") from None

    def out_is_plain(self, path: str) -> None:
        if path not in self.out.plain_files:
            self.out.plain_files.append(path)

    def _head(self, name: str, raw: Any, where: str) -> _Top:
        try:
            return d.decode_json(raw, _Top)
        except msgspec.ValidationError:
            raise InputError(f"{name}: {where}: expected a Kubernetes object") from None

    def _json_items(self, name: str, raw: Any, where: str, what: str) -> list[msgspec.Raw]:
        if raw is None:
            raise InputError(f"{name}: {what} has no items list")
        try:
            return d.decode_json(raw, list[msgspec.Raw])
        except msgspec.ValidationError:
            raise InputError(f"{name}: {where}: {what} items must be a list") from None

    def _json_value(
        self, name: str, raw: Any, where: str, default: tuple[str, str] | None, top: _Top | None = None
    ) -> None:
        self._walk(name, raw, where, default, _JsonView(self, name), top)

    def _walk(
        self,
        name: str,
        root: Any,
        where: str,
        default: tuple[str, str] | None,
        view: _JsonView | _PyView,
        top: Any = None,
    ) -> None:
        """THE walk over plain input, JSON or YAML alike: a list's members, a `...List`'s items (their kind
        and apiVersion defaulting to the list's element), and each object to its kind's Struct."""
        stack: list[tuple[Any, str, tuple[str, str] | None, Any]] = [(root, where, default, top)]
        while stack:
            node, at, dflt, head = stack.pop()
            members = view.members(node, at) if head is None else None
            if members is not None:
                stack.extend(reversed([(x, f"{at}[{i}]", dflt, None) for i, x in enumerate(members)]))
                continue
            head = head if head is not None else view.head(node, at)
            kind, api_version, items = view.fields(head)
            if kind == SNAPSHOT_KIND:
                raise InputError(f"{name}: {at}: a KcacheSnapshot inside another document")
            if isinstance(kind, str) and kind.endswith("List") and items is not None:
                element = _element_kind(kind, api_version)
                self._exported(element)
                listed = view.items(items)
                if listed is None:
                    raise InputError(f"{name}: {at}.items: {kind} items must be a list")
                stack.extend(reversed([(x, f"{at}.items[{i}]", element, None) for i, x in enumerate(listed)]))
                continue
            view.object(node, at, dflt, head)

    def _json_object(
        self,
        name: str,
        raw: Any,
        where: str,
        default: tuple[str, str] | None,
        top: _Top | None = None,
        dump: bool = False,
    ) -> None:
        if top is None:
            if bytes(raw).lstrip()[:1] != b"{":
                raise InputError(f"{name}: {where}: snapshot item is {_json_type(bytes(raw).strip())}, not an object")
            top = self._head(name, raw, where)
        kind = self._kind(name, where, top.kind, top.api_version, default)
        self.out.object_count += 1
        if kind is None:
            return
        if self.select is not None and self.select.skips(kind, raw):
            self._skipped(kind, dump)
            return
        if self.select is not None and kind.field in self.select.later:
            self._hold(name, kind, raw, where, dump)
            return
        try:
            obj = self._decode(kind, raw)
        except msgspec.ValidationError as exc:
            head = d.decode_json(raw, d.Head)
            what = f"{top.kind} {_who(head)}".strip()
            raise d.object_error(exc, origin=name, what=what, base=where) from None
        self._add(name, kind, obj, dump)

    def _decode(self, kind: kinds.Kind, raw: Any) -> Any:
        if self.select is not None and kind.field in self.select.types:
            return d.decode_json(raw, self.select.types[kind.field])
        return kind.decode_json(raw)

    def _hold(self, name: str, kind: kinds.Kind, raw: Any, where: str, dump: bool) -> None:
        """Selection.later: a streamed item kept as its name and place in the file, decoded in `finish` if
        the command names it; an item of a file read whole is decoded now and kept aside."""
        if self.offset < 0:
            try:
                obj = self._decode(kind, raw)
            except msgspec.ValidationError as exc:
                raise d.object_error(exc, origin=name, what=kind.kind, base=where) from None
            key = self.select.key_of(kind, obj, obj.metadata.name) if self.select is not None else obj.metadata.name
            self.held.append((name, key, where, kind, dump, obj, -1, 0))
            return
        keyed = self.select is not None and kind.field in self.select.later_keys
        key = self.select.key_of(kind, raw, "") if keyed and self.select is not None else name_of(raw)
        self.held.append((self.path, key, where, kind, dump, None, self.offset, len(raw)))

    def _kind_of(self, top: _Top) -> kinds.Kind:
        kind = kinds.lookup(top.api_version, top.kind)
        assert kind is not None
        return kind

    # -- shared --
    def _skipped(self, kind: kinds.Kind, dump: bool) -> None:
        """An object the selection leaves out still counts as one of its kind in the input."""
        if not dump:
            self.out.plain_counts[kind.plural] = self.out.plain_counts.get(kind.plural, 0) + 1

    def _exported(self, element: tuple[str, str] | None) -> None:
        """A typed list (`PodList`, even empty) says its kind was exported: none in it means none exist."""
        kind = kinds.lookup(element[1], element[0]) if element is not None else None
        if kind is not None:
            self.out.plain_counts.setdefault(kind.plural, 0)

    def _kind(
        self, name: str, where: str, kind: Any, api_version: Any, default: tuple[str, str] | None
    ) -> kinds.Kind | None:
        if kind is None and api_version is None and default is not None:
            kind, api_version = default
        elif default is not None:
            kind = default[0] if kind is None else kind
            api_version = default[1] if api_version is None else api_version
        if not isinstance(kind, str) or not kind:
            raise InputError(f"{name}: {where}: an object without kind" + _hint(default))
        if not isinstance(api_version, str) or not api_version:
            raise InputError(f"{name}: {where}: {kind} without apiVersion" + _hint(default))
        found = kinds.lookup(api_version, kind)
        if found is None:
            self.out.other_kinds.add(f"{kind} ({api_version})" if "/" in api_version else kind)
        return found

    def _add(self, name: str, kind: kinds.Kind, obj: Any, dump: bool) -> None:
        md = obj.metadata
        errors = apivalidation.metadata_errors(kind.kind, md.name, md.namespace, md.labels, apivalidation.shown)
        if errors:
            more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
            raise InputError(
                f"{name}: {kind.kind} {apivalidation.shown(md.name)}: Kubernetes would refuse this "
                f"object: {errors[0]}{more}"
            )
        self.out.objects.append((kind.field, obj))
        if not dump:
            self.out.plain_counts[kind.plural] = self.out.plain_counts.get(kind.plural, 0) + 1
        if md.uid:
            key = (kind.field, md.namespace or "", md.name)
            seen = self.out.uids.get(key)
            if seen is None:
                self.out.uids[key] = (md.uid, name)
            elif seen[0] != md.uid and seen[1] != name:
                self.out.warnings.append(
                    f"{kind.kind} {md.key} has uid {md.uid} in {name} but {seen[0]} in {seen[1]}: the input may "
                    "mix two clusters (or an object was recreated); the later file wins"
                )
                self.out.uids[key] = (md.uid, name)

    def _snapshot_head(self, name: str, version: Any) -> None:
        if type(version) is not int or version != SNAPSHOT_VERSION:  # `true` == 1 in Python: not a version
            shown = "missing" if version is None else _shown_value(version)
            raise InputError(f"{name}: snapshot version {shown} is not supported (expected {SNAPSHOT_VERSION})")

    def _meta(self, path: str, raw: Any) -> None:
        name = shown_path(path)
        if raw is None:
            meta = MetaDoc()
        else:
            try:
                meta = d.decode_json(raw, MetaDoc) if not isinstance(raw, dict) else d.convert(raw, MetaDoc)
            except msgspec.ValidationError as exc:
                text = str(exc)
                what = "meta.reads" if "reads" in text else "meta"
                raise InputError(f"{name}: snapshot {what} is malformed: {d.describe(exc, '$.meta')}") from None
        for key, value in (
            ("cluster", meta.cluster),
            ("server", meta.server),
            ("takenAt", meta.taken_at),
            ("serverVersion", meta.server_version),
        ):
            if value is not None and not isinstance(value, str):
                raise InputError(f"{name}: snapshot meta.{key} must be a string, found {json_type(value)}")
        self.out.metas.append((name, meta))

    # -- YAML --
    def _yaml(self, path: str, data: bytes, json_error: str) -> None:
        name = shown_path(path)
        docs = yaml_documents(name, data, json_error)
        plain = False
        for n, doc in enumerate(docs):
            where = "$" if len(docs) == 1 else f"document {n + 1}: $"
            if isinstance(doc, dict) and doc.get("kind") == SNAPSHOT_KIND:
                self._snapshot_head(name, doc.get("version"))
                if "meta" not in doc and data.startswith(YAML_HEAD):
                    raise _truncated(name, len(doc.get("items") or ()))  # laid out by dump, its end missing
                items = doc.get("items")
                if not isinstance(items, list):
                    raise InputError(f"{name}: snapshot has no items list")
                meta = doc.get("meta")
                if meta is not None and not isinstance(meta, dict):
                    raise InputError(f"{name}: snapshot meta must be an object")
                self._meta(path, meta or {})
                seen: set[int] = set()
                for i, item in enumerate(items):
                    if not isinstance(item, dict):
                        raise InputError(f"{name}: snapshot item {i} is {json_type(item)}, not an object")
                    _once(name, item, seen)
                    self._py_object(name, item, f"{where}.items[{i}]", None, dump=True)
                continue
            plain = True
            self._walk(name, doc, where, None, _PyView(self, name, set()))
        if plain or not docs:
            self.out_is_plain(path)

    def _py_object(
        self, name: str, obj: dict[str, Any], where: str, default: tuple[str, str] | None, dump: bool = False
    ) -> None:
        kind = self._kind(name, where, obj.get("kind"), obj.get("apiVersion"), default)
        self.out.object_count += 1
        if kind is None:
            return
        if self.select is not None and self.select.skips(kind, obj):
            self._skipped(kind, dump)
            return
        try:
            typed = (
                kind.convert(obj)
                if self.select is None or kind.field not in self.select.types
                else d.convert(obj, self.select.types[kind.field])
            )
        except msgspec.ValidationError as exc:
            what = f"{kind.kind} {_who(d.convert(obj, d.Head))}".strip()
            raise d.object_error(exc, origin=name, what=what, base=where) from None
        except (RecursionError, OverflowError, ValueError, TypeError) as exc:
            raise InputError(f"{name}: {where}: {type(exc).__name__} while reading the object") from None
        if self.select is not None and kind.field in self.select.later:
            key = self.select.key_of(kind, typed, typed.metadata.name)
            self.held.append((name, key, where, kind, dump, typed, -1, 0))
            return
        self._add(name, kind, typed, dump)


# What the walk needs of one input form (`_JsonView`, `_PyView`): a node's members when it is a list (else None,
# or an error when it is no object either), its head (kind, apiVersion, items), a list's items, and the object.


class _JsonView:
    """JSON read from the bytes: nodes are `msgspec.Raw`, decoded only as far as the walk looks."""

    def __init__(self, loader: _Loader, name: str):
        self.loader, self.name = loader, name

    def members(self, node: Any, at: str) -> list[Any] | None:
        first = bytes(node).lstrip()[:1]
        if first == b"[":
            return d.decode_json(node, list[msgspec.Raw])
        if first != b"{":
            raise InputError(f"{self.name}: {at}: expected Kubernetes objects, found {_json_type(bytes(node).strip())}")
        return None

    def head(self, node: Any, at: str) -> _Top:
        return self.loader._head(self.name, node, at)

    def fields(self, head: _Top) -> tuple[Any, Any, Any]:
        return head.kind, head.api_version, head.items

    def items(self, items: Any) -> list[Any] | None:
        try:
            return d.decode_json(items, list[msgspec.Raw])
        except msgspec.ValidationError:
            return None

    def object(self, node: Any, at: str, default: tuple[str, str] | None, head: Any) -> None:
        self.loader._json_object(self.name, node, at, default, top=head)


class _PyView:
    """YAML through libyaml: nodes are plain lists and dicts; each container is visited once (aliases)."""

    def __init__(self, loader: _Loader, name: str, seen: set[int]):
        self.loader, self.name, self.seen = loader, name, seen

    def members(self, node: Any, at: str) -> list[Any] | None:
        if isinstance(node, (list, dict)):
            _once(self.name, node, self.seen)
        if isinstance(node, list):
            return node
        if not isinstance(node, dict):
            raise InputError(f"{self.name}: {at}: expected Kubernetes objects, found {json_type(node)}")
        return None

    def head(self, node: Any, at: str) -> Any:
        return node

    def fields(self, head: Any) -> tuple[Any, Any, Any]:
        return head.get("kind"), head.get("apiVersion"), head.get("items")

    def items(self, items: Any) -> list[Any] | None:
        return items if isinstance(items, list) else None

    def object(self, node: Any, at: str, default: tuple[str, str] | None, head: Any) -> None:
        self.loader._py_object(self.name, node, at, default)


def _hint(default: tuple[str, str] | None) -> str:
    return "" if default else " (every object needs kind and apiVersion, except the items of a typed list)"


def _who(head: d.Head) -> str:
    text = head.describe()
    return text.split(" ", 1)[1] if " " in text else ""


def _element_kind(list_kind: str, api_version: Any) -> tuple[str, str] | None:
    """The kind of a typed list's items (NodeList -> Node); None for `kind: List`."""
    if list_kind == "List" or not isinstance(api_version, str) or not api_version:
        return None
    return list_kind[: -len("List")], api_version


def _once(name: str, node: Any, seen: set[int]) -> None:
    if id(node) in seen:
        raise InputError(
            f"{name}: a YAML alias repeats objects (or refers to itself); aliases are not expanded in object lists"
        )
    seen.add(id(node))


def _shown_value(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return json_type(value)
    return apivalidation.shown(value) if isinstance(value, str) else msgspec.json.encode(value).decode()


def _json_type(text: bytes) -> str:
    first = text[:1]
    if first == b'"':
        return "a string"
    if first in (b"t", b"f"):
        return "a boolean"
    if first == b"n":
        return "null"
    if first == b"[":
        return "a list"
    return "a number"


def _json_values(data: bytes) -> list[tuple[int, int]] | str | None:
    """(start, end) of each top-level object or list when `data` is several of them one after the other
    (white space between them at most); the problem (line, column, what) when one of them after the first
    is malformed; None when `data` is not such a sequence. Each value's end is where the decoder finds
    trailing characters after it, so every value is parsed once, by msgspec."""
    view = memoryview(data)
    out: list[tuple[int, int]] = []
    pos = 0
    while True:
        pos = _SPACE.match(data, pos).end()
        if pos >= len(data):
            break
        if data[pos : pos + 1] not in (b"{", b"["):
            return None if not out else f"line {_line_col(data, pos)[0]}: expected an object or a list"
        try:
            msgspec.json.decode(view[pos:], type=msgspec.Raw)
        except msgspec.DecodeError as exc:
            m = re.search(r"trailing characters \(byte (\d+)\)", str(exc))
            if m is None:
                return _json_problem(exc, data, pos) if out else None
            # msgspec names the byte after the first trailing character; should it name that character
            # itself, the byte before is the value's last (`}` or `]`) or white space
            nxt = pos + int(m.group(1))
            if data[nxt - 1 : nxt] not in (b"}", b"]", b" ", b"\t", b"\r", b"\n"):
                nxt -= 1
            out.append((pos, nxt))
            pos = nxt
            continue
        out.append((pos, len(data)))
        break
    return out if len(out) > 1 else None


def _json_problem(exc: msgspec.DecodeError, data: bytes, base: int = 0) -> str:
    text = str(exc)
    m = re.search(r"\(byte (\d+)\)", text)
    message = re.sub(r"\s*\(byte \d+\)", "", text).removeprefix("JSON is malformed: ")
    if m:
        line, col = _line_col(data, base + int(m.group(1)))
        return f"line {line}, column {col}: {message}"
    return message


# ---- one manifest, as plain data ------------------------------------------------------------------


def read_documents(path: str) -> list[dict[str, Any]]:
    """The objects of one YAML or JSON file (`-`: stdin), lists walked, as plain data: for manifests that are
    rendered before they are decoded (`why-not-cached --manifest`), not for snapshots."""
    if not path:
        raise InputError("--manifest: an empty path")
    if path != "-" and not os.path.exists(path):
        raise stat_error(path, FileNotFoundError(errno.ENOENT, "no such file"))
    name = shown_path(path)
    data = read_bytes(path)
    json_error = ""
    if data.lstrip()[:1] in (b"{", b"["):
        if nested_too_deeply(data):
            raise too_deep(name)
        try:
            docs = [msgspec.json.decode(data)]
        except msgspec.DecodeError as exc:
            json_error = _json_problem(exc, data)
            docs = yaml_documents(name, data, json_error)
    else:
        docs = yaml_documents(name, data, json_error)
    out: list[dict[str, Any]] = []
    stack = list(reversed(docs))
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(reversed(node))
        elif (
            isinstance(node, dict)
            and str(node.get("kind", "")).endswith("List")
            and isinstance(node.get("items"), list)
        ):
            stack.extend(reversed(node["items"]))
        elif isinstance(node, dict):
            out.append(node)
        else:
            raise InputError(f"{name}: expected Kubernetes objects, found {json_type(node)}")
    return out


# ---- all of it ------------------------------------------------------------------------------------


def read_all(paths: Iterable[str], select: Selection | None = None) -> Loaded:
    """Every object of the input (or, with `select`, what it selects)."""
    out = Loaded()
    names = list(find_files(paths, out.warnings))
    if not names:
        skipped = f" ({'; '.join(out.warnings)})" if out.warnings else ""
        raise InputError(f"--from-file: no .yaml, .yml or .json files found{skipped}")
    loader = _Loader(out, select)
    # equal parts kept once where whole fleets are held (doctor, status, reconcile, a fleet view); a selection
    # of one object's answer holds few objects and would pay only the lookups
    with sharing() if select is None or select.share else contextlib.nullcontext():
        for path in names:
            out.files.append(shown_path(path))
            loader.load(path)
        loader.finish()
    if out.object_count == 0 and not out.metas:
        raise InputError(f"no Kubernetes objects in {', '.join(out.files)}")
    if not out.objects and not out.metas and not out.plain_counts:
        kinds_seen = ", ".join(sorted(out.other_kinds)[:5]) + (" and more" if len(out.other_kinds) > 5 else "")
        raise InputError(
            f"no objects of the kinds kubectl-kcache reads in {', '.join(out.files)} (found: "
            f"{kinds_seen}; see `kubectl kcache dump` for what it reads)"
        )
    check_same_cluster(out.metas)
    return out
