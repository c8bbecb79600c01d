"""`monitor --events`: a Kubernetes Event on the involved object when a finding appears or clears.

As client-go's event recorder does it, with its defaults:
* **deduplicated**: the same event (object, reason, message) again within 10 minutes is not sent again (the
  recorder would patch the first one's count; this one only creates, so a repeat is counted and dropped);
* **rate-limited**: a token bucket per involved object, 25 events of burst, refilled one per 5 minutes
  (client-go's `EventSourceObjectSpamFilter`); what the bucket refuses is dropped and counted.

A finding is keyed by check, code, node group and object; its message may change without a new event. The
reason is the finding's `check/code` in CamelCase (`cache-status/entry-error` is `CacheStatusEntryError`), and
`...Resolved` when it clears. Findings present when the monitor starts are its baseline: they are in the
metrics, and only what changes afterwards becomes an Event (a restart does not repeat every event).

Events are core/v1 Events (`kubectl describe` shows them under the object), in the object's namespace, or
`default` for cluster-scoped objects, as client-go puts them. They are the monitor's only writes.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..checks.model import Finding
from ..errors import ApiError, Unreachable
from ..kube import resources as r
from ..kube.client import Client
from ..snapshot import kinds

COMPONENT = "kubectl-kcache-monitor"
BURST = 25
REFILL_SECONDS = 300.0
DEDUP_SECONDS = 600.0
MAX_MESSAGE = 1024  # the API server refuses longer event messages in events.k8s.io; core keeps them short too

FindingKey = tuple[str, str, str, str, str, str]  # check, code, group, kind, namespace, name


def finding_key(f: Finding) -> FindingKey:
    return (f.check, f.code, f.group or "", f.object.kind, f.object.namespace or "", f.object.name)


def reason_of(check: str, code: str) -> str:
    return "".join(part.capitalize() for part in f"{check}-{code}".replace("/", "-").split("-") if part)


def _api_version(kind: str) -> str:
    found = next((k for k in kinds.KINDS if k.kind == kind), None)
    return found.api_version if found is not None else ""


@dataclass
class _Bucket:
    tokens: float
    at: float


class EventFilter:
    """client-go's filters, without the API: a repeat within `DEDUP_SECONDS` is a duplicate; past the token
    bucket of its object an event is rate-limited."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.buckets: dict[tuple[str, str, str], _Bucket] = {}
        self.sent_at: dict[str, float] = {}  # dedup key -> when it was last let through

    def admit(self, obj: tuple[str, str, str], dedup: str) -> str:
        """ "" to send it now, else why not (`duplicate`, `rate-limited`)."""
        now = self.clock()
        last = self.sent_at.get(dedup)
        if last is not None and now - last < DEDUP_SECONDS:
            return "duplicate"
        bucket = self.buckets.get(obj)
        if bucket is None:
            bucket = self.buckets[obj] = _Bucket(BURST, now)
        bucket.tokens = min(BURST, bucket.tokens + (now - bucket.at) / REFILL_SECONDS)
        bucket.at = now
        if bucket.tokens < 1:
            return "rate-limited"
        bucket.tokens -= 1
        self.sent_at[dedup] = now
        return ""


def changes(
    before: dict[FindingKey, Finding] | None, findings: Iterable[Finding]
) -> tuple[dict[FindingKey, Finding], list[tuple[Finding, bool]]]:
    """(the findings now, by key; those that appeared (False) or cleared (True) since `before`); no changes
    for the first call (`before` None: the baseline)."""
    current = {finding_key(f): f for f in findings if not f.suppressed}
    if before is None:
        return current, []
    return current, [(f, False) for k, f in current.items() if k not in before] + [
        (f, True) for k, f in before.items() if k not in current
    ]


class EventRecorder:
    def __init__(
        self, client: Client, clock: Callable[[], float] = time.monotonic, log: Callable[[str], None] = lambda _m: None
    ):
        self.client = client
        self.log = log
        self.host = os.environ.get("HOSTNAME", "") or "monitor"
        self.known: dict[FindingKey, Finding] | None = None  # None: no baseline yet
        self.filter = EventFilter(clock)
        self.sent: Counter = Counter()  # type -> events created
        self.dropped: Counter = Counter()  # reason -> events not sent
        self.lock = threading.Lock()

    def observe(self, findings: Iterable[Finding]) -> list[dict[str, Any]]:
        """Create the events for findings that appeared or cleared since the last call; returns the bodies
        sent (the first call only takes the baseline)."""
        self.known, changed = changes(self.known, findings)
        out = []
        for f, cleared in changed:
            body = event_body(f, cleared, self.host)
            if self._send(body):
                out.append(body)
        return out

    def _send(self, body: dict[str, Any]) -> bool:
        obj = body["involvedObject"]
        key = (obj["kind"], obj.get("namespace", ""), obj["name"])
        with self.lock:
            refused = self.filter.admit(key, "/".join((*key, body["reason"], body["message"])))
            if refused:
                self.dropped[refused] += 1
                return False
        try:
            self.client.create(r.EVENTS, body, body["metadata"]["namespace"])
        except (ApiError, Unreachable) as exc:
            with self.lock:
                self.dropped["failed"] += 1
            self.log(f"cannot create event {body['reason']} on {obj['kind']} {obj['name']}: {exc}")
            return False
        with self.lock:
            self.sent[body["type"]] += 1
        return True


def event_body(f: Finding, cleared: bool, host: str) -> dict[str, Any]:
    """The core/v1 Event saying that `f` appeared (or cleared)."""
    namespace = f.object.namespace or "default"
    reason = reason_of(f.check, f.code) + ("Resolved" if cleared else "")
    message = (f"resolved: {f.message}" if cleared else f.message)[:MAX_MESSAGE]
    now = dt.datetime.now(dt.timezone.utc)
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    digest = hashlib.sha256(f"{reason}/{message}/{now.isoformat()}".encode()).hexdigest()[:16]
    involved = {"kind": f.object.kind, "name": f.object.name, "apiVersion": _api_version(f.object.kind)}
    if f.object.namespace:
        involved["namespace"] = f.object.namespace
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{f.object.name}.{digest}"[-253:].lstrip(".-"), "namespace": namespace},
        "involvedObject": involved,
        "reason": reason,
        "message": message,
        "type": "Normal" if cleared or f.severity == "info" else "Warning",
        "source": {"component": COMPONENT, "host": host},
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
        "reportingComponent": COMPONENT,
        "reportingInstance": f"{COMPONENT}-{host}"[:128],
    }
