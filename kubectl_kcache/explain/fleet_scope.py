"""Whether the fleet view's scope holds what the user named: a mistyped namespace or InferenceService must not
read as a clean fleet of zero pods."""

from __future__ import annotations

from ..errors import NotInScope
from ..snapshot import plan
from ..snapshot.model import ClusterSnapshot
from ..snapshot.reads import covering


def check_scope(snapshot: ClusterSnapshot, namespace: str | None, isvc: str, pods: int) -> None:
    """NotInScope (exit 1) when no serving pod is in scope because the namespace does not exist, or because no
    pod carries the InferenceService's label (InferenceServices themselves are not read: one scaled to zero
    reads as absent, and the message says how it was judged)."""
    if pods:
        return
    if namespace is not None and namespace_absent(snapshot, namespace):
        raise NotInScope(f'namespace "{namespace}" not found')
    if isvc:
        where = f'in namespace "{namespace}"' if namespace is not None else "in any namespace"
        raise NotInScope(
            f'no InferenceService "{isvc}" {where}: no pod carries the label serving.kserve.io/inferenceservice={isvc} '
            f"(kubectl get inferenceservices{f' -n {namespace}' if namespace else ' -A'})"
        )


def namespace_absent(snapshot: ClusterSnapshot, namespace: str) -> bool:
    """True only when the namespaces were read and `namespace` is not among them (no claim otherwise)."""
    read = covering(snapshot, plan.namespace(namespace))
    if not read.ok or (snapshot.reads_assumed and not snapshot.namespaces):
        return False
    return not snapshot.namespace_exists(namespace)
