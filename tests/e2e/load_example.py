"""A bundled example snapshot loaded into the test bed as a running cluster: its nodes become KWOK nodes (Ready,
their pods reported Running), its controllers run (the agent DaemonSet's pods are made by the DaemonSet
controller, as in a real cluster), its serving pods are created on their nodes, and the Kernel Cache objects get
the statuses the example records. Finished preparation Jobs and their pods are left out (KServe's Jobs are done;
the Job controller would run them again). The webhook configurations come last: their webhook server does not
run here, and a `Fail` policy would refuse the serving pods.

`unload` deletes what the reset of the test bed does not (the example's own namespaces and the validating
webhook configuration)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from .cluster import OWNED_LABEL, TEST_NAMESPACES

KWOK = {"kwok.x-k8s.io/node": "fake"}
SKIPPED_KINDS = {"CustomResourceDefinition", "Job"}
STATUS_KINDS = {"KernelCacheNode", "KernelCache", "KernelCacheCapture"}
WEBHOOKS = {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}
BUILTIN_NAMESPACES = {"default", "kube-system", "kube-public", "kube-node-lease"}


def _clean(obj: dict[str, Any]) -> dict[str, Any]:
    """The object as one would create it: no server-set metadata, no status, no owner (the garbage collector
    deletes an object whose owner's uid does not exist)."""
    out = copy.deepcopy(obj)
    meta = out["metadata"]
    for key in (
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "managedFields",
        "generation",
        "ownerReferences",
        "finalizers",
    ):
        meta.pop(key, None)
    out.pop("status", None)
    return out


def _plural(kind: str) -> str:
    return {
        "KernelCacheNode": "kernelcachenode",
        "KernelCache": "kernelcache",
        "KernelCacheCapture": "kernelcachecapture",
    }[kind]


def example_items(path: Path) -> list[dict[str, Any]]:
    return yaml.safe_load(path.read_text())["items"]


def example_namespaces(items: list[dict[str, Any]]) -> list[str]:
    names = {i["metadata"]["name"] for i in items if i["kind"] == "Namespace"}
    return sorted(names - BUILTIN_NAMESPACES - set(TEST_NAMESPACES))


def load(cluster: Any, path: Path) -> list[dict[str, Any]]:
    """Create the example in the test bed and wait until its agent pods and serving pods run; returns its
    items."""
    items = example_items(path)
    owned_pods = {"DaemonSet", "Job", "ReplicaSet"}
    serving, later, rest = [], [], []
    for item in items:
        kind = item["kind"]
        if kind in SKIPPED_KINDS:
            continue
        if kind == "Pod":
            owners = {o["kind"] for o in item["metadata"].get("ownerReferences", [])}
            if item["metadata"].get("namespace") in ("kserve", "kserve-kernelcache-jobs") and owners & owned_pods:
                continue  # made by their controllers here
            serving.append(_clean(item))
        elif kind in WEBHOOKS:
            hook = _clean(item)
            hook["metadata"].setdefault("labels", {})[OWNED_LABEL] = "true"
            later.append(hook)
        else:
            rest.append(item)

    cluster.apply([_clean(i) for i in rest if i["kind"] == "Namespace"])
    for ns in example_namespaces(items):
        cluster.wait_for(f"the default ServiceAccount of {ns}", lambda ns=ns: cluster.get("sa", "default", ns, False))
    nodes = []
    for item in rest:
        if item["kind"] == "Node":
            node = _clean(item)
            node["metadata"].setdefault("annotations", {}).update(KWOK)
            nodes.append(node)
    cluster.create(nodes)
    objects = []
    for item in rest:
        if item["kind"] in ("Node", "Namespace"):
            continue
        obj = _clean(item)
        if item["kind"] == "EndpointSlice":  # not the endpointslice controller's: it would delete it (no Service)
            obj["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"] = "kcache.test"
        objects.append(obj)
    objects += _service_accounts(items, {(i["metadata"].get("namespace"), i["metadata"]["name"]) for i in rest})
    cluster.create(objects)
    for item in rest:
        if item["kind"] in STATUS_KINDS and item.get("status"):
            meta = item["metadata"]
            cluster.set_status(_plural(item["kind"]), meta["name"], item["status"], meta.get("namespace"))
    cluster.create(serving)
    cluster.create(later)

    agents = sum(1 for i in items if i["kind"] == "Pod" and i["metadata"]["name"].startswith("kserve-kernelcachenode"))
    cluster.wait_for(f"{agents} Ready agent pods", lambda: _ready_pods(cluster, "kserve") >= agents, timeout=120)
    for ns in example_namespaces(items):
        want = sum(1 for p in serving if p["metadata"]["namespace"] == ns)
        cluster.wait_for(f"{want} Ready pods in {ns}", lambda ns=ns, want=want: _ready_pods(cluster, ns) >= want)
    return items


def _service_accounts(items: list[dict[str, Any]], have: set[tuple[str | None, str]]) -> list[dict[str, Any]]:
    """The ServiceAccounts the example's workloads run as and does not hold itself (pods are refused without)."""
    wanted = set()
    for item in items:
        if item["kind"] in ("DaemonSet", "Deployment"):
            spec = item["spec"]["template"]["spec"]
            name = spec.get("serviceAccountName")
            if name and name != "default":
                wanted.add((item["metadata"]["namespace"], name))
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": ns}}
        for ns, name in sorted(wanted - have)
    ]


def _ready_pods(cluster: Any, namespace: str) -> int:
    pods = cluster.get("pods", namespace=namespace)["items"]
    return sum(
        1
        for p in pods
        if p.get("status", {}).get("phase") == "Running"
        and any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", []))
    )


def unload(cluster: Any, items: list[dict[str, Any]]) -> None:
    """Delete what the test bed's reset leaves: the example's own namespaces (and so their pods and caches) and
    its webhook configurations."""
    for ns in example_namespaces(items):
        cluster.kubectl("delete", "namespace", ns, "--ignore-not-found", "--wait=false")
    cluster.kubectl(
        "delete", "validatingwebhookconfigurations,mutatingwebhookconfigurations", "-l", OWNED_LABEL, "--wait=false"
    )
    for ns in example_namespaces(items):
        cluster.wait_for(f"namespace {ns} gone", lambda ns=ns: cluster.get("namespace", ns, check=False) is None, 120)
