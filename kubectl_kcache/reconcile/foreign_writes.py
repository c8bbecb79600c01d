"""Writes by another controller to what reconcile owns, seen as they happen: a watch (from the moment
reconcile starts) of KernelCacheNodes and of the agent DaemonSet, where each created or updated object
names its last writer in managedFields.

A controller we cannot find by its Deployment (run outside the cluster, renamed, another image) still
leaves its field manager on what it writes (controller-runtime's is the binary's name, KServe's `manager`):
KServe's controller merge-patches the agent DaemonSet's affinity and tolerations. Not counted: our own
writes, people's (kubectl's managers all start with `kubectl`), Kubernetes' own components' and status
writes (the agent on each node and the DaemonSet controller write only the status subresource). What names
nobody is not counted either: deletes, and creates that set no field (KServe creates each KernelCacheNode
with a name only, and the API server records no managedFields entry for an empty field set); only the
audit log tells those apart.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import msgspec

from ..errors import Gone, KcacheError
from ..kube import resources as r
from ..kube.client import Client, backoff_delays

# not another controller of what we own: people (kubectl-create, kubectl-edit, kubectl-client-side-apply, ...;
# ours, kubectl-kcache, too), Kubernetes' own components (the garbage collector of kube-controller-manager
# edits finalizers and owner references), and the placeholder of fields set before managedFields existed
NOT_A_CONTROLLER = ("kubectl", "kube-", "before-first-apply")
WATCH_TIMEOUT = 240


class _Entry(msgspec.Struct, frozen=True):
    manager: str = ""
    operation: str = ""
    subresource: str = ""
    time: str = ""


class _Meta(msgspec.Struct, frozen=True):
    name: str = ""
    resourceVersion: str = ""
    managedFields: tuple[_Entry, ...] = ()


class _Object(msgspec.Struct, frozen=True):
    metadata: _Meta | None = None
    code: int = 0  # an ERROR event's Status
    message: str = ""


class _Event(msgspec.Struct, frozen=True):
    type: str = ""
    object: _Object | None = None


_decoder = msgspec.json.Decoder(_Event)


Entries = dict[tuple[str, str, str], str]  # (manager, operation, subresource) -> time of its last write


def entries_of(obj: _Object | None) -> Entries:
    md = obj.metadata if obj is not None else None
    return {(e.manager, e.operation, e.subresource): e.time for e in (md.managedFields if md else ())}


def writer_of(event: _Event, before: Entries | None) -> str:
    """The field manager of another controller that made this create or update of the main resource, or "".

    The write is told by what changed in managedFields since the version seen `before` (an entry added, or
    its time moved): a status write moves only its own entry, so an object another controller once wrote
    is not taken for its write again. Without a version seen before (an object created now, or first seen
    after a relist) the newest entry is the write's, when one entry alone is the newest."""
    if event.type not in ("ADDED", "MODIFIED") or event.object is None:
        return ""
    now = {k: t for k, t in entries_of(event.object).items() if t}
    if before is None:
        newest = max(now.values(), default="")
        changed = [k for k, t in now.items() if t == newest]
        if len(changed) != 1:
            return ""
    else:
        changed = [k for k, t in now.items() if before.get(k) != t]
    theirs = [m for m, _op, sub in changed if not sub and not m.startswith(NOT_A_CONTROLLER)]
    return theirs[0] if theirs else ""


class ForeignWrites(threading.Thread):
    """The last write by another controller to the objects of one list: `last()` is (manager, object, when
    on `clock`) or None."""

    def __init__(
        self,
        client: Client,
        stop: threading.Event,
        res: r.Resource = r.KERNEL_CACHE_NODES,
        namespace: str | None = None,
        field_selector: str = "",
        clock: Callable[[], float] = time.monotonic,
        on_error: Callable[[BaseException], None] = lambda _exc: None,
    ):
        super().__init__(daemon=True, name=f"foreign-writes-{res.plural}")
        self.client, self.stop_event, self.clock, self.on_error = client, stop, clock, on_error
        self.res, self.namespace, self.field_selector = res, namespace, field_selector
        self._last: tuple[str, str, float] | None = None
        self._seen: dict[str, Entries] = {}  # name -> managedFields of the version seen last
        self._lock = threading.Lock()
        self.watching = threading.Event()  # set while a watch is open

    def last(self) -> tuple[str, str, float] | None:
        with self._lock:
            return self._last

    def run(self) -> None:
        delays = backoff_delays()
        rv = ""
        while not self.stop_event.is_set():
            try:
                if not rv:
                    rv = self._seed()
                for event in self.client.watch(
                    self.res,
                    rv,
                    self.namespace,
                    timeout_seconds=WATCH_TIMEOUT,
                    field_selector=self.field_selector,
                    decode=_decoder.decode,
                    opened=self.watching.set,
                ):
                    if self.stop_event.is_set():
                        return
                    if isinstance(event, _Event):
                        self._saw(event)
                        rv = _rv_of(event) or rv
                delays = backoff_delays()
            except Gone:
                rv = ""  # compacted: start again from now (what happened in between is not attributed)
            except (KcacheError, OSError, ValueError) as exc:
                self.watching.clear()
                self.on_error(exc)
                self.stop_event.wait(next(delays))
            finally:
                self.watching.clear()

    def _seed(self) -> str:
        """Each object's managedFields as they are now (a write is then told by what it changed), and the
        resourceVersion to watch from."""
        self._seen.clear()
        rv = ""
        for page in self.client.list_pages(
            self.res, self.namespace, field_selector=self.field_selector, decode=self._seed_page
        ):
            rv = page.resource_version or rv
        return rv

    def _seed_page(self, data: bytes) -> Any:
        from ..kube.resources import Page

        got = _list_decoder.decode(data)
        for obj in got.items or ():
            if obj.metadata is not None:
                self._seen[obj.metadata.name] = entries_of(obj)
        meta = got.metadata or _ListMeta()
        return Page([], meta.resourceVersion, meta.continue_)

    def _saw(self, event: _Event) -> None:
        name = event.object.metadata.name if event.object and event.object.metadata else ""
        if event.type == "DELETED":
            self._seen.pop(name, None)
            return
        if event.type not in ("ADDED", "MODIFIED"):
            return
        manager = writer_of(event, self._seen.get(name))
        self._seen[name] = entries_of(event.object)
        if manager:
            with self._lock:
                self._last = (manager, f"{self.res.kind} {name}", self.clock())


def _rv_of(event: _Event) -> str:
    return event.object.metadata.resourceVersion if event.object and event.object.metadata else ""


class _ListMeta(msgspec.Struct, frozen=True):
    resourceVersion: str = ""
    continue_: str = msgspec.field(default="", name="continue")


class _List(msgspec.Struct, frozen=True):
    metadata: _ListMeta | None = None
    items: tuple[_Object, ...] | None = None


_list_decoder = msgspec.json.Decoder(_List)
