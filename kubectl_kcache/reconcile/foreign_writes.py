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
    resourceVersion: str = ""  # noqa: N815 - the API's name
    managedFields: tuple[_Entry, ...] = ()  # noqa: N815 - the API's name


class _Object(msgspec.Struct, frozen=True):
    metadata: _Meta | None = None
    code: int = 0  # an ERROR event's Status
    message: str = ""


class _Event(msgspec.Struct, frozen=True):
    type: str = ""
    object: _Object | None = None


_decoder = msgspec.json.Decoder(_Event)


def writer_of(event: _Event) -> str:
    """The field manager that made this create or update of the main resource, "" when it was ours, a
    person's, a status write, or cannot be told (two entries of the same second)."""
    if event.type not in ("ADDED", "MODIFIED") or event.object is None or event.object.metadata is None:
        return ""
    entries = [e for e in event.object.metadata.managedFields if e.time]
    if not entries:
        return ""
    newest = max(e.time for e in entries)
    last = [e for e in entries if e.time == newest]
    if len(last) != 1 or last[0].subresource or last[0].manager.startswith(NOT_A_CONTROLLER):
        return ""
    return last[0].manager


class ForeignWrites(threading.Thread):
    """The last write by another controller to the objects of one list: `last()` is (manager, object, when
    on `clock`) or None."""

    def __init__(self, client: Client, stop: threading.Event, res: r.Resource = r.KERNEL_CACHE_NODES,
                 namespace: str | None = None, field_selector: str = "",
                 clock: Callable[[], float] = time.monotonic,
                 on_error: Callable[[BaseException], None] = lambda _exc: None):
        super().__init__(daemon=True, name=f"foreign-writes-{res.plural}")
        self.client, self.stop_event, self.clock, self.on_error = client, stop, clock, on_error
        self.res, self.namespace, self.field_selector = res, namespace, field_selector
        self._last: tuple[str, str, float] | None = None
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
                    page = next(iter(self.client.list_pages(self.res, self.namespace, page_size=1,
                                                            field_selector=self.field_selector,
                                                            decode=_head_page)), None)
                    rv = page.resource_version if page is not None else ""
                for event in self.client.watch(self.res, rv, self.namespace, timeout_seconds=WATCH_TIMEOUT,
                                               field_selector=self.field_selector, decode=_decoder.decode,
                                               opened=self.watching.set):
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

    def _saw(self, event: _Event) -> None:
        manager = writer_of(event)
        if manager:
            name = event.object.metadata.name if event.object and event.object.metadata else ""
            with self._lock:
                self._last = (manager, f"{self.res.kind} {name}", self.clock())


def _rv_of(event: _Event) -> str:
    return event.object.metadata.resourceVersion if event.object and event.object.metadata else ""


class _ListMeta(msgspec.Struct, frozen=True):
    resourceVersion: str = ""  # noqa: N815 - the API's name


class _List(msgspec.Struct, frozen=True):
    metadata: _ListMeta | None = None


def _head_page(data: bytes) -> Any:
    """Where the list stands (its resourceVersion); its items and continue token are not wanted."""
    from ..kube.resources import Page

    head = msgspec.json.decode(data, type=_List)
    return Page([], head.metadata.resourceVersion if head.metadata else "", "")
