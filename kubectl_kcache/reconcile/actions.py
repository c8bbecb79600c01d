"""Actions: what reconcile would do, as small frozen records (the documented `ReconcilePlan`)."""

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
    diff: tuple[str, ...] = field(default=(), compare=False, repr=False)  # `- current` / `+ wanted` lines
    # an event's evaluation (what the selection was decided from): a replica taking over does not repeat
    # an event another replica already emitted for the same evaluation
    signature: str = field(default="", compare=False, repr=False)

    @property
    def written(self) -> Mapping[str, Any] | None:
        """What goes to the API server, as printed in the plan: the object created, the merge patch, the
        status field set; None for deletes and events."""
        if self.verb == UPDATE_STATUS and self.related:
            return {"status": {"kernelCacheRef": {"namespace": self.namespace, "name": self.related}}}
        if self.verb in (CREATE, PATCH):
            return self.body
        return None

    @property
    def is_write(self) -> bool:
        return self.verb != EVENT

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "verb": self.verb,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "reason": self.reason,
        }
        for key, value in (
            ("nodeGroup", self.node_group),
            ("selectionSource", self.selection_source),
            ("eventReason", self.event_reason),
            ("message", self.message),
        ):
            if value is not None:
                out[key] = value
        if self.written is not None:
            out["body"] = self.written
        if self.diff:
            out["diff"] = list(self.diff)
        return out


def plan_document(actions: Iterable[Action]) -> dict[str, Any]:
    return {"kind": "ReconcilePlan", "version": 1, "actions": [a.to_dict() for a in actions]}
