"""why-not-cached: every gate of KServe's consumer admission failing once through explain(), history vs
now (the cache became Ready after the pod), placement outside the group, the JSON contract,
the next command, and the errors (pod not found, a forbidden read, a kind not in the input)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubectl_kcache import objects as o
from kubectl_kcache.errors import IncompleteError, InputError
from kubectl_kcache.explain.why_not_cached import WhyNotCached, explain
from kubectl_kcache.snapshot.model import build
from kubectl_kcache.snapshot.reads import Read
from tests import builders as b

NS = "team-a"
EARLY, CREATED, LATER = "2026-11-29T08:00:00Z", "2026-11-29T09:00:00Z", "2026-11-29T09:30:00Z"


def cluster(
    pods: list[dict[str, Any]] | None = None,
    *,
    config: dict[str, Any] | None = None,
    kc: dict[str, Any] | None = None,
    entry: dict[str, Any] | None = None,
    extra: tuple = (),
    webhook: dict[str, Any] | None = None,
    ns_labels: dict[str, str] | None = None,
    drop: tuple[str, ...] = (),
) -> list[dict[str, Any]]:
    """A cluster with one Ready KernelCache `qwen` (group gpu, prepared on gpu-1) that the standard consumer
    matches, and its pods."""
    kc = kc if kc is not None else b.consumer_cache("qwen", ready_at=EARLY)
    namespace = b.namespace(NS)
    namespace["metadata"]["labels"] = {"kubernetes.io/metadata.name": NS, **(ns_labels or {})}
    objs = {
        "config": b.config_map(config if config is not None else {"enabled": True, "defaultNodeGroup": "gpu"}),
        "namespace": namespace,
        "webhook": webhook if webhook is not None else b.webhook_configuration(),
        "webhook-endpoints": b.webhook_endpoints(),
        "group": b.group("gpu", {"pool": "gpu"}),
        "gpu-1": b.node("gpu-1", {"pool": "gpu"}),
        "cpu-1": b.node("cpu-1", {"pool": "cpu"}),
        "kc": kc,
        "kcn": b.kcn("gpu-1", {f"{NS}/{kc['metadata']['name']}": entry or b.cache_entry(kc, last_update=EARLY)}),
    }
    items = [v for k, v in objs.items() if k not in drop]
    return items + list(extra) + (pods if pods is not None else [b.consumer("pod", node="gpu-1", created=CREATED)])


def why(items: list[dict[str, Any]], pod: str = "pod", **kw: Any) -> WhyNotCached:
    return explain(build(items, reads_assumed=True), NS, pod, **kw)


def now(w: WhyNotCached) -> dict[str, Any]:
    return w.to_dict()["result"]["now"]


def gate(w: WhyNotCached, gate_id: str) -> dict[str, Any]:
    return next(g for g in w.to_dict()["gates"] if g["id"] == gate_id)


def flat(w: WhyNotCached) -> str:
    return " ".join(w.notes)


# ---- the JSON contract -------------------------------------------------------------------------------------


def test_document_shape_of_a_hit():
    kc = b.consumer_cache("qwen", ready_at=EARLY)
    w = why(cluster([b.consumer("pod", node="gpu-1", created=CREATED, cache=kc)], kc=kc))
    doc = w.to_dict()
    assert list(doc) == [
        "kind",
        "version",
        "basis",
        "pod",
        "result",
        "gates",
        "footprints",
        "factors",
        "candidates",
        "injection",
        "usage",
        "notes",
        "next",
        "unread",
    ]
    assert doc["usage"] == {
        "kernelCache": f"{NS}/qwen",
        "pods": [],
        "totalPods": 0,
        "nodes": [],
        "totalPodsUsingByNode": {},
    }
    assert (doc["kind"], doc["version"], doc["basis"]) == ("WhyNotCached", 1, "pod")
    assert doc["pod"] == {"namespace": NS, "name": "pod", "node": "gpu-1", "createdAt": CREATED}
    assert doc["result"]["cached"] is True and doc["result"]["kernelCache"] == f"{NS}/qwen"
    assert doc["result"]["now"] == {
        "kernelCache": f"{NS}/qwen",
        "match": "Workload",
        "blockedBy": None,
        "outcome": "cached",
        "denial": None,
        "certain": True,
        "inferred": [],
    }
    assert doc["result"]["placement"] == {
        "node": "gpu-1",
        "group": "gpu",
        "nodeInGroup": True,
        "entryOnNode": "Ready",
        "preparedOnNode": True,
    }
    steps = ("capture-paths", "readiness-probe", "capture-target", "capture-mounts")
    assert all(g["passed"] is True for g in doc["gates"] if g["id"] not in steps)
    # the builder's pod has no pod-template-hash: the capture sidecar step is skipped, its checks not run
    assert gate(w, "sidecar")["detail"].startswith("skipped: the pod has no pod-template-hash label")
    assert all(g["passed"] is None for g in doc["gates"] if g["id"] in steps)
    assert doc["footprints"]["workload"].startswith("sha256:") and doc["footprints"]["compatibility"]
    assert doc["candidates"] == [
        {
            "kernelCache": f"{NS}/qwen",
            "rejectedBy": None,
            "selected": True,
            "match": "Workload",
            "detail": "Workload match",
            "nodes": [
                {
                    "name": "gpu-1",
                    "state": "Ready",
                    "lastUpdate": EARLY,
                    "imageReference": kc["spec"]["artifact"]["imageReference"],
                }
            ],
        }
    ]
    assert "Today KServe would choose the same KernelCache (Workload match)." in doc["notes"]
    assert doc["next"] == "kubectl -n team-a get kernelcache qwen"
    json.dumps(doc)
    assert w.exit_cached


# ---- history vs now ------------------------------------------------------------------------------------------


def test_cache_became_ready_after_the_pod_was_created():
    kc = b.consumer_cache("qwen", ready_at=LATER)
    w = why(cluster(kc=kc, entry=b.cache_entry(kc, last_update=LATER)))
    doc = w.to_dict()
    assert doc["result"]["cached"] is False and doc["result"]["kernelCache"] is None
    assert now(w)["kernelCache"] == f"{NS}/qwen" and now(w)["blockedBy"] is None
    assert (
        f"The cache became Ready after the pod was created: its Ready entries were last updated at {LATER} and "
        f"the KernelCache became Ready at {LATER}; the pod was created at {CREATED}."
    ) in flat(w)
    assert "Recreate the pod" in flat(w)
    assert doc["next"] == "kubectl -n team-a delete pod pod"
    assert not w.exit_cached


def test_ready_before_the_pod_but_not_mounted_says_something_changed():
    w = why(cluster())
    assert "the cache looks Ready from before then: something admission reads changed since" in flat(w)
    assert w.next_command == "kubectl -n team-a delete pod pod"


def test_hit_that_today_would_not_happen():
    kc = b.consumer_cache("qwen", ready_at=EARLY)
    pod = b.consumer("pod", node="gpu-1", created=CREATED, cache=kc)
    w = why(cluster([pod], kc=kc, config={"enabled": False}))
    assert w.cached and now(w)["blockedBy"] == "enabled" and now(w)["outcome"] == "not-cached"
    assert (
        "the running pod keeps team-a/qwen, but the next pod of this workload (a rollout, restart or scale-up) "
        "would start without it"
    ) in flat(w)


def test_hit_of_a_deleted_kernel_cache():
    kc = b.consumer_cache("gone", ready_at=EARLY)
    w = why(cluster([b.consumer("pod", node="gpu-1", cache=kc)]))
    assert w.cached and w.recorded_cache == f"{NS}/gone"
    assert "The pod records KernelCache team-a/gone, which no longer exists" in flat(w)


# ---- placement -------------------------------------------------------------------------------------------------


def test_hit_on_a_node_outside_the_group_pulled_cold():
    kc = b.consumer_cache("qwen", ready_at=EARLY)
    w = why(cluster([b.consumer("pod", node="cpu-1", created=CREATED, cache=kc)], kc=kc))
    assert w.to_dict()["result"]["placement"] == {
        "node": "cpu-1",
        "group": "gpu",
        "nodeInGroup": False,
        "entryOnNode": None,
        "preparedOnNode": False,
    }
    assert (
        "KServe adds no node affinity: the pod runs on node cpu-1, outside group gpu (it lacks pool=gpu), where "
        "team-a/qwen is not prepared (no entry for it exists there), so the kubelet pulled the artifact"
    ) in flat(w)
    assert w.next_command == (
        "kubectl -n team-a patch inferenceservice qwen --type=merge -p "
        '\'{"spec":{"predictor":{"nodeSelector":{"pool":"gpu"}}}}\''
    )


def test_hit_in_the_group_before_the_node_was_prepared():
    kc = b.consumer_cache("qwen", ready_at=EARLY)
    extra = (b.node("gpu-2", {"pool": "gpu"}), b.kcn("gpu-2", {f"{NS}/qwen": b.cache_entry(kc, state="Pulling")}))
    w = why(cluster([b.consumer("pod", node="gpu-2", cache=kc)], kc=kc, extra=extra))
    p = w.to_dict()["result"]["placement"]
    assert (p["nodeInGroup"], p["entryOnNode"], p["preparedOnNode"]) == (True, "Pulling", False)
    assert "node gpu-2, in group gpu, where team-a/qwen is not prepared (its entry there is Pulling)" in flat(w)


def test_placement_unknown_when_the_node_was_not_read():
    kc = b.consumer_cache("qwen", ready_at=EARLY)
    w = why(cluster([b.consumer("pod", node="gpu-9", cache=kc)], kc=kc))
    assert w.to_dict()["result"]["placement"]["nodeInGroup"] is None
    assert "(whether it is in group gpu could not be read)" in flat(w)


# ---- every gate failing once ----------------------------------------------------------------------------------


def consumer(**kw: Any) -> list[dict[str, Any]]:
    return [b.consumer("pod", node="gpu-1", created=CREATED, **kw)]


def _kc(**kw: Any) -> dict[str, Any]:
    return b.consumer_cache("qwen", ready_at=EARLY, **kw)


def _entry_other_image() -> dict[str, Any]:
    kc = _kc()
    return b.cache_entry(kc, imageReference=b.image("older"))


def _other_webhook() -> dict[str, Any]:
    config = b.webhook_configuration()
    config["webhooks"][0]["name"] = "other.example.com"
    return config


CASES: list[tuple[str, dict[str, Any], str, str, str]] = [
    # (name, cluster(...) arguments, blockedBy, outcome, next command or a fragment of it)
    (
        "webhook-installed",
        {"webhook": _other_webhook()},
        "webhook-installed",
        "not-called",
        "kubectl get mutatingwebhookconfiguration kernelcache.serving.kserve.io -o yaml",
    ),
    (
        "namespace-selector",
        {"ns_labels": {"control-plane": "kserve"}},
        "namespace-selector",
        "not-called",
        "kubectl get namespace team-a --show-labels",
    ),
    (
        "object-selector",
        {"webhook": b.webhook_configuration(object_selector={"matchLabels": {"kernel": "yes"}})},
        "object-selector",
        "not-called",
        "mutatingwebhookconfiguration",
    ),
    (
        "match-conditions",
        {
            "webhook": b.webhook_configuration(
                match_conditions=[{"name": "needs-x", "expression": "'x' in object.metadata.labels"}]
            )
        },
        "match-conditions",
        "not-called",
        "mutatingwebhookconfiguration",
    ),
    (
        "kernelcache-supported",
        {"pods": consumer(supported=False)},
        "kernelcache-supported",
        "not-cached",
        "kubectl -n team-a patch inferenceservice qwen --type=merge -p "
        '\'{"spec":{"predictor":{"annotations":{"serving.kserve.io/kernelcache-supported":"true"}}}}\'',
    ),
    (
        "config",
        {"config": {"enabled": True, "defaultMountType": "pvc"}},
        "config",
        "rejected",
        "kubectl kcache doctor --only config",
    ),
    (
        "enabled",
        {"config": {"enabled": False}},
        "enabled",
        "not-cached",
        "kubectl -n kserve edit configmap inferenceservice-config",
    ),
    (
        "sidecar-annotation",
        {"pods": consumer(annotations={"serving.kserve.io/kernelcache-sidecar-injection": "on"})},
        "sidecar-annotation",
        "rejected",
        "kernelcache-sidecar-injection",
    ),
    (
        "model-source",
        {"pods": consumer(model=None)},
        "model-source",
        "not-cached",
        "kubectl -n team-a get inferenceservice qwen -o yaml",
    ),
    (
        "runtime-container",
        {"pods": consumer(container_name="vllm")},
        "runtime-container",
        "rejected",
        "kubectl -n team-a get pod pod -o yaml",
    ),
    (
        "runtime-image",
        {"pods": consumer(image="vllm/vllm-openai:latest")},
        "runtime-image",
        "not-cached",
        "kubectl -n team-a get pod pod -o 'jsonpath={.spec.containers[*].image}'",
    ),
    (
        "candidates",
        {"drop": ("kcn", "kc"), "extra": (b.kcn("gpu-1", {}), b.kernel_cache("unrelated", NS))},
        "candidates",
        "not-cached",
        "kubectl kcache doctor --only cache-status",
    ),
    (
        "entry-ready",
        {"drop": ("kcn",), "extra": (b.kcn("gpu-1", {}),)},
        "entry-ready",
        "not-cached",
        "kubectl kcache why-not-ready qwen -n team-a",
    ),
    (
        "footprint",
        {"pods": consumer(args=["--dtype", "float16"])},
        "footprint",
        "not-cached",
        "kubectl -n team-a get kernelcache qwen -o 'jsonpath={.spec.artifact.identity.factors}'",
    ),
    (
        "kernelcache-exists",
        {"drop": ("kc",), "extra": (b.kernel_cache("unrelated", NS),)},
        "kernelcache-exists",
        "not-cached",
        "kubectl get kernelcachenodes",
    ),
    (
        "entry-matches-spec",
        {"entry": _entry_other_image()},
        "entry-matches-spec",
        "not-cached",
        "kubectl -n kserve get pods -l control-plane=kserve-kernelcachenode-agent --field-selector spec.nodeName=gpu-1",
    ),
    (
        "artifact",
        {"kc": _kc(cache_paths=[])},
        "artifact",
        "not-cached",
        "kubectl -n team-a get kernelcache qwen -o yaml",
    ),
    (
        "mount-type",
        {"kc": _kc(mount_type="pvc")},
        "mount-type",
        "not-cached",
        "kubectl -n team-a get kernelcache qwen -o yaml",
    ),
    (
        "cache-container",
        {"kc": _kc(cache_paths=[{"containerName": "mcv"}])},
        "cache-container",
        "not-cached",
        "kubectl -n team-a get kernelcache qwen -o yaml",
    ),
    (
        "oci-path",
        {"kc": _kc(cache_paths=[{"ociPath": "custom/cache"}])},
        "oci-path",
        "not-cached",
        "kubectl -n team-a get kernelcache qwen -o yaml",
    ),
    (
        "container-path",
        {
            "kc": _kc(cache_paths=[{"containerName": "kserve-container"}]),
            "pods": consumer(
                env=[{"name": "VLLM_CACHE_ROOT", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}}]
            ),
        },
        "container-path",
        "not-cached",
        "kubectl -n team-a get kernelcache qwen -o yaml",
    ),
    (
        "verification",
        {
            "config": {"enabled": True, "artifactSecurity": {"mode": "disabled"}},
            "kc": _kc(verification={"mode": "none", "state": "Skipped"}),
        },
        "verification",
        "not-cached",
        "kubectl kcache doctor --only verification",
    ),
    (
        "injection",
        {
            "kc": _kc(cache_paths=[{"containerName": "kserve-container"}]),
            "pods": consumer(env=[{"name": "VLLM_CACHE_ROOT", "value": "$HOME/.cache/vllm"}]),
        },
        "injection",
        "rejected",
        "kubectl -n team-a get pod pod -o yaml",
    ),
]


@pytest.mark.parametrize(("name", "kwargs", "blocked", "outcome", "next_command"), CASES, ids=[c[0] for c in CASES])
def test_each_gate_failing(name, kwargs, blocked, outcome, next_command):
    kwargs = dict(kwargs)
    pods = kwargs.pop("pods", None)
    w = why(cluster(pods, **kwargs))
    assert (now(w)["blockedBy"], now(w)["outcome"]) == (blocked, outcome)
    assert now(w)["kernelCache"] is None
    assert next_command in w.next_command
    failed = [g for g in w.to_dict()["gates"] if g["passed"] is False]
    assert (
        failed
        and failed[0]["effect"] == {"not-called": "not-called", "not-cached": "skip", "rejected": "reject"}[outcome]
    )
    if outcome == "rejected":
        assert now(w)["denial"].startswith(
            'admission webhook "kernelcache.kserve-webhook-server.pod-mutator" denied the request: '
        )


def test_footprint_miss_names_the_differing_factor():
    w = why(cluster(consumer(args=["--dtype", "float16"])))
    cand = w.to_dict()["candidates"][0]
    assert cand["rejectedBy"] == "footprint"
    assert cand["detail"].endswith("differing factors: option.dtype: pod float16, cache (unset)")


def test_workload_match_with_another_option_is_a_compatibility_miss():
    kc = _kc(identity=b.consumer_identity(NS, args=["--dtype", "half"]))
    w = why(cluster(consumer(args=["--dtype", "half", "--enforce-eager"]), kc=kc))
    assert w.to_dict()["candidates"][0]["detail"].startswith("no Ready entry has the pod's footprints")


def test_wrong_namespace_is_named():
    kc = b.consumer_cache("qwen", ns="team-b", identity=b.consumer_identity(NS), ready_at=EARLY)
    items = cluster(drop=("kc", "kcn"), extra=(kc, b.kcn("gpu-1", {"team-b/qwen": b.cache_entry(kc)})))
    w = why(items)
    assert now(w)["blockedBy"] == "namespace"
    assert w.next_command == "kubectl get kernelcaches -A --field-selector metadata.name=qwen"
    cands = w.to_dict()["candidates"]
    assert [(c["kernelCache"], c["rejectedBy"]) for c in cands] == [("team-b/qwen", "namespace")]
    assert (
        "KernelCache team-b/qwen matches the pod but lives in namespace team-b: KServe only uses KernelCaches "
        "of the pod's own namespace (team-a)."
    ) in w.notes


def test_matching_cache_without_a_ready_entry_is_named():
    kc = _kc()
    w = why(cluster(entry=b.cache_entry(kc, state="Pulling")))
    assert now(w)["blockedBy"] == "entry-ready"
    assert w.to_dict()["candidates"][0]["rejectedBy"] == "entry-ready"
    assert (
        "KernelCache team-a/qwen matches the pod but has no Ready entry yet (no Ready entry on any node (gpu-1 "
        "Pulling))" in flat(w)
    )


def test_what_would_happen_if_the_blocking_gate_passed():
    w = why(cluster(consumer(supported=False)))
    assert "If kernelcache-supported passed, KServe would mount team-a/qwen (Workload match)." in w.notes


def test_webhook_not_installed_in_a_dump():
    reads = [
        Read(r, None, "ok")
        for r in (
            "pods",
            "kernelcachenodes",
            "kernelcaches",
            "configmaps",
            "namespaces",
            "mutatingwebhookconfigurations",
            "nodes",
            "kernelcachenodegroups",
        )
    ]
    w = explain(build(cluster(drop=("webhook",)), reads=reads), NS, "pod")
    assert (now(w)["blockedBy"], now(w)["outcome"]) == ("webhook-installed", "not-called")
    assert gate(w, "webhook-installed")["detail"] == (
        "MutatingWebhookConfiguration kernelcache.serving.kserve.io is "
        "not installed: the API server calls no kernel cache webhook"
    )


def test_unknown_gates_when_webhook_and_namespace_are_not_in_the_input():
    w = why(cluster(drop=("webhook", "namespace")))
    assert gate(w, "webhook-installed")["passed"] is None and gate(w, "namespace-selector")["passed"] is None
    assert now(w)["kernelCache"] == f"{NS}/qwen"


# ---- manifests ------------------------------------------------------------------------------------------------


def test_manifest_basis_has_no_history():
    items = cluster([])
    pod = o.Pod.from_dict(b.consumer("new", status=False))
    w = explain(build(items, reads_assumed=True), NS, manifest=pod, source_note="What-if for Pod new.")
    doc = w.to_dict()
    assert doc["basis"] == "manifest" and doc["result"]["cached"] is None
    assert now(w)["kernelCache"] == f"{NS}/qwen" and w.exit_cached
    assert doc["notes"][0] == "What-if for Pod new."


# ---- errors ----------------------------------------------------------------------------------------------------


def test_pod_not_found():
    with pytest.raises(InputError, match='pod "nope" not found in namespace "team-a"'):
        why(cluster(), "nope")


def test_forbidden_read_is_incomplete_naming_verb_and_resource():
    snap = build(
        cluster(),
        reads=[
            Read("pods", None, "ok"),
            Read("kernelcachenodes", None, "forbidden"),
            Read("kernelcaches", NS, "ok"),
            Read("configmaps", "kserve", "ok"),
        ],
    )
    with pytest.raises(IncompleteError, match=r"cannot list kernelcachenodes \(forbidden\)"):
        explain(snap, NS, "pod")


def test_unread_required_kind_in_a_dump_is_incomplete():
    snap = build(
        cluster(),
        reads=[Read("pods", None, "ok"), Read("kernelcachenodes", None, "ok"), Read("configmaps", "kserve", "ok")],
    )
    with pytest.raises(IncompleteError, match="kernelcaches in namespace team-a were not read"):
        explain(snap, NS, "pod")


def test_kind_not_in_plain_files_is_bad_input():
    with pytest.raises(InputError, match="the input holds no KernelCacheNodes"):
        why(cluster(drop=("kcn",)))


def test_usage_names_the_pods_using_the_cache_and_their_nodes():
    """KernelCache.status.usage (KernelCachePodUsage: podUID, podRef, nodeName) and each KernelCacheNode's
    totalPodsUsing, for the pod's cache."""
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
            item["status"]["counts"] = {"totalPodsUsing": 2}
    usage = why(items).to_dict()["usage"]
    assert usage == {
        "kernelCache": f"{NS}/qwen",
        "totalPods": 2,
        "nodes": ["gpu-1"],
        "pods": [
            {"namespace": NS, "name": "pod", "node": "gpu-1"},
            {"namespace": NS, "name": "other", "node": "gpu-1"},
        ],
        "totalPodsUsingByNode": {"gpu-1": 2},
    }


@pytest.mark.parametrize(("phase", "said"), [("Pushing", True), ("Capturing", True), ("Complete", False)])
def test_a_pod_whose_revision_is_being_captured_is_told_to_watch_the_capture(phase, said):
    """The first pod of a revision starts cold by design: its own capture makes the cache."""
    from kubectl_kcache.kernelcache.names import capture_revision_name

    pod = b.consumer(
        "pod",
        node="gpu-1",
        created=CREATED,
        labels={"pod-template-hash": "7f9c6d5b84"},
        # the sidecar step is tests/unit/kernelcache/test_sidecar.py's; the builder's pod has no readiness probe
        annotations={"serving.kserve.io/kernelcache-sidecar-injection": "false"},
    )
    name = capture_revision_name("qwen", "7f9c6d5b84")
    # another pod of the revision claimed the session: this one is not the producer
    cap = b.capture(name, ns=NS, isvc="qwen", status=b.capture_status(pod="producer-pod", phase=phase))
    kc = b.consumer_cache("qwen", ready_at=EARLY)  # another revision's cache, not Ready anywhere yet
    w = why(cluster([pod], kc=kc, entry=b.cache_entry(kc, state="Pulling"), extra=(cap,)))
    assert now(w)["blockedBy"] == "entry-ready"  # the cache of another revision is not Ready anywhere
    told = f"This pod's revision is being captured: KernelCacheCapture {NS}/{name} is {phase}" in flat(w)
    assert told is said
    assert (w.next_command == "kubectl kcache doctor --only capture,capture-identity") is said
    # a pod of a revision being captured starts cold by design: not a miss (exit 0), and it says so first
    cold = w.to_dict()["result"]["coldByDesign"]
    if said:
        assert cold == {"reason": "being-captured", "capture": f"{NS}/{name}", "phase": phase, "kernelCache": None}
        assert w.notes[-1].startswith("This pod's revision is being captured") and w.exit_cached
    else:
        assert cold is None and not w.exit_cached


def test_a_pod_whose_revision_was_captured_without_a_kernel_cache_is_sent_to_why_group():
    from kubectl_kcache.kernelcache.names import capture_revision_name

    pod = b.consumer(
        "pod",
        node="gpu-1",
        created=CREATED,
        labels={"pod-template-hash": "7f9c6d5b84"},
        annotations={"serving.kserve.io/kernelcache-sidecar-injection": "false"},
    )
    name = capture_revision_name("qwen", "7f9c6d5b84")
    done = b.capture(name, ns=NS, isvc="qwen", status=b.capture_status(pod="producer-pod", phase="Complete"))
    kc = b.consumer_cache("qwen", ready_at=EARLY)
    w = why(cluster([pod], kc=kc, entry=b.cache_entry(kc, state="Pulling"), extra=(done,)))
    assert f"KernelCacheCapture {NS}/{name} is Complete), but no KernelCache of it exists" in flat(w)
    assert w.next_command == f"kubectl kcache why-group --capture {name} -n {NS}"
    # linked to a KernelCache deleted since: the same
    done["status"]["kernelCacheRef"] = {"namespace": NS, "name": "gone"}
    w = why(cluster([pod], kc=kc, entry=b.cache_entry(kc, state="Pulling"), extra=(done,)))
    assert w.next_command == f"kubectl kcache why-group --capture {name} -n {NS}"
    # linked to a KernelCache that exists: the capture is not the story
    done["status"]["kernelCacheRef"] = {"namespace": NS, "name": "qwen"}
    w = why(cluster([pod], kc=kc, entry=b.cache_entry(kc, state="Pulling"), extra=(done,)))
    assert "KernelCacheCapture" not in flat(w) and "why-group" not in w.next_command


# ---- producers start cold by design; the worst news first ----------------------------------------------------


def _revision_pod(name: str = "pod", **kw: Any) -> dict[str, Any]:
    kw.setdefault("annotations", {"serving.kserve.io/kernelcache-sidecar-injection": "false"})
    return b.consumer(name, node="gpu-1", created=CREATED, labels={"pod-template-hash": "7f9c6d5b84"}, **kw)


@pytest.mark.parametrize(
    ("phase", "ref", "next_command", "said"),
    [
        # its KernelCache exists and is Ready: nothing to do (never "recreate it")
        ("Complete", "qwen", "kubectl -n team-a get kernelcache qwen", "This pod produced KernelCache team-a/qwen"),
        # its capture completed without a KernelCache: the node-group selection says why
        ("Complete", None, "kubectl kcache why-group --capture qwen-kcc-7f9c6d5b84 -n team-a", "No KernelCache of"),
        # still capturing: the capture is what to watch
        ("Pushing", None, "kubectl kcache doctor --only capture,capture-identity", "This pod is producing the cache"),
    ],
)
def test_a_producer_is_not_a_miss_and_says_so_first(phase, ref, next_command, said):
    """The pod a capture's active session names compiled the kernels itself: cold by design, exit 0, no recreate,
    whatever admission would do for it today (a Ready cache it would get now included)."""
    from kubectl_kcache.kernelcache.names import capture_revision_name

    name = capture_revision_name("qwen", "7f9c6d5b84")
    status = b.capture_status(pod="pod", phase=phase, kernel_cache_ref={"namespace": NS, "name": ref} if ref else None)
    cap = b.capture(name, ns=NS, isvc="qwen", status=status)
    w = why(cluster([_revision_pod()], extra=(cap,)))
    assert now(w)["outcome"] == "cached"  # a recreate would be cached: still not "recreate it"
    doc = w.to_dict()
    assert doc["result"]["cached"] is False
    assert doc["result"]["coldByDesign"] == {
        "reason": "producer",
        "capture": f"{NS}/{name}",
        "phase": phase,
        "kernelCache": f"{NS}/{ref}" if ref else None,
    }
    assert said in w.notes[-1] and "cold by design" in w.notes[-1]
    assert w.next_command == next_command and "delete pod" not in w.next_command
    assert not any("Recreate the pod" in n for n in w.notes)
    assert w.exit_cached  # exit 0


def test_producers_are_matched_by_the_active_session_never_by_name():
    from kubectl_kcache.kernelcache.cold_start import cold_by_design
    from kubectl_kcache.objects import Capture, Pod

    pod = Pod.from_dict(_revision_pod("qwen-predictor-7f9c6d5b84-abcde"))
    named_like = Capture.from_dict(
        b.capture("qwen-predictor-7f9c6d5b84-abcde", ns=NS, isvc="qwen", status=b.capture_status(pod="someone-else"))
    )
    assert cold_by_design(pod, [named_like]) is None  # a capture named like the pod, whose session names another
    elsewhere = Capture.from_dict(
        b.capture("c", ns="team-b", isvc="qwen", status=b.capture_status(pod="qwen-predictor-7f9c6d5b84-abcde"))
    )
    assert cold_by_design(pod, [elsewhere]) is None  # the same pod name in another namespace
    other_isvc = Capture.from_dict(
        b.capture("c", ns=NS, isvc="other", status=b.capture_status(pod="qwen-predictor-7f9c6d5b84-abcde"))
    )
    assert cold_by_design(pod, [other_isvc]) is None  # a session of another InferenceService's capture
    mine = Capture.from_dict(
        b.capture("c", ns=NS, isvc="qwen", status=b.capture_status(pod="qwen-predictor-7f9c6d5b84-abcde"))
    )
    found = cold_by_design(pod, [mine])
    assert found is not None and found.reason == "producer" and found.capture_key == f"{NS}/c"
    # a revision's capture that is terminal: its pods are not being captured any more
    for phase, reason in (("Failed", None), ("Unchanged", None), ("Capturing", "being-captured")):
        rev = Capture.from_dict(
            b.capture("qwen-kcc-7f9c6d5b84", ns=NS, isvc="qwen", status=b.capture_status(pod="x", phase=phase))
        )
        got = cold_by_design(pod, [rev])
        assert (got.reason if got else None) == reason


def test_a_cached_pod_is_never_cold_by_design():
    from kubectl_kcache.kernelcache.names import capture_revision_name

    kc = b.consumer_cache("qwen", ready_at=EARLY)
    name = capture_revision_name("qwen", "7f9c6d5b84")
    cap = b.capture(name, ns=NS, isvc="qwen", status=b.capture_status(pod="pod", phase="Capturing"))
    w = why(cluster([_revision_pod(cache=kc)], kc=kc, extra=(cap,)))
    assert w.cached and w.to_dict()["result"]["coldByDesign"] is None


def _probe_less_revision_pod(**kw: Any) -> dict[str, Any]:
    """A pod of a revision with no terminal capture and sidecar injection on: the capture sidecar step runs, and
    the builder's runtime container has no HTTP readinessProbe, so the step denies a replacement."""
    return b.consumer("pod", node="cpu-1", created=CREATED, labels={"pod-template-hash": "7f9c6d5b84"}, **kw)


def test_a_denial_is_the_verdict_the_why_and_the_next_before_placement():
    """A cached pod on a node outside the group (a placement note with a nodeSelector patch) whose replacement
    the capture sidecar step would deny: the denial is the answer, exit 1; placement follows."""
    import io

    from kubectl_kcache.report.why_not_cached_tree import render

    kc = b.consumer_cache("qwen", ready_at=EARLY)
    w = why(cluster([_probe_less_revision_pod(cache=kc)], kc=kc))
    assert now(w)["outcome"] == "rejected" and now(w)["blockedBy"] == "readiness-probe"
    assert w.cached is True
    assert not w.exit_cached  # exit 1: the next pod of this workload is not created
    assert w.notes[-1].startswith("KServe's webhook would deny this pod's replacement")
    assert "capture sidecar step" in w.notes[-1]
    assert w.next_command == (
        "kubectl -n team-a patch inferenceservice qwen --type=merge -p "
        '\'{"spec":{"predictor":{"annotations":{"serving.kserve.io/kernelcache-sidecar-injection":"false"}}}}\''
    )
    assert any(n.startswith("KServe adds no node affinity") for n in w.notes[:-1])  # placement: after
    out = io.StringIO()
    render(w, out, color=False, width=None)
    lines = out.getvalue().splitlines()
    assert "a replacement pod would be denied by the webhook (blocked by readiness-probe)" in lines[0]
    assert lines[1].startswith("Why: KServe's webhook would deny this pod's replacement")
    assert lines[3].strip() == w.next_command
    text = out.getvalue()
    assert text.index("KServe adds no node affinity") > text.index("Next:")


def test_a_producer_whose_replacement_would_be_denied_leads_with_the_denial():
    from kubectl_kcache.kernelcache.names import capture_revision_name

    name = capture_revision_name("qwen", "7f9c6d5b84")
    # the capture is still in progress: the sidecar step runs for a replacement and denies it
    cap = b.capture(name, ns=NS, isvc="qwen", status=b.capture_status(pod="pod", phase="Capturing"))
    w = why(cluster([_probe_less_revision_pod()], extra=(cap,)))
    assert now(w)["outcome"] == "rejected"
    assert w.to_dict()["result"]["coldByDesign"]["reason"] == "producer"
    assert w.notes[-1].startswith("KServe's webhook would deny") and not w.exit_cached
    assert any(n.startswith("This pod is producing the cache") for n in w.notes)
