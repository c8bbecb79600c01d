"""ONE informer, under the one kept-current snapshot (snapshot/follow.py) of `status -w`, `monitor` and
`reconcile`, and ONE coalescer.

An `Informer` keeps a store of one list current, over a `ListerWatcher` (the real one is
`ClientListerWatcher`; tests use a small fake): it lists, then watches from that list's resourceVersion
with bookmarks; ADDED and MODIFIED replace an object, DELETED removes it; a watch the server ends is
resumed from the last resourceVersion; `410 Gone` lists again at once and replaces the store.

- `synced` is set only while the store is known to be current: after a complete list, while a watch is
  open. It is cleared the moment a watch breaks and set again when a watch from the last resourceVersion
  is accepted (the server replays what was missed).
- A failure (unreachable, 5xx, a broken stream) is reported (`on_error`), then retried after a jittered
  backoff from the last resourceVersion; the first success after it is reported too (`on_ok`). A 403 is
  fatal only when the owner says so (`status -w`: no counts shown as live that cannot be kept live); the
  controller keeps retrying, unready, and says why.
- Access coming back ends the wait: a refused read (403, which the API server answers before it reads
  anything) is probed again every FORBIDDEN_RETRY seconds instead of backing off to half a minute, and
  any informer of the process that recovers wakes the others waiting out a backoff (RBAC granted, or the
  server back, usually fixes them all at once).
- One decode-failure policy, client-go's rule that a reflector never dies: an object the decoder rejects
  (in a list page or a watch event) is skipped, never kept stale (a MODIFIED it cannot read removes the old
  version), counted (`decode_failures`) and named in `poisoned` until an event for it decodes again or it
  is deleted. The resourceVersion moves past it, so the watch never re-opens from the same place.
- Consumers of the changes themselves (not only of the store) add a handler: `handler(type, old, new)` for
  each ADDED, MODIFIED and DELETED a watch brings, LISTED for each object of a (re)list and DELETED for one a
  relist no longer has, in the informer's thread, before `on_change`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, cast

import msgspec

from ..errors import ApiError, Forbidden, Gone, IncompleteError, InputError
from ..kube.resources import Page
from ..objects import decode as d
from . import kinds
from .kinds import ListSpec

WATCH_TIMEOUT = 240  # seconds the server keeps one watch open before we resume it
FORBIDDEN_RETRY = 2.0  # seconds at most between two attempts of a refused read

_recovery = threading.Condition()  # notified whenever an informer of this process recovers
_recoveries = 0

Key = tuple[str, str]  # (namespace, name)
Handler = Callable[[str, Any, Any], None]  # (type, old or None, new or None)
LISTED = "LISTED"


class ListerWatcher(Protocol):
    """Lists and watches one list. `list` returns the decoded items and the list's resourceVersion (each
    page's bytes go through `decode`); `watch` yields what `decode` makes of each event line, calling
    `opened` once the server has accepted the watch. Both raise `Gone` (410), `Forbidden` and other
    `ApiError`s."""

    def list(self, decode: Callable[[bytes], Page[Any]]) -> tuple[list[Any], str]: ...

    def watch(
        self, resource_version: str, decode: Callable[[bytes], Any], opened: Callable[[], None]
    ) -> Iterable[Any]: ...


class ClientListerWatcher:
    """A ListerWatcher over the API server (`kube.client.Client`) for one list spec."""

    def __init__(self, client: Any, spec: ListSpec):
        self.client, self.spec = client, spec

    def list(self, decode: Callable[[bytes], Page[Any]]) -> tuple[list[Any], str]:
        s = self.spec
        got = self.client.list_all(
            s.resource, s.namespace, label_selector=s.label_selector, field_selector=s.field_selector, decode=decode
        )
        return list(got.items), got.resource_version

    def watch(self, resource_version: str, decode: Callable[[bytes], Any], opened: Callable[[], None]) -> Iterable[Any]:
        s = self.spec
        events = self.client.watch(
            s.resource,
            resource_version,
            s.namespace,
            timeout_seconds=WATCH_TIMEOUT,
            label_selector=s.label_selector,
            field_selector=s.field_selector,
            decode=decode,
            opened=opened,
        )
        return cast(Iterable[Any], events)


class _EventHead(msgspec.Struct, frozen=True):
    type: str = ""
    object: d.Head | None = None


class Poison:
    """A watch event whose object the decoder rejected: what is known of it, and why."""

    def __init__(self, type_: str, key: Key, resource_version: str, message: str):
        self.type, self.key, self.resource_version, self.message = type_, key, resource_version, message


def _key_of(head: d.Head | None) -> tuple[Key, str]:
    md = head.metadata if head is not None and isinstance(head.metadata, dict) else {}
    ns, name, rv = md.get("namespace"), md.get("name"), md.get("resourceVersion")
    return (ns if isinstance(ns, str) else "", name if isinstance(name, str) else ""), rv if isinstance(rv, str) else ""


def _backoff() -> Iterator[float]:
    from ..kube.client import backoff_delays

    return backoff_delays()


def key_of(obj: Any) -> Key:
    return (obj.metadata.namespace or "", obj.metadata.name)


class Informer(threading.Thread):
    """One list's store, kept current; `start()` runs it in a daemon thread until `stop` is set."""

    def __init__(
        self,
        lw: ListerWatcher,
        spec: ListSpec,
        *,
        stop: threading.Event,
        on_change: Callable[[str], None] = lambda _what: None,
        on_error: Callable[[str, BaseException], None] = lambda _verb, _exc: None,
        on_ok: Callable[[], None] = lambda: None,
        forbidden_is_fatal: bool = False,
        initial: tuple[Iterable[Any], str] | None = None,
        delays: Callable[[], Iterator[float]] = _backoff,
        kind: kinds.Kind | None = None,
    ):
        super().__init__(daemon=True, name=f"informer-{spec.plural}")
        self.lw, self.spec, self.stop_event = lw, spec, stop
        self.kind = kind or kinds.for_resource(spec.resource)
        self.handlers: list[Handler] = []
        self.on_change, self.on_error, self.on_ok = on_change, on_error, on_ok
        self.forbidden_is_fatal = forbidden_is_fatal
        self.lock = threading.Lock()
        self.store: dict[Key, Any] = {}
        self.changes = 0  # store changes so far (under `lock`): the snapshot reuses a list's objects until it moves
        self.synced = threading.Event()
        self.poisoned: dict[Key, str] = {}  # objects that do not decode now, and why
        self.decode_failures = 0  # every object or event skipped since the start
        self.relists = 0  # lists after the first (410 Gone)
        self.problem = ""  # what is failing now ("" when the last attempt worked)
        self.fatal: IncompleteError | None = None
        self._delays_factory = delays
        self._delays = delays()
        self.resource_version = ""
        self.listed = False  # a list of it was made (given, or its own): the store holds it, however stale
        self._list_poison: dict[Key, str] = {}
        if initial is not None:  # a list just made (status -w): current until a watch from it breaks
            objs, self.resource_version = initial
            self.store = {key_of(o): o for o in objs}
            self.listed = bool(self.resource_version)
            if self.resource_version:
                self.synced.set()

    # ---- the owner's side ---------------------------------------------------------------------------
    def add_handler(self, handler: Handler) -> None:
        """Called with every change from now on (add it before `start()` to see the first list); for a kind
        whose version no write carries (`Kind.version_unread`), an update that changes nothing decoded is none."""
        self.handlers.append(handler)

    def _handle(self, changes: Iterable[tuple[str, Any, Any]]) -> None:
        for handler in self.handlers:
            for type_, old, new in changes:
                handler(type_, old, new)

    def items(self) -> list[Any]:
        with self.lock:
            return list(self.store.values())

    def store_changed(self) -> tuple[dict[Key, Any], int]:
        """The objects by key, and how many store changes they reflect (`changes`), read together."""
        with self.lock:
            return dict(self.store), self.changes

    def poison_lines(self) -> list[str]:
        """What cannot be decoded now, one line per object."""
        with self.lock:
            return [why for _, why in sorted(self.poisoned.items())]

    def written(self, obj: Any) -> None:
        """An object as the server returned it after our own write (typed, or plain data): in the store at
        once (the newer resourceVersion wins), so the next pass does not plan the same write while the
        echo is on its way."""
        if isinstance(obj, dict):
            try:
                obj = self.kind.convert(obj)
            except (ValueError, InputError):
                return
        key = key_of(obj)
        with self.lock:
            current = self.store.get(key)
            if current is None or not _newer(current.metadata.resource_version, obj.metadata.resource_version):
                self.store[key] = obj
                self.changes += 1

    def removed(self, namespace: str, name: str, uid: str) -> None:
        with self.lock:
            current = self.store.get((namespace, name))
            if current is not None and (not uid or current.metadata.uid == uid):
                del self.store[(namespace, name)]
                self.changes += 1

    # ---- decoding ------------------------------------------------------------------------------------
    def _decode_page(self, data: bytes) -> Page[Any]:
        """A list page into typed items; an item the decoder rejects is skipped and named, not fatal."""
        try:
            return self.kind.decode_page(data)
        except InputError:
            pass
        page = d.page_decoder(msgspec.Raw).decode(data)
        items = []
        for index, raw in enumerate(page.items or ()):
            try:
                items.append(self.kind.decode_json(raw))
            except msgspec.ValidationError as exc:
                head = d.decode_json(raw, d.Head)
                error = d.object_error(
                    exc, origin=f"list {self.spec.plural}", what=head.describe(self.kind.kind), base=f"$.items[{index}]"
                )
                self._list_poison[_key_of(head)[0]] = str(error)
        meta = page.metadata or d.ListMeta()
        return Page(items, meta.resource_version or "", meta.continue_ or "")

    def _decode_line(self, line: bytes) -> Any:
        try:
            return self.kind.decode_watch_line(line)
        except InputError as exc:
            head = d.decode_json(line, _EventHead)
            key, rv = _key_of(head.object)
            return Poison(head.type, key, rv, str(exc))

    # ---- the thread ----------------------------------------------------------------------------------
    def _healthy(self) -> None:
        was_failing = bool(self.problem)
        self.problem = ""
        self.synced.set()
        self._delays = self._delays_factory()
        if was_failing:
            _recovered()
            self.on_ok()

    def _opened(self) -> None:
        if not self.synced.is_set():
            self._healthy()
            self.on_change("reconnected")

    def _list(self) -> None:
        self._list_poison = {}
        objs, rv = self.lw.list(self._decode_page)
        with self.lock:
            before, self.store = self.store, {key_of(o): o for o in objs}
            self.changes += 1
            self.poisoned = dict(self._list_poison)
            self.decode_failures += len(self._list_poison)
        if self.listed:
            self.relists += 1
        self.listed = True
        self.resource_version = rv
        if self.handlers:
            self._handle(
                [(LISTED, before.get(k), o) for k, o in self.store.items()]
                + [("DELETED", o, None) for k, o in before.items() if k not in self.store]
            )
        self._healthy()
        self.on_change(self.spec.plural)

    def _apply(self, event: Any) -> None:
        if isinstance(event, Poison):
            self.resource_version = event.resource_version or self.resource_version
            with self.lock:
                self.decode_failures += 1
                gone = self.store.pop(event.key, None)  # never keep a version known to be stale
                self.changes += gone is not None
                if event.type == "DELETED":
                    self.poisoned.pop(event.key, None)
                else:
                    self.poisoned[event.key] = event.message
            if gone is not None:
                self._handle([("DELETED", gone, None)])
            self.on_change(self.spec.plural)
            return
        self.resource_version = event.resource_version or self.resource_version
        if event.type == "BOOKMARK":
            return
        key = key_of(event.object)
        with self.lock:
            self.poisoned.pop(key, None)
            if event.type == "DELETED":
                old = self.store.pop(key, None) or event.object
            else:
                old = self.store.get(key)
                if old is not None and self.kind.version_unread and _same_but_version(old, event.object):
                    return  # nothing this plugin reads changed: the object held stays, and so does what used it
                self.store[key] = event.object
            self.changes += 1
        if self.handlers:
            self._handle([(event.type, old, None if event.type == "DELETED" else event.object)])
        self.on_change(self.spec.plural)

    def _fail(self, verb: str, exc: BaseException) -> None:
        self.synced.clear()
        self.problem = f"cannot {verb} {self.spec.describe()}: {exc}"
        self.on_error(verb, exc)
        self.on_change("failing")
        delay = next(self._delays)
        if isinstance(exc, Forbidden):
            delay = min(delay, FORBIDDEN_RETRY)
        _wait_retry(self.stop_event, delay)

    def run(self) -> None:
        while not self.stop_event.is_set():
            verb = "list" if not self.resource_version else "watch"
            try:
                if not self.resource_version:
                    self._list()
                    verb = "watch"
                for event in self.lw.watch(self.resource_version, self._decode_line, self._opened):
                    self._apply(event)
                    if self.stop_event.is_set():
                        return
                # the server ended the watch (its timeout): watch again from where it was
            except Gone:
                self.synced.clear()
                self.resource_version = ""  # too old: list again, at once
            except Forbidden as exc:
                if self.forbidden_is_fatal:
                    self.synced.clear()
                    self.fatal = IncompleteError(f"cannot {verb} {self.spec.describe()} (forbidden: {exc})")
                    self.on_change("fatal")
                    return
                self._fail(verb, exc)
            except (ApiError, IncompleteError, ValueError) as exc:
                self._fail(verb, exc)
            except Exception as exc:  # noqa: BLE001 - an informer never dies; it says why and retries
                self._fail(verb, exc)


def _recovered() -> None:
    global _recoveries
    with _recovery:
        _recoveries += 1
        _recovery.notify_all()


def _wait_retry(stop: threading.Event, delay: float) -> None:
    """Wait `delay` seconds, less if `stop` is set or another informer recovers meanwhile."""
    deadline = time.monotonic() + delay
    with _recovery:
        seen = _recoveries
        while not stop.is_set() and _recoveries == seen:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            _recovery.wait(min(left, 0.5))


def _newer(a: str, b: str) -> bool:
    """resourceVersion `a` is known to be newer than `b` (they are etcd revisions; opaque if not numbers)."""
    return a.isdigit() and b.isdigit() and int(a) > int(b)


class Coalescer:
    """Turns a burst of changes into one wake-up: `wait` returns once changes have been quiet for `quiet`
    seconds, or at the latest `max_delay` after the first change of the burst."""

    def __init__(self, quiet: float, max_delay: float, clock: Callable[[], float] = time.monotonic):
        self.quiet, self.max_delay, self.clock = quiet, max_delay, clock
        self.lock = threading.Lock()
        self.dirty = threading.Event()
        self.first = 0.0
        self.last = 0.0

    def notify(self) -> None:
        now = self.clock()
        with self.lock:
            if not self.dirty.is_set():
                self.first = now
            self.last = now
            self.dirty.set()

    def settled(self) -> bool:
        """A burst is pending and has settled (the caller runs now)."""
        now = self.clock()
        with self.lock:
            return self.dirty.is_set() and (now - self.last >= self.quiet or now - self.first >= self.max_delay)

    def wait(
        self, stopped: Callable[[], bool], deadline: float | None = None, beat: Callable[[], None] = lambda: None
    ) -> bool:
        """Block until a burst has settled (True, and the burst is consumed), or `deadline` (by `clock`)
        passed or `stopped()` (False)."""
        while not stopped():
            beat()
            if self.dirty.is_set():
                if self.settled():
                    self.dirty.clear()
                    return True
                time.sleep(0.05)
                continue
            now = self.clock()
            if deadline is not None and now >= deadline:
                return False
            self.dirty.wait(0.5 if deadline is None else max(0.0, min(0.5, deadline - now)))
        return False


def _same_but_version(old: Any, new: Any) -> bool:
    """Whether `new` decodes to `old` but for its resourceVersion (every field the plugin reads equal)."""
    if type(old) is not type(new):
        return False
    was, now = old.metadata, new.metadata
    if was.resource_version != now.resource_version:
        new = msgspec.structs.replace(new, metadata=msgspec.structs.replace(now, resource_version=was.resource_version))
    return bool(new == old)
