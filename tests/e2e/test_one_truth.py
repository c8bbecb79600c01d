"""Agreement with KServe's newest controller on the real API server (issue 13): a deleted KernelCache comes
back, an existing one is linked without selection or event, colliding captures get one link, tolerations
Kubernetes rejects are refused with doctor's words (and the API server's own text is what we predict), the
node-pass triggers are said, and a session claimed once is explained as such."""

from __future__ import annotations

import json

import pytest

from kubectl_kcache.kernelcache.names import generated_kernel_cache_name
from tests import builders as b

from .cluster import OWNED_LABEL

pytestmark = pytest.mark.e2e

NS = "team-a"


def writes_by(cluster, mark: int) -> list[tuple[str, str, str]]:
    return [
        (e["verb"], e["objectRef"]["resource"], e["objectRef"].get("name", ""))
        for e in cluster.audit_events(mark)
        if e.get("userAgent", "").startswith("kubectl-kcache") and e["verb"] in ("create", "update", "patch", "delete")
    ]


def install(cluster, groups, nodes, extra=()) -> None:
    terms = [b.term(g["spec"]["nodeSelector"]) for g in sorted(groups, key=lambda g: g["metadata"]["name"])]
    tols = [t for g in groups for t in g["spec"].get("tolerations", [])]
    cluster.apply(
        [
            b.config_map({"enabled": True}),
            b.agent_daemonset(terms=terms, tolerations=tols or None),
            *groups,
            *nodes,
            *(b.kcn(n["metadata"]["name"]) for n in nodes),
            *extra,
        ]
    )


def complete_capture(
    cluster, name: str, node: str, seed: str = "cache", ref: str | None = None, pod: str = "model-pod"
) -> None:
    cluster.apply(b.capture(name, NS))
    gen = cluster.get("kernelcachecapture", name, NS)["metadata"]["generation"]
    status = b.capture_status(
        seed=seed,
        node_name=node,
        generation=gen,
        pod=pod,
        kernel_cache_ref={"namespace": NS, "name": ref} if ref else None,
    )
    cluster.set_status("kernelcachecapture", name, status, NS)


def events(cluster) -> list[dict]:
    return cluster.get("events.events.k8s.io", namespace=NS)["items"]


def test_reconcile_restores_a_deleted_kernel_cache(cluster):
    install(cluster, [b.group("gpu", {"pool": "gpu"})], [b.node("gpu-1", {"pool": "gpu"})])
    complete_capture(cluster, "model-kcc-abc", "gpu-1")
    name = generated_kernel_cache_name("model-kcc-abc", b.image("cache"))
    assert cluster.kcache("reconcile", "--once").returncode == 0
    assert cluster.get("kernelcachecapture", "model-kcc-abc", NS)["status"]["kernelCacheRef"]["name"] == name
    cluster.kubectl("delete", "kernelcache", name, "-n", NS)
    doctor = json.loads(cluster.kcache("doctor", "--only", "capture", "-o", "json").stdout)
    [finding] = doctor["findings"]
    assert finding["message"].startswith(
        f"its KernelCache {NS}/{name} was deleted (status.kernelCacheRef still names it): KServe re-creates it at once"
    )
    mark = cluster.audit_mark()
    assert cluster.kcache("reconcile", "--once").returncode == 0
    kc = cluster.get("kernelcache", name, NS)
    assert kc["spec"]["nodeGroupRef"] == {"name": "gpu"}
    # the capture's ref already names it: KServe writes no status then, and neither do we
    assert writes_by(cluster, mark) == [("create", "kernelcaches", name)]


def test_reconcile_links_an_existing_kernel_cache_without_selection_or_event(cluster):
    """The node is in two groups (selection would fail with AmbiguousNodeGroup), but the KernelCache exists:
    KServe only links."""
    install(
        cluster,
        [b.group("gpu-a", {"pool": "gpu"}), b.group("gpu-b", {"zone": "east"})],
        [b.node("gpu-node", {"pool": "gpu", "zone": "east"})],
    )
    complete_capture(cluster, "model-kcc-abc", "gpu-node")
    name = generated_kernel_cache_name("model-kcc-abc", b.image("cache"))
    cluster.apply(b.kernel_cache(name, NS, "gpu-a"))
    plan = json.loads(cluster.kcache("reconcile", "--dry-run", "-o", "json").stdout)
    assert [(a["verb"], a["kind"]) for a in plan["actions"]] == [("update-status", "KernelCacheCapture")]
    mark = cluster.audit_mark()
    assert cluster.kcache("reconcile", "--once").returncode == 0
    assert writes_by(cluster, mark) == [("update", "kernelcachecaptures", "model-kcc-abc")]
    assert cluster.get("kernelcachecapture", "model-kcc-abc", NS)["status"]["kernelCacheRef"] == {
        "namespace": NS,
        "name": name,
    }
    assert events(cluster) == []


def test_colliding_captures_get_one_link(cluster):
    first, second = (
        "llama-3-8b-instruct-production-east-kcc-5d8c7b9f4",
        "llama-3-8b-instruct-production-east-kcc-669889f77f",
    )
    install(cluster, [b.group("gpu", {"pool": "gpu"})], [b.node("gpu-1", {"pool": "gpu"})])
    complete_capture(cluster, second, "gpu-1", pod="pod-2")
    complete_capture(cluster, first, "gpu-1", pod="pod-1")
    name = generated_kernel_cache_name(first, b.image("cache"))
    proc = cluster.kcache("reconcile", "--once")
    assert proc.returncode == 0, proc.stderr
    assert f"capture {NS}/{second} maps to KernelCache {name} like capture {first}" in proc.stderr
    assert cluster.get("kernelcachecapture", first, NS)["status"]["kernelCacheRef"]["name"] == name
    assert "kernelCacheRef" not in cluster.get("kernelcachecapture", second, NS)["status"]
    assert [k["metadata"]["name"] for k in cluster.get("kernelcaches", namespace=NS)["items"]] == [name]


def test_an_invalid_toleration_is_refused_with_doctors_words_and_the_api_servers_text_is_predicted(cluster):
    bad = {"key": "nvidia.com/gpu", "operator": "In", "value": "present", "effect": "NoSchedule"}
    cluster.apply(
        [
            b.config_map({"enabled": True}),
            b.agent_daemonset(),
            b.group("gpu", {"pool": "gpu"}, [bad]),
            b.node("gpu-1", {"pool": "gpu"}),
        ]
    )
    doctor = json.loads(cluster.kcache("doctor", "--only", "group-taints", "-o", "json").stdout)
    [finding] = [f for f in doctor["findings"] if f["object"]["kind"] == "KernelCacheNodeGroup"]
    words = finding["message"].split(": Kubernetes rejects")[0]
    assert words == (
        'KernelCacheNodeGroup "gpu" spec.tolerations[0].operator: Unsupported value: "In": supported '
        'values: "Equal", "Exists"'
    )
    predicted = finding["evidence"][0].removeprefix("the API server would answer: ")
    # the real API server rejects the patch KServe would send with exactly the predicted text
    patch = {"spec": {"template": {"spec": {"tolerations": [bad]}}}}
    real = cluster.kubectl(
        "patch",
        "daemonset",
        "kserve-kernelcachenode-agent",
        "-n",
        "kserve",
        "--type=merge",
        "-p",
        json.dumps(patch),
        "-v=9",
        check=False,
    )  # -v=9: the server's response body
    assert real.returncode != 0
    assert json.dumps(predicted)[1:-1] in real.stderr
    mark = cluster.audit_mark()
    proc = cluster.kcache("reconcile", "--once")
    assert proc.returncode == 0, proc.stderr
    assert words + ": Kubernetes rejects these tolerations" in proc.stderr
    assert writes_by(cluster, mark) == []  # no patch that would fail, no KernelCacheNode (KServe's pass aborts)


def test_doctor_names_the_node_pass_triggers_for_a_hand_deleted_kernel_cache_node(cluster):
    install(cluster, [b.group("gpu", {"pool": "gpu"})], [b.node("gpu-1", {"pool": "gpu"})])
    cluster.kubectl("delete", "kernelcachenode", "gpu-1")
    doctor = json.loads(cluster.kcache("doctor", "--only", "kcn-missing", "-o", "json").stdout)
    [finding] = doctor["findings"]
    assert "not on KernelCacheNode or DaemonSet changes" in finding["message"]
    assert finding["hint"] == (
        'kubectl annotate kernelcachenodegroup gpu kcache.kserve.io/touched-at="$(date +%s)" --overwrite'
    )
    # the suggested trigger is a real command that works
    cluster.kubectl("annotate", "kernelcachenodegroup", "gpu", "kcache.kserve.io/touched-at=1", "--overwrite")


def test_why_group_says_a_session_is_claimed_once(cluster):
    """The pod annotation added after the claim is ignored (newest capture_reconciler.go)."""
    install(
        cluster, [b.group("gpu", {"pool": "gpu"}), b.group("gpu-2", {"tier": "b"})], [b.node("gpu-1", {"pool": "gpu"})]
    )
    pod = b.pod(
        "model-predictor-7d9f8c6b5-abcde",
        NS,
        node_name="gpu-1",
        labels={"serving.kserve.io/inferenceservice": "model", "pod-template-hash": "7d9f8c6b5"},
        annotations={"serving.kserve.io/kernelcache-nodegroup": "gpu-2"},
    )
    del pod["status"]
    cluster.apply(pod)
    complete_capture(cluster, "model-kcc-7d9f8c6b5", "gpu-1", pod="model-predictor-7d9f8c6b5-abcde")
    proc = cluster.kcache("why-group", "model-predictor-7d9f8c6b5-abcde", "-n", NS, "-o", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["result"]["group"] == "gpu" and doc["result"]["source"] == "auto"
    assert any("KServe records the session once and never updates it" in d for d in doc["drift"])


def test_a_terminating_kernel_cache_is_not_linked_and_doctor_says_what_holds_it(cluster, tmp_path):
    """A KernelCache held by a finalizer after its delete: KServe returns right after the Get (no link, no
    status); the plan links nothing, doctor and why-group say it is terminating and what holds it, live and
    from a dump alike; once the finalizer is gone the plan re-creates it."""
    install(cluster, [b.group("gpu", {"pool": "gpu"})], [b.node("gpu-1", {"pool": "gpu"})])
    complete_capture(cluster, "model-kcc-abc", "gpu-1")
    name = generated_kernel_cache_name("model-kcc-abc", b.image("cache"))
    kc = b.kernel_cache(name, NS, "gpu")
    kc["metadata"]["finalizers"] = ["kcache.test/hold"]
    cluster.apply(kc)
    cluster.kubectl("delete", "kernelcache", name, "-n", NS, "--wait=false")
    cluster.wait_for(
        "the deletionTimestamp", lambda: cluster.get("kernelcache", name, NS)["metadata"].get("deletionTimestamp")
    )
    try:
        proc = cluster.kcache("reconcile", "--dry-run", "-o", "json")
        plan = json.loads(proc.stdout)
        assert [a for a in plan["actions"] if a["kind"] == "KernelCacheCapture"] == []
        assert f"KernelCache {NS}/{name} is terminating" in " ".join(proc.stderr.split())
        live = cluster.kcache("doctor", "--only", "capture,cache-status", "-o", "json")
        dump = str(tmp_path / "snap.yaml")
        assert cluster.kcache("dump", "--file", dump).returncode == 0
        offline = cluster.kcache("doctor", "--only", "capture,cache-status", "-o", "json", "--from-file", dump)
        live_doc, offline_doc = json.loads(live.stdout), json.loads(offline.stdout)
        live_doc.pop("source"), offline_doc.pop("source")
        assert live_doc == offline_doc and live.returncode == offline.returncode
        by_code = {f["code"]: f for f in live_doc["findings"]}
        assert set(by_code) == {"kernel-cache-terminating", "terminating"}
        assert "held by finalizer(s) kcache.test/hold" in by_code["terminating"]["message"]
        assert (
            "once it is gone KServe re-creates it from capture model-kcc-abc"
            in by_code["kernel-cache-terminating"]["message"]
        )
        group = json.loads(cluster.kcache("why-group", "--capture", "model-kcc-abc", "-n", NS, "-o", "json").stdout)
        assert f"KernelCache {NS}/{name} is terminating" in json.dumps(group)
    finally:
        cluster.kubectl(
            "patch",
            "kernelcache",
            name,
            "-n",
            NS,
            "--type=merge",
            "-p",
            json.dumps({"metadata": {"finalizers": []}}),
            check=False,
        )
    cluster.wait_for("the KernelCache gone", lambda: cluster.get("kernelcache", name, NS, check=False) is None)
    plan = json.loads(cluster.kcache("reconcile", "--dry-run", "-o", "json").stdout)
    assert ("create", "KernelCache") in [(a["verb"], a["kind"]) for a in plan["actions"]]


def test_doctor_and_why_not_cached_agree_on_a_replicaset_the_sidecar_step_denies(cluster, tmp_path):
    """A ReplicaSet of an InferenceService whose template has no readinessProbe: doctor's capture-sidecar finds it
    (live and from a dump alike) with the denial why-not-cached --manifest gives for its template."""
    cluster.apply(
        [
            b.config_map(
                {"enabled": True, "defaultNodeGroup": "gpu", "registry": {"endpoint": "registry.example:5000"}}
            ),
            b.group("gpu", {"pool": "gpu"}),
            b.node("gpu-1", {"pool": "gpu"}),
        ]
    )
    labels = {"serving.kserve.io/inferenceservice": "qwen", "pod-template-hash": "669889f77f", "component": "predictor"}
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "qwen-predictor-669889f77f", "namespace": NS, "labels": labels},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {
                    "labels": labels,
                    "annotations": {
                        "serving.kserve.io/kernelcache-supported": "true",
                        "internal.serving.kserve.io/storage-initializer-sourceuri": b.MODEL_URI,
                    },
                },
                "spec": {"containers": [{"name": "kserve-container", "image": b.VLLM_DIGEST}]},
            },
        },
    }
    cluster.apply(rs)
    webhook = b.webhook_configuration()
    webhook["metadata"]["labels"][OWNED_LABEL] = "true"  # the test bed's reset deletes it
    cluster.apply([b.webhook_endpoints(), webhook])  # a webhook the API server can call, as a healthy install
    try:
        live = cluster.kcache("doctor", "--only", "capture-sidecar", "-o", "json")
        dump = str(tmp_path / "snap.yaml")
        assert cluster.kcache("dump", "--file", dump).returncode == 0
        offline = cluster.kcache("doctor", "--only", "capture-sidecar", "-o", "json", "--from-file", dump)
        assert live.returncode == offline.returncode == 1, live.stderr
        live_doc, offline_doc = json.loads(live.stdout), json.loads(offline.stdout)
        live_doc.pop("source"), offline_doc.pop("source")
        assert live_doc == offline_doc
        [finding] = live_doc["findings"]
        assert finding["code"] == "readiness-probe"
        assert finding["object"] == {"kind": "ReplicaSet", "name": "qwen-predictor-669889f77f", "namespace": NS}
        manifest = tmp_path / "rs.json"
        manifest.write_text(json.dumps(cluster.get("replicaset", "qwen-predictor-669889f77f", NS)))
        why = cluster.kcache("why-not-cached", "--manifest", str(manifest), "-n", NS, "-o", "json")
        now = json.loads(why.stdout)["result"]["now"]
        assert (now["outcome"], now["blockedBy"]) == ("rejected", "readiness-probe")
        assert finding["evidence"][0] == now["denial"]
    finally:
        cluster.kubectl("delete", "mutatingwebhookconfiguration", "kernelcache.serving.kserve.io", check=False)
