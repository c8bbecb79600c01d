"""The node agent's own account of a failed pass: Warning events (events.k8s.io/v1, reporting controller
`kernelcachenode-agent`, action `Reconcile`) regarding its KernelCacheNode, reasons `ConfigError`,
`ReconcileError` and `ImageValidationError` (`controller.go@2058eebf`, `image_validation.go@2058eebf`).
KernelCacheNodes are cluster-scoped, so the events land in namespace `default`. Whether the shipped agent role
may create events is not in the stored sources: their absence proves nothing."""

from __future__ import annotations

from collections.abc import Iterable

from ..objects import Event
from . import constants as c


def is_agent_warning(event: Event) -> bool:
    return (
        event.type == "Warning"
        and event.involved_kind == c.KIND_NODE
        and event.reason in c.AGENT_EVENT_REASONS
        and event.reporting_controller == c.AGENT_REPORTING_CONTROLLER
    )


def agent_warnings(events: Iterable[Event]) -> dict[str, list[Event]]:
    """KernelCacheNode (= node) name -> the agent's Warning events on it, newest first."""
    out: dict[str, list[Event]] = {}
    for e in events:
        if is_agent_warning(e):
            out.setdefault(e.involved_name, []).append(e)
    for found in out.values():
        found.sort(key=lambda e: e.last_seen, reverse=True)
    return out
