"""The prefetcher identity KServe ensures before it makes preparation Jobs, and the requeue that running
prefetch Jobs hold (`prefetch_auth.go@6ca99b0c`, newest `cache_reconciler.go`; reference §5.2).

Identity, for every registry auth type (any failure is `Error/StorageError` for the KernelCache):
* with `serviceAccountToken`, `pullRoleRef` is required (checked first);
* the ServiceAccount `kernel-cache-prefetcher-sa` in the job namespace, when it exists, carries KServe's
  managed label and disables token automount (an absent one is created);
* the RoleBinding `kernel-cache-prefetcher-rb` in the KernelCache's namespace: with `serviceAccountToken`
  one without the managed label is reserved (error); with `none` it is ignored. A managed one must have
  exactly one subject, of kind ServiceAccount and named `kernel-cache-prefetcher-sa`. The subject's
  namespace is not checked: one left in an older job namespace is patched (or, with `none`, the binding
  deleted) once no prefetch Job of the namespace is active. Neither is an error.

Requeue: while a managed binding exists in the KernelCache's namespace and a prefetch Job labelled with
that namespace is neither Complete nor Failed (in the job namespace, or in the namespace of the binding's
subject), every KernelCache pass of the namespace returns `RequeueAfter 1m` before it makes Jobs and before
it writes status. Preparation Jobs have no owner: one left by a deleted KernelCache and stuck (e.g. its pod
in ImagePullBackOff, which never fails) holds the namespace for good, until it is deleted by hand.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from ..objects import Job, RoleBinding, ServiceAccount
from . import constants as c
from .config import AUTH_SA_TOKEN, KernelCacheConfig
from .names import label_value
from .preparation import job_finished, job_target

SERVICE_ACCOUNT = c.PREFETCHER_SERVICE_ACCOUNTS[0]
ROLE_BINDING = c.PREFETCHER_ROLE_BINDINGS[0]
MSG_PULL_ROLE_REQUIRED = "registry pull RoleRef is required for serviceAccountToken authentication"


def is_managed(meta_labels: dict[str, str]) -> bool:
    """The prefetcher ServiceAccount or RoleBinding carries KServe's managed label."""
    return meta_labels.get(c.PREFETCHER_MANAGED_LABEL) == "true"


def prefetcher_binding(role_bindings: Iterable[RoleBinding], namespace: str) -> RoleBinding | None:
    return next((rb for rb in role_bindings if rb.meta.namespace == namespace and rb.meta.name == ROLE_BINDING), None)


def subject_ok(rb: RoleBinding) -> bool:
    """A managed binding's subject as KServe requires it: exactly one, a ServiceAccount of KServe's name, in
    any namespace."""
    subjects = rb.subjects
    return len(subjects) == 1 and subjects[0][0] == "ServiceAccount" and subjects[0][2] == SERVICE_ACCOUNT


def subject_moves(rb: RoleBinding, job_namespace: str) -> bool:
    """A managed binding whose one subject is in another namespace than the job namespace: KServe patches it
    (or deletes the binding with auth `none`) once no prefetch Job of the namespace is active. Not an error."""
    return subject_ok(rb) and rb.subjects[0][1] != job_namespace


def identity_error(
    cfg: KernelCacheConfig,
    namespace: str,
    service_accounts: Iterable[ServiceAccount],
    role_bindings: Iterable[RoleBinding],
) -> str:
    """KServe's StorageError message for a KernelCache of `namespace`, or "" when the prefetcher identity is
    as KServe needs it (or KServe makes it itself)."""
    token = cfg.registry.auth.type == AUTH_SA_TOKEN
    if token and cfg.registry.auth.pull_role_ref is None:
        return MSG_PULL_ROLE_REQUIRED
    job_ns = cfg.job_namespace
    sa = next((s for s in service_accounts if s.meta.namespace == job_ns and s.meta.name == SERVICE_ACCOUNT), None)
    if sa is not None:
        if not is_managed(sa.meta.labels):
            return (
                f"reserved ServiceAccount {job_ns}/{SERVICE_ACCOUNT} already exists and is not managed by KernelCache"
            )
        if sa.automount_token is not False:
            return f"managed ServiceAccount {job_ns}/{SERVICE_ACCOUNT} must disable token automount"
    rb = prefetcher_binding(role_bindings, namespace)
    if rb is None:
        return ""
    if not is_managed(rb.meta.labels):
        if token:
            return f"reserved RoleBinding {namespace}/{ROLE_BINDING} already exists and is not managed by KernelCache"
        return ""
    if not subject_ok(rb):
        return f"managed RoleBinding {namespace}/{ROLE_BINDING} has an unexpected ServiceAccount subject"
    return ""


class HeldBy(msgspec.Struct, frozen=True):
    """A prefetch Job that is neither Complete nor Failed and holds the passes of its namespace; `orphan`:
    the KernelCache it was made for no longer exists."""

    job: Job
    cache: str  # namespace/name as the Job names it (a hashed label value when KServe hashed it)
    orphan: bool


def requeue_holders(
    namespace: str,
    role_bindings: Iterable[RoleBinding],
    jobs: Iterable[Job],
    job_namespace: str,
    existing: Iterable[tuple[str, str]] | None,
) -> tuple[HeldBy, ...]:
    """The Jobs that make KServe requeue every KernelCache pass of `namespace` (empty: none do). `existing`:
    (namespace, name) of every KernelCache there is (None: not known, no Job is called an orphan)."""
    rb = prefetcher_binding(role_bindings, namespace)
    if rb is None or not is_managed(rb.meta.labels) or not subject_ok(rb):
        return ()  # no managed binding, or one KServe fails on first (StorageError, written before the requeue)
    where = {job_namespace} | {ns for kind, ns, _ in rb.subjects if kind == "ServiceAccount" and ns}
    ns_label = label_value(namespace)
    known = None if existing is None else list(existing)
    alive = set() if known is None else {(ns, label_value(name)) for ns, name in known} | set(known)
    out = []
    for job in jobs:
        if job.meta.namespace not in where or job_finished(job):
            continue
        if job.meta.labels.get(c.LABEL_JOB_CACHE_NAMESPACE) != ns_label:
            continue
        _, name, _ = job_target(job.meta)
        out.append(HeldBy(job, f"{namespace}/{name}", known is not None and (namespace, name) not in alive))
    return tuple(sorted(out, key=lambda h: (not h.orphan, h.job.meta.name)))
