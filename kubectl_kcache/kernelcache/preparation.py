"""How the node agent reads a preparation pod's failure (`failedPodMessage`,
pkg/controller/v1alpha1/kernelcachenode/preparation.go@11588949): while the Job is neither Complete nor
Failed, the first of the Job's pods that yields a message makes the node's entry `Error` with it.

Per pod, over its container statuses (init containers first): a container waiting with a reason the agent
treats as failure gives its message, else its reason; a container terminated with a non-zero exit code,
in any pod phase, gives its message, else its reason, else `preparation container exited with code N`.
With no container match: the pod's `status.message`, then its `status.reason` (an evicted pod: `Evicted`),
in any phase; last, for a pod in phase Failed, `preparation Pod failed`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..objects import Pod
from . import constants as c

MSG_POD_FAILED = "preparation Pod failed"
WAITING, EXITED, POD_STATUS, FAILED = "waiting", "exited", "pod-status", "failed"


@dataclass(frozen=True)
class PodFailure:
    """The agent's message for a pod, and where it came from (`kind`, and the container when one)."""

    message: str
    kind: str
    container: str = ""
    reason: str = ""
    exit_code: int | None = None


def failed_pod(pod: Pod) -> PodFailure | None:
    """failedPodMessage for one pod, or None when the pod yields no message."""
    for cs in pod.containers:
        if cs.waiting_reason in c.PREPARATION_FAILURE_REASONS:
            return PodFailure(cs.waiting_message or cs.waiting_reason, WAITING, cs.name, cs.waiting_reason)
        if cs.exit_code not in (None, 0):
            text = (
                cs.terminated_message
                or cs.terminated_reason
                or f"preparation container exited with code {cs.exit_code}"
            )
            return PodFailure(text, EXITED, cs.name, cs.terminated_reason, cs.exit_code)
    if pod.message:
        return PodFailure(pod.message, POD_STATUS, reason=pod.reason)
    if pod.reason:
        return PodFailure(pod.reason, POD_STATUS, reason=pod.reason)
    if pod.phase == "Failed":
        return PodFailure(MSG_POD_FAILED, FAILED)
    return None
