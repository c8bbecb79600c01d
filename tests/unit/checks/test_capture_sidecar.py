"""The capture-sidecar check: ReplicaSets whose pod template KServe's pod webhook would deny in its capture
sidecar step (the same decision as why-not-cached, replayed on the template)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml
from msgspec.structs import replace as struct_replace

from kubectl_kcache.snapshot.files.from_files import load_files

from .conftest import BASE, BASE_FILES, one, run_check, with_reads

NS = "team-a"
PROBE = {"readinessProbe": {"httpGet": {"path": "/health", "port": 8080}}}
MODEL = {
    "internal.serving.kserve.io/storage-initializer-sourceuri": "hf://Qwen/Qwen3-0.6B",
    "serving.kserve.io/kernelcache-supported": "true",
}


def replica_set(
    name: str,
    isvc: str,
    replicas: int = 1,
    annotations: dict[str, str] | None = None,
    volumes: list[dict[str, Any]] | None = None,
    **ctr: Any,
) -> dict[str, Any]:
    container = {"name": "kserve-container", "image": "registry.example/vllm:v0.10", **ctr}
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": f"{name}-669889f77f",
            "namespace": NS,
            "labels": {"serving.kserve.io/inferenceservice": isvc, "pod-template-hash": "669889f77f"},
        },
        "spec": {
            "replicas": replicas,
            "template": {
                "metadata": {
                    "labels": {
                        "serving.kserve.io/inferenceservice": isvc,
                        "pod-template-hash": "669889f77f",
                        "component": "predictor",
                    },
                    "annotations": {**MODEL, **(annotations or {})},
                },
                "spec": {"containers": [container], **({"volumes": volumes} if volumes else {})},
            },
        },
    }


def snapshot(tmp_path: Path, *objs: dict[str, Any], config: dict[str, Any] | None = None):
    path = tmp_path / "objs.yaml"
    path.write_text(yaml.safe_dump_all(list(objs)))
    snap = with_reads(load_files([*(str(BASE / f"{b}.yaml") for b in BASE_FILES), str(path)]))
    if config is not None:
        cm = next(x for x in snap.configmaps if x.meta.name == "inferenceservice-config")
        data = json.loads(cm.data["kernelcache"])
        data.update(config)
        new = struct_replace(cm, data={**cm.data, "kernelcache": json.dumps(data)})
        snap = replace(snap, configmaps=tuple(new if x is cm else x for x in snap.configmaps))
    return snap


def capture(isvc: str, phase: str) -> dict[str, Any]:
    return {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "KernelCacheCapture",
        "metadata": {"name": f"{isvc}-kcc-669889f77f", "namespace": NS},
        "spec": {"sourceRef": {"kind": "InferenceService", "name": isvc}},
        "status": {"phase": phase},
    }


def test_finds_each_denied_replicaset_and_only_those(tmp_path):
    snap = snapshot(
        tmp_path,
        replica_set("no-probe", "no-probe"),
        replica_set("ok", "ok", **PROBE),
        replica_set("old", "old", replicas=0),
        replica_set("done", "done"),
        capture("done", "Complete"),
        replica_set("opt-out", "opt-out", annotations={"serving.kserve.io/kernelcache-sidecar-injection": "false"}),
        replica_set(
            "read-only",
            "read-only",
            volumes=[{"name": "m", "emptyDir": {}}],
            volumeMounts=[{"name": "m", "mountPath": "/root/.cache/vllm", "readOnly": True}],
            **PROBE,
        ),
        replica_set("host", "host", readinessProbe={"httpGet": {"path": "/h", "port": 80, "host": "example.com"}}),
    )
    result, findings = run_check("capture-sidecar", snap)
    assert result.status == "fail"
    assert sorted(f.object.name for f in findings) == ["host-669889f77f", "no-probe-669889f77f", "read-only-669889f77f"]
    probe = one(findings, name="no-probe-669889f77f")
    assert probe.code == "readiness-probe" and probe.object.kind == "ReplicaSet"
    assert (
        "KServe's pod webhook would deny its next pod in the capture sidecar step, with HTTP 500 \"container "
        '"kserve-container" requires an HTTP readinessProbe for MCV capture"'
    ) in probe.message
    assert probe.hint == (
        "kubectl -n team-a patch inferenceservice no-probe --type=merge -p "
        '\'{"spec":{"predictor":{"annotations":{"serving.kserve.io/kernelcache-sidecar-'
        'injection":"false"}}}}\''
    )
    assert probe.evidence[0].startswith('admission webhook "kernelcache.kserve-webhook-server.pod-mutator" denied')
    assert one(findings, name="read-only-669889f77f").code == "capture-mounts"
    host = one(findings, name="host-669889f77f")
    assert host.code == "readiness-probe" and 'got "example.com"' in host.message


def test_no_endpoint_denies_every_captured_template(tmp_path):
    snap = snapshot(tmp_path, replica_set("ok", "ok", **PROBE), config={"registry": {}})
    result, findings = run_check("capture-sidecar", snap)
    f = one(findings, name="ok-669889f77f")
    assert f.code == "capture-target"
    assert "kernelcache.registry.endpoint is required when no KernelCacheCapture target is configured" in f.message
    off = snapshot(
        tmp_path, replica_set("ok", "ok", **PROBE), config={"registry": {}, "defaultSidecarInjection": False}
    )
    assert run_check("capture-sidecar", off)[1] == []


def test_captures_not_read_replay_nothing(tmp_path):
    snap = snapshot(tmp_path, replica_set("no-probe", "no-probe"))
    snap = with_reads(snap, ("kernelcachecaptures", None, "forbidden"))
    result, findings = run_check("capture-sidecar", snap)
    assert findings == [] and result.status == "pass"
    assert "partial" in result.reason and "kernelcachecaptures" in result.reason
