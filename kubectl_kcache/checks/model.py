"""The doctor's data: check specs, findings, results and the report (the documented `DoctorReport` document)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import msgspec

from ..snapshot.kinds import ListSpec
from ..snapshot.model import ClusterSnapshot
from ..snapshot.plan import JOB_NAMESPACE as JOB_NAMESPACE
from ..snapshot.plan import SCOPE
from ..snapshot.reads import Unread

SEVERITIES = ("error", "warning", "info")
SEVERITY_RANK = {"error": 3, "warning": 2, "info": 1, "never": 99}
STATUSES = ("pass", "fail", "skipped", "not-applicable")


class ObjectRef(msgspec.Struct, frozen=True):
    kind: str
    name: str
    namespace: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "namespace": self.namespace}

    def __str__(self) -> str:
        return f"{self.kind}/{self.namespace + '/' if self.namespace else ''}{self.name}"


@dataclass(frozen=True)
class Finding:
    check: str
    severity: str
    object: ObjectRef
    message: str
    hint: str = ""
    group: str | None = None
    evidence: tuple[str, ...] = ()
    suppressed: bool = False
    # why it is suppressed (the file entry's reason, or the annotation); not part of the JSON report
    suppressed_by: str = field(default="", compare=False)
    # the kind of finding within its check, stable and documented (`check/code` in docs/checks.md), so that a
    # suppression can hide one kind without hiding another on the same object
    code: str = ""
    # findings of one check and code with the same cause are one problem hitting many objects, whatever their
    # node group: shown once in the table, with a count, a sample and `lister`, the command that lists every
    # object it hits. So a cause names neither the object nor its group (those are `object` and `group`)
    cause: str = ""
    lister: str = ""
    # parts of `message`, verbatim, that many findings share (why KServe's node pass may not have run): the
    # table says each once per report; the message keeps them, so JSON and `-o wide` carry the full text
    shared: tuple[str, ...] = field(default=(), compare=False)

    @property
    def full_code(self) -> str:
        return f"{self.check}/{self.code}" if self.code else self.check

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "check": self.check,
            "code": self.code,
            "severity": self.severity,
            "object": self.object.to_dict(),
            "group": self.group,
            "message": self.message,
            "hint": self.hint,
            "suppressed": self.suppressed,
        }
        if self.evidence:
            out["evidence"] = list(self.evidence)
        return out


def finding_of(check: str) -> partial[Finding]:
    """A check module's maker of its findings, the check id given once: `finding = finding_of(ID)`."""
    return partial(Finding, check)


class Code(msgspec.Struct, frozen=True):
    """A kind of finding of one check: its stable id, default severity and what it means."""

    id: str
    severity: str
    summary: str


class CheckRead(msgspec.Struct, frozen=True):
    """A read a check needs: one list of the read plan (`snapshot/plan.py`), or several that count as one (the
    four CRDs). Its namespace may be a placeholder (`readplan.JOB_NAMESPACE`, `readplan.SCOPE`), resolved
    by the runner.

    `optional` reads widen a check without being essential: when one is forbidden or not served the
    check still runs and its result says which part was left out (`note`).
    """

    what: ListSpec | tuple[ListSpec, ...]
    optional: bool = False
    note: str = ""
    verb: str = "list"

    @property
    def lists(self) -> tuple[ListSpec, ...]:
        return self.what if isinstance(self.what, tuple) else (self.what,)

    @property
    def resource(self) -> str:
        return self.lists[0].plural

    @property
    def namespace(self) -> str | None:
        return self.lists[0].namespace

    @property
    def selector(self) -> str:
        """How the list is narrowed, for docs/checks.md and the ClusterRole's comments."""
        parts = []
        for key in ("label_selector", "field_selector"):
            values = [getattr(x, key) for x in self.lists if getattr(x, key)]
            if values:
                name = "labelSelector" if key == "label_selector" else "fieldSelector"
                rest = [v.removeprefix("metadata.name=") for v in values[1:]]
                parts.append(f"{name} {values[0]}" + (f" (and {', '.join(rest)})" if rest else ""))
        return "; ".join(parts)

    def __str__(self) -> str:
        ns = self.namespace
        return f"{self.verb} {self.resource}" + (f" in {ns}" if ns and ns != SCOPE else "")


class NotApplicable(Exception):
    """Raised by a check when there is nothing to check (feature disabled, no groups...)."""


class Skip(Exception):
    """Raised by a check when it cannot run (a read it needs was forbidden or its CRD is absent)."""


class CheckSpec(msgspec.Struct, frozen=True):
    id: str
    title: str
    severity: str
    reads: tuple[CheckRead, ...]
    func: Callable[[ClusterSnapshot], Iterable[Finding]]
    doc: str = ""
    order: int = 100
    # True: not applicable while the feature is disabled or its configuration is missing or invalid
    needs_feature: bool = False
    codes: tuple[Code, ...] = ()

    def code(self, code_id: str) -> Code | None:
        return next((x for x in self.codes if x.id == code_id), None)


class CheckResult(msgspec.Struct, frozen=True):
    id: str
    status: str
    reason: str = ""
    # lists the check needed or could use but could not make (forbidden, failed, not in the input files, not
    # read): its verdict, if any, is incomplete
    missing: tuple[Unread, ...] = ()

    @property
    def unread(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(str(u) for u in self.missing))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "status": self.status, "reason": self.reason}
        if self.unread:
            out["unread"] = list(self.unread)
        return out


class DoctorReport(msgspec.Struct, frozen=True):
    checks: tuple[CheckResult, ...]
    findings: tuple[Finding, ...]
    object_count: int = 0
    cluster: str = ""
    source: str = "live"
    titles: dict[str, str] = msgspec.field(default_factory=dict)
    # where the report came from (snapshot.provenance): API server or files, times, tool, scope
    provenance: dict[str, Any] = msgspec.field(default_factory=dict)
    judged_time: bool = False  # a check compared a time with "now" (the snapshot's clock)
    warnings: tuple[str, ...] = ()  # for stderr: what the run doubts in its input (not findings)

    def summary(self) -> dict[str, int]:
        active = [f for f in self.findings if not f.suppressed]
        return {
            "errors": sum(f.severity == "error" for f in active),
            "warnings": sum(f.severity == "warning" for f in active),
            "infos": sum(f.severity == "info" for f in active),
            "skipped": sum(c.status == "skipped" for c in self.checks),
            "incomplete": sum(bool(c.unread) for c in self.checks),
            "suppressed": sum(f.suppressed for f in self.findings),
            "checks": len(self.checks),
        }

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"kind": "DoctorReport", "version": 1}
        if self.provenance:
            doc["source"] = self.provenance
        return {
            **doc,
            "summary": self.summary(),
            "checks": [c.to_dict() for c in self.checks],
            "findings": [f.to_dict() for f in self.findings],
        }

    @property
    def incomplete(self) -> bool:
        """Some check could not make a read it needed or could use: no clean bill of health."""
        return any(c.unread for c in self.checks)

    @property
    def unreadable(self) -> tuple[Unread, ...]:
        """The lists the cluster could not give (forbidden, failed, not read): exit 3. A kind absent from
        input files is said in the report but is not a failure to read."""
        found = {str(u): u for c in self.checks for u in c.missing if u.exit_code != 2}
        return tuple(found[k] for k in sorted(found))

    def worst(self) -> str | None:
        """The most severe unsuppressed finding's severity, or None."""
        ranks = [SEVERITY_RANK[f.severity] for f in self.findings if not f.suppressed]
        if not ranks:
            return None
        return {3: "error", 2: "warning", 1: "info"}[max(ranks)]
