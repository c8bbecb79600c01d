"""why-group: which node group KServe puts (or put) a producer pod's captured cache in, step by step.

Pure: a snapshot in, a `WhyGroup` out. The decision itself is `kernelcache.selection.select_node_group`,
the same function the doctor and `reconcile` use; this module only chooses its inputs and explains them.

Which session is decided from (`basis`):
* ``capture``: the capture has a recorded `status.activeSession`. KServe decides from it and nothing else:
  the pod may be gone, its annotation or node may have changed since (reported as drift).
* ``pod``: no capture yet, or a capture without a session: predicted from the pod as KServe would record
  the session when the producer claims it (nodeName = `spec.nodeName`, requestedNodeGroup = the pod's
  `serving.kserve.io/kernelcache-nodegroup` annotation). A capture without a session and without its pod is
  decided as KServe would decide it (no session: straight to the default), with basis ``capture``.
* ``what-if``: `what_if_node` and/or `what_if_group` replace the nodeName / requestedNodeGroup of the
  session that would otherwise be used (the recorded one, else the one predicted from the pod, else an
  empty one). `None` keeps a field; `""` clears it ("what if the pod had no annotation"). Drift is always
  computed from the real decision, never from the what-if.

Traps KServe accepts silently are reported as extra steps with outcome ``warning`` (the JSON contract has
no other place for them): a requested group that does not contain the producer's node, a node in several
groups, a `defaultNodeGroup` that names a label instead of a group, a missing or invalid configuration,
unreadable inputs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NoReturn

import msgspec

from ..apivalidation import go_quote
from ..errors import InputError
from ..kernelcache import constants as c
from ..kernelcache.capture import (
    CREATE,
    LINK,
    MISMATCH,
    SHADOWED,
    TERMINATING,
    capture_caches,
    capture_complete,
)
from ..kernelcache.config import DEFAULT_GROUP_LABEL, ConfigState, default_group_problem, read_config
from ..kernelcache.gostrings import trim_space
from ..kernelcache.membership import is_ambiguous, label_index_of
from ..kernelcache.names import capture_name_for_pod
from ..kernelcache.selection import (
    Decision,
    SessionDrift,
    Step,
    requested_group_outside,
    select_node_group,
    session_drift,
    session_from_pod,
)
from ..kernelcache.selectors import label_mismatch, matching_groups, selector_matches
from ..kernelcache.taints import untolerated_taints
from ..objects import ActiveSession, Capture, KernelCache, Node, Pod
from ..snapshot import plan
from ..snapshot.model import ClusterSnapshot
from ..snapshot.reads import covering, require
from ..suggest import Json, Name, Namespace, Placeholder, kubectl
from ..text import PLACEHOLDER_GROUP, PLACEHOLDER_ISVC

KIND = "WhyGroup"
VERSION = 1
BASIS_CAPTURE = "capture"
BASIS_POD = "pod"
BASIS_WHAT_IF = "what-if"
WARNING = "warning"


class GroupFit(msgspec.Struct, frozen=True):
    """How the decision's node fits one group."""

    name: str
    matches: bool
    missing_labels: Mapping[str, str]
    untolerated_taints: tuple[str, ...]
    selector: Mapping[str, str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "matches": self.matches,
            "missingLabels": dict(self.missing_labels),
            "untoleratedTaints": list(self.untolerated_taints),
        }


class CreatedCache(msgspec.Struct, frozen=True):
    """The KernelCache KServe created for the capture."""

    namespace: str
    name: str
    node_group: str | None
    selection_source: str | None
    group_exists: bool

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "nodeGroup": self.node_group, "selectionSource": self.selection_source}


class WhyGroup(msgspec.Struct, frozen=True):
    """The explanation; `to_dict()` is the documented `why-group -o json` document."""

    namespace: str
    pod_name: str | None
    basis: str
    capture: Capture | None
    decision: Decision
    steps: tuple[Step, ...]
    groups: tuple[GroupFit, ...]
    kernel_cache: CreatedCache | None = None
    drift: tuple[str, ...] = ()
    next_commands: tuple[str, ...] = ()  # commands to run, each whole (the drift's words refer to them)
    # What the decision looked at, for the renderers (not part of the JSON document).
    session: ActiveSession | None = None
    pod: Pod | None = None
    node_found: bool = False
    node_labels: Mapping[str, str] = msgspec.field(default_factory=dict)
    other_label_count: int = 0
    default_group: str = ""
    config_problem: str = ""
    pod_drift: tuple[SessionDrift, ...] = ()  # the recorded session vs the producer pod today

    @property
    def node(self) -> str | None:
        return (self.session.node_name or None) if self.session else None

    @property
    def requested_group(self) -> str:
        return trim_space(self.session.requested_node_group) if self.session else ""

    @property
    def events_command(self) -> str:
        """The capture's events, where KServe's Warning for a failed selection shows ('' without a capture)."""
        if self.capture is None:
            return ""
        return kubectl(
            "get events -n {ns} --field-selector involvedObject.name={capture}",
            ns=Namespace(self.capture.namespace),
            capture=Name("kernelcachecapture", self.capture.name),
        )

    @property
    def warnings(self) -> tuple[Step, ...]:
        return tuple(s for s in self.steps if s.outcome == WARNING)

    @property
    def answer(self) -> tuple[str, str]:
        """(the one-paragraph why, the next command) for the verdict."""
        return answer(self)

    @property
    def event(self) -> str | None:
        """The Warning event KServe's controller emits for a failed selection (`kubectl get events`)."""
        if self.decision.reason is None:
            return None
        return f"Warning {self.decision.reason} {c.EVENT_ACTION_SELECT}: {self.decision.message}"

    def to_dict(self) -> dict[str, Any]:
        capture = None
        if self.capture is not None:
            session = self.capture.active_session
            capture = {
                "namespace": self.capture.namespace,
                "name": self.capture.name,
                "activeSession": session.to_dict() if session is not None else None,
            }
        return {
            "kind": KIND,
            "version": VERSION,
            "pod": {"namespace": self.namespace, "name": self.pod_name},
            "node": self.node,
            "basis": self.basis,
            "capture": capture,
            "result": self.decision.to_dict(),
            "kernelCache": self.kernel_cache.to_dict() if self.kernel_cache is not None else None,
            "drift": list(self.drift),
            "fixes": list(self.next_commands),  # the drift's commands, each whole
            "steps": [s.to_dict() for s in self.steps],
            "groups": [g.to_dict() for g in self.groups],
            "why": self.answer[0],
            "next": self.answer[1] or None,
        }


def explain(
    snapshot: ClusterSnapshot,
    namespace: str,
    pod_name: str | None = None,
    capture_name: str | None = None,
    what_if_node: str | None = None,
    what_if_group: str | None = None,
) -> WhyGroup:
    """Explain the node group of the capture made from `pod_name` (or of `capture_name`) in `namespace`."""
    if not pod_name and not capture_name:
        raise InputError("why-group needs a pod name or a KernelCacheCapture name")
    # no verdict on data that could not be read: what every answer needs, then what this decision used
    require(
        snapshot,
        "why-group",
        [plan.CAPTURES.in_namespace(namespace), plan.KERNEL_CACHES.in_namespace(namespace), plan.NODE_GROUPS]
        + ([plan.serving_pod(namespace, pod_name)] if pod_name else []),
    )
    steps: list[Step] = []
    pod = _pod(snapshot, namespace, pod_name) if pod_name else None
    capture = _find_capture(snapshot, namespace, pod_name, pod, capture_name, steps)
    if pod_name and capture_name and capture is not None:
        _refuse_mismatch(pod_name, pod, capture)
    recorded = capture.active_session if capture is not None else None
    if not pod_name and recorded is not None and recorded.pod_name:
        pod_name = recorded.pod_name
        require(snapshot, "why-group", [plan.serving_pod(namespace, pod_name)])
        pod = _pod(snapshot, namespace, pod_name)
    if pod_name and pod is None:
        if capture is None:
            _raise_not_found(snapshot, namespace, pod_name)
        steps.append(
            Step(
                "session",
                "pod-gone",
                f"pod {pod_name} no longer exists; KServe decides from the session recorded on the capture",
            )
        )
    if pod_name and recorded is not None and recorded.pod_name != pod_name:
        steps.append(
            Step(
                "session",
                WARNING,
                f"the session was claimed by pod {recorded.pod_name or '(none)'}, not {pod_name}: "
                f"KServe decides from that pod's node and annotation; {pod_name}'s own do not "
                "count",
            )
        )
    if capture is not None and capture.kernel_cache_ref is None:
        complete = capture_complete(capture)
        if not complete:
            steps.append(
                Step(
                    "session",
                    "incomplete",
                    f"capture {capture.name} is not complete ({complete.reason}): KServe selects a "
                    "group only once it completes; below is what it would decide now",
                )
            )

    config = read_config(snapshot.configmap(c.KSERVE_NAMESPACE, c.CONFIGMAP_NAME))
    default_group = config.config.default_node_group if config.config is not None else ""

    # The session the decision starts from, and where it comes from.
    base: ActiveSession | None
    if recorded is not None and capture is not None:
        basis, base, origin = BASIS_CAPTURE, recorded, f"the session recorded on capture {capture.name}"
    elif pod is not None:
        basis, origin = BASIS_POD, f"the session predicted from pod {pod.name}"
        base = session_from_pod(pod)
    else:
        basis, base, origin = BASIS_CAPTURE, None, "an empty session"
    session = base
    if what_if_node is not None or what_if_group is not None:
        basis = BASIS_WHAT_IF
        session = base or ActiveSession()
        if what_if_node is not None:
            session = msgspec.structs.replace(session, node_name=what_if_node)
        if what_if_group is not None:
            session = msgspec.structs.replace(session, requested_node_group=what_if_group)

    def decide(s: ActiveSession | None) -> Decision:
        return select_node_group(s, snapshot.group_by_name, snapshot.node_by_name, default_group)

    decision = decide(session)
    real = decide(base) if basis == BASIS_WHAT_IF else decision
    used = {step.step for step in decision.steps + real.steps if (step.step, step.outcome) != ("node", "pending")}
    looked_at = sorted({s.node_name for s in (session, base) if s is not None and s.node_name})
    require(
        snapshot,
        "why-group",
        ([plan.node(n) for n in looked_at] if used & {"node", "match"} else [])
        # the ConfigMap decides the default group, and its absence is a warning: a read of it that failed
        # (not merely a plain export without it) is never taken as "not found"
        + ([plan.CONFIGMAP] if "default" in used or covering(snapshot, plan.CONFIGMAP).failed else []),
    )
    steps.extend(_relabel_session_step(decision.steps, basis, session, capture, origin))
    config_problem = _config_problem(config)
    for extra in _warnings(snapshot, session, decision, config_problem, default_group):
        _insert(steps, extra)

    node = snapshot.node_by_name.get(session.node_name) if session and session.node_name else None
    kc, kc_drift = _created_cache(snapshot, capture, default_group)
    created = None
    if kc is not None:
        created = CreatedCache(
            kc.namespace,
            kc.name,
            kc.node_group or None,
            kc.meta.annotations.get(c.ANNOTATION_SELECTION_SOURCE),
            (kc.node_group or default_group) in snapshot.group_by_name,
        )
    commands: list[str] = []
    drift = kc_drift + _drift(snapshot, pod, recorded, real, created, default_group, commands)
    selector_keys = {k for g in snapshot.node_groups for k in g.node_selector}
    labels = dict(node.labels) if node is not None else {}
    return WhyGroup(
        namespace=namespace,
        pod_name=pod_name,
        basis=basis,
        capture=capture,
        decision=decision,
        steps=tuple(steps),
        groups=_group_fits(snapshot, node),
        kernel_cache=created,
        drift=tuple(drift),
        next_commands=tuple(commands),
        session=session,
        pod=pod,
        node_found=node is not None,
        node_labels={k: v for k, v in sorted(labels.items()) if k in selector_keys},
        other_label_count=sum(1 for k in labels if k not in selector_keys),
        default_group=trim_space(default_group),
        config_problem=config_problem,
        pod_drift=tuple(session_drift(pod, recorded)) if pod is not None and recorded is not None else (),
    )


# ---- finding the pod and the capture -------------------------------------------------------------


def _pod(snapshot: ClusterSnapshot, namespace: str, name: str) -> Pod | None:
    return next((p for p in snapshot.pods if p.namespace == namespace and p.name == name), None)


def _capture(snapshot: ClusterSnapshot, namespace: str, name: str) -> Capture | None:
    return snapshot.capture_by_key.get(f"{namespace}/{name}")


def _find_capture(
    snapshot: ClusterSnapshot,
    namespace: str,
    pod_name: str | None,
    pod: Pod | None,
    capture_name: str | None,
    steps: list[Step],
) -> Capture | None:
    """The capture by name; else KServe's generated name for the pod; else the one whose session names it."""
    if capture_name:
        capture = _capture(snapshot, namespace, capture_name)
        if capture is None:
            raise InputError(f'KernelCacheCapture "{capture_name}" not found in namespace "{namespace}"')
        steps.append(Step("session", "found", f"KernelCacheCapture {namespace}/{capture_name} (named)"))
        return capture
    generated = ""
    why_not = ""
    if pod is not None:
        isvc = pod.meta.labels.get(c.LABEL_ISVC, "")
        revision = pod.meta.labels.get(c.LABEL_POD_TEMPLATE_HASH, "")
        generated = capture_name_for_pod(pod)
        if generated:
            capture = _capture(snapshot, namespace, generated)
            if capture is not None:
                steps.append(
                    Step(
                        "session",
                        "found",
                        f"KernelCacheCapture {namespace}/{generated}: KServe's generated name for "
                        f"InferenceService {isvc}, revision {revision}",
                    )
                )
                return capture
            why_not = f'the generated name "{generated}" does not exist'
        else:
            why_not = (
                f"the pod has no {c.LABEL_ISVC} and {c.LABEL_POD_TEMPLATE_HASH} labels, so KServe "
                "generates no capture for it"
            )
    candidates = sorted(
        (
            k
            for k in snapshot.captures
            if k.namespace == namespace and k.active_session is not None and k.active_session.pod_name == pod_name
        ),
        key=lambda k: (k.meta.created, k.name),
    )
    if not candidates:
        if pod is not None:
            steps.append(
                Step(
                    "session",
                    "not-found",
                    f"no KernelCacheCapture for pod {pod_name}: {why_not}, and no capture's "
                    "activeSession names the pod",
                )
            )
        return None
    capture = candidates[-1]
    steps.append(
        Step(
            "session", "found", f"KernelCacheCapture {namespace}/{capture.name}: its activeSession names pod {pod_name}"
        )
    )
    if len(candidates) > 1:
        others = ", ".join(k.name for k in candidates[:-1])
        steps.append(
            Step(
                "session",
                WARNING,
                f"the sessions of several captures name pod {pod_name}; using the newest, "
                f"{capture.name} (also: {others})",
            )
        )
    return capture


def _refuse_mismatch(pod_name: str, pod: Pod | None, capture: Capture) -> None:
    """`POD --capture OTHER`: the capture must be the pod's (its session names the pod, or it has KServe's
    generated name for the pod); answering for another capture as if it were the pod's would be wrong."""
    session = capture.active_session
    generated = capture_name_for_pod(pod) if pod is not None else ""
    if (session is not None and session.pod_name == pod_name) or capture.name == generated:
        return
    claimed = (
        f"its session was claimed by pod {go_quote(session.pod_name)}"
        if session is not None and session.pod_name
        else "no pod has claimed its session"
    )
    own = f"; the own capture of pod {go_quote(pod_name)} is {go_quote(generated)}" if generated else ""
    raise InputError(
        f"KernelCacheCapture {go_quote(capture.name)} is not the capture of pod {go_quote(pod_name)} "
        f"({claimed}{own}): give the pod or --capture, not both"
    )


def _raise_not_found(snapshot: ClusterSnapshot, namespace: str, pod_name: str) -> NoReturn:
    raise InputError(
        f'pod "{pod_name}" not found in namespace "{namespace}" and no KernelCacheCapture there '
        "names it in its activeSession"
    )


def _created_cache(
    snapshot: ClusterSnapshot, capture: Capture | None, default_group: str
) -> tuple[KernelCache | None, list[str]]:
    """The KernelCache made from the capture (status.kernelCacheRef, else the generated name, if it exists) and
    what KServe's KernelCache reconciler will do about it next, in words."""
    if capture is None:
        return None, []
    peers = [x for x in snapshot.captures if x.namespace == capture.namespace]
    cc = next(
        x
        for x in capture_caches(peers, snapshot.kc_by_key, snapshot.group_by_name, snapshot.node_by_name, default_group)
        if x.capture.name == capture.name
    )
    ref, outcome = capture.kernel_cache_ref, cc.outcome
    generated = f"{capture.namespace}/{outcome.kernel_cache}"
    kc = None
    if ref is not None and ref.name:
        kc = snapshot.kc_by_key.get(f"{ref.namespace or capture.namespace}/{ref.name}")
    if kc is None and outcome.kernel_cache:
        kc = snapshot.kc_by_key.get(generated)
    notes: list[str] = []
    if outcome.outcome == CREATE and ref is not None and not outcome.ref_was:
        notes.append(
            f"KernelCache {generated}, named in status.kernelCacheRef, no longer exists: KServe re-creates "
            "it at once (its deletion re-queues it) and runs the node-group selection again: "
            + _next_decision(cc.decision)
        )
    elif outcome.outcome == CREATE and outcome.ref_was:
        notes.append(
            f"status.kernelCacheRef names {outcome.ref_was}, not the generated name {generated}: KServe "
            f"creates {generated} ({_next_decision(cc.decision)}) and points the capture at it"
        )
    elif outcome.outcome == LINK:
        was = f"names {outcome.ref_was}" if outcome.ref_was else "is empty"
        notes.append(
            f"KernelCache {generated} exists but status.kernelCacheRef {was}: KServe only links the capture "
            "to it (no selection, no event) on its next pass over that KernelCache"
        )
    elif outcome.outcome == MISMATCH:
        notes.append(f"{outcome.reason}: KServe refuses to link them, on every pass")
    elif outcome.outcome == TERMINATING:
        notes.append(outcome.reason)
    elif outcome.outcome == SHADOWED:
        notes.append(
            f"capture {capture.name} maps to KernelCache {generated} like capture {outcome.owner} (same "
            "first 38 characters, same digest): KServe links only one capture per KernelCache name, and "
            "which one is not guaranteed"
        )
    return kc, notes


def _next_decision(decision: Decision | None) -> str:
    if decision is None:
        return "no decision"
    if decision.ok:
        return f'today it selects "{decision.group}" (source {decision.source})'
    return f"today it fails with {decision.reason} ({decision.message}), emits that Warning event and creates nothing"


# ---- steps -----------------------------------------------------------------------------------------


def _relabel_session_step(
    decided: Iterable[Step], basis: str, session: ActiveSession | None, capture: Capture | None, origin: str
) -> list[Step]:
    """The decision's steps; the first `session` step says where a predicted or what-if session came from."""
    out = list(decided)
    if basis == BASIS_CAPTURE or not out or out[0].step != "session" or session is None:
        return out
    fields = f"nodeName {session.node_name or '(none)'}, requestedNodeGroup {session.requested_node_group or '(none)'}"
    if basis == BASIS_POD:
        where = f"capture {capture.name} has" if capture is not None else "there is"
        detail = (
            f"{where} no activeSession yet; predicted from pod {session.pod_name} as KServe would record it: {fields}"
        )
        out[0] = Step("session", "predicted", detail)
    else:
        out[0] = Step("session", "what-if", f"{origin}, with {fields} (what-if)")
    return out


def _insert(steps: list[Step], extra: Step) -> None:
    """Put a step after the last step of its kind, or at the end."""
    at = max((i for i, s in enumerate(steps) if s.step == extra.step), default=None)
    if at is None:
        steps.append(extra)
    else:
        steps.insert(at + 1, extra)


def _config_problem(config: ConfigState) -> str:
    where = f"{c.KSERVE_NAMESPACE}/{c.CONFIGMAP_NAME}"
    if not config.present:
        return f"{config.error}: KServe creates no KernelCache without it; assuming no defaultNodeGroup"
    if config.config is None:
        return (
            f"{where} key {c.CONFIG_KEY} is invalid ({config.error}): KServe creates no KernelCache "
            "until it is fixed; assuming no defaultNodeGroup"
        )
    if not config.enabled:
        return f"{where} key {c.CONFIG_KEY}: enabled is false: KServe creates no KernelCache"
    return ""


def _warnings(
    snapshot: ClusterSnapshot,
    session: ActiveSession | None,
    decision: Decision,
    config_problem: str,
    default_group: str,
) -> list[Step]:
    out: list[Step] = []
    if config_problem:
        out.append(Step("default", WARNING, config_problem))
    groups = snapshot.group_by_name
    node = snapshot.node_by_name.get(session.node_name) if session and session.node_name else None
    outside = requested_group_outside(session, groups, snapshot.node_by_name)
    if decision.source == c.SOURCE_ANNOTATION and outside is not None:
        lacks = ", ".join(f"{k}={v}" for k, v in outside.wanted.items())
        out.append(
            Step(
                "annotation",
                WARNING,
                f'requested group "{outside.group}" does not contain the producer node {outside.node} '
                f"(it lacks {lacks}): KServe accepts the request without checking and prepares "
                f'the cache on the nodes of "{outside.group}", not where the producer ran',
            )
        )
    if node is not None and decision.reason != c.REASON_AMBIGUOUS:
        matches = matching_groups(node.labels, groups.values())
        if is_ambiguous(matches):
            out.append(
                Step(
                    "match",
                    WARNING,
                    f"node {node.name} is in several groups ({', '.join(g.name for g in matches)}): a "
                    f"capture from it without {c.ANNOTATION_NODE_GROUP} fails with {c.REASON_AMBIGUOUS}",
                )
            )
    out.extend(_default_label_trap(snapshot, default_group))
    return out


def _default_label_trap(snapshot: ClusterSnapshot, default: str) -> list[Step]:
    problem = default_group_problem(
        default,
        snapshot.group_by_name,
        label_index_of(snapshot).keys,
        {g.name: g.node_selector for g in snapshot.node_groups},
    )
    if problem is None or problem.kind != DEFAULT_GROUP_LABEL:
        return []
    hint = "set it to a KernelCacheNodeGroup name (kubectl get kernelcachenodegroups)"
    if problem.groups_with_label:
        hint = f"set it to the group whose selector has that label: {', '.join(problem.groups_with_label)}"
    return [
        Step(
            "default",
            WARNING,
            f'defaultNodeGroup "{problem.name}" looks like a node label, not a KernelCacheNodeGroup name; {hint}',
        )
    ]


# ---- groups and drift ------------------------------------------------------------------------------


def _group_fits(snapshot: ClusterSnapshot, node: Node | None) -> tuple[GroupFit, ...]:
    labels = node.labels if node is not None else {}
    return tuple(
        GroupFit(
            name=g.name,
            matches=node is not None and selector_matches(g.node_selector, labels),
            missing_labels=label_mismatch(g.node_selector, labels).wanted,
            untolerated_taints=tuple(str(t) for t in untolerated_taints(node, g.tolerations)) if node else (),
            selector=dict(g.node_selector),
        )
        for g in sorted(snapshot.node_groups, key=lambda g: g.name)
    )


def _drift_text(pod: Pod, d: SessionDrift, commands: list[str]) -> str:
    """Words for a session field the pod no longer agrees with, and what works instead (a command to run
    goes to `commands`)."""
    if d.field == "requestedNodeGroup":
        commands.append(request_group_command(pod, d.now))
        return (
            f'pod {pod.name} annotation {c.ANNOTATION_NODE_GROUP} is now "{d.now}" but the session '
            f'recorded "{d.recorded}" when the pod claimed the capture: KServe records the session once '
            "and never updates it, so a change made after the claim is ignored for this capture. To choose "
            "the group, request it on the InferenceService's pod template before the next capture (a new "
            "revision makes a new capture), or make the groups' selectors disjoint (the command under Next)"
        )
    if not d.recorded:
        return (
            f"pod {pod.name} is now on node {d.now} but the session recorded no node (the pod claimed the "
            "capture before it was scheduled): KServe never fills it in, so selection stays "
            f"{c.REASON_PRODUCER_PENDING} for this capture; the next revision's capture records its node"
        )
    return (
        f'pod {pod.name} is now on node "{d.now}" but the session recorded node "{d.recorded}": KServe '
        "decides from the recorded node"
    )


def request_group_command(pod: Pod, group: str) -> str:
    """`kubectl patch` requesting `group` on the pod's InferenceService's predictor (placeholders, not shell
    syntax, where the pod does not say)."""
    isvc = pod.meta.labels.get(c.LABEL_ISVC, "")
    return kubectl(
        "-n {ns} patch inferenceservice {isvc} --type=merge -p {body}",
        ns=Namespace(pod.namespace),
        isvc=Name("inferenceservice", isvc) if isvc else Placeholder(PLACEHOLDER_ISVC),
        body=Json({"spec": {"predictor": {"annotations": {c.ANNOTATION_NODE_GROUP: group or PLACEHOLDER_GROUP}}}}),
    )


def _drift(
    snapshot: ClusterSnapshot,
    pod: Pod | None,
    recorded: ActiveSession | None,
    real: Decision,
    created: CreatedCache | None,
    default_group: str,
    commands: list[str],
) -> list[str]:
    out: list[str] = []
    if recorded is not None and pod is not None:
        for d in session_drift(pod, recorded):
            out.append(_drift_text(pod, d, commands))
    if recorded is not None and recorded.node_name and recorded.node_name not in snapshot.node_by_name:
        out.append(
            f"the recorded node {recorded.node_name} no longer exists: KServe skips matching groups "
            "and goes to the default"
        )
    if created is not None:
        group = created.node_group or default_group
        label = f"KernelCache {created.namespace}/{created.name}"
        if not real.ok:
            out.append(
                f'{label} was created in group "{group}", but today KServe\'s selection fails with '
                f"{real.reason}: {real.message} (a created KernelCache is never moved)"
            )
        elif real.group != group:
            out.append(
                f'{label} is in group "{group}" (source {created.selection_source or "unknown"}) but '
                f'KServe would choose "{real.group}" (source {real.source}) today; a created '
                "KernelCache is never moved: only a new artifact digest makes a new one"
            )
        elif created.selection_source and created.selection_source != real.source:
            out.append(
                f'{label} was placed in "{group}" by source {created.selection_source}; today the '
                f"same group comes from source {real.source}"
            )
        if group and not created.group_exists:
            out.append(
                f'{label} references KernelCacheNodeGroup "{group}", which no longer exists (KServe '
                "marks it NodeGroupNotFound and prepares it nowhere)"
            )
    return out


# ---- the answer: one paragraph and the next command ------------------------------------------------------


def answer(why: WhyGroup) -> tuple[str, str]:
    """What a person needs first: why the verdict is what it is, and the command to run next."""
    d = why.decision
    ns = why.capture.namespace if why.capture is not None else why.namespace
    if d.ok:
        text = f"{d.message[:1].upper()}{d.message[1:]} (source {d.source})."
        if why.kernel_cache is not None:
            kc = why.kernel_cache
            return (
                f"{text} KernelCache {kc.namespace}/{kc.name} was created in group "
                f'"{kc.node_group or why.default_group}".',
                kubectl("-n {ns} get kernelcache {kc}", ns=Namespace(kc.namespace), kc=Name("kernelcache", kc.name)),
            )
        return (
            f"{text} KServe creates the KernelCache in this group when the capture completes.",
            kubectl("get kernelcachenodegroup {group} -o yaml", group=Name("kernelcachenodegroup", str(d.group))),
        )
    created = (
        "KServe creates no KernelCache for this capture and emits a Warning event"
        if why.kernel_cache is None
        else "KServe would emit a Warning event"
    )
    text = f"{d.message}: {created}."
    if d.reason == c.REASON_AMBIGUOUS:
        matching = [g.name for g in why.groups if g.matches]
        text = (
            f"Node {why.node} matches {len(matching)} groups ({', '.join(matching)}) and the pod requested "
            f"none: KServe does not choose (no fallback to the default); {created}. Request one group on the "
            "InferenceService's pod template (the next revision's capture records it), or make the groups' "
            "selectors disjoint."
        )
        return text, _request_group(why, matching[0] if matching else "")
    if d.reason == c.REASON_INVALID_REQUESTED:
        return text, kubectl("get kernelcachenodegroups")
    if d.reason == c.REASON_PRODUCER_PENDING:
        if why.pod_name:
            return text, kubectl(
                "-n {ns} get pod {pod} -o wide", ns=Namespace(why.namespace), pod=Name("pod", why.pod_name)
            )
        return text, kubectl(
            "-n {ns} get kernelcachecapture {capture} -o yaml",
            ns=Namespace(ns),
            capture=Name("kernelcachecapture", why.capture.name if why.capture else ""),
        )
    if d.reason == c.REASON_NO_MATCH and why.node and why.node_found:
        return text, kubectl("get node {node} --show-labels", node=Name("node", why.node))
    if d.reason in (c.REASON_NO_MATCH, c.REASON_INVALID_DEFAULT):
        return (
            f"{text} Set defaultNodeGroup to a KernelCacheNodeGroup name in the {c.CONFIG_KEY} key of "
            f"ConfigMap {c.KSERVE_NAMESPACE}/{c.CONFIGMAP_NAME}.",
            kubectl(
                "-n {ns} get configmap {cm} -o jsonpath={{.data.kernelcache}}",
                ns=Namespace(c.KSERVE_NAMESPACE),
                cm=Name("configmap", c.CONFIGMAP_NAME),
            ),
        )
    return text, kubectl("get kernelcachenodegroups")


def _request_group(why: WhyGroup, group: str) -> str:
    """A merge patch that requests `group` on the InferenceService's predictor (a JSON body, shell-quoted)."""
    isvc = why.pod.meta.labels.get(c.LABEL_ISVC, "") if why.pod is not None else ""
    if not isvc and why.capture is not None:
        isvc = why.capture.meta.labels.get(c.LABEL_ISVC, "")
    if not isvc or not group:
        return kubectl("get kernelcachenodegroups")
    return kubectl(
        "-n {ns} patch inferenceservice --type=merge -p {body} -- {isvc}",
        ns=Namespace(why.namespace),
        body=Json({"spec": {"predictor": {"annotations": {c.ANNOTATION_NODE_GROUP: group}}}}),
        isvc=Name("inferenceservice", isvc),
    )
