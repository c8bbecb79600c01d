"""why-not-ready's answer: the gates of the cache and of each node, the causes folded across nodes, and the
documents (`kind: WhyNotReady`, and `WhyNotReadyList` for -A), with the gate ids of the contract."""

from __future__ import annotations

from typing import Any

import msgspec

from .. import objects as o
from ..kernelcache import constants as c
from ..kernelcache.aggregate import Aggregate

KIND = "WhyNotReady"
VERSION = 1
WAITING = "waiting"
CACHE_GATES = (
    "exists",
    "capture-link",
    "usage",
    "config",
    "verification",
    "group",
    "job-namespace",
    "prefetcher-identity",
    "requeue",
)
NODE_GATES = (
    "member",
    "ready",
    "kernelcachenode",
    "agent-pod",
    "agent-pass",
    "entry",
    "job",
    "pod",
    "pull",
    "image-present",
    "entry-state",
)
Passed = bool | str | None  # True, False, "waiting", or None: not read / not evaluated


# ---- the model ------------------------------------------------------------------------------------------


class CacheGate(msgspec.Struct, frozen=True):
    id: str
    passed: Passed
    detail: str
    kserve: tuple[str, str, str] | None = None  # (state, reason, message) KServe writes at this gate
    evidence: tuple[str, ...] = ()
    next: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "passed": self.passed,
            "detail": self.detail,
            "kserve": None
            if self.kserve is None
            else {"state": self.kserve[0], "reason": self.kserve[1], "message": self.kserve[2]},
            "evidence": list(self.evidence),
            "next": self.next,
        }


class NodeGate(msgspec.Struct, frozen=True):
    id: str
    passed: Passed
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "passed": self.passed, "detail": self.detail}


class NodeTrace(msgspec.Struct, frozen=True):
    name: str
    member: bool
    ready: bool
    cordoned: bool
    gates: tuple[NodeGate, ...]
    entry: o.CacheEntry | None = None
    job: tuple[str, str] | None = None  # (name, state)
    pod: tuple[str, str] | None = None  # (name, failure)
    cause: str = ""  # the blocking gate's cause, in words shared by every node it holds
    next: str | None = None

    @property
    def blocked_by(self) -> str | None:
        if self.entry is not None and self.entry.state == c.ENTRY_READY and self.member and self.ready:
            return None
        gate = next((g for g in self.gates if g.passed is not True and g.passed is not None), None)
        if gate is not None:
            return gate.id
        if self.gates and self.gates[-1].passed is None:  # the chain ends on a list not read: not known Ready
            return self.gates[-1].id
        return None

    @property
    def counted(self) -> bool:
        """A Ready member: KServe counts it in nodeCount."""
        return self.member and self.ready

    def to_dict(self) -> dict[str, Any]:
        e = self.entry
        return {
            "name": self.name,
            "member": self.member,
            "ready": self.ready,
            "cordoned": self.cordoned,
            "gates": [g.to_dict() for g in self.gates],
            "blockedBy": self.blocked_by,
            "entry": None if e is None else {"state": e.state, "message": e.message, "lastUpdate": e.last_update},
            "job": None if self.job is None else {"name": self.job[0], "state": self.job[1]},
            "pod": None if self.pod is None else {"name": self.pod[0], "failure": self.pod[1]},
        }


class Cause(msgspec.Struct, frozen=True):
    cause: str
    gate: str
    nodes: tuple[str, ...]
    next: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"cause": self.cause, "gate": self.gate, "nodes": list(self.nodes), "next": self.next}


class WhyNotReady(msgspec.Struct, frozen=True):
    namespace: str
    name: str
    group: str | None
    found: bool
    cache: tuple[CacheGate, ...]
    nodes: tuple[NodeTrace, ...]
    aggregate: Aggregate | None
    written: tuple[str, str, str, tuple[int, int, int, int]] | None  # state, reason, message, counts
    admission: str = ""
    unread: tuple[str, ...] = ()
    causes: tuple[Cause, ...] = ()
    # -A: no node chains are kept, only (Ready members, those Ready as KServe counts) and the causes
    summary: tuple[int, int] | None = None

    @property
    def cache_blocked_by(self) -> CacheGate | None:
        return next((g for g in self.cache if g.passed is not True and g.passed is not None), None)

    @property
    def counted(self) -> tuple[NodeTrace, ...]:
        return tuple(n for n in self.nodes if n.counted)

    @property
    def counted_count(self) -> int:
        """How many Ready members KServe counts (nodeCount)."""
        return self.summary[0] if self.summary is not None else len(self.counted)

    @property
    def ready(self) -> bool:
        """Ready on every Ready member, as KServe counts (and at least one)."""
        return 0 < self.counted_count == self.ready_count and self.cache_blocked_by is None

    @property
    def ready_count(self) -> int:
        if self.summary is not None:
            return self.summary[1]
        return sum(1 for n in self.counted if n.blocked_by is None)

    @property
    def lagging(self) -> bool:
        """The written status differs from the aggregate KServe computes (only when its pass gets that far)."""
        if self.aggregate is None or self.written is None or self.cache_blocked_by is not None:
            return False
        a = self.aggregate
        counts = (a.counts.node_count, a.counts.nodes_ready, a.counts.nodes_preparing, a.counts.nodes_error)
        return (a.state, a.reason, counts) != (self.written[0], self.written[1], self.written[3])

    @property
    def verdict(self) -> str:
        """Line 1, in KServe's terms."""
        if not self.found:
            return f"KernelCache {self.namespace}/{self.name} does not exist"
        kserve = self.written[0] if self.written and self.written[0] else "no status yet"
        no_members = self.summary is None and not any(n.member for n in self.nodes)
        if (
            self.group is None
            or no_members
            or (
                self.aggregate is not None
                and not self.aggregate.counts.node_count
                and self.aggregate.reason == c.REASON_NO_MATCHING_NODES
            )
        ):
            stop = self.cache_blocked_by
            if self.group is None:
                why = "it has no node group"
            elif stop is not None and stop.id != "group":
                why = f"KServe's pass stops at {stop.id}"
            else:
                why = f"group {self.group} has no member"
            return f"Ready on no node: {why}; KServe: {kserve}"
        return f"Ready on {self.ready_count} of {self.counted_count} Ready members of {self.group}; KServe: {kserve}"

    @property
    def node_causes(self) -> tuple[Cause, ...]:
        """The causes that hold Ready members (NotReady members and non-members apart), most nodes first."""
        return tuple(x for x in self.causes if x.gate not in ("member", "ready"))

    @property
    def top_cause(self) -> str | None:
        """The gate that holds the most of its Ready members: where the cache's pass stops, else the first node
        cause; None when Ready."""
        if self.ready:
            return None
        stop = self.cache_blocked_by
        if stop is not None:
            return stop.id
        return self.node_causes[0].gate if self.node_causes else None

    @property
    def next_command(self) -> str | None:
        gate = self.cache_blocked_by
        if gate is not None and gate.next:
            return gate.next
        return next((x.next for x in self.causes if x.next), None)

    def to_dict(self) -> dict[str, Any]:
        agg: dict[str, Any] | None = None
        if self.aggregate is not None:
            a = self.aggregate
            agg = {
                "computed": {
                    "state": a.state,
                    "reason": a.reason,
                    "message": a.message,
                    "counts": {
                        "nodeCount": a.counts.node_count,
                        "nodesReady": a.counts.nodes_ready,
                        "nodesPreparing": a.counts.nodes_preparing,
                        "nodesError": a.counts.nodes_error,
                    },
                },
                "written": None
                if self.written is None
                else {
                    "state": self.written[0],
                    "reason": self.written[1],
                    "message": self.written[2],
                    "counts": dict(
                        zip(("nodeCount", "nodesReady", "nodesPreparing", "nodesError"), self.written[3], strict=True)
                    ),
                },
                "lagging": self.lagging,
            }
        return {
            "kind": KIND,
            "version": VERSION,
            "kernelCache": {"namespace": self.namespace, "name": self.name, "group": self.group},
            "result": {
                "ready": self.ready,
                "verdict": self.verdict,
                "cache": [g.to_dict() for g in self.cache],
                **({} if self.summary is not None else {"nodes": [n.to_dict() for n in self.nodes]}),
                "causes": [x.to_dict() for x in self.causes],
                "topCause": self.top_cause,
                "aggregate": agg,
                **({} if self.summary is not None else {"admission": self.admission}),
                "notRead": list(self.unread),
            },
        }
