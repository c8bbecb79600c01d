"""Builders of realistic Kubernetes and KServe objects as plain dicts, for unit and e2e tests."""

from __future__ import annotations

import hashlib
import json
from typing import Any

KSERVE = "serving.kserve.io/v1alpha1"
NOW = "2026-11-29T10:00:00Z"


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def image(name: str = "cache") -> str:
    return f"registry.example.com/team-a/{name}@{digest(name)}"


def node(
    name: str,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, Any]] | None = None,
    ready: bool | None = True,
    unschedulable: bool = False,
    kubelet: str = "v1.36.3",
    simulated: bool = False,
) -> dict[str, Any]:
    """A node; `simulated` ones are run by the test bed's KWOK (status left to it: pass ready=None)."""
    md: dict[str, Any] = {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}}
    if simulated:
        md["annotations"] = {"kwok.x-k8s.io/node": "fake"}
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": md, "spec": {}}
    if taints:
        obj["spec"]["taints"] = taints
    if unschedulable:
        obj["spec"]["unschedulable"] = True
    if ready is not None:
        obj["status"] = {
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True" if ready else "False",
                    "reason": "KubeletReady" if ready else "KubeletNotReady",
                }
            ],
            "nodeInfo": {
                "kubeletVersion": kubelet,
                "kubeProxyVersion": "",
                "machineID": name,
                "systemUUID": name,
                "bootID": name,
                "kernelVersion": "6.8.0",
                "osImage": "Ubuntu 24.04",
                "containerRuntimeVersion": "containerd://2.1.0",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
        }
    return obj


def taint(key: str, value: str = "", effect: str = "NoSchedule") -> dict[str, Any]:
    return {"key": key, **({"value": value} if value else {}), "effect": effect}


def group(name: str, selector: dict[str, str], tolerations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"nodeSelector": selector}
    if tolerations:
        spec["tolerations"] = tolerations
    return {"apiVersion": KSERVE, "kind": "KernelCacheNodeGroup", "metadata": {"name": name}, "spec": spec}


def kcn(name: str, entries: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": KSERVE, "kind": "KernelCacheNode", "metadata": {"name": name}}
    if entries is not None:
        obj["status"] = {"cacheStatus": entries}
    return obj


def footprints(seed: str = "cache") -> dict[str, str]:
    return {"workloadFootprint": digest("w" + seed), "compatibilityFootprint": digest("c" + seed)}


def artifact(seed: str = "cache") -> dict[str, Any]:
    return {
        "imageReference": image(seed),
        "cachePaths": [{"containerPath": "/root/.cache/vllm", "ociPath": "io.vllm.cache"}],
        "identity": {"footprints": footprints(seed)},
    }


def entry(ns: str, kc_name: str, state: str = "Ready", seed: str = "cache", message: str = "") -> dict[str, Any]:
    return {
        "kernelCacheRef": {"namespace": ns, "name": kc_name},
        "imageReference": image(seed),
        "state": state,
        "message": message,
        "footprints": footprints(seed),
    }


def kernel_cache(
    name: str,
    ns: str = "team-a",
    group_name: str | None = "gpu",
    seed: str = "cache",
    state: str | None = None,
    reason: str = "",
    message: str = "",
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"artifact": artifact(seed), "mountType": "oci"}
    if group_name:
        spec["nodeGroupRef"] = {"name": group_name}
    obj: dict[str, Any] = {
        "apiVersion": KSERVE,
        "kind": "KernelCache",
        "metadata": {"name": name, "namespace": ns, **({"annotations": annotations} if annotations else {})},
        "spec": spec,
    }
    if state:
        obj["status"] = {
            "state": state,
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True" if state == "Ready" else "False",
                    "reason": reason or state,
                    "message": message,
                    "lastTransitionTime": NOW,
                }
            ],
        }
    return obj


def capture_status(
    seed: str = "cache",
    session_id: str = "s-1",
    pod: str = "model-pod",
    node_name: str = "",
    requested: str = "",
    generation: int = 1,
    phase: str = "Complete",
    signing: dict[str, Any] | None = None,
    kernel_cache_ref: dict[str, str] | None = None,
) -> dict[str, Any]:
    session: dict[str, Any] = {"id": session_id, "podName": pod}
    if node_name:
        session["nodeName"] = node_name
    if requested:
        session["requestedNodeGroup"] = requested
    status: dict[str, Any] = {
        "activeSession": session,
        "phase": phase,
        "runtimeResult": {
            "state": "Succeeded",
            "imageReference": image(seed),
            "captureSessionID": session_id,
            "sourcePodName": pod,
        },
        "artifact": artifact(seed),
        "signing": signing if signing is not None else {"mode": "none", "state": "Skipped", "signed": False},
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "CaptureComplete",
                "message": "kernel cache capture completed",
                "observedGeneration": generation,
                "lastTransitionTime": NOW,
            }
        ],
    }
    if kernel_cache_ref:
        status["kernelCacheRef"] = kernel_cache_ref
    return status


def capture(
    name: str, ns: str = "team-a", isvc: str = "model", status: dict[str, Any] | None = None, generation: int = 1
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": KSERVE,
        "kind": "KernelCacheCapture",
        "metadata": {"name": name, "namespace": ns, "generation": generation},
        "spec": {"sourceRef": {"kind": "InferenceService", "name": isvc}},
    }
    if status is not None:
        obj["status"] = status
    return obj


def config_map(config: dict[str, Any] | str | None, namespace: str = "kserve") -> dict[str, Any]:
    data = {} if config is None else {"kernelcache": config if isinstance(config, str) else json.dumps(config)}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "inferenceservice-config", "namespace": namespace},
        "data": data,
    }


def agent_daemonset(
    tolerations: list[dict[str, Any]] | None = None,
    terms: list[dict[str, Any]] | None = None,
    node_selector: dict[str, str] | None = None,
    status: dict[str, int] | None = None,
) -> dict[str, Any]:
    pod_spec: dict[str, Any] = {
        "serviceAccountName": "kserve-kernelcachenode-agent",
        "containers": [
            {"name": "manager", "image": "kserve/kserve-kernelcachenode-agent:v0.17.0", "command": ["/manager"]}
        ],
    }
    if tolerations:
        pod_spec["tolerations"] = tolerations
    if terms is not None:
        pod_spec["affinity"] = {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
        }
    if node_selector:
        pod_spec["nodeSelector"] = node_selector
    labels = {"control-plane": "kserve-kernelcachenode-agent", "app.kubernetes.io/name": "kserve-kernelcachenode-agent"}
    obj: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": "kserve-kernelcachenode-agent",
            "namespace": "kserve",
            "labels": {
                "app.kubernetes.io/component": "localmodel",
                "app.kubernetes.io/name": "kserve",
                "control-plane": "kserve-kernelcachenode-agent",
            },
        },
        "spec": {
            "selector": {"matchLabels": {"control-plane": "kserve-kernelcachenode-agent"}},
            "template": {"metadata": {"labels": labels}, "spec": pod_spec},
        },
    }
    if status:
        obj["status"] = status
    return obj


def term(selector: dict[str, str]) -> dict[str, Any]:
    return {"matchExpressions": [{"key": k, "operator": "In", "values": [selector[k]]} for k in sorted(selector)]}


def controller_deployment(ready: int = 1, replicas: int = 1) -> dict[str, Any]:
    labels = {"control-plane": "kserve-localmodel-controller-manager"}
    obj: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "kserve-localmodel-controller-manager", "namespace": "kserve"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "manager", "image": "kserve/kserve-localmodel-controller:v0.17.0"}]},
            },
        },
    }
    if ready is not None:
        obj["status"] = {"replicas": replicas, "readyReplicas": ready, "availableReplicas": ready}
    return obj


def namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}, "status": {"phase": "Active"}}


def pod(
    name: str,
    ns: str = "team-a",
    node_name: str = "",
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    phase: str = "Running",
    ready: bool = True,
    waiting: tuple[str, str] | None = None,
) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    if waiting:
        status["containerStatuses"] = [
            {
                "name": "c",
                "ready": False,
                "restartCount": 0,
                "state": {"waiting": {"reason": waiting[0], "message": waiting[1]}},
            }
        ]
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": labels or {}, "annotations": annotations or {}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        "status": status,
    }
    if node_name:
        obj["spec"]["nodeName"] = node_name
    return obj


# ---- consumers: serving pods as KServe's pod webhook leaves them ----------------------------------------

MODEL_URI = "hf://Qwen/Qwen3-0.6B"
VLLM_DIGEST = "registry.example.com/vllm/vllm-openai@" + digest("vllm-openai:v0.11.0")
VLLM_TAG = "registry.example.com/vllm/vllm-openai:v0.11.0"
LINKER_IMAGE = "registry.access.redhat.com/ubi9/ubi-minimal:latest"


def consumer_identity(
    ns: str = "team-a",
    isvc: str = "qwen",
    image: str = VLLM_DIGEST,
    model: str = MODEL_URI,
    command: list[str] | None = None,
    args: list[str] | None = None,
    env: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The identity (footprints and factors) KServe computes for a consumer pod, as KServe's own tests do it:
    by calling the identity code."""
    import msgspec

    from kubectl_kcache import objects as o
    from kubectl_kcache.kernelcache.identity import Workload, container_identity, model_uri_hash

    ctr = msgspec.convert(
        {"name": "kserve-container", "image": image, "command": command or [], "args": args or [], "env": env or []},
        o.Container,
        strict=False,
    )
    ident = container_identity(ns, Workload("InferenceService", isvc), ctr, model_uri_hash(model))
    footprints = {
        "workloadFootprint": ident.workload_footprint,
        "compatibilityFootprint": ident.compatibility_footprint,
    }
    return {"footprints": {k: v for k, v in footprints.items() if v}, "factors": ident.factors}  # omitempty


def consumer_cache(
    name: str,
    ns: str = "team-a",
    identity: dict[str, Any] | None = None,
    seed: str | None = None,
    group_name: str | None = "gpu",
    cache_paths: list[dict[str, str]] | None = None,
    mount_type: str | None = "oci",
    state: str | None = "Ready",
    verification: dict | None = None,
    ready_at: str = NOW,
) -> dict[str, Any]:
    """A KernelCache whose artifact identity is `identity` (default: the standard consumer's)."""
    ident = identity or consumer_identity(ns)
    spec: dict[str, Any] = {
        "artifact": {
            "imageReference": image(seed or name),
            "cachePaths": cache_paths
            if cache_paths is not None
            else [
                {"containerName": "kserve-container", "containerPath": "/root/.cache/vllm", "ociPath": "io.vllm.cache"}
            ],
            "identity": {"footprints": ident["footprints"], "factors": ident.get("factors", {})},
        }
    }
    if mount_type is not None:
        spec["mountType"] = mount_type
    if group_name:
        spec["nodeGroupRef"] = {"name": group_name}
    obj: dict[str, Any] = {
        "apiVersion": KSERVE,
        "kind": "KernelCache",
        "metadata": {"name": name, "namespace": ns},
        "spec": spec,
    }
    if state:
        obj["status"] = {
            "state": state,
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True" if state == "Ready" else "False",
                    "reason": "CacheReady" if state == "Ready" else state,
                    "message": "",
                    "lastTransitionTime": ready_at,
                }
            ],
        }
        if verification is not None:
            obj["status"]["verification"] = verification
    return obj


def cache_entry(kc: dict[str, Any], state: str = "Ready", last_update: str = NOW, **changes: Any) -> dict[str, Any]:
    """A KernelCacheNode entry for a KernelCache built by consumer_cache (equal to its spec unless changed)."""
    art = kc["spec"]["artifact"]
    out = {
        "kernelCacheRef": {"namespace": kc["metadata"]["namespace"], "name": kc["metadata"]["name"]},
        "imageReference": art["imageReference"],
        "state": state,
        "message": "OCI artifact was prefetched on the node" if state == "Ready" else "",
        "lastUpdate": last_update,
        "footprints": dict(art["identity"]["footprints"]),
    }
    out.update(changes)
    return out


def consumer(
    name: str,
    ns: str = "team-a",
    isvc: str = "qwen",
    image: str = VLLM_DIGEST,
    node: str = "",
    model: str | None = MODEL_URI,
    supported: bool = True,
    created: str = NOW,
    args: list[str] | None = None,
    command: list[str] | None = None,
    env: list[dict[str, Any]] | None = None,
    annotations: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    cache: dict[str, Any] | None = None,
    container_name: str = "kserve-container",
    status: bool = True,
    container: dict[str, Any] | None = None,
    volumes: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A serving pod of InferenceService `isvc`; with `cache` (a KernelCache dict), as KServe's webhook
    mutates it on a hit: usage annotation, the artifact as image volume, an emptyDir at the cache path and
    the kernel-cache-linker init container. `container` adds fields to the runtime container (a
    readinessProbe, ports, volumeMounts), `volumes` to the pod."""
    ann: dict[str, str] = {}
    if supported:
        ann["serving.kserve.io/kernelcache-supported"] = "true"
    if model is not None:
        ann["internal.serving.kserve.io/storage-initializer-sourceuri"] = model
    ann.update(annotations or {})
    ctr: dict[str, Any] = {"name": container_name, "image": image}
    for key, value in (("command", command), ("args", args), ("env", env)):
        if value:
            ctr[key] = value
    ctr.update(container or {})
    spec: dict[str, Any] = {"containers": [ctr]}
    if volumes:
        spec["volumes"] = list(volumes)
    if node:
        spec["nodeName"] = node
    if cache is not None:
        art = cache["spec"]["artifact"]
        key = f"{cache['metadata']['namespace']}/{cache['metadata']['name']}"
        ann["internal.serving.kserve.io/kernelcache-usage"] = key
        path = art["cachePaths"][0].get("containerPath") or "/root/.cache/vllm"
        spec["volumes"] = [
            *spec.get("volumes", ()),
            {
                "name": "kernel-cache-source",
                "image": {"reference": art["imageReference"], "pullPolicy": "IfNotPresent"},
            },
            {"name": "kernel-cache-runtime-0", "emptyDir": {}},
        ]
        ctr["volumeMounts"] = [
            *ctr.get("volumeMounts", ()),
            {"name": "kernel-cache-runtime-0", "mountPath": path},
            {"name": "kernel-cache-source", "mountPath": "/var/run/gkm/kernel-cache", "readOnly": True},
        ]
        spec["initContainers"] = [
            {
                "name": "kernel-cache-linker",
                "image": LINKER_IMAGE,
                "imagePullPolicy": "IfNotPresent",
                "command": ["/bin/sh", "-c"],
                "args": ["set -eu", "kernel-cache-linker", "/var/run/gkm/kernel-cache/io.vllm.cache", path],
                "volumeMounts": [
                    {"name": "kernel-cache-source", "mountPath": "/var/run/gkm/kernel-cache", "readOnly": True},
                    {"name": "kernel-cache-runtime-0", "mountPath": path},
                ],
            }
        ]
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": ns,
            "creationTimestamp": created,
            "labels": {"serving.kserve.io/inferenceservice": isvc, "component": "predictor", **(labels or {})},
            "annotations": ann,
        },
        "spec": spec,
    }
    if status:
        obj["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    return obj


def webhook_configuration(
    namespace_selector: dict[str, Any] | None = None,
    ca_bundle: bool = True,
    failure_policy: str = "Fail",
    match_conditions: list[dict[str, str]] | None = None,
    object_selector: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """KServe's MutatingWebhookConfiguration for the pod webhook, as its chart installs it."""
    hook: dict[str, Any] = {
        "name": "kernelcache.kserve-webhook-server.pod-mutator",
        "clientConfig": {
            "service": {
                "name": "localmodel-webhook-server-service",
                "namespace": "kserve",
                "path": "/mutate-kernelcache-pods",
                "port": 443,
            }
        },
        "failurePolicy": failure_policy,
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "reinvocationPolicy": "IfNeeded",
        "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}],
        "namespaceSelector": namespace_selector
        if namespace_selector is not None
        else {"matchExpressions": [{"key": "control-plane", "operator": "DoesNotExist"}]},
        "matchConditions": match_conditions
        if match_conditions is not None
        else [
            {
                "name": "inferenceservice-workload",
                "expression": "has(object.metadata.labels) && 'serving.kserve.io/inferenceservice' in "
                "object.metadata.labels",
            }
        ],
    }
    if object_selector is not None:
        hook["objectSelector"] = object_selector
    if ca_bundle:
        hook["clientConfig"]["caBundle"] = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {
            "name": "kernelcache.serving.kserve.io",
            "labels": {"app.kubernetes.io/component": "localmodel", "app.kubernetes.io/name": "kserve"},
        },
        "webhooks": [hook],
    }


def capture_webhook_configuration(ca_bundle: bool = True, failure_policy: str = "Fail") -> dict[str, Any]:
    """KServe's ValidatingWebhookConfiguration for the KernelCacheCapture status validator."""
    hook: dict[str, Any] = {
        "name": "kernelcachecapture.kserve-webhook-server.status-validator",
        "clientConfig": {
            "service": {
                "name": "localmodel-webhook-server-service",
                "namespace": "kserve",
                "path": "/validate-kernelcachecapture-status",
                "port": 443,
            }
        },
        "failurePolicy": failure_policy,
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "rules": [
            {
                "apiGroups": ["serving.kserve.io"],
                "apiVersions": ["v1alpha1"],
                "operations": ["UPDATE"],
                "resources": ["kernelcachecaptures/status"],
            }
        ],
    }
    if ca_bundle:
        hook["clientConfig"]["caBundle"] = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {
            "name": "kernelcachecapture.serving.kserve.io",
            "labels": {"app.kubernetes.io/component": "localmodel", "app.kubernetes.io/name": "kserve"},
        },
        "webhooks": [hook],
    }


def webhook_endpoints(ready: bool = True) -> dict[str, Any]:
    """The EndpointSlice of the pod webhook's Service, its one endpoint ready or not."""
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": "localmodel-webhook-server-service-x1",
            "namespace": "kserve",
            "labels": {"kubernetes.io/service-name": "localmodel-webhook-server-service"},
        },
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.0.0.9"], "conditions": {"ready": ready}}],
    }


def prefetcher_binding(ns: str, *subjects: tuple[str, str], role: str = "pull") -> dict[str, Any]:
    """KServe's managed kernel-cache-prefetcher-rb in namespace `ns` (the KernelCache's), binding ClusterRole
    `role` to these ServiceAccount subjects (name, namespace)."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {
            "name": "kernel-cache-prefetcher-rb",
            "namespace": ns,
            "labels": {"internal.serving.kserve.io/kernelcache-prefetcher": "true"},
        },
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": n, "namespace": sns} for n, sns in subjects],
    }
