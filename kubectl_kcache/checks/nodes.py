"""Member nodes (nodes in at least one KernelCacheNodeGroup) that cannot hold a prepared cache.

* NotReady (warning): KServe counts only Ready member nodes for a KernelCache and prepares only on them,
  and the node's agent drops all its cache entries (if every member is NotReady the cache is
  `Pending/NoReadyNodes`).
* Cordoned, `spec.unschedulable` (warning): preparation Jobs cannot be scheduled there while the agent
  (which tolerates `node.kubernetes.io/unschedulable`) still runs, so the node's entries stay Pulling and
  the KernelCache stays Preparing.
* Kubelet older than v1.31 (warning): KServe prepares a cache by mounting the artifact as an `image`
  volume (and consumer pods mount it the same way). Image volumes (KEP-4639, feature gate ImageVolume)
  arrived as alpha in Kubernetes v1.31, went beta (off by default) in v1.33 and are on by default from
  v1.35; a kubelet before v1.31 cannot mount them at all. For member nodes on v1.31 to v1.34 one info per
  group says the ImageVolume feature gate must be enabled on the API server and the kubelets.
"""

from __future__ import annotations

from collections.abc import Iterator

from .. import objects as o
from ..snapshot import plan as readplan
from ..snapshot.model import ClusterSnapshot
from ..suggest import Name, kubectl
from .common import facts, group_ref, join_names, minor_version, node_ref, nodes_command
from .model import CheckRead, Finding, NotApplicable, finding_of
from .registry import check

ID = "nodes"
finding = finding_of(ID)
# said once per report by the table, however many groups it hits
IMAGE_VOLUME_GATE = (
    "image volumes, which KServe uses to pull the cache artifact, need the ImageVolume feature "
    "gate enabled on kube-apiserver and the kubelets before v1.35"
)
MIN_IMAGE_VOLUME = (1, 31)  # alpha: the first kubelet that knows the image volume type
DEFAULT_IMAGE_VOLUME = (1, 35)  # beta and enabled by default


@check(
    ID,
    "member nodes Ready, schedulable, with image volume support",
    "warning",
    order=70,
    needs_feature=True,
    codes={
        "not-ready": ("warning", "a member node that is NotReady (or has no Ready condition)"),
        "cordoned": ("warning", "a member node that is cordoned"),
        "kubelet-too-old": ("warning", "a member node whose kubelet cannot mount image volumes (< v1.31)"),
        "image-volume-gated": ("info", "member nodes whose kubelet needs the ImageVolume gate (v1.31-v1.34)"),
    },
    reads=(CheckRead(readplan.NODE_GROUPS), CheckRead(readplan.NODES)),
)
def run(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    f = facts(snapshot)
    if not f.member_nodes:
        raise NotApplicable("no node is a member of a KernelCacheNodeGroup")
    groups_of_node = f.groups_of_node
    gated: dict[str, list[str]] = {}
    # a node's findings read the node and its first group: judged again when one of those changed
    judged = snapshot.judged(f"judged/{ID}", on=("node_groups",)).each(
        f.member_nodes, lambda node: _judged(node, groups_of_node[node.name][0])
    )
    for node, (found, in_gate) in zip(f.member_nodes, judged, strict=True):
        yield from found
        if in_gate:
            for g in groups_of_node[node.name]:
                gated.setdefault(g.name, []).append(node.name)
    for name, nodes in sorted(gated.items()):
        plural = "s" if len(nodes) > 1 else ""
        yield finding(
            "info",
            group_ref(name),
            f"{len(nodes)} member node{plural} of {name} {'run kubelets' if plural else 'runs a kubelet'} from "
            f"v1.31 to v1.34 ({join_names(nodes)}): {IMAGE_VOLUME_GATE}",
            shared=(IMAGE_VOLUME_GATE,),
            group=name,
            hint="kubectl get nodes -o custom-columns=NAME:.metadata.name,KUBELET:.status.nodeInfo.kubeletVersion",
            code="image-volume-gated",
        )


def _judged(node: o.Node, first: o.NodeGroup) -> tuple[tuple[Finding, ...], bool]:
    """A member node's findings (`first`: its first group), and whether its kubelet needs the ImageVolume gate."""
    version = minor_version(node.kubelet_version)
    gated = version is not None and MIN_IMAGE_VOLUME <= version < DEFAULT_IMAGE_VOLUME
    return tuple(_findings(node, first, version)), gated


def _findings(node: o.Node, first: o.NodeGroup, version: tuple[int, int] | None) -> Iterator[Finding]:
    group = first.name
    ref = node_ref(node.name)
    if node.ready is not True:
        state = "has no Ready condition" if node.ready is None else "is NotReady"
        detail = ": ".join(x for x in (node.ready_reason, node.ready_message) if x)
        yield finding(
            "warning",
            ref,
            f"Node {node.name} {state}{f' ({detail})' if detail else ''}: KServe excludes it from "
            "preparation and from its KernelCaches' node count, and its agent drops all cache entries",
            group=group,
            hint=kubectl("describe node {node}", node=Name("node", node.name)),
            evidence=(f"Ready: {'absent' if node.ready is None else 'False'}{f' ({detail})' if detail else ''}",),
            code="not-ready",
            cause=f"member nodes {'with no Ready condition' if node.ready is None else 'NotReady'}"
            + (f" ({detail})" if detail else ""),
            lister=nodes_command(first, columns="ready"),
        )
    if node.unschedulable:
        yield finding(
            "warning",
            ref,
            f"Node {node.name} is cordoned: preparation Jobs cannot be scheduled there (spec.unschedulable) "
            "while the agent still runs, so its cache entries stay Pulling",
            group=group,
            hint=kubectl("uncordon {node}", node=Name("node", node.name)),
            code="cordoned",
            cause="member nodes cordoned",
            lister=nodes_command(first, columns="cordoned"),
        )
    if version is not None and version < MIN_IMAGE_VOLUME:
        yield finding(
            "warning",
            ref,
            f"Node {node.name} runs kubelet {node.kubelet_version}, older than v1.31: it cannot mount "
            "image volumes, which KServe uses to pull the cache artifact, so preparation fails there",
            group=group,
            hint=kubectl(
                "get node {node} -o jsonpath={{.status.nodeInfo.kubeletVersion}}", node=Name("node", node.name)
            ),
            evidence=(f"kubeletVersion: {node.kubelet_version}",),
            code="kubelet-too-old",
            cause="member nodes with a kubelet older than v1.31",
            lister=nodes_command(first, columns="kubelet"),
        )
