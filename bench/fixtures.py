"""Realistic generated objects for benchmarks: GPU nodes of 20-40 KB (labels, taints, conditions,
status.images), node groups, KernelCacheNodes with entries, KernelCaches and agent pods."""

from __future__ import annotations

import hashlib
import random
from typing import Any

PRODUCTS = ["NVIDIA-H100-80GB-HBM3", "NVIDIA-L40S", "NVIDIA-A100-SXM4-80GB", "NVIDIA-H200", "NVIDIA-B200"]
ZONES = ["us-east-1a", "us-east-1b", "us-east-1c", "us-west-2a", "us-west-2b"]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def gpu_node(i: int, groups: int = 50, rng: random.Random | None = None) -> dict[str, Any]:
    rng = rng or random.Random(i)
    name = f"gpu-{i:05d}.compute.internal"
    product = PRODUCTS[i % len(PRODUCTS)]
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": "p5.48xlarge",
        "topology.kubernetes.io/zone": ZONES[i % len(ZONES)],
        "topology.kubernetes.io/region": ZONES[i % len(ZONES)][:-1],
        "nvidia.com/gpu.product": product,
        "nvidia.com/gpu.count": "8",
        "nvidia.com/gpu.memory": "81559",
        "nvidia.com/cuda.driver.major": "550",
        "nvidia.com/cuda.driver.minor": "90",
        "nvidia.com/gpu.family": "hopper",
        "nvidia.com/mig.capable": "true",
        "feature.node.kubernetes.io/cpu-model.vendor_id": "AMD",
        "feature.node.kubernetes.io/pci-10de.present": "true",
        "kcache.bench/pool": f"pool-{i % groups:02d}",
    }
    images = []
    for j in range(rng.randint(85, 170)):
        repo = f"registry.example.com/team-{j % 13}/model-server-{j}"
        images.append(
            {
                "names": [f"{repo}@sha256:{_sha(f'{i}-{j}')}", f"{repo}:v{j}.{i % 7}.0"],
                "sizeBytes": rng.randint(10**8, 2 * 10**10),
            }
        )
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": labels,
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": {
            "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
            "providerID": f"aws:///{ZONES[i % len(ZONES)]}/i-{_sha(name)[:17]}",
        },
        "status": {
            "capacity": {"cpu": "192", "memory": "2097152Mi", "nvidia.com/gpu": "8", "pods": "110"},
            "allocatable": {"cpu": "191450m", "memory": "2045000Mi", "nvidia.com/gpu": "8", "pods": "110"},
            "conditions": [
                {
                    "type": t,
                    "status": "False",
                    "reason": f"KubeletHas{t}",
                    "message": f"kubelet has no {t}",
                    "lastHeartbeatTime": "2026-11-29T10:00:00Z",
                    "lastTransitionTime": "2026-11-01T10:00:00Z",
                }
                for t in ("MemoryPressure", "DiskPressure", "PIDPressure")
            ]
            + [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                    "lastHeartbeatTime": "2026-11-29T10:00:00Z",
                    "lastTransitionTime": "2026-11-01T10:00:00Z",
                }
            ],
            "addresses": [
                {"type": "InternalIP", "address": f"10.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}"},
                {"type": "Hostname", "address": name},
            ],
            "nodeInfo": {
                "kubeletVersion": "v1.36.3",
                "kubeProxyVersion": "",
                "machineID": _sha(name)[:32],
                "systemUUID": _sha(name + "u")[:32],
                "bootID": _sha(name + "b")[:32],
                "kernelVersion": "6.8.0-1019-aws",
                "osImage": "Ubuntu 24.04.1 LTS",
                "containerRuntimeVersion": "containerd://2.1.0",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
            "images": images,
        },
    }


def small_node(i: int, groups: int = 50) -> dict[str, Any]:
    """A node as small as a real one gets: 5 labels (one of them its pool), a GPU taint, a Ready
    condition; no images, no nodeInfo (~0.6 KB of JSON)."""
    name = node_name(i)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "topology.kubernetes.io/zone": ZONES[i % len(ZONES)],
                "nvidia.com/gpu.product": PRODUCTS[i % len(PRODUCTS)],
                "kcache.bench/pool": f"pool-{i % groups:02d}",
            },
        },
        "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
        "status": {
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                    "lastHeartbeatTime": "2026-11-29T10:00:00Z",
                    "lastTransitionTime": "2026-11-01T10:00:00Z",
                }
            ],
        },
    }


def node_group(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "KernelCacheNodeGroup",
        "metadata": {"name": f"pool-{i:02d}"},
        "spec": {
            "nodeSelector": {"kcache.bench/pool": f"pool-{i:02d}"},
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        },
    }


# ---- the rest of a Kernel Cache installation (used by bench/run.py) --------------------------------

KSERVE = "serving.kserve.io/v1alpha1"
TEAM_NAMESPACES = tuple(f"team-{i:02d}" for i in range(20))
JOB_NAMESPACE = "kserve-kernelcache-jobs"
REVISION = "7d9f8c6b5"
NOW = "2026-11-29T10:00:00Z"
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
AGENT_LABELS = {
    "control-plane": "kserve-kernelcachenode-agent",
    "app.kubernetes.io/name": "kserve-kernelcachenode-agent",
}
AGENT_IMAGE = "kserve/kserve-kernelcachenode-agent:v0.17.0"


def node_name(i: int) -> str:
    return f"gpu-{i:05d}.compute.internal"  # the name gpu_node(i) gives


def _digest(text: str) -> str:
    return "sha256:" + _sha(text)


def cache_artifact(j: int) -> dict[str, Any]:
    ns = TEAM_NAMESPACES[j % len(TEAM_NAMESPACES)]
    return {
        "imageReference": f"registry.example.com/{ns}/model-{j:04d}-kcache@{_digest(f'image-{j}')}",
        "cachePaths": [{"containerPath": "/root/.cache/vllm", "ociPath": "io.vllm.cache"}],
        "identity": {
            "footprints": {"workloadFootprint": _digest(f"w-{j}"), "compatibilityFootprint": _digest(f"c-{j}")},
            "factors": {
                "gpu": PRODUCTS[j % len(PRODUCTS)],
                "vllm": "0.11.0",
                "torch": "2.8.0",
                "cuda": "12.8",
                "model": f"org/model-{j:04d}",
            },
        },
    }


def capture_name(j: int) -> str:
    return f"model-{j:04d}-kcc-{REVISION}"  # KServe's <isvc>-kcc-<pod-template-hash>


def kernel_cache_name(j: int) -> str:
    """KServe's name for the KernelCache made from capture_name(j) (generated_kernel_cache_name)."""
    from kubectl_kcache.kernelcache.names import generated_kernel_cache_name

    return generated_kernel_cache_name(capture_name(j), cache_artifact(j)["imageReference"])


def cache_group(j: int, groups: int = 50) -> str:
    return f"pool-{j % groups:02d}"


def kernel_cache(j: int, groups: int = 50) -> tuple[dict[str, Any], dict[str, Any]]:
    """KernelCache j (namespace team-<j%20>, group pool-<j%50>) and its status (written separately:
    the status subresource ignores status at create)."""
    ns = TEAM_NAMESPACES[j % len(TEAM_NAMESPACES)]
    body = {
        "apiVersion": KSERVE,
        "kind": "KernelCache",
        "metadata": {
            "name": kernel_cache_name(j),
            "namespace": ns,
            "labels": {"serving.kserve.io/inferenceservice": f"model-{j:04d}"},
            "annotations": {"internal.serving.kserve.io/kernelcache-nodegroup-selection-source": "auto"},
        },
        "spec": {"artifact": cache_artifact(j), "mountType": "oci", "nodeGroupRef": {"name": cache_group(j, groups)}},
    }
    status = {
        "state": "Ready",
        "mountType": "oci",
        "verification": {"mode": "none", "state": "Skipped", "verified": False},
        "usage": {
            "totalPodsUsing": 2,
            "pods": [
                {
                    "podUID": _sha(f"pod-{j}-{k}")[:36],
                    "podRef": {"namespace": ns, "name": f"model-{j:04d}-predictor-{REVISION}-{k:05d}"},
                    "nodeName": node_name(j % groups + groups * k),
                    "observedAt": NOW,
                }
                for k in range(2)
            ],
        },
        "counts": {"nodeCount": 0, "nodesReady": 0, "nodesPreparing": 0, "nodesError": 0},
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "Prepared",
                "message": "the cache is prepared on every node of the group",
                "observedGeneration": 1,
                "lastTransitionTime": NOW,
            }
        ],
    }
    return body, status


def kcn(i: int, caches: int = 2000, groups: int = 50, entries: int = 4) -> tuple[dict[str, Any], dict[str, Any]]:
    """The KernelCacheNode of node i and its status: `entries` caches of the node's group, mostly Ready."""
    g = i % groups
    per_group = max(1, caches // groups)
    cache_status = {}
    for k in range(entries):
        j = g + groups * ((i // groups + k) % per_group)
        if j >= caches:
            continue
        ns = TEAM_NAMESPACES[j % len(TEAM_NAMESPACES)]
        art = cache_artifact(j)
        state = "Ready" if (i + k) % 97 else "Pulling"
        cache_status[f"{ns}/{kernel_cache_name(j)}"] = {
            "kernelCacheRef": {"namespace": ns, "name": kernel_cache_name(j)},
            "imageReference": art["imageReference"],
            "state": state,
            "message": "" if state == "Ready" else "pulling the artifact",
            "lastUpdate": NOW,
            "footprints": art["identity"]["footprints"],
        }
    ready = sum(1 for e in cache_status.values() if e["state"] == "Ready")
    status = {
        "cacheStatus": cache_status,
        "counts": {
            "cachesReady": ready,
            "cachesPreparing": len(cache_status) - ready,
            "cachesError": 0,
            "totalPodsUsing": ready,
        },
    }
    return {"apiVersion": KSERVE, "kind": "KernelCacheNode", "metadata": {"name": node_name(i)}}, status


def agent_pod(i: int, ds_uid: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The agent DaemonSet's pod on node i (as the DaemonSet controller makes it) and its Running status."""
    node = node_name(i)
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"kserve-kernelcachenode-agent-{_sha(node)[:5]}{i:05d}",
            "namespace": "kserve",
            "labels": {**AGENT_LABELS, "controller-revision-hash": "6c9b8f7d4", "pod-template-generation": "1"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "DaemonSet",
                    "name": "kserve-kernelcachenode-agent",
                    "uid": ds_uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "nodeName": node,
            "serviceAccountName": "kserve-kernelcachenode-agent",
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                        ]
                    }
                }
            },
            "containers": [
                {
                    "name": "manager",
                    "image": AGENT_IMAGE,
                    "command": ["/manager"],
                    "args": ["--node-name=$(NODE_NAME)", "--cache-root=/mnt/kernelcache"],
                    "env": [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
                    "resources": {
                        "requests": {"cpu": "100m", "memory": "200Mi"},
                        "limits": {"cpu": "1", "memory": "1Gi"},
                    },
                    "volumeMounts": [{"name": "cache", "mountPath": "/mnt/kernelcache"}],
                }
            ],
            "volumes": [
                {"name": "cache", "hostPath": {"path": "/var/lib/kserve/kernelcache", "type": "DirectoryOrCreate"}}
            ],
            "tolerations": [
                GPU_TOLERATION,
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
                {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
                {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
                {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
                {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
            ],
        },
    }
    ip = f"10.{100 + i // 65536 % 100}.{i // 256 % 256}.{i % 256}"
    status = {
        "phase": "Running",
        "conditions": [
            {"type": t, "status": "True", "lastTransitionTime": NOW}
            for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")
        ],
        "hostIP": f"10.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}",
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "startTime": NOW,
        "qosClass": "Burstable",
        "containerStatuses": [
            {
                "name": "manager",
                "ready": True,
                "started": True,
                "restartCount": 0,
                "image": AGENT_IMAGE,
                "imageID": f"docker.io/kserve/kserve-kernelcachenode-agent@{_digest('agent')}",
                "containerID": f"containerd://{_sha(node + 'c')}",
                "state": {"running": {"startedAt": NOW}},
            }
        ],
    }
    return body, status


def inferenceservice_config() -> dict[str, Any]:
    import json

    config = {"enabled": True, "jobNamespace": JOB_NAMESPACE, "defaultNodeGroup": "pool-00"}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "inferenceservice-config", "namespace": "kserve"},
        "data": {"kernelcache": json.dumps(config)},
    }


def agent_daemonset(groups: int = 50) -> dict[str, Any]:
    """The agent DaemonSet already in the shape KServe's node reconciler gives it for the groups."""
    terms = [
        {"matchExpressions": [{"key": "kcache.bench/pool", "operator": "In", "values": [f"pool-{g:02d}"]}]}
        for g in sorted(range(groups), key=lambda g: f"pool-{g:02d}")  # KServe sorts the groups by name
    ]
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": "kserve-kernelcachenode-agent",
            "namespace": "kserve",
            "labels": {"app.kubernetes.io/name": "kserve", "control-plane": "kserve-kernelcachenode-agent"},
        },
        "spec": {
            "selector": {"matchLabels": {"control-plane": "kserve-kernelcachenode-agent"}},
            "template": {
                "metadata": {"labels": AGENT_LABELS},
                "spec": {
                    "serviceAccountName": "kserve-kernelcachenode-agent",
                    "containers": [{"name": "manager", "image": AGENT_IMAGE, "command": ["/manager"]}],
                    "affinity": {
                        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
                    },
                    "tolerations": [GPU_TOLERATION],
                },
            },
        },
    }


def daemonset_status(n: int) -> dict[str, Any]:
    return {
        "desiredNumberScheduled": n,
        "currentNumberScheduled": n,
        "numberReady": n,
        "updatedNumberScheduled": n,
        "numberAvailable": n,
        "numberMisscheduled": 0,
        "observedGeneration": 1,
    }


def controller_deployment() -> tuple[dict[str, Any], dict[str, Any]]:
    labels = {"control-plane": "kserve-localmodel-controller-manager"}
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "kserve-localmodel-controller-manager", "namespace": "kserve"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "manager", "image": "kserve/kserve-localmodel-controller:v0.17.0"}]},
            },
        },
    }
    status = {
        "observedGeneration": 1,
        "replicas": 1,
        "readyReplicas": 1,
        "availableReplicas": 1,
        "updatedReplicas": 1,
        "conditions": [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"}],
    }
    return body, status


def webhook_configuration() -> dict[str, Any]:
    """KServe's pod mutator for kernel caches. Its objectSelector matches no pod of the benchmark: the test
    bed runs no webhook server, and failurePolicy Fail would otherwise reject every pod create."""
    import base64

    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "kernelcache.serving.kserve.io"},
        "webhooks": [
            {
                "name": "kernelcache.kserve-webhook-server.pod-mutator",
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "failurePolicy": "Fail",
                "clientConfig": {
                    "service": {
                        "namespace": "kserve",
                        "name": "localmodel-webhook-server-service",
                        "path": "/mutate-pods",
                        "port": 443,
                    },
                    "caBundle": base64.b64encode(b"-----BEGIN CERTIFICATE-----\nbench\n").decode(),
                },
                "objectSelector": {"matchExpressions": [{"key": "kcache.bench/never", "operator": "Exists"}]},
                "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}],
            }
        ],
    }


def webhook_endpoint_slice() -> dict[str, Any]:
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": "localmodel-webhook-server-service-abcde",
            "namespace": "kserve",
            "labels": {"kubernetes.io/service-name": "localmodel-webhook-server-service"},
        },
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.244.0.10"], "conditions": {"ready": True}}],
        "ports": [{"name": "https", "port": 9443, "protocol": "TCP"}],
    }


def namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def service_account(name: str, ns: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": ns}}


def producer_pod(j: int = 0, node: int = 0) -> dict[str, Any]:
    """A running InferenceService predictor pod whose caches were captured (capture_name(j))."""
    ns = TEAM_NAMESPACES[j % len(TEAM_NAMESPACES)]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"model-{j:04d}-predictor-{REVISION}-abcde",
            "namespace": ns,
            "labels": {"serving.kserve.io/inferenceservice": f"model-{j:04d}", "pod-template-hash": REVISION},
            "annotations": {"serving.kserve.io/kernelcache-supported": "true"},
        },
        "spec": {
            "nodeName": node_name(node),
            "tolerations": [GPU_TOLERATION],
            "containers": [{"name": "kserve-container", "image": "vllm/vllm-openai:v0.11.0"}],
        },
    }


def capture(j: int = 0, node: int = 0) -> tuple[dict[str, Any], dict[str, Any]]:
    """The complete capture of producer_pod(j), already linked to KernelCache j."""
    ns = TEAM_NAMESPACES[j % len(TEAM_NAMESPACES)]
    pod = producer_pod(j, node)["metadata"]["name"]
    art = cache_artifact(j)
    body = {
        "apiVersion": KSERVE,
        "kind": "KernelCacheCapture",
        "metadata": {"name": capture_name(j), "namespace": ns},
        "spec": {"sourceRef": {"kind": "InferenceService", "name": f"model-{j:04d}"}},
    }
    status = {
        "activeSession": {"id": "s-1", "podName": pod, "nodeName": node_name(node)},
        "phase": "Complete",
        "runtimeResult": {
            "state": "Succeeded",
            "imageReference": art["imageReference"],
            "captureSessionID": "s-1",
            "sourcePodName": pod,
        },
        "artifact": art,
        "signing": {"mode": "none", "state": "Skipped", "signed": False},
        "kernelCacheRef": {"namespace": ns, "name": kernel_cache_name(j)},
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "CaptureComplete",
                "message": "kernel cache capture completed",
                "observedGeneration": 1,
                "lastTransitionTime": NOW,
            }
        ],
    }
    return body, status
