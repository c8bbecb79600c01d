"""kubectl kcache monitor against the test bed, as the service account of deploy/monitor with only its read-only
role: it becomes ready, its /metrics follow the cluster within the coalescing delay (a serving pod starts cold
while a Ready cache exists, a node loses its group label, an entry goes Error), /report is the doctor's page,
and the API server's audit log shows no write at all; with --events (and deploy/monitor/rbac-events.yaml) its
only writes are Event creates, on the objects of findings that appeared or cleared."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests import builders as b
from tests.alert_rules import alerts, scraped, unknown
from tests.unit.monitor.test_alert_rules import possible_values

from .cluster import OWNED_LABEL

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SA = "system:serviceaccount:kserve:kubectl-kcache-monitor"
NS = "team-a"
EARLY = "2026-11-29T08:00:00Z"
CONFIG = {"enabled": True, "defaultNodeGroup": "gpu"}
SETTLE = 6.0  # seconds: the watches' coalescing (at most 1 s) plus an evaluation and the event's way here
SAMPLE = re.compile(r"^(\w+)(?:\{(.*)\})? (\S+)$")
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def metrics(port: int) -> dict[tuple[str, frozenset], float]:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    out = {}
    for line in text.splitlines():
        m = SAMPLE.match(line)
        if m and not line.startswith("#"):
            out[(m.group(1), frozenset(LABEL.findall(m.group(2) or "")))] = float(m.group(3))
    return out


def gauge(port: int, name: str, **labels: str) -> float | None:
    return metrics(port).get((name, frozenset(labels.items())))


def get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def install(cluster) -> dict[str, Any]:
    """A group of two KWOK nodes, both with a Ready entry of KernelCache qwen, one serving pod that got it, and
    the pod webhook configured with failurePolicy Ignore and a ready endpoint behind its Service (no webhook
    server runs: new pods are created untouched, as when KServe's webhook was down)."""
    cluster.apply(
        [
            b.config_map(CONFIG),
            b.group("gpu", {"pool": "gpu"}),
            b.node("gpu-1", {"pool": "gpu"}),
            b.node("gpu-2", {"pool": "gpu"}),
            b.kcn("gpu-1"),
            b.kcn("gpu-2"),
        ]
    )
    kc = b.consumer_cache("qwen", ns=NS, ready_at=EARLY)
    cluster.apply(kc)
    cluster.set_status("kernelcache", "qwen", kc["status"], NS)
    for node in ("gpu-1", "gpu-2"):
        entry = b.cache_entry(kc, last_update=EARLY)
        cluster.set_status("kernelcachenode", node, {"cacheStatus": {f"{NS}/qwen": entry}})
    hit = b.consumer("qwen-hit", node="gpu-1", created=EARLY, cache=kc, status=False)
    hit["spec"]["terminationGracePeriodSeconds"] = 0
    cluster.create([hit])
    hook = b.webhook_configuration(failure_policy="Ignore")
    hook["metadata"]["labels"][OWNED_LABEL] = "true"
    # its Service has a ready endpoint (the webhook is up now: a recreate would get the cache), but no server
    # answers in the test bed, so the pods created here get none (failurePolicy Ignore, as when it was down)
    cluster.apply([b.webhook_endpoints(), hook])
    cluster.kubectl("apply", "-f", str(ROOT / "deploy" / "monitor" / "rbac.yaml"))
    return kc


@contextmanager
def monitor(cluster, tmp_path: Path, *args: str, ready: bool = True):
    log = tmp_path / "monitor.log"
    with open(log, "w") as err:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kubectl_kcache",
                "monitor",
                "--port",
                "0",
                "--as",
                SA,
                "--resync-period",
                "30",
                *args,
            ],
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=cluster.env,
        )
    try:
        found = cluster.wait_for(
            "the monitor's port", lambda: re.search(r"on 0\.0\.0\.0:(\d+)", log.read_text()), timeout=30
        )
        port = int(found.group(1))
        if ready:
            cluster.wait_for("/readyz", lambda: get(port, "/readyz")[0] == 200, timeout=60)
        yield port, log
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def mine(cluster, mark: int) -> list[dict[str, Any]]:
    return [
        e
        for e in cluster.audit_events(mark)
        if " monitor" in e.get("userAgent", "") and e.get("userAgent", "").startswith("kubectl-kcache/")
    ]


def changed_within(what: str, check, cluster) -> float:
    """Seconds from now until `check()` holds (asserted within SETTLE)."""
    start = time.monotonic()
    cluster.wait_for(what, check, timeout=SETTLE, interval=0.1)
    return time.monotonic() - start


def test_metrics_follow_the_cluster_and_it_never_writes(cluster, tmp_path):
    kc = install(cluster)
    mark = cluster.audit_mark()
    with monitor(cluster, tmp_path) as (port, _log):
        assert gauge(port, "kcache_nodegroup_members", nodegroup="gpu") == 2
        ready = {"namespace": NS, "kernelcache": "qwen", "nodegroup": "gpu", "assigned": "true"}
        assert gauge(port, "kcache_kernelcache_nodes", state="Ready", **ready) == 2
        pods = {"namespace": NS, "inferenceservice": "qwen"}
        assert gauge(port, "kcache_serving_pods", outcome="cached", **pods) == 1
        assert gauge(port, "kcache_serving_pods", outcome="cold", **pods) == 0
        assert (
            gauge(port, "kcache_monitor_ready") == 1 and gauge(port, "kcache_monitor_evaluation_duration_seconds") > 0
        )
        assert time.time() - gauge(port, "kcache_monitor_last_successful_read_timestamp_seconds") < 60
        status, page = get(port, "/report")
        assert status == 200 and page.startswith("<!DOCTYPE html>")
        assert "<h2>Serving pods</h2>" in page and "qwen" in page
        assert get(port, "/healthz") == (200, "ok\n")
        status, index = get(port, "/")
        assert status == 200 and all(
            f'href="{path}"' in index for path in ("/metrics", "/report", "/healthz", "/readyz")
        )
        status, text = get(port, "/metrics")
        live = scraped(text)
        assert status == 200 and {a.name: unknown(a, live, possible_values()) for a in alerts()} == {
            a.name: [] for a in alerts()
        }  # every alert of deploy/monitor selects what this scrape exports

        # a serving pod starts cold while a Ready cache exists (the webhook is down, failurePolicy Ignore)
        cold = b.consumer("qwen-cold", node="gpu-2", created=EARLY, status=False)
        cold["spec"]["terminationGracePeriodSeconds"] = 0
        cluster.create([cold])
        changed_within(
            "a cold pod that would be cached now",
            lambda: (
                (
                    gauge(port, "kcache_serving_pods", outcome="cold", **pods),
                    gauge(port, "kcache_serving_pods", outcome="now", **pods),
                )
                == (1, 1)
            ),
            cluster,
        )

        # a node loses its group label: one member left, its entry no longer counted in the group
        cluster.kubectl("label", "node", "gpu-2", "pool-")
        changed_within(
            "one member",
            lambda: (
                gauge(port, "kcache_nodegroup_members", nodegroup="gpu") == 1
                and gauge(port, "kcache_kernelcache_nodes", state="Ready", **ready) == 1
            ),
            cluster,
        )

        # the entry goes Error on the last member: none Ready in the group; admission does not look at groups, and
        # gpu-2's KernelCacheNode still has a Ready entry, so the cold pod would still get the cache now
        cluster.set_status(
            "kernelcachenode",
            "gpu-1",
            {"cacheStatus": {f"{NS}/qwen": b.cache_entry(kc, state="Error", last_update=EARLY, message="pull failed")}},
        )
        changed_within(
            "an Error entry",
            lambda: (
                gauge(port, "kcache_kernelcache_nodes", state="Error", **ready) == 1
                and gauge(port, "kcache_kernelcache_nodes", state="Ready", **ready) == 0
                and gauge(port, "kcache_serving_pods", outcome="now", **pods) == 1
            ),
            cluster,
        )
        assert gauge(port, "kcache_finding", check="cache-status", code="entry-error", severity="error") == 1

        # the cold pod is the producer of a capture (its active session names it): cold by design, so it leaves
        # cold and now (the alert on state="now" stops counting it) for producer
        cluster.apply([b.capture("qwen-kcc-0000000000", isvc="qwen")])
        cluster.set_status(
            "kernelcachecapture",
            "qwen-kcc-0000000000",
            {"phase": "Capturing", "activeSession": {"id": "s-1", "podName": "qwen-cold", "nodeName": "gpu-2"}},
            NS,
        )
        changed_within(
            "a producer",
            lambda: (
                tuple(gauge(port, "kcache_serving_pods", outcome=s, **pods) for s in ("cold", "now", "producer"))
                == (0, 0, 1)
            ),
            cluster,
        )
        assert get(port, "/readyz")[0] == 200
    events = mine(cluster, mark)
    assert events, "the monitor's requests are in the audit log"
    assert {e["verb"] for e in events} <= {"get", "list", "watch"}
    assert all(e.get("impersonatedUser", {}).get("username") == SA for e in events)  # with only its role


def test_with_events_its_only_writes_are_event_creates(cluster, tmp_path):
    kc = install(cluster)
    cluster.kubectl("apply", "-f", str(ROOT / "deploy" / "monitor" / "rbac-events.yaml"))
    # events of cluster-scoped objects go to default, which the reset leaves alone
    cluster.kubectl("delete", "events", "-n", "default", "--field-selector", "source=kubectl-kcache-monitor")
    mark = cluster.audit_mark()
    with monitor(cluster, tmp_path, "--events") as (port, _log):
        cluster.set_status(
            "kernelcachenode",
            "gpu-1",
            {"cacheStatus": {f"{NS}/qwen": b.cache_entry(kc, state="Error", last_update=EARLY, message="pull failed")}},
        )
        cluster.wait_for(
            "a Warning event", lambda: gauge(port, "kcache_monitor_events_total", type="Warning"), timeout=SETTLE
        )
        cluster.set_status(
            "kernelcachenode", "gpu-1", {"cacheStatus": {f"{NS}/qwen": b.cache_entry(kc, last_update=EARLY)}}
        )
        cluster.wait_for(
            "the Normal event of its clearing",
            lambda: gauge(port, "kcache_monitor_events_total", type="Normal"),
            timeout=SETTLE,
        )
        # the same finding again within the dedup window: it appears and clears, no event is sent
        for state, dropped in (("Error", 1), ("Ready", 2)):
            cluster.set_status(
                "kernelcachenode",
                "gpu-1",
                {
                    "cacheStatus": {
                        f"{NS}/qwen": b.cache_entry(
                            kc, state=state, last_update=EARLY, message="pull failed" if state == "Error" else ""
                        )
                    }
                },
            )
            cluster.wait_for(
                f"the repeat ({state}) dropped as a duplicate",
                lambda n=dropped: (gauge(port, "kcache_monitor_events_dropped_total", reason="duplicate") or 0) >= n,
                timeout=SETTLE,
            )
        sent = sum(v for (name, _), v in metrics(port).items() if name == "kcache_monitor_events_total")
    writes = [e for e in mine(cluster, mark) if e["verb"] not in ("get", "list", "watch")]
    assert writes and {(e["verb"], e["objectRef"]["resource"]) for e in writes} == {("create", "events")}
    listed = json.loads(
        cluster.kubectl("get", "events", "-A", "--field-selector", "source=kubectl-kcache-monitor", "-o", "json").stdout
    )["items"]
    reasons = {(e["reason"], e["type"], e["involvedObject"]["kind"], e["involvedObject"]["name"]) for e in listed}
    assert ("CacheStatusEntryError", "Warning", "KernelCacheNode", "gpu-1") in reasons, reasons
    assert ("CacheStatusEntryErrorResolved", "Normal", "KernelCacheNode", "gpu-1") in reasons, reasons
    # one create per event the monitor counts, each (reason, object, message) once
    assert len(writes) == len(listed) == sent
    assert len({(e["reason"], e["involvedObject"]["name"], e["message"]) for e in listed}) == len(listed)


def test_not_ready_while_it_cannot_read_then_ready_once_its_role_is_bound(cluster, tmp_path):
    install(cluster)
    cluster.kubectl("delete", "clusterrolebinding", "kubectl-kcache-monitor")
    with monitor(cluster, tmp_path, ready=False) as (port, log):
        status, text = cluster.wait_for(
            "/readyz refusing", lambda: (r := get(port, "/readyz"))[0] == 503 and "forbidden" in r[1] and r, timeout=30
        )
        assert text.startswith("not ready:\n- "), text
        assert get(port, "/healthz") == (200, "ok\n")  # alive: restarting it would not help
        assert gauge(port, "kcache_monitor_ready") == 0
        assert sum(v for (name, _), v in metrics(port).items() if name == "kcache_monitor_read_errors_total") >= 1
        cluster.kubectl("apply", "-f", str(ROOT / "deploy" / "monitor" / "rbac.yaml"))
        # it lists again 30 s after the refused lists, and becomes ready
        cluster.wait_for("/readyz", lambda: get(port, "/readyz")[0] == 200, timeout=60)
        assert gauge(port, "kcache_monitor_ready") == 1
        assert gauge(port, "kcache_serving_pods", outcome="cached", namespace=NS, inferenceservice="qwen") == 1, get(
            port, "/metrics"
        )[1]
