"""Producers and the pods of a revision being captured start cold by design (kernelcache/cold_start.py): in the
fleet they are their own count, never cold, never `now`, not in the hit rate's denominator; `status` and the
monitor use the same numbers. On both bundled examples and on a generated fleet."""

from __future__ import annotations

import re
from pathlib import Path

from kubectl_kcache.explain.fleet import hit_rate
from kubectl_kcache.explain.why_not_cached import explain
from kubectl_kcache.kernelcache.names import capture_revision_name
from kubectl_kcache.monitor.evaluate import evaluate
from kubectl_kcache.monitor.metrics import Health, render
from kubectl_kcache.report.hit_rate_table import serving_lines
from kubectl_kcache.snapshot.files.from_files import load_files
from kubectl_kcache.snapshot.model import build
from tests import builders as b

from .test_fleet import KC, owned
from .test_why_not_cached import CREATED, NS, cluster

ROOT = Path(__file__).resolve().parents[3]
HEALTHY = load_files([str(ROOT / "examples" / "healthy-cluster.yaml")])
BROKEN = load_files([str(ROOT / "examples" / "broken-cluster.yaml")])


def test_the_healthy_example_has_no_miss_its_cold_pods_are_producers():
    fleet = hit_rate(HEALTHY)
    t = fleet.totals
    assert (t.pods, t.cached, t.cold, t.now, t.denied, t.producer) == (5, 2, 0, 0, 0, 3)
    assert t.hit_rate == 100 and fleet.clean
    for p in fleet.pods:
        if not p.cached:  # each is the pod its capture's active session names
            assert p.cold_by_design is not None and p.cold_by_design["reason"] == "producer"
            single = explain(HEALTHY, p.namespace, p.name)
            assert single.exit_cached and "delete pod" not in single.next_command
            assert single.notes[-1].startswith("This pod produced KernelCache ")
    assert all(r.cold == r.now == 0 and r.producer == 1 for r in fleet.rows)


def test_the_broken_examples_producers_are_four_of_its_five_cold_pods():
    fleet = hit_rate(BROKEN)
    t = fleet.totals
    assert (t.pods, t.cached, t.cold, t.now, t.producer) == (5, 0, 1, 1, 4)
    assert {p.name for p in fleet.pods if p.producer} == {
        "gemma-2-9b-it-predictor-7c9f5d8b6b-lsg8h",
        "llama-3-1-70b-instruct-predictor-84b9f6cd57-xvmk9",
        "llama-3-1-8b-instruct-predictor-7d9c6b5f48-nhngp",
        "qwen2-5-vl-7b-instruct-predictor-6f9d8c7b45-9q5fr",
    }
    assert t.hit_rate == 0 and not fleet.clean  # the mistral pod is a miss a recreate would fix


def test_status_and_the_monitor_count_as_the_fleet():
    lines = "".join(serving_lines(hit_rate(HEALTHY), color=False, width=None))
    assert "0 cold, 3 producers (cold by design, not in the hit rate)" in lines
    assert "would be cached now" not in lines and "recreate" not in lines
    text = render(evaluate(HEALTHY), Health(ready=True, read_errors={}, last_read=1.0, evaluations=1))
    got = {
        (m.group(1), m.group(2)): float(m.group(3))
        for m in re.finditer(
            r'^kcache_serving_pods\{.*?inferenceservice="([^"]+)".*?outcome="(\w+)"\} (\S+)$', text, re.M
        )
    }
    assert got and all(v == 0 for (_, state), v in got.items() if state in ("now", "cold"))
    assert {isvc: v for (isvc, state), v in got.items() if state == "producer"} == {
        "mistral-small-24b-instruct": 1,
        "llama-3-1-8b-instruct": 1,
        "qwen2-5-coder-7b-instruct": 1,
    }


def test_a_generated_fleet_producers_and_being_captured_pods_are_apart_from_the_hit_rate():
    """One revision captured (its producer cold, the others cached), one being captured (the producer and a
    second pod, both cold by design), and one plain miss."""
    done = [owned(b.consumer(f"qwen-p-aaa-{i}", node="gpu-1", created=CREATED), "qwen-p-aaa", "aaa") for i in range(3)]
    for p in done[1:]:
        p.update(owned(b.consumer(p["metadata"]["name"], node="gpu-1", created=CREATED, cache=KC), "qwen-p-aaa", "aaa"))
    capturing = [
        owned(
            b.consumer(f"qwen-p-bbb-{i}", node="gpu-1", created=CREATED, args=["--dtype", "float16"]),
            "qwen-p-bbb",
            "bbb",
        )
        for i in range(2)
    ]
    miss = [owned(b.consumer("other-p-ccc-0", isvc="other", node="gpu-1", created=CREATED), "other-p-ccc", "ccc")]
    captures = [
        b.capture(
            capture_revision_name("qwen", "aaa"), ns=NS, isvc="qwen", status=b.capture_status(pod="qwen-p-aaa-0")
        ),
        b.capture(
            capture_revision_name("qwen", "bbb"),
            ns=NS,
            isvc="qwen",
            status=b.capture_status(pod="qwen-p-bbb-0", phase="Capturing"),
        ),
    ]
    snap = build(cluster(done + capturing + miss, kc=KC, extra=tuple(captures)), reads_assumed=True)
    fleet = hit_rate(snap)
    reasons = {p.name: (p.cold_by_design or {}).get("reason") for p in fleet.pods}
    assert reasons == {
        "qwen-p-aaa-0": "producer",
        "qwen-p-aaa-1": None,
        "qwen-p-aaa-2": None,
        "qwen-p-bbb-0": "producer",
        "qwen-p-bbb-1": "being-captured",
        "other-p-ccc-0": None,
    }
    qwen = next(r for r in fleet.rows if r.isvc == "qwen" and not r.revision)
    assert (qwen.pods, qwen.cached, qwen.cold, qwen.now, qwen.producer, qwen.hit_rate) == (5, 2, 0, 0, 3, 100)
    other = next(r for r in fleet.rows if r.isvc == "other")
    assert (other.cold, other.now, other.producer, other.hit_rate) == (1, 1, 0, 0)
    assert (fleet.totals.producer, fleet.totals.cold, fleet.totals.hit_rate) == (3, 1, 66)
    for p in fleet.pods:  # each pod's verdict is the single answer's
        single = explain(snap, NS, p.name).to_dict()["result"]["coldByDesign"]
        assert p.to_dict()["coldByDesign"] == single
