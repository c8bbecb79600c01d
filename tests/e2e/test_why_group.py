"""why-group on a real API server: real pods, captures, nodes and groups for each branch of KServe's
decision; the live answer equals the answer on the dumped snapshot; only reads, and few of them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests import builders as b

pytestmark = pytest.mark.e2e

NS = "team-a"


def kcache(cluster, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kubectl_kcache", *args], capture_output=True, text=True, env=cluster.env, timeout=120
    )


def producer(name: str, node: str = "", group: str = "", isvc: str = "model", rev: str = "7d9f8c6b5") -> dict:
    pod = b.pod(
        name,
        NS,
        node_name=node,
        labels={"serving.kserve.io/inferenceservice": isvc, "pod-template-hash": rev},
        annotations={
            "serving.kserve.io/kernelcache-supported": "true",
            **({"serving.kserve.io/kernelcache-nodegroup": group} if group else {}),
        },
    )
    del pod["status"]
    return pod


def setup(cluster, *, default: str = "", groups=(), nodes=(), pods=(), captures=(), extra=()) -> None:
    config = {"enabled": True, **({"defaultNodeGroup": default} if default else {})}
    cluster.apply([b.config_map(config), *groups, *nodes, *pods, *extra])
    for name, status in captures:
        cluster.apply(b.capture(name, NS))
        gen = cluster.get("kernelcachecapture", name, NS)["metadata"]["generation"]
        status["conditions"][0]["observedGeneration"] = gen
        cluster.set_status("kernelcachecapture", name, status, NS)


def why(cluster, tmp_path, *args: str) -> dict:
    live = kcache(cluster, "why-group", *args, "-n", NS, "-o", "json")
    assert live.returncode in (0, 1), live.stderr
    dump = kcache(cluster, "dump", "--file", str(tmp_path / "snap.yaml"))
    assert dump.returncode == 0, dump.stderr
    offline = kcache(cluster, "why-group", *args, "-n", NS, "-o", "json", "--from-file", str(tmp_path / "snap.yaml"))
    doc = json.loads(live.stdout)
    # a negative verdict (no group) exits 1, as why-not-cached's does, live and from the dump alike
    assert live.returncode == offline.returncode == (0 if doc["result"]["group"] else 1), offline.stderr
    offline_doc = json.loads(offline.stdout)
    assert doc.pop("source")["from"] == "live" and offline_doc.pop("source")["from"] == "file"
    assert doc == offline_doc
    return doc


CAPTURE = "model-kcc-7d9f8c6b5"  # KServe's generated name for ISVC model, pod-template-hash 7d9f8c6b5


def test_predicted_from_the_pod_auto(cluster, tmp_path):
    setup(
        cluster,
        groups=[b.group("gpu", {"pool": "gpu"}), b.group("cpu", {"pool": "cpu"})],
        nodes=[b.node("gpu-1", {"pool": "gpu"})],
        pods=[producer("model-pod", "gpu-1")],
    )
    doc = why(cluster, tmp_path, "model-pod")
    assert doc["basis"] == "pod" and doc["capture"] is None and doc["node"] == "gpu-1"
    assert doc["result"] == {"group": "gpu", "source": "auto", "reason": None, "message": doc["result"]["message"]}


def test_from_the_capture_session_requested_group_missing(cluster, tmp_path):
    setup(
        cluster,
        default="gpu",
        groups=[b.group("gpu", {"pool": "gpu"})],
        nodes=[b.node("gpu-1", {"pool": "gpu"})],
        pods=[producer("model-pod", "gpu-1", group="missing")],
        captures=[(CAPTURE, b.capture_status(node_name="gpu-1", requested="missing"))],
    )
    doc = why(cluster, tmp_path, "model-pod")
    assert doc["basis"] == "capture" and doc["capture"]["name"] == CAPTURE
    assert doc["result"]["reason"] == "InvalidRequestedNodeGroup"
    assert doc["result"]["message"] == 'KernelCacheNodeGroup "missing" was not found'
    assert doc["result"]["group"] is None  # no fallback to the default


def test_ambiguous_then_what_if(cluster, tmp_path):
    setup(
        cluster,
        groups=[b.group("gpu-a", {"pool": "gpu"}), b.group("gpu-b", {"zone": "east"})],
        nodes=[b.node("gpu-node", {"pool": "gpu", "zone": "east"}), b.node("west", {"pool": "gpu", "zone": "west"})],
        pods=[producer("model-pod", "gpu-node")],
        captures=[(CAPTURE, b.capture_status(node_name="gpu-node"))],
    )
    doc = why(cluster, tmp_path, "model-pod")
    assert doc["result"]["reason"] == "AmbiguousNodeGroup"
    assert doc["result"]["message"] == (
        "producer node gpu-node matches multiple node groups: gpu-a, gpu-b; set serving.kserve.io/kernelcache-nodegroup"
    )
    what_if = kcache(cluster, "why-group", "model-pod", "-n", NS, "--node", "west", "-o", "json")
    assert json.loads(what_if.stdout)["basis"] == "what-if"
    assert json.loads(what_if.stdout)["result"]["group"] == "gpu-a"
    fixed = kcache(cluster, "why-group", "model-pod", "-n", NS, "--group", "gpu-b", "-o", "json")
    assert json.loads(fixed.stdout)["result"] == {
        "group": "gpu-b",
        "source": "annotation",
        "reason": None,
        "message": json.loads(fixed.stdout)["result"]["message"],
    }


def test_pod_gone_but_capture_present_default_and_created_cache(cluster, tmp_path):
    from kubectl_kcache.kernelcache.names import generated_kernel_cache_name

    kc_name = generated_kernel_cache_name(CAPTURE, b.image("cache"))
    setup(
        cluster,
        default="fallback",
        groups=[b.group("fallback", {"role": "other"})],
        nodes=[b.node("gpu-1", {"pool": "gpu"})],
        captures=[
            (
                CAPTURE,
                b.capture_status(
                    node_name="gpu-1", pod="model-pod-gone", kernel_cache_ref={"namespace": NS, "name": kc_name}
                ),
            )
        ],
        extra=[
            b.kernel_cache(
                kc_name,
                NS,
                group_name="old-group",
                annotations={"internal.serving.kserve.io/kernelcache-nodegroup-selection-source": "auto"},
            )
        ],
    )
    doc = why(cluster, tmp_path, "model-pod-gone")
    assert doc["basis"] == "capture"
    assert doc["result"]["group"] == "fallback" and doc["result"]["source"] == "default"
    assert doc["kernelCache"] == {"name": kc_name, "nodeGroup": "old-group", "selectionSource": "auto"}
    assert any("old-group" in d for d in doc["drift"])


def test_producer_unscheduled(cluster, tmp_path):
    setup(
        cluster,
        default="gpu",
        groups=[b.group("gpu", {"pool": "gpu"})],
        pods=[producer("model-pod")],
        captures=[(CAPTURE, b.capture_status(node_name=""))],
    )
    doc = why(cluster, tmp_path, "model-pod")
    assert doc["result"]["reason"] == "ProducerNodePending"
    assert doc["result"]["message"] == "producer Pod node assignment has not been observed yet"


def test_no_match_no_default_and_tree_output(cluster, tmp_path):
    setup(
        cluster,
        groups=[b.group("gpu", {"pool": "gpu"})],
        nodes=[b.node("cpu-1", {"pool": "cpu"})],
        pods=[producer("model-pod", "cpu-1")],
    )
    doc = why(cluster, tmp_path, "model-pod")
    assert doc["result"]["reason"] == "NoMatchingNodeGroup"
    assert doc["groups"] == [
        {"name": "gpu", "matches": False, "missingLabels": {"pool": "gpu"}, "untoleratedTaints": []}
    ]
    tree = kcache(cluster, "why-group", "model-pod", "-n", NS)
    assert tree.returncode == 1
    assert "Warning NoMatchingNodeGroup SelectNodeGroup" in tree.stdout
    assert "\x1b[" not in tree.stdout


def test_reads_only_what_it_needs(cluster):
    setup(
        cluster,
        groups=[b.group("gpu", {"pool": "gpu"})],
        nodes=[b.node(f"n{i}", {"pool": "gpu"}) for i in range(5)],
        pods=[producer("model-pod", "n1")],
    )
    mark = cluster.audit_mark()
    assert kcache(cluster, "why-group", "model-pod", "-n", NS).returncode == 0
    mine = [e for e in cluster.audit_events(mark) if e.get("userAgent", "").startswith("kubectl-kcache")]
    assert {e["verb"] for e in mine} <= {"get", "list"}
    node_lists = [e for e in mine if e["objectRef"]["resource"] == "nodes"]
    assert len(node_lists) == 1 and "fieldSelector=metadata.name%3Dn1" in node_lists[0]["requestURI"]
    assert len(mine) <= 8


def test_unknown_pod_is_a_clear_error(cluster):
    cluster.apply(b.config_map({"enabled": True}))
    proc = kcache(cluster, "why-group", "nope", "-n", NS)
    assert proc.returncode == 2 and "nope" in proc.stderr and "Traceback" not in proc.stderr
