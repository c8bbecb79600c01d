"""Actions: what reconcile would do, as small frozen records (the `ReconcilePlan` of design.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

CREATE = "create"
DELETE = "delete"
PATCH = "patch"
UPDATE_STATUS = "update-status"
EVENT = "event"


@dataclass(frozen=True)
class Action:
    verb: str
    kind: str
    name: str
    reason: str
    namespace: str | None = None
    node_group: str | None = None
    selection_source: str | None = None
    event_reason: str | None = None
    message: str | None = None
    # what the executor needs; not part of the printed plan
    body: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    uid: str = field(default="", compare=False, repr=False)
    resource_version: str = field(default="", compare=False, repr=False)  # a precondition, with uid
    related: str = field(default="", compare=False, repr=False)  # the KernelCache a status update links

    @property
    def is_write(self) -> bool:
        return self.verb != EVENT

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"verb": self.verb, "kind": self.kind, "namespace": self.namespace, "name": self.name,
                               "reason": self.reason}
        for key, value in (("nodeGroup", self.node_group), ("selectionSource", self.selection_source),
                           ("eventReason", self.event_reason), ("message", self.message)):
            if value is not None:
                out[key] = value
        return out


def plan_document(actions: Iterable[Action]) -> dict[str, Any]:
    return {"kind": "ReconcilePlan", "version": 1, "actions": [a.to_dict() for a in actions]}
