"""The executor: the only writer. Applies a plan's actions, touching only what reconcile owns.

- KernelCacheNode create (AlreadyExists is fine) and delete (precondition on the uid seen, NotFound is fine).
- The agent DaemonSet: a JSON merge patch of the pod template's placement.
- KernelCache create under the generated name; an existing one is never overwritten.
- A capture's status.kernelCacheRef: only while empty, by a status update with resourceVersion, retried on
  conflict, after re-checking that the capture is still complete and its artifact equals the KernelCache's.
- Warning events (events.k8s.io/v1), repeats folded into one Event's series.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import socket
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ..errors import ApiError, Conflict, IncompleteError, NotFound
from ..kernelcache import constants as c
from ..kernelcache.capture import artifact_key, capture_complete
from ..kube import resources as r
from ..kube.client import Client
from ..objects import Capture, KernelCache
from . import actions as a

REPORTING_CONTROLLER = "kubectl-kcache"
EVENTS_V1 = r.Resource("events.k8s.io", "v1", "events", "Event", True)


def micro_time(now: dt.datetime | None = None) -> str:
    """RFC 3339 with microseconds, as metav1.MicroTime serialises."""
    now = now or dt.datetime.now(dt.timezone.utc)
    return now.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class Result:
    done: Counter = field(default_factory=Counter)      # (verb, kind) -> count
    skipped: list[str] = field(default_factory=list)    # actions found unnecessary when applied
    errors: list[str] = field(default_factory=list)

    def merge(self, other: Result) -> None:
        self.done.update(other.done)
        self.skipped.extend(other.skipped)
        self.errors.extend(other.errors)


class Executor:
    def __init__(self, client: Client, workers: int = 8):
        self.client = client
        self.workers = workers
        self.instance = socket.gethostname()
        self.series: dict[str, dict[str, Any]] = {}  # event name -> last written Event

    def apply(self, actions: Iterable[a.Action], before_writes: Callable[[], None] | None = None) -> Result:
        """Apply in dependency order: KernelCacheNodes and placement, KernelCaches, then capture links.
        `before_writes` is called before each batch (the lease check); it raises to stop."""
        actions = list(actions)
        result = Result()
        batches = [
            [x for x in actions if x.kind in (c.KIND_NODE, "DaemonSet")],
            [x for x in actions if x.kind == c.KIND_CACHE],
            [x for x in actions if x.kind == c.KIND_CAPTURE],
            [x for x in actions if x.verb == a.EVENT],
        ]
        for batch in batches:
            if not batch:
                continue
            if before_writes is not None:
                before_writes()
            with ThreadPoolExecutor(max_workers=self.workers) as pool:
                for outcome in pool.map(self._apply_one, batch):
                    result.merge(outcome)
        return result

    def _apply_one(self, action: a.Action) -> Result:
        res = Result()
        try:
            done = {
                (a.CREATE, c.KIND_NODE): self._create_kcn,
                (a.DELETE, c.KIND_NODE): self._delete_kcn,
                (a.PATCH, "DaemonSet"): self._patch_daemonset,
                (a.CREATE, c.KIND_CACHE): self._create_kernel_cache,
                (a.UPDATE_STATUS, c.KIND_CAPTURE): self._link_capture,
                (a.EVENT, "Event"): self._event,
            }[(action.verb, action.kind)](action)
        except IncompleteError as exc:
            if isinstance(exc, ApiError) and exc.status in (0, 429) or exc.__class__.__name__ == "Unreachable":
                raise
            res.errors.append(f"{action.verb} {action.kind} {action.name}: {exc}")
            return res
        if done:
            res.done[(action.verb, action.kind)] += 1
        else:
            res.skipped.append(f"{action.verb} {action.kind} {action.name}")
        return res

    # ---- the owned writes -----------------------------------------------------------------------
    def _create_kcn(self, action: a.Action) -> bool:
        try:
            self.client.create(r.KERNEL_CACHE_NODES, action.body or {})
        except Conflict:
            return False
        return True

    def _delete_kcn(self, action: a.Action) -> bool:
        try:
            self.client.delete(r.KERNEL_CACHE_NODES, action.name, uid=action.uid)
        except NotFound:
            return False
        except Conflict:  # the uid precondition failed: a new object of that name, not the one planned
            return False
        return True

    def _patch_daemonset(self, action: a.Action) -> bool:
        self.client.merge_patch(r.DAEMONSETS, action.name, action.body or {}, action.namespace)
        return True

    def _create_kernel_cache(self, action: a.Action) -> bool:
        try:
            self.client.create(r.KERNEL_CACHES, action.body or {}, action.namespace)
        except Conflict:
            return False  # someone (KServe's controller) created it: never overwrite
        return True

    def _link_capture(self, action: a.Action) -> bool:
        """setCaptureKernelCacheRef: artifacts must be equal; a fresh copy that is no longer complete, has another
        artifact or another session than planned is left alone; a ref naming another KernelCache is replaced."""
        ns = action.namespace or ""
        body = action.body or {}
        planned_session, planned_artifact = body.get("captureSessionID", ""), body.get("artifact")
        kc = KernelCache.from_dict(self.client.get(r.KERNEL_CACHES, action.related, ns))
        if artifact_key(planned_artifact) != artifact_key(kc.artifact.raw if kc.artifact else None):
            raise ApiError(f"KernelCache {ns}/{action.related} artifact does not match KernelCacheCapture "
                           f"{ns}/{action.name}", status=422)
        for _attempt in range(5):
            raw = self.client.get(r.CAPTURES, action.name, ns)
            capture = Capture.from_dict(raw)
            if not capture_complete(capture) or capture.artifact is None \
                    or capture.runtime_result.get("captureSessionID", "") != planned_session \
                    or artifact_key(capture.artifact.raw) != artifact_key(planned_artifact):
                return False  # changed since the plan: the next pass decides again
            ref = capture.kernel_cache_ref
            if ref is not None and (ref.namespace, ref.name) == (ns, action.related):
                return False
            status = raw.get("status") or {}
            status["kernelCacheRef"] = {"namespace": ns, "name": action.related}
            raw["status"] = status
            try:
                self.client.replace_status(r.CAPTURES, action.name, raw, ns)
                return True
            except Conflict:
                continue
        raise ApiError(f"KernelCacheCapture {ns}/{action.name}: status kept changing (conflicts)", status=409)

    def _event(self, action: a.Action) -> bool:
        ns = action.namespace or ""
        key = hashlib.sha256(f"{action.uid}/{action.event_reason}/{action.message}".encode()).hexdigest()[:16]
        name = f"{action.name}.{key}"[:253]
        now = micro_time()
        known = self.series.get(name)
        if known is None:
            body = {
                "apiVersion": "events.k8s.io/v1", "kind": "Event",
                "metadata": {"name": name, "namespace": ns},
                "eventTime": now, "type": "Warning", "reason": action.event_reason, "action": c.EVENT_ACTION_SELECT,
                "note": action.message, "reportingController": REPORTING_CONTROLLER,
                "reportingInstance": f"{REPORTING_CONTROLLER}-{self.instance}"[:128],
                "regarding": {"apiVersion": c.API_VERSION, "kind": c.KIND_CAPTURE, "name": action.name,
                              "namespace": ns, "uid": action.uid},
            }
            try:
                self.series[name] = self.client.create(EVENTS_V1, body, ns)
                return True
            except Conflict:
                known = self.client.get(EVENTS_V1, name, ns)
        count = int(((known.get("series") or {}).get("count")) or 1) + 1
        self.series[name] = self.client.merge_patch(
            EVENTS_V1, name, {"series": {"count": count, "lastObservedTime": now}}, ns)
        return True
