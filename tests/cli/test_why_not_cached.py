"""why-not-cached (and its alias why-cached) end to end through the CLI over files: exit codes, the three
output formats, --manifest (a Pod, an InferenceService with its runtime, stdin) and bad input."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import builders as b
from tests.cli.in_process import cli
from tests.unit.explain.test_why_not_cached import CREATED, EARLY, LATER, cluster


def write(path: Path, items: list[dict[str, Any]]) -> str:
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return str(path)


@pytest.fixture
def snapshot(tmp_path: Path) -> str:
    kc = b.consumer_cache("qwen", ready_at=LATER)
    hit = b.consumer("hit", node="gpu-1", cache=b.consumer_cache("qwen"), created=LATER)
    miss = b.consumer("miss", node="gpu-1", created=CREATED)
    return write(tmp_path / "snap.json", cluster([hit, miss], kc=kc, entry=b.cache_entry(kc, last_update=LATER)))


def test_hit_exits_0_and_miss_exits_1(capsys, snapshot):
    code, out, _ = cli(capsys, "why-not-cached", "hit", "-n", "team-a", "-f", snapshot, "-o", "json")
    assert code == 0 and json.loads(out)["result"]["cached"] is True
    code, out, _ = cli(capsys, "why-not-cached", "miss", "-f", snapshot, "-o", "json")  # namespace found in the file
    doc = json.loads(out)
    assert code == 1 and doc["result"]["cached"] is False and doc["result"]["now"]["kernelCache"] == "team-a/qwen"
    assert doc["next"] == "kubectl -n team-a delete pod miss"


def test_alias_yaml_and_tree(capsys, snapshot):
    code, out, _ = cli(capsys, "why-cached", "miss", "-f", snapshot, "-o", "yaml")
    assert code == 1 and yaml.safe_load(out)["kind"] == "WhyNotCached"
    code, out, _ = cli(capsys, "why-not-cached", "miss", "-f", snapshot)
    assert code == 1
    assert out.startswith("why-not-cached team-a/miss → ✗ not cached; now: ✓ team-a/qwen (Workload match)")
    assert "\x1b[" not in out and "Next:\n  kubectl -n team-a delete pod miss\n" in out


def test_manifest_pod_from_stdin(capsys, snapshot, monkeypatch):
    pod = b.consumer("new", status=False)
    monkeypatch.setattr("sys.stdin", io.StringIO(yaml.safe_dump(pod)))
    code, out, _ = cli(capsys, "why-not-cached", "--manifest", "-", "-f", snapshot, "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["basis"] == "manifest" and doc["result"]["cached"] is None
    assert doc["result"]["now"]["kernelCache"] == "team-a/qwen"
    assert doc["notes"][0] == "What-if for Pod new from stdin."


def test_manifest_inference_service_with_runtime(capsys, snapshot, tmp_path):
    runtime = {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "ServingRuntime",
        "metadata": {"name": "vllm", "namespace": "team-a"},
        "spec": {
            "annotations": {"serving.kserve.io/kernelcache-supported": "true"},
            "containers": [{"name": "kserve-container", "image": b.VLLM_DIGEST}],
        },
    }
    isvc = {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": "qwen", "namespace": "team-a"},
        "spec": {
            "predictor": {
                "model": {"runtime": "vllm", "modelFormat": {"name": "huggingface"}, "storageUri": b.MODEL_URI}
            }
        },
    }
    manifest = tmp_path / "isvc.yaml"
    manifest.write_text(yaml.safe_dump_all([isvc, runtime]))
    # the runtime has no readinessProbe: the cache matches, then the capture sidecar step denies the pod
    code, out, _ = cli(capsys, "why-not-cached", "--manifest", str(manifest), "-f", snapshot, "-o", "json")
    doc = json.loads(out)
    assert code == 1 and doc["result"]["now"] == {
        "kernelCache": None,
        "match": None,
        "blockedBy": "readiness-probe",
        "outcome": "rejected",
        "denial": 'admission webhook "kernelcache.kserve-webhook-server.pod-mutator" denied the request: container '
        '"kserve-container" requires an HTTP readinessProbe for MCV capture',
        "certain": True,
        "inferred": [],
    }
    gates = {g["id"]: g for g in doc["gates"]}
    assert gates["injection"]["passed"] is True
    assert "a new revision of the manifest has no capture yet" in gates["sidecar"]["detail"]
    assert doc["pod"]["name"] == "qwen-predictor-(new)"
    runtime["spec"]["containers"][0]["readinessProbe"] = {"httpGet": {"path": "/health", "port": 8080}}
    manifest.write_text(yaml.safe_dump_all([isvc, runtime]))
    code, out, _ = cli(capsys, "why-not-cached", "--manifest", str(manifest), "-f", snapshot, "-o", "json")
    doc = json.loads(out)
    # with a probe, the next check: the snapshot's config has no registry.endpoint and no capture gives a target
    assert code == 1 and doc["result"]["now"]["blockedBy"] == "capture-target"
    assert doc["result"]["now"]["denial"].endswith(
        "kernelcache.registry.endpoint is required when no KernelCacheCapture target is configured"
    )


def test_manifest_that_would_miss_exits_1(capsys, snapshot, tmp_path):
    manifest = tmp_path / "pod.json"
    manifest.write_text(json.dumps(b.consumer("new", image="vllm:latest", status=False)))
    code, out, _ = cli(capsys, "why-not-cached", "--manifest", str(manifest), "-f", snapshot, "-o", "json")
    assert code == 1 and json.loads(out)["result"]["now"]["blockedBy"] == "runtime-image"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["why-not-cached", "hit", "--manifest", "x.yaml", "-f", "SNAP"], "give a POD or --manifest FILE (not both)"),
        (["why-not-cached", "nope", "-n", "team-a", "-f", "SNAP"], 'pod "nope" not found in namespace "team-a"'),
        (["why-not-cached", "--manifest", "/nonexistent.yaml", "-f", "SNAP"], "/nonexistent.yaml: no such file"),
        (["why-not-cached", "--manifest", "-", "-f", "-"], "--manifest - and --from-file - cannot both read stdin"),
    ],
)
def test_bad_input_exits_2(capsys, snapshot, args, message):
    code, _, err = cli(capsys, *[snapshot if a == "SNAP" else a for a in args])
    assert code == 2 and message in err


def test_dump_with_a_forbidden_read_exits_3(capsys, tmp_path):
    reads = [
        {"resource": r, "namespace": None, "status": "ok", "count": 1}
        for r in ("pods", "kernelcaches", "configmaps", "mutatingwebhookconfigurations", "namespaces")
    ]
    reads.append({"resource": "kernelcachenodes", "namespace": None, "status": "forbidden", "count": 0})
    doc = {
        "kind": "KcacheSnapshot",
        "version": 1,
        "meta": {"reads": reads},
        "items": cluster([b.consumer("miss", created=EARLY)]),
    }
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(doc))
    code, _, err = cli(capsys, "why-not-cached", "miss", "-n", "team-a", "-f", str(path))
    assert code == 3
    assert "error: why-not-cached cannot answer: cannot list kernelcachenodes (forbidden)" in err
