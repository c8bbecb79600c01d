"""Writes by another controller to what reconcile owns, seen as they happen on the watches reconcile's
informers already hold: of KernelCacheNodes and of the agent DaemonSet, decoded with the writers their
managedFields name (`snapshot.kinds.with_writers`).

A controller we cannot find by its Deployment (run outside the cluster, renamed, another image) still
leaves its field manager on what it writes (controller-runtime's is the binary's name, KServe's `manager`):
KServe's controller merge-patches the agent DaemonSet's affinity and tolerations. Not counted: our own
writes, people's (kubectl's managers all start with `kubectl`), Kubernetes' own components' and status
writes (the agent on each node and the DaemonSet controller write only the status subresource). What names
nobody is not counted either: deletes, and creates that set no field (KServe creates each KernelCacheNode
with a name only, and the API server records no managedFields entry for an empty field set); only the
audit log tells those apart. Objects a (re)list brings are not judged: what happened before is not
attributed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

# not another controller of what we own: people (kubectl-create, kubectl-edit, kubectl-client-side-apply, ...;
# ours, kubectl-kcache, too), Kubernetes' own components (the garbage collector of kube-controller-manager
# edits finalizers and owner references), and the placeholder of fields set before managedFields existed
NOT_A_CONTROLLER = ("kubectl", "kube-", "before-first-apply")

Entries = dict[tuple[str, str, str], str]  # (manager, operation, subresource) -> time of its last write


def entries_of(obj: Any) -> Entries:
    fields = getattr(obj.metadata, "managed_fields", None) or () if obj is not None else ()
    return {(e.manager, e.operation, e.subresource): e.time for e in fields}


def writer_of(type_: str, new: Any, old: Any) -> str:
    """The field manager of another controller that made this create or update of the main resource, or "".

    The write is told by what changed in managedFields since the version seen before (an entry added, or
    its time moved): a status write moves only its own entry, so an object another controller once wrote
    is not taken for its write again. Without a version seen before (an object created now) the newest entry
    is the write's, when one entry alone is the newest."""
    if type_ not in ("ADDED", "MODIFIED") or new is None:
        return ""
    now = {k: t for k, t in entries_of(new).items() if t}
    if old is None:
        newest = max(now.values(), default="")
        changed = [k for k, t in now.items() if t == newest]
        if len(changed) != 1:
            return ""
    else:
        before = entries_of(old)
        changed = [k for k, t in now.items() if before.get(k) != t]
    theirs = [m for m, _op, sub in changed if not sub and not m.startswith(NOT_A_CONTROLLER)]
    return theirs[0] if theirs else ""


class ForeignWrites:
    """The last write by another controller to what reconcile owns: `handler(kind)` goes on the informer of
    that kind; `last()` is (manager, object, when on `clock`) or None."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self._last: tuple[str, str, float] | None = None
        self._lock = threading.Lock()

    def last(self) -> tuple[str, str, float] | None:
        with self._lock:
            return self._last

    def handler(self, kind: str) -> Callable[[str, Any, Any], None]:
        def saw(type_: str, old: Any, new: Any) -> None:
            manager = writer_of(type_, new, old)
            if manager:
                with self._lock:
                    self._last = (manager, f"{kind} {new.metadata.name}", self.clock())

        return saw
