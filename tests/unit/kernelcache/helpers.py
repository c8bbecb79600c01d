"""Small constructors shared by the kernelcache tests: parsed objects from tests.builders dicts."""

from __future__ import annotations

from typing import Any

from kubectl_kcache import objects as o
from tests import builders as b


def node(name: str, labels: dict[str, str] | None = None, **kw: Any) -> o.Node:
    return o.Node.from_dict(b.node(name, labels, **kw))


def bare_node(name: str, labels: dict[str, str]) -> o.Node:
    """A node with exactly these labels (builders.node adds kubernetes.io/hostname)."""
    return o.Node.from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}})


def group(name: str, selector: dict[str, str], tolerations: list[dict[str, Any]] | None = None) -> o.NodeGroup:
    return o.NodeGroup.from_dict(b.group(name, selector, tolerations))


def kcn(name: str) -> o.KernelCacheNode:
    return o.KernelCacheNode.from_dict(b.kcn(name))


def tol(**kw: Any) -> o.Toleration:
    return o.Toleration(**kw)


def daemonset(**kw: Any) -> o.DaemonSet:
    return o.DaemonSet.from_dict(b.agent_daemonset(**kw))
