"""Preparation Jobs, their pods and the registry settings they depend on.

* A preparation pod (label `serving.kserve.io/kernel-cache-name` in the job namespace) whose container
  waits with a reason the agent treats as failure (ErrImagePull, ImagePullBackOff, ErrImageNeverPull,
  InvalidImageName, CreateContainerConfigError, CreateContainerError, RunContainerError,
  ContainerCannotRun, CrashLoopBackOff), that exited non-zero, or that cannot be scheduled: error, with
  the kubelet's or registry's message. The kubelet pulls the cache artifact as an image volume.
* A Job with condition Failed (error): the agent marks the node's entry Error, and KServe does not create
  a Job again while one with the same deterministic name exists, so the retry waits until
  `jobTTLSecondsAfterFinished` deletes it; the hint deletes it now. Jobs for an older artifact of the
  KernelCache are ignored, as the agent ignores them.
* A preparation pod's failure as the node agent reads it (the first of: a waiting container as above, a
  container terminated non-zero in any phase, the pod's `status.message`, its `status.reason` such as
  `Evicted`, `preparation Pod failed` for phase Failed): error, naming the pod and the message the agent
  puts on the node's entry.
* For every registry auth type (`none` too), the prefetcher ServiceAccount `kernel-cache-prefetcher-sa` in
  the job namespace must carry `internal.serving.kserve.io/kernelcache-prefetcher: "true"` and disable token
  automount, else every KernelCache fails with KServe's StorageError (quoted). With `serviceAccountToken`
  the RoleBinding `kernel-cache-prefetcher-rb` in each KernelCache namespace must be managed, bind the
  ServiceAccount and reference `pullRoleRef` (KServe replaces one with another roleRef only while no
  preparation Job of that namespace runs: warning); with `none` an unmanaged one is ignored and a managed
  one must still name only that ServiceAccount.
* `registry.endpoint` set but not a registry host with optional port (no scheme, path or spaces):
  error. KServe validates it only for serviceAccountToken (then it is a config error); with auth `none`
  it is accepted and generated capture targets `<endpoint>/<ns>/kernel-cache-<isvc>:<revision>` are not
  valid image references.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

from .. import objects as o
from ..kernelcache import constants as c
from ..kernelcache.config import AUTH_SA_TOKEN, KernelCacheConfig, endpoint_valid
from ..kernelcache.preparation import EXITED, WAITING, failed_pod
from ..snapshot import plan as readplan
from ..snapshot.model import ClusterSnapshot
from ..text import command
from .common import EDIT_CONFIG, condition_text, config_ref, facts, observed, parse_time, read_ok, rfc3339_after
from .model import CheckRead, Finding, ObjectRef
from .registry import check

ID = "registry-pull"
# the newest names (cache_prefetch.go@30750567); older KServe named the ServiceAccount kernel-cache-prefetcher
PREFETCHER_SA, PREFETCHER_RB = c.PREFETCHER_SERVICE_ACCOUNTS[0], c.PREFETCHER_ROLE_BINDINGS[0]
JOB_LABEL = "batch.kubernetes.io/job-name"


def _target(meta: o.Meta) -> tuple[str, str, str]:
    """(KernelCache namespace, name, node) of a preparation Job or pod: full values from the annotations,
    else the (possibly hashed) label values."""
    a, lab = meta.annotations, meta.labels
    return (
        a.get(c.ANNOTATION_JOB_CACHE_NAMESPACE) or lab.get(c.LABEL_JOB_CACHE_NAMESPACE, ""),
        a.get(c.ANNOTATION_JOB_CACHE_NAME) or lab.get(c.LABEL_JOB_CACHE_NAME, ""),
        a.get(c.ANNOTATION_JOB_NODE) or lab.get(c.LABEL_JOB_NODE, ""),
    )


def _on(meta: o.Meta) -> str:
    """` on node N` (the headline names where; the object line and the rest say which Job or pod)."""
    node = _target(meta)[2]
    return f" on node {node}" if node else ""


def _prepares(meta: o.Meta) -> str:
    """`for KernelCache ns/kc; ` (the Job or pod itself is the finding's object)."""
    ns, name, _ = _target(meta)
    return f"for KernelCache {ns}/{name}; " if name else ""


@check(
    ID,
    "preparation Jobs pull the cache artifact",
    "error",
    order=110,
    needs_feature=True,
    codes={
        "endpoint-invalid": ("error", "registry.endpoint is not a registry host with optional port"),
        "job-failed": ("error", "a failed preparation Job that blocks the retry until its TTL"),
        "pod-cannot-start": ("error", "a preparation pod waiting on an image pull or a container error"),
        "pod-exited": ("error", "a preparation pod whose container exited non-zero"),
        "pod-unschedulable": ("error", "a preparation pod that cannot be scheduled"),
        "pod-failed": ("error", "a preparation pod with a status message or reason (e.g. Evicted), or phase Failed"),
        "prefetcher-sa-missing": ("warning", "no prefetcher ServiceAccount although KernelCaches exist"),
        "prefetcher-sa-unmanaged": ("error", "a reserved prefetcher ServiceAccount KServe does not manage"),
        "prefetcher-sa-automount": ("error", "the managed prefetcher ServiceAccount mounts its token"),
        "prefetcher-rb-unmanaged": ("error", "a reserved prefetcher RoleBinding KServe does not manage"),
        "prefetcher-rb-subject": ("error", "the managed prefetcher RoleBinding names another ServiceAccount"),
        "prefetcher-rb-role": ("warning", "the prefetcher RoleBinding binds another role than pullRoleRef"),
    },
    reads=(
        CheckRead(readplan.PREPARATION_JOBS),
        CheckRead(readplan.PREPARATION_PODS, optional=True, note="preparation pods not checked"),
        CheckRead(readplan.PREFETCHER_SERVICE_ACCOUNTS, optional=True, note="prefetcher ServiceAccount not checked"),
        CheckRead(readplan.PREFETCHER_ROLE_BINDINGS, optional=True, note="prefetcher RoleBindings not checked"),
        CheckRead(readplan.KERNEL_CACHES, optional=True, note="stale Jobs not told apart"),
    ),
)
def run(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    f = facts(snapshot)
    cfg = f.config
    job_ns = cfg.job_namespace
    stale: set[str] = set()
    for job in sorted(snapshot.jobs, key=lambda j: j.meta.name):
        if job.meta.namespace != job_ns or c.LABEL_JOB_CACHE_NAME not in job.meta.labels:
            continue
        kc_ns, kc_name, _ = _target(job.meta)
        kc = snapshot.kc_by_key.get(f"{kc_ns}/{kc_name}")
        if (
            kc is not None
            and kc.artifact is not None
            and job.image_reference
            and job.image_reference != kc.artifact.image_reference
        ):
            stale.add(job.meta.name)
            continue
        failed = o.find_condition(job.conditions, "Failed")
        if failed is None or failed.status != "True":
            continue
        yield _failed_job(job, failed, cfg)
    if read_ok(snapshot, readplan.PREPARATION_PODS):
        for pod in snapshot.pods_labelled(job_ns, c.LABEL_JOB_CACHE_NAME):
            if pod.meta.labels.get(JOB_LABEL, pod.meta.labels.get("job-name", "")) in stale:
                continue
            finding = _pod(pod)
            if finding is not None:
                yield finding
    # KServe ensures the prefetcher ServiceAccount for every auth type; the RoleBinding for serviceAccountToken
    # (with auth none a managed one is only deleted, an unmanaged one ignored)
    yield from _service_accounts(snapshot, job_ns)
    yield from _role_bindings(snapshot, cfg)
    endpoint = cfg.registry.endpoint
    if endpoint and not endpoint_valid(endpoint):
        yield Finding(
            ID,
            "error",
            config_ref(),
            f"registry.endpoint {endpoint!r} is not a registry host with optional port (KServe: "
            '"registry.endpoint must be a registry host with optional port"); with auth type '
            f"{cfg.registry.auth.type} KServe accepts it, but generated capture targets "
            f"<endpoint>/<namespace>/kernel-cache-<isvc>:<revision> are not valid image references",
            hint=EDIT_CONFIG,
            evidence=(f"registry.endpoint: {endpoint!r}",),
            code="endpoint-invalid",
        )


def _due(at: dt.datetime, ttl: int) -> str:
    when = rfc3339_after(at, ttl)
    return when if when.startswith("after") else f"at {when}"


def _failed_job(job: o.Job, failed: o.Condition, cfg: KernelCacheConfig) -> Finding:
    ns = job.meta.namespace or ""
    ttl = job.ttl_seconds if job.ttl_seconds is not None else cfg.job_ttl_seconds_after_finished
    at = parse_time(failed.last_transition)
    left = f", due {_due(at, ttl)}" if at is not None else ""
    why = condition_text(failed) or "no reason given"
    return Finding(
        ID,
        "error",
        ObjectRef("Job", job.meta.name, ns),
        f"preparation Job{_on(job.meta)} failed ({why}): {_prepares(job.meta)}the node's cache "
        "entry is Error, and KServe does not create the Job again while one with this name exists, so "
        "preparation "
        f"is retried only after its TTL (ttlSecondsAfterFinished {ttl}s{left}) deletes it",
        hint=command("kubectl", "-n", ns, "delete", "job", job.meta.name),
        evidence=tuple(
            x for x in (f"Failed: {why}", f"artifact: {job.image_reference}" if job.image_reference else "") if x
        ),
        code="job-failed",
        cause=f"preparation Jobs failed: {why}",
        lister=command("kubectl", "-n", ns, "get", "jobs", "-l", c.LABEL_JOB_CACHE_NAME),
    )


def _pod(pod: o.Pod) -> Finding | None:
    ref = ObjectRef("Pod", pod.name, pod.namespace)
    lead = f"preparation pod{_on(pod.meta)}"
    which = _prepares(pod.meta)
    hint = command("kubectl", "-n", pod.namespace, "describe", "pod", pod.name)
    lister = command("kubectl", "-n", pod.namespace, "get", "pods", "-l", c.LABEL_JOB_CACHE_NAME, "-o", "wide")
    failure = failed_pod(pod)
    agent = f'; the node\'s agent marks its entry Error with "{failure.message}"' if failure is not None else ""
    if failure is not None and failure.kind == WAITING:
        what = (
            "the kubelet could not pull an image (the cache artifact is pulled as an image volume): "
            if failure.reason in c.IMAGE_PULL_REASONS
            else ""
        )
        text = f"{failure.reason}: {failure.message}" if failure.message != failure.reason else failure.reason
        return Finding(
            ID,
            "error",
            ref,
            f"{lead} cannot start: {which}container {failure.container} is waiting: {what}{text}{agent}",
            hint=hint,
            evidence=(f"{failure.container}: {failure.reason}",),
            code="pod-cannot-start",
            cause=f"preparation pods waiting: {text}",
            lister=lister,
        )
    if failure is not None and failure.kind == EXITED:
        detail = ": ".join(dict.fromkeys(x for x in (failure.reason, failure.message) if x))
        return Finding(
            ID,
            "error",
            ref,
            f"{lead} failed: {which}container {failure.container} exited with code {failure.exit_code} "
            f"(phase {pod.phase or 'unknown'}){agent}; the artifact is not usable on the node",
            hint=command("kubectl", "-n", pod.namespace, "logs", pod.name, "-c", failure.container),
            evidence=(detail,) if detail else (),
            code="pod-exited",
            cause=f"preparation pods exited with code {failure.exit_code}",
            lister=lister,
        )
    if failure is not None:
        why = "it was evicted" if failure.reason == "Evicted" else f"phase {pod.phase or 'unknown'}"
        return Finding(
            ID,
            "error",
            ref,
            f"{lead} failed ({why}): {which}{failure.message}{agent}",
            hint=hint,
            evidence=tuple(
                x
                for x in (
                    f"status.reason: {pod.reason}" if pod.reason else "",
                    f"status.message: {pod.message}" if pod.message else "",
                )
                if x
            ),
            code="pod-failed",
            cause=f"preparation pods failed: {failure.message}",
            lister=lister,
        )
    if pod.scheduled_reason == "Unschedulable":
        return Finding(
            ID,
            "error",
            ref,
            f"{lead} cannot be scheduled: {which}{pod.scheduled_message or pod.scheduled_reason}; "
            "the node's cache entry stays Pulling",
            hint=hint,
            code="pod-unschedulable",
            cause=f"preparation pods unschedulable: {pod.scheduled_message or pod.scheduled_reason}",
            lister=lister,
        )
    return None


def _service_accounts(snapshot: ClusterSnapshot, job_ns: str) -> Iterator[Finding]:
    accounts = [sa for sa in snapshot.service_accounts if sa.meta.namespace == job_ns]
    if not observed(snapshot, readplan.PREFETCHER_SERVICE_ACCOUNTS, bool(accounts)):
        return
    found = [sa for sa in accounts if sa.meta.name == PREFETCHER_SA]
    if not found and snapshot.kernel_caches:
        yield Finding(
            ID,
            "warning",
            ObjectRef("ServiceAccount", PREFETCHER_SA, job_ns),
            f"no prefetcher ServiceAccount {PREFETCHER_SA} in {job_ns} although KernelCaches exist: KServe "
            "ensures it (for every registry auth type) before the first preparation Job, so it has not got "
            "that far (look for KernelCaches in Error/StorageError)",
            hint=f"kubectl get {c.PLURAL_CACHES} -A",
            code="prefetcher-sa-missing",
        )
    for sa in found:
        ref = ObjectRef("ServiceAccount", sa.meta.name, job_ns)
        if sa.meta.labels.get(c.PREFETCHER_MANAGED_LABEL) != "true":
            yield Finding(
                ID,
                "error",
                ref,
                f"reserved ServiceAccount {job_ns}/{sa.meta.name} already exists and is not managed by "
                f"KernelCache (it lacks label {c.PREFETCHER_MANAGED_LABEL}=true): KServe fails every "
                "KernelCache with this StorageError",
                hint=command("kubectl", "-n", job_ns, "delete", "serviceaccount", sa.meta.name)
                + "  # KServe re-creates it",
                code="prefetcher-sa-unmanaged",
            )
        elif sa.automount_token is not False:
            yield Finding(
                ID,
                "error",
                ref,
                f"managed ServiceAccount {job_ns}/{sa.meta.name} must disable token automount "
                f"(automountServiceAccountToken is {'unset' if sa.automount_token is None else 'true'}): "
                "KServe fails every KernelCache with this StorageError",
                hint=command(
                    "kubectl",
                    "-n",
                    job_ns,
                    "patch",
                    "serviceaccount",
                    sa.meta.name,
                    "-p",
                    '{"automountServiceAccountToken":false}',
                ),
                code="prefetcher-sa-automount",
            )


def _role_bindings(snapshot: ClusterSnapshot, cfg: KernelCacheConfig) -> Iterator[Finding]:
    if not observed(snapshot, readplan.PREFETCHER_ROLE_BINDINGS, bool(snapshot.role_bindings)):
        return
    pull = cfg.registry.auth.pull_role_ref
    token = cfg.registry.auth.type == AUTH_SA_TOKEN
    cache_namespaces = {kc.namespace for kc in snapshot.kernel_caches}
    for rb in snapshot.role_bindings:
        ns = rb.meta.namespace or ""
        if rb.meta.name != PREFETCHER_RB or ns not in cache_namespaces:
            continue
        ref = ObjectRef("RoleBinding", rb.meta.name, ns)
        managed = rb.meta.labels.get(c.PREFETCHER_MANAGED_LABEL) == "true"
        if not token and not managed:
            continue  # auth none: KServe ignores a binding it does not manage
        if not managed:
            yield Finding(
                ID,
                "error",
                ref,
                f"reserved RoleBinding {ns}/{rb.meta.name} already exists and is not managed by KernelCache "
                f"(it lacks label {c.PREFETCHER_MANAGED_LABEL}=true): KernelCaches in {ns} fail with this "
                "StorageError",
                hint=command("kubectl", "-n", ns, "delete", "rolebinding", rb.meta.name) + "  # KServe re-creates it",
                code="prefetcher-rb-unmanaged",
            )
            continue
        sa = ("ServiceAccount", cfg.job_namespace, PREFETCHER_SA)
        if sa not in rb.subjects:
            yield Finding(
                ID,
                "error",
                ref,
                f"managed RoleBinding {ns}/{rb.meta.name} has an unexpected ServiceAccount subject (wants "
                f"{sa[1]}/{sa[2]}): KernelCaches in {ns} fail with this StorageError",
                hint=command("kubectl", "-n", ns, "delete", "rolebinding", rb.meta.name) + "  # KServe re-creates it",
                evidence=tuple(f"subject: {k} {n}/{m}" for k, n, m in rb.subjects),
                code="prefetcher-rb-subject",
            )
        if token and pull is not None and (rb.role_kind, rb.role_name) != (pull.kind, pull.name):
            yield Finding(
                ID,
                "warning",
                ref,
                f"RoleBinding {ns}/{rb.meta.name} binds {rb.role_kind}/{rb.role_name}, not "
                f"registry.auth.pullRoleRef {pull.kind}/{pull.name}: preparation pulls in {ns} use the old "
                "role until KServe replaces the binding (only while no preparation Job of the namespace "
                "runs)",
                hint=command("kubectl", "-n", ns, "get", "rolebinding", rb.meta.name, "-o", "yaml"),
                evidence=(f"roleRef: {rb.role_kind}/{rb.role_name}", f"pullRoleRef: {pull.kind}/{pull.name}"),
                code="prefetcher-rb-role",
            )
