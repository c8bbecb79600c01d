"""The monitor's pure parts: one evaluation of the broken example rendered as Prometheus text (the numbers
the commands give, label values escaped), the Event filter (client-go's dedup and token bucket) and the
events a change of findings makes, and deploy/monitor's role being exactly the doctor's reads."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from kubectl_kcache.checks import catalogue
from kubectl_kcache.checks.model import DoctorReport, Finding, ObjectRef
from kubectl_kcache.explain.fleet import hit_rate
from kubectl_kcache.explain.status import fleet_status
from kubectl_kcache.monitor import events as ev
from kubectl_kcache.monitor.evaluate import Evaluation, evaluate
from kubectl_kcache.monitor.metrics import Health, render
from kubectl_kcache.provenance import Provenance
from kubectl_kcache.snapshot import kinds
from kubectl_kcache.snapshot.files.from_files import load_files
from kubectl_kcache.snapshot.model import build
from kubectl_kcache.snapshot.reads import Read
from tests import builders as b

ROOT = Path(__file__).resolve().parents[3]
BROKEN = load_files([str(ROOT / "examples" / "broken-cluster.yaml")])
LINE = re.compile(r"^(kcache_\w+)(?:\{(.*)\})? (\S+)$")


def samples(text: str) -> dict[tuple[str, frozenset], float]:
    out = {}
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
            out[(m.group(1), labels)] = float(m.group(3))
    return out


def test_metrics_of_one_evaluation_are_the_commands_numbers():
    evaluation = evaluate(BROKEN)
    text = render(evaluation, Health(ready=True, read_errors={"watch nodes": 2}, last_read=1.5e9, evaluations=3))
    got = samples(text)
    active = [f for f in evaluation.report.findings if not f.suppressed]
    assert sum(v for (name, _), v in got.items() if name == "kcache_finding") == len(active)
    status = fleet_status(BROKEN)
    for g in status.groups:
        assert got[("kcache_nodegroup_members", frozenset({("nodegroup", g.name)}))] == g.members
        for cell in g.caches:
            namespace, name = cell.cache.split("/")
            labels = {("namespace", namespace), ("kernelcache", name), ("nodegroup", g.name)}
            labels.add(("assigned", str(cell.assigned).lower()))
            assert got[("kcache_kernelcache_nodes", frozenset(labels | {("state", "Ready")}))] == cell.counts.ready
            none = got[("kcache_kernelcache_nodes", frozenset(labels | {("state", "none")}))]
            assert none == cell.no_entry(g.ready)  # the group's Ready members without an entry
    for row in hit_rate(BROKEN).rows:
        key = {("namespace", row.namespace), ("inferenceservice", row.isvc)}
        assert got[("kcache_serving_pods", frozenset(key | {("outcome", "cold")}))] == row.cold
        assert got[("kcache_serving_pods", frozenset(key | {("outcome", "now")}))] == row.now
    assert got[("kcache_monitor_read_errors_total", frozenset({("read", "watch nodes")}))] == 2
    assert got[("kcache_monitor_evaluations_total", frozenset())] == 3
    assert got[("kcache_monitor_ready", frozenset())] == 1
    assert "# TYPE kcache_monitor_read_errors_total counter" in text
    for w in evaluation.readiness.rows:  # type: ignore[union-attr]
        key = frozenset({("namespace", w.namespace), ("kernelcache", w.name)})
        assert got[("kcache_kernelcache_ready", key)] == int(w.ready)
        causes = {
            dict(labels)["cause"]
            for name, labels in got
            if name == "kcache_kernelcache_not_ready_cause"
            and {("namespace", w.namespace), ("kernelcache", w.name)} <= labels
        }
        assert causes == ({w.top_cause} if w.top_cause else set())


def test_cache_entries_are_over_the_groups_ready_members():
    """As KServe counts them: the five states add up to the Ready members (cordoned included); a NotReady
    member is in none, even with an Error entry, and without an entry it is not `none` either."""
    snap = build(
        [
            b.group("gpu", {"pool": "gpu"}),
            b.node("n1", {"pool": "gpu"}),
            b.node("n2", {"pool": "gpu"}, unschedulable=True),  # cordoned: still counted
            b.node("n3", {"pool": "gpu"}),
            b.node("n4", {"pool": "gpu"}, ready=False),  # an Error KServe does not count
            b.node("n5", {"pool": "gpu"}, ready=False),  # NotReady without an entry: not `none`
            b.kcn("n1", {"team-a/c": b.entry("team-a", "c", "Ready")}),
            b.kcn("n2", {"team-a/c": b.entry("team-a", "c", "Pulling")}),
            b.kcn("n3", {}),
            b.kcn("n4", {"team-a/c": b.entry("team-a", "c", "Error")}),
            b.kernel_cache("c", group_name="gpu"),
        ],
        reads=tuple(Read(resource, None, "ok") for resource in kinds.PLURALS),
    )
    status = fleet_status(snap)
    evaluation = Evaluation(
        DoctorReport(checks=(), findings=()), status, "not computed", "not computed", Provenance("files"), 0.0
    )
    got = samples(render(evaluation, Health(ready=True, read_errors={}, last_read=0, evaluations=1)))
    labels = {("namespace", "team-a"), ("kernelcache", "c"), ("nodegroup", "gpu"), ("assigned", "true")}
    by_state = {
        state: got[("kcache_kernelcache_nodes", frozenset(labels | {("state", state)}))]
        for state in ("Ready", "Pending", "Pulling", "Error", "none")
    }
    assert by_state == {"Ready": 1, "Pending": 0, "Pulling": 1, "Error": 0, "none": 1}
    assert sum(by_state.values()) == status.groups[0].caches[0].node_count == 3
    assert got[("kcache_nodegroup_members", frozenset({("nodegroup", "gpu")}))] == 5


def test_label_values_from_the_cluster_are_escaped():
    text = render(None, Health(ready=False, read_errors={'watch "x"\n\\': 1}, last_read=0, evaluations=0))
    assert 'kcache_monitor_read_errors_total{read="watch \\"x\\"\\n\\\\"} 1.0' in text
    assert "\nkcache_monitor_ready 0.0\n" in text
    assert "\nkcache_monitor_last_successful_read_timestamp_seconds 0.0\n" in text  # from the first scrape


def finding(name: str, code: str = "entry-error", severity: str = "error") -> Finding:
    return Finding("cache-status", severity, ObjectRef("KernelCacheNode", name), f"entry on {name} is Error", code=code)


def test_findings_that_appear_or_clear_after_the_baseline():
    known, changed = ev.changes(None, [finding("gpu-1")])
    assert changed == []  # the baseline makes no events
    known, changed = ev.changes(known, [finding("gpu-1"), finding("gpu-2")])
    assert [(f.object.name, cleared) for f, cleared in changed] == [("gpu-2", False)]
    moved = Finding(
        "cache-status", "error", ObjectRef("KernelCacheNode", "gpu-2"), "another message", code="entry-error"
    )
    known, changed = ev.changes(known, [moved])  # a new message alone is no new event
    assert [(f.object.name, cleared) for f, cleared in changed] == [("gpu-1", True)]


def test_event_bodies():
    body = ev.event_body(finding("gpu-1"), cleared=False, host="h")
    assert (body["reason"], body["type"], body["metadata"]["namespace"]) == (
        "CacheStatusEntryError",
        "Warning",
        "default",
    )
    assert body["involvedObject"] == {
        "kind": "KernelCacheNode",
        "name": "gpu-1",
        "apiVersion": "serving.kserve.io/v1alpha1",
    }
    assert body["metadata"]["name"].startswith("gpu-1.") and body["source"]["component"] == "kubectl-kcache-monitor"
    cleared = ev.event_body(finding("gpu-1"), cleared=True, host="h")
    assert (cleared["reason"], cleared["type"]) == ("CacheStatusEntryErrorResolved", "Normal")
    assert cleared["message"] == "resolved: entry on gpu-1 is Error"
    pod = Finding("agent", "warning", ObjectRef("Pod", "agent-x", "kserve"), "m", code="pod-failed")
    assert ev.event_body(pod, False, "h")["metadata"]["namespace"] == "kserve"


def test_filter_drops_repeats_for_ten_minutes_and_keeps_a_token_bucket_per_object():
    now = [0.0]
    f = ev.EventFilter(clock=lambda: now[0])
    obj = ("Node", "", "gpu-1")
    assert f.admit(obj, "a") == ""
    assert f.admit(obj, "a") == "duplicate"
    for i in range(ev.BURST - 1):
        assert f.admit(obj, f"m{i}") == ""
    assert f.admit(obj, "one-too-many") == "rate-limited"
    assert f.admit(("Node", "", "gpu-2"), "gpu-2/one") == ""  # another object has its own bucket
    now[0] += ev.REFILL_SECONDS
    assert f.admit(obj, "one-too-many") == ""  # one token back after five minutes
    assert f.admit(obj, "two-too-many") == "rate-limited"
    now[0] += ev.DEDUP_SECONDS
    assert f.admit(obj, "a") == ""  # no longer a duplicate (and two tokens back)


def rules(doc: dict) -> dict[tuple[str, str], set[str]]:
    out: dict[tuple[str, str], set[str]] = {}
    for rule in doc["rules"]:
        for group in rule["apiGroups"]:
            for res in rule["resources"]:
                out[(group, res)] = set(rule["verbs"])
    return out


def test_the_monitor_role_is_the_doctors_reads_and_events_only_create():
    docs = list(yaml.safe_load_all((ROOT / "deploy" / "monitor" / "rbac.yaml").read_text()))
    role = next(d for d in docs if d["kind"] == "ClusterRole")
    doctor = yaml.safe_load("\n".join(catalogue.cluster_role()))
    assert rules(role) == rules(doctor)
    assert all(
        verbs == ({"list", "watch"} if res == "secrets" else {"get", "list", "watch"})
        for (_, res), verbs in rules(role).items()
    )
    events = next(
        d
        for d in yaml.safe_load_all((ROOT / "deploy" / "monitor" / "rbac-events.yaml").read_text())
        if d["kind"] == "ClusterRole"
    )
    assert rules(events) == {("", "events"): {"create"}}
