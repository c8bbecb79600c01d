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
