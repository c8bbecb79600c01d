"""KernelCacheNode entries that flap because the artifact is missing from `Node.status.images`.

KServe's node agent validates an entry against the node's status whenever the entry is new, is Ready or has no
Job (hourly, and on every change of the node's entries): the entry is `Ready` only while
`Node.status.images[].names` lists the artifact's exact `imageReference`, else it is `Pending` ("OCI artifact
is not present in Node.status.images"). That is also the first state of every new entry, before its
preparation Job exists (reference §2.2): it says the artifact was never pulled there, not that it went away.
Only an entry that had been prepared (it is Ready, or its preparation Job on the node is Complete) and whose
artifact is not listed says the artifact went away.

The kubelet lists at most `nodeStatusMaxImages` images (50 by default), largest first: on a node with many
large images (CUDA runtimes, model servers) a small kernel cache artifact is cut off the list even though it
is on the node, so its entry flips between Ready and Pending at every check and pods created while it is
Pending do not get the cache.

* a node listing `nodeStatusMaxImages` images or more without the artifact of a prepared entry (warning): a
  Ready entry flips at the next check; a Pending one whose Job completed flaps now. The finding names the
  node, how many images it lists, the smallest one listed and the artifacts cut off. Fix: raise the kubelet's
  `nodeStatusMaxImages` (`-1`: no limit) on the group's nodes.
* a Pending entry whose preparation Job completed, on a node listing fewer images (info): the artifact really
  is gone from the node (image garbage collection, or a node that was replaced); KServe prepares it again
  once the Job's TTL has deleted the completed Job.
* a new entry's first `Pending` (no Job yet, or one not finished) is not judged here (cache-status and
  registry-pull follow the preparation).
"""

from __future__ import annotations

from collections.abc import Iterator

from .. import objects as o
from ..kernelcache import constants as c
from ..kernelcache.preparation import JOB_COMPLETE, agent_job, preparation
from ..snapshot import plan as readplan
from ..snapshot.model import ClusterSnapshot
from ..suggest import Name, kubectl
from .cache_status import why_not_ready
from .common import facts, join_names, judged_each, node_ref, read_ok
from .model import CheckRead, Finding, NotApplicable, finding_of
from .registry import check

ID = "node-images"
finding = finding_of(ID)
PENDING_NOTE = "Pending entries whose preparation completed not told apart from new ones"


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
        "artifact-gone": ("info", "a prepared artifact no longer on its node (image GC or a replaced node)"),
    },
    reads=(
        CheckRead(readplan.KERNEL_CACHE_NODES),
        CheckRead(readplan.NODES),
        CheckRead(readplan.KERNEL_CACHES, optional=True, note=PENDING_NOTE),
        CheckRead(readplan.PREPARATION_JOBS, optional=True, note=PENDING_NOTE),
    ),
)
def run(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    if not any(k.entries for k in snapshot.kcns):
        raise NotApplicable("no KernelCacheNode has a cache entry")
    if not read_ok(snapshot, readplan.NODES):
        return
    jobs_ok = read_ok(snapshot, readplan.KERNEL_CACHES) and read_ok(snapshot, readplan.PREPARATION_JOBS)
    job_ns = facts(snapshot).config.job_namespace
    node_by_name = snapshot.node_by_name

    def judge(kcn: o.KernelCacheNode) -> list[Finding]:
        node = node_by_name.get(kcn.name)
        return [] if node is None else list(_judged(snapshot, kcn, node, jobs_ok, job_ns))

    # a KernelCacheNode's findings read it, its node, and the KernelCaches and Jobs: judged again when one changed
    yield from judged_each(
        snapshot,
        ID,
        snapshot.derived("kcns-by-name", lambda: sorted(snapshot.kcns, key=lambda k: k.name), on=("kcns",)),
        judge,
        on=("kernel_caches", "jobs"),
        context=(jobs_ok, job_ns),
        same=lambda kcn: (kcn, node_by_name.get(kcn.name)),
    )


def _judged(
    snapshot: ClusterSnapshot, kcn: o.KernelCacheNode, node: o.Node, jobs_ok: bool, job_ns: str
) -> Iterator[Finding]:
    cut, gone = [], []
    refs: set[o.NamespacedName] = set()
    for e in kcn.entries:
        if not e.image_reference or node.lists_image(e.image_reference):
            continue
        not_present = e.state == "Pending" and e.message == c.MSG_ARTIFACT_NOT_ON_NODE
        # a new entry starts Pending "not present" before its Job exists: only a prepared one went away
        prepared = e.state == c.ENTRY_READY or (not_present and jobs_ok and _prefetched(snapshot, e, node.name, job_ns))
        if not prepared:
            continue
        if node.image_count >= c.NODE_STATUS_MAX_IMAGES:
            cut.append(f"{e.ref} ({e.state})")
        elif not_present:
            gone.append(str(e.ref))
            refs.add(e.ref)
    if cut:
        yield finding(
            "warning",
            node_ref(node.name),
            f"Node {node.name} lists {node.image_count} images in status.images, the kubelet's limit "
            f"(nodeStatusMaxImages, {c.NODE_STATUS_MAX_IMAGES} by default, largest first; the smallest "
            f"listed is {_size(node.images.smallest_bytes)}): the kernel cache artifacts of "
            f"{join_names(cut, 5)} are not listed, so KServe's agent keeps resetting their entries to "
            "Pending and preparing them again, and pods created meanwhile get no cache. Raise "
            "nodeStatusMaxImages in the kubelet configuration of these nodes (-1: no limit)",
            hint=kubectl("get --raw /api/v1/nodes/{node}/proxy/configz", node=Name("node", node.name)),
            evidence=(f"status.images: {node.image_count} images", *(f"not listed: {x}" for x in cut)),
            code="images-truncated",
            cause=f"nodes listing {c.NODE_STATUS_MAX_IMAGES} images or more drop kernel cache artifacts",
            lister="kubectl get nodes -o custom-columns=NAME:.metadata.name,IMAGES:.status.images[*].sizeBytes",
        )
    if gone:
        yaml_cmd = kubectl("get kernelcachenode {kcn} -o yaml", kcn=Name("kernelcachenode", node.name))
        only = next(iter(refs)) if len(refs) == 1 else None
        hint = (why_not_ready(only.namespace, only.name) if only is not None else None) or yaml_cmd
        yield finding(
            "info",
            node_ref(node.name),
            f"Node {node.name} no longer has the artifact of {join_names(gone, 5)} (it lists "
            f"{node.image_count} images, below the kubelet's limit): removed by image garbage "
            "collection or a replaced node; KServe prepares it again once the completed preparation Job's TTL "
            "has deleted it",
            hint=hint,
            evidence=(f"entries: {yaml_cmd}",) if hint != yaml_cmd else (),
            code="artifact-gone",
        )


def _prefetched(snapshot: ClusterSnapshot, e: o.CacheEntry, node: str, job_ns: str) -> bool:
    """Whether the preparation Job the node's agent reads for the entry's KernelCache is Complete: the artifact
    was pulled there, so an entry back to Pending "not present" lost it."""
    kc = snapshot.kc_by_key.get(f"{e.ref.namespace}/{e.ref.name}")
    if kc is None:
        return False
    return preparation(agent_job(snapshot.jobs, kc, node, job_ns), (), ()).state == JOB_COMPLETE
