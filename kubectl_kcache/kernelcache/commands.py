"""The plugin's own commands that answers point to, each built in one place: only with names Kubernetes
would accept (a value from the cluster is never put where kubectl could read it as an option)."""

from __future__ import annotations

from ..apivalidation import dns_label_errors, subdomain_errors
from ..text import command


def why_not_ready_command(namespace: str, name: str) -> str | None:
    """`kubectl kcache why-not-ready NAME -n NAMESPACE`: one KernelCache's path to Ready, node by node; None
    when the name or the namespace is not one Kubernetes accepts."""
    if not name or not namespace or subdomain_errors(name) or dns_label_errors(namespace):
        return None
    return command("kubectl", "kcache", "why-not-ready", name, "-n", namespace)
