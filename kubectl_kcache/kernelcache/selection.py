"""Node-group selection for a completed capture (captureNodeGroup), with every step that led to it.

Order: the requested group recorded in the session (no fallback when missing); a pending producer node
(no fallback); the groups matching the producer's node (one: auto; several: ambiguous, no fallback;
none or node gone: default); the default group.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import msgspec

from ..objects import ActiveSession, Node, NodeGroup, Pod
from . import constants as c
from .gostrings import trim_space
from .selectors import label_mismatch, matching_groups, selector_matches

if TYPE_CHECKING:
    from .membership import Membership


class Step(msgspec.Struct, frozen=True):
    step: str  # session | annotation | node | match | default
    outcome: str
    detail: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"step": self.step, "outcome": self.outcome, "detail": self.detail}


class Decision(msgspec.Struct, frozen=True):
    group: str | None
    source: str | None
    reason: str | None = None
    message: str = ""
    steps: tuple[Step, ...] = ()

    @property
    def ok(self) -> bool:
        return self.group is not None

    def to_dict(self) -> dict[str, object]:
        return {"group": self.group, "source": self.source, "reason": self.reason, "message": self.message}


def select_node_group(
    session: ActiveSession | None,
    groups: Mapping[str, NodeGroup],
    nodes: Mapping[str, Node],
    default_group: str,
    membership: Membership | None = None,
) -> Decision:
    """`membership`: of `nodes` in `groups`, when already computed (the node's groups are then looked up)."""
    steps: list[Step] = []
    if session is None:
        steps.append(Step("session", "absent", "the capture has no status.activeSession"))
    else:
        steps.append(
            Step(
                "session",
                "present",
                f"session {session.id or '(no id)'} for pod {session.pod_name or '(none)'}"
                f" on node {session.node_name or '(not recorded)'}",
            )
        )
        requested = trim_space(session.requested_node_group)
        if requested:
            if requested in groups:
                steps.append(Step("annotation", "selected", f"{c.ANNOTATION_NODE_GROUP}={requested}: the group exists"))
                return Decision(
                    requested,
                    c.SOURCE_ANNOTATION,
                    message=f'requested KernelCacheNodeGroup "{requested}" selected',
                    steps=tuple(steps),
                )
            message = c.MSG_GROUP_NOT_FOUND.format(name=requested)
            steps.append(Step("annotation", "missing", f"{c.ANNOTATION_NODE_GROUP}={requested}: {message}"))
            return Decision(None, None, c.REASON_INVALID_REQUESTED, message, tuple(steps))
        steps.append(Step("annotation", "none", "no group was requested"))
        if not session.node_name:
            steps.append(Step("node", "pending", c.MSG_PRODUCER_PENDING))
            return Decision(None, None, c.REASON_PRODUCER_PENDING, c.MSG_PRODUCER_PENDING, tuple(steps))
        node = nodes.get(session.node_name)
        if node is None:
            steps.append(Step("node", "missing", f"Node {session.node_name} was not found; trying the default"))
        else:
            steps.append(Step("node", "found", f"Node {node.name}"))
            matches = (
                membership.groups_for(node, groups.values())
                if membership is not None
                else matching_groups(node.labels, groups.values())
            )
            names = [g.name for g in matches]
            if len(matches) == 1:
                steps.append(Step("match", "one", f"node {node.name} matches group {names[0]}"))
                return Decision(
                    names[0],
                    c.SOURCE_AUTO,
                    message=f'node {node.name} matches only KernelCacheNodeGroup "{names[0]}"',
                    steps=tuple(steps),
                )
            if len(matches) > 1:
                message = c.MSG_AMBIGUOUS.format(node=node.name, groups=", ".join(names))
                steps.append(Step("match", "several", message))
                return Decision(None, None, c.REASON_AMBIGUOUS, message, tuple(steps))
            steps.append(Step("match", "none", f"node {node.name} matches no group; trying the default"))
    default = trim_space(default_group)
    if not default:
        steps.append(Step("default", "unset", c.MSG_NO_MATCH))
        return Decision(None, None, c.REASON_NO_MATCH, c.MSG_NO_MATCH, tuple(steps))
    if default not in groups:
        message = c.MSG_GROUP_NOT_FOUND.format(name=default)
        steps.append(Step("default", "missing", f'defaultNodeGroup "{default}": {message}'))
        return Decision(None, None, c.REASON_INVALID_DEFAULT, message, tuple(steps))
    steps.append(Step("default", "selected", f'defaultNodeGroup "{default}" exists'))
    return Decision(
        default, c.SOURCE_DEFAULT, message=f'default KernelCacheNodeGroup "{default}" selected', steps=tuple(steps)
    )


# ---- the session and what KServe does not check ---------------------------------------------------


def session_from_pod(pod: Pod) -> ActiveSession:
    """The session KServe records when this producer pod claims a capture: its node and its requested group
    (the pod annotation), as they are at that moment. It is recorded once and never updated afterwards."""
    return ActiveSession(
        id="",
        pod_name=pod.name,
        node_name=pod.node_name,
        requested_node_group=pod.meta.annotations.get(c.ANNOTATION_NODE_GROUP, ""),
    )


class SessionDrift(msgspec.Struct, frozen=True):
    """A field of the recorded session that differs from the producer pod today. KServe decides from the
    recorded value: the session is claimed once and never back-filled or updated."""

    field: str  # requestedNodeGroup | nodeName
    recorded: str
    now: str


def session_drift(pod: Pod, recorded: ActiveSession) -> list[SessionDrift]:
    """How the pod that claimed `recorded` differs from it today (nothing for another pod)."""
    if pod.name != recorded.pod_name:
        return []
    now = session_from_pod(pod)
    out = []
    if now.requested_node_group != recorded.requested_node_group:
        out.append(SessionDrift("requestedNodeGroup", recorded.requested_node_group, now.requested_node_group))
    if now.node_name != recorded.node_name:
        out.append(SessionDrift("nodeName", recorded.node_name, now.node_name))
    return out


class RequestedOutside(msgspec.Struct, frozen=True):
    """A requested group that exists but does not contain the producer's node: KServe selects it without
    checking, so the cache is prepared on nodes other than the kind it was compiled on."""

    group: str
    node: str
    wanted: Mapping[str, str]  # the selector labels the node does not satisfy, with the wanted values


def requested_group_outside(
    session: ActiveSession | None, groups: Mapping[str, NodeGroup], nodes: Mapping[str, Node]
) -> RequestedOutside | None:
    if session is None:
        return None
    requested = trim_space(session.requested_node_group)
    group = groups.get(requested) if requested else None
    node = nodes.get(session.node_name) if session.node_name else None
    if group is None or node is None or not group.node_selector:
        return None
    if selector_matches(group.node_selector, node.labels):
        return None
    return RequestedOutside(group.name, node.name, label_mismatch(group.node_selector, node.labels).wanted)
