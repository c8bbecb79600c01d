"""The why-not-cached tree, rendered without colour: the verdicts, every gate, the candidates with the
gate that rejected each, the notes and the next command; names from the cluster escaped."""

from __future__ import annotations

import io

from kubectl_kcache.explain.why_not_cached import explain
from kubectl_kcache.report.why_not_cached_tree import render as render_why
from kubectl_kcache.snapshot.model import build
from tests import builders as b

from .test_why_not_cached import CREATED, EARLY, LATER, NS, cluster, consumer


def render(items, pod: str = "pod") -> str:
    out = io.StringIO()
    render_why(explain(build(items, reads_assumed=True), NS, pod), out, color=False, width=120, wide=True)
    return out.getvalue()


def flat(text: str) -> str:
    for ch in "│├└─":
        text = text.replace(ch, " ")
    return " ".join(text.split())


def test_miss_that_would_hit_now():
    kc = b.consumer_cache("qwen", ready_at=LATER)
    text = render(cluster(kc=kc, entry=b.cache_entry(kc, last_update=LATER)))
    assert "\x1b[" not in text
    assert text.splitlines()[0] == "why-not-cached team-a/pod → ✗ not cached; now: ✓ team-a/qwen (Workload match)"
    words = flat(text)
    assert f"Pod team-a/pod on node gpu-1, created {CREATED} (InferenceService qwen)" in words
    assert "At creation ✗ no cache: no internal.serving.kserve.io/kernelcache-usage annotation" in words
    assert '✓ kernelcache-supported annotation serving.kserve.io/kernelcache-supported: "true"' in words
    assert "✓ team-a/qwen Workload match ← selected" in words
    assert f"gpu-1: Ready lastUpdate {LATER}" in words
    assert "The webhook adds volume kernel-cache-source: image registry.example.com/team-a/qwen@sha256:" in words
    assert "The cache became Ready after the pod was created" in words
    lines = text.splitlines()
    assert lines[lines.index("Next:") + 1] == "  kubectl -n team-a delete pod pod"  # whole, outside the tree
    assert lines.index("Next:") < 10


def test_blocked_candidate_and_first_failure():
    kc = b.consumer_cache("qwen", ready_at=EARLY, mount_type="pvc")
    words = flat(render(cluster(kc=kc)))
    assert "why-not-cached team-a/pod → ✗ not cached; now: ✗ no cache (blocked by mount-type)" in words
    assert "✗ selection no candidate passes every check (see candidates) [no cache] ← first failure" in words
    assert ('✗ team-a/qwen mount-type: spec.mountType is "pvc": the webhook only mounts oci caches') in words
    assert "Next: kubectl -n team-a get kernelcache qwen -o yaml" in words
    assert "Why: Today admission gives no cache: the closest KernelCache, team-a/qwen, fails the mount-type" in words


def test_rejection_shows_the_denial():
    words = flat(render(cluster(consumer(container_name="vllm"))))
    assert "Today ✗ pod rejected: blocked by runtime-container" in words
    assert (
        'admission webhook "kernelcache.kserve-webhook-server.pod-mutator" denied the request: runtime container '
        "was not found"
    ) in words


def test_unknown_gates_are_marked():
    words = flat(render(cluster(drop=("webhook",))))
    assert (
        "? webhook-installed the webhook configuration was not read (list mutatingwebhookconfigurations was "
        "forbidden, or it is not in the input): not checked" in words
    )


def test_hit_outside_the_group():
    kc = b.consumer_cache("qwen", ready_at=EARLY)
    words = flat(render(cluster([b.consumer("pod", node="cpu-1", cache=kc)], kc=kc)))
    assert "why-not-cached team-a/pod → ✓ cached: team-a/qwen; now: ✓ team-a/qwen (Workload match)" in words
    assert "Node cpu-1: outside group gpu, no entry for team-a/qwen" in words
    assert "KServe adds no node affinity" in words


def test_names_from_the_cluster_are_escaped():
    evil = "pod\x1b[31m\u202e"
    text = render(cluster([b.consumer(evil, node="gpu-1")]), evil)
    assert "\x1b" not in text and "\u202e" not in text
    assert "pod\\x1b[31m\\u202e" in text


def test_the_tree_says_which_pods_use_the_cache_and_on_which_nodes():
    """status.usage of the pod's KernelCache and each of those nodes' totalPodsUsing, on the Used by and Nodes
    lines (the JSON's `usage`)."""
    kc = b.consumer_cache("qwen", ready_at=EARLY)
    kc["status"]["usage"] = {
        "pods": [
            {"podUID": "u1", "podRef": {"namespace": NS, "name": "pod"}, "nodeName": "gpu-1"},
            {"podUID": "u2", "podRef": {"namespace": NS, "name": "other"}, "nodeName": "gpu-1"},
        ],
        "totalPodsUsing": 2,
    }
    items = cluster([b.consumer("pod", node="gpu-1", created=CREATED, cache=kc)], kc=kc)
    for item in items:
        if item.get("kind") == "KernelCacheNode":
            item["status"]["counts"] = {"totalPodsUsing": 3}
    words = flat(render(items))
    assert "Used by 2 pods of KernelCache team-a/qwen (status.usage): pod on gpu-1, other on gpu-1" in words
    assert "Nodes pods using any cache (KernelCacheNode totalPodsUsing): gpu-1 3" in words


def test_the_tree_says_when_no_pod_uses_the_cache():
    words = flat(render(cluster(consumer())))
    assert "Used by no pod: status.usage of KernelCache team-a/qwen lists none" in words
