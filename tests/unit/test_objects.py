"""The typed objects (msgspec Structs) decoded from realistic API objects with `X.from_dict` (plain data, as
`decode.convert`): the fields the commands use, leniency to unknown fields and other KServe versions,
Kubernetes' quirks (null is absent, int-or-string), and ObjectError (an InputError) naming the JSON path of
a field of the wrong type."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubectl_kcache import objects as o
from kubectl_kcache.errors import InputError
from kubectl_kcache.objects import ObjectError
from kubectl_kcache.objects.decode import convert
from tests import builders as b

KSERVE = "serving.kserve.io/v1alpha1"
TS = "2026-11-29T10:00:00Z"

NODE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {
        "name": "gpu-1",
        "uid": "0b6c2a9e-1",
        "resourceVersion": "123456",
        "creationTimestamp": TS,
        "labels": {
            "kubernetes.io/hostname": "gpu-1",
            "nvidia.com/gpu.product": "NVIDIA-H100",
            "nvidia.com/gpu.count": 8,
        },
        "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
        "managedFields": [{"manager": "kubelet", "operation": "Update"}],
    },
    "spec": {
        "podCIDR": "10.244.1.0/24",
        "providerID": "aws:///us-east-1a/i-0abc",
        "unschedulable": True,
        "taints": [
            {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
            {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": TS},
            {"key": "dedicated", "value": "ml", "effect": "PreferNoSchedule"},
        ],
    },
    "status": {
        "capacity": {"cpu": "96", "nvidia.com/gpu": "8"},
        "conditions": [
            {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory"},
            {
                "type": "Ready",
                "status": "Unknown",
                "reason": "NodeStatusUnknown",
                "message": "Kubelet stopped posting node status.",
                "lastHeartbeatTime": TS,
                "lastTransitionTime": TS,
            },
        ],
        "nodeInfo": {"kubeletVersion": "v1.33.2", "containerRuntimeVersion": "containerd://2.0.5"},
        "images": [{"names": ["registry.example.com/a@sha256:1"], "sizeBytes": 1}, {"names": ["b"], "sizeBytes": 2}],
    },
}


def test_node():
    n = o.Node.from_dict(NODE)
    assert n.name == "gpu-1"
    assert n.meta.uid == "0b6c2a9e-1"
    assert n.meta.resource_version == "123456"
    assert n.meta.created == TS
    assert n.meta.namespace is None
    assert n.meta.key == "gpu-1"
    assert n.labels["nvidia.com/gpu.count"] == "8"  # a number becomes its string
    assert n.taints == (
        o.Taint("nvidia.com/gpu", "NoSchedule", "present"),
        o.Taint("node.kubernetes.io/unreachable", "NoExecute"),
        o.Taint("dedicated", "PreferNoSchedule", "ml"),
    )
    assert [str(t) for t in n.taints] == [
        "nvidia.com/gpu=present:NoSchedule",
        "node.kubernetes.io/unreachable:NoExecute",
        "dedicated=ml:PreferNoSchedule",
    ]
    assert n.unschedulable is True
    assert n.ready is False
    assert n.ready_reason == "NodeStatusUnknown"
    assert n.ready_message == "Kubelet stopped posting node status."
    assert n.kubelet_version == "v1.33.2"
    assert n.image_count == 2


def test_node_ready_and_without_ready_condition():
    assert o.Node.from_dict(b.node("n", ready=True)).ready is True
    bare = o.Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}})
    assert bare.ready is None
    assert bare.taints == ()
    assert bare.labels == {}
    assert bare.unschedulable is False
    assert bare.kubelet_version == ""


def test_first_ready_condition_wins():
    obj = b.node("n")
    obj["status"]["conditions"].append({"type": "Ready", "status": "False"})
    assert o.Node.from_dict(obj).ready is True


# ---- KServe objects ----------------------------------------------------------------------------------


def test_node_group_is_lenient_to_other_kserve_versions():
    obj = b.group("gpu", {"role": "gpu"}, [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])
    obj["spec"]["storage"] = {"storageClass": {"name": "fast", "size": "100Gi", "accessModes": ["ReadWriteOnce"]}}
    obj["spec"]["futureField"] = [1, 2]
    obj["status"] = {"anything": True}
    g = o.NodeGroup.from_dict(obj)
    assert g.name == "gpu"
    assert g.node_selector == {"role": "gpu"}
    assert g.tolerations == (o.Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule"),)


def test_node_group_without_spec():
    g = o.NodeGroup.from_dict({"apiVersion": KSERVE, "kind": "KernelCacheNodeGroup", "metadata": {"name": "g"}})
    assert g.node_selector == {}
    assert g.tolerations == ()


def test_toleration_fields():
    t = convert(
        {"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute", "tolerationSeconds": 300}, o.Toleration
    )
    assert t == o.Toleration("k", "Equal", "v", "NoExecute", 300)
    assert t.to_dict() == {
        "key": "k",
        "operator": "Equal",
        "value": "v",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    }
    assert convert({"tolerationSeconds": "60"}, o.Toleration).toleration_seconds == 60  # int-or-string
    assert convert({"key": None, "tolerationSeconds": None}, o.Toleration) == o.Toleration()  # null is absent


def test_kernel_cache_node_cache_status():
    fp = b.footprints("cache")
    obj = {
        "apiVersion": KSERVE,
        "kind": "KernelCacheNode",
        "metadata": {"name": "gpu-1"},
        "status": {
            "cacheStatus": {
                "team-b/other": {
                    "kernelCacheRef": {"namespace": "team-b", "name": "other"},
                    "imageReference": b.image("other"),
                    "state": "Error",
                    "message": "ErrImagePull: manifest unknown",
                    "lastUpdate": TS,
                    "footprints": b.footprints("other"),
                },
                "team-a/cache": {
                    "kernelCacheRef": {"namespace": "team-a", "name": "cache"},
                    "imageReference": b.image("cache"),
                    "state": "Ready",
                    "footprints": fp,
                },
                "team-c/legacy": {"state": "Extracting", "footprints": {}},
            },
            "counts": {"cachesReady": 1, "cachesPreparing": 1, "cachesError": 1, "totalPodsUsing": 3},
        },
    }
    kcn = o.KernelCacheNode.from_dict(obj)
    assert kcn.name == "gpu-1"
    assert [e.key for e in kcn.entries] == ["team-a/cache", "team-b/other", "team-c/legacy"]
    ready, error, legacy = kcn.entries
    assert ready.ref == o.NamespacedName("team-a", "cache")
    assert str(ready.ref) == "team-a/cache"
    assert ready.state == "Ready"
    assert ready.image_reference == b.image("cache")
    assert ready.footprints == o.Footprints(fp["workloadFootprint"], fp["compatibilityFootprint"])
    assert error.message == "ErrImagePull: manifest unknown"
    assert error.last_update == TS
    assert legacy.ref == o.NamespacedName("team-c", "legacy")  # from the key when kernelCacheRef is missing
    assert legacy.footprints == o.Footprints()


def test_kernel_cache_node_without_status():
    assert o.KernelCacheNode.from_dict(b.kcn("n")).entries == ()


def test_kernel_cache():
    obj = b.kernel_cache("cache", ns="team-a", group_name="gpu", state="Ready")
    obj["metadata"]["annotations"] = {"internal.serving.kserve.io/kernelcache-nodegroup-selection-source": "auto"}
    obj["spec"]["artifact"]["identity"]["factors"] = {"vllm": "0.9.1", "gpu": "H100"}
    obj["spec"]["artifact"]["cachePaths"].append({"containerName": "main", "ociPath": "io.triton.cache"})
    obj["status"].update(
        mountType="oci",
        verification={"mode": "cert", "state": "Failed", "verified": False, "reason": "BadSignature", "message": "m"},
        usage={"pods": [{"podUID": "u", "podRef": {"namespace": "team-a", "name": "p"}}], "totalPodsUsing": 1},
        counts={"nodeCount": 3, "nodesReady": 2, "nodesPreparing": 0, "nodesError": 1},
    )
    kc = o.KernelCache.from_dict(obj)
    assert (kc.name, kc.namespace, kc.meta.key) == ("cache", "team-a", "team-a/cache")
    assert kc.node_group == "gpu"
    assert kc.mount_type == "oci"
    assert kc.state == "Ready"
    assert kc.artifact.image_reference == b.image("cache")
    assert len(kc.artifact.cache_paths) == 2
    assert kc.artifact.footprints.workload == b.footprints("cache")["workloadFootprint"]
    assert kc.artifact.raw["identity"]["factors"] == {"vllm": "0.9.1", "gpu": "H100"}
    assert kc.verification == o.Verification("cert", "Failed", "BadSignature", "m")
    assert (kc.node_count, kc.nodes_ready, kc.nodes_error) == (3, 2, 1)
    assert o.find_condition(kc.conditions, "Ready").status == "True"
    assert kc.meta.annotations["internal.serving.kserve.io/kernelcache-nodegroup-selection-source"] == "auto"


def test_kernel_cache_with_pvc_mount_type_and_no_status():
    obj = b.kernel_cache("cache", group_name=None)
    obj["spec"]["mountType"] = "pvc"
    kc = o.KernelCache.from_dict(obj)
    assert kc.mount_type == "pvc"
    assert kc.node_group == ""
    assert kc.state == ""
    assert kc.verification is None
    assert kc.conditions == ()


def test_kernel_cache_without_artifact():
    kc = o.KernelCache.from_dict(
        {"apiVersion": KSERVE, "kind": "KernelCache", "metadata": {"name": "x", "namespace": "a"}}
    )
    assert kc.artifact is None


def test_capture():
    status = b.capture_status(
        node_name="gpu-1", requested="gpu", kernel_cache_ref={"namespace": "team-a", "name": "kc"}
    )
    status["runtimeResult"].update(cacheSizeBytes="123456789", message="captured", capturedAt=TS)
    status["signing"] = {"mode": "cert", "state": "Succeeded", "signed": True, "reason": "Signed", "signedAt": TS}
    status["capturedCacheSizeBytes"] = 123456789
    obj = b.capture("model-kcc-669889f77f", isvc="model", status=status, generation=2)
    obj["spec"].update(
        targetImage="registry.example:5000/team-a/kernel-cache-model:669889f77f",
        signing={"profileRef": {"name": "kernelcache-signer"}},
    )
    cap = o.Capture.from_dict(obj)
    assert (cap.name, cap.namespace) == ("model-kcc-669889f77f", "team-a")
    assert cap.source_name == "model"
    assert cap.meta.generation == 2
    assert cap.phase == "Complete"
    assert cap.active_session == o.ActiveSession("s-1", "model-pod", "gpu-1", "gpu")
    assert cap.active_session.to_dict() == {
        "id": "s-1",
        "podName": "model-pod",
        "nodeName": "gpu-1",
        "requestedNodeGroup": "gpu",
    }
    assert cap.runtime_result["cacheSizeBytes"] == "123456789"
    assert cap.runtime_result["state"] == "Succeeded"
    assert cap.artifact.image_reference == b.image("cache")
    assert cap.kernel_cache_ref == o.NamespacedName("team-a", "kc")
    assert cap.signing == o.Signing(mode="cert", state="Succeeded", signed=True, reason="Signed")
    assert o.find_condition(cap.conditions, "Ready").observed_generation == 1


def test_capture_session_to_dict_omits_empty_optional_fields():
    assert o.ActiveSession(id="", pod_name="").to_dict() == {"id": "", "podName": ""}


def test_pending_capture():
    obj = b.capture("c", status={"phase": "WaitingForWorkload"})
    cap = o.Capture.from_dict(obj)
    assert cap.active_session is None
    assert cap.signing is None
    assert cap.artifact is None
    assert cap.kernel_cache_ref is None
    assert cap.runtime_result == {}


def test_pod_container_states():
    obj = b.pod("prep", ns="kserve-kernelcache-jobs", node_name="gpu-1", phase="Pending", ready=False)
    obj["spec"]["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    obj["status"].update(
        reason="Evicted",
        message="The node was low on resource: ephemeral-storage.",
        conditions=[
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": "0/3 nodes are available",
            },
            {"type": "Ready", "status": "False"},
        ],
        initContainerStatuses=[
            {
                "name": "init",
                "ready": True,
                "restartCount": 0,
                "image": "busybox",
                "state": {"terminated": {"reason": "Completed", "exitCode": 0}},
            },
        ],
        containerStatuses=[
            {
                "name": "pull",
                "ready": False,
                "restartCount": 0,
                "image": "registry.example.com/x",
                "state": {"waiting": {"reason": "ImagePullBackOff", "message": 'Back-off pulling image "x"'}},
            },
            {
                "name": "oom",
                "ready": False,
                "restartCount": 4,
                "state": {"terminated": {"reason": "OOMKilled", "exitCode": 137, "message": "killed"}},
            },
            {
                "name": "crash",
                "ready": False,
                "restartCount": 7,
                "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s"}},
                "lastState": {"terminated": {"reason": "Error", "exitCode": 1, "message": "test -d failed"}},
            },
            {"name": "ok", "ready": True, "restartCount": 0, "state": {"running": {"startedAt": TS}}},
        ],
    )
    p = o.Pod.from_dict(obj)
    assert (p.name, p.namespace, p.node_name, p.phase, p.ready) == (
        "prep",
        "kserve-kernelcache-jobs",
        "gpu-1",
        "Pending",
        False,
    )
    assert (p.reason, p.message) == ("Evicted", "The node was low on resource: ephemeral-storage.")
    assert (p.scheduled_reason, p.scheduled_message) == ("Unschedulable", "0/3 nodes are available")
    assert p.tolerations == (o.Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule"),)
    init, pull, oom, crash, ok = p.containers
    assert (init.name, init.terminated_reason, init.exit_code) == ("init", "Completed", 0)
    assert (pull.waiting_reason, pull.waiting_message, pull.image) == (
        "ImagePullBackOff",
        'Back-off pulling image "x"',
        "registry.example.com/x",
    )
    assert pull.exit_code is None
    assert (oom.terminated_reason, oom.terminated_message, oom.exit_code, oom.restarts) == (
        "OOMKilled",
        "killed",
        137,
        4,
    )
    assert crash.waiting_reason == "CrashLoopBackOff"
    assert (crash.terminated_reason, crash.exit_code, crash.terminated_message) == ("Error", 1, "test -d failed")
    assert ok.ready is True
    assert ok.terminated_reason == ""


def test_scheduled_pod_has_no_scheduling_reason():
    obj = b.pod("p", node_name="n")
    obj["status"]["conditions"].append({"type": "PodScheduled", "status": "True", "reason": "Scheduled"})
    p = o.Pod.from_dict(obj)
    assert p.ready is True
    assert p.scheduled_reason == ""


def test_daemonset_with_node_selector_and_affinity():
    terms = [b.term({"role": "gpu"})]
    obj = b.agent_daemonset(
        tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        terms=terms,
        node_selector={"kserve/localmodel": "worker"},
        status={
            "desiredNumberScheduled": 3,
            "currentNumberScheduled": 3,
            "numberReady": 2,
            "updatedNumberScheduled": 1,
            "numberAvailable": 2,
            "numberMisscheduled": 1,
            "observedGeneration": 4,
        },
    )
    ds = o.DaemonSet.from_dict(obj)
    assert ds.meta.key == "kserve/kserve-kernelcachenode-agent"
    assert ds.node_selector == {"kserve/localmodel": "worker"}
    assert ds.affinity == {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
    }
    assert ds.tolerations == (o.Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule"),)
    assert (ds.desired, ds.current, ds.ready, ds.updated, ds.available, ds.misscheduled, ds.observed_generation) == (
        3,
        3,
        2,
        1,
        2,
        1,
        4,
    )


def test_daemonset_without_node_selector_or_affinity():
    ds = o.DaemonSet.from_dict(b.agent_daemonset())
    assert ds.node_selector is None
    assert ds.affinity is None
    assert ds.tolerations == ()
    assert ds.desired == 0


def test_daemonset_affinity_is_a_copy():
    obj = b.agent_daemonset(terms=[b.term({"role": "gpu"})])
    ds = o.DaemonSet.from_dict(obj)
    obj["spec"]["template"]["spec"]["affinity"]["podAffinity"] = {}
    assert "podAffinity" not in ds.affinity


CORE_EVENT = {
    "apiVersion": "v1",
    "kind": "Event",
    "metadata": {"name": "model-kcc.1800a1", "namespace": "team-a", "creationTimestamp": TS},
    "involvedObject": {"kind": "KernelCacheCapture", "namespace": "team-a", "name": "model-kcc", "apiVersion": KSERVE},
    "reason": "AmbiguousNodeGroup",
    "message": "producer node gpu-1 matches multiple node groups: a, b; set serving.kserve.io/kernelcache-nodegroup",
    "type": "Warning",
    "count": 5,
    "firstTimestamp": "2026-11-29T09:00:00Z",
    "lastTimestamp": TS,
    "action": "SelectNodeGroup",
    "reportingComponent": "kubectl-kcache",
    "source": {"component": "kubectl-kcache"},
}

NEW_EVENT = {
    "apiVersion": "events.k8s.io/v1",
    "kind": "Event",
    "metadata": {"name": "model-kcc.1800a2", "namespace": "team-a", "creationTimestamp": "2026-11-29T08:00:00Z"},
    "eventTime": "2026-11-29T09:00:00.000000Z",
    "regarding": {"kind": "KernelCacheCapture", "namespace": "team-a", "name": "model-kcc"},
    "reason": "ProducerNodePending",
    "note": "producer Pod node assignment has not been observed yet",
    "type": "Warning",
    "action": "SelectNodeGroup",
    "reportingController": "kserve.io/kernelcache",
    "reportingInstance": "kserve-localmodel-controller-manager-0",
    "series": {"count": 4, "lastObservedTime": "2026-11-29T09:30:00.000000Z"},
}


def test_core_v1_event():
    e = o.Event.from_dict(CORE_EVENT)
    assert (e.type, e.reason, e.action, e.count) == ("Warning", "AmbiguousNodeGroup", "SelectNodeGroup", 5)
    assert e.message.startswith("producer node gpu-1")
    assert (e.involved_kind, e.involved_namespace, e.involved_name) == ("KernelCacheCapture", "team-a", "model-kcc")
    assert e.last_seen == TS
    assert e.reporting_controller == "kubectl-kcache"


def test_events_k8s_io_event():
    e = o.Event.from_dict(NEW_EVENT)
    assert e.message == "producer Pod node assignment has not been observed yet"
    assert (e.involved_kind, e.involved_name) == ("KernelCacheCapture", "model-kcc")
    assert e.count == 4
    assert e.last_seen == "2026-11-29T09:30:00.000000Z"
    assert e.reporting_controller == "kserve.io/kernelcache"
    assert e.action == "SelectNodeGroup"


def test_events_k8s_io_event_without_series():
    obj = copy.deepcopy(NEW_EVENT)
    del obj["series"]
    e = o.Event.from_dict(obj)
    assert e.count == 1
    assert e.last_seen == "2026-11-29T09:00:00.000000Z"  # eventTime
    obj["deprecatedCount"] = 3
    obj["deprecatedLastTimestamp"] = TS
    assert o.Event.from_dict(obj).count == 3


def test_event_without_times_uses_creation():
    obj = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": "x", "creationTimestamp": TS}}
    e = o.Event.from_dict(obj)
    assert (e.last_seen, e.count, e.involved_name) == (TS, 1, "")


# ---- the other kinds ---------------------------------------------------------------------------------


def test_deployment():
    d = o.Deployment.from_dict(b.controller_deployment(ready=0, replicas=2))
    assert (d.replicas, d.ready_replicas, d.available_replicas) == (2, 0, 0)
    bare = o.Deployment.from_dict({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}})
    assert bare.replicas == 1


def test_job():
    obj = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "kc-cache-gpu-1-f66646c0c90ba559",
            "namespace": "kserve-kernelcache-jobs",
            "labels": {"serving.kserve.io/kernel-cache-node": "gpu-1"},
        },
        "spec": {
            "ttlSecondsAfterFinished": 600,
            "template": {
                "spec": {
                    "nodeSelector": {"kubernetes.io/hostname": "gpu-1"},
                    "volumes": [
                        {"name": "tmp", "emptyDir": {}},
                        {
                            "name": "kernel-cache",
                            "image": {"reference": b.image("cache"), "pullPolicy": "IfNotPresent"},
                        },
                    ],
                }
            },
        },
        "status": {
            "failed": 1,
            "conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "m"}],
        },
    }
    j = o.Job.from_dict(obj)
    assert j.image_reference == b.image("cache")
    assert j.ttl_seconds == 600
    assert j.node_selector == {"kubernetes.io/hostname": "gpu-1"}
    assert (j.failed, j.succeeded, j.active) == (1, 0, 0)
    assert o.find_condition(j.conditions, "Failed").reason == "BackoffLimitExceeded"


def test_config_map():
    cm = o.ConfigMap.from_dict(b.config_map({"enabled": True}))
    assert cm.meta.key == "kserve/inferenceservice-config"
    assert cm.data == {"kernelcache": '{"enabled": true}'}


def test_webhook_configuration():
    obj = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "kernelcache.serving.kserve.io"},
        "webhooks": [
            {
                "name": "kernelcache.kserve-webhook-server.pod-mutator",
                "clientConfig": {
                    "service": {"namespace": "kserve", "name": "localmodel-webhook-server-service", "path": "/mutate"},
                    "caBundle": "LS0t",
                },
            },
            {"name": "other", "failurePolicy": "Ignore", "clientConfig": {"url": "https://x"}},
        ],
    }
    w = o.WebhookConfiguration.from_dict(obj)
    first, second = w.webhooks
    assert (
        first.name,
        first.failure_policy,
        first.service_namespace,
        first.service_name,
        first.path,
        first.has_ca_bundle,
    ) == (
        "kernelcache.kserve-webhook-server.pod-mutator",
        "Fail",
        "kserve",
        "localmodel-webhook-server-service",
        "/mutate",
        True,
    )
    assert (second.failure_policy, second.has_ca_bundle, second.service_name) == ("Ignore", False, "")


def test_endpoint_slice_counts_ready_endpoints():
    obj = {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": "s", "namespace": "kserve"},
        "endpoints": [{"conditions": {"ready": True}}, {"conditions": {"ready": False}}, {"conditions": {}}, {}],
    }
    assert o.EndpointSlice.from_dict(obj).ready_endpoints == 3


def test_service_account_role_binding_namespace_crd():
    sa = o.ServiceAccount.from_dict(
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "kernel-cache-prefetcher-sa", "namespace": "j"},
            "automountServiceAccountToken": False,
        }
    )
    assert sa.automount_token is False
    assert o.ServiceAccount.from_dict({"kind": "ServiceAccount", "metadata": {"name": "x"}}).automount_token is None
    rb = o.RoleBinding.from_dict(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "kernel-cache-prefetcher-rb", "namespace": "j"},
            "roleRef": {"kind": "ClusterRole", "name": "registry-puller", "apiGroup": "rbac.authorization.k8s.io"},
            "subjects": [{"kind": "ServiceAccount", "namespace": "j", "name": "kernel-cache-prefetcher-sa"}],
        }
    )
    assert (rb.role_kind, rb.role_name) == ("ClusterRole", "registry-puller")
    assert rb.subjects == (("ServiceAccount", "j", "kernel-cache-prefetcher-sa"),)
    assert o.Namespace.from_dict(b.namespace("team-a")).phase == "Active"
    terminating = o.Namespace.from_dict(
        {"kind": "Namespace", "metadata": {"name": "x"}, "status": {"phase": "Terminating"}}
    )
    assert terminating.phase == "Terminating"
    crd = o.Crd.from_dict(
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "kernelcaches.serving.kserve.io"},
            "spec": {
                "group": "serving.kserve.io",
                "names": {"kind": "KernelCache", "plural": "kernelcaches"},
                "versions": [{"name": "v1alpha1", "served": True}, {"name": "v1alpha2", "served": False}],
            },
            "status": {"conditions": [{"type": "Established", "status": "True"}]},
        }
    )
    assert (crd.group, crd.kind, crd.served_versions, crd.established) == (
        "serving.kserve.io",
        "KernelCache",
        ("v1alpha1",),
        True,
    )


# ---- leniency ----------------------------------------------------------------------------------------


def test_unknown_fields_everywhere_are_ignored():
    obj = copy.deepcopy(NODE)
    obj["futureTopLevel"] = {"x": 1}
    obj["metadata"]["futureMeta"] = [1]
    obj["spec"]["taints"][0]["futureTaintField"] = "x"
    obj["status"]["conditions"][0]["futureConditionField"] = {"a": []}
    assert o.Node.from_dict(obj).taints[0] == o.Taint("nvidia.com/gpu", "NoSchedule", "present")


def test_nulls_are_absent_fields():
    obj = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n", "labels": None, "annotations": None},
        "spec": None,
        "status": {"conditions": None, "nodeInfo": None, "images": None},
    }
    n = o.Node.from_dict(obj)
    assert (n.labels, n.taints, n.ready, n.image_count) == ({}, (), None, 0)


def test_boolean_strings():
    obj = b.node("n")
    obj["spec"]["unschedulable"] = "True"
    assert o.Node.from_dict(obj).unschedulable is True
    obj["spec"]["unschedulable"] = "false"
    assert o.Node.from_dict(obj).unschedulable is False


def test_deleting_and_owners():
    obj = b.pod("p")
    obj["metadata"]["deletionTimestamp"] = TS
    obj["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "name": "rs", "controller": True, "uid": "u"}]
    meta = o.Pod.from_dict(obj).meta
    assert meta.deleting
    assert meta.owners == (o.OwnerRef("ReplicaSet", "rs", True, "u"),)


# ---- ObjectError names the field ---------------------------------------------------------------------


def mutate(obj: dict[str, Any], path: list[Any], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    cur = out
    for key in path[:-1]:
        cur = cur.setdefault(key, {}) if isinstance(cur, dict) else cur[key]
    cur[path[-1]] = value
    return out


GROUP = b.group("gpu", {"role": "gpu"}, [{"key": "a", "operator": "Exists"}])
CAPTURE = b.capture("c", status=b.capture_status())


MAPS = ("nodeSelector", "cacheStatus", "runtimeResult", "data", "labels", "annotations")


def json_path(path: list[Any]) -> str:
    """msgspec's path: [i] for list items, [...] for the values of a map."""
    out = "$"
    for i, p in enumerate(path):
        out += f"[{p}]" if isinstance(p, int) else "[...]" if i and path[i - 1] in MAPS else f".{p}"
    return out


@pytest.mark.parametrize(
    ("cls", "obj", "path", "value"),
    [
        (o.Node, NODE, ["metadata", "labels"], ["a", "b"]),
        (o.Node, NODE, ["metadata"], "gpu-1"),
        (o.Node, NODE, ["metadata", "name"], ["x"]),
        (o.Node, NODE, ["spec", "taints"], "nvidia.com/gpu:NoSchedule"),
        (o.Node, NODE, ["spec", "taints", 0], "x"),
        (o.Node, NODE, ["spec", "unschedulable"], "yes"),
        (o.Node, NODE, ["status", "conditions"], {"Ready": "True"}),
        (o.Node, NODE, ["metadata", "generation"], "abc"),
        (o.NodeGroup, GROUP, ["spec", "nodeSelector"], ["role=gpu"]),
        (o.NodeGroup, GROUP, ["spec", "nodeSelector", "role"], {"v": 1}),
        (o.NodeGroup, GROUP, ["spec", "tolerations", 0, "tolerationSeconds"], "abc"),
        (o.NodeGroup, GROUP, ["spec", "tolerations", 0, "tolerationSeconds"], 1.5),
        (o.NodeGroup, GROUP, ["spec", "tolerations"], {"key": "a"}),
        (o.KernelCacheNode, b.kcn("n", {}), ["status", "cacheStatus"], ["a"]),
        (o.KernelCacheNode, b.kcn("n", {"a/b": {}}), ["status", "cacheStatus", "a/b", "state"], ["Ready"]),
        (o.KernelCache, b.kernel_cache("kc"), ["spec", "artifact", "cachePaths"], "/x"),
        (o.KernelCache, b.kernel_cache("kc"), ["spec", "nodeGroupRef"], "gpu"),
        (o.KernelCache, b.kernel_cache("kc"), ["status", "conditions"], {"type": "Ready"}),
        (o.Capture, CAPTURE, ["status", "activeSession"], "s-1"),
        (o.Capture, CAPTURE, ["status", "runtimeResult", "state"], {"a": 1}),
        (o.Capture, CAPTURE, ["status", "signing", "signed"], "maybe"),
        (o.Capture, CAPTURE, ["status", "conditions", 0, "observedGeneration"], "one"),
        (o.Pod, b.pod("p"), ["status", "containerStatuses"], {"name": "c"}),
        (o.Pod, b.pod("p"), ["spec", "tolerations"], "all"),
        (o.DaemonSet, b.agent_daemonset(), ["spec", "template", "spec"], ["x"]),
        (o.DaemonSet, b.agent_daemonset(), ["spec", "template", "spec", "nodeSelector"], "a=b"),
        (o.DaemonSet, b.agent_daemonset(), ["spec", "template", "spec", "affinity"], [1]),
        (o.Event, CORE_EVENT, ["involvedObject"], ["x"]),
        (o.Event, NEW_EVENT, ["series"], 4),
        (o.Event, CORE_EVENT, ["count"], "many"),
        (o.ConfigMap, b.config_map({}), ["data", "kernelcache"], {"enabled": True}),
    ],
)
def test_wrong_types_raise_object_error_naming_the_path(cls, obj, path, value):
    """The message names the object and the JSON path of the bad field, and says what was expected."""
    with pytest.raises(ObjectError) as exc:
        cls.from_dict(mutate(obj, path, value))
    message = str(exc.value)
    name = obj["metadata"]["name"] if path[:2] != ["metadata", "name"] and path != ["metadata"] else None
    assert message.startswith(f"{cls.__name__} {name}: " if name else f"{cls.__name__}: "), message
    assert f"{json_path(path)}: expected " in message, message
    assert isinstance(exc.value, InputError)


def test_missing_name():
    with pytest.raises(ObjectError, match=r"Node: \$\.metadata\.name: required field missing"):
        o.Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {}})
    with pytest.raises(ObjectError, match=r"KernelCache: \$\.metadata: metadata.name is missing or empty"):
        o.KernelCache.from_dict({"kind": "KernelCache", "metadata": {"name": ""}})
