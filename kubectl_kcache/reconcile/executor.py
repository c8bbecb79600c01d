"""The executor: the only writer. Applies a plan's actions, touching only what reconcile owns.

- KernelCacheNode create (AlreadyExists is fine) and delete (preconditions on the uid and resourceVersion the
  plan saw; NotFound is fine, a failed precondition means the object changed: the next pass decides again).
- The agent DaemonSet: a JSON merge patch of the pod template's placement, conditional on the resourceVersion
  the plan saw.
- KernelCache create under the generated name; an existing one is never overwritten.
- A capture's status.kernelCacheRef: only while empty, by a status update with resourceVersion, retried on
  conflict, after re-checking that the capture is still complete and its artifact equals the KernelCache's.
- Warning events (events.k8s.io/v1), repeats folded into one Event's series.

Every write goes through `writer`, whose requests are checked by the guard (the lease) just before they are
sent; before each action, whether another controller is active (`peers`, from what the informers keep) and
whether the write is one the API server refused and is not yet due for a probe (`refusals.py`). 409/404
answers are counted as `overtaken`, never retried here, and what they showed is handed back (`written`,
`removed`) so that the loop's stores stop planning the same write again.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import queue
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from ..errors import ApiError, Conflict, Forbidden, IncompleteError, NotFound, Unreachable
from ..kernelcache import constants as c
from ..kernelcache.capture import artifact_key, capture_complete
from ..kube import resources as r
from ..kube.client import Client
from ..kube.write_guard import WriteRefused
from ..objects import Capture, KernelCache
from ..snapshot.model import ClusterSnapshot
from . import actions as a
from .refusals import ADMISSION, EVERY_WRITE, RBAC, Key, Refusals

REPORTING_CONTROLLER = "kubectl-kcache"
FENCE_POLICY = "kubectl-kcache-reconcile-fence"  # deploy/fence.yaml: the API server's own check of the Lease
SIGNATURE_ANNOTATION = "kcache.kserve.io/evaluation"  # on our Events: what the selection was decided from
IN_FLIGHT_GRACE = 10.0  # seconds a failed batch waits for its in-flight writes
WORKERS = 8  # writes of one batch in flight at a time
EVENTS_V1 = r.Resource("events.k8s.io", "v1", "events", "Event", True)


class Fenced(WriteRefused):
    """The API server's fence refused a write: it does not see this process as the Lease's holder."""


def is_fence_refusal(exc: BaseException) -> bool:
    """The fence's ValidatingAdmissionPolicy refused a write (403: another holder, or none)."""
    return isinstance(exc, ApiError) and exc.status in (403, 422) and FENCE_POLICY in str(exc)


def micro_time(now: dt.datetime | None = None) -> str:
    """RFC 3339 with microseconds, as metav1.MicroTime serialises."""
    now = now or dt.datetime.now(dt.timezone.utc)
    return now.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class Result:
    done: Counter[tuple[str, str]] = field(default_factory=Counter)  # (verb, kind) -> count
    skipped: list[str] = field(default_factory=list)  # actions found unnecessary when applied
    errors: list[str] = field(default_factory=list)
    # 409/404 answers: (verb, kind, reason) -> count; reason already-exists, already-gone or changed
    overtaken: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    applied: list[a.Action] = field(default_factory=list)  # done, or found unnecessary: not to be retried
    # what the writes showed of the cluster, for the informer stores: objects as the server returned them,
    # and (resource, namespace, name, uid) of objects deleted or found gone
    written: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    removed: list[tuple[str, str, str, str]] = field(default_factory=list)
    refused: int = 0  # writes the API server refused (RBAC, an admission policy): learned in `refusals`
    held: int = 0  # writes not sent: refused before and not due for a probe
    admitted_again: bool = False  # a write refused before was admitted (its held writes can go now)

    def merge(self, other: Result) -> None:
        self.refused += other.refused
        self.held += other.held
        self.admitted_again |= other.admitted_again
        self.done.update(other.done)
        self.skipped.extend(other.skipped)
        self.errors.extend(other.errors)
        self.overtaken.update(other.overtaken)
        self.applied.extend(other.applied)
        self.written.extend(other.written)
        self.removed.extend(other.removed)


def pin_preconditions(actions: Iterable[a.Action], snapshot: ClusterSnapshot) -> list[a.Action]:
    """Deletes and the placement patch carry the uid/resourceVersion of the object the plan saw, so that
    the API server refuses them (409) when that object has changed or been replaced since."""
    out = []
    for x in actions:
        if x.verb == a.DELETE and x.kind == c.KIND_NODE:
            kcn = snapshot.kcn_by_name.get(x.name)
            if kcn is not None:
                x = replace(
                    x, uid=x.uid or kcn.meta.uid, resource_version=x.resource_version or kcn.meta.resource_version
                )
        elif x.verb == a.PATCH and x.kind == "DaemonSet":
            ds = snapshot.daemonset(x.namespace or "", x.name)
            if ds is not None:
                x = replace(x, resource_version=x.resource_version or ds.meta.resource_version)
        out.append(x)
    return out


def write_cause(verb: str, kind: str) -> str:
    """The verb and resource of a write, as RBAC names them: `create kernelcachenodes`."""
    resource = {
        c.KIND_NODE: r.KERNEL_CACHE_NODES.plural,
        c.KIND_CACHE: r.KERNEL_CACHES.plural,
        c.KIND_CAPTURE: "kernelcachecaptures/status",
        "DaemonSet": "daemonsets",
        "Event": "events",
    }.get(kind, kind.lower() + "s")
    rbac_verb = {a.UPDATE_STATUS: "update", a.EVENT: "create"}.get(verb, verb)
    return f"{rbac_verb} {resource}"


def refusal_keys(action: a.Action) -> tuple[Key, ...]:
    """The marks a write falls under: its verb on its resource, its object, every write."""
    verb, resource = write_cause(action.verb, action.kind).split(" ", 1)
    obj = f"{action.namespace}/{action.name}" if action.namespace else action.name
    return Key(verb, resource), Key(verb, resource, obj), EVERY_WRITE


def is_admission_refusal(exc: BaseException) -> bool:
    """Refused by an admission policy or webhook (its answer may depend on the object), not by RBAC."""
    text = str(exc)
    return "denied request" in text or "admission webhook" in text


class Executor:
    def __init__(
        self,
        client: Client,
        guard: Callable[[], None] | None = None,
        peers: Any = None,
        refusals: Refusals | None = None,
    ):
        """`guard` (the lease check) is called before each action and, at the last moment, before every
        write request leaves the process (kube/write_guard.py); it raises WriteRefused to stop. `peers`
        (reconcile/peers.py) is asked before each batch and each action whether another controller writes
        now, from what the informers keep; it raises ControllerActive to stop. `refusals` learns the writes
        the API server refuses and holds them back until a probe is due."""
        self.peers = peers
        self.refusals = refusals or Refusals()
        self.client = client
        self.writer = client.guarded(guard) if guard is not None else client
        self.guard = guard
        self.instance = socket.gethostname()
        self.series: dict[str, dict[str, Any]] = {}  # event name -> last written Event

    def apply(self, actions: Iterable[a.Action], progress: Callable[[], None] = lambda: None) -> Result:
        """Apply in dependency order: KernelCacheNodes and placement, KernelCaches, then capture links, then
        events, each batch in parallel. A refused write (the lease is gone) or an unreachable server stops
        everything at once: actions not started are dropped, not sent."""
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
            if self.guard is not None:
                self.guard()
            if self.peers is not None:
                self.peers.check()
            self._run_batch(batch, result, progress)
        return result

    def _run_batch(self, batch: list[a.Action], result: Result, progress: Callable[[], None]) -> None:
        """Up to WORKERS actions at a time, on daemon threads: when a write is refused the batch is dropped
        at once and nobody waits for a worker stuck connecting to a server it cannot reach (it cannot write:
        its request would meet the guard). After any other failure, in-flight work is given a short time to
        finish so that the next pass does not repeat it."""
        todo: queue.SimpleQueue[a.Action] = queue.SimpleQueue()
        for x in batch:
            todo.put(x)
        outcomes: queue.SimpleQueue[tuple[Result | None, BaseException | None]] = queue.SimpleQueue()
        stopped = threading.Event()

        def work() -> None:
            while not stopped.is_set():
                try:
                    action = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    outcomes.put((self._apply_one(action), None))
                except BaseException as exc:  # noqa: BLE001 - handed to the batch's thread
                    outcomes.put((None, exc))
                    return

        threads = [
            threading.Thread(target=work, daemon=True, name=f"write-{i}") for i in range(min(WORKERS, len(batch)))
        ]
        for t in threads:
            t.start()
        try:
            pending = len(batch)
            while pending:
                try:
                    outcome, exc = outcomes.get(timeout=0.25)
                except queue.Empty:
                    if self.guard is not None:
                        self.guard()  # the lease is gone: stop now, not when a stuck worker gives up
                    continue
                pending -= 1
                if exc is not None:
                    raise exc
                assert outcome is not None
                result.merge(outcome)
                progress()
        except WriteRefused:
            stopped.set()
            raise
        except BaseException:
            stopped.set()
            deadline = time.monotonic() + IN_FLIGHT_GRACE
            for t in threads:
                t.join(max(0.0, deadline - time.monotonic()))
            raise

    def _apply_one(self, action: a.Action) -> Result:
        res = Result()
        if self.guard is not None:
            self.guard()
        if self.peers is not None:
            self.peers.check()  # another controller became active: at most the writes in flight leave
        keys = refusal_keys(action)
        if not self.refusals.may_send(keys):
            res.held += 1
            return res
        writes: dict[tuple[str, str], Callable[[a.Action, Result], bool]] = {
            (a.CREATE, c.KIND_NODE): partial(self._create, resource=r.KERNEL_CACHE_NODES),
            (a.DELETE, c.KIND_NODE): self._delete_kcn,
            (a.PATCH, "DaemonSet"): self._patch_daemonset,
            (a.CREATE, c.KIND_CACHE): partial(self._create, resource=r.KERNEL_CACHES),
            (a.UPDATE_STATUS, c.KIND_CAPTURE): self._link_capture,
            (a.EVENT, "Event"): self._event,
        }
        try:
            done = writes[(action.verb, action.kind)](action, res)
        except WriteRefused:
            raise
        except IncompleteError as exc:
            if is_fence_refusal(exc):
                raise Fenced(
                    f"the API server refused a write ({action.verb} {action.kind} {action.name}): {exc}"
                ) from exc
            if isinstance(exc, Forbidden):
                # the part after the object's name is the same for every object: one cause, said once
                message = "forbidden: " + str(exc).split(" is forbidden: ", 1)[-1]
                if is_admission_refusal(exc):
                    self.refusals.refused(keys[1], ADMISSION, message)
                else:
                    self.refusals.refused(keys[0], RBAC, message)
                res.refused += 1
                return res
            if (
                isinstance(exc, Unreachable)
                or isinstance(exc, ApiError)
                and (exc.status in (0, 429) or exc.status >= 500)
            ):
                raise  # the server is unreachable or unwell: stop the pass, not one error per action
            res.errors.append(f"{action.verb} {action.kind} {action.name}: {exc}")
            return res
        res.admitted_again = self.refusals.admitted(keys)
        res.applied.append(action)
        if done:
            res.done[(action.verb, action.kind)] += 1
        else:
            res.skipped.append(f"{action.verb} {action.kind} {action.name}")
        return res

    def _overtaken(self, res: Result, action: a.Action, reason: str, resource: r.Resource) -> bool:
        """A 409/404: the work was done by someone else, or the object changed since the plan. Read it once so
        that the informer's store reflects it now rather than when its watch catches up; never retried here."""
        res.overtaken[(action.verb, action.kind, reason)] += 1
        try:
            res.written.append((resource.plural, self.client.get(resource, action.name, action.namespace)))
        except NotFound:
            res.removed.append((resource.plural, action.namespace or "", action.name, ""))
        except IncompleteError:
            pass
        return False

    # ---- the owned writes -----------------------------------------------------------------------
    def _create(self, action: a.Action, res: Result, resource: r.Resource) -> bool:
        """A KernelCacheNode, or a KernelCache under its generated name."""
        try:
            res.written.append((resource.plural, self.writer.create(resource, action.body or {}, action.namespace)))
        except Conflict:  # someone (KServe's controller) created it: never overwrite
            return self._overtaken(res, action, "already-exists", resource)
        return True

    def _delete_kcn(self, action: a.Action, res: Result) -> bool:
        if not action.uid or not action.resource_version:
            raise IncompleteError("refusing to delete without uid and resourceVersion preconditions")
        try:
            self.writer.delete(
                r.KERNEL_CACHE_NODES, action.name, uid=action.uid, resource_version=action.resource_version
            )
        except NotFound:
            res.overtaken[(action.verb, action.kind, "already-gone")] += 1
            res.removed.append((r.KERNEL_CACHE_NODES.plural, "", action.name, action.uid))
            return False
        except Conflict:  # a precondition failed: not the object the plan saw (replaced, or changed since)
            return self._overtaken(res, action, "changed", r.KERNEL_CACHE_NODES)
        res.removed.append((r.KERNEL_CACHE_NODES.plural, "", action.name, action.uid))
        return True

    def _patch_daemonset(self, action: a.Action, res: Result) -> bool:
        patch = dict(action.body or {})
        if action.resource_version:  # in a merge patch, a precondition: 409 if the DaemonSet changed since
            patch["metadata"] = {**dict(patch.get("metadata") or {}), "resourceVersion": action.resource_version}
        try:
            res.written.append(
                (r.DAEMONSETS.plural, self.writer.merge_patch(r.DAEMONSETS, action.name, patch, action.namespace))
            )
        except Conflict:
            return self._overtaken(res, action, "changed", r.DAEMONSETS)
        except NotFound:
            res.overtaken[(action.verb, action.kind, "already-gone")] += 1
            res.removed.append((r.DAEMONSETS.plural, action.namespace or "", action.name, ""))
            return False
        return True

    def _link_capture(self, action: a.Action, res: Result) -> bool:
        """setCaptureKernelCacheRef: artifacts must be equal; a fresh copy that is no longer complete, has another
        artifact or another session than planned is left alone; a ref naming another KernelCache is replaced."""
        ns = action.namespace or ""
        body = action.body or {}
        planned_session, planned_artifact = body.get("captureSessionID", ""), body.get("artifact")
        kc = KernelCache.from_dict(self.client.get(r.KERNEL_CACHES, action.related, ns))
        if artifact_key(planned_artifact) != artifact_key(kc.artifact.raw if kc.artifact else None):
            raise ApiError(
                f"KernelCache {ns}/{action.related} artifact does not match KernelCacheCapture {ns}/{action.name}",
                status=422,
            )
        for _attempt in range(5):
            raw = self.client.get(r.CAPTURES, action.name, ns)
            capture = Capture.from_dict(raw)
            if (
                not capture_complete(capture)
                or capture.artifact is None
                or capture.runtime_result.get("captureSessionID", "") != planned_session
                or artifact_key(capture.artifact.raw) != artifact_key(planned_artifact)
            ):
                return False  # changed since the plan: the next pass decides again
            ref = capture.kernel_cache_ref
            if ref is not None and (ref.namespace, ref.name) == (ns, action.related):
                return False
            status = raw.get("status") or {}
            status["kernelCacheRef"] = {"namespace": ns, "name": action.related}
            raw["status"] = status
            try:
                res.written.append((r.CAPTURES.plural, self.writer.replace_status(r.CAPTURES, action.name, raw, ns)))
                return True
            except Conflict:
                continue
        raise ApiError(f"KernelCacheCapture {ns}/{action.name}: status kept changing (conflicts)", status=409)

    def _event(self, action: a.Action, res: Result) -> bool:
        ns = action.namespace or ""
        key = hashlib.sha256(f"{action.uid}/{action.event_reason}/{action.message}".encode()).hexdigest()[:16]
        name = f"{action.name}.{key}"[:253]
        now = micro_time()
        known = self.series.get(name)
        annotations = {SIGNATURE_ANNOTATION: action.signature} if action.signature else {}
        if known is None:
            body = {
                "apiVersion": "events.k8s.io/v1",
                "kind": "Event",
                "metadata": {"name": name, "namespace": ns, "annotations": annotations},
                "eventTime": now,
                "type": "Warning",
                "reason": action.event_reason,
                "action": c.EVENT_ACTION_SELECT,
                "note": action.message,
                "reportingController": REPORTING_CONTROLLER,
                "reportingInstance": f"{REPORTING_CONTROLLER}-{self.instance}"[:128],
                "regarding": {
                    "apiVersion": c.API_VERSION,
                    "kind": c.KIND_CAPTURE,
                    "name": action.name,
                    "namespace": ns,
                    "uid": action.uid,
                },
            }
            try:
                self.series[name] = self.writer.create(EVENTS_V1, body, ns)
                return True
            except Conflict:
                known = self.client.get(EVENTS_V1, name, ns)
                seen = ((known.get("metadata") or {}).get("annotations") or {}).get(SIGNATURE_ANNOTATION)
                if action.signature and seen == action.signature:
                    self.series[name] = known  # emitted for this evaluation already (by a replica before us)
                    return False
        count = int(((known.get("series") or {}).get("count")) or 1) + 1
        self.series[name] = self.writer.merge_patch(
            EVENTS_V1,
            name,
            {"metadata": {"annotations": annotations}, "series": {"count": count, "lastObservedTime": now}},
            ns,
        )
        return True
