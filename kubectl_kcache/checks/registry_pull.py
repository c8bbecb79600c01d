"""Preparation Jobs, their pods and the registry settings they depend on, read as the node agent reads them
(`updateCacheStatuses`, reference §2.2): for each KernelCache and node the newest Job labelled for them (Jobs
for an older artifact of the KernelCache are ignored, as the agent ignores them), and its pods only while the
Job is neither Complete nor Failed.

* A Job with condition Failed (error): the node's entry is Error with the Job's condition message (whatever
  its pods said), and KServe does not create a Job again while one with the same deterministic name exists,
  so the retry waits until `jobTTLSecondsAfterFinished` deletes it. A Complete Job's pods (an earlier pod
  failed and was retried) are not judged: the entry is Ready.
* A Job that never gets a pod (error): its pod creation refused (FailedCreate Warning events on the Job:
  PodSecurity, a ResourceQuota, a webhook), or suspended (`spec.suspend`, no startTime, e.g. by Kueue). The
  entry stays Pulling and the KernelCache Preparing for good: KServe does not watch Jobs and nothing
  re-creates the Job while one of that name exists (fix the refusal, then delete the Job).
* A preparation pod of a running Job whose container waits with a reason the agent treats as failure
  (ErrImagePull, ImagePullBackOff, ErrImageNeverPull, InvalidImageName, CreateContainerConfigError,
  CreateContainerError, RunContainerError, ContainerCannotRun, CrashLoopBackOff), that exited non-zero in any
  phase, that has a `status.message` or `status.reason` (e.g. `Evicted`) or phase Failed, or that cannot be
  scheduled: error, with the kubelet's or registry's message; the first of the Job's pods that yields a
  message is the one whose message the agent puts on the entry. The kubelet pulls the cache artifact as an
  image volume.
* A Job whose KernelCache no longer exists and that has not finished (its pods mark no entry: the agents
  dropped the deleted cache's entries): with a managed prefetcher RoleBinding in the KernelCache's namespace
  it holds every KernelCache pass of that namespace for good (error; the hint deletes it), else info.
* For every registry auth type (`none` too), the prefetcher ServiceAccount `kernel-cache-prefetcher-sa` in
  the job namespace must carry `internal.serving.kserve.io/kernelcache-prefetcher: "true"` and disable token
  automount, else every KernelCache fails with KServe's StorageError (quoted). With `serviceAccountToken`
  the RoleBinding `kernel-cache-prefetcher-rb` in each KernelCache namespace must be managed and reference
  `pullRoleRef` (KServe replaces one with another roleRef only while no preparation Job of that namespace
  runs: warning); with `none` an unmanaged one is ignored. A managed one must have exactly one subject, the
  ServiceAccount `kernel-cache-prefetcher-sa` (error otherwise, e.g. a second subject); the subject's namespace
  is not checked: one in an older job namespace is patched (auth `none`: the binding deleted) once no prefetch
  Job of the namespace runs (info).
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
from ..kernelcache import preparation as prep_
from ..kernelcache.config import AUTH_SA_TOKEN, KernelCacheConfig, endpoint_valid
from ..kernelcache.names import label_value
from ..kernelcache.prefetcher import ROLE_BINDING as PREFETCHER_RB
from ..kernelcache.prefetcher import SERVICE_ACCOUNT as PREFETCHER_SA
from ..kernelcache.prefetcher import (
    HeldBy,
    identity_error,
    is_managed,
    requeue_holders,
    subject_moves,
    subject_ok,
)
from ..kernelcache.preparation import EXITED, WAITING, Preparation, agent_job, job_target, preparation, refusal_reason
from ..snapshot import plan as readplan
from ..snapshot.model import ClusterSnapshot
from ..suggest import Json, Name, Namespace, Selector, kubectl
from .cache_status import why_not_ready
from .common import (
    EDIT_CONFIG,
    condition_text,
    config_ref,
    facts,
    observed,
    parse_time,
    pod_logs,
    read_ok,
    rfc3339_after,
)
from .model import CheckRead, Finding, ObjectRef, finding_of
from .registry import check

ID = "registry-pull"
finding = finding_of(ID)
# the newest names (cache_prefetch.go@30750567); older KServe named the ServiceAccount kernel-cache-prefetcher
NO_WATCH = "KServe does not watch Jobs and creates no Job while one of this name exists, so nothing changes by itself"


def _on(meta: o.Meta) -> str:
    """` on node N` (the headline names where; the object line and the rest say which Job or pod)."""
    node = job_target(meta)[2]
    return f" on node {node}" if node else ""


def _prepares(meta: o.Meta, hint: str | None) -> str:
    """`for KernelCache ns/kc; ` (the Job or pod itself is the finding's object), or nothing when the next
    command, why-not-ready of that KernelCache, names it already."""
    ns, name, _ = job_target(meta)
    return f"for KernelCache {ns}/{name}; " if name and not hint else ""


def _jobs_lister(ns: str) -> str:
    return kubectl("-n {ns} get jobs -l serving.kserve.io/kernel-cache-name", ns=Namespace(ns))


def _delete(job: o.Job) -> str:
    return kubectl("-n {ns} delete job {job}", ns=Namespace(job.meta.namespace or ""), job=Name("job", job.meta.name))


@check(
    ID,
    "preparation Jobs pull the cache artifact",
    "error",
    order=110,
    needs_feature=True,
    codes={
        "endpoint-invalid": ("error", "registry.endpoint is not a registry host with optional port"),
        "job-failed": ("error", "a failed preparation Job that blocks the retry until its TTL"),
        "job-pod-refused": (
            "error",
            "a preparation Job whose pods are refused (FailedCreate): its entry stays Pulling for good",
        ),
        "job-suspended": ("error", "a suspended preparation Job: its entry stays Pulling until it is resumed"),
        "job-orphan": (
            "error",
            "an unfinished preparation Job of a deleted KernelCache: with a managed prefetcher RoleBinding it "
            "holds every KernelCache pass of its namespace for good (info without one)",
        ),
        "pod-cannot-start": ("error", "a preparation pod waiting on an image pull or a container error"),
        "pod-exited": ("error", "a preparation pod whose container exited non-zero"),
        "pod-unschedulable": ("error", "a preparation pod that cannot be scheduled"),
        "pod-failed": ("error", "a preparation pod with a status message or reason (e.g. Evicted), or phase Failed"),
        "prefetcher-sa-missing": ("warning", "no prefetcher ServiceAccount although KernelCaches exist"),
        "prefetcher-sa-unmanaged": ("error", "a reserved prefetcher ServiceAccount KServe does not manage"),
        "prefetcher-sa-automount": ("error", "the managed prefetcher ServiceAccount mounts its token"),
        "prefetcher-rb-unmanaged": ("error", "a reserved prefetcher RoleBinding KServe does not manage"),
        "prefetcher-rb-subject": (
            "error",
            "the managed prefetcher RoleBinding has not exactly one subject, the prefetcher ServiceAccount",
        ),
        "prefetcher-rb-moving": (
            "info",
            "the managed prefetcher RoleBinding names the ServiceAccount of an older job namespace: KServe "
            "patches it once no prefetch Job of the namespace runs",
        ),
        "prefetcher-rb-role": ("warning", "the prefetcher RoleBinding binds another role than pullRoleRef"),
    },
    reads=(
        CheckRead(readplan.PREPARATION_JOBS),
        CheckRead(readplan.PREPARATION_PODS, optional=True, note="preparation pods not checked"),
        CheckRead(readplan.JOB_WARNINGS, optional=True, note="pods refused to preparation Jobs not seen"),
        CheckRead(readplan.PREFETCHER_SERVICE_ACCOUNTS, optional=True, note="prefetcher ServiceAccount not checked"),
        CheckRead(readplan.PREFETCHER_ROLE_BINDINGS, optional=True, note="prefetcher RoleBindings not checked"),
        CheckRead(
            readplan.KERNEL_CACHES, optional=True, note="stale Jobs and Jobs of deleted KernelCaches not told apart"
        ),
    ),
)
def run(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    f = facts(snapshot)
    cfg = f.config
    job_ns = cfg.job_namespace
    jobs = sorted(
        (j for j in snapshot.jobs if j.meta.namespace == job_ns and c.LABEL_JOB_CACHE_NAME in j.meta.labels),
        key=lambda j: j.meta.name,
    )
    pods_ok = read_ok(snapshot, readplan.PREPARATION_PODS)
    pods = snapshot.pods_labelled(job_ns, c.LABEL_JOB_CACHE_NAME) if pods_ok else []
    events = snapshot.events if read_ok(snapshot, readplan.JOB_WARNINGS) else ()
    held = _held(snapshot, job_ns)
    for job in jobs:
        kc, gone = _cache_of(snapshot, job)
        if kc is not None and agent_job(jobs, kc, job_target(job.meta)[2], job_ns) is not job:
            continue  # a Job for an older artifact of the KernelCache: the agent ignores it
        prep = preparation(job, pods, events)
        if gone:
            # the agents dropped the deleted cache's entries: its pods mark nothing; an unfinished Job stays
            if not prep.terminal:
                yield _orphan(job, prep, held.pop((job_ns, job.meta.name), None), job_ns)
            continue
        hint = why_not_ready(kc.namespace, kc.name) if kc is not None else None
        if prep.state == prep_.JOB_FAILED:
            yield _failed_job(job, prep, cfg, hint)
            continue
        if prep.terminal:
            continue  # Complete: the entry is Ready whatever its pods did (a retried pod)
        if prep.state == prep_.JOB_SUSPENDED:
            yield _suspended(job, prep, hint)
        elif prep.state == prep_.JOB_FAILED_CREATE:
            yield _refused(job, prep, hint)
        if pods_ok:
            for pod in prep.pods:
                found = _pod(pod, prep, hint)
                if found is not None:
                    yield found
    for (ns, _), holder in sorted(held.items()):
        if ns != job_ns:  # a Job in the namespace of the binding's older subject holds the namespace too
            yield _orphan(holder.job, preparation(holder.job, (), ()), holder, job_ns)
    # KServe ensures the prefetcher ServiceAccount for every auth type; the RoleBinding for serviceAccountToken
    # (with auth none a managed one is only deleted, an unmanaged one ignored)
    yield from _service_accounts(snapshot, job_ns)
    yield from _role_bindings(snapshot, cfg)
    endpoint = cfg.registry.endpoint
    if endpoint and not endpoint_valid(endpoint):
        yield finding(
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


def _known(snapshot: ClusterSnapshot, namespace: str) -> bool:
    """Whether every KernelCache of `namespace` was read (so a missing one is gone)."""
    return bool(namespace) and read_ok(snapshot, readplan.KERNEL_CACHES.in_namespace(namespace))


def _cache_of(snapshot: ClusterSnapshot, job: o.Job) -> tuple[o.KernelCache | None, bool]:
    """The KernelCache a preparation Job was made for, and whether it is known to be gone (deleted)."""
    ns, name, _ = job_target(job.meta)
    kc = snapshot.kc_by_key.get(f"{ns}/{name}")
    if kc is None and name:
        kc = next(
            (k for k in snapshot.kernel_caches if label_value(k.name) == name and label_value(k.namespace) == ns),
            None,
        )
    return kc, kc is None and bool(name) and _known(snapshot, ns)


def _held(snapshot: ClusterSnapshot, job_ns: str) -> dict[tuple[str, str], HeldBy]:
    """(namespace, name) of each unfinished Job of a deleted KernelCache that holds its namespace's passes."""
    if not read_ok(snapshot, readplan.PREFETCHER_ROLE_BINDINGS):
        return {}
    existing = [(k.namespace, k.name) for k in snapshot.kernel_caches]
    out: dict[tuple[str, str], HeldBy] = {}
    for ns in sorted({rb.meta.namespace or "" for rb in snapshot.role_bindings if rb.meta.name == PREFETCHER_RB}):
        if not _known(snapshot, ns):
            continue
        for h in requeue_holders(ns, snapshot.role_bindings, snapshot.jobs, job_ns, existing):
            if h.orphan:
                out[(h.job.meta.namespace or "", h.job.meta.name)] = h
    return out


def _due(at: dt.datetime, ttl: int) -> str:
    when = rfc3339_after(at, ttl)
    return when if when.startswith("after") else f"at {when}"


def _failed_job(job: o.Job, prep: Preparation, cfg: KernelCacheConfig, hint: str | None) -> Finding:
    ns = job.meta.namespace or ""
    failed = o.find_condition(job.conditions, "Failed")
    ttl = job.ttl_seconds if job.ttl_seconds is not None else cfg.job_ttl_seconds_after_finished
    at = parse_time(failed.last_transition) if failed is not None else None
    left = f", due {_due(at, ttl)}" if at is not None else ""
    why = condition_text(failed) or "no reason given"
    # the entry carries the Job's condition message, most often the one just quoted
    said = "with that message" if prep.entry_message and prep.entry_message in why else f'"{prep.entry_message}"'
    delete = _delete(job)
    return finding(
        "error",
        ObjectRef("Job", job.meta.name, ns),
        f"preparation Job{_on(job.meta)} failed ({why}): {_prepares(job.meta, hint)}the node's cache entry is Error "
        f"{said}, whatever its pods said; KServe creates the Job again only after its TTL deletes it "
        f"(ttlSecondsAfterFinished {ttl}s{left})",
        hint=hint or delete,
        evidence=tuple(
            x
            for x in (
                f"Failed: {why}",
                f"artifact: {job.image_reference}" if job.image_reference else "",
                f"retry now: {delete}" if hint else "",
            )
            if x
        ),
        code="job-failed",
        cause=f"preparation Jobs failed: {why}",
        lister=_jobs_lister(ns),
    )


def _suspended(job: o.Job, prep: Preparation, hint: str | None) -> Finding:
    ns = job.meta.namespace or ""
    resume = kubectl(
        "-n {ns} patch job {job} --type=merge -p {body}",
        ns=Namespace(ns),
        job=Name("job", job.meta.name),
        body=Json({"spec": {"suspend": False}}),
    )
    return finding(
        "error",
        ObjectRef("Job", job.meta.name, ns),
        f"preparation Job{_on(job.meta)} is suspended (spec.suspend: true) and has not started: "
        f'{_prepares(job.meta, hint)}the node\'s entry stays Pulling "{prep.entry_message}" and the KernelCache '
        "Preparing until something resumes the Job (a queueing admission such as Kueue suspends Jobs until it "
        "admits them): KServe never resumes one, does not watch Jobs and creates no Job while one of this name "
        "exists",
        hint=hint or resume,
        evidence=(f"resume: {resume}",) if hint else (),
        code="job-suspended",
        cause="preparation Jobs suspended",
        lister=_jobs_lister(ns),
    )


def _refused(job: o.Job, prep: Preparation, hint: str | None) -> Finding:
    ns = job.meta.namespace or ""
    first = prep.refusals[0]
    delete = _delete(job)
    return finding(
        "error",
        ObjectRef("Job", job.meta.name, ns),
        f"preparation Job{_on(job.meta)} has no pod: the Job controller's pod creation is refused (FailedCreate: "
        f'{first}): {_prepares(job.meta, hint)}the node\'s entry stays Pulling "{prep.entry_message}" and the '
        f"KernelCache Preparing for good: {NO_WATCH}; fix the refusal, then delete the Job (KServe makes it again)",
        hint=hint or delete,
        evidence=(
            *(f"FailedCreate: {m}" for m in prep.refusals[1:4]),
            *((f"then: {delete}",) if hint else ()),
        ),
        code="job-pod-refused",
        cause=f"preparation Jobs get no pod: {refusal_reason(first)}",
        lister=kubectl(
            "-n {ns} get events --field-selector involvedObject.kind=Job,reason=FailedCreate", ns=Namespace(ns)
        ),
    )


def _orphan(job: o.Job, prep: Preparation, holder: HeldBy | None, job_ns: str) -> Finding:
    ns = job.meta.namespace or ""
    kc_ns, kc_name, _ = job_target(job.meta)
    stuck = ""
    if prep.failure is not None and prep.failed_pod is not None:
        stuck = f" (pod {prep.failed_pod.name}: {prep.failure.message})"
    elif not prep.pods:
        stuck = f" (no pod; {prep.state})"
    lead = (
        f"preparation Job {ns}/{job.meta.name}{_on(job.meta)} was made for KernelCache {kc_ns}/{kc_name}, which "
        f"no longer exists, and has not finished{stuck}"
    )
    delete = _delete(job)
    if holder is not None:
        return finding(
            "error",
            ObjectRef("Job", job.meta.name, ns),
            f"{lead}: with the managed RoleBinding {kc_ns}/{PREFETCHER_RB}, KServe requeues every KernelCache pass "
            f"of namespace {kc_ns} every minute before it creates Jobs or writes status, for good (new caches and "
            "nodes get no Job, statuses are not written): preparation Jobs have no owner and nothing deletes a "
            "stuck one but you",
            hint=delete,
            code="job-orphan",
            cause=f"unfinished preparation Jobs of deleted KernelCaches hold the passes of namespace {kc_ns}",
            lister=kubectl(
                "-n {ns} get jobs -l {selector}",
                ns=Namespace(job_ns),
                selector=Selector.of({c.LABEL_JOB_CACHE_NAMESPACE: label_value(kc_ns)}),
            ),
        )
    return finding(
        "info",
        ObjectRef("Job", job.meta.name, ns),
        f"{lead}: it holds no KernelCache pass while namespace {kc_ns} has no managed RoleBinding {PREFETCHER_RB}, "
        "but nothing deletes it (preparation Jobs have no owner)",
        hint=delete,
        code="job-orphan",
        cause="unfinished preparation Jobs of deleted KernelCaches",
        lister=_jobs_lister(job_ns),
    )


def _pod(pod: o.Pod, prep: Preparation, cache_hint: str | None) -> Finding | None:
    ref = ObjectRef("Pod", pod.name, pod.namespace)
    lead = f"preparation pod{_on(pod.meta)}"
    which = _prepares(pod.meta, cache_hint)
    describe = kubectl("-n {ns} describe pod {pod}", ns=Namespace(pod.namespace), pod=Name("pod", pod.name))
    hint = cache_hint or describe
    lister = kubectl("-n {ns} get pods -l serving.kserve.io/kernel-cache-name -o wide", ns=Namespace(pod.namespace))
    failure = prep_.failed_pod(pod)
    # the agent writes the message of the first of the Job's pods that yields one
    agent = ""
    if failure is not None and pod is prep.failed_pod:
        agent = f'; the node\'s agent marks its entry Error with "{failure.message}"'
    if failure is not None and failure.kind == WAITING:
        what = (
            "the kubelet could not pull an image (the cache artifact is pulled as an image volume): "
            if failure.reason in c.IMAGE_PULL_REASONS
            else ""
        )
        text = f"{failure.reason}: {failure.message}" if failure.message != failure.reason else failure.reason
        return finding(
            "error",
            ref,
            f"{lead} cannot start: {which}container {failure.container} is waiting: {what}{text}{agent}",
            hint=hint,
            evidence=(f"{failure.container}: {failure.reason}", *((f"pod: {describe}",) if cache_hint else ())),
            code="pod-cannot-start",
            cause=f"preparation pods waiting: {text}",
            lister=lister,
        )
    if failure is not None and failure.kind == EXITED:
        detail = ": ".join(dict.fromkeys(x for x in (failure.reason, failure.message) if x))
        logs = pod_logs(pod.namespace, pod.name, failure.container)
        return finding(
            "error",
            ref,
            f"{lead} failed: {which}container {failure.container} exited with code {failure.exit_code} "
            f"(phase {pod.phase or 'unknown'}){agent}; the artifact is not usable on the node",
            hint=cache_hint or logs,
            evidence=(*((detail,) if detail else ()), *((f"logs: {logs}",) if cache_hint else ())),
            code="pod-exited",
            cause=f"preparation pods exited with code {failure.exit_code}",
            lister=lister,
        )
    if failure is not None:
        why = "it was evicted" if failure.reason == "Evicted" else f"phase {pod.phase or 'unknown'}"
        return finding(
            "error",
            ref,
            f"{lead} failed ({why}): {which}{failure.message}{agent}",
            hint=hint,
            evidence=tuple(
                x
                for x in (
                    f"status.reason: {pod.reason}" if pod.reason else "",
                    f"status.message: {pod.message}" if pod.message else "",
                    f"pod: {describe}" if cache_hint else "",
                )
                if x
            ),
            code="pod-failed",
            cause=f"preparation pods failed: {failure.message}",
            lister=lister,
        )
    if pod.scheduled_reason == "Unschedulable":
        return finding(
            "error",
            ref,
            f"{lead} cannot be scheduled: {which}{pod.scheduled_message or pod.scheduled_reason}",
            hint=hint,
            evidence=(f"pod: {describe}",) if cache_hint else (),
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
        yield finding(
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
        if not is_managed(sa.meta.labels):
            yield finding(
                "error",
                ref,
                f"reserved ServiceAccount {job_ns}/{sa.meta.name} already exists and is not managed by "
                f"KernelCache (it lacks label {c.PREFETCHER_MANAGED_LABEL}=true): KServe fails every "
                "KernelCache with this StorageError",
                hint=kubectl(
                    "-n {ns} delete serviceaccount {sa}", ns=Namespace(job_ns), sa=Name("serviceaccount", sa.meta.name)
                )
                + "  # KServe re-creates it",
                code="prefetcher-sa-unmanaged",
            )
        elif sa.automount_token is not False:
            yield finding(
                "error",
                ref,
                f"managed ServiceAccount {job_ns}/{sa.meta.name} must disable token automount "
                f"(automountServiceAccountToken is {'unset' if sa.automount_token is None else 'true'}): "
                "KServe fails every KernelCache with this StorageError",
                hint=kubectl(
                    "-n {ns} patch serviceaccount {sa} -p {body}",
                    ns=Namespace(job_ns),
                    sa=Name("serviceaccount", sa.meta.name),
                    body=Json({"automountServiceAccountToken": False}),
                ),
                code="prefetcher-sa-automount",
            )


def _role_bindings(snapshot: ClusterSnapshot, cfg: KernelCacheConfig) -> Iterator[Finding]:
    if not observed(snapshot, readplan.PREFETCHER_ROLE_BINDINGS, bool(snapshot.role_bindings)):
        return
    pull = cfg.registry.auth.pull_role_ref
    token = cfg.registry.auth.type == AUTH_SA_TOKEN
    job_ns = cfg.job_namespace
    cache_namespaces = {kc.namespace for kc in snapshot.kernel_caches}
    for rb in snapshot.role_bindings:
        ns = rb.meta.namespace or ""
        if rb.meta.name != PREFETCHER_RB or ns not in cache_namespaces:
            continue
        ref = ObjectRef("RoleBinding", rb.meta.name, ns)
        managed = is_managed(rb.meta.labels)
        if not token and not managed:
            continue  # auth none: KServe ignores a binding it does not manage
        # KServe's StorageError for this binding alone (the ServiceAccount is judged above)
        error = identity_error(cfg, ns, (), (rb,)) if pull is not None or not token else ""
        show = kubectl("-n {ns} get rolebinding {rb} -o yaml", ns=Namespace(ns), rb=Name("rolebinding", rb.meta.name))
        delete = kubectl("-n {ns} delete rolebinding {rb}", ns=Namespace(ns), rb=Name("rolebinding", rb.meta.name)) + (
            "  # KServe re-creates it" if token else "  # with auth none KServe needs none"
        )
        if not managed:
            yield finding(
                "error",
                ref,
                f"{error or f'reserved RoleBinding {ns}/{rb.meta.name} is not managed by KernelCache'} (it lacks "
                f"label {c.PREFETCHER_MANAGED_LABEL}=true): KernelCaches in {ns} fail with this StorageError",
                hint=delete,
                code="prefetcher-rb-unmanaged",
            )
            continue
        if not subject_ok(rb):
            yield finding(
                "error",
                ref,
                f"{error or f'managed RoleBinding {ns}/{rb.meta.name} has an unexpected ServiceAccount subject'} "
                f"(KServe wants exactly one subject, ServiceAccount {PREFETCHER_SA}, and patches only its "
                f"namespace): every KernelCache in {ns} fails with this StorageError",
                hint=delete,
                evidence=tuple(f"subject: {k} {n}/{m}" for k, n, m in rb.subjects) or ("no subject",),
                code="prefetcher-rb-subject",
            )
        elif subject_moves(rb, job_ns):
            _, old, name = rb.subjects[0]
            holders = requeue_holders(ns, snapshot.role_bindings, snapshot.jobs, job_ns, None)
            now = (
                f"; {len(holders)} do now (e.g. {holders[0].job.meta.namespace}/{holders[0].job.meta.name})"
                if holders
                else ""
            )
            yield finding(
                "info",
                ref,
                f"managed RoleBinding {ns}/{rb.meta.name} binds ServiceAccount {old or '(no namespace)'}/{name}, "
                f"not the one in the job namespace {job_ns}: KServe "
                f"{'patches the subject' if token else 'deletes the binding (auth none)'} once no prefetch Job "
                f"of namespace {ns} runs{now}; not an error",
                hint=show,
                evidence=tuple(f"subject: {k} {n}/{m}" for k, n, m in rb.subjects),
                code="prefetcher-rb-moving",
            )
        if token and pull is not None and (rb.role_kind, rb.role_name) != (pull.kind, pull.name):
            yield finding(
                "warning",
                ref,
                f"RoleBinding {ns}/{rb.meta.name} binds {rb.role_kind}/{rb.role_name}, not "
                f"registry.auth.pullRoleRef {pull.kind}/{pull.name}: preparation pulls in {ns} use the old "
                "role until KServe replaces the binding (only while no preparation Job of the namespace "
                "runs)",
                hint=show,
                evidence=(f"roleRef: {rb.role_kind}/{rb.role_name}", f"pullRoleRef: {pull.kind}/{pull.name}"),
                code="prefetcher-rb-role",
            )
