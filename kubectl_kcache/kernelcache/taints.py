"""Taints and tolerations with Kubernetes' rules (k8s.io/api/core/v1 toleration.go, the scheduler's
TaintToleration filter) and the tolerations the DaemonSet controller adds to its own pods."""

from __future__ import annotations

from collections.abc import Iterable

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
