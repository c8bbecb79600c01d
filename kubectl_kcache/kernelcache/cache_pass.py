"""Where KServe's KernelCache pass stops before it writes status (newest `cache_reconciler.go`,
`cache_status.go`, `prefetch_auth.go`): then the status shown is not a current answer, and whoever reads it
must say which step KServe is stuck at instead of judging it.

KServe's order, the first that stops the pass decides: 1 `deletionTimestamp` set: return at once, nothing
written; 2 the capture link (`setCaptureKernelCacheRef`): an artifact mismatch is returned, no status; 3
usage; 4 ConfigError; 5 FeatureDisabled; 6 VerificationFailed; 7 NodeGroupNotFound; 8 `nodegroup.GetNodes`:
a group with an empty nodeSelector is an error, no status; then NoMatchingNodes, NoReadyNodes; 9 the job
namespace; 10 the prefetcher ServiceAccount and RoleBinding: while a managed `kernel-cache-prefetcher-rb`
exists in the namespace and a prefetch Job of the namespace is not finished, `RequeueAfter 1m` with
nothing written (the status lags); 11 Jobs; 12 the aggregate. Steps 4-7 and 9-12 write status, so only 1,
2, 8 and 10 leave it as it was.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..objects import Job, KernelCache, NodeGroup, RoleBinding
from . import constants as c
from .capture import MISMATCH, CacheOutcome, terminating_text
from .names import label_value

TERMINATING = "terminating"
LINK = "link"
NODE_GROUP = "node-group"
PREFETCH_REQUEUE = "prefetch-requeue"
MSG_EMPTY_SELECTOR = "kernelcache node group requires a non-empty nodeSelector"


@dataclass(frozen=True)
class Stop:
    """The step (KServe's number and a name) at which the pass stops; `frozen`: nothing is written and the
    pass is retried with backoff (or never, while terminating); otherwise the status lags by a 1-minute
    requeue."""

    step: int
    name: str
    text: str
    frozen: bool = True


def job_finished(job: Job) -> bool:
    return any(x.type in ("Complete", "Failed") and x.status == "True" for x in job.conditions)


def pass_stop(
    kc: KernelCache,
    *,
    outcomes: Iterable[tuple[str, CacheOutcome]],
    config_ok: bool,
    group: NodeGroup | None,
    role_bindings: Iterable[RoleBinding],
    jobs: Iterable[Job],
    job_namespace: str,
) -> Stop | None:
    """Where the pass for `kc` stops without writing status, or None when it writes one. `outcomes` are
    (capture name, outcome) of the KernelCache's namespace; `config_ok`: the configuration loads and the
    feature is enabled (else steps 4-5 write status)."""
    captures = [(name, o) for name, o in outcomes if o.kernel_cache == kc.name]
    if kc.meta.deleting:
        return Stop(1, TERMINATING, terminating_text(kc, captures[0][0] if captures else ""))
    mismatch = next((o for _, o in captures if o.outcome == MISMATCH), None)
    if mismatch is not None:
        return Stop(
            2,
            LINK,
            f"{mismatch.reason}: KServe's pass stops there, before usage, verification, Jobs and "
            "status, and is retried with backoff: the status shown is from before",
        )
    if not config_ok:
        return None
    if group is not None and not group.node_selector:
        return Stop(
            8,
            NODE_GROUP,
            f"group {group.name} has an empty nodeSelector: KServe's pass fails with "
            f'"{MSG_EMPTY_SELECTOR}" and writes no status (the status shown is from before)',
        )
    managed = next(
        (
            rb
            for rb in role_bindings
            if rb.meta.namespace == kc.namespace
            and rb.meta.name == c.PREFETCHER_ROLE_BINDINGS[0]
            and rb.meta.labels.get(c.PREFETCHER_MANAGED_LABEL) == "true"
        ),
        None,
    )
    if managed is None:
        return None
    running = [
        j
        for j in jobs
        if j.meta.namespace == job_namespace
        and not job_finished(j)
        and j.meta.labels.get(c.LABEL_JOB_CACHE_NAMESPACE) == label_value(kc.namespace)
    ]
    if running:
        return Stop(
            10,
            PREFETCH_REQUEUE,
            f"{len(running)} prefetch Job(s) of namespace {kc.namespace} are still running (e.g. "
            f"{job_namespace}/{running[0].meta.name}) and the managed RoleBinding "
            f"{kc.namespace}/{c.PREFETCHER_ROLE_BINDINGS[0]} exists: KServe requeues the pass every minute "
            "before it creates Jobs or aggregates status, so the status lags (new nodes get no Job) until "
            "those Jobs finish",
            frozen=False,
        )
    return None


def stops_by_cache(
    kernel_caches: Iterable[KernelCache],
    outcomes: Mapping[tuple[str, str], CacheOutcome],
    *,
    config_ok: bool,
    groups: Mapping[str, NodeGroup],
    default_group: str,
    role_bindings: Iterable[RoleBinding],
    jobs: Iterable[Job],
    job_namespace: str,
) -> dict[str, Stop]:
    """ "namespace/name" -> where its pass stops, for each KernelCache whose status KServe does not write."""
    from .caches import effective_group

    rbs, all_jobs = list(role_bindings), list(jobs)
    out = {}
    for kc in kernel_caches:
        mine = [(name, o) for (ns, name), o in outcomes.items() if ns == kc.namespace]
        stop = pass_stop(
            kc,
            outcomes=mine,
            config_ok=config_ok,
            group=groups.get(effective_group(kc, default_group)),
            role_bindings=rbs,
            jobs=all_jobs,
            job_namespace=job_namespace,
        )
        if stop is not None:
            out[f"{kc.namespace}/{kc.name}"] = stop
    return out
