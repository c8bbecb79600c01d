"""What the why-* commands share: their output formats, the lists they read from a file, the
namespace they answer in offline, and how an explanation is printed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from ..errors import InputError
from .flags import use_color


def why_selection(command: str, namespace: str | None, nodes: Any = None) -> Any:
    """Only the kinds `command` reads live (its lists in snapshot/plan.py: from a file the rest is not
    decoded), and only the pods of `namespace` when it is known (the pod asked about is there); nodes
    without their image lists (only the doctor reads them); with `nodes` (objects -> node names), only the
    nodes it names, as the live reads get them by name."""
    from ..objects import NodeWithoutImages
    from ..snapshot import plan
    from ..snapshot.files.load import Selection

    return Selection(
        plan.fields_of(command),
        {"pods": namespace} if namespace else {},
        {"nodes": NodeWithoutImages},
        {"nodes": nodes} if nodes is not None else {},
    )


def pods_nodes(pod: str, namespace: str | None) -> Callable[[list[tuple[str, Any]]], set[str]]:
    """The nodes of the pods named `pod` (in `namespace` when given): what why-not-cached reads live."""
    return lambda objects: {
        o.node_name
        for f, o in objects
        if f == "pods" and o.name == pod and (namespace is None or o.namespace == namespace)
    }


def print_explanation(why: Any, kind: str, output: str, source: Any) -> None:
    """A why-* answer in the `output` format registered for its `kind`: the answer first for people (`wide`:
    with all the evidence), or its document with where it came from."""
    from ..report import render
    from ..report.terminal import terminal_width

    render(kind, why, output, sys.stdout, color=use_color(), width=terminal_width(sys.stdout), source=source)


def pod_in_namespace(pod: Any, namespace: str) -> Any:
    """The manifest's pod in the namespace it is evaluated in (the API server sets it at creation)."""
    from msgspec.structs import replace

    return replace(pod, metadata=replace(pod.meta, namespace=namespace))


def default_namespace_offline(snap: Any, pod: str | None, capture: str | None) -> str:
    """Offline there is no kubeconfig context: use the namespace where the pod or capture is, if unique."""
    names = {p.namespace for p in snap.pods if p.name == pod} if pod else set()
    if not names and pod:
        names = {
            c.namespace for c in snap.captures if c.active_session is not None and c.active_session.pod_name == pod
        }
    if capture:
        names |= {c.namespace for c in snap.captures if c.name == capture}
    if len(names) > 1:
        raise InputError(f"found in several namespaces ({', '.join(sorted(names))}): use -n")
    if not names and snap.pods:
        what = f'pod "{pod}"' if pod else f'KernelCacheCapture "{capture}"'
        searched = sorted({p.namespace for p in snap.pods} | {c.namespace for c in snap.captures})
        raise InputError(f"{what} not found in the input files (searched namespaces: {', '.join(searched)})")
    return next(iter(names), "default")
