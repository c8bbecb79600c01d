"""--manifest: the pod a Pod, a pod template or an InferenceService (with its ServingRuntime) stands for,
as far as KServe's pod webhook reads it; what cannot be rendered exactly is an error that says so."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_kcache.errors import InputError
from kubectl_kcache.kernelcache.render import pod_from_manifest

RUNTIME = {
    "apiVersion": "serving.kserve.io/v1alpha1",
    "kind": "ClusterServingRuntime",
    "metadata": {"name": "vllm-runtime"},
    "spec": {
        "annotations": {"serving.kserve.io/kernelcache-supported": "true"},
        "containers": [
            {
                "name": "kserve-container",
                "image": "registry.example/vllm:v0.10",
                "command": ["python", "-m", "vllm.entrypoints.openai.api_server"],
                "args": ["--model", "/mnt/models", "--served-model-name", "{{.Name}}"],
                "env": [{"name": "VLLM_USE_AOT_COMPILE", "value": "0"}],
            }
        ],
    },
}


def isvc(**predictor: Any) -> dict[str, Any]:
    return {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {
            "name": "qwen",
            "namespace": "team-a",
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
        },
        "spec": {"predictor": predictor},
    }


def test_pod_as_is():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}}
    got, note = pod_from_manifest([pod], "pod.yaml")
    assert got == pod and note == "What-if for Pod p from pod.yaml."


def test_deployment_template():
    deploy = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "qwen-predictor", "namespace": "t"},
        "spec": {"template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c"}]}}},
    }
    got, note = pod_from_manifest([deploy], "d.yaml")
    # a Deployment's pods carry their ReplicaSet's pod-template-hash, not known yet: a new revision
    assert got["metadata"] == {
        "labels": {"a": "b", "pod-template-hash": "(new-revision)"},
        "name": "qwen-predictor-(new)",
        "namespace": "t",
    }
    assert got["spec"] == {"containers": [{"name": "c"}]}
    assert "Deployment qwen-predictor (its pod template)" in note


def test_inference_service_with_its_runtime():
    model = {
        "modelFormat": {"name": "huggingface"},
        "runtime": "vllm-runtime",
        "storageUri": "hf://Qwen/Qwen3-0.6B",
        "args": ["--dtype", "bfloat16"],
        "env": [{"name": "VLLM_USE_AOT_COMPILE", "value": "1"}],
        "runtimeVersion": "v0.11",
    }
    got, note = pod_from_manifest([isvc(model=model, annotations={"x": "y"}), RUNTIME], "isvc.yaml")
    ctr = got["spec"]["containers"][0]
    assert ctr["name"] == "kserve-container" and ctr["image"] == "registry.example/vllm:v0.11"
    assert ctr["args"] == ["--model", "/mnt/models", "--served-model-name", "qwen", "--dtype", "bfloat16"]
    assert ctr["env"] == [{"name": "VLLM_USE_AOT_COMPILE", "value": "1"}]
    assert ctr["command"] == ["python", "-m", "vllm.entrypoints.openai.api_server"]
    assert got["metadata"]["labels"] == {
        "serving.kserve.io/inferenceservice": "qwen",
        "component": "predictor",
        "pod-template-hash": "(new-revision)",
    }
    assert got["metadata"]["annotations"] == {
        "serving.kserve.io/kernelcache-supported": "true",
        "x": "y",
        "internal.serving.kserve.io/storage-initializer-sourceuri": "hf://Qwen/Qwen3-0.6B",
    }
    assert "with ServingRuntime vllm-runtime" in note


def test_custom_container_predictor():
    ctr = {
        "name": "kserve-container",
        "image": "img@sha256:" + "a" * 64,
        "env": [{"name": "STORAGE_URI", "value": "s3://b/m"}],
    }
    got, _ = pod_from_manifest([isvc(containers=[ctr])], "isvc.yaml")
    assert got["metadata"]["annotations"]["internal.serving.kserve.io/storage-initializer-sourceuri"] == "s3://b/m"


@pytest.mark.parametrize(
    ("docs", "message"),
    [
        ([], "found nothing it can use"),
        ([isvc(model={"runtime": "missing"}), RUNTIME], "needs ServingRuntime 'missing' in the same manifest"),
        ([isvc(model={"runtime": "vllm-runtime", "storageUris": [{"uri": "x"}]}), RUNTIME], "storageUris"),
        ([isvc(sklearn={"storageUri": "gs://x"})], "spec.predictor holds sklearn"),
        ([isvc(model={"runtime": "vllm-runtime", "args": ["{{.Labels.x}}"]}), RUNTIME], "placeholder {{.Labels.x}}"),
        (
            [
                isvc(
                    model={"runtime": "vllm-runtime"}, annotations={"serving.kserve.io/kernelcache-supported": "false"}
                ),
                RUNTIME,
            ],
            "annotation serving.kserve.io/kernelcache-supported is set to 'true' and 'false'",
        ),
    ],
)
def test_what_cannot_be_rendered_says_so(docs, message):
    with pytest.raises(InputError) as exc:
        pod_from_manifest(docs, "m.yaml")
    assert message in str(exc.value) and str(exc.value).startswith("--manifest m.yaml: ")
