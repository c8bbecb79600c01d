"""`why-not-cached -A`: the cache hit rate of the serving fleet, one row per InferenceService (and per revision
where they differ), from one list of pods.

Pure. Every pod's answer is the single-pod answer (`why_not_cached.explained`) over KServe's decision
(`kernelcache.admission.decide`); the decision is made once per distinct pod template (the pod as its
controller created it: labels, annotations, containers, init containers, volumes), so the pods of one
ReplicaSet share one decision. Nothing here re-states a KServe rule: it counts.

Per pod:
* `cached`: KServe's webhook mounted a KernelCache when the pod was created (its mutation is on the pod);
* `producer`: it did not, by design (`kernelcache.cold_start`): it is the producer of a cache (the pod a
  capture's active session names: it compiled the kernels itself and holds them), or its revision is still
  being captured; not a miss, not in the hit rate's denominator;
* `cold`: it did not, and is not a producer (a miss leaves no record but the absence of the mutation);
* `now`: a cold pod for which admission today would mount a KernelCache: recreating it would help;
* `denied`: admission today would reject the pod (HTTP 400/500): its next replacement fails to be created;
* `unprepared`: a cached pod whose node has no Ready entry of its KernelCache: the artifact was pulled cold;
* the gate that stops admission today (`blockedBy`, as the single answer words it) for pods that would not
  get a cache now.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from ..errors import InputError
from ..kernelcache import admission as a
from ..kernelcache import constants as c
from ..kernelcache.config import read_config
from ..kernelcache.selectors import label_selector_matches, parse_label_selector
from ..objects import KernelCache, LabelSelector, Pod
from ..snapshot import plan
from ..snapshot.kinds import ListSpec
from ..snapshot.model import ClusterSnapshot
from ..snapshot.reads import covering, require
from ..suggest import Name, Namespace, kubectl
from .why_not_cached import (
    Placement,
    WhyNotCached,
    admission_inputs,
    explained,
    furthest_candidate,
    require_captures,
    required,
)

KIND = "WhyNotCachedFleet"
VERSION = 1
LABEL_REVISION = "serving.knative.dev/revision"  # Serverless mode: the Knative revision of the predictor
_KEY_ENCODER = msgspec.json.Encoder(order="deterministic")  # maps by key: equal content, equal key
_TOKEN_VOLUME = re.compile(rb'"kube-api-access-[a-z0-9]{5}"')
_GATE_ORDER = {g: i for i, g in enumerate(a.POD_GATES + a.CANDIDATE_GATES)}


class PodResult(msgspec.Struct, frozen=True):
    """One serving pod: its history, what admission would do now, and the single answer's next command (what
    the fleet keeps of the pod's `WhyNotCached`: the decisions' candidates are not kept)."""

    namespace: str
    name: str
    isvc: str
    revision: str
    deployment: str  # the Deployment that owns its ReplicaSet ("" when unknown)
    node: str
    created: str
    cached: bool  # at admission
    kernel_cache: str  # the KernelCache it records ("" when none)
    outcome: str  # what admission would do now: cached, not-cached, rejected, not-called
    now_cache: str | None  # the KernelCache admission would mount now
    match: str | None
    now_blocked_by: str | None  # the single answer's result.now.blockedBy
    placement: Placement | None
    next_command: str
    now_document: dict[str, Any]  # the single answer's result.now, without the denial's text
    cold_by_design: dict[str, Any] | None = None  # the single answer's result.coldByDesign

    @staticmethod
    def of(why: WhyNotCached, revision: str, deployment: str) -> PodResult:
        adm = why.admission
        return PodResult(
            why.namespace,
            why.pod_name,
            why.isvc,
            revision,
            deployment,
            why.node,
            why.created,
            bool(why.cached),
            why.recorded_cache,
            adm.outcome,
            adm.cached_kernel_cache,
            adm.match,
            why.now_blocked_by,
            why.placement,
            why.next_command,
            why.now_document(),
            why.cold.to_dict() if why.cold is not None else None,
        )

    @property
    def producer(self) -> bool:
        """Started cold by design: a producer, or its revision is being captured (not a miss)."""
        return not self.cached and self.cold_by_design is not None

    @property
    def cold(self) -> bool:
        """A miss: started without a cache, not by design."""
        return not self.cached and self.cold_by_design is None

    @property
    def now(self) -> bool:
        """Cold (a miss), and admission today would mount a cache: a recreate helps."""
        return self.cold and self.outcome == a.CACHED

    @property
    def denied(self) -> bool:
        return self.outcome == a.REJECTED

    @property
    def unprepared(self) -> bool:
        p = self.placement
        return self.cached and p is not None and not p.prepared

    @property
    def blocked_by(self) -> str | None:
        """The gate that stops admission today, for a pod that would not get a cache now."""
        return None if self.outcome == a.CACHED else self.now_blocked_by

    def to_dict(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "name": self.name,
            "inferenceService": self.isvc or None,
            "revision": self.revision or None,
            "node": self.node or None,
            "createdAt": self.created or None,
            "cached": self.cached,
            "kernelCache": self.kernel_cache or None,
            "now": self.now_document,
            "placement": self.placement.to_dict() if self.placement is not None else None,
            "coldByDesign": self.cold_by_design,
            "next": self.next_command or None,
        }


class Totals(msgspec.Struct, frozen=True):
    pods: int = 0
    cached: int = 0
    cold: int = 0
    now: int = 0
    denied: int = 0
    unprepared: int = 0
    producer: int = 0  # started cold by design: not in the hit rate's denominator

    @property
    def hit_rate(self) -> int | None:
        """Cached at admission, in percent of the pods that could be (producers left out); None without any."""
        return hit_rate_percent(self.cached, self.pods - self.producer)

    def to_dict(self) -> dict[str, int]:
        return {
            "pods": self.pods,
            "cached": self.cached,
            "cold": self.cold,
            "wouldBeCachedNow": self.now,
            "denied": self.denied,
            "unprepared": self.unprepared,
            "producer": self.producer,
        }


class Row(Totals, frozen=True, kw_only=True):
    """The counts of one InferenceService (revision "") or of one of its revisions."""

    namespace: str
    isvc: str
    revision: str
    gate: str  # the most common blocking gate ("" when none)
    gate_count: int
    next_command: str
    sample: str  # the pod the next command is about

    def to_dict(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "inferenceService": self.isvc or None,
            "revision": self.revision or None,
            **Totals.to_dict(self),
            "topGate": {"id": self.gate, "pods": self.gate_count} if self.gate else None,
            "next": self.next_command or None,
        }


def hit_rate_percent(cached: int, eligible: int) -> int | None:
    """The hit rate, in whole percent (rounded down), over the pods that are not cold by design."""
    return 100 * cached // eligible if eligible > 0 else None


class FleetHitRate(msgspec.Struct, frozen=True):
    """What `why-not-cached -A` renders; `to_dict()` is its `-o json` document (without `source`)."""

    rows: tuple[Row, ...]  # an InferenceService's row, then its revisions' rows when they differ
    pods: tuple[PodResult, ...]
    totals: Totals
    decisions: int  # distinct pod templates decided
    namespace: str | None = None
    selector: str = ""
    isvc: str = ""

    def to_dict(self) -> dict[str, Any]:
        isvcs = len({(r.namespace, r.isvc) for r in self.rows})
        return {
            "kind": KIND,
            "version": VERSION,
            "scope": {
                "namespace": self.namespace,
                "selector": self.selector or None,
                "inferenceService": self.isvc or None,
            },
            "summary": {**self.totals.to_dict(), "inferenceServices": isvcs, "decisions": self.decisions},
            "inferenceServices": [r.to_dict() for r in self.rows],
            "pods": [p.to_dict() for p in self.pods],
        }

    @property
    def all_cached(self) -> bool:
        """No miss: every pod got a cache at admission or started cold by design."""
        return self.totals.cold == 0

    @property
    def clean(self) -> bool:
        """What exit 0 says: no miss, and no pod whose replacement admission would deny."""
        return self.all_cached and self.totals.denied == 0


# ---- scope ---------------------------------------------------------------------------------------------


def check_selector(selector: str) -> LabelSelector:
    """`-l` as a LabelSelector; InputError (exit 2) naming the term that cannot be read."""
    try:
        return parse_label_selector(selector)
    except ValueError as exc:
        raise InputError(f"-l: {exc}") from None


def serving_pods(snapshot: ClusterSnapshot, namespace: str | None, selector: str = "", isvc: str = "") -> list[Pod]:
    """The pods of InferenceServices in scope (the label `serving.kserve.io/inferenceservice`), sorted."""
    parsed = check_selector(selector)
    out = [
        p
        for p in snapshot.pods_labelled(namespace, c.LABEL_ISVC)  # (kept while the pods are the same)
        if (not isvc or p.meta.labels[c.LABEL_ISVC] == isvc) and label_selector_matches(parsed, p.meta.labels)
    ]
    return sorted(out, key=lambda p: (p.namespace, p.meta.labels[c.LABEL_ISVC], p.name))


def _owner(pod: Pod) -> tuple[str, str]:
    """(revision, Deployment): the controlling ReplicaSet (the Deployment is its name without the pod's
    pod-template-hash), else the Knative revision label."""
    rs = next((o.name for o in pod.meta.owner_references if o.kind == "ReplicaSet" and o.controller), "") or next(
        (o.name for o in pod.meta.owner_references if o.kind == "ReplicaSet"), ""
    )
    knative = pod.meta.labels.get(LABEL_REVISION, "")
    hash_ = pod.meta.labels.get(c.LABEL_POD_TEMPLATE_HASH, "")
    deployment = rs[: -len(hash_) - 1] if rs and hash_ and rs.endswith("-" + hash_) else ""
    return knative or rs, deployment


def template_key(pod: Pod) -> bytes:
    """What KServe's decision reads of a pod as its controller created it: equal keys, equal decisions.

    The service account token volume gets a random name per pod (`kube-api-access-x7k2p`, added by the API
    server's ServiceAccount admission before webhooks are called); the decision compares volume names only with
    the webhook's own (`kernel-cache-source`, `kernel-cache-runtime-<i>`), so the suffix is left out and the pods
    of one ReplicaSet share one key."""
    spec = pod.spec
    key = _KEY_ENCODER.encode(
        (
            pod.namespace,
            pod.meta.labels,
            pod.meta.annotations,
            spec.containers if spec else (),
            spec.init_containers if spec else (),
            spec.volumes if spec else None,
        )
    )
    return _TOKEN_VOLUME.sub(b'"kube-api-access-"', key)


# ---- the whole fleet --------------------------------------------------------------------------------------


def hit_rate(
    snapshot: ClusterSnapshot, namespace: str | None = None, selector: str = "", isvc: str = ""
) -> FleetHitRate:
    """The fleet's hit rate over the serving pods in scope (namespace None: every namespace)."""
    pods = serving_pods(snapshot, namespace, selector, isvc)
    require_fleet_reads(snapshot, namespace, selector, isvc)
    if any(not a.recorded_cache(p)[0] for p in pods):  # whether a pod without a cache is a producer
        require_captures(snapshot, namespace)
    config = read_config(snapshot.configmap(c.KSERVE_NAMESPACE, c.CONFIGMAP_NAME))

    entries = a.entries_of(snapshot)
    caches: dict[str, dict[str, KernelCache]] = {}
    for k, v in snapshot.kc_by_key.items():
        caches.setdefault(v.namespace, {})[k] = v
    by_template: dict[bytes, list[int]] = {}
    for i, pod in enumerate(pods):
        by_template.setdefault(template_key(a.pre_admission(pod)), []).append(i)
    results: list[PodResult | None] = [None] * len(pods)
    for members in by_template.values():  # one decision at a time: its candidates are dropped after its pods
        first = pods[members[0]]
        adm = a.decide(
            admission_inputs(
                snapshot, first.namespace, first, config, entries, caches.get(first.namespace, {}), miss_details=False
            )
        )
        furthest = (furthest_candidate(adm),)
        for i in members:
            why = explained(snapshot, pods[i], adm, config, furthest=furthest, counting=True)
            results[i] = PodResult.of(why, *_owner(pods[i]))
    done = [r for r in results if r is not None]
    rows = _rows(done)
    return FleetHitRate(
        rows=tuple(rows),
        pods=tuple(done),
        totals=_totals(done),
        decisions=len(by_template),
        namespace=namespace,
        selector=selector,
        isvc=isvc,
    )


def fleet_pods_list(namespace: str | None, selector: str = "", isvc: str = "") -> ListSpec:
    """The one list of serving pods in scope (the label, --isvc and -l as one label selector)."""
    labels = ",".join(x for x in (c.LABEL_ISVC, f"{c.LABEL_ISVC}={isvc}" if isvc else "", selector) if x)
    return ListSpec(plan.ISVC_PODS.resource, namespace, label_selector=labels)


def require_fleet_reads(snapshot: ClusterSnapshot, namespace: str | None, selector: str = "", isvc: str = "") -> None:
    """The single answer's needs (`why_not_cached.required`), with the serving pods in scope for the pod."""
    needs = [fleet_pods_list(namespace, selector, isvc), *required(namespace or "", None)]
    needs = [n.in_namespace(None) if n.plural == c.PLURAL_CACHES and namespace is None else n for n in needs]
    if covering(snapshot, plan.WEBHOOK).failed:
        needs.append(plan.WEBHOOK)
    require(snapshot, "why-not-cached", needs)


def _totals(results: Sequence[PodResult]) -> Totals:
    return Totals(
        pods=len(results),
        cached=sum(p.cached for p in results),
        cold=sum(p.cold for p in results),
        now=sum(p.now for p in results),
        denied=sum(p.denied for p in results),
        unprepared=sum(p.unprepared for p in results),
        producer=sum(p.producer for p in results),
    )


def top_gate(results: Iterable[PodResult]) -> tuple[str, int]:
    """The gate that blocks the most pods (KServe's order breaks ties), and how many."""
    counts = Counter(p.blocked_by for p in results if p.blocked_by)
    if not counts:
        return "", 0
    gate = min(counts, key=lambda g: (-counts[g], _GATE_ORDER.get(g, 99), g))
    return gate, counts[gate]


def _row(namespace: str, isvc: str, revision: str, results: Sequence[PodResult]) -> Row:
    gate, gate_count = top_gate(results)
    next_command, sample = _next(results, gate)
    return Row(
        **msgspec.structs.asdict(_totals(results)),
        namespace=namespace,
        isvc=isvc,
        revision=revision,
        gate=gate,
        gate_count=gate_count,
        next_command=next_command,
        sample=sample,
    )


def _next(results: Sequence[PodResult], gate: str) -> tuple[str, str]:
    """What to do first: a denial (the next replacement pod fails), then a recreate that would help, then the
    top gate, then a cold pull; the single answer's next command for the first pod concerned."""
    denied = [p for p in results if p.denied]
    now = [p for p in results if p.now]
    gated = [p for p in results if gate and p.blocked_by == gate]
    unprepared = [p for p in results if p.unprepared]
    if not denied and now:
        deployments = {p.deployment for p in now}
        if len(deployments) == 1 and "" not in deployments:
            first = now[0]
            return kubectl(
                "-n {ns} rollout restart deployment/{deployment}",
                ns=Namespace(first.namespace),
                deployment=Name("deployment", first.deployment),
            ), first.name
    for group in (denied, now, gated, unprepared):
        if group:
            first = group[0]
            return (
                first.next_command
                or kubectl(
                    "kcache why-not-cached {pod} -n {ns}", pod=Name("pod", first.name), ns=Namespace(first.namespace)
                )
            ), first.name
    return "", ""


def _signature(results: Iterable[PodResult]) -> frozenset[tuple[bool, bool, str, str | None, bool]]:
    return frozenset((p.cached, p.producer, p.outcome, p.blocked_by, p.unprepared) for p in results)


def _rows(results: Sequence[PodResult]) -> list[Row]:
    by_isvc: dict[tuple[str, str], list[PodResult]] = {}
    for p in results:
        by_isvc.setdefault((p.namespace, p.isvc), []).append(p)
    rows = []
    for (ns, isvc), mine in by_isvc.items():
        rows.append(_row(ns, isvc, "", mine))
        revisions: dict[str, list[PodResult]] = {}
        for p in mine:
            revisions.setdefault(p.revision, []).append(p)
        if len(revisions) > 1 and len({_signature(v) for v in revisions.values()}) > 1:
            rows += [_row(ns, isvc, rev, revisions[rev]) for rev in sorted(revisions)]
    return rows
