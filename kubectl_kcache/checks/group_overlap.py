"""Nodes matched by more than one KernelCacheNodeGroup.

Overlap is fine for KernelCacheNodes and for preparation, but when KServe turns a completed capture
into a KernelCache it picks the group from the producer pod's node: a node in several groups gives
`AmbiguousNodeGroup` (a Warning event on the capture, no KernelCache, no fallback to the default group)
unless the producer pod set `serving.kserve.io/kernelcache-nodegroup`. Warning per node; an error when
a complete capture without a KernelCache is blocked by it right now (decided by KServe's selection
function, so a capture that requested a group does not count).
"""

from __future__ import annotations

from collections.abc import Iterator

from ..kernelcache import constants as c
from ..kernelcache.membership import is_ambiguous
from ..snapshot import plan as readplan
from ..snapshot.model import ClusterSnapshot
from ..suggest import Name, Namespace, kubectl
from .common import facts, fmt_selector, node_ref, nodes_command, read_ok
from .model import CheckRead, Finding, NotApplicable, finding_of
from .registry import check

ID = "group-overlap"
finding = finding_of(ID)


@check(
    ID,
    "nodes matched by several node groups",
    "warning",
    order=50,
    needs_feature=True,
    codes={
        "blocks-captures": ("error", "a node in several groups whose captures are blocked now (AmbiguousNodeGroup)"),
        "several-groups": ("warning", "a node in several groups: captures from it need a requested group"),
    },
    reads=(
        CheckRead(readplan.NODE_GROUPS),
        CheckRead(readplan.NODES),
        CheckRead(readplan.CAPTURES, optional=True, note="captures blocked by the overlap not looked for"),
        CheckRead(readplan.KERNEL_CACHES, optional=True, note="the captures' KernelCaches not looked up"),
    ),
)
def run(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    if len(snapshot.node_groups) < 2:
        raise NotApplicable("fewer than two KernelCacheNodeGroups exist")
    f = facts(snapshot)
    blocked: dict[str, list[str]] = {}
    if read_ok(snapshot, readplan.CAPTURES):
        for cc in f.capture_caches.values():
            if cc.blocked and cc.decision is not None and cc.decision.reason == c.REASON_AMBIGUOUS:
                session = cc.capture.active_session
                assert session is not None  # an ambiguous decision starts from a recorded node
                blocked.setdefault(session.node_name, []).append(f"{cc.capture.namespace}/{cc.capture.name}")
    for name, groups in f.groups_of_node.items():  # the member nodes, in the nodes' order
        if not is_ambiguous(groups):
            continue
        names = ", ".join(g.name for g in groups)
        merged = {k: v for g in groups for k, v in g.node_selector.items()}
        message = (
            f"Node {name} matches several node groups: {names}. Captures from its pods get "
            f"{c.REASON_AMBIGUOUS} and no KernelCache unless the pod sets {c.ANNOTATION_NODE_GROUP}"
        )
        evidence = tuple(f"{g.name}: nodeSelector {fmt_selector(g.node_selector)}" for g in groups)
        captures = blocked.get(name)
        if captures:
            first_ns, _, first = captures[0].partition("/")
            yield finding(
                "error",
                node_ref(name),
                # one blocked capture is the one the next command names
                message + ("; 1 is blocked now" if len(captures) == 1 else f"; blocked now: {', '.join(captures)}"),
                hint=kubectl(
                    "kcache why-group --capture {capture} -n {ns}",
                    capture=Name("kernelcachecapture", first),
                    ns=Namespace(first_ns),
                ),
                evidence=evidence + tuple(f"blocked capture: {x}" for x in captures),
                code="blocks-captures",
            )
        else:
            lister = nodes_command(groups[0], merged)
            yield finding(
                "warning",
                node_ref(name),
                message,
                hint=lister,
                evidence=evidence,
                code="several-groups",
                cause=f"nodes in groups {names}",
                lister=lister,
            )
