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

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

import msgspec

from ..errors import IncompleteError, InputError
from ..kernelcache import constants as c
from ..kernelcache.capture import capture_complete
from ..kernelcache.config import ConfigState, read_config
from ..kernelcache.gostrings import trim_space
from ..kernelcache.names import capture_revision_name, generated_kernel_cache_name
from ..kernelcache.selection import Decision, Step, select_node_group
from ..kernelcache.selectors import label_mismatch, matching_groups, selector_matches
from ..kernelcache.taints import untolerated_taints
from ..objects import ActiveSession, Capture, KernelCache, Node, Pod
from ..snapshot import ClusterSnapshot

KIND = "WhyGroup"
VERSION = 1
BASIS_CAPTURE = "capture"
BASIS_POD = "pod"
BASIS_WHAT_IF = "what-if"
WARNING = "warning"


@dataclass(frozen=True)
class GroupFit:
    """How the decision's node fits one group."""

    name: str
    matches: bool
    missing_labels: Mapping[str, str]
    untolerated_taints: tuple[str, ...]
    selector: Mapping[str, str]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "matches": self.matches, "missingLabels": dict(self.missing_labels),
                "untoleratedTaints": list(self.untolerated_taints)}


@dataclass(frozen=True)
class CreatedCache:
    """The KernelCache KServe created for the capture."""

    namespace: str
    name: str
    node_group: str | None
    selection_source: str | None
    group_exists: bool

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "nodeGroup": self.node_group, "selectionSource": self.selection_source}


@dataclass(frozen=True)
class WhyGroup:
    """The explanation; `to_dict()` is the `why-group -o json` document of design.md."""

    namespace: str
    pod_name: str | None
    basis: str
    capture: Capture | None
    decision: Decision
    steps: tuple[Step, ...]
    groups: tuple[GroupFit, ...]
    kernel_cache: CreatedCache | None = None
    drift: tuple[str, ...] = ()
    # What the decision looked at, for the renderers (not part of the JSON document).
    session: ActiveSession | None = None
    pod: Pod | None = None
    node_found: bool = False
    node_labels: Mapping[str, str] = dataclasses.field(default_factory=dict)
    other_label_count: int = 0
    default_group: str = ""
    config_problem: str = ""

    @property
    def node(self) -> str | None:
        return (self.session.node_name or None) if self.session else None

    @property
    def requested_group(self) -> str:
        return trim_space(self.session.requested_node_group) if self.session else ""

    @property
    def warnings(self) -> tuple[Step, ...]:
        return tuple(s for s in self.steps if s.outcome == WARNING)

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
            capture = {"namespace": self.capture.namespace, "name": self.capture.name,
                       "activeSession": session.to_dict() if session is not None else None}
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
            "steps": [s.to_dict() for s in self.steps],
            "groups": [g.to_dict() for g in self.groups],
        }


def explain(snapshot: ClusterSnapshot, namespace: str, pod_name: str | None = None,
            capture_name: str | None = None, what_if_node: str | None = None,
            what_if_group: str | None = None) -> WhyGroup:
    """Explain the node group of the capture made from `pod_name` (or of `capture_name`) in `namespace`."""
    if not pod_name and not capture_name:
        raise InputError("why-group needs a pod name or a KernelCacheCapture name")
    steps: list[Step] = []
    pod = _pod(snapshot, namespace, pod_name) if pod_name else None
    capture = _find_capture(snapshot, namespace, pod_name, pod, capture_name, steps)
    recorded = capture.active_session if capture is not None else None
    if not pod_name and recorded is not None and recorded.pod_name:
        pod_name = recorded.pod_name
        pod = _pod(snapshot, namespace, pod_name)
    if pod_name and pod is None:
        if capture is None:
            _raise_not_found(snapshot, namespace, pod_name)
        steps.append(Step("session", "pod-gone", f"pod {pod_name} no longer exists; KServe decides from the "
                                                 "session recorded on the capture"))
    if pod_name and recorded is not None and recorded.pod_name != pod_name:
        steps.append(Step("session", WARNING,
                          f"the session was claimed by pod {recorded.pod_name or '(none)'}, not {pod_name}: "
                          f"KServe decides from that pod's node and annotation; {pod_name}'s own do not "
                          "count"))
    if capture is not None and capture.kernel_cache_ref is None:
        complete = capture_complete(capture)
        if not complete:
            steps.append(Step("session", "incomplete",
                              f"capture {capture.name} is not complete ({complete.reason}): KServe selects a "
                              "group only once it completes; below is what it would decide now"))

    config = read_config(snapshot.configmap(c.KSERVE_NAMESPACE, c.CONFIGMAP_NAME))
    default_group = config.config.default_node_group if config.config is not None else ""

    # The session the decision starts from, and where it comes from.
    base: ActiveSession | None
    if recorded is not None and capture is not None:
        basis, base, origin = BASIS_CAPTURE, recorded, f"the session recorded on capture {capture.name}"
    elif pod is not None:
        basis, origin = BASIS_POD, f"the session predicted from pod {pod.name}"
        base = ActiveSession(id="", pod_name=pod.name, node_name=pod.node_name,
                             requested_node_group=pod.meta.annotations.get(c.ANNOTATION_NODE_GROUP, ""))
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
    steps.extend(_relabel_session_step(decision.steps, basis, session, capture, origin))
    config_problem = _config_problem(config)
    for extra in _warnings(snapshot, session, decision, config_problem, default_group):
        _insert(steps, extra)

    node = snapshot.node_by_name.get(session.node_name) if session and session.node_name else None
    kc, kc_drift = _created_cache(snapshot, capture)
    created = None
    if kc is not None:
        created = CreatedCache(kc.namespace, kc.name, kc.node_group or None,
                               kc.meta.annotations.get(c.ANNOTATION_SELECTION_SOURCE),
                               (kc.node_group or default_group) in snapshot.group_by_name)
    drift = kc_drift + _drift(snapshot, pod, recorded, real, created, default_group)
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
        session=session,
        pod=pod,
        node_found=node is not None,
        node_labels={k: v for k, v in sorted(labels.items()) if k in selector_keys},
        other_label_count=sum(1 for k in labels if k not in selector_keys),
        default_group=trim_space(default_group),
        config_problem=config_problem,
    )


# ---- finding the pod and the capture -------------------------------------------------------------

def _pod(snapshot: ClusterSnapshot, namespace: str, name: str) -> Pod | None:
    return next((p for p in snapshot.pods if p.namespace == namespace and p.name == name), None)


def _capture(snapshot: ClusterSnapshot, namespace: str, name: str) -> Capture | None:
    return next((k for k in snapshot.captures if k.namespace == namespace and k.name == name), None)


def _find_capture(snapshot: ClusterSnapshot, namespace: str, pod_name: str | None, pod: Pod | None,
                  capture_name: str | None, steps: list[Step]) -> Capture | None:
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
        generated = capture_revision_name(isvc, revision)
        if generated:
            capture = _capture(snapshot, namespace, generated)
            if capture is not None:
                steps.append(Step("session", "found",
                                  f"KernelCacheCapture {namespace}/{generated}: KServe's generated name for "
                                  f"InferenceService {isvc}, revision {revision}"))
                return capture
            why_not = f'the generated name "{generated}" does not exist'
        else:
            why_not = (f"the pod has no {c.LABEL_ISVC} and {c.LABEL_POD_TEMPLATE_HASH} labels, so KServe "
                       "generates no capture for it")
    candidates = sorted((k for k in snapshot.captures
                         if k.namespace == namespace and k.active_session is not None
                         and k.active_session.pod_name == pod_name), key=lambda k: (k.meta.created, k.name))
    if not candidates:
        if pod is not None:
            steps.append(Step("session", "not-found",
                              f"no KernelCacheCapture for pod {pod_name}: {why_not}, and no capture's "
                              "activeSession names the pod"))
        return None
    capture = candidates[-1]
    steps.append(Step("session", "found",
                      f"KernelCacheCapture {namespace}/{capture.name}: its activeSession names pod "
                      f"{pod_name}"))
    if len(candidates) > 1:
        others = ", ".join(k.name for k in candidates[:-1])
        steps.append(Step("session", WARNING,
                          f"the sessions of several captures name pod {pod_name}; using the newest, "
                          f"{capture.name} (also: {others})"))
    return capture


def _raise_not_found(snapshot: ClusterSnapshot, namespace: str, pod_name: str) -> NoReturn:
    for resource in ("pods", c.PLURAL_CAPTURES):
        read = snapshot.read_status(resource)
        if read is not None and read.status == "forbidden":
            raise IncompleteError(f'pod "{pod_name}" not found in namespace "{namespace}": cannot '
                                  f"{read.verb} {resource} (forbidden)")
    raise InputError(f'pod "{pod_name}" not found in namespace "{namespace}" and no KernelCacheCapture '
                     "names it")


def _created_cache(snapshot: ClusterSnapshot,
                   capture: Capture | None) -> tuple[KernelCache | None, list[str]]:
    """The KernelCache made from the capture: status.kernelCacheRef, else the generated name if it exists."""
    if capture is None:
        return None, []
    ref = capture.kernel_cache_ref
    if ref is not None and ref.name:
        ns = ref.namespace or capture.namespace
        kc = snapshot.kc_by_key.get(f"{ns}/{ref.name}")
        if kc is None:
            return None, [f"capture {capture.name} records KernelCache {ns}/{ref.name} in "
                          "status.kernelCacheRef, but that KernelCache no longer exists"]
        return kc, []
    if capture.artifact is not None and capture.artifact.image_reference:
        name = generated_kernel_cache_name(capture.name, capture.artifact.image_reference)
        return snapshot.kc_by_key.get(f"{capture.namespace}/{name}"), []
    return None, []


# ---- steps -----------------------------------------------------------------------------------------

def _relabel_session_step(decided: Iterable[Step], basis: str, session: ActiveSession | None,
                          capture: Capture | None, origin: str) -> list[Step]:
    """The decision's steps; the first `session` step says where a predicted or what-if session came from."""
    out = list(decided)
    if basis == BASIS_CAPTURE or not out or out[0].step != "session" or session is None:
        return out
    fields = (f"nodeName {session.node_name or '(none)'}, "
              f"requestedNodeGroup {session.requested_node_group or '(none)'}")
    if basis == BASIS_POD:
        where = f"capture {capture.name} has" if capture is not None else "there is"
        detail = (f"{where} no activeSession yet; predicted from pod {session.pod_name} as KServe would "
                  f"record it: {fields}")
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
        return (f"{where} key {c.CONFIG_KEY} is invalid ({config.error}): KServe creates no KernelCache "
                "until it is fixed; assuming no defaultNodeGroup")
    if not config.enabled:
        return f"{where} key {c.CONFIG_KEY}: enabled is false: KServe creates no KernelCache"
    return ""


def _warnings(snapshot: ClusterSnapshot, session: ActiveSession | None, decision: Decision,
              config_problem: str, default_group: str) -> list[Step]:
    out: list[Step] = []
    for resource, step in (("nodes", "node"), (c.PLURAL_NODE_GROUPS, "match"), ("configmaps", "default")):
        read = snapshot.read_status(resource)
        if read is not None and read.status in ("forbidden", "absent"):
            what = "forbidden" if read.status == "forbidden" else "not served"
            out.append(Step(step, WARNING, f"{resource} could not be read ({what}): the decision below "
                                           "assumes there are none and may be wrong"))
    if config_problem:
        out.append(Step("default", WARNING, config_problem))
    groups = snapshot.group_by_name
    node = snapshot.node_by_name.get(session.node_name) if session and session.node_name else None
    if decision.source == c.SOURCE_ANNOTATION and node is not None and decision.group in groups:
        group = groups[decision.group]
        if not selector_matches(group.node_selector, node.labels):
            wanted = label_mismatch(group.node_selector, node.labels).wanted
            lacks = ", ".join(f"{k}={v}" for k, v in wanted.items())
            out.append(Step("annotation", WARNING,
                            f'requested group "{group.name}" does not contain the producer node {node.name} '
                            f"(it lacks {lacks}): KServe accepts the request without checking and prepares "
                            f'the cache on the nodes of "{group.name}", not where the producer ran'))
    if node is not None and decision.reason != c.REASON_AMBIGUOUS:
        matches = [g.name for g in matching_groups(node.labels, groups.values())]
        if len(matches) > 1:
            out.append(Step("match", WARNING,
                            f"node {node.name} is in several groups ({', '.join(matches)}): a capture from "
                            f"it without {c.ANNOTATION_NODE_GROUP} fails with {c.REASON_AMBIGUOUS}"))
    out.extend(_default_label_trap(snapshot, trim_space(default_group)))
    return out


def _default_label_trap(snapshot: ClusterSnapshot, default: str) -> list[Step]:
    if not default or default in snapshot.group_by_name:
        return []
    key, eq, value = default.partition("=")
    if not (eq or "/" in default or any(default in n.labels for n in snapshot.nodes)):
        return []
    hint = "set it to a KernelCacheNodeGroup name (kubectl get kernelcachenodegroups)"
    if eq:
        named = [g.name for g in snapshot.node_groups if g.node_selector.get(key.strip()) == value.strip()]
        if named:
            hint = f"set it to the group whose selector has that label: {', '.join(sorted(named))}"
    return [Step("default", WARNING, f'defaultNodeGroup "{default}" looks like a node label, not a '
                                     f"KernelCacheNodeGroup name; {hint}")]


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


def _drift(snapshot: ClusterSnapshot, pod: Pod | None, recorded: ActiveSession | None, real: Decision,
           created: CreatedCache | None, default_group: str) -> list[str]:
    out: list[str] = []
    if recorded is not None and pod is not None and pod.name == recorded.pod_name:
        now = pod.meta.annotations.get(c.ANNOTATION_NODE_GROUP, "")
        if now != recorded.requested_node_group:
            tail = ("it fills an empty recorded value only while the capture session is still running"
                    if not recorded.requested_node_group else "it never overwrites a recorded value")
            out.append(f'pod {pod.name} annotation {c.ANNOTATION_NODE_GROUP} is now "{now}" but the '
                       f'session recorded "{recorded.requested_node_group}": KServe decides from the '
                       f"recorded value ({tail})")
        if pod.node_name != recorded.node_name:
            if not recorded.node_name:
                out.append(f"pod {pod.name} is now on node {pod.node_name} but the session has no nodeName "
                           "yet: KServe fills it in on the capture's next reconcile while the session is "
                           "running")
            else:
                out.append(f'pod {pod.name} is now on node "{pod.node_name}" but the session recorded node '
                           f'"{recorded.node_name}": KServe decides from the recorded node')
    if recorded is not None and recorded.node_name and recorded.node_name not in snapshot.node_by_name:
        out.append(f"the recorded node {recorded.node_name} no longer exists: KServe skips matching groups "
                   "and goes to the default")
    if created is not None:
        group = created.node_group or default_group
        label = f"KernelCache {created.namespace}/{created.name}"
        if not real.ok:
            out.append(f'{label} was created in group "{group}", but today KServe\'s selection fails with '
                       f"{real.reason}: {real.message} (a created KernelCache is never moved)")
        elif real.group != group:
            out.append(f'{label} is in group "{group}" (source {created.selection_source or "unknown"}) but '
                       f'KServe would choose "{real.group}" (source {real.source}) today; a created '
                       "KernelCache is never moved: only a new artifact digest makes a new one")
        elif created.selection_source and created.selection_source != real.source:
            out.append(f'{label} was placed in "{group}" by source {created.selection_source}; today the '
                       f"same group comes from source {real.source}")
        if group and not created.group_exists:
            out.append(f'{label} references KernelCacheNodeGroup "{group}", which no longer exists (KServe '
                       "marks it NodeGroupNotFound and prepares it nowhere)")
    return out
