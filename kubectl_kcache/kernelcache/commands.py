"""The plugin's own commands that answers point to, each built in one place by the command builder (only
with names Kubernetes would accept)."""

from __future__ import annotations

from functools import lru_cache

from ..suggest import Name, Namespace, kubectl_or_none


@lru_cache(maxsize=4096)  # the doctor names each KernelCache's in several findings (2,000 caches: 4,000 builds)
def why_not_ready_command(namespace: str, name: str) -> str | None:
    """`kubectl kcache why-not-ready NAME -n NAMESPACE`: one KernelCache's path to Ready, node by node; None
    when the name or the namespace is not one Kubernetes accepts."""
    return kubectl_or_none("kcache why-not-ready {kc} -n {ns}", kc=Name("kernelcache", name), ns=Namespace(namespace))
