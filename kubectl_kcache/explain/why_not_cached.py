"""why-not-cached (alias why-cached): whether a serving pod got a KernelCache from KServe's pod webhook,
and why or why not, step by step.

Pure: a snapshot and a pod (from the snapshot, or a manifest for a pod that does not exist yet) in, a
`WhyNotCached` out. The decision is `kernelcache.admission.decide`, the one implementation of KServe's
webhook rules; this module only picks its inputs and words the answer.

Two answers, kept apart:
* history (`result.cached`, `result.kernelCache`): admission ran once, when the pod was created; the
  webhook's mutation on the pod (usage annotation, `kernel-cache-linker` init container,
  `kernel-cache-source` volume) is the only record of a hit, and a miss leaves none;
* now (`result.now`): what admission would do if this pod were created against today's state.

When they differ the answer says why and what to do, most often "the cache became Ready after the pod was
created: recreate the pod". For a hit it also checks where the pod runs: KServe adds no node affinity, so
a pod on a node without a Ready entry (outside the KernelCache's group, or not prepared yet) pulled the
artifact itself when it started.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import msgspec

from ..errors import InputError
from ..kernelcache import admission as a
from ..kernelcache import constants as c
from ..kernelcache.caches import effective_group
from ..kernelcache.cold_start import PRODUCER, ColdByDesign, capture_index, cold_by_design
from ..kernelcache.commands import why_not_ready_command
from ..kernelcache.config import ConfigState, read_config
from ..kernelcache.names import capture_revision_name
from ..kernelcache.render import NEW_REVISION
from ..kernelcache.selectors import label_mismatch, selector_matches
from ..kernelcache.webhook_reach import ready_endpoints
from ..objects import KernelCache, Pod, find_condition, parse_time
from ..snapshot import plan
from ..snapshot.kinds import ListSpec
from ..snapshot.model import ClusterSnapshot
from ..snapshot.reads import covering, require, unusable
from ..suggest import Json, Name, Namespace, Selector, kubectl

KIND = "WhyNotCached"
VERSION = 1
BASIS_POD = "pod"
BASIS_MANIFEST = "manifest"
# What the decision cannot do without is `required`; anything else (the namespace, nodes, groups, and the
# webhook configuration when it is merely missing from plain input files) only refines the answer, and
# is named in it (`unread`) when it could not be read.


class Placement(msgspec.Struct, frozen=True):
    """Where a pod with a cache runs, against where the cache was prepared."""

    node: str
    kernel_cache: str
    group: str
    node_in_group: bool | None  # None: the node or the group could not be read
    entry_state: str  # the KernelCacheNode entry on the pod's node ("" when none)
    missing_labels: Mapping[str, str] = msgspec.field(default_factory=dict)
    selector: Mapping[str, str] = msgspec.field(default_factory=dict)

    @property
    def prepared(self) -> bool:
        return self.entry_state == c.ENTRY_READY

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "group": self.group or None,
            "nodeInGroup": self.node_in_group,
            "entryOnNode": self.entry_state or None,
            "preparedOnNode": self.prepared,
        }


@dataclass(frozen=True)
class WhyNotCached:
    """The explanation; `to_dict()` is the `why-not-cached -o json` document."""

    basis: str
    namespace: str
    pod_name: str
    node: str
    created: str
    cached: bool | None  # None for a manifest: no history
    recorded_cache: str  # the usage annotation's value
    admission: a.Admission
    placement: Placement | None = None
    notes: tuple[str, ...] = ()
    next_command: str = ""
    isvc: str = ""
    source_note: str = ""  # how a manifest was rendered
    # which pods use the KernelCache the pod has (or would get), on which nodes (KernelCache.status.usage, each
    # KernelCacheNode's totalPodsUsing); None without one
    usage: dict[str, Any] | None = None
    # lists that refine the answer but could not be read (`forbidden: list mutatingwebhookconfigurations`)
    unread: tuple[str, ...] = ()
    # furthest_candidate(admission), when already known (pods that share a decision share it)
    furthest: tuple[a.Candidate | None] | None = field(default=None, compare=False, repr=False)
    # a pod that started cold by design (a producer, or its revision is being captured): not a miss
    cold: ColdByDesign | None = None

    @property
    def best_candidate(self) -> a.Candidate | None:
        return self.furthest[0] if self.furthest is not None else furthest_candidate(self.admission)

    @property
    def now_blocked_by(self) -> str | None:
        """The first gate that stops admission today; for `selection`, the gate that stopped the candidate
        that got furthest (`verification`, `footprint`...), which names the fix."""
        gate = self.admission.blocked_by
        if gate is None:
            return None
        if gate.id in (a.CANDIDATES, a.SELECTION):
            best = self.best_candidate
            if best is not None and best.rejected_by:
                return best.rejected_by
        return gate.id

    @property
    def denied(self) -> bool:
        """Admission today would reject the pod: its next replacement fails to be created (the worst news)."""
        return self.admission.outcome == a.REJECTED

    @property
    def exit_cached(self) -> bool:
        """What the exit code reports: the pod's history (a pod cold by design is not a miss), or for a manifest
        the prediction; a pod whose replacement admission would deny is a negative verdict either way."""
        if self.denied:
            return False
        if self.cached is not None:
            return bool(self.cached) or self.cold is not None
        return self.admission.outcome == a.CACHED

    def now_document(self) -> dict[str, Any]:
        """What admission would do today, as `result.now` says it (without the denial's text)."""
        adm = self.admission
        return {
            "kernelCache": adm.cached_kernel_cache,
            "match": adm.match,
            "blockedBy": self.now_blocked_by,
            "outcome": adm.outcome,
            # False when the answer rests on something KServe's stored code leaves open
            "certain": not (adm.outcome == a.CACHED and adm.inferred),
            "inferred": list(adm.inferred) if adm.outcome == a.CACHED else [],
        }

    def to_dict(self) -> dict[str, Any]:
        adm = self.admission
        ident = adm.identity
        denial = a.denial_message(adm)
        return {
            "kind": KIND,
            "version": VERSION,
            "basis": self.basis,
            "pod": {
                "namespace": self.namespace,
                "name": self.pod_name,
                "node": self.node or None,
                "createdAt": self.created or None,
            },
            "result": {
                "cached": self.cached,
                "kernelCache": self.recorded_cache or None,
                "now": {**self.now_document(), "denial": denial or None},
                "placement": self.placement.to_dict() if self.placement is not None else None,
                "coldByDesign": self.cold.to_dict() if self.cold is not None else None,
            },
            "gates": [_gate_dict(g) for g in adm.gates],
            "footprints": {
                "workload": (ident.workload_footprint or None) if ident else None,
                "compatibility": (ident.compatibility_footprint or None) if ident else None,
            },
            "factors": dict(ident.factors) if ident else None,
            "candidates": [_candidate_dict(x, adm.winner) for x in adm.candidates],
            "injection": _injection_dict(adm.injection),
            "usage": self.usage,
            "notes": list(self.notes),
            "next": self.next_command or None,
            "unread": list(self.unread),
        }


def _gate_dict(g: a.Gate) -> dict[str, Any]:
    out: dict[str, Any] = {"id": g.id, "passed": g.passed, "detail": g.detail}
    if g.effect:
        out["effect"] = g.effect
    return out


def _candidate_dict(cand: a.Candidate, winner: a.Candidate | None) -> dict[str, Any]:
    return {
        "kernelCache": cand.key,
        "rejectedBy": cand.rejected_by,
        "selected": winner is not None and cand.key == winner.key,
        "match": cand.match,
        "detail": cand.detail,
        "nodes": [
            {
                "name": e.node,
                "state": e.entry.state or None,
                "lastUpdate": e.entry.last_update or None,
                "imageReference": e.entry.image_reference or None,
            }
            for e in cand.entries
        ],
    }


def _injection_dict(inj: a.Injection | None) -> dict[str, Any] | None:
    if inj is None:
        return None
    return {
        "kernelCache": inj.kernel_cache,
        "volumes": [{"name": v.name, **dict(v.spec)} for v in inj.volumes],
        "mounts": [
            {"container": m.container, "name": m.name, "mountPath": m.path, "readOnly": m.read_only} for m in inj.mounts
        ],
        "initContainer": {
            "name": c.LINKER_CONTAINER,
            "image": inj.linker_image,
            "args": list(inj.linker_args),
            "added": inj.linker_added,
        },
        "annotations": {inj.annotation[0]: inj.annotation[1]},
    }


def furthest_candidate(adm: a.Admission) -> a.Candidate | None:
    """The rejected KernelCache that got furthest (the first on ties): a footprint mismatch is the least
    progress; a cache that matches the pod but has no Ready entry, or lives in another namespace, comes next;
    then KServe's candidates by the gate that stopped them."""
    order = {g: i for i, g in enumerate(a.CANDIDATE_GATES)}

    def rank(x: a.Candidate) -> float:
        if x.rejected_by == a.FOOTPRINT:
            return -1
        if not x.candidate:
            return -0.5
        return order.get(x.rejected_by or "", -2)

    rejected = [x for x in adm.candidates if x.rejected_by and (x.candidate or matches_pod(x, adm))]
    return max(rejected, key=rank, default=None)


def matches_pod(cand: a.Candidate, adm: a.Admission) -> bool:
    """Whether a KernelCache KServe did not collect would match the pod: one in another namespace (listed
    only when its entries match), or one whose own spec footprints match."""
    if cand.rejected_by == a.NAMESPACE:
        return True
    return _spec_matches(cand.kernel_cache, adm)


# ---- inputs ------------------------------------------------------------------------------------------


def _present(snapshot: ClusterSnapshot, resource: str) -> bool:
    field_name = {
        "pods": "pods",
        c.PLURAL_NODES: "kcns",
        c.PLURAL_CAPTURES: "captures",
        c.PLURAL_CACHES: "kernel_caches",
        "configmaps": "configmaps",
        "mutatingwebhookconfigurations": "webhooks",
        "namespaces": "namespaces",
        "nodes": "nodes",
        c.PLURAL_NODE_GROUPS: "node_groups",
    }[resource]
    return bool(getattr(snapshot, field_name))


def _usable(snapshot: ClusterSnapshot, spec: ListSpec) -> bool:
    """Whether an empty result can be trusted: the read was ok, and plain files hold that kind at all."""
    if not covering(snapshot, spec).ok:
        return False
    return not snapshot.reads_assumed or _present(snapshot, spec.plural)


def _usable_captures(snapshot: ClusterSnapshot, namespace: str) -> bool:
    """Whether the namespace's captures were read (plain files without captures record them as not in the
    input): the sidecar step skips a revision whose capture is terminal. Absent: the CRD is not served."""
    return unusable(snapshot, plan.CAPTURES.in_namespace(namespace), absent_is_none=True) is None


def required(namespace: str, pod_name: str | None) -> list[ListSpec]:
    """The lists the decision depends on: the pod, every KernelCacheNode, the namespace's KernelCaches and
    the ConfigMap."""
    return ([plan.serving_pod(namespace, pod_name)] if pod_name else []) + [
        plan.KERNEL_CACHE_NODES,
        plan.KERNEL_CACHES.in_namespace(namespace),
        plan.CONFIGMAP,
    ]


def check_required_reads(snapshot: ClusterSnapshot, namespace: str, pod_name: str | None) -> None:
    """Exit 3 naming verb and resource when a list the decision depends on was forbidden, failed or not
    read, and when the webhook configuration's read was (the first gates decide on it); exit 2 when
    input files lack a kind it needs (it is not in the input, not missing)."""
    needs = required(namespace, pod_name)
    if covering(snapshot, plan.WEBHOOK).failed:
        needs.append(plan.WEBHOOK)
    require(snapshot, "why-not-cached", needs)
    lacking = []
    for spec in needs:
        if (
            snapshot.reads_assumed
            and spec.plural not in ("pods", "mutatingwebhookconfigurations")
            and not _present(snapshot, spec.plural)
        ):
            lacking.append(
                {
                    c.PLURAL_NODES: "KernelCacheNodes",
                    c.PLURAL_CACHES: "KernelCaches",
                    "configmaps": f"the {c.KSERVE_NAMESPACE}/{c.CONFIGMAP_NAME} ConfigMap",
                }[spec.plural]
            )
    if lacking:
        raise InputError(
            f"the input holds no {', no '.join(lacking)}: why-not-cached needs them to replay KServe's "
            "decision (`kubectl kcache dump` writes everything it reads)"
        )


def require_captures(snapshot: ClusterSnapshot, namespace: str | None) -> None:
    """For a pod without a cache, the captures decide the verdict (a producer starts cold by design,
    `kernelcache.cold_start`): exit 3 naming the list when its read was forbidden or failed (a resource not served
    means there are none; plain files without captures hold none)."""
    spec = plan.CAPTURES.in_namespace(namespace)
    if covering(snapshot, spec).failed:
        require(snapshot, "why-not-cached", [spec], absent_is_none=True)


def optional_unread(snapshot: ClusterSnapshot, namespace: str, pod: Pod) -> tuple[str, ...]:
    """The lists that refine the answer and could not be read, named in it."""
    specs = [plan.WEBHOOK, plan.namespace(namespace), plan.NODE_GROUPS, plan.CAPTURES.in_namespace(namespace)] + (
        [plan.node(pod.node_name)] if pod.node_name else []
    )
    return tuple(str(u) for u in (unusable(snapshot, s) for s in specs) if u is not None)


def find_pod(snapshot: ClusterSnapshot, namespace: str, name: str) -> Pod:
    pod = next((p for p in snapshot.pods if p.namespace == namespace and p.name == name), None)
    if pod is None:
        raise InputError(f'pod "{name}" not found in namespace "{namespace}"')
    return pod


# ---- the explanation ------------------------------------------------------------------------------------


def explain(
    snapshot: ClusterSnapshot,
    namespace: str,
    pod_name: str | None = None,
    manifest: Pod | None = None,
    source_note: str = "",
) -> WhyNotCached:
    """Explain the cache of pod `pod_name` in `namespace`, or of `manifest`, a pod not created yet."""
    if (pod_name is None) == (manifest is None):
        raise InputError("why-not-cached needs a pod name or a manifest")
    check_required_reads(snapshot, namespace, pod_name if manifest is None else None)
    pod = manifest if manifest is not None else find_pod(snapshot, namespace, str(pod_name))
    if manifest is None and not a.recorded_cache(pod)[0]:
        require_captures(snapshot, namespace)
    config = read_config(snapshot.configmap(c.KSERVE_NAMESPACE, c.CONFIGMAP_NAME))
    revision_known = not (manifest is not None and manifest.meta.labels.get(c.LABEL_POD_TEMPLATE_HASH) == NEW_REVISION)
    admission = a.decide(admission_inputs(snapshot, namespace, pod, config, revision_known=revision_known))
    return explained(
        snapshot,
        pod,
        admission,
        config,
        basis=BASIS_MANIFEST if manifest is not None else BASIS_POD,
        source_note=source_note,
        namespace=namespace,
    )


def admission_inputs(
    snapshot: ClusterSnapshot,
    namespace: str,
    pod: Pod,
    config: ConfigState,
    entries: a.EntryIndex | None = None,
    kernel_caches: Mapping[str, KernelCache] | None = None,
    revision_known: bool = True,
    miss_details: bool = True,
) -> a.Inputs:
    """What KServe's webhook reads for `pod` (as its controller created it) in `namespace`; `entries` and
    `kernel_caches` (the namespace's) when the caller already has them. Only the namespace's KernelCaches and
    captures, as the live reader lists them: the answer is the same from a full dump."""
    return a.snapshot_inputs(
        snapshot,
        namespace,
        a.pre_admission(pod),
        webhook_known=_usable(snapshot, plan.WEBHOOK),
        captures_known=_usable_captures(snapshot, namespace),
        revision_known=revision_known,
        config=config,
        kernel_caches=kernel_caches,
        entries=entries,
        miss_details=miss_details,
        webhook_endpoints=webhook_endpoints(snapshot),
    )


def webhook_endpoints(snapshot: ClusterSnapshot) -> int | None:
    """Ready endpoints behind the pod webhook's Service, or None when they were not read (plain files without
    EndpointSlices say nothing of them)."""
    if not covering(snapshot, plan.WEBHOOK_ENDPOINTS).ok or (snapshot.reads_assumed and not snapshot.endpoint_slices):
        return None
    return ready_endpoints(snapshot.endpoint_slices, c.KSERVE_NAMESPACE, c.WEBHOOK_SERVICE)


def explained(
    snapshot: ClusterSnapshot,
    pod: Pod,
    admission: a.Admission,
    config: ConfigState,
    *,
    basis: str = BASIS_POD,
    source_note: str = "",
    namespace: str = "",
    furthest: tuple[a.Candidate | None] | None = None,
    counting: bool = False,
) -> WhyNotCached:
    """The answer for `pod` given KServe's decision for it (`a.decide` of `admission_inputs`): history, now,
    placement, the story and the next command. `furthest`: `(furthest_candidate(admission),)` when known.
    `counting`: for a caller that keeps only the result and the next command (the fleet): no notes, and the
    KernelCache's users and the unread optional lists are left out."""
    namespace = namespace or pod.namespace
    cached, recorded = a.recorded_cache(pod) if basis == BASIS_POD else (None, "")
    if cached and not recorded:
        recorded = _cache_of_volume(pod, snapshot.kc_by_key.values())
    placement = _placement(snapshot, pod, recorded if cached else admission.cached_kernel_cache, config)
    cold = None
    if cached is False:
        cold = cold_by_design(pod, snapshot.derived("cold-start-captures", lambda: capture_index(snapshot.captures)))
    why = WhyNotCached(
        basis=basis,
        namespace=namespace,
        pod_name=pod.name,
        node=pod.node_name,
        created=pod.meta.created,
        cached=cached,
        recorded_cache=recorded,
        admission=admission,
        placement=placement,
        isvc=pod.meta.labels.get(c.LABEL_ISVC, ""),
        source_note=source_note,
        furthest=furthest or (furthest_candidate(admission),),
        cold=cold,
    )
    notes, next_command = _story(snapshot, why, pod, candidate_notes=not counting)
    if counting:
        return replace(why, next_command=next_command)
    usage = _usage(snapshot, recorded if cached else admission.cached_kernel_cache)
    return replace(
        why,
        notes=tuple(notes),
        next_command=next_command,
        usage=usage,
        unread=optional_unread(snapshot, namespace, pod),
    )


def _usage(snapshot: ClusterSnapshot, kc_key: str | None) -> dict[str, Any] | None:
    """Who uses the KernelCache, as KServe records it (it counts scheduled, live pods only)."""
    kc = snapshot.kc_by_key.get(kc_key or "")
    if kc is None:
        return None
    pods = [
        {"namespace": p.pod_ref.namespace if p.pod_ref else kc.namespace, "name": p.name, "node": p.node_name or None}
        for p in kc.usage_pods
    ]
    nodes = sorted({p.node_name for p in kc.usage_pods if p.node_name})
    per_node = {n: snapshot.kcn_by_name[n].total_pods_using for n in nodes if n in snapshot.kcn_by_name}
    return {
        "kernelCache": kc_key,
        "pods": pods,
        "totalPods": len(pods),
        "nodes": nodes,
        "totalPodsUsingByNode": per_node,
    }


def _cache_of_volume(pod: Pod, caches: Sequence[KernelCache] | Any) -> str:
    """The KernelCache whose artifact the pod's kernel-cache-source volume mounts (when the annotation is gone)."""
    ref = next((v.image_reference for v in pod.volumes if v.name == c.SOURCE_VOLUME), "")
    found = [
        f"{k.namespace}/{k.name}"
        for k in caches
        if k.namespace == pod.namespace and k.artifact is not None and k.artifact.image_reference == ref
    ]
    return found[0] if len(found) == 1 else ""


def _placement(snapshot: ClusterSnapshot, pod: Pod, kc_key: str | None, config: Any) -> Placement | None:
    if not kc_key or not pod.node_name:
        return None
    kc = snapshot.kc_by_key.get(kc_key)
    cfg = config.config
    default = cfg.default_node_group if cfg is not None else ""
    group = effective_group(kc, default) if kc is not None else default
    kcn = snapshot.kcn_by_name.get(pod.node_name)
    ns, _, name = kc_key.partition("/")
    entry = next((e for e in kcn.entries if e.ref.namespace == ns and e.ref.name == name), None) if kcn else None
    node = snapshot.node_by_name.get(pod.node_name)
    grp = snapshot.group_by_name.get(group) if group else None
    in_group: bool | None = None
    missing: Mapping[str, str] = {}
    if node is not None and grp is not None:
        in_group = selector_matches(grp.node_selector, node.labels)
        missing = label_mismatch(grp.node_selector, node.labels).wanted
    elif group and grp is None and _usable(snapshot, plan.NODE_GROUPS):
        in_group = False
    return Placement(
        node=pod.node_name,
        kernel_cache=kc_key,
        group=group,
        node_in_group=in_group,
        entry_state=entry.state if entry is not None else "",
        missing_labels=missing,
        selector=dict(grp.node_selector) if grp is not None else {},
    )


# ---- the story: history vs now, and the next command --------------------------------------------------------


def _ready_since(winner: a.Candidate) -> tuple[str, str]:
    """(the earliest lastUpdate of the winner's Ready entries, the KernelCache's Ready transition time)."""
    kc = winner.kernel_cache
    times = sorted(
        (
            e.entry.last_update
            for e in winner.entries
            if kc is not None and a.entry_matches_cache(e.entry, kc) and parse_time(e.entry.last_update)
        ),
        key=lambda v: parse_time(v) or dt.datetime.min.replace(tzinfo=dt.timezone.utc),
    )
    cond = find_condition(kc.conditions, "Ready") if kc is not None else None
    kc_time = cond.last_transition if cond is not None and cond.status == "True" else ""
    return (times[0] if times else ""), kc_time


def _recreate(why: WhyNotCached) -> str:
    """Delete the pod: its ReplicaSet creates a new one, which goes through admission again."""
    return kubectl("-n {ns} delete pod {pod}", ns=Namespace(why.namespace), pod=Name("pod", why.pod_name))


def _story(
    snapshot: ClusterSnapshot, why: WhyNotCached, pod: Pod, candidate_notes: bool = True
) -> tuple[list[str], str]:
    adm = why.admission
    notes: list[str] = []
    now = adm.cached_kernel_cache
    if why.source_note:
        notes.append(why.source_note)
    if why.basis == BASIS_POD:
        notes.append(
            f"Admission ran once, when the pod was created{f' ({why.created})' if why.created else ''}: "
            "what the pod got then is history; 'now' is what KServe would do for the same pod today."
        )
    next_command = gate_next = ""
    cold = why.cold
    if why.cached and why.recorded_cache:
        _history_hit(snapshot, why, now, notes)
    elif why.cached is False and now and cold is None:
        next_command = _ready_after(why, now, notes)
    if now is None:
        gate_next = _why_not_now(why, notes, candidate_notes)
        next_command = gate_next or next_command
        if cold is None:
            next_command = _being_captured(snapshot, why, pod, notes) or next_command
    for line in adm.inferred if now else ():
        notes.append(f"Not certain: {line}. Set containerPath on the KernelCache's cache path to make it exact.")
    if why.placement is not None and cold is None:
        next_command = _placement_story(why, notes) or next_command
    if cold is not None:  # said after the gates' notes: it is the answer (a producer is not a miss)
        next_command = _cold_story(snapshot, why, cold, notes)
    if why.denied:  # the worst news last, so it is the answer: the next replacement pod is not created
        notes.append(_denial_note(why))
        next_command = gate_next or next_command
    if not next_command and now:
        ns, _, name = now.partition("/")
        next_command = kubectl("-n {ns} get kernelcache {kc}", ns=Namespace(ns), kc=Name("kernelcache", name))
    return notes, next_command


def _being_captured(snapshot: ClusterSnapshot, why: WhyNotCached, pod: Pod, notes: list[str]) -> str:
    """No cache because of the pod's own revision's capture: it is still in progress (its first pod starts
    cold by design), or it completed and KServe made no KernelCache of it. The capture is what to look at,
    rather than the caches of other revisions."""
    blocked = why.now_blocked_by
    revision = pod.meta.labels.get(c.LABEL_POD_TEMPLATE_HASH, "")
    if blocked not in (a.CANDIDATES, a.ENTRY_READY, a.FOOTPRINT, a.SELECTION) or not why.isvc or not revision:
        return ""
    name = capture_revision_name(why.isvc, revision)
    capture = snapshot.capture_by_key.get(f"{why.namespace}/{name}")
    if capture is None:
        return ""
    if capture.phase == c.PHASE_COMPLETE:
        ref = capture.kernel_cache_ref
        if ref is not None and f"{ref.namespace}/{ref.name}" in snapshot.kc_by_key:
            return ""
        notes.append(
            f"This pod's revision was captured (KernelCacheCapture {why.namespace}/{name} is Complete), but "
            "no KernelCache of it exists (never made, or deleted since): the capture's node-group selection says why."
        )
        return kubectl(
            "kcache why-group --capture {capture} -n {ns}",
            capture=Name("kernelcachecapture", name),
            ns=Namespace(why.namespace),
        )
    if capture.phase in c.CAPTURE_TERMINAL_PHASES:
        return ""
    notes.append(
        f"This pod's revision is being captured: KernelCacheCapture {why.namespace}/{name} is "
        f"{capture.phase or 'Pending'}. KServe creates its KernelCache when the capture completes; pods created "
        "once that cache is Ready on their node get it, and this one stays cold until it is recreated then."
    )
    return kubectl("kcache doctor --only capture,capture-identity")


def _denial_note(why: WhyNotCached) -> str:
    """The worst news, in one paragraph: admission today would reject this pod's replacement."""
    adm = why.admission
    gate = adm.blocked_by
    assert gate is not None
    subject = "this pod" if why.basis == BASIS_MANIFEST else "this pod's replacement (a rollout, a restart, a scale-up)"
    who = "KServe's webhook" if gate.id != a.WEBHOOK_REACHABLE else "The API server, which cannot call the webhook,"
    text = (
        f"{who} would deny {subject}: {a.denial_message(adm)}. Its ReplicaSet shows this as a "
        "FailedCreate event and no new pod is created."
    )
    if gate.id in a.SIDECAR_GATES:
        cached = (
            f"a cache ({adm.winner.key}) was matched and mounted first, and still "
            if adm.injection is not None and adm.winner is not None
            else ""
        )
        text += (
            f" The denial comes from the capture sidecar step, which runs after the cache step in the same "
            f"admission: {cached}any error there denies the pod. Fix the pod template, or opt this "
            f"InferenceService out of capture with the annotation {c.ANNOTATION_SIDECAR_INJECTION}: "
            '"false" (the cache step is not affected).'
        )
    return text


def _cold_story(snapshot: ClusterSnapshot, why: WhyNotCached, cold: ColdByDesign, notes: list[str]) -> str:
    """A pod that started cold by design: what it is (first) and where its cache stands; never a recreate."""
    ns, _, name = cold.kernel_cache.partition("/")
    kc = snapshot.kc_by_key.get(cold.kernel_cache) if cold.kernel_cache else None
    text = cold.sentence(kernel_cache_exists=kc is not None)
    capture = cold.capture
    if cold.reason == PRODUCER and kc is None and capture.phase == c.PHASE_COMPLETE:
        notes.append(
            text + " No KernelCache of its capture exists (never made, or deleted since): the capture's "
            "node-group selection says why."
        )
        return kubectl(
            "kcache why-group --capture {capture} -n {ns}",
            capture=Name("kernelcachecapture", capture.name),
            ns=Namespace(capture.namespace),
        )
    notes.append(text)
    if kc is not None:
        cond = find_condition(kc.conditions, "Ready")
        if cond is None or cond.status != "True":
            return why_not_ready_command(ns, name) or kubectl(
                "-n {ns} get kernelcache {kc}", ns=Namespace(ns), kc=Name("kernelcache", name)
            )
        return kubectl("-n {ns} get kernelcache {kc}", ns=Namespace(ns), kc=Name("kernelcache", name))
    if capture.phase in c.CAPTURE_TERMINAL_PHASES:
        return kubectl(
            "-n {ns} get kernelcachecapture {capture} -o yaml",
            ns=Namespace(capture.namespace),
            capture=Name("kernelcachecapture", capture.name),
        )
    return kubectl("kcache doctor --only capture,capture-identity")


def _history_hit(snapshot: ClusterSnapshot, why: WhyNotCached, now: str | None, notes: list[str]) -> None:
    recorded = why.recorded_cache
    if recorded not in snapshot.kc_by_key:
        notes.append(
            f"The pod records KernelCache {recorded}, which no longer exists; the running pod keeps its "
            "mount (the artifact stays pulled on its node)."
        )
    if now == recorded:
        notes.append(f"Today KServe would choose the same KernelCache ({why.admission.match} match).")
    elif now:
        notes.append(
            f"Today KServe would mount {now} instead ({why.admission.match} match): the next pod of this "
            f"workload gets it; this one keeps {recorded}."
        )
    elif not why.denied:  # a denial is said last, as the answer: the next pod is not created at all
        notes.append(
            f"Today KServe would not mount a cache for this pod (blocked by {why.now_blocked_by}): the "
            f"running pod keeps {recorded}, but the next pod of this workload (a rollout, restart or "
            "scale-up) would start without it."
        )


def _ready_after(why: WhyNotCached, now: str, notes: list[str]) -> str:
    winner = why.admission.winner
    assert winner is not None
    created = parse_time(why.created)
    entry_time, kc_time = _ready_since(winner)
    after = [t for t in (entry_time, kc_time) if created is not None and (parse_time(t) or created) > created]
    match = why.admission.match
    if after:
        when = [
            f"its Ready entries were last updated at {entry_time}" if entry_time else "",
            f"the KernelCache became Ready at {kc_time}" if kc_time else "",
        ]
        notes.append(
            f"The cache became Ready after the pod was created: {' and '.join(w for w in when if w)}; the pod "
            f"was created at {why.created}. Admission happens once, at creation, so this pod started "
            f"without it; today KServe would mount {now} ({match} match). Recreate the pod (its ReplicaSet "
            "creates a new one) and the new pod gets the cache."
        )
    else:
        seen = (
            "the cache looks Ready from before then"
            if entry_time or kc_time
            else "the times do not show when the cache became Ready"
        )
        notes.append(
            f"Today KServe would mount {now} ({match} match), but this pod did not get it when it was "
            f"created{f' ({why.created})' if why.created else ''}, and {seen}: something admission reads "
            "changed since (the KernelCache or its entries, the configuration, the namespace's labels, the "
            "webhook), or the webhook was not called. Recreate the pod and the new pod gets the cache."
        )
    return _recreate(why)


def _placement_story(why: WhyNotCached, notes: list[str]) -> str:
    p = why.placement
    assert p is not None
    if p.prepared:
        return ""
    where = f"node {p.node}"
    if p.node_in_group is False:
        lacks = ", ".join(f"{k}={v}" for k, v in p.missing_labels.items())
        where += f", outside group {p.group or '(none)'}" + (f" (it lacks {lacks})" if lacks else "")
    elif p.node_in_group:
        where += f", in group {p.group}"
    elif p.group:
        where += f" (whether it is in group {p.group} could not be read)"
    entry = f"its entry there is {p.entry_state}" if p.entry_state else "no entry for it exists there"
    tense = "pulled" if why.cached else "would pull"
    notes.append(
        f"KServe adds no node affinity: the pod runs on {where}, where {p.kernel_cache} is not prepared "
        f"({entry}), so the kubelet {tense} the artifact as an image volume when the pod started: a cold "
        "pull, not a prepared cache. Schedule the predictor onto the group's nodes "
        "(spec.predictor.nodeSelector or affinity)."
    )
    if p.selector and why.isvc and p.node_in_group is False:
        return kubectl(
            "-n {ns} patch inferenceservice {isvc} --type=merge -p {patch}",
            ns=Namespace(why.namespace),
            isvc=Name("inferenceservice", why.isvc),
            patch=Json({"spec": {"predictor": {"nodeSelector": dict(sorted(p.selector.items()))}}}),
        )
    if not p.node_in_group:
        return kubectl("get node {node} --show-labels", node=Name("node", p.node))
    ns, _, name = p.kernel_cache.partition("/")
    return why_not_ready_command(ns, name) or kubectl("kcache doctor --only cache-status,node-images")


def _why_not_now(why: WhyNotCached, notes: list[str], candidate_notes: bool = True) -> str:
    adm = why.admission
    gate = adm.blocked_by
    if gate is None:
        return ""
    ns, isvc = why.namespace, why.isvc
    if adm.winner is not None and gate.id not in (a.SELECTION, a.INJECTION):
        notes.append(f"If {gate.id} passed, KServe would mount {adm.winner.key} ({adm.winner.match} match).")
    for cand in adm.candidates if candidate_notes else ():  # the same for every pod of a decision
        if cand.rejected_by == a.NAMESPACE:
            notes.append(
                f"KernelCache {cand.key} matches the pod but lives in namespace {cand.namespace}: KServe only "
                f"uses KernelCaches of the pod's own namespace ({ns})."
            )
        elif cand.rejected_by == a.ENTRY_READY and _spec_matches(cand.kernel_cache, adm):
            notes.append(
                f"KernelCache {cand.key} matches the pod but has no Ready entry yet ({cand.detail}): pods "
                "created before an entry is Ready start without it."
            )
    blocked = why.now_blocked_by  # not None: `gate` is the decision's
    best = why.best_candidate
    kc = best.kernel_cache if best is not None else None
    on_pod = why.basis == BASIS_POD

    def predictor_annotation(key: str, value: str) -> str:
        if not isvc:
            return ""
        return kubectl(
            "-n {ns} patch inferenceservice {isvc} --type=merge -p {patch}",
            ns=Namespace(ns),
            isvc=Name("inferenceservice", isvc),
            patch=Json({"spec": {"predictor": {"annotations": {key: value}}}}),
        )

    pod_word = Name("pod", why.pod_name)

    def pod_labels() -> str:
        return kubectl("-n {ns} get pod {pod} --show-labels", ns=Namespace(ns), pod=pod_word) if on_pod else ""

    def pod_yaml() -> str:
        return kubectl("-n {ns} get pod {pod} -o yaml", ns=Namespace(ns), pod=pod_word) if on_pod else ""

    def pod_images() -> str:
        if not on_pod:
            return ""
        return kubectl(
            "-n {ns} get pod {pod} -o jsonpath={{.spec.containers[*].image}}", ns=Namespace(ns), pod=pod_word
        )

    def webhook() -> str:
        return kubectl(
            "get mutatingwebhookconfiguration {webhook} -o yaml",
            webhook=Name("mutatingwebhookconfiguration", c.WEBHOOK_CONFIGURATION),
        )

    def edit_config() -> str:
        return kubectl(
            "-n {ns} edit configmap {cm}", ns=Namespace(c.KSERVE_NAMESPACE), cm=Name("configmap", c.CONFIGMAP_NAME)
        )

    def not_ready() -> str:
        """No Ready entry anywhere: why the closest KernelCache is not Ready, node by node."""
        found = why_not_ready_command(kc.namespace, kc.name) if kc is not None else None
        return found or kubectl("kcache doctor --only cache-status")

    if blocked == a.FOOTPRINT and kc is not None:
        return kubectl(
            "-n {ns} get kernelcache {kc} -o jsonpath={{.spec.artifact.identity.factors}}",
            ns=Namespace(kc.namespace),
            kc=Name("kernelcache", kc.name),
        )
    if blocked == a.ENTRY_MATCHES_SPEC and best is not None and best.entries:
        return kubectl(
            "-n {ns} get pods -l {selector} --field-selector spec.nodeName={node}",
            ns=Namespace(c.KSERVE_NAMESPACE),
            selector=Selector.of(dict([c.AGENT_POD_LABEL])),
            node=Name("node", best.entries[0].node),
        )
    if blocked == a.NAMESPACE and best is not None:
        return kubectl("get kernelcaches -A --field-selector metadata.name={kc}", kc=Name("kernelcache", best.name))
    if blocked in (a.ARTIFACT, a.MOUNT_TYPE, a.CACHE_CONTAINER, a.OCI_PATH, a.CONTAINER_PATH) and kc is not None:
        return kubectl(
            "-n {ns} get kernelcache {kc} -o yaml", ns=Namespace(kc.namespace), kc=Name("kernelcache", kc.name)
        )
    # the commands of the gates: only the blocking gate's is built (the fleet asks this for every pod)
    by_gate: dict[str, Callable[[], str]] = {
        a.WEBHOOK_INSTALLED: webhook,
        a.OBJECT_SELECTOR: webhook,
        a.MATCH_CONDITIONS: webhook,
        a.WEBHOOK_REACHABLE: lambda: kubectl("kcache doctor --only control-plane"),
        a.NAMESPACE_SELECTOR: lambda: kubectl("get namespace {ns} --show-labels", ns=Namespace(ns)),
        a.ISVC_LABEL: lambda: pod_labels(),
        a.SUPPORTED: lambda: predictor_annotation(c.ANNOTATION_SUPPORTED, "true"),
        a.CONFIG: lambda: kubectl("kcache doctor --only config"),
        a.ENABLED: edit_config,
        a.SIDECAR_ANNOTATION: lambda: predictor_annotation(c.ANNOTATION_SIDECAR_INJECTION, "true"),
        a.MODEL_SOURCE: lambda: (
            kubectl(
                "-n {ns} get inferenceservice {isvc} -o yaml", ns=Namespace(ns), isvc=Name("inferenceservice", isvc)
            )
            if isvc
            else ""
        ),
        a.RUNTIME_CONTAINER: pod_yaml,
        a.RUNTIME_IMAGE: pod_images,
        a.CANDIDATES: not_ready,
        a.ENTRY_READY: not_ready,
        a.KERNELCACHE_EXISTS: lambda: kubectl("get kernelcachenodes"),
        a.VERIFICATION: lambda: kubectl("kcache doctor --only verification"),
        a.INJECTION: pod_yaml,
        a.CAPTURE_PATHS: lambda: predictor_annotation(c.ANNOTATION_SIDECAR_INJECTION, "false"),
        a.READINESS_PROBE: lambda: predictor_annotation(c.ANNOTATION_SIDECAR_INJECTION, "false"),
        a.CAPTURE_MOUNTS: lambda: predictor_annotation(c.ANNOTATION_SIDECAR_INJECTION, "false"),
        a.CAPTURE_TARGET: edit_config,
    }
    make = by_gate.get(blocked or "")
    return make() if make is not None else ""


def _spec_matches(kc: KernelCache | None, adm: a.Admission) -> bool:
    """Whether a KernelCache's own footprints (its spec) match the pod's, in either pass."""
    ident = adm.identity
    if kc is None or kc.artifact is None or ident is None:
        return False
    fp = kc.artifact.footprints
    return bool(ident.compatibility_footprint) and fp.compatibility == ident.compatibility_footprint
