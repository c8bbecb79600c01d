"""Clusters in the preparation states of KServe's chain (reference §2.2, §2.4, §5.2), made with the test bed's
real control plane: the Job controller, the scheduler, PodSecurity admission and KWOK do what they do for
real; only what KServe's own components would write (the agent's KernelCacheNode entry, the KernelCache's
status) and what no simulator here can do (a kubelet reporting a failed container) are written by hand,
through the status subresource.

Each scenario has one Ready member node (`gpu-1`) of group `gpu`, its KernelCacheNode, the agent DaemonSet
(its pod Running there), KServe's controller Deployment, the inferenceservice-config ConfigMap (feature on,
registry auth and artifact verification left at their defaults), KServe's prefetcher ServiceAccount and one
KernelCache in `team-a`. The preparation Job is built as KServe's `cache_prefetch.go` builds it; the name is
computed here from §5.2, independently of the plugin's code.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from tests import builders as b

from .cluster import FAIL_LABEL, OWNED_LABEL

NS = "team-a"
JOB_NS = "kserve-kernelcache-jobs"
GROUP = "gpu"
NODE = "gpu-1"
SELECTOR = {"pool": "gpu"}
CONFIG = {"enabled": True, "defaultNodeGroup": GROUP}
PREFETCH_IMAGE = "registry.access.redhat.com/ubi9/ubi-minimal:latest"  # the prefetchImage default
PREFETCHER_SA = "kernel-cache-prefetcher-sa"
PREFETCHER_RB = "kernel-cache-prefetcher-rb"
PREFETCHER_LABEL = "internal.serving.kserve.io/kernelcache-prefetcher"
PSA_ENFORCE = "pod-security.kubernetes.io/enforce"
LABEL_NAME = "serving.kserve.io/kernel-cache-name"
LABEL_NAMESPACE = "serving.kserve.io/kernel-cache-namespace"
LABEL_NODE = "serving.kserve.io/kernel-cache-node"
AGENT_LABEL = ("control-plane", "kserve-kernelcachenode-agent")

# the agent's entry messages (§2.2)
WAITING_TO_START = "waiting for the OCI prefetch Job to start"
PREFETCHING = "OCI artifact is being prefetched"
PREFETCHED = "OCI artifact was prefetched on the node"
NOT_PRESENT = "OCI artifact is not present in Node.status.images"
# what the verifier records with artifactSecurity left unset (§7.2)
VERIFICATION_SKIPPED = {
    "mode": "none",
    "state": "Skipped",
    "verified": False,
    "reason": "VerificationNotConfigured",
    "message": "artifact verification is not configured",
}
# the failed first preparation pod of the Complete scenario, as a kubelet reports `test -d` exiting 1
FAILED_CONTAINER = {"exitCode": 1, "reason": "Error", "message": "/mnt/kernel-cache: not a directory"}


@dataclass
class Scenario:
    """A cluster in one state: the KernelCache to explain, its node and preparation Job, and what the real
    control plane produced (kept for the assertions and for reports)."""

    kernel_cache: str
    node: str
    job: str
    image: str  # the artifact: the Job's image volume reference
    job_object: dict[str, Any] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    pods: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


# ---- KServe's objects ---------------------------------------------------------------------------------------


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _name_part(value: str, limit: int) -> str:
    part = value.lower().replace(".", "-").encode()[:limit].decode("utf-8", "ignore").strip("-.")
    return part or "unknown"


def job_name(kc_ns: str, kc_name: str, image_reference: str, node: str) -> str:
    """§5.2: kc-<part(kc,24)>-<part(node,18)>-<16 hex of sha256("<ns>/<kc>/<imageRef>/<node>")>."""
    digest = hashlib.sha256(f"{kc_ns}/{kc_name}/{image_reference}/{node}".encode()).hexdigest()[:16]
    return f"kc-{_name_part(kc_name, 24)}-{_name_part(node, 18)}-{digest}"


def kernel_cache(name: str, seed: str | None = None) -> dict[str, Any]:
    """A KernelCache in NS of group GROUP: artifact imageReference, cachePaths and identity footprints."""
    return b.kernel_cache(name, NS, group_name=GROUP, seed=seed or name)


def prefetch_job(
    kc: dict[str, Any], node: str = NODE, *, suspend: bool = False, pod_labels: dict[str, str] | None = None
) -> dict[str, Any]:
    """The preparation Job as KServe builds it (§5.2) for `kc` on `node` (its labels' values are short and
    valid, so none is hashed). `pod_labels` adds labels to the pod template only (the test bed's KWOK stages)."""
    kc_ns, kc_name = kc["metadata"]["namespace"], kc["metadata"]["name"]
    image = kc["spec"]["artifact"]["imageReference"]
    labels = {LABEL_NAME: kc_name, LABEL_NAMESPACE: kc_ns, LABEL_NODE: node}
    annotations = {
        "internal.serving.kserve.io/kernel-cache-name": kc_name,
        "internal.serving.kserve.io/kernel-cache-namespace": kc_ns,
        "internal.serving.kserve.io/kernel-cache-node": node,
    }
    spec: dict[str, Any] = {
        "ttlSecondsAfterFinished": 600,  # jobTTLSecondsAfterFinished's default
        "template": {
            "metadata": {"labels": {**labels, **(pod_labels or {})}, "annotations": dict(annotations)},
            "spec": {
                "restartPolicy": "Never",
                "serviceAccountName": PREFETCHER_SA,
                "automountServiceAccountToken": False,
                "nodeSelector": {"kubernetes.io/hostname": node},
                "containers": [
                    {
                        "name": "kernel-cache-prefetch",
                        "image": PREFETCH_IMAGE,
                        "imagePullPolicy": "IfNotPresent",
                        "command": ["/bin/sh", "-c", "test -d /mnt/kernel-cache"],
                        "volumeMounts": [{"name": "kernel-cache", "mountPath": "/mnt/kernel-cache", "readOnly": True}],
                    }
                ],
                "volumes": [{"name": "kernel-cache", "image": {"reference": image, "pullPolicy": "IfNotPresent"}}],
            },
        },
    }
    if suspend:
        spec["suspend"] = True
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": job_name(kc_ns, kc_name, image, node),
            "namespace": JOB_NS,
            "labels": labels,
            "annotations": annotations,
        },
        "spec": spec,
    }


def prefetcher_service_account() -> dict[str, Any]:
    """kernel-cache-prefetcher-sa as KServe ensures it for every auth type (managed label, no automount)."""
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": PREFETCHER_SA, "namespace": JOB_NS, "labels": {PREFETCHER_LABEL: "true"}},
        "automountServiceAccountToken": False,
    }


def prefetcher_role_binding(ns: str = NS, role: str = "kcache-test-registry-pull") -> list[dict[str, Any]]:
    """KServe's managed kernel-cache-prefetcher-rb in `ns` (subject: the prefetcher ServiceAccount of the job
    namespace) and the pull ClusterRole it binds (labelled for the test bed's reset)."""
    return [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": role, "labels": {OWNED_LABEL: "true"}},
            "rules": [{"apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["create"]}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": PREFETCHER_RB, "namespace": ns, "labels": {PREFETCHER_LABEL: "true"}},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": PREFETCHER_SA, "namespace": JOB_NS}],
        },
    ]


def cache_status(state: str, generation: int, at: str, nodes_ready: int = 0) -> dict[str, Any]:
    """status of a KernelCache of one Ready member as KServe's aggregate writes it (§7.2)."""
    reason, message = {
        "Preparing": ("Preparing", "cache preparation is in progress"),
        "Ready": ("CacheReady", "cache is ready on all selected nodes"),
    }[state]
    return {
        "state": state,
        "mountType": "oci",
        "verification": VERIFICATION_SKIPPED,
        "usage": {"totalPodsUsing": 0},
        "counts": {"nodeCount": 1, "nodesReady": nodes_ready, "nodesPreparing": 1 - nodes_ready, "nodesError": 0},
        "conditions": [
            {
                "type": "Ready",
                "status": "True" if state == "Ready" else "False",
                "observedGeneration": generation,
                "reason": reason,
                "message": message,
                "lastTransitionTime": at,
            }
        ],
    }


def write_entry(cluster, kc: dict[str, Any], state: str, message: str, node: str = NODE) -> dict[str, Any]:
    """The agent's status pass on `node`: the entry "<ns>/<name>" of `kc` (same artifact and footprints) and
    the counts; returns the entry."""
    entry = b.cache_entry(kc, state=state, last_update=now(), message=message)
    ready = state == "Ready"
    counts = {
        "cachesReady": int(ready),
        "cachesPreparing": int(state not in ("Ready", "Error")),
        "cachesError": int(state == "Error"),
        "totalPodsUsing": 0,
    }
    key = f"{kc['metadata']['namespace']}/{kc['metadata']['name']}"
    cluster.set_status("kernelcachenode", node, {"cacheStatus": {key: entry}, "counts": counts})
    return entry


def _image(kc: dict[str, Any]) -> str:
    return kc["spec"]["artifact"]["imageReference"]


def write_cache_status(cluster, kc: dict[str, Any], state: str) -> None:
    name = kc["metadata"]["name"]
    generation = cluster.get("kernelcache", name, NS)["metadata"]["generation"]
    status = cache_status(state, generation, now(), nodes_ready=int(state == "Ready"))
    cluster.set_status("kernelcache", name, status, NS)


# ---- the cluster around a scenario --------------------------------------------------------------------------


def install(cluster, kc: dict[str, Any], *, extra: tuple[dict[str, Any], ...] = ()) -> None:
    """KServe installed around `kc`: ConfigMap, group, member node (run by KWOK), its KernelCacheNode, the agent
    DaemonSet and the controller Deployment, the prefetcher ServiceAccount, the KernelCache; waits until the
    node is Ready and the agent pod Running on it."""
    cluster.apply(
        [
            b.config_map(CONFIG),
            b.group(GROUP, SELECTOR),
            b.node(NODE, SELECTOR, ready=None, simulated=True),
            b.kcn(NODE),
            b.agent_daemonset(terms=[b.term(SELECTOR)]),
            b.controller_deployment(ready=None),
            prefetcher_service_account(),
            kc,
            *extra,
        ]
    )
    wait_node_running(cluster)


def wait_node_running(cluster, node: str = NODE) -> None:
    cluster.wait_for(f"node {node} Ready", lambda: _ready(cluster.get("node", node)), timeout=60)
    cluster.wait_for(f"the agent pod Running on {node}", lambda: agent_pod(cluster, node), timeout=90)


def _ready(obj: dict[str, Any] | None) -> bool:
    conditions = (obj or {}).get("status", {}).get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def agent_pod(cluster, node: str = NODE) -> dict[str, Any] | None:
    pods = cluster.get("pods", namespace="kserve")["items"]
    for p in pods:
        if (
            p["metadata"].get("labels", {}).get(AGENT_LABEL[0]) == AGENT_LABEL[1]
            and p["spec"].get("nodeName") == node
            and p["status"].get("phase") == "Running"
        ):
            return p
    return None


def job(cluster, name: str) -> dict[str, Any]:
    return cluster.get("job", name, JOB_NS)


def job_pods(cluster, name: str) -> list[dict[str, Any]]:
    out = cluster.kubectl("get", "pods", "-n", JOB_NS, "-l", f"batch.kubernetes.io/job-name={name}", "-o", "json")
    return sorted(json.loads(out.stdout)["items"], key=lambda p: p["metadata"]["creationTimestamp"])


def job_events(cluster, name: str, reason: str | None = None) -> list[dict[str, Any]]:
    selector = f"involvedObject.kind=Job,involvedObject.name={name}" + (f",reason={reason}" if reason else "")
    out = cluster.kubectl("get", "events", "-n", JOB_NS, "--field-selector", selector, "-o", "json")
    return json.loads(out.stdout)["items"]


def condition(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in obj.get("status", {}).get("conditions") or [] if c["type"] == kind), None)


# ---- the scenarios ------------------------------------------------------------------------------------------


def failed_create(cluster) -> Scenario:
    """PodSecurity refuses the preparation pod: the job namespace enforces `restricted` and KServe's pod spec
    sets no securityContext, so the Job controller's every pod creation is forbidden and recorded as a
    FailedCreate Warning on the Job; no pod ever exists. The Job controller still sets `startTime` (it does so
    on its first sync of an unsuspended Job, whether or not a pod is made), so the agent writes the entry
    `Pulling` "OCI artifact is being prefetched", for good. Undo with `restore_job_namespace`."""
    kc = kernel_cache("model-psa")
    install(cluster, kc)
    cluster.kubectl("label", "namespace", JOB_NS, f"{PSA_ENFORCE}=restricted", "--overwrite")
    obj = prefetch_job(kc)
    cluster.apply(obj)
    name = obj["metadata"]["name"]
    events = cluster.wait_for(
        "the Job controller's FailedCreate events", lambda: job_events(cluster, name, "FailedCreate"), timeout=60
    )
    cluster.wait_for("the Job's startTime", lambda: job(cluster, name)["status"].get("startTime"))
    assert job_pods(cluster, name) == [], "PodSecurity let a preparation pod in"
    write_entry(cluster, kc, "Pulling", PREFETCHING)
    write_cache_status(cluster, kc, "Preparing")
    return Scenario("model-psa", NODE, name, _image(kc), job(cluster, name), events)


def restore_job_namespace(cluster) -> None:
    """The test bed's reset keeps namespace labels: take the PodSecurity level off the job namespace."""
    cluster.kubectl("label", "namespace", JOB_NS, f"{PSA_ENFORCE}-", check=False)


def suspended(cluster) -> Scenario:
    """A Job created suspended (as a queueing admission such as Kueue leaves it): the Job controller marks it
    Suspended and never starts it (no startTime, no pod); the entry stays `Pulling` "waiting for the OCI
    prefetch Job to start"."""
    kc = kernel_cache("model-queued")
    install(cluster, kc)
    obj = prefetch_job(kc, suspend=True)
    cluster.apply(obj)
    name = obj["metadata"]["name"]

    def marked() -> dict[str, Any] | None:
        current = job(cluster, name)
        cond = condition(current, "Suspended")
        return current if cond and cond["status"] == "True" else None

    current = cluster.wait_for("the Job controller's Suspended condition", marked)
    assert not current["status"].get("startTime") and job_pods(cluster, name) == []
    write_entry(cluster, kc, "Pulling", WAITING_TO_START)
    write_cache_status(cluster, kc, "Preparing")
    return Scenario("model-queued", NODE, name, _image(kc), current, job_events(cluster, name))


def complete_after_failed_pod(cluster) -> Scenario:
    """A Job Complete after its first pod failed. KWOK completes every Job pod it runs and never fails one, so
    the pod template carries the test bed's `kcache.test/fail: ErrImagePull` label (KWOK then leaves the pod
    Pending, not running it); this plays the kubelet for the first pod and reports it Failed (its container
    exited 1) through the status subresource; the Job controller counts the failure and, after its backoff,
    makes a replacement, whose label this removes so that KWOK runs it to Succeeded; the Job controller sets
    Complete itself. The agent reads no pods of a Complete Job: the entry is `Ready` "OCI artifact was
    prefetched on the node"."""
    kc = kernel_cache("model-retried")
    install(cluster, kc)
    obj = prefetch_job(kc, pod_labels={FAIL_LABEL: "ErrImagePull"})
    cluster.apply(obj)
    name = obj["metadata"]["name"]
    first = cluster.wait_for(
        "the first preparation pod waiting on its pull",
        lambda: next((p for p in job_pods(cluster, name) if p["status"].get("containerStatuses")), None),
    )
    at = now()
    ctr = first["spec"]["containers"][0]
    cluster.set_status(
        "pod",
        first["metadata"]["name"],
        {
            "phase": "Failed",
            "conditions": [
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": at},
                {"type": "Initialized", "status": "True", "lastTransitionTime": at},
                {"type": "Ready", "status": "False", "reason": "PodFailed", "lastTransitionTime": at},
                {"type": "ContainersReady", "status": "False", "reason": "PodFailed", "lastTransitionTime": at},
            ],
            "containerStatuses": [
                {
                    "name": ctr["name"],
                    "image": ctr["image"],
                    "imageID": "",
                    "ready": False,
                    "restartCount": 0,
                    "started": False,
                    "state": {"terminated": {**FAILED_CONTAINER, "startedAt": at, "finishedAt": at}},
                }
            ],
        },
        JOB_NS,
    )
    cluster.wait_for("the Job controller to count the failed pod", lambda: job(cluster, name)["status"].get("failed"))
    # the replacement comes after the Job controller's pod failure backoff (10 s after the first failure)
    second = cluster.wait_for(
        "the replacement pod",
        lambda: next((p for p in job_pods(cluster, name) if p["metadata"]["name"] != first["metadata"]["name"]), None),
        timeout=90,
    )
    cluster.kubectl("label", "pod", second["metadata"]["name"], "-n", JOB_NS, f"{FAIL_LABEL}-")

    def complete() -> dict[str, Any] | None:
        current = job(cluster, name)
        cond = condition(current, "Complete")
        return current if cond and cond["status"] == "True" else None

    current = cluster.wait_for("the Job controller's Complete condition", complete, timeout=60)
    pods = job_pods(cluster, name)
    assert [p["status"].get("phase") for p in pods] == ["Failed", "Succeeded"], [p["status"] for p in pods]
    write_entry(cluster, kc, "Ready", PREFETCHED)
    write_cache_status(cluster, kc, "Ready")
    return Scenario("model-retried", NODE, name, _image(kc), current, job_events(cluster, name), pods)


def orphan_requeue(cluster) -> Scenario:
    """A preparation Job left by a deleted KernelCache (Jobs have no owner) whose pod waits in ImagePullBackOff
    (the test bed's KWOK stage for pods labelled kcache.test/fail), so it never terminates; with KServe's
    managed kernel-cache-prefetcher-rb in the namespace, every KernelCache pass of the namespace requeues
    before it makes Jobs or writes status, for good. The KernelCache explained (`model-live`) therefore has no Job
    and no status; the agent's image check left its new entry `Pending` "OCI artifact is not present in
    Node.status.images"."""
    gone = kernel_cache("model-gone")
    live = kernel_cache("model-live")
    install(cluster, live, extra=tuple(prefetcher_role_binding()))
    obj = prefetch_job(gone, pod_labels={FAIL_LABEL: "ImagePullBackOff"})
    cluster.apply(obj)
    name = obj["metadata"]["name"]
    assert cluster.get("kernelcache", "model-gone", NS, check=False) is None

    def backing_off() -> list[dict[str, Any]]:
        pods = job_pods(cluster, name)
        waiting = [
            ((p["status"].get("containerStatuses") or [{}])[0].get("state") or {}).get("waiting", {}).get("reason")
            for p in pods
        ]
        return pods if waiting == ["ImagePullBackOff"] else []

    pods = cluster.wait_for("the orphan's pod in ImagePullBackOff", backing_off)
    current = cluster.wait_for("the orphan Job active", lambda: _active(job(cluster, name)))
    write_entry(cluster, live, "Pending", NOT_PRESENT)
    return Scenario(
        "model-live", NODE, name, _image(gone), current, job_events(cluster, name), pods, {"gone": "model-gone"}
    )


def _active(obj: dict[str, Any]) -> dict[str, Any] | None:
    """The Job once the Job controller counts its pod active, with no terminal condition."""
    status = obj.get("status", {})
    terminal = [c for c in status.get("conditions") or [] if c["type"] in ("Complete", "Failed")]
    return obj if status.get("active") == 1 and not terminal else None
