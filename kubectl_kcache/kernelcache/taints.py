"""Taints and tolerations with Kubernetes' rules (k8s.io/api/core/v1 toleration.go, the scheduler's
TaintToleration filter) and the tolerations the DaemonSet controller adds to its own pods."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from ..apivalidation import TAINT_EFFECTS, invalid, label_value_errors, not_supported, qualified_name_errors
from ..objects import Node, Taint, Toleration

NO_SCHEDULE = "NoSchedule"
NO_EXECUTE = "NoExecute"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
BLOCKING_EFFECTS = (NO_SCHEDULE, NO_EXECUTE)


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """core/v1 Toleration.ToleratesTaint: effect empty matches all; operator Exists ignores the value;
    an empty key with Exists matches every taint; an empty operator means Equal."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    operator = toleration.operator or "Equal"
    if operator == "Exists":
        return True
    if operator == "Equal":
        if not toleration.key:
            return False  # an empty key is only valid with Exists
        return toleration.value == taint.value
    return False


def tolerated_by(taint: Taint, tolerations: Iterable[Toleration]) -> Toleration | None:
    return next((t for t in tolerations if tolerates(t, taint)), None)


def untolerated_taints(
    node: Node, tolerations: Iterable[Toleration], effects: tuple[str, ...] = BLOCKING_EFFECTS
) -> list[Taint]:
    """The node's taints with one of `effects` that no toleration tolerates."""
    tols = list(tolerations)
    return [t for t in node.taints if t.effect in effects and tolerated_by(t, tols) is None]


def evicting_after(node: Node, tolerations: Iterable[Toleration]) -> list[tuple[Taint, int]]:
    """NoExecute taints tolerated only for a while: pods are evicted after the tolerationSeconds of the
    first matching toleration (the taint manager's rule; negative means at once)."""
    tols = list(tolerations)
    out = []
    for taint in node.taints:
        if taint.effect != NO_EXECUTE:
            continue
        tol = tolerated_by(taint, tols)
        if tol is not None and tol.toleration_seconds is not None:
            out.append((taint, max(0, tol.toleration_seconds)))
    return out


class TaintJoin:
    """`untolerated_taints` and `evicting_after` of many nodes against one list of tolerations: nodes with the
    same taints share one answer (a fleet has a handful of distinct taint sets), so a check over 50,000 nodes
    matches each distinct set once instead of each node."""

    def __init__(self, tolerations: Iterable[Toleration]):
        self.tolerations = tuple(tolerations)
        self._untolerated: dict[tuple[tuple[Taint, ...], tuple[str, ...]], list[Taint]] = {}
        self._evicting: dict[tuple[Taint, ...], list[tuple[Taint, int]]] = {}

    def untolerated(self, node: Node, effects: tuple[str, ...] = BLOCKING_EFFECTS) -> list[Taint]:
        key = (node.taints, effects)
        found = self._untolerated.get(key)
        if found is None:
            found = self._untolerated[key] = untolerated_taints(node, self.tolerations, effects)
        return list(found)

    def evicting(self, node: Node) -> list[tuple[Taint, int]]:
        found = self._evicting.get(node.taints)
        if found is None:
            found = self._evicting[node.taints] = evicting_after(node, self.tolerations)
        return list(found)


# pkg/controller/daemon/util AddOrUpdateDaemonPodTolerations: added to every daemon pod.
DAEMONSET_DEFAULT_TOLERATIONS: tuple[Toleration, ...] = (
    Toleration(key="node.kubernetes.io/not-ready", operator="Exists", effect=NO_EXECUTE),
    Toleration(key="node.kubernetes.io/unreachable", operator="Exists", effect=NO_EXECUTE),
    Toleration(key="node.kubernetes.io/disk-pressure", operator="Exists", effect=NO_SCHEDULE),
    Toleration(key="node.kubernetes.io/memory-pressure", operator="Exists", effect=NO_SCHEDULE),
    Toleration(key="node.kubernetes.io/pid-pressure", operator="Exists", effect=NO_SCHEDULE),
    Toleration(key="node.kubernetes.io/unschedulable", operator="Exists", effect=NO_SCHEDULE),
)


def daemon_pod_tolerations(template_tolerations: Iterable[Toleration]) -> list[Toleration]:
    """What a DaemonSet pod ends up tolerating: its template's tolerations plus the controller's."""
    return list(template_tolerations) + list(DAEMONSET_DEFAULT_TOLERATIONS)


# ---- core/v1 validation (k8s.io/kubernetes pkg/apis/core/validation ValidateTolerations, v1.36) ------------
# A KernelCacheNodeGroup's CRD schema accepts any strings here; Kubernetes rejects them later, in the agent
# DaemonSet patch (for the union of every group's tolerations) and in each preparation Job of the group.

SUPPORTED_OPERATORS = ("Equal", "Exists")
GATED_OPERATORS = ("Lt", "Gt")  # alpha gate TaintTolerationComparisonOperators, off by default
SUPPORTED_EFFECTS = TAINT_EFFECTS


class TolerationError(msgspec.Struct, frozen=True):
    """One problem of one toleration, worded as the API server words it."""

    field: str  # key | operator | effect | value
    message: str  # e.g. 'Unsupported value: "In": supported values: "Equal", "Exists"'

    def at(self, path: str) -> str:
        return f"{path}.{self.field}: {self.message}"


def toleration_errors(tol: Toleration) -> list[TolerationError]:
    """Why Kubernetes rejects this toleration in a pod template (empty when it is valid), in its order."""
    out: list[TolerationError] = []
    if tol.key:
        out += [TolerationError("key", invalid(tol.key, m)) for m in qualified_name_errors(tol.key)]
    elif tol.operator != "Exists":
        message = 'operator must be Exists when `key` is empty, which means "match all values and all keys"'
        out.append(TolerationError("operator", invalid(tol.operator, message)))
    if tol.toleration_seconds is not None and tol.effect != NO_EXECUTE:
        message = "effect must be 'NoExecute' when `tolerationSeconds` is set"
        out.append(TolerationError("effect", invalid(tol.effect, message)))
    if tol.operator in ("Equal", ""):
        out += [TolerationError("operator", invalid(tol.value, m)) for m in label_value_errors(tol.value)]
    elif tol.operator == "Exists":
        if tol.value:
            message = "value must be empty when `operator` is 'Exists'"
            out.append(TolerationError("operator", invalid(tol.value, message)))
    else:
        supported = SUPPORTED_OPERATORS + (GATED_OPERATORS if tol.operator in GATED_OPERATORS else ())
        out.append(TolerationError("operator", not_supported(tol.operator, supported)))
    if tol.effect and tol.effect not in SUPPORTED_EFFECTS:
        out.append(TolerationError("effect", not_supported(tol.effect, SUPPORTED_EFFECTS)))
    return out


def invalid_message(kind: str, name: str, path: str, tolerations: Iterable[Toleration]) -> str:
    """The API server's 422 text for a pod template with these tolerations, or "" when they are valid.
    `kind` is e.g. `DaemonSet.apps`, `path` e.g. `spec.template.spec.tolerations`."""
    errors: list[str] = []
    for i, tol in enumerate(tolerations):
        for e in toleration_errors(tol):
            text = e.at(f"{path}[{i}]")
            if text not in errors:
                errors.append(text)
    if not errors:
        return ""
    body = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    return f'{kind} "{name}" is invalid: {body}'
