"""why-not-cached -A: the fleet's counts are the single-pod answers counted (a property over generated fleets),
one decision per distinct pod template, rows per InferenceService and per revision where they differ, the
next command, the scope (-n, -l, --isvc) and the reads it needs."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_kcache.errors import IncompleteError, InputError
from kubectl_kcache.explain.fleet import hit_rate, top_gate
from kubectl_kcache.explain.why_not_cached import explain
from kubectl_kcache.snapshot.model import build
from kubectl_kcache.snapshot.reads import Read
from tests import builders as b

from .test_why_not_cached import CREATED, EARLY, NS, cluster

KC = b.consumer_cache("qwen", ready_at=EARLY)


def owned(pod: dict[str, Any], rs: str, hash_: str) -> dict[str, Any]:
    """The pod as its ReplicaSet and the API server make it, with the service account token volume the
    ServiceAccount admission adds under a random name before webhooks are called."""
    token = f"kube-api-access-{abs(hash(pod['metadata']['name'])) % 10**5:05d}"
    spec = pod["spec"]
    spec.setdefault("volumes", []).append(
        {"name": token, "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}}
    )
    spec["containers"][0].setdefault("volumeMounts", []).append(
        {"name": token, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": True}
    )
    pod["metadata"]["labels"]["pod-template-hash"] = hash_
    # the capture sidecar step is not what these tests count (tests/unit/kernelcache/test_sidecar.py)
    pod["metadata"].setdefault("annotations", {})["serving.kserve.io/kernelcache-sidecar-injection"] = "false"
    pod["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs, "uid": f"uid-{rs}", "controller": True}
    ]
    return pod


# variants of a serving pod, as KServe's webhook would have left them
VARIANTS = {
    "hit": lambda n: b.consumer(n, node="gpu-1", created=CREATED, cache=KC),
    "hit-cpu": lambda n: b.consumer(n, node="cpu-1", created=CREATED, cache=KC),
    "cold-now": lambda n: b.consumer(n, node="gpu-1", created=CREATED),
    "unsupported": lambda n: b.consumer(n, node="gpu-1", created=CREATED, supported=False),
    "footprint": lambda n: b.consumer(n, node="gpu-1", created=CREATED, args=["--dtype", "float16"]),
    "denied": lambda n: b.consumer(n, node="gpu-1", created=CREATED, container_name="vllm"),
    "latest": lambda n: b.consumer(n, created=CREATED, image="registry.example.com/vllm/vllm-openai:latest"),
    "other-isvc": lambda n: b.consumer(n, isvc="other", node="gpu-1", created=CREATED),
    # a hit whose usage annotation was removed by hand or by a tool: the linker and the volume remain
    "hit-no-annotation": lambda n: unannotated(b.consumer(n, node="gpu-1", created=CREATED, cache=KC)),
    "hit-unknown-node": lambda n: b.consumer(n, node="gone-1", created=CREATED, cache=KC),
    "cold-before-ready": lambda n: b.consumer(n, node="cpu-1", created="2026-11-28T08:00:00Z"),
    "fp16-isvc": lambda n: b.consumer(n, isvc="fp16", node="cpu-1", created=CREATED, args=["--dtype", "float16"]),
}


def unannotated(pod: dict[str, Any]) -> dict[str, Any]:
    del pod["metadata"]["annotations"]["internal.serving.kserve.io/kernelcache-usage"]
    return pod


def crowded() -> list[dict[str, Any]]:
    """More KernelCaches with Ready entries for the decisions to go through: one whose footprints no pod has,
    one matching the float16 pods, the standard consumer's twin under a later name (a second match, lost on
    name order), and a twin in another namespace (named, never used)."""
    fp16 = b.consumer_cache(
        "qwen-fp16", identity=b.consumer_identity(NS, isvc="fp16", args=["--dtype", "float16"]), ready_at=EARLY
    )
    other = b.consumer_cache("unrelated", identity={"footprints": b.footprints("unrelated")}, ready_at=EARLY)
    twin = b.consumer_cache("qwen-twin", ready_at=EARLY)
    away = b.consumer_cache("qwen", ns="team-b", ready_at=EARLY)
    entries = {
        f"{k['metadata']['namespace']}/{k['metadata']['name']}": b.cache_entry(k, last_update=EARLY)
        for k in (fp16, other, twin, away)
    }
    return [fp16, other, twin, away, b.namespace("team-b"), b.kcn("cpu-1", entries)]


def single_counts(snap, pods: list[dict[str, Any]]) -> dict[str, tuple[int, int, int, int, int]]:
    """Per InferenceService (pods, cached, cold, now, denied), from one explain() per pod."""
    out: dict[str, list[int]] = {}
    for p in pods:
        w = explain(snap, p["metadata"]["namespace"], p["metadata"]["name"]).to_dict()
        isvc = p["metadata"]["labels"]["serving.kserve.io/inferenceservice"]
        row = out.setdefault(isvc, [0, 0, 0, 0, 0])
        cached = w["result"]["cached"]
        row[0] += 1
        row[1] += cached
        row[2] += not cached
        row[3] += (not cached) and w["result"]["now"]["outcome"] == "cached"
        row[4] += w["result"]["now"]["outcome"] == "rejected"
    return {k: tuple(v) for k, v in out.items()}  # type: ignore[misc]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(sorted(VARIANTS)), min_size=1, max_size=12), st.booleans())
def test_fleet_counts_are_the_single_answers_counted(kinds, more_caches):
    pods = [VARIANTS[k](f"pod-{i}") for i, k in enumerate(kinds)]
    snap = build(cluster(pods, kc=KC, extra=tuple(crowded()) if more_caches else ()), reads_assumed=True)
    fleet = hit_rate(snap)
    got = {r.isvc: (r.pods, r.cached, r.cold, r.now, r.denied) for r in fleet.rows if not r.revision}
    assert got == single_counts(snap, pods)
    # a hit and a miss of the same template were the same pod before the webhook: one decision
    same = {
        "hit": "cold-now",
        "hit-cpu": "cold-now",
        "hit-no-annotation": "cold-now",
        "hit-unknown-node": "cold-now",
        "cold-before-ready": "cold-now",
    }
    assert fleet.decisions == len({same.get(k, k) for k in kinds})
    for result in fleet.pods:  # each pod's row carries the single answer's verdict, placement and next command
        single = explain(snap, NS, result.name)
        doc = single.to_dict()["result"]
        assert result.to_dict()["now"] == {k: v for k, v in doc["now"].items() if k != "denial"}
        assert (result.cached, result.kernel_cache or None) == (doc["cached"], doc["kernelCache"])
        assert result.to_dict()["placement"] == doc["placement"]
        assert result.next_command == single.next_command


def test_pods_of_one_replicaset_share_one_decision_and_a_rollout_restart_helps():
    pods = [
        owned(b.consumer(f"qwen-predictor-5f6d-{i}", node="gpu-1", created=CREATED), "qwen-predictor-5f6d", "5f6d")
        for i in range(20)
    ]
    fleet = hit_rate(build(cluster(pods, kc=KC), reads_assumed=True))
    assert fleet.decisions == 1
    (row,) = fleet.rows
    assert (row.pods, row.cached, row.cold, row.now, row.denied, row.gate) == (20, 0, 20, 20, 0, "")
    assert row.next_command == "kubectl -n team-a rollout restart deployment/qwen-predictor"


def test_revisions_that_differ_get_their_own_rows():
    old = [
        owned(
            b.consumer(f"qwen-predictor-aaa-{i}", node="gpu-1", created=CREATED, cache=KC), "qwen-predictor-aaa", "aaa"
        )
        for i in range(2)
    ]
    new = [
        owned(
            b.consumer(f"qwen-predictor-bbb-{i}", node="gpu-1", created=CREATED, args=["--dtype", "float16"]),
            "qwen-predictor-bbb",
            "bbb",
        )
        for i in range(3)
    ]
    fleet = hit_rate(build(cluster(old + new, kc=KC), reads_assumed=True))
    assert [(r.revision, r.pods, r.cached, r.cold, r.gate, r.gate_count) for r in fleet.rows] == [
        ("", 5, 2, 3, "footprint", 3),
        ("qwen-predictor-aaa", 2, 2, 0, "", 0),
        ("qwen-predictor-bbb", 3, 0, 3, "footprint", 3),
    ]
    assert fleet.rows[0].next_command.startswith("kubectl -n team-a get kernelcache qwen -o ")
    same = [
        owned(
            b.consumer(f"qwen-predictor-ccc-{i}", node="gpu-1", created=CREATED, cache=KC), "qwen-predictor-ccc", "ccc"
        )
        for i in range(2)
    ]
    fleet = hit_rate(build(cluster(old + same, kc=KC), reads_assumed=True))
    assert [r.revision for r in fleet.rows] == [""]  # the revisions agree: one row


def test_denial_comes_first_in_the_next_command_and_the_top_gate_counts_pods():
    pods = [VARIANTS["denied"]("d-1"), VARIANTS["footprint"]("f-1"), VARIANTS["footprint"]("f-2")]
    fleet = hit_rate(build(cluster(pods, kc=KC), reads_assumed=True))
    (row,) = fleet.rows
    assert (row.denied, row.gate, row.gate_count, row.sample) == (1, "footprint", 2, "d-1")
    assert row.next_command == "kubectl -n team-a get pod d-1 -o yaml"
    assert top_gate(fleet.pods) == ("footprint", 2)


def test_scope_namespace_selector_and_isvc():
    pods = [VARIANTS["hit"]("a"), VARIANTS["other-isvc"]("b")]
    pods[0]["metadata"]["labels"]["tier"] = "gold"
    other_ns = b.consumer("c", ns="team-b", node="gpu-1", created=CREATED)
    snap = build(cluster(pods + [other_ns], kc=KC) + [b.namespace("team-b")], reads_assumed=True)
    assert {p.name for p in hit_rate(snap).pods} == {"a", "b", "c"}
    assert {p.name for p in hit_rate(snap, NS).pods} == {"a", "b"}
    assert {p.name for p in hit_rate(snap, None, "tier=gold").pods} == {"a"}
    assert {p.name for p in hit_rate(snap, None, "tier notin (gold)").pods} == {"b", "c"}
    assert {p.name for p in hit_rate(snap, None, isvc="other").pods} == {"b"}
    with pytest.raises(InputError, match="^-l: cannot read label selector term 'a=b=c'"):
        hit_rate(snap, None, "a=b=c")


def test_the_document_and_an_empty_scope():
    snap = build(cluster([VARIANTS["hit"]("a"), VARIANTS["hit-cpu"]("b")], kc=KC), reads_assumed=True)
    doc = hit_rate(snap).to_dict()
    assert list(doc) == ["kind", "version", "scope", "summary", "inferenceServices", "pods"]
    assert doc["summary"] == {
        "pods": 2,
        "cached": 2,
        "cold": 0,
        "wouldBeCachedNow": 0,
        "denied": 0,
        "unprepared": 1,
        "producer": 0,
        "inferenceServices": 1,
        "decisions": 1,
    }
    b_pod = next(p for p in doc["pods"] if p["name"] == "b")
    assert b_pod["placement"]["preparedOnNode"] is False and b_pod["cached"] is True
    assert b_pod["kernelCache"] == "team-a/qwen"
    empty = hit_rate(build(cluster([], kc=KC), reads_assumed=True))
    assert empty.rows == () and empty.all_cached


def test_no_answer_on_reads_not_made():
    snap = build(
        cluster([VARIANTS["hit"]("a")], kc=KC),
        reads=[
            Read("kernelcachenodes", None, "forbidden", 0),
            Read("pods", None, "ok", 1),
            Read("kernelcaches", None, "ok", 1),
            Read("configmaps", "kserve", "ok", 1),
        ],
    )
    with pytest.raises(IncompleteError, match="cannot list kernelcachenodes \\(forbidden\\)"):
        hit_rate(snap)
