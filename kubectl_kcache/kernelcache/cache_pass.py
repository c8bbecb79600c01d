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

import msgspec

from ..objects import Job, KernelCache, NodeGroup, RoleBinding
from . import constants as c
from .capture import MISMATCH, CacheOutcome, terminating_text
from .prefetcher import HeldBy, requeue_holders

TERMINATING = "terminating"
LINK = "link"
NODE_GROUP = "node-group"
PREFETCH_REQUEUE = "prefetch-requeue"
MSG_EMPTY_SELECTOR = "kernelcache node group requires a non-empty nodeSelector"


class Stop(msgspec.Struct, frozen=True):
    """The step (KServe's number and a name) at which the pass stops; `frozen`: nothing is written and the
    pass is retried with backoff (or never, while terminating); otherwise the status lags by a 1-minute
    requeue."""

    step: int
    name: str
    text: str
    frozen: bool = True


def requeue_text(namespace: str, holders: tuple[HeldBy, ...], job_namespace: str) -> str:
    """Why the namespace's passes are requeued, naming the Jobs that hold them (orphans first: they never end
    by themselves)."""
    orphans = [h for h in holders if h.orphan]
    first = holders[0].job
    where = f"{first.meta.namespace or job_namespace}/{first.meta.name}"
    managed = f"the managed RoleBinding {namespace}/{c.PREFETCHER_ROLE_BINDINGS[0]} exists"
    if orphans:
        return (
            f"{len(orphans)} prefetch Job(s) left by deleted KernelCaches of namespace {namespace} have not "
            f"finished (e.g. {where}, for {holders[0].cache}, which no longer exists) and {managed}: KServe "
            "requeues every KernelCache pass of the namespace every minute before it creates Jobs or writes "
            "status, for good: Jobs have no owner and nothing deletes a stuck one but you"
        )
    return (
        f"{len(holders)} prefetch Job(s) of namespace {namespace} are still running (e.g. {where}) and "
        f"{managed}: KServe requeues the pass every minute before it creates Jobs or aggregates status, so the "
        "status lags (new nodes get no Job) until those Jobs finish"
    )


def pass_stop(
    kc: KernelCache,
    *,
    outcomes: Iterable[tuple[str, CacheOutcome]],
    config_ok: bool,
    group: NodeGroup | None,
    role_bindings: Iterable[RoleBinding],
    jobs: Iterable[Job],
    job_namespace: str,
    existing: Iterable[tuple[str, str]] | None = None,
) -> Stop | None:
    """Where the pass for `kc` stops without writing status, or None when it writes one. `outcomes` are
    (capture name, outcome) of the KernelCache's namespace; `config_ok`: the configuration loads and the
    feature is enabled (else steps 4-5 write status); `existing`: (namespace, name) of every KernelCache (a
    Job for none of them is an orphan; None: not known, no Job is called one)."""
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
    if group is None:  # NodeGroupNotFound is written before the prefetcher step: the status is current
        return None
    holders = requeue_holders(kc.namespace, role_bindings, jobs, job_namespace, existing)
    if holders:
        return Stop(10, PREFETCH_REQUEUE, requeue_text(kc.namespace, holders, job_namespace), frozen=False)
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

    kernel_caches = list(kernel_caches)
    rbs, all_jobs = list(role_bindings), list(jobs)
    existing = [(k.namespace, k.name) for k in kernel_caches]
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
            existing=existing,
        )
        if stop is not None:
            out[f"{kc.namespace}/{kc.name}"] = stop
    return out
