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

from collections.abc import Iterable

import msgspec

from ..objects import Condition, Event, Job, KernelCache, Meta, Pod
from . import constants as c
from .names import label_value

MSG_POD_FAILED = "preparation Pod failed"
WAITING, EXITED, POD_STATUS, FAILED = "waiting", "exited", "pod-status", "failed"


class PodFailure(msgspec.Struct, frozen=True):
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


# ---- the preparation Job the agent reads, and the entry it writes from it --------------------------------
# (`updateCacheStatuses`, kernelcachenode/preparation.go, controller.go@2058eebf; reference §2.2, §2.4)

MSG_NO_JOB = "waiting for the OCI prefetch Job"
MSG_JOB_NOT_STARTED = "waiting for the OCI prefetch Job to start"
MSG_JOB_RUNNING = "OCI artifact is being prefetched"
MSG_JOB_COMPLETE = "OCI artifact was prefetched on the node"
MSG_JOB_FAILED = "preparation Job failed"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"

# a Job's state as why-not-ready reports it (`job.state` in its JSON)
JOB_NONE = "none"
JOB_SUSPENDED = "suspended"
JOB_NOT_STARTED = "not-started"
JOB_FAILED_CREATE = "failed-create"
JOB_RUNNING = "running"
JOB_FAILED = "failed"
JOB_COMPLETE = "complete"


def job_target(meta: Meta) -> tuple[str, str, str]:
    """(KernelCache namespace, name, node) a preparation Job or pod is for: the full values from KServe's
    annotations, else the label values (hashed by KServe when a value is long or not a valid label)."""
    a, lab = meta.annotations, meta.labels
    return (
        a.get(c.ANNOTATION_JOB_CACHE_NAMESPACE) or lab.get(c.LABEL_JOB_CACHE_NAMESPACE, ""),
        a.get(c.ANNOTATION_JOB_CACHE_NAME) or lab.get(c.LABEL_JOB_CACHE_NAME, ""),
        a.get(c.ANNOTATION_JOB_NODE) or lab.get(c.LABEL_JOB_NODE, ""),
    )


def job_finished(job: Job) -> bool:
    """A Complete or Failed condition, whatever its status: the Job no longer holds the namespace's KernelCache
    passes (`isPrefetchJobTerminal`, prefetch_auth.go@6ca99b0c, looks at the condition's type only; the agent's
    reading of a Job, `preparation`, asks for status True)."""
    return any(x.type in ("Complete", "Failed") for x in job.conditions)


def _condition(job: Job, kind: str) -> Condition | None:
    return next((x for x in job.conditions if x.type == kind and x.status == "True"), None)


def agent_job(jobs: Iterable[Job], kc: KernelCache, node: str, job_namespace: str) -> Job | None:
    """The preparation Job the node's agent reads for `kc`: the newest (by creation time) in the job
    namespace whose labels name the KernelCache and this node (as KServe writes label values), skipping
    Jobs for another artifact than the KernelCache's (stale)."""
    want = (label_value(kc.name), label_value(kc.namespace), label_value(node))
    image = kc.artifact.image_reference if kc.artifact is not None else ""
    found: list[Job] = []
    for job in jobs:
        labels = job.meta.labels
        if job.meta.namespace != job_namespace:
            continue
        if (
            labels.get(c.LABEL_JOB_CACHE_NAME),
            labels.get(c.LABEL_JOB_CACHE_NAMESPACE),
            labels.get(c.LABEL_JOB_NODE),
        ) != want:
            continue
        if image and job.image_reference and job.image_reference != image:
            continue
        found.append(job)
    return max(found, key=lambda j: (j.meta.created, j.meta.name), default=None)


def job_pods(job: Job, pods: Iterable[Pod]) -> list[Pod]:
    """The Job's pods, in list order (the agent checks them in that order)."""
    return [
        p
        for p in pods
        if p.namespace == job.meta.namespace
        and p.meta.labels.get(JOB_NAME_LABEL, p.meta.labels.get("job-name")) == job.meta.name
    ]


def job_refusals(job: Job, events: Iterable[Event]) -> list[Event]:
    """The Job controller's FailedCreate Warning events on `job`: pod creation refused (PodSecurity, a
    ResourceQuota, an admission webhook), newest first."""
    mine = [
        e
        for e in events
        if e.involved_kind == "Job"
        and e.involved_name == job.meta.name
        and e.involved_namespace == job.meta.namespace
        and e.reason == "FailedCreate"
    ]
    return sorted(mine, key=lambda e: e.last_seen, reverse=True)


def refusal_reason(message: str) -> str:
    """A FailedCreate message without the pod name the Job controller made up for that try ("Error creating:
    pods "kc-...-x7k2p" is forbidden: violates PodSecurity ..." -> "violates PodSecurity ..."), so that one
    refusal reads the same on every node and at every retry."""
    _, sep, rest = message.partition(" is forbidden: ")
    if sep:
        return rest.strip()
    return message.removeprefix("Error creating: ").strip()


class Preparation(msgspec.Struct, frozen=True):
    """What the node's agent makes of a KernelCache's preparation Job (None: no Job): the Job's state as
    reported (`JOB_*`), the entry state and message the agent writes from it, the pod whose failure decides
    (only while the Job is neither Complete nor Failed), and why a Job has no pod (FailedCreate messages)."""

    job: Job | None
    state: str
    entry_state: str
    entry_message: str
    pods: tuple[Pod, ...] = ()
    failed_pod: Pod | None = None
    failure: PodFailure | None = None
    refusals: tuple[str, ...] = ()

    @property
    def terminal(self) -> bool:
        return self.state in (JOB_FAILED, JOB_COMPLETE)


def preparation(job: Job | None, pods: Iterable[Pod], events: Iterable[Event], previous_state: str = "") -> Preparation:
    """The agent's reading of `job` (§2.2): Failed -> Error with the Job's condition message; Complete ->
    Ready, whatever its pods did; else the first pod that yields a failure message -> Error with it; else
    Pulling, "to start" while the Job has neither a startTime nor an active pod. No Job: a Ready entry stays
    Ready ("OCI artifact was prefetched on the node"), else Pending (`preparation.go@11588949`)."""
    if job is None:
        if previous_state == c.ENTRY_READY:
            return Preparation(None, JOB_NONE, c.ENTRY_READY, MSG_JOB_COMPLETE)
        return Preparation(None, JOB_NONE, "Pending", MSG_NO_JOB)
    mine = tuple(job_pods(job, pods))
    failed = _condition(job, "Failed")
    if failed is not None:
        text = failed.message or failed.reason or MSG_JOB_FAILED
        return Preparation(job, JOB_FAILED, c.ENTRY_ERROR, text, mine)
    if _condition(job, "Complete") is not None:
        return Preparation(job, JOB_COMPLETE, c.ENTRY_READY, MSG_JOB_COMPLETE, mine)
    for pod in mine:
        failure = failed_pod(pod)
        if failure is not None:
            state = JOB_RUNNING if job.started else JOB_NOT_STARTED
            return Preparation(job, state, c.ENTRY_ERROR, failure.message, mine, pod, failure)
    refusals = tuple(dict.fromkeys(e.message for e in job_refusals(job, events) if e.message))
    if not job.started and job.active == 0:  # preparationState: no startTime and no active pod
        state = JOB_SUSPENDED if job.suspended else JOB_NOT_STARTED
        if not mine and refusals and not job.suspended:
            state = JOB_FAILED_CREATE
        return Preparation(job, state, "Pulling", MSG_JOB_NOT_STARTED, mine, refusals=refusals)
    state = JOB_FAILED_CREATE if (not mine and refusals) else JOB_RUNNING
    return Preparation(job, state, "Pulling", MSG_JOB_RUNNING, mine, refusals=refusals)
