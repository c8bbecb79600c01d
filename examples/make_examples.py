#!/usr/bin/env python3
"""Write the example snapshots: examples/healthy-cluster.yaml and examples/broken-cluster.yaml.

Run from the repository root: `python examples/make_examples.py`. The output is deterministic (fixed
times, uids and digests derived from names, items in the order `kubectl kcache dump` lists them), so the
files can be regenerated and diffed. Each file is what `kubectl kcache dump` would write for that cluster:
only the objects the live reader lists (kubectl_kcache/snapshot/live.py), with a `meta.reads` entry per list
it makes and the number of objects that list returned.

Generated names (KernelCaches from captures, captures from pods, preparation Jobs) use KServe's rules as
kubectl_kcache.kernelcache.names implements them; everything else (agent placement, KernelCacheNode
entries, statuses) is written out here by hand from KServe's documented behaviour, so that the doctor's
checks are tested against data they did not produce.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import sys
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from kubectl_kcache.kernelcache.names import (  # noqa: E402
    capture_revision_name,
    generated_kernel_cache_name,
    label_value,
    preparation_job_name,
    reporter_name,
)
from kubectl_kcache.snapshot import plan as readplan  # noqa: E402
from kubectl_kcache.snapshot.kinds import ListSpec  # noqa: E402
from kubectl_kcache.snapshot.reads import Read  # noqa: E402
from tests.builders import digest  # noqa: E402

KSERVE = "serving.kserve.io/v1alpha1"
NS_KSERVE = "kserve"
JOB_NS = "kserve-kernelcache-jobs"
AGENT = "kserve-kernelcachenode-agent"
AGENT_LABEL = {"control-plane": AGENT}
CONTROLLER = "kserve-localmodel-controller-manager"
WEBHOOK_CONFIG = "kernelcache.serving.kserve.io"
WEBHOOK = "kernelcache.kserve-webhook-server.pod-mutator"
WEBHOOK_SERVICE = "localmodel-webhook-server-service"
CAPTURE_WEBHOOK_CONFIG = "kernelcachecapture.serving.kserve.io"
CAPTURE_WEBHOOK = "kernelcachecapture.kserve-webhook-server.status-validator"
PREFETCHER_SA = "kernel-cache-prefetcher-sa"
KSERVE_VERSION = "v0.17.0"
SERVER_VERSION = "v1.36.3"
PREFETCH_IMAGE = "registry.access.redhat.com/ubi9/ubi-minimal:9.6"
MCV_IMAGE = f"docker.io/kserve/kserve-mcv:{KSERVE_VERSION}"
VLLM_IMAGE = "docker.io/vllm/vllm-openai@" + digest("vllm/vllm-openai:v0.11.0")
SAFE = "bcdfghjklmnpqrstvwxz2456789"  # the alphabet of pod-template-hash and generated name suffixes
LINKER_SCRIPT = (
    'set -eu; echo "kernel-cache-linker: starting cache materialization"; shift; while [ "$#" -gt 1 ]; '
    'do src="$1"; dst="$2"; shift 2; echo "kernel-cache-linker: linking $src to $dst"; '
    '[ -d "$src" ] || { echo "kernel-cache-linker: source directory does not exist: $src"; exit 1; }; '
    'mkdir -p "$dst"; cp -sr "$src/." "$dst/"; echo "kernel-cache-linker: completed $dst"; done; '
    'echo "kernel-cache-linker: cache materialization completed"'
)
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
DEDICATED_INFERENCE = {"key": "dedicated", "operator": "Equal", "value": "inference", "effect": "NoSchedule"}
CA_BUNDLE = (
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJoVENDQVN1Z0F3SUJBZ0lRYk1wa2Vy"
    "bmVsY2FjaGVsb2NhbG1vZGVsMAoKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="
)


# ---- deterministic values ---------------------------------------------------------------------------


def hexd(seed: str, n: int = 64) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:n]


def safe(seed: str, n: int) -> str:
    raw = hashlib.sha256(seed.encode()).digest()
    return "".join(SAFE[b % len(SAFE)] for b in raw[:n])


def uid(*parts: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "kubectl-kcache-example/" + "/".join(parts)))


def go_json(value: Any) -> str:
    """Go's json.Marshal of a map (sorted keys, no spaces)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def footprint(factors: dict[str, str]) -> str:
    return "sha256:" + hashlib.sha256(go_json(factors).encode()).hexdigest()


class Clock:
    def __init__(self, taken_at: str):
        self.now = dt.datetime.fromisoformat(taken_at.replace("Z", "+00:00"))

    def ago(self, minutes: float = 0, *, days: float = 0, micro: bool = False) -> str:
        t = self.now - dt.timedelta(minutes=minutes, days=days)
        if micro:
            return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return t.strftime("%Y-%m-%dT%H:%M:%SZ")


class Cluster:
    """The objects of one example cluster, and the dump document they make."""

    def __init__(self, name: str, taken_at: str, rv_start: int):
        self.name = name
        self.taken_at = taken_at
        self.clock = Clock(taken_at)
        self.items: list[dict[str, Any]] = []
        self._rv = rv_start

    def rv(self) -> str:
        self._rv += 7
        return str(self._rv)

    def meta(
        self,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        created: str,
        generation: int | None = None,
        labels: dict[str, str] | None = None,
        annotations: dict[str, str] | None = None,
        owners: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        md: dict[str, Any] = {}
        if annotations:
            md["annotations"] = dict(annotations)
        md["creationTimestamp"] = created
        if generation is not None:
            md["generation"] = generation
        if labels:
            md["labels"] = dict(labels)
        md["name"] = name
        if namespace:
            md["namespace"] = namespace
        if owners:
            md["ownerReferences"] = owners
        md["resourceVersion"] = self.rv()
        md["uid"] = uid(self.name, kind, namespace or "", name)
        return md

    def add(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.items.append(obj)
        return obj

    def uid_of(self, kind: str, name: str, namespace: str | None = None) -> str:
        return uid(self.name, kind, namespace or "", name)

    # ---- the dump ---------------------------------------------------------------------------------
    def document(self) -> dict[str, Any]:
        """Items in the order the live reader lists them, and one read per list (its spec and count)."""
        reads: list[dict[str, Any]] = []
        ordered: list[dict[str, Any]] = []
        taken: set[int] = set()
        for spec in reader_lists():
            got = [o for o in self.items if lists(spec, o)]
            got.sort(key=lambda o: (ns_of(o), o["metadata"]["name"]))
            reads.append(Read.of(spec, "ok", len(got)).to_dict())
            for o in got:
                if id(o) not in taken:
                    taken.add(id(o))
                    ordered.append(o)
        left = [f"{o['kind']} {ns_of(o)}/{o['metadata']['name']}" for o in self.items if id(o) not in taken]
        if left:
            raise SystemExit(f"{self.name}: objects the live reader would not list: {', '.join(left)}")
        return {
            "kind": "KcacheSnapshot",
            "version": 1,
            "meta": {
                "cluster": self.name,
                "takenAt": self.taken_at,
                "serverVersion": SERVER_VERSION,
                "scope": {"namespace": None},
                "reads": reads,
            },
            "items": ordered,
        }


def ns_of(obj: dict[str, Any]) -> str:
    return obj["metadata"].get("namespace") or ""


def reader_lists() -> list[ListSpec]:
    """What `kubectl kcache dump` lists, in its order (THE read plan: all namespaces, the default job
    namespace)."""
    return [readplan.resolve(spec, None, JOB_NS) for _, spec in readplan.DOCTOR_FIRST + readplan.DOCTOR_THEN]


def _field(obj: dict[str, Any], path: str) -> Any:
    for part in path.split("."):
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj or ""


def lists(spec: ListSpec, obj: dict[str, Any]) -> bool:
    """Whether the API server returns `obj` for the list `spec` (the selectors the plan uses)."""
    if (obj["apiVersion"], obj["kind"]) != (spec.resource.api_version, spec.resource.kind):
        return False
    if spec.namespace is not None and ns_of(obj) != spec.namespace:
        return False
    labels = obj["metadata"].get("labels") or {}
    for term in filter(None, spec.label_selector.split(",")):
        key, _, value = term.partition("=")
        if key not in labels or (value and labels[key] != value):
            return False
    for term in filter(None, spec.field_selector.split(",")):
        key, _, value = term.partition("=")
        if str(_field(obj, key)) != value:
            return False
    return True


# ---- nodes ------------------------------------------------------------------------------------------

GPU_SHAPES: dict[str, dict[str, Any]] = {
    "p5.48xlarge": {
        "product": "NVIDIA-H100-80GB-HBM3",
        "family": "hopper",
        "memory": "81559",
        "count": 8,
        "cpu": "192",
        "mem_ki": 2097152000,
        "efa": "32",
    },
    "p5e.48xlarge": {
        "product": "NVIDIA-H200",
        "family": "hopper",
        "memory": "143771",
        "count": 8,
        "cpu": "192",
        "mem_ki": 2097152000,
        "efa": "32",
    },
    "g6e.12xlarge": {
        "product": "NVIDIA-L40S",
        "family": "ada-lovelace",
        "memory": "46068",
        "count": 4,
        "cpu": "48",
        "mem_ki": 394264576,
        "efa": "0",
    },
}


def node(
    c: Cluster,
    name: str,
    instance: str,
    zone: str,
    ip: str,
    *,
    created: str,
    pool: str,
    taints: Iterable[dict[str, Any]] = (),
    labels: dict[str, str] | None = None,
    ready: str = "True",
    unschedulable: bool = False,
    kubelet: str = SERVER_VERSION,
    images: Iterable[tuple[list[str], int]] = (),
    heartbeat: str | None = None,
) -> dict[str, Any]:
    shape = GPU_SHAPES.get(instance)
    lab: dict[str, str] = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/instance-type": instance,
        "beta.kubernetes.io/os": "linux",
        "failure-domain.beta.kubernetes.io/region": zone[:-1],
        "failure-domain.beta.kubernetes.io/zone": zone,
        "karpenter.sh/capacity-type": "on-demand",
        "karpenter.sh/nodepool": pool,
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": instance,
        "topology.kubernetes.io/region": zone[:-1],
        "topology.kubernetes.io/zone": zone,
    }
    if shape:
        lab.update(
            {
                "nvidia.com/cuda.driver.major": "570",
                "nvidia.com/gpu.count": str(shape["count"]),
                "nvidia.com/gpu.family": shape["family"],
                "nvidia.com/gpu.memory": shape["memory"],
                "nvidia.com/gpu.present": "true",
                "nvidia.com/gpu.product": shape["product"],
            }
        )
    lab.update(labels or {})
    spec: dict[str, Any] = {"providerID": f"aws:///{zone}/i-0{hexd(name, 16)}"}
    if taints:
        spec["taints"] = list(taints)
    if unschedulable:
        spec["unschedulable"] = True
    beat = heartbeat or c.clock.ago(0.4)
    if ready == "True":
        conds = [
            ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
            ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
            ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
        ]
    else:
        conds = [
            (t, "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.")
            for t in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")
        ]
    conditions = [
        {
            "lastHeartbeatTime": beat,
            "lastTransitionTime": created if ready == "True" else beat,
            "message": m,
            "reason": r,
            "status": s,
            "type": t,
        }
        for t, s, r, m in conds
    ]
    if shape:
        cpu, mem_ki, gpus, efa = shape["cpu"], shape["mem_ki"], str(shape["count"]), shape["efa"]
    else:
        cpu, mem_ki, gpus, efa = "8", 32386040, "", ""
    capacity = {
        "cpu": cpu,
        "ephemeral-storage": "3905060844Ki",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": f"{mem_ki}Ki",
        "pods": "110",
    }
    allocatable = {
        "cpu": f"{int(cpu) * 1000 - 370}m",
        "ephemeral-storage": "3597793698564",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": f"{mem_ki - 4321280}Ki",
        "pods": "110",
    }
    if gpus:
        capacity["nvidia.com/gpu"] = allocatable["nvidia.com/gpu"] = gpus
        if efa != "0":
            capacity["vpc.amazonaws.com/efa"] = allocatable["vpc.amazonaws.com/efa"] = efa
    base_images = (
        [
            (
                [
                    f"docker.io/kserve/kserve-kernelcachenode-agent@{digest('agent')}",
                    f"docker.io/kserve/kserve-kernelcachenode-agent:{KSERVE_VERSION}",
                ],
                31457280,
            ),
            (
                [
                    "nvcr.io/nvidia/k8s-device-plugin@" + digest("device-plugin"),
                    "nvcr.io/nvidia/k8s-device-plugin:v0.17.2",
                ],
                184549376,
            ),
            (["registry.k8s.io/pause@" + digest("pause"), "registry.k8s.io/pause:3.10"], 320368),
        ]
        if shape
        else [(["registry.k8s.io/pause@" + digest("pause"), "registry.k8s.io/pause:3.10"], 320368)]
    )
    all_images = list(images) + base_images
    status = {
        "addresses": [
            {"address": ip, "type": "InternalIP"},
            {"address": name, "type": "InternalDNS"},
            {"address": name, "type": "Hostname"},
        ],
        "allocatable": allocatable,
        "capacity": capacity,
        "conditions": conditions,
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "images": [{"names": names, "sizeBytes": size} for names, size in all_images],
        "nodeInfo": {
            "architecture": "amd64",
            "bootID": uid(c.name, "boot", name),
            "containerRuntimeVersion": "containerd://2.1.4",
            "kernelVersion": "6.12.37-61.105.amzn2023.x86_64",
            "kubeProxyVersion": "",
            "kubeletVersion": kubelet,
            "machineID": hexd("machine" + name, 32),
            "operatingSystem": "linux",
            "osImage": "Amazon Linux 2023.8.20250818",
            "systemUUID": "ec2"
            + hexd("uuid" + name, 5)
            + "-"
            + hexd("u2" + name, 4)
            + "-"
            + hexd("u3" + name, 4)
            + "-"
            + hexd("u4" + name, 4)
            + "-"
            + hexd("u5" + name, 12),
        },
    }
    return c.add(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": c.meta(
                "Node",
                name,
                created=created,
                labels=lab,
                annotations={
                    "alpha.kubernetes.io/provided-node-ip": ip,
                    "karpenter.sh/nodepool-hash": hexd("pool" + pool, 19),
                    "node.alpha.kubernetes.io/ttl": "0",
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                },
            ),
            "spec": spec,
            "status": status,
        }
    )


def taint(key: str, value: str = "", effect: str = "NoSchedule", added: str | None = None) -> dict[str, Any]:
    t: dict[str, Any] = {"effect": effect, "key": key}
    if added:
        t["timeAdded"] = added
    if value:
        t["value"] = value
    return t


# ---- KServe's install -------------------------------------------------------------------------------


def namespaces(c: Cluster, created: str, names: Iterable[str] = ()) -> None:
    for name in ("default", "kube-system", NS_KSERVE, JOB_NS, *names):
        labels = {"kubernetes.io/metadata.name": name}
        if name == NS_KSERVE:
            labels["control-plane"] = "kserve-controller-manager"  # KServe's own: its pods skip the webhook
        c.add(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": c.meta("Namespace", name, created=created, labels=labels),
                "spec": {"finalizers": ["kubernetes"]},
                "status": {"phase": "Active"},
            }
        )


def kernelcache_config(endpoint: str, default_group: str) -> str:
    cfg = {
        "enabled": True,
        "defaultSidecarInjection": True,
        "defaultMountType": "oci",
        "defaultNodeGroup": default_group,
        "jobNamespace": JOB_NS,
        "mcvImage": MCV_IMAGE.removeprefix("docker.io/"),
        "mcvCaptureReadinessTimeoutSeconds": 900,
        "prefetchImage": PREFETCH_IMAGE,
        "jobTTLSecondsAfterFinished": 600,
        "reconcileIntervalSeconds": 300,
        "abandonedCapturePolicy": "retain",
        "registry": {"endpoint": endpoint, "insecure": False, "auth": {"type": "none"}},
        "artifactSecurity": {
            "mode": "cert",
            "failurePolicy": "reject",
            "cert": {
                "signingProfileRef": "kernelcache-signer",
                "trustBundle": "kserve/kernelcache-root-ca",
                "trustBundleKey": "ca.crt",
                "subjectRegexp": "^spiffe://kserve/kernelcache-signer$",
            },
        },
    }
    return json.dumps(cfg, indent=2)


def configmap(c: Cluster, endpoint: str, default_group: str, created: str) -> None:
    data = {
        "deploy": json.dumps({"defaultDeploymentMode": "Standard"}, indent=2),
        "ingress": json.dumps(
            {
                "ingressGateway": "knative-serving/knative-ingress-gateway",
                "ingressDomain": "example.com",
                "ingressClassName": "istio",
                "domainTemplate": "{{ .Name }}-{{ .Namespace }}.{{ .IngressDomain }}",
                "urlScheme": "https",
                "disableIstioVirtualHost": False,
            },
            indent=2,
        ),
        "kernelcache": kernelcache_config(endpoint, default_group),
        "localModel": json.dumps(
            {
                "enabled": True,
                "jobNamespace": "kserve-localmodel-jobs",
                "defaultJobImage": f"kserve/storage-initializer:{KSERVE_VERSION}",
                "fsGroup": 1000,
                "jobTTLSecondsAfterFinished": 3600,
                "reconcilationFrequencyInSecs": 60,
                "disableVolumeManagement": False,
            },
            indent=2,
        ),
        "storageInitializer": json.dumps(
            {
                "image": f"kserve/storage-initializer:{KSERVE_VERSION}",
                "memoryRequest": "100Mi",
                "memoryLimit": "1Gi",
                "cpuRequest": "100m",
                "cpuLimit": "1",
                "enableDirectPvcVolumeMount": True,
                "enableModelcar": True,
            },
            indent=2,
        ),
    }
    c.add(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": c.meta(
                "ConfigMap",
                "inferenceservice-config",
                NS_KSERVE,
                created=created,
                labels={
                    "app.kubernetes.io/instance": "kserve",
                    "app.kubernetes.io/managed-by": "Helm",
                    "app.kubernetes.io/name": "kserve",
                },
                annotations={"meta.helm.sh/release-name": "kserve", "meta.helm.sh/release-namespace": NS_KSERVE},
            ),
            "data": data,
        }
    )


def controller(c: Cluster, created: str, *, ready: bool, since: str) -> None:
    labels = {
        "app.kubernetes.io/component": "kserve-localmodel-controller-manager",
        "app.kubernetes.io/name": "kserve",
        "control-plane": CONTROLLER,
    }
    status: dict[str, Any]
    if ready:
        status = {
            "availableReplicas": 1,
            "conditions": [
                {
                    "lastTransitionTime": since,
                    "lastUpdateTime": since,
                    "message": "Deployment has minimum availability.",
                    "reason": "MinimumReplicasAvailable",
                    "status": "True",
                    "type": "Available",
                },
                {
                    "lastTransitionTime": created,
                    "lastUpdateTime": since,
                    "message": f'ReplicaSet "{CONTROLLER}-6d8f9b7c4" has successfully progressed.',
                    "reason": "NewReplicaSetAvailable",
                    "status": "True",
                    "type": "Progressing",
                },
            ],
            "observedGeneration": 3,
            "readyReplicas": 1,
            "replicas": 1,
            "updatedReplicas": 1,
        }
    else:
        status = {
            "conditions": [
                {
                    "lastTransitionTime": created,
                    "lastUpdateTime": since,
                    "message": f'ReplicaSet "{CONTROLLER}-6d8f9b7c4" has successfully progressed.',
                    "reason": "NewReplicaSetAvailable",
                    "status": "True",
                    "type": "Progressing",
                },
                {
                    "lastTransitionTime": since,
                    "lastUpdateTime": since,
                    "message": "Deployment does not have minimum availability.",
                    "reason": "MinimumReplicasUnavailable",
                    "status": "False",
                    "type": "Available",
                },
            ],
            "observedGeneration": 3,
            "replicas": 1,
            "unavailableReplicas": 1,
            "updatedReplicas": 1,
        }
    c.add(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": c.meta(
                "Deployment",
                CONTROLLER,
                NS_KSERVE,
                created=created,
                generation=3,
                labels=labels,
                annotations={"deployment.kubernetes.io/revision": "3"},
            ),
            "spec": {
                "progressDeadlineSeconds": 600,
                "replicas": 1,
                "revisionHistoryLimit": 10,
                "selector": {"matchLabels": {"control-plane": CONTROLLER}},
                "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}, "type": "RollingUpdate"},
                "template": {
                    "metadata": {
                        "annotations": {"kubectl.kubernetes.io/default-container": "manager"},
                        "labels": {
                            "app.kubernetes.io/name": "kserve-localmodel-controller-manager",
                            "control-plane": CONTROLLER,
                        },
                    },
                    "spec": {
                        "containers": [
                            {
                                "args": ["--metrics-addr=127.0.0.1:8080", "--leader-elect"],
                                "command": ["/manager"],
                                "env": [
                                    {
                                        "name": "POD_NAMESPACE",
                                        "valueFrom": {
                                            "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}
                                        },
                                    }
                                ],
                                "image": f"kserve/kserve-localmodel-controller:{KSERVE_VERSION}",
                                "imagePullPolicy": "IfNotPresent",
                                "livenessProbe": {
                                    "httpGet": {"path": "/healthz", "port": 8081, "scheme": "HTTP"},
                                    "initialDelaySeconds": 15,
                                    "periodSeconds": 20,
                                },
                                "name": "manager",
                                "ports": [{"containerPort": 9443, "name": "webhook-server", "protocol": "TCP"}],
                                "readinessProbe": {
                                    "httpGet": {"path": "/readyz", "port": 8081, "scheme": "HTTP"},
                                    "initialDelaySeconds": 5,
                                    "periodSeconds": 10,
                                },
                                "resources": {
                                    "limits": {"cpu": "100m", "memory": "300Mi"},
                                    "requests": {"cpu": "100m", "memory": "200Mi"},
                                },
                                "securityContext": {
                                    "allowPrivilegeEscalation": False,
                                    "capabilities": {"drop": ["ALL"]},
                                    "privileged": False,
                                    "readOnlyRootFilesystem": True,
                                    "runAsNonRoot": True,
                                },
                                "terminationMessagePath": "/dev/termination-log",
                                "terminationMessagePolicy": "File",
                                "volumeMounts": [
                                    {
                                        "mountPath": "/tmp/k8s-webhook-server/serving-certs",
                                        "name": "cert",
                                        "readOnly": True,
                                    }
                                ],
                            }
                        ],
                        "dnsPolicy": "ClusterFirst",
                        "restartPolicy": "Always",
                        "schedulerName": "default-scheduler",
                        "securityContext": {"runAsNonRoot": True},
                        "serviceAccount": CONTROLLER,
                        "serviceAccountName": CONTROLLER,
                        "terminationGracePeriodSeconds": 10,
                        "volumes": [
                            {
                                "name": "cert",
                                "secret": {"defaultMode": 420, "secretName": "localmodel-webhook-server-cert"},
                            }
                        ],
                    },
                },
            },
            "status": status,
        }
    )


def webhook(c: Cluster, created: str) -> None:
    c.add(
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": c.meta(
                "MutatingWebhookConfiguration",
                WEBHOOK_CONFIG,
                created=created,
                generation=2,
                annotations={"cert-manager.io/inject-ca-from": "kserve/localmodel-serving-cert"},
                labels={"app.kubernetes.io/name": "kserve"},
            ),
            "webhooks": [
                {
                    "admissionReviewVersions": ["v1"],
                    "clientConfig": {
                        "caBundle": CA_BUNDLE,
                        "service": {
                            "name": WEBHOOK_SERVICE,
                            "namespace": NS_KSERVE,
                            "path": "/mutate-kernelcache-pods",
                            "port": 443,
                        },
                    },
                    "failurePolicy": "Fail",
                    "matchConditions": [
                        {
                            "expression": "'serving.kserve.io/inferenceservice' in object.metadata.labels",
                            "name": "inferenceservice-workload",
                        }
                    ],
                    "matchPolicy": "Equivalent",
                    "name": WEBHOOK,
                    "namespaceSelector": {"matchExpressions": [{"key": "control-plane", "operator": "DoesNotExist"}]},
                    "objectSelector": {},
                    "reinvocationPolicy": "IfNeeded",
                    "rules": [
                        {
                            "apiGroups": [""],
                            "apiVersions": ["v1"],
                            "operations": ["CREATE"],
                            "resources": ["pods"],
                            "scope": "*",
                        }
                    ],
                    "sideEffects": "None",
                    "timeoutSeconds": 10,
                }
            ],
        }
    )


def capture_webhook(c: Cluster, created: str) -> None:
    """The KernelCacheCapture status validator, installed with the localmodel controller."""
    c.add(
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": c.meta(
                "ValidatingWebhookConfiguration",
                CAPTURE_WEBHOOK_CONFIG,
                created=created,
                generation=2,
                annotations={"cert-manager.io/inject-ca-from": "kserve/localmodel-serving-cert"},
                labels={"app.kubernetes.io/name": "kserve"},
            ),
            "webhooks": [
                {
                    "admissionReviewVersions": ["v1"],
                    "clientConfig": {
                        "caBundle": CA_BUNDLE,
                        "service": {
                            "name": WEBHOOK_SERVICE,
                            "namespace": NS_KSERVE,
                            "path": "/validate-kernelcachecapture-status",
                            "port": 443,
                        },
                    },
                    "failurePolicy": "Fail",
                    "matchPolicy": "Equivalent",
                    "name": CAPTURE_WEBHOOK,
                    "namespaceSelector": {},
                    "objectSelector": {},
                    "rules": [
                        {
                            "apiGroups": ["serving.kserve.io"],
                            "apiVersions": ["v1alpha1"],
                            "operations": ["UPDATE"],
                            "resources": ["kernelcachecaptures/status"],
                            "scope": "*",
                        }
                    ],
                    "sideEffects": "None",
                    "timeoutSeconds": 10,
                }
            ],
        }
    )


def prefetcher_service_account(c: Cluster, created: str) -> None:
    """kernel-cache-prefetcher-sa, as KServe ensures it for every registry auth type."""
    c.add(
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "automountServiceAccountToken": False,
            "metadata": c.meta(
                "ServiceAccount",
                PREFETCHER_SA,
                JOB_NS,
                created=created,
                labels={"internal.serving.kserve.io/kernelcache-prefetcher": "true"},
            ),
        }
    )


def endpoint_slice(c: Cluster, created: str, *, ready: bool, pod: str, ip: str, node_name: str) -> None:
    c.add(
        {
            "addressType": "IPv4",
            "apiVersion": "discovery.k8s.io/v1",
            "endpoints": [
                {
                    "addresses": [ip],
                    "conditions": {"ready": ready, "serving": ready, "terminating": False},
                    "nodeName": node_name,
                    "targetRef": {
                        "kind": "Pod",
                        "name": pod,
                        "namespace": NS_KSERVE,
                        "uid": uid(c.name, "Pod", NS_KSERVE, pod),
                    },
                    "zone": "us-east-1a",
                }
            ],
            "kind": "EndpointSlice",
            "metadata": c.meta(
                "EndpointSlice",
                f"{WEBHOOK_SERVICE}-{safe(c.name + 'eps', 5)}",
                NS_KSERVE,
                created=created,
                generation=4,
                labels={
                    "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
                    "kubernetes.io/service-name": WEBHOOK_SERVICE,
                },
                annotations={"endpoints.kubernetes.io/last-change-trigger-time": created},
                owners=[
                    {
                        "apiVersion": "v1",
                        "blockOwnerDeletion": True,
                        "controller": True,
                        "kind": "Service",
                        "name": WEBHOOK_SERVICE,
                        "uid": uid(c.name, "Service", NS_KSERVE, WEBHOOK_SERVICE),
                    }
                ],
            ),
            "ports": [{"name": "", "port": 9443, "protocol": "TCP"}],
        }
    )


CRD_COLUMNS = {
    "KernelCacheNode": [
        ("Ready", "integer", ".status.counts.cachesReady"),
        ("Preparing", "integer", ".status.counts.cachesPreparing"),
        ("Error", "integer", ".status.counts.cachesError"),
        ("Pods-Using", "integer", ".status.counts.totalPodsUsing"),
    ],
    "KernelCache": [
        ("State", "string", ".status.state"),
        ("MountType", "string", ".status.mountType"),
        ("Pods-Using", "integer", ".status.usage.totalPodsUsing"),
    ],
    "KernelCacheCapture": [
        ("Phase", "string", ".status.phase"),
        ("Image", "string", ".status.artifact.imageReference"),
    ],
    "KernelCacheNodeGroup": [],
}
CRD_SHORT = {"KernelCacheNodeGroup": "kcng", "KernelCacheNode": "kcn", "KernelCache": "kc", "KernelCacheCapture": "kcc"}


def crds(c: Cluster, created: str) -> None:
    for kind in ("KernelCacheNodeGroup", "KernelCacheNode", "KernelCache", "KernelCacheCapture"):
        plural = kind.lower() + "s"
        columns = [{"jsonPath": p, "name": n, "type": t} for n, t, p in CRD_COLUMNS[kind]]
        columns.append({"jsonPath": ".metadata.creationTimestamp", "name": "Age", "type": "date"})
        version: dict[str, Any] = {
            "additionalPrinterColumns": columns,
            "name": "v1alpha1",
            "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
            "served": True,
            "storage": True,
        }
        if kind != "KernelCacheNodeGroup":
            version["subresources"] = {"status": {}}
        names = {
            "kind": kind,
            "listKind": f"{kind}List",
            "plural": plural,
            "shortNames": [CRD_SHORT[kind]],
            "singular": kind.lower(),
        }
        c.add(
            {
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": c.meta(
                    "CustomResourceDefinition",
                    f"{plural}.serving.kserve.io",
                    created=created,
                    generation=1,
                    annotations={"controller-gen.kubebuilder.io/version": "v0.19.0"},
                    labels={"app.kubernetes.io/name": "kserve"},
                ),
                "spec": {
                    "conversion": {"strategy": "None"},
                    "group": "serving.kserve.io",
                    "names": names,
                    "scope": "Cluster" if kind in ("KernelCacheNodeGroup", "KernelCacheNode") else "Namespaced",
                    "versions": [version],
                },
                "status": {
                    "acceptedNames": names,
                    "conditions": [
                        {
                            "lastTransitionTime": created,
                            "message": "no conflicts found",
                            "reason": "NoConflicts",
                            "status": "True",
                            "type": "NamesAccepted",
                        },
                        {
                            "lastTransitionTime": created,
                            "message": "the initial names have been accepted",
                            "reason": "InitialNamesAccepted",
                            "status": "True",
                            "type": "Established",
                        },
                    ],
                    "storedVersions": ["v1alpha1"],
                },
            }
        )


# ---- node groups and the agent ------------------------------------------------------------------------


def node_group(
    c: Cluster,
    name: str,
    selector: dict[str, str],
    tolerations: list[dict[str, Any]],
    created: str,
    generation: int = 1,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"nodeSelector": selector}
    if tolerations:
        spec["tolerations"] = tolerations
    return c.add(
        {
            "apiVersion": KSERVE,
            "kind": "KernelCacheNodeGroup",
            "metadata": c.meta("KernelCacheNodeGroup", name, created=created, generation=generation),
            "spec": spec,
        }
    )


def go_toleration(t: dict[str, Any]) -> str:
    """json.Marshal of a core/v1 Toleration: field order key, operator, value, effect, tolerationSeconds."""
    ordered = {k: t[k] for k in ("key", "operator", "value", "effect", "tolerationSeconds") if t.get(k)}
    return json.dumps(ordered, separators=(",", ":"))


def placement(groups: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """KServe's agent placement for these groups: affinity terms and tolerations (node_reconciler.go)."""
    terms = []
    tolerations: dict[str, dict[str, Any]] = {}
    for g in sorted(groups, key=lambda g: g["metadata"]["name"]):
        sel = g["spec"]["nodeSelector"]
        terms.append({"matchExpressions": [{"key": k, "operator": "In", "values": [sel[k]]} for k in sorted(sel)]})
        for t in g["spec"].get("tolerations") or []:
            tolerations.setdefault(go_toleration(t), t)
    return terms, [tolerations[k] for k in sorted(tolerations)]


DS_DEFAULT_TOLERATIONS = [
    {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists"},
    {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/disk-pressure", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/memory-pressure", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/pid-pressure", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/unschedulable", "operator": "Exists"},
]


def agent_container() -> dict[str, Any]:
    return {
        "command": ["/manager"],
        "env": [
            {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}},
            {
                "name": "POD_NAMESPACE",
                "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}},
            },
        ],
        "image": f"kserve/kserve-kernelcachenode-agent:{KSERVE_VERSION}",
        "imagePullPolicy": "IfNotPresent",
        "livenessProbe": {
            "failureThreshold": 3,
            "httpGet": {"path": "/healthz", "port": 8081, "scheme": "HTTP"},
            "initialDelaySeconds": 15,
            "periodSeconds": 20,
            "successThreshold": 1,
            "timeoutSeconds": 1,
        },
        "name": "manager",
        "ports": [
            {"containerPort": 8080, "name": "metrics", "protocol": "TCP"},
            {"containerPort": 8081, "name": "health", "protocol": "TCP"},
        ],
        "readinessProbe": {
            "failureThreshold": 3,
            "httpGet": {"path": "/readyz", "port": 8081, "scheme": "HTTP"},
            "initialDelaySeconds": 5,
            "periodSeconds": 10,
            "successThreshold": 1,
            "timeoutSeconds": 1,
        },
        "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "50m", "memory": "128Mi"}},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "readOnlyRootFilesystem": True,
            "runAsNonRoot": True,
        },
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }


def agent_daemonset(
    c: Cluster,
    terms: list[dict[str, Any]],
    tolerations: list[dict[str, Any]],
    created: str,
    generation: int,
    counts: dict[str, int],
) -> None:
    pod_spec: dict[str, Any] = {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}},
        "containers": [agent_container()],
        "dnsPolicy": "ClusterFirst",
        "priorityClassName": "system-node-critical",
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccount": AGENT,
        "serviceAccountName": AGENT,
        "terminationGracePeriodSeconds": 10,
    }
    if tolerations:
        pod_spec["tolerations"] = tolerations
    c.add(
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": c.meta(
                "DaemonSet",
                AGENT,
                NS_KSERVE,
                created=created,
                generation=generation,
                annotations={"deprecated.daemonset.template.generation": str(generation)},
                labels={
                    "app.kubernetes.io/component": "localmodel",
                    "app.kubernetes.io/name": "kserve",
                    "control-plane": AGENT,
                },
            ),
            "spec": {
                "revisionHistoryLimit": 10,
                "selector": {"matchLabels": AGENT_LABEL},
                "template": {
                    "metadata": {
                        "annotations": {"kubectl.kubernetes.io/default-container": "manager"},
                        "labels": {"app.kubernetes.io/name": AGENT, **AGENT_LABEL},
                    },
                    "spec": pod_spec,
                },
                "updateStrategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}, "type": "RollingUpdate"},
            },
            "status": {
                "currentNumberScheduled": counts["current"],
                "desiredNumberScheduled": counts["desired"],
                "numberAvailable": counts["ready"],
                "numberMisscheduled": 0,
                "numberReady": counts["ready"],
                **(
                    {"numberUnavailable": counts["desired"] - counts["ready"]}
                    if counts["ready"] < counts["desired"]
                    else {}
                ),
                "observedGeneration": generation,
                "updatedNumberScheduled": counts["current"],
            },
        }
    )


def container_id(seed: str) -> str:
    return "containerd://" + hexd("container" + seed)


def agent_pod(
    c: Cluster,
    node_name: str,
    ip: str,
    tolerations: list[dict[str, Any]],
    generation: int,
    created: str,
    *,
    state: str = "running",
    restarts: int = 0,
    node_lost: bool = False,
) -> None:
    name = f"{AGENT}-{safe(c.name + node_name, 5)}"
    started = created
    cs: dict[str, Any] = {
        "containerID": container_id(name + str(restarts)),
        "image": f"docker.io/kserve/kserve-kernelcachenode-agent:{KSERVE_VERSION}",
        "imageID": f"docker.io/kserve/kserve-kernelcachenode-agent@{digest('agent')}",
        "lastState": {},
        "name": "manager",
        "ready": True,
        "restartCount": restarts,
        "started": True,
        "state": {"running": {"startedAt": started}},
        "volumeMounts": [
            {
                "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                "name": f"kube-api-access-{safe(name, 5)}",
                "readOnly": True,
                "recursiveReadOnly": "Disabled",
            }
        ],
    }
    ready = "True"
    if state == "crashloop":
        last_start, last_end = c.clock.ago(3.2), c.clock.ago(2.6)
        cs.update(
            {
                "lastState": {
                    "terminated": {
                        "containerID": container_id(name + str(restarts - 1)),
                        "exitCode": 137,
                        "finishedAt": last_end,
                        "reason": "OOMKilled",
                        "startedAt": last_start,
                    }
                },
                "ready": False,
                "started": False,
                "state": {
                    "waiting": {
                        "message": f"back-off 5m0s restarting failed container=manager pod={name}_"
                        f"{NS_KSERVE}({uid(c.name, 'Pod', NS_KSERVE, name)})",
                        "reason": "CrashLoopBackOff",
                    }
                },
            }
        )
        ready = "False"
    if node_lost:
        cs["ready"] = False
        ready = "False"
    conditions = [
        {"lastProbeTime": None, "lastTransitionTime": created, "status": "True", "type": "PodReadyToStartContainers"},
        {"lastProbeTime": None, "lastTransitionTime": created, "status": "True", "type": "Initialized"},
        {
            "lastProbeTime": None,
            "lastTransitionTime": c.clock.ago(2.6) if ready == "False" else created,
            "status": ready,
            "type": "Ready",
            **(
                {"reason": "ContainersNotReady", "message": "containers with unready status: [manager]"}
                if state == "crashloop"
                else {}
            ),
        },
        {
            "lastProbeTime": None,
            "lastTransitionTime": c.clock.ago(2.6) if ready == "False" else created,
            "status": ready,
            "type": "ContainersReady",
            **(
                {"reason": "ContainersNotReady", "message": "containers with unready status: [manager]"}
                if state == "crashloop"
                else {}
            ),
        },
        {"lastProbeTime": None, "lastTransitionTime": created, "status": "True", "type": "PodScheduled"},
    ]
    if node_lost:
        for cond in conditions:
            if cond["type"] == "Ready":
                cond.update({"lastTransitionTime": c.clock.ago(38), "status": "False"})
                cond.pop("reason", None)
                cond.pop("message", None)
    container = agent_container()
    container["volumeMounts"] = [
        {
            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
            "name": f"kube-api-access-{safe(name, 5)}",
            "readOnly": True,
        }
    ]
    c.add(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": c.meta(
                "Pod",
                name,
                NS_KSERVE,
                created=created,
                generation=1,
                annotations={"kubectl.kubernetes.io/default-container": "manager"},
                labels={
                    "app.kubernetes.io/name": AGENT,
                    "controller-revision-hash": safe(str(generation), 10),
                    "pod-template-generation": str(generation),
                    **AGENT_LABEL,
                },
                owners=[
                    {
                        "apiVersion": "apps/v1",
                        "blockOwnerDeletion": True,
                        "controller": True,
                        "kind": "DaemonSet",
                        "name": AGENT,
                        "uid": c.uid_of("DaemonSet", AGENT, NS_KSERVE),
                    }
                ],
            ),
            "spec": {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
                            ]
                        }
                    }
                },
                "containers": [container],
                "dnsPolicy": "ClusterFirst",
                "enableServiceLinks": True,
                "nodeName": node_name,
                "preemptionPolicy": "PreemptLowerPriority",
                "priority": 2000001000,
                "priorityClassName": "system-node-critical",
                "restartPolicy": "Always",
                "schedulerName": "default-scheduler",
                "securityContext": {},
                "serviceAccount": AGENT,
                "serviceAccountName": AGENT,
                "terminationGracePeriodSeconds": 10,
                "tolerations": list(tolerations) + DS_DEFAULT_TOLERATIONS,
                "volumes": [
                    {
                        "name": f"kube-api-access-{safe(name, 5)}",
                        "projected": {
                            "defaultMode": 420,
                            "sources": [
                                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                                {
                                    "configMap": {
                                        "items": [{"key": "ca.crt", "path": "ca.crt"}],
                                        "name": "kube-root-ca.crt",
                                    }
                                },
                                {
                                    "downwardAPI": {
                                        "items": [
                                            {
                                                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                                                "path": "namespace",
                                            }
                                        ]
                                    }
                                },
                            ],
                        },
                    }
                ],
            },
            "status": {
                "conditions": conditions,
                "containerStatuses": [cs],
                "hostIP": ip,
                "hostIPs": [{"ip": ip}],
                "phase": "Running",
                "podIP": pod_ip(ip, name),
                "podIPs": [{"ip": pod_ip(ip, name)}],
                "qosClass": "Burstable",
                "startTime": created,
            },
        }
    )


def pod_ip(node_ip: str, seed: str) -> str:
    a, b, _, _ = node_ip.split(".")
    h = hashlib.sha256(seed.encode()).digest()
    return f"{a}.{b}.{64 + h[0] % 64}.{2 + h[1] % 250}"


# ---- workloads, captures and caches -------------------------------------------------------------------


class Model:
    """One InferenceService revision: its pods, capture, artifact and KernelCache."""

    def __init__(
        self,
        c: Cluster,
        ns: str,
        isvc: str,
        uri: str,
        revision: str,
        registry: str,
        *,
        tp: int,
        max_len: int,
        dtype: str = "bfloat16",
        image: str = "",
    ):
        self.c, self.ns, self.isvc, self.uri, self.revision = c, ns, isvc, uri, revision
        self.registry = registry
        self.capture_name = capture_revision_name(isvc, revision)
        self.image = image or f"{registry}/{ns}/kernel-cache-{isvc}@sha256:{hexd('artifact' + isvc + ns)}"
        self.kc_name = generated_kernel_cache_name(self.capture_name, self.image)
        self.args = [
            "--model",
            "/mnt/models",
            "--served-model-name",
            isvc,
            "--tensor-parallel-size",
            str(tp),
            "--max-model-len",
            str(max_len),
            "--dtype",
            dtype,
            "--port",
            "8080",
        ]
        self.command = ["python3", "-m", "vllm.entrypoints.openai.api_server"]
        uri_hash = "sha256:" + hashlib.sha256(json.dumps([uri]).encode()).hexdigest()
        args_hash = "sha256:" + hashlib.sha256(go_json(self.args).encode()).hexdigest()
        command_hash = "sha256:" + hashlib.sha256(go_json(self.command).encode()).hexdigest()
        self.runtime_info = {"modelURIHash": uri_hash, "commandHash": command_hash, "argsHash": args_hash}
        compat = {
            "runtimeImage": VLLM_IMAGE,
            "modelURIHash": uri_hash,
            "option.tensorParallelSize": str(tp),
            "option.maxModelLen": str(max_len),
            "option.dtype": dtype,
        }
        workload = {
            "namespace": ns,
            "workloadKind": "InferenceService",
            "workloadName": isvc,
            "runtimeImage": VLLM_IMAGE,
            "modelURIHash": uri_hash,
            "commandHash": command_hash,
            "argsHash": args_hash,
        }
        self.footprints = {"workloadFootprint": footprint(workload), "compatibilityFootprint": footprint(compat)}
        self.factors = dict(sorted({**compat, **workload}.items()))

    def artifact(self, image: str | None = None) -> dict[str, Any]:
        return {
            "cachePaths": [
                {"containerName": "kserve-container", "containerPath": "/root/.cache/vllm", "ociPath": "io.vllm.cache"}
            ],
            "identity": {"factors": self.factors, "footprints": self.footprints},
            "imageReference": image or self.image,
        }

    @property
    def replicaset(self) -> str:
        return f"{self.isvc}-predictor-{self.revision}"

    def pod_name(self, n: int) -> str:
        return f"{self.replicaset}-{safe(self.isvc + self.revision + str(n), 5)}"

    def pod(
        self,
        n: int,
        node_name: str,
        node_ip: str,
        created: str,
        *,
        producer: bool = False,
        usage: str = "",
        requested_group: str = "",
    ) -> str:
        c = self.c
        name = self.pod_name(n)
        annotations = {
            "internal.serving.kserve.io/storage-initializer-sourceuri": self.uri,
            "prometheus.io/path": "/metrics",
            "prometheus.io/port": "8080",
            "serving.kserve.io/deploymentMode": "Standard",
            "serving.kserve.io/kernelcache-supported": "true",
        }
        if requested_group:
            annotations["serving.kserve.io/kernelcache-nodegroup"] = requested_group
        if producer:
            annotations["internal.serving.kserve.io/kernelcache-reporter-secret"] = reporter_name(self.capture_name)
        if usage:
            annotations["internal.serving.kserve.io/kernelcache-usage"] = usage
        gpus = self.args[self.args.index("--tensor-parallel-size") + 1]
        kserve_container = {
            "args": self.args,
            "command": self.command,
            "env": [{"name": "VLLM_CACHE_ROOT", "value": "/root/.cache/vllm"}, {"name": "HF_HOME", "value": "/tmp/hf"}],
            "image": VLLM_IMAGE,
            "imagePullPolicy": "IfNotPresent",
            "name": "kserve-container",
            "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
            "readinessProbe": {
                "failureThreshold": 3,
                "httpGet": {"path": "/health", "port": 8080, "scheme": "HTTP"},
                "periodSeconds": 10,
                "successThreshold": 1,
                "timeoutSeconds": 1,
            },
            "resources": {
                "limits": {"nvidia.com/gpu": gpus},
                "requests": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": gpus},
            },
            "volumeMounts": [{"mountPath": "/mnt/models", "name": "kserve-provision-location", "readOnly": True}],
        }
        containers = [kserve_container]
        statuses = [self._status("kserve-container", VLLM_IMAGE, created)]
        init_containers: list[dict[str, Any]] = [
            {
                "args": [self.uri, "/mnt/models"],
                "image": f"kserve/storage-initializer:{KSERVE_VERSION}",
                "name": "storage-initializer",
                "volumeMounts": [{"mountPath": "/mnt/models", "name": "kserve-provision-location"}],
            }
        ]
        volumes: list[dict[str, Any]] = [{"emptyDir": {}, "name": "kserve-provision-location"}]
        if usage:  # as KServe's pod webhook leaves a pod it mounted a KernelCache into
            link = ["/var/run/gkm/kernel-cache/io.vllm.cache", "/root/.cache/vllm"]
            kserve_container["volumeMounts"] += [
                {"mountPath": "/root/.cache/vllm", "name": "kernel-cache-runtime-0"},
                {"mountPath": "/var/run/gkm/kernel-cache", "name": "kernel-cache-source", "readOnly": True},
            ]
            init_containers.insert(
                0,
                {
                    "args": [LINKER_SCRIPT, "kernel-cache-linker", *link],
                    "command": ["/bin/sh", "-c"],
                    "image": PREFETCH_IMAGE,
                    "imagePullPolicy": "IfNotPresent",
                    "name": "kernel-cache-linker",
                    "volumeMounts": [
                        {"mountPath": "/var/run/gkm/kernel-cache", "name": "kernel-cache-source", "readOnly": True},
                        {"mountPath": "/root/.cache/vllm", "name": "kernel-cache-runtime-0"},
                    ],
                },
            )
            volumes += [
                {"emptyDir": {}, "name": "kernel-cache-runtime-0"},
                {"image": {"pullPolicy": "IfNotPresent", "reference": self.image}, "name": "kernel-cache-source"},
            ]
        if producer:
            containers.append(
                {
                    "env": [
                        {"name": "MCV_CAPTURE_MODE", "value": "oci"},
                        {"name": "MCV_SOURCE_POD_NAME", "value": name},
                    ],
                    "image": MCV_IMAGE.removeprefix("docker.io/"),
                    "imagePullPolicy": "Always",
                    "name": "mcv",
                    "resources": {"limits": {"memory": "1Gi"}, "requests": {"cpu": "100m", "memory": "256Mi"}},
                    "volumeMounts": [{"mountPath": "/root/.cache/vllm", "name": "mcv-cache-0"}],
                }
            )
            statuses.append(self._status("mcv", MCV_IMAGE, created))
        c.add(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": c.meta(
                    "Pod",
                    name,
                    self.ns,
                    created=created,
                    generation=1,
                    annotations=annotations,
                    labels={
                        "app": f"isvc.{self.isvc}-predictor",
                        "component": "predictor",
                        "pod-template-hash": self.revision,
                        "serving.kserve.io/inferenceservice": self.isvc,
                    },
                    owners=[
                        {
                            "apiVersion": "apps/v1",
                            "blockOwnerDeletion": True,
                            "controller": True,
                            "kind": "ReplicaSet",
                            "name": self.replicaset,
                            "uid": c.uid_of("ReplicaSet", self.replicaset, self.ns),
                        }
                    ],
                ),
                "spec": {
                    "containers": containers,
                    "initContainers": init_containers,
                    "nodeName": node_name,
                    "restartPolicy": "Always",
                    "schedulerName": "default-scheduler",
                    "serviceAccountName": "default",
                    "tolerations": [
                        GPU_TOLERATION,
                        {
                            "effect": "NoExecute",
                            "key": "node.kubernetes.io/not-ready",
                            "operator": "Exists",
                            "tolerationSeconds": 300,
                        },
                        {
                            "effect": "NoExecute",
                            "key": "node.kubernetes.io/unreachable",
                            "operator": "Exists",
                            "tolerationSeconds": 300,
                        },
                    ],
                    "volumes": volumes + ([{"emptyDir": {}, "name": "mcv-cache-0"}] if producer else []),
                },
                "status": {
                    "conditions": [
                        {
                            "lastProbeTime": None,
                            "lastTransitionTime": created,
                            "status": "True",
                            "type": "PodReadyToStartContainers",
                        },
                        {"lastProbeTime": None, "lastTransitionTime": created, "status": "True", "type": "Initialized"},
                        {"lastProbeTime": None, "lastTransitionTime": created, "status": "True", "type": "Ready"},
                        {
                            "lastProbeTime": None,
                            "lastTransitionTime": created,
                            "status": "True",
                            "type": "ContainersReady",
                        },
                        {
                            "lastProbeTime": None,
                            "lastTransitionTime": created,
                            "status": "True",
                            "type": "PodScheduled",
                        },
                    ],
                    "containerStatuses": statuses,
                    "hostIP": node_ip,
                    "phase": "Running",
                    "podIP": pod_ip(node_ip, name),
                    "qosClass": "Burstable",
                    "startTime": created,
                },
            }
        )
        return name

    def _status(self, container: str, image: str, started: str) -> dict[str, Any]:
        return {
            "containerID": container_id(self.isvc + container + started),
            "image": image,
            "imageID": image if "@" in image else image.split(":")[0] + "@" + digest(image),
            "lastState": {},
            "name": container,
            "ready": True,
            "restartCount": 0,
            "started": True,
            "state": {"running": {"startedAt": started}},
        }

    def capture(
        self,
        *,
        producer: str,
        node_name: str,
        created: str,
        completed: str,
        requested_group: str = "",
        kernel_cache: bool = True,
        failed: str = "",
        pushing: bool = False,
    ) -> dict[str, Any]:
        """The capture of this revision: Complete (`completed` is when), Failed with reason `failed`, or, with
        `pushing`, in progress: the sidecar pushing the artifact since `completed`."""
        c = self.c
        session_id = uid(c.name, "session", self.capture_name)
        session: dict[str, Any] = {"id": session_id, "podName": producer}
        if node_name:
            session["nodeName"] = node_name
        if requested_group:
            session["requestedNodeGroup"] = requested_group
        status: dict[str, Any] = {"activeSession": session}
        if pushing:
            status.update(
                {
                    "conditions": [
                        {
                            "lastTransitionTime": completed,
                            "message": "cache image is being pushed",
                            "observedGeneration": 1,
                            "reason": "Pushing",
                            "status": "False",
                            "type": "Ready",
                        }
                    ],
                    "phase": "Pushing",
                    "runtimeResult": {"captureSessionID": session_id, "sourcePodName": producer, "state": "Pushing"},
                }
            )
        elif failed:
            status.update(
                {
                    "conditions": [
                        {
                            "lastTransitionTime": completed,
                            "message": "capture producer Pod no longer exists",
                            "observedGeneration": 1,
                            "reason": "ProducerGone",
                            "status": "False",
                            "type": "Ready",
                        }
                    ],
                    "phase": "Failed",
                    "runtimeResult": {"captureSessionID": session_id, "sourcePodName": producer, "state": "Capturing"},
                }
            )
        else:
            size = 1073741824 + int(hexd(self.isvc, 6), 16) * 64
            status.update(
                {
                    "artifact": self.artifact(),
                    "capturedAt": completed,
                    "capturedCacheSizeBytes": size,
                    "conditions": [
                        {
                            "lastTransitionTime": completed,
                            "message": "kernel cache capture completed and artifact signing succeeded",
                            "observedGeneration": 1,
                            "reason": "CaptureComplete",
                            "status": "True",
                            "type": "Ready",
                        }
                    ],
                    "phase": "Complete",
                    "runtimeResult": {
                        "cachePaths": json.dumps(
                            [
                                {
                                    "containerName": "kserve-container",
                                    "containerPath": "/root/.cache/vllm",
                                    "ociPath": "io.vllm.cache",
                                }
                            ],
                            separators=(",", ":"),
                        ),
                        "cacheSizeBytes": str(size),
                        "capturedAt": completed,
                        "captureSessionID": session_id,
                        "completedAt": completed,
                        "imageReference": self.image,
                        "runtimeInfo": json.dumps(self.runtime_info, separators=(",", ":")),
                        "sourcePodName": producer,
                        "state": "Succeeded",
                    },
                    "signing": {
                        "message": "artifact signature attached",
                        "mode": "cert",
                        "reason": "SigningSucceeded",
                        "signed": True,
                        "signedAt": completed,
                        "state": "Succeeded",
                    },
                }
            )
            if kernel_cache:
                status["kernelCacheRef"] = {"name": self.kc_name, "namespace": self.ns}
        return c.add(
            {
                "apiVersion": KSERVE,
                "kind": "KernelCacheCapture",
                "metadata": c.meta(
                    "KernelCacheCapture",
                    self.capture_name,
                    self.ns,
                    created=created,
                    generation=1,
                    labels={"internal.serving.kserve.io/kernelcache-capture-generated": "true"},
                    owners=[
                        {
                            "apiVersion": "apps/v1",
                            "blockOwnerDeletion": False,
                            "controller": True,
                            "kind": "ReplicaSet",
                            "name": self.replicaset,
                            "uid": c.uid_of("ReplicaSet", self.replicaset, self.ns),
                        }
                    ],
                ),
                "spec": {
                    "signing": {"profileRef": {"name": "kernelcache-signer"}},
                    "sourceRef": {"kind": "InferenceService", "name": self.isvc},
                },
                "status": dict(sorted(status.items())),
            }
        )

    def reporter_identity(self, capture: dict[str, Any], created: str, *, missing: tuple[str, ...] = ()) -> None:
        """What KServe's capture controller makes for a capture in progress in its namespace: the token
        requester RoleBinding, and the reporter ServiceAccount, Role, RoleBinding and Secret (metadata only, as
        the plugin reads Secrets), controlled by the capture; the kinds in `missing` are left out."""
        c, ns = self.c, self.ns
        reporter = reporter_name(self.capture_name)
        owner = {
            "apiVersion": KSERVE,
            "blockOwnerDeletion": True,
            "controller": True,
            "kind": "KernelCacheCapture",
            "name": self.capture_name,
            "uid": capture["metadata"]["uid"],
        }
        label = {"internal.serving.kserve.io/kernelcache-reporter": "true"}
        c.add(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": c.meta(
                    "RoleBinding",
                    "kserve-kernelcache-token-requester",
                    ns,
                    created=created,
                    labels={"internal.serving.kserve.io/kernelcache-token-requester": "true"},
                ),
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": "kserve-kernelcache-token-requester",
                },
                "subjects": [{"kind": "ServiceAccount", "name": CONTROLLER, "namespace": NS_KSERVE}],
            }
        )
        pieces: dict[str, dict[str, Any]] = {
            "ServiceAccount": {"apiVersion": "v1", "automountServiceAccountToken": False},
            "Role": {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "rules": [
                    {
                        "apiGroups": ["serving.kserve.io"],
                        "resourceNames": [self.capture_name],
                        "resources": ["kernelcachecaptures/status"],
                        "verbs": ["get", "patch", "update"],
                    }
                ],
            },
            "RoleBinding": {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": reporter},
                "subjects": [{"kind": "ServiceAccount", "name": reporter, "namespace": ns}],
            },
            "Secret": {"apiVersion": "v1", "type": "Opaque"},
        }
        for kind, body in pieces.items():
            if kind in missing:
                continue
            meta = c.meta(kind, reporter, ns, created=created, labels=label, owners=[owner])
            c.add(
                {
                    "apiVersion": body["apiVersion"],
                    "kind": kind,
                    "metadata": meta,
                    **{k: v for k, v in body.items() if k != "apiVersion"},
                }
            )

    def entry(
        self, state: str, message: str, updated: str, image: str | None = None, name: str | None = None
    ) -> tuple[str, dict[str, Any]]:
        kc = name or self.kc_name
        return f"{self.ns}/{kc}", {
            "footprints": self.footprints,
            "imageReference": image or self.image,
            "kernelCacheRef": {"name": kc, "namespace": self.ns},
            "lastUpdate": updated,
            "message": message,
            "state": state,
        }


def kernel_cache(
    c: Cluster,
    m: Model,
    group: str,
    source: str | None,
    created: str,
    *,
    state: str,
    reason: str,
    message: str,
    since: str,
    counts: tuple[int, int, int, int],
    usage: list[tuple[str, str]] = (),
    name: str | None = None,
    image: str | None = None,
) -> dict[str, Any]:
    """`counts` is (nodeCount, nodesReady, nodesPreparing, nodesError); `usage` (pod, node) pairs."""
    annotations = {"internal.serving.kserve.io/kernelcache-nodegroup-selection-source": source} if source else None
    kc_name = name or m.kc_name
    status: dict[str, Any] = {
        "conditions": [
            {
                "lastTransitionTime": since,
                "message": message,
                "observedGeneration": 1,
                "reason": reason,
                "status": "True" if state == "Ready" else "False",
                "type": "Ready",
            }
        ],
        "counts": {
            "nodeCount": counts[0],
            "nodesError": counts[3],
            "nodesPreparing": counts[2],
            "nodesReady": counts[1],
        },
        "mountType": "oci",
        "state": state,
        "verification": {
            "message": "artifact signature verified against kserve/kernelcache-root-ca",
            "mode": "cert",
            "reason": "VerificationSucceeded",
            "state": "Succeeded",
            "verified": True,
            "verifiedAt": created,
        },
    }
    if usage:
        status["usage"] = {
            "pods": [
                {
                    "nodeName": node_name,
                    "observedAt": since,
                    "podRef": {"name": pod, "namespace": m.ns},
                    "podUID": c.uid_of("Pod", pod, m.ns),
                }
                for pod, node_name in usage
            ],
            "totalPodsUsing": len(usage),
        }
    else:
        status["usage"] = {"totalPodsUsing": 0}
    return c.add(
        {
            "apiVersion": KSERVE,
            "kind": "KernelCache",
            "metadata": c.meta("KernelCache", kc_name, m.ns, created=created, generation=1, annotations=annotations),
            "spec": {"artifact": m.artifact(image), "mountType": "oci", "nodeGroupRef": {"name": group}},
            "status": status,
        }
    )


def kcn(
    c: Cluster, node_name: str, created: str, entries: Iterable[tuple[str, dict[str, Any]]], pods_using: int = 0
) -> None:
    cache_status = dict(sorted(entries))
    states = [e["state"] for e in cache_status.values()]
    counts = {
        "cachesError": states.count("Error"),
        "cachesPreparing": len(states) - states.count("Ready") - states.count("Error"),
        "cachesReady": states.count("Ready"),
        "totalPodsUsing": pods_using,
    }
    status: dict[str, Any] = {"counts": counts}
    if cache_status:
        status = {"cacheStatus": cache_status, "counts": counts}
    c.add(
        {
            "apiVersion": KSERVE,
            "kind": "KernelCacheNode",
            "metadata": c.meta("KernelCacheNode", node_name, created=created, generation=1),
            "status": status,
        }
    )


# ---- preparation Jobs ---------------------------------------------------------------------------------


def preparation(
    c: Cluster,
    m: Model,
    node_name: str,
    node_ip: str,
    group_tolerations: list[dict[str, Any]],
    start: str,
    *,
    outcome: str,
    done: str | None = None,
    waiting: tuple[str, str] | None = None,
    unschedulable: str = "",
    kc_name: str | None = None,
) -> str:
    """A preparation Job and its pod, as KServe's KernelCache reconciler creates them (cache_prefetch.go).

    outcome: complete | failed (the container exited 1) | active (pod waiting with `waiting`, or
    unschedulable with the scheduler's message)."""
    kc = kc_name or m.kc_name
    job = preparation_job_name(m.ns, kc, m.image, node_name)
    job_uid = uid(c.name, "Job", JOB_NS, job)
    labels = {
        "serving.kserve.io/kernel-cache-name": label_value(kc),
        "serving.kserve.io/kernel-cache-namespace": label_value(m.ns),
        "serving.kserve.io/kernel-cache-node": label_value(node_name),
    }
    annotations = {
        "internal.serving.kserve.io/kernel-cache-name": kc,
        "internal.serving.kserve.io/kernel-cache-namespace": m.ns,
        "internal.serving.kserve.io/kernel-cache-node": node_name,
    }
    pod_labels = {
        "batch.kubernetes.io/controller-uid": job_uid,
        "batch.kubernetes.io/job-name": job,
        "controller-uid": job_uid,
        "job-name": job,
        **labels,
    }
    pod_spec: dict[str, Any] = {
        "automountServiceAccountToken": False,
        "containers": [
            {
                "command": ["test", "-d", "/mnt/kernel-cache"],
                "image": PREFETCH_IMAGE,
                "imagePullPolicy": "IfNotPresent",
                "name": "kernel-cache-prefetch",
                "resources": {
                    "limits": {"cpu": "100m", "memory": "64Mi"},
                    "requests": {"cpu": "10m", "memory": "16Mi"},
                },
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "volumeMounts": [{"mountPath": "/mnt/kernel-cache", "name": "kernel-cache", "readOnly": True}],
            }
        ],
        "dnsPolicy": "ClusterFirst",
        "nodeSelector": {"kubernetes.io/hostname": node_name},
        "restartPolicy": "Never",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccount": "kernel-cache-prefetcher",
        "serviceAccountName": "kernel-cache-prefetcher",
        "terminationGracePeriodSeconds": 30,
        "tolerations": group_tolerations,
        "volumes": [{"image": {"pullPolicy": "IfNotPresent", "reference": m.image}, "name": "kernel-cache"}],
    }
    pod_name = f"{job}-"[:58] + safe(job, 5)  # generateName: the base is cut to 58 characters
    image_id = "registry.access.redhat.com/ubi9/ubi-minimal@" + digest(PREFETCH_IMAGE)
    scheduled = {"lastProbeTime": None, "lastTransitionTime": start, "status": "True", "type": "PodScheduled"}
    job_status: dict[str, Any]
    pod_status: dict[str, Any]
    if outcome in ("complete", "failed"):
        assert done is not None
        ok = outcome == "complete"
        why = (
            ("CompletionsReached", "Reached expected number of succeeded pods")
            if ok
            else ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
        )
        types = ("SuccessCriteriaMet", "Complete") if ok else ("FailureTarget", "Failed")
        job_status = {
            "conditions": [
                {
                    "lastProbeTime": done,
                    "lastTransitionTime": done,
                    "message": why[1],
                    "reason": why[0],
                    "status": "True",
                    "type": t,
                }
                for t in types
            ],
            "ready": 0,
            "startTime": start,
            "terminating": 0,
            "uncountedTerminatedPods": {},
        }
        job_status.update({"completionTime": done, "succeeded": 1} if ok else {"failed": 1})
        job_status = dict(sorted(job_status.items()))
        ended = "PodCompleted" if ok else "PodFailed"
        pod_status = {
            "conditions": [
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": done,
                    "status": "False",
                    "type": "PodReadyToStartContainers",
                },
                {"lastProbeTime": None, "lastTransitionTime": start, "status": "True", "type": "Initialized"},
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": done,
                    "reason": ended,
                    "status": "False",
                    "type": "Ready",
                },
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": done,
                    "reason": ended,
                    "status": "False",
                    "type": "ContainersReady",
                },
                scheduled,
            ],
            "containerStatuses": [
                {
                    "containerID": container_id(pod_name),
                    "image": PREFETCH_IMAGE,
                    "imageID": image_id,
                    "lastState": {},
                    "name": "kernel-cache-prefetch",
                    "ready": False,
                    "restartCount": 0,
                    "started": False,
                    "state": {
                        "terminated": {
                            "containerID": container_id(pod_name),
                            "exitCode": 0 if ok else 1,
                            "finishedAt": done,
                            "reason": "Completed" if ok else "Error",
                            "startedAt": start,
                        }
                    },
                }
            ],
            "hostIP": node_ip,
            "phase": "Succeeded" if ok else "Failed",
            "qosClass": "Burstable",
            "startTime": start,
        }
    elif unschedulable:
        job_status = {"active": 1, "ready": 0, "startTime": start, "terminating": 0, "uncountedTerminatedPods": {}}
        pod_status = {
            "conditions": [
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": start,
                    "message": unschedulable,
                    "reason": "Unschedulable",
                    "status": "False",
                    "type": "PodScheduled",
                }
            ],
            "phase": "Pending",
            "qosClass": "Burstable",
        }
    else:
        assert waiting is not None
        job_status = {"active": 1, "ready": 0, "startTime": start, "terminating": 0, "uncountedTerminatedPods": {}}
        unready = {
            "message": "containers with unready status: [kernel-cache-prefetch]",
            "reason": "ContainersNotReady",
            "status": "False",
        }
        pod_status = {
            "conditions": [
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": start,
                    "status": "True",
                    "type": "PodReadyToStartContainers",
                },
                {"lastProbeTime": None, "lastTransitionTime": start, "status": "True", "type": "Initialized"},
                {"lastProbeTime": None, "lastTransitionTime": start, **unready, "type": "Ready"},
                {"lastProbeTime": None, "lastTransitionTime": start, **unready, "type": "ContainersReady"},
                scheduled,
            ],
            "containerStatuses": [
                {
                    "image": PREFETCH_IMAGE,
                    "imageID": "",
                    "lastState": {},
                    "name": "kernel-cache-prefetch",
                    "ready": False,
                    "restartCount": 0,
                    "started": False,
                    "state": {"waiting": {"message": waiting[1], "reason": waiting[0]}},
                }
            ],
            "hostIP": node_ip,
            "phase": "Pending",
            "qosClass": "Burstable",
            "startTime": start,
        }
    c.add(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": c.meta("Job", job, JOB_NS, created=start, generation=1, labels=labels, annotations=annotations),
            "spec": {
                "backoffLimit": 0,
                "completionMode": "NonIndexed",
                "completions": 1,
                "manualSelector": False,
                "parallelism": 1,
                "podReplacementPolicy": "TerminatingOrFailed",
                "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": job_uid}},
                "suspend": False,
                "template": {"metadata": {"annotations": annotations, "labels": pod_labels}, "spec": pod_spec},
                "ttlSecondsAfterFinished": 600,
            },
            "status": job_status,
        }
    )
    c.add(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": c.meta(
                "Pod",
                pod_name,
                JOB_NS,
                created=start,
                generation=1,
                labels=pod_labels,
                annotations=annotations,
                owners=[
                    {
                        "apiVersion": "batch/v1",
                        "blockOwnerDeletion": True,
                        "controller": True,
                        "kind": "Job",
                        "name": job,
                        "uid": job_uid,
                    }
                ],
            ),
            "spec": pod_spec if unschedulable else dict(pod_spec, nodeName=node_name),
            "status": pod_status,
        }
    )
    return job


# ---- events -------------------------------------------------------------------------------------------


def selection_event(
    c: Cluster, capture: dict[str, Any], reason: str, message: str, first: str, last: str, count: int
) -> None:
    md = capture["metadata"]
    name = f"{md['name']}.{hexd('event' + md['name'] + reason, 16)}"
    c.add(
        {
            "action": "SelectNodeGroup",
            "apiVersion": "v1",
            "eventTime": first,
            "firstTimestamp": None,
            "involvedObject": {
                "apiVersion": KSERVE,
                "kind": "KernelCacheCapture",
                "name": md["name"],
                "namespace": md["namespace"],
                "resourceVersion": md["resourceVersion"],
                "uid": md["uid"],
            },
            "kind": "Event",
            "lastTimestamp": None,
            "message": message,
            "metadata": c.meta("Event", name, md["namespace"], created=first[:19] + "Z"),
            "reason": reason,
            "reportingComponent": "kernelcache-controller",
            "reportingInstance": f"kernelcache-controller-{CONTROLLER}-6d8f9b7c4-q2x9z",
            "series": {"count": count, "lastObservedTime": last},
            "source": {},
            "type": "Warning",
        }
    )


def failed_create_event(c: Cluster, ns: str, replicaset: str, message: str, first: str, last: str, count: int) -> None:
    name = f"{replicaset}.{hexd('event' + replicaset, 16)}"
    c.add(
        {
            "apiVersion": "v1",
            "count": count,
            "eventTime": None,
            "firstTimestamp": first,
            "involvedObject": {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": replicaset,
                "namespace": ns,
                "resourceVersion": c.rv(),
                "uid": c.uid_of("ReplicaSet", replicaset, ns),
            },
            "kind": "Event",
            "lastTimestamp": last,
            "message": message,
            "metadata": c.meta("Event", name, ns, created=first),
            "reason": "FailedCreate",
            "reportingComponent": "replicaset-controller",
            "reportingInstance": "",
            "source": {"component": "replicaset-controller"},
            "type": "Warning",
        }
    )


# ---- the clusters -------------------------------------------------------------------------------------


def install(
    c: Cluster,
    endpoint: str,
    default_group: str,
    *,
    controller_ready: bool,
    controller_since: str,
    teams: Iterable[str] = (),
) -> None:
    installed = c.clock.ago(days=41)
    namespaces(c, installed, teams)
    configmap(c, endpoint, default_group, installed)
    controller(c, installed, ready=controller_ready, since=controller_since)
    webhook(c, installed)
    capture_webhook(c, installed)
    prefetcher_service_account(c, installed)
    endpoint_slice(
        c,
        installed,
        ready=controller_ready,
        pod=f"{CONTROLLER}-6d8f9b7c4-q2x9z",
        ip="10.0.64.23",
        node_name="ip-10-0-0-10.ec2.internal",
    )
    crds(c, installed)


def h100_images(models: Iterable[Model]) -> list[tuple[list[str], int]]:
    out = [([VLLM_IMAGE, "docker.io/vllm/vllm-openai:v0.11.0"], 10522669056)]
    for m in models:
        out.append(([m.image], 1073741824 + int(hexd(m.isvc, 6), 16) * 64))
    return out


def healthy() -> Cluster:
    c = Cluster("arn:aws:eks:us-east-1:123456789012:cluster/inference-prod", "2026-06-18T14:05:00Z", 48213000)
    ago = c.clock.ago
    registry = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
    install(c, registry, "h100", controller_ready=True, controller_since=ago(days=6), teams=("team-chat", "team-llm"))

    llama = Model(
        c,
        "team-llm",
        "llama-3-1-8b-instruct",
        "hf://meta-llama/Llama-3.1-8B-Instruct",
        "7c5d9b8f46",
        registry,
        tp=1,
        max_len=32768,
    )
    mistral = Model(
        c,
        "team-chat",
        "mistral-small-24b-instruct",
        "hf://mistralai/Mistral-Small-24B-Instruct-2501",
        "6b7f4d9c58",
        registry,
        tp=2,
        max_len=32768,
    )
    qwen = Model(
        c,
        "team-llm",
        "qwen2-5-coder-7b-instruct",
        "hf://Qwen/Qwen2.5-Coder-7B-Instruct",
        "58fd6c7b94",
        registry,
        tp=1,
        max_len=16384,
    )

    gpu_nodes = {
        "ip-10-0-17-41.ec2.internal": ("p5.48xlarge", "us-east-1a", "10.0.17.41"),
        "ip-10-0-18-202.ec2.internal": ("p5.48xlarge", "us-east-1a", "10.0.18.202"),
        "ip-10-0-33-7.ec2.internal": ("p5.48xlarge", "us-east-1b", "10.0.33.7"),
        "ip-10-0-21-95.ec2.internal": ("g6e.12xlarge", "us-east-1a", "10.0.21.95"),
        "ip-10-0-37-150.ec2.internal": ("g6e.12xlarge", "us-east-1b", "10.0.37.150"),
    }
    h100 = [n for n, v in gpu_nodes.items() if v[0] == "p5.48xlarge"]
    l40s = [n for n, v in gpu_nodes.items() if v[0] == "g6e.12xlarge"]
    ip = {n: v[2] for n, v in gpu_nodes.items()}
    for name, (instance, zone, addr) in gpu_nodes.items():
        on_h100 = instance == "p5.48xlarge"
        node(
            c,
            name,
            instance,
            zone,
            addr,
            created=ago(days=12 if on_h100 else 9),
            pool="gpu-h100" if on_h100 else "gpu-l40s",
            taints=[taint("nvidia.com/gpu", "present")] + ([] if on_h100 else [taint("dedicated", "inference")]),
            images=h100_images([llama, mistral] if on_h100 else [qwen]),
        )
    node(c, "ip-10-0-4-12.ec2.internal", "m7i.2xlarge", "us-east-1a", "10.0.4.12", created=ago(days=40), pool="system")

    l40s_tolerations = [GPU_TOLERATION, DEDICATED_INFERENCE]
    g_h100 = node_group(c, "h100", {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}, [GPU_TOLERATION], ago(days=30))
    g_l40s = node_group(
        c,
        "l40s",
        {"node.kubernetes.io/instance-type": "g6e.12xlarge", "nvidia.com/gpu.product": "NVIDIA-L40S"},
        l40s_tolerations,
        ago(days=10),
        generation=2,
    )
    terms, tolerations = placement([g_h100, g_l40s])
    agent_daemonset(c, terms, tolerations, ago(days=41), 7, {"desired": 5, "current": 5, "ready": 5})
    for name in gpu_nodes:
        agent_pod(c, name, ip[name], tolerations, 7, ago(days=9))

    # Workloads: a producer and a consumer of llama on H100, mistral on H100 (prepared an hour ago; the
    # last Job finished four minutes ago and waits for its TTL), qwen on L40S requesting its group.
    llama_prod = llama.pod(0, h100[0], ip[h100[0]], ago(days=3), producer=True)
    llama_use = llama.pod(1, h100[1], ip[h100[1]], ago(days=2), usage=f"team-llm/{llama.kc_name}")
    mistral_prod = mistral.pod(0, h100[2], ip[h100[2]], ago(95), producer=True)
    qwen_prod = qwen.pod(0, l40s[0], ip[l40s[0]], ago(days=5), producer=True, requested_group="l40s")
    qwen_use = qwen.pod(1, l40s[1], ip[l40s[1]], ago(days=4), usage=f"team-llm/{qwen.kc_name}", requested_group="l40s")

    llama.capture(producer=llama_prod, node_name=h100[0], created=ago(days=3), completed=ago(days=3, minutes=-14))
    mistral.capture(producer=mistral_prod, node_name=h100[2], created=ago(95), completed=ago(12))
    qwen.capture(
        producer=qwen_prod,
        node_name=l40s[0],
        created=ago(days=5),
        completed=ago(days=5, minutes=-11),
        requested_group="l40s",
    )
    ready = "cache is ready on all selected nodes"
    kernel_cache(
        c,
        llama,
        "h100",
        "auto",
        ago(days=3, minutes=-15),
        state="Ready",
        reason="CacheReady",
        message=ready,
        since=ago(days=3, minutes=-19),
        counts=(3, 3, 0, 0),
        usage=[(llama_use, h100[1])],
    )
    kernel_cache(
        c,
        mistral,
        "h100",
        "auto",
        ago(11),
        state="Ready",
        reason="CacheReady",
        message=ready,
        since=ago(3),
        counts=(3, 3, 0, 0),
    )
    kernel_cache(
        c,
        qwen,
        "l40s",
        "annotation",
        ago(days=5, minutes=-12),
        state="Ready",
        reason="CacheReady",
        message=ready,
        since=ago(days=5, minutes=-16),
        counts=(2, 2, 0, 0),
        usage=[(qwen_use, l40s[1])],
    )

    present = "OCI artifact is present on the node"
    prefetched = "OCI artifact was prefetched on the node"
    for i, name in enumerate(h100):
        kcn(
            c,
            name,
            ago(days=12),
            [llama.entry("Ready", present, ago(3 + i)), mistral.entry("Ready", prefetched, ago(5 - i))],
            pods_using=1 if name == h100[1] else 0,
        )
        preparation(c, mistral, name, ip[name], [GPU_TOLERATION], ago(10), outcome="complete", done=ago(6 - i))
    for name in l40s:
        kcn(c, name, ago(days=9), [qwen.entry("Ready", present, ago(2))], pods_using=1 if name == l40s[1] else 0)
    return c


def broken() -> Cluster:
    """A staging cluster three hours after a KServe upgrade whose RBAC lost `patch` on the agent DaemonSet:
    KServe's controller is Ready, but its node pass fails at the DaemonSet patch, before it creates or
    deletes KernelCacheNodes, so membership and agent placement have drifted since (KernelCaches, Jobs and
    captures are still reconciled). On top of that, the usual GPU-cluster trouble."""
    c = Cluster("arn:aws:eks:us-west-2:210987654321:cluster/gpu-staging", "2026-06-18T09:42:00Z", 91733000)
    ago = c.clock.ago
    registry = "harbor.ml.example.com"
    install(
        c,
        registry,
        "h100",
        controller_ready=True,
        controller_since=ago(178),
        teams=("team-chat", "team-llm", "team-vision"),
    )

    h1, h2, h3, h4 = (
        "ip-10-0-1-11.ec2.internal",
        "ip-10-0-1-12.ec2.internal",
        "ip-10-0-1-13.ec2.internal",
        "ip-10-0-1-14.ec2.internal",
    )
    l1, l2, l3, l4 = (
        "ip-10-0-2-21.ec2.internal",
        "ip-10-0-2-22.ec2.internal",
        "ip-10-0-2-23.ec2.internal",
        "ip-10-0-2-24.ec2.internal",
    )
    h200 = "ip-10-0-3-31.ec2.internal"
    gone = "ip-10-0-1-19.ec2.internal"
    ip = {n: n.split(".")[0].removeprefix("ip-").replace("-", ".") for n in (h1, h2, h3, h4, l1, l2, l3, l4, h200)}

    llama70 = Model(
        c,
        "team-llm",
        "llama-3-1-70b-instruct",
        "hf://meta-llama/Llama-3.1-70B-Instruct",
        "84b9f6cd57",
        registry,
        tp=8,
        max_len=65536,
    )
    llama8 = Model(
        c,
        "team-llm",
        "llama-3-1-8b-instruct",
        "hf://meta-llama/Llama-3.1-8B-Instruct",
        "7d9c6b5f48",
        registry,
        tp=1,
        max_len=32768,
    )
    mistral = Model(
        c,
        "team-llm",
        "mistral-7b-instruct-v0-3",
        "hf://mistralai/Mistral-7B-Instruct-v0.3",
        "5c8d7b6f49",
        registry,
        tp=1,
        max_len=32768,
        image=f"{registry}/team-llm/mistral-7b-instruct-v0-3@sha256:{hexd('mistral-new')}",
    )
    mistral_old = f"{registry}/team-llm/mistral-7b-instruct-v0-3@sha256:{hexd('mistral-old')}"
    qwen_vl = Model(
        c,
        "team-vision",
        "qwen2-5-vl-7b-instruct",
        "hf://Qwen/Qwen2.5-VL-7B-Instruct",
        "6f9d8c7b45",
        registry,
        tp=1,
        max_len=32768,
    )
    gemma = Model(
        c,
        "team-chat",
        "gemma-2-9b-it",
        "hf://google/gemma-2-9b-it",
        "7c9f5d8b6b",
        registry,
        tp=1,
        max_len=8192,
    )
    phi = Model(
        c,
        "team-chat",
        "phi-4-mini-instruct",
        "hf://microsoft/Phi-4-mini-instruct",
        "5f6d8c9b7b",
        registry,
        tp=1,
        max_len=16384,
    )
    mistral_kc = "mistral-7b-instruct-v0-3"

    gpu = taint("nvidia.com/gpu", "present")
    h100_nodes = (
        # h1 also carries the llm-serving pool label: it is in two groups.
        (h1, "us-west-2a", {"workload.example.com/pool": "llm-serving"}, [gpu], SERVER_VERSION, [mistral]),
        (h2, "us-west-2a", {}, [gpu], SERVER_VERSION, []),
        # h3 was lent to the training team: a taint group h100 does not tolerate.
        (h3, "us-west-2b", {}, [gpu, taint("dedicated", "training")], SERVER_VERSION, []),
        # h4 came from an old launch template: kubelet v1.33, image volumes behind a feature gate.
        (h4, "us-west-2b", {}, [gpu], "v1.33.5", []),
    )
    for name, zone, labels, taints, kubelet, cached in h100_nodes:
        node(
            c,
            name,
            "p5.48xlarge",
            zone,
            ip[name],
            created=ago(days=20),
            pool="gpu-h100",
            labels=labels,
            taints=taints,
            kubelet=kubelet,
            images=h100_images(cached),
        )
    node(
        c,
        l1,
        "g6e.12xlarge",
        "us-west-2a",
        ip[l1],
        created=ago(days=15),
        pool="gpu-l40s",
        taints=[gpu],
        images=h100_images([qwen_vl]),
    )
    node(
        c,
        l2,
        "g6e.12xlarge",
        "us-west-2b",
        ip[l2],
        created=ago(days=15),
        pool="gpu-l40s",
        ready="Unknown",
        heartbeat=ago(39),
        images=h100_images([qwen_vl]),
        taints=[
            gpu,
            taint("node.kubernetes.io/unreachable", added=ago(38)),
            taint("node.kubernetes.io/unreachable", effect="NoExecute", added=ago(38)),
        ],
    )
    node(
        c,
        l3,
        "g6e.12xlarge",
        "us-west-2b",
        ip[l3],
        created=ago(days=15),
        pool="gpu-l40s",
        unschedulable=True,
        taints=[gpu, taint("node.kubernetes.io/unschedulable", added=ago(55))],
        images=h100_images([]),
    )
    node(
        c,
        l4,
        "g6e.12xlarge",
        "us-west-2c",
        ip[l4],
        created=ago(24),
        pool="gpu-l40s-dedicated",
        taints=[gpu, taint("dedicated", "inference")],
        images=[],
    )
    # The H200 node lacks the opt-in label of group h200.
    node(c, h200, "p5e.48xlarge", "us-west-2c", ip[h200], created=ago(days=2), pool="gpu-h200", taints=[gpu])
    node(c, "ip-10-0-0-10.ec2.internal", "m7i.2xlarge", "us-west-2a", "10.0.0.10", created=ago(days=60), pool="system")

    l40s_tolerations = [GPU_TOLERATION, DEDICATED_INFERENCE]
    g_h100 = node_group(c, "h100", {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}, [GPU_TOLERATION], ago(days=30))
    g_serving = node_group(
        c, "llm-serving", {"workload.example.com/pool": "llm-serving"}, [GPU_TOLERATION], ago(days=1)
    )
    g_l40s = node_group(
        c, "l40s", {"nvidia.com/gpu.product": "NVIDIA-L40S"}, l40s_tolerations, ago(days=15), generation=2
    )
    g_h200 = node_group(
        c,
        "h200",
        {"kserve.example.com/kernel-cache": "enabled", "nvidia.com/gpu.product": "NVIDIA-H200"},
        [GPU_TOLERATION],
        ago(days=2),
    )
    # The DaemonSet was last patched before group l40s gained its `dedicated` toleration (two hours ago).
    terms, _ = placement([g_h100, g_serving, g_l40s, g_h200])
    l40s_before = {"metadata": g_l40s["metadata"], "spec": dict(g_l40s["spec"], tolerations=[GPU_TOLERATION])}
    _, stale = placement([g_h100, g_serving, l40s_before, g_h200])
    agent_daemonset(c, terms, stale, ago(days=41), 9, {"desired": 7, "current": 7, "ready": 5})
    for name in (h1, h3, h4, l1, l3):
        agent_pod(c, name, ip[name], stale, 9, ago(days=1, minutes=30))
    agent_pod(c, h2, ip[h2], stale, 9, ago(days=1, minutes=30), state="crashloop", restarts=31)
    agent_pod(c, l2, ip[l2], stale, 9, ago(days=1, minutes=30), node_lost=True)
    # No agent pod on l4: the stale tolerations do not tolerate dedicated=inference.

    # A mistral serving pod that started while the re-created KernelCache was still preparing: admission
    # found no Ready entry then, so it runs without the cache although KServe would mount it now.
    mistral.pod(1, h1, ip[h1], ago(150))
    p70 = llama70.pod(0, h2, ip[h2], ago(70), producer=True)
    p8 = llama8.pod(0, h1, ip[h1], ago(210), producer=True)
    pvl = qwen_vl.pod(0, l1, ip[l1], ago(days=3), producer=True)

    llama70.capture(producer=p70, node_name=h2, created=ago(70), completed=ago(49))
    blocked = llama8.capture(producer=p8, node_name=h1, created=ago(210), completed=ago(171), kernel_cache=False)
    qwen_vl.capture(producer=pvl, node_name=l1, created=ago(days=3), completed=ago(days=3, minutes=-9))
    phi.capture(producer=phi.pod_name(0), node_name=h1, created=ago(95), completed=ago(52), failed="ProducerGone")
    # gemma's capture has been pushing for 80 minutes: a namespace RBAC cleanup removed its reporter
    # RoleBinding, so the sidecar cannot report the push's result (the status says nothing of it)
    pgemma = gemma.pod(0, h2, ip[h2], ago(100), producer=True)
    pushing = gemma.capture(producer=pgemma, node_name=h2, created=ago(100), completed=ago(80), pushing=True)
    gemma.reporter_identity(pushing, ago(99), missing=("RoleBinding",))
    selection_event(
        c,
        blocked,
        "AmbiguousNodeGroup",
        f"producer node {h1} matches multiple node groups: h100, llm-serving; set "
        "serving.kserve.io/kernelcache-nodegroup",
        ago(171, micro=True),
        ago(118, micro=True),
        4,
    )

    # llama-70b fails to prepare: a registry 401 on h1, a Job that failed on h4 (recreated after each TTL
    # and failing again), a Job that cannot schedule on h3, no entry at all on h2 (its agent crash-loops).
    pull_401 = (
        f'Back-off pulling image "{llama70.image}": ErrImagePull: failed to pull and unpack image '
        f'"{llama70.image}": failed to resolve reference "{llama70.image}": pulling from host '
        f"{registry} failed with status code [manifests sha256:{llama70.image.rsplit(':', 1)[1]}]: "
        "401 Unauthorized"
    )
    backoff = "Job has reached the specified backoff limit"
    kernel_cache(
        c,
        llama70,
        "h100",
        "auto",
        ago(48),
        state="Error",
        reason="PreparationFailed",
        message=pull_401,
        since=ago(44),
        counts=(4, 0, 2, 2),
    )
    # mistral: made by a CI pipeline (no capture) for group llm-serving, re-created with a new digest two
    # hours ago; h2 left the llm-serving pool before that, but its crash-looping agent never dropped or
    # refreshed the entry. The scaled-in node `gone` still has a KernelCacheNode.
    kernel_cache(
        c,
        mistral,
        "llm-serving",
        None,
        ago(125),
        state="Ready",
        reason="CacheReady",
        message="cache is ready on all selected nodes",
        since=ago(119),
        counts=(1, 1, 0, 0),
        name=mistral_kc,
    )
    # qwen-vl: its artifact was garbage-collected on the cordoned l3, so its Job waits there; the new l4
    # has no KernelCacheNode to report on.
    kernel_cache(
        c,
        qwen_vl,
        "l40s",
        "auto",
        ago(days=3, minutes=-10),
        state="Preparing",
        reason="Preparing",
        message="cache preparation is in progress",
        since=ago(24),
        counts=(3, 1, 2, 0),
    )

    present = "OCI artifact is present on the node"
    prefetched = "OCI artifact was prefetched on the node"
    kcn(
        c,
        h1,
        ago(days=20),
        [llama70.entry("Error", pull_401, ago(44)), mistral.entry("Ready", prefetched, ago(119), name=mistral_kc)],
    )
    kcn(c, h2, ago(days=20), [mistral.entry("Ready", present, ago(190), image=mistral_old, name=mistral_kc)])
    kcn(c, h3, ago(days=18), [llama70.entry("Pulling", "waiting for the OCI prefetch Job to start", ago(47))])
    kcn(c, h4, ago(days=20), [llama70.entry("Error", backoff, ago(4))])
    kcn(c, l1, ago(days=15), [qwen_vl.entry("Ready", present, ago(3))])
    kcn(c, l2, ago(days=15), [qwen_vl.entry("Ready", present, ago(41))])
    kcn(c, l3, ago(days=15), [qwen_vl.entry("Pulling", "waiting for the OCI prefetch Job to start", ago(30))])
    kcn(c, gone, ago(days=19), [mistral.entry("Ready", prefetched, ago(118), name=mistral_kc)])

    preparation(
        c, llama70, h1, ip[h1], [GPU_TOLERATION], ago(47), outcome="active", waiting=("ImagePullBackOff", pull_401)
    )
    preparation(
        c,
        llama70,
        h3,
        ip[h3],
        [GPU_TOLERATION],
        ago(47),
        outcome="active",
        unschedulable=(
            "0/10 nodes are available: 1 node(s) had untolerated taint {dedicated: training}, 9 node(s) didn't match "
            "Pod's node affinity/selector. preemption: 0/10 nodes are available: 10 Preemption is not helpful for "
            "scheduling."
        ),
    )
    preparation(c, llama70, h4, ip[h4], [GPU_TOLERATION], ago(5), outcome="failed", done=ago(4.5))
    preparation(
        c,
        qwen_vl,
        l3,
        ip[l3],
        l40s_tolerations,
        ago(31),
        outcome="active",
        unschedulable=(
            "0/10 nodes are available: 1 node(s) were unschedulable, 9 node(s) didn't match Pod's node "
            "affinity/selector. preemption: 0/10 nodes are available: 10 Preemption is not helpful for scheduling."
        ),
    )
    return c


# ---- output -------------------------------------------------------------------------------------------

HEADER = """\
# {title}
# A `kubectl kcache dump` of an example cluster, written by examples/make_examples.py (do not edit by
# hand: change the generator and run `python examples/make_examples.py` from the repository root).
# Try: kubectl kcache doctor --from-file examples/{file}
"""


EXAMPLES = {
    "healthy-cluster.yaml": (
        healthy,
        "healthy-cluster: two node groups (h100, l40s) on six nodes, three Ready KernelCaches",
    ),
    "broken-cluster.yaml": (
        broken,
        "broken-cluster: four node groups on ten nodes, drifted membership and placement, failing caches",
    ),
}


class _NoAliases(yaml.SafeDumper):
    """Every object written out in full, as kubectl writes YAML: snapshot input refuses aliases."""

    def ignore_aliases(self, data: object) -> bool:
        return True


def render(file: str) -> str:
    """The text of one example file."""
    make, title = EXAMPLES[file]
    text = yaml.dump(
        make().document(), Dumper=_NoAliases, sort_keys=False, default_flow_style=False, allow_unicode=True
    )
    return HEADER.format(title=title, file=file) + text


def main() -> None:
    for file in EXAMPLES:
        path = ROOT / "examples" / file
        path.write_text(render(file), encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
