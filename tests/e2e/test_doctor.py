"""doctor on real broken clusters (with KWOK, the controller manager and the scheduler where pods must
run): each problem found live and on the dumped snapshot alike, with the documented exit code; a
read-only user can run it; the audit log shows no mutating request."""

from __future__ import annotations

import json

import pytest

from tests import builders as b

from .cluster import FAIL_LABEL, OWNED_LABEL

pytestmark = pytest.mark.e2e

GPU_TOL = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
GPU_TAINT = b.taint("nvidia.com/gpu", "present")


def doctor(cluster, tmp_path, *args: str) -> tuple[int, dict]:
    """doctor live and on the dumped snapshot: the same report and exit code, or the test fails."""
    live = cluster.kcache("doctor", "-o", "json", *args)
    assert live.returncode in (0, 1), live.stderr
    dumped = cluster.kcache("dump", "--file", str(tmp_path / "snap.yaml"))
    assert dumped.returncode == 0, dumped.stderr
    offline = cluster.kcache("doctor", "-o", "json", "--from-file", str(tmp_path / "snap.yaml"), *args)
    assert offline.returncode == live.returncode, offline.stderr
    live_doc, offline_doc = json.loads(live.stdout), json.loads(offline.stdout)
    live_source, offline_source = live_doc.pop("source"), offline_doc.pop("source")
    assert live_doc == offline_doc  # the same answer; only where it came from differs
    assert live_source["from"] == "live" and live_source["server"] == cluster.server
    assert offline_source["from"] == "file" and offline_source["files"] == [str(tmp_path / "snap.yaml")]
    return live.returncode, live_doc


def findings(doc: dict, check: str) -> list[dict]:
    return [f for f in doc["findings"] if f["check"] == check and not f["suppressed"]]


def prefetcher_sa(managed: bool = True, automount: bool | None = False) -> dict:
    """kernel-cache-prefetcher-sa as KServe ensures it for every auth type (managed label, no automount)."""
    sa: dict = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "kernel-cache-prefetcher-sa", "namespace": "kserve-kernelcache-jobs"},
    }
    if managed:
        sa["metadata"]["labels"] = {"internal.serving.kserve.io/kernelcache-prefetcher": "true"}
    if automount is not None:
        sa["automountServiceAccountToken"] = automount
    return sa


def healthy_install(cluster, *, extra=(), groups=None, nodes=None, ds=None, controller=True) -> None:
    groups = groups if groups is not None else [b.group("gpu", {"pool": "gpu"}, [GPU_TOL])]
    nodes = nodes if nodes is not None else [b.node("gpu-1", {"pool": "gpu"}, taints=[GPU_TAINT])]
    if not any(x.get("kind") == "ServiceAccount" for x in extra):
        extra = (prefetcher_sa(), *extra)
    objs = [
        b.config_map({"enabled": True, "defaultNodeGroup": "gpu"}),
        *groups,
        *nodes,
        *(b.kcn(n["metadata"]["name"]) for n in nodes if n["metadata"]["labels"].get("pool") == "gpu"),
        ds or b.agent_daemonset(tolerations=[GPU_TOL], terms=[b.term({"pool": "gpu"})]),
        *extra,
    ]
    cluster.apply(objs)
    if controller:
        cluster.apply(b.controller_deployment(ready=None))


def test_missing_label_near_miss(cluster, tmp_path):
    healthy_install(
        cluster,
        groups=[b.group("gpu", {"pool": "gpu", "gpu": "h100"}, [GPU_TOL])],
        nodes=[b.node("gpu-1", {"pool": "gpu"}, taints=[GPU_TAINT])],
    )
    code, doc = doctor(cluster, tmp_path, "--only", "group-selector")
    found = findings(doc, "group-selector")
    assert code == 1 or found[0]["severity"] == "warning"
    assert any("gpu-1" in f["message"] + json.dumps(f.get("evidence", [])) for f in found)
    assert any("kubectl label node gpu-1 gpu=h100" in f["hint"] for f in found)


def test_untolerated_taint_on_member_node(cluster, tmp_path):
    healthy_install(
        cluster, groups=[b.group("gpu", {"pool": "gpu"})], ds=b.agent_daemonset(terms=[b.term({"pool": "gpu"})])
    )
    code, doc = doctor(cluster, tmp_path, "--only", "group-taints")
    assert code == 1
    found = findings(doc, "group-taints")
    assert found and all(f["object"]["name"] == "gpu-1" for f in found)
    assert any("nvidia.com/gpu=present:NoSchedule" in f["message"] for f in found)


def test_stale_agent_placement(cluster, tmp_path):
    healthy_install(cluster, ds=b.agent_daemonset(terms=[b.term({"pool": "old"})], node_selector={"x": "y"}))
    code, doc = doctor(cluster, tmp_path, "--only", "agent")
    assert code == 1
    assert any(
        f["hint"].startswith("kubectl annotate kernelcachenodegroup gpu kcache.kserve.io/touched-at=")
        and "kubectl kcache reconcile --once" in f["message"]
        for f in findings(doc, "agent")
    )


@pytest.mark.simulate
def test_member_node_without_an_agent_pod(cluster, tmp_path):
    nodes = [
        b.node("gpu-1", {"pool": "gpu"}, taints=[GPU_TAINT], ready=None, simulated=True),
        b.node("gpu-2", {"pool": "gpu"}, taints=[GPU_TAINT, b.taint("dedicated", "infer")], ready=None, simulated=True),
    ]
    healthy_install(cluster, nodes=nodes)

    def agent_pods() -> int:
        return len(
            [
                p
                for p in cluster.get("pods", namespace="kserve")["items"]
                if p["metadata"]["labels"].get("control-plane") == "kserve-kernelcachenode-agent"
                and p["status"].get("phase") == "Running"
            ]
        )

    cluster.wait_for("the agent pod on gpu-1", lambda: agent_pods() == 1)
    code, doc = doctor(cluster, tmp_path, "--only", "agent")
    assert code == 1
    missing = [f for f in findings(doc, "agent") if f["object"]["name"] == "gpu-2"]
    assert missing and "dedicated=infer:NoSchedule" in missing[0]["message"]
    assert not [f for f in findings(doc, "agent") if f["object"]["name"] == "gpu-1"]


def test_missing_and_orphaned_kernel_cache_nodes(cluster, tmp_path):
    healthy_install(cluster, extra=[b.kcn("decommissioned")])
    cluster.kubectl("delete", "kernelcachenode", "gpu-1")
    code, doc = doctor(cluster, tmp_path, "--only", "kcn-missing,kcn-orphaned")
    assert code == 1
    assert [f["object"]["name"] for f in findings(doc, "kcn-missing")] == ["gpu-1"]
    assert [f["object"]["name"] for f in findings(doc, "kcn-orphaned")] == ["decommissioned"]


@pytest.mark.simulate
def test_preparation_pod_in_image_pull_backoff(cluster, tmp_path):
    node = b.node("gpu-1", {"pool": "gpu"}, taints=[GPU_TAINT], ready=None, simulated=True)
    # the KernelCache the Job prepares (a Job of a deleted KernelCache is an orphan: its pods mark no entry)
    healthy_install(cluster, nodes=[node], extra=[b.kernel_cache("model", "team-a")])
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "kc-model-gpu-1-0123456789abcdef",
            "namespace": "kserve-kernelcache-jobs",
            "labels": {
                "serving.kserve.io/kernel-cache-name": "model",
                "serving.kserve.io/kernel-cache-namespace": "team-a",
                "serving.kserve.io/kernel-cache-node": "gpu-1",
            },
        },
        "spec": {
            "backoffLimit": 0,
            "ttlSecondsAfterFinished": 600,
            "template": {
                "metadata": {
                    "labels": {
                        "serving.kserve.io/kernel-cache-name": "model",
                        "serving.kserve.io/kernel-cache-namespace": "team-a",
                        "serving.kserve.io/kernel-cache-node": "gpu-1",
                        FAIL_LABEL: "ImagePullBackOff",
                    }
                },
                "spec": {
                    "restartPolicy": "Never",
                    "nodeSelector": {"kubernetes.io/hostname": "gpu-1"},
                    "tolerations": [GPU_TOL],
                    "containers": [
                        {
                            "name": "kernel-cache-prefetch",
                            "image": "ubi-minimal",
                            "command": ["/bin/sh", "-c", "test -d /mnt/kernel-cache"],
                        }
                    ],
                },
            },
        },
    }
    cluster.apply(job)

    def backoff() -> bool:
        pods = cluster.get("pods", namespace="kserve-kernelcache-jobs")["items"]
        return any(
            ((p["status"].get("containerStatuses") or [{}])[0].get("state") or {}).get("waiting", {}).get("reason")
            == "ImagePullBackOff"
            for p in pods
        )

    cluster.wait_for("the preparation pod to fail pulling", backoff)
    code, doc = doctor(cluster, tmp_path, "--only", "registry-pull")
    assert code == 1
    found = findings(doc, "registry-pull")
    assert any("ImagePullBackOff" in f["message"] and "401 Unauthorized" in f["message"] for f in found)


@pytest.mark.parametrize(
    "sa,code,message",
    [
        (
            prefetcher_sa(managed=False),
            "prefetcher-sa-unmanaged",
            "reserved ServiceAccount kserve-kernelcache-jobs/kernel-cache-prefetcher-sa already exists and is not "
            "managed by KernelCache",
        ),
        (
            prefetcher_sa(automount=None),
            "prefetcher-sa-automount",
            "managed ServiceAccount kserve-kernelcache-jobs/kernel-cache-prefetcher-sa must disable token automount",
        ),
    ],
    ids=["unmanaged", "automount"],
)
def test_prefetcher_identity_with_auth_none(cluster, tmp_path, sa, code, message):
    """KServe ensures kernel-cache-prefetcher-sa for every registry auth type: with auth none (the default) an
    unmanaged one, or one that does not disable token automount, is every KernelCache's StorageError."""
    healthy_install(cluster, extra=[sa, b.kernel_cache("model", "team-a")])
    status, doc = doctor(cluster, tmp_path, "--only", "registry-pull")
    assert status == 1
    [finding] = findings(doc, "registry-pull")
    assert finding["code"] == code and finding["severity"] == "error"
    assert finding["message"].startswith(message)
    assert finding["object"] == {
        "kind": "ServiceAccount",
        "name": "kernel-cache-prefetcher-sa",
        "namespace": "kserve-kernelcache-jobs",
    }


def test_kernel_cache_in_error_and_entry_with_other_image(cluster, tmp_path):
    healthy_install(cluster, extra=[b.kernel_cache("broken", "team-a"), b.kernel_cache("stale", "team-a", seed="s")])
    cluster.set_status(
        "kernelcache",
        "broken",
        {
            "state": "Error",
            "conditions": [
                {
                    "type": "Ready",
                    "status": "False",
                    "reason": "PreparationFailed",
                    "message": "ErrImagePull: 401 Unauthorized",
                    "lastTransitionTime": b.NOW,
                }
            ],
        },
        "team-a",
    )
    entry = b.entry("team-a", "stale", seed="s")
    entry["imageReference"] = b.image("older")
    cluster.set_status("kernelcachenode", "gpu-1", {"cacheStatus": {"team-a/stale": entry}})
    code, doc = doctor(cluster, tmp_path, "--only", "cache-status")
    assert code == 1
    found = findings(doc, "cache-status")
    assert any(
        f["object"]["name"] == "broken" and f["severity"] == "error" and "PreparationFailed" in f["message"]
        for f in found
    )
    assert any("stale" in f["message"] or f["object"]["name"] == "stale" for f in found)


def test_ambiguous_capture(cluster, tmp_path):
    groups = [b.group("gpu", {"pool": "gpu"}, [GPU_TOL]), b.group("east", {"zone": "east"}, [GPU_TOL])]
    nodes = [b.node("gpu-1", {"pool": "gpu", "zone": "east"}, taints=[GPU_TAINT])]
    healthy_install(
        cluster,
        groups=groups,
        nodes=nodes,
        ds=b.agent_daemonset(tolerations=[GPU_TOL], terms=[b.term({"zone": "east"}), b.term({"pool": "gpu"})]),
    )
    cluster.apply([b.kcn("gpu-1"), b.capture("model-kcc-1", "team-a")])
    gen = cluster.get("kernelcachecapture", "model-kcc-1", "team-a")["metadata"]["generation"]
    cluster.set_status(
        "kernelcachecapture", "model-kcc-1", b.capture_status(node_name="gpu-1", generation=gen), "team-a"
    )
    code, doc = doctor(cluster, tmp_path, "--only", "capture,group-overlap")
    assert code == 1
    found = findings(doc, "capture")
    assert any("AmbiguousNodeGroup" in f["message"] and "gpu-1" in f["message"] for f in found)
    assert any("why-group" in f["hint"] for f in found)
    assert findings(doc, "group-overlap")


def test_missing_controller_deployment_is_said_first(cluster, tmp_path):
    healthy_install(cluster, controller=False)
    code, doc = doctor(cluster, tmp_path)
    assert code == 1
    first = [f for f in doc["findings"] if not f["suppressed"]][0]
    assert first["check"] == "control-plane" and first["severity"] == "error"
    table = cluster.kcache("doctor")
    assert table.returncode == 1 and "kserve-localmodel-controller-manager" in table.stdout
    assert "\x1b[" not in table.stdout


def test_read_only_user_and_no_mutating_request(cluster, tmp_path):
    healthy_install(cluster)
    rules = [
        {
            "apiGroups": [""],
            "resources": ["nodes", "pods", "configmaps", "events", "namespaces", "serviceaccounts"],
            "verbs": ["get", "list", "watch"],
        },
        {
            "apiGroups": ["apps"],
            "resources": ["daemonsets", "deployments", "replicasets"],
            "verbs": ["get", "list", "watch"],
        },
        {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["serving.kserve.io"], "resources": ["*"], "verbs": ["get", "list", "watch"]},
        {
            "apiGroups": ["admissionregistration.k8s.io"],
            "resources": ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"],
            "verbs": ["get", "list", "watch"],
        },
        {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["get", "list", "watch"]},
        {
            "apiGroups": ["rbac.authorization.k8s.io"],
            "resources": ["rolebindings", "roles"],
            "verbs": ["get", "list", "watch"],
        },
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["list", "watch"]},  # by metadata only
        {
            "apiGroups": ["apiextensions.k8s.io"],
            "resources": ["customresourcedefinitions"],
            "verbs": ["get", "list", "watch"],
        },
    ]
    cluster.apply(
        [
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": {"name": "kcache-test-reader", "labels": {OWNED_LABEL: "true"}},
                "rules": rules,
            },
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": "kcache-test-reader", "labels": {OWNED_LABEL: "true"}},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": "kcache-test-reader",
                },
                "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}],
            },
        ]
    )
    mark = cluster.audit_mark()
    proc = cluster.kcache("doctor", "--context", "alice", "-o", "json")
    doc = json.loads(proc.stdout)
    assert proc.returncode in (0, 1), doc  # findings are fine; incomplete (3) is not
    assert doc["summary"]["skipped"] == 0
    events = [e for e in cluster.audit_events(mark) if e["user"]["username"] == "alice"]
    assert events and {e["verb"] for e in events} <= {"get", "list"}
    assert all(e["responseStatus"]["code"] == 200 for e in events)


def test_forbidden_reads_are_skipped_with_verb_and_resource(cluster):
    healthy_install(cluster)
    proc = cluster.kcache("doctor", "--context", "alice", "-o", "json")
    doc = json.loads(proc.stdout)
    assert proc.returncode == 3
    skipped = [c for c in doc["checks"] if c["status"] == "skipped"]
    assert len(skipped) == len(doc["checks"]) and all(": list " in c["reason"] for c in skipped)
    assert any("list kernelcachenodegroups" in c["reason"] for c in skipped)


def test_healthy_cluster_is_clean(cluster, tmp_path):
    healthy_install(cluster)
    cluster.set_status(
        "deployment",
        "kserve-localmodel-controller-manager",
        {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1},
        "kserve",
    )
    # the test bed runs no webhook server, so KServe's capture status webhook is not installed (its tests:
    # tests/unit/checks/test_capture_webhook.py)
    code, doc = doctor(cluster, tmp_path, "--skip", "control-plane,agent,capture-webhook")
    assert [f for f in doc["findings"] if f["severity"] in ("error", "warning")] == []
    assert code == 0
