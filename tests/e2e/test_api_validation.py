"""What the file loader calls an object Kubernetes would refuse is what the real API server refuses, in its
words: names, namespaces, label keys and values (apivalidation.py against kube-apiserver's 422 causes)."""

from __future__ import annotations

import json

import pytest

from kubectl_kcache.apivalidation import metadata_errors
from tests import builders as b

pytestmark = pytest.mark.e2e

CASES = [
    ("Node", "Bad_Node", None, {}),
    ("Node", "a" * 254, None, {}),
    ("Node", "gpu-1.", None, {}),
    ("Node", "gpu-1", None, {"pool": "x" * 64}),
    ("Node", "gpu-1", None, {"pool": "gpu\x1b[31m", "bad key!": "v", "a/b/c": "v", "/x": "v", "Ex.com/k": "v"}),
    ("Node", "gpu-1", None, {"pool": "tab\tand\u202e", "k" * 64: "v"}),
    ("Namespace", "Team_A", None, {}),
    ("Namespace", "a" * 64, None, {}),
    ("KernelCacheNode", "Bad.Name", None, {}),
    ("KernelCacheNodeGroup", "gpu", None, {"ok": "-starts-with-dash"}),
    ("ConfigMap", "inferenceservice-config", "Kserve", {}),
]


def manifest(kind: str, name: str, namespace: str | None, labels: dict[str, str]) -> dict:
    if kind == "Node":
        obj = b.node(name, labels)
        obj["metadata"]["labels"] = labels
    elif kind == "Namespace":
        obj = b.namespace(name)
    elif kind == "KernelCacheNode":
        obj = b.kcn(name)
    elif kind == "KernelCacheNodeGroup":
        obj = b.group(name, {"pool": "gpu"})
        obj["metadata"]["labels"] = labels
    else:
        obj = b.config_map({"enabled": True})
        obj["metadata"]["name"] = name
    if namespace:
        obj["metadata"]["namespace"] = namespace
    obj.pop("status", None)
    return obj


@pytest.mark.parametrize("kind, name, namespace, labels", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_the_loader_refuses_what_the_api_server_refuses_in_its_words(cluster, kind, name, namespace, labels):
    obj = manifest(kind, name, namespace, labels)
    proc = cluster.kubectl("create", "-f", "-", "-o", "name", "-v=9", input=json.dumps(obj), check=False)
    assert proc.returncode != 0
    body = next(line for line in proc.stderr.splitlines() if '"kind":"Status"' in line)
    status = json.loads(body[body.index("{") :])
    if namespace and status["reason"] == "NotFound":  # the namespace is checked by the path before the object
        assert metadata_errors(kind, name, namespace, labels)
        return
    server = sorted(f"{c['field']}: {c['message']}" for c in status["details"]["causes"])
    if kind == "Namespace":  # the server labels every namespace with its name before validating
        labels = {**labels, "kubernetes.io/metadata.name": name}
    ours = sorted(metadata_errors(kind, name, namespace, labels))
    assert ours == server
