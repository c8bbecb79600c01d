"""KernelCacheNode entries that flap because the artifact is missing from `Node.status.images`.

KServe's node agent validates a prepared entry against the node's status: the entry is `Ready` only while
`Node.status.images[].names` lists the artifact's exact `imageReference`, else it goes back to `Pending`
("OCI artifact is not present in Node.status.images") and the artifact is prepared again. The kubelet
lists at most `nodeStatusMaxImages` images (50 by default), largest first: on a node with many large
images (CUDA runtimes, model servers) a small kernel cache artifact is cut off the list even though it is
on the node, so its entry flips between Ready and Pending at every check (hourly, and on every preparation)
and pods created while it is Pending do not get the cache.

* a node listing `nodeStatusMaxImages` images or more without the artifact of one of its entries (warning):
  a Pending entry with the agent's "not present" message flaps now; a Ready one flips at the next check.
  The finding names the node, how many images it lists, the smallest one listed and the artifacts cut off.
  Fix: raise the kubelet's `nodeStatusMaxImages` (`-1`: no limit) on the group's nodes.
* a Pending entry with that message on a node listing fewer images (info): the artifact really is gone
  from the node (image garbage collection, or a node that was replaced); the agent prepares it again.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..kernelcache import constants as c
from ..snapshot import plan as readplan
from ..snapshot.model import ClusterSnapshot
from ..text import command
from .common import join_names, node_ref, read_ok
from .model import CheckRead, Finding, NotApplicable
from .registry import check

ID = "node-images"


def _size(n: int | None) -> str:
    if n is None:
        return "unknown"
    for unit, div in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= div:
            return f"{n / div:.1f} {unit}"
    return f"{n} B"


@check(
    ID,
    "prepared artifacts stay listed in Node.status.images",
    "warning",
    order=127,
    needs_feature=True,
    codes={
        "images-truncated": ("warning", "a node at the kubelet's nodeStatusMaxImages limit: entries flap to Pending"),
        "artifact-gone": ("info", "an artifact no longer on its node (image GC or a replaced node)"),
    },
    reads=(
        CheckRead(readplan.KERNEL_CACHE_NODES),
        CheckRead(readplan.NODES),
    ),
)
def run(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    if not any(k.entries for k in snapshot.kcns):
        raise NotApplicable("no KernelCacheNode has a cache entry")
    if not read_ok(snapshot, readplan.NODES):
        return
    for kcn in sorted(snapshot.kcns, key=lambda k: k.name):
        node = snapshot.node_by_name.get(kcn.name)
        if node is None:
            continue
        cut, gone = [], []
        for e in kcn.entries:
            if not e.image_reference or node.lists_image(e.image_reference):
                continue
            flapping = e.state == "Pending" and e.message == c.MSG_ARTIFACT_NOT_ON_NODE
            if node.image_count >= c.NODE_STATUS_MAX_IMAGES and (flapping or e.state == c.ENTRY_READY):
                cut.append(f"{e.ref} ({e.state})")
            elif flapping:
                gone.append(str(e.ref))
        if cut:
            yield Finding(
                ID,
                "warning",
                node_ref(node.name),
                f"Node {node.name} lists {node.image_count} images in status.images, the kubelet's limit "
                f"(nodeStatusMaxImages, {c.NODE_STATUS_MAX_IMAGES} by default, largest first; the smallest "
                f"listed is {_size(node.images.smallest_bytes)}): the kernel cache artifacts of "
                f"{join_names(cut, 5)} are not listed, so KServe's agent keeps resetting their entries to "
                "Pending and preparing them again, and pods created meanwhile get no cache. Raise "
                "nodeStatusMaxImages in the kubelet configuration of these nodes (-1: no limit)",
                hint=command("kubectl", "get", "--raw", f"/api/v1/nodes/{node.name}/proxy/configz"),
                evidence=(f"status.images: {node.image_count} images", *(f"not listed: {x}" for x in cut)),
                code="images-truncated",
                cause=f"nodes listing {c.NODE_STATUS_MAX_IMAGES} images or more drop kernel cache artifacts",
                lister="kubectl get nodes -o custom-columns=NAME:.metadata.name,IMAGES:.status.images[*].sizeBytes",
            )
        if gone:
            yield Finding(
                ID,
                "info",
                node_ref(node.name),
                f"Node {node.name} no longer has the artifact of {join_names(gone, 5)} (it lists "
                f"{node.image_count} images, below the kubelet's limit): removed by image garbage "
                "collection or a replaced node; KServe's agent prepares it again",
                hint=command("kubectl", "get", "kernelcachenode", node.name, "-o", "yaml"),
                code="artifact-gone",
            )
