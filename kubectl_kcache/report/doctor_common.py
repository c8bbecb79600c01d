"""What the doctor renderers share: marks per status, grouping findings by check and by cause, the summary
line, the width of plain output."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from ..checks.model import CheckResult, DoctorReport, Finding, ObjectRef

# As checks.model's, kept here so that importing a renderer imports no checks.
SEVERITY_RANK = {"error": 3, "warning": 2, "info": 1}
UNICODE_MARKS = {"pass": "✔", "fail": "✖", "skipped": "⊘", "not-applicable": "–"}
ASCII_MARKS = {"pass": "ok", "fail": "FAIL", "skipped": "skip", "not-applicable": "n/a"}
UNICODE_BULLET = "·"


def can_encode(out: TextIO, text: str) -> bool:
    """Whether `out` can write `text`: a stream without an encoding (StringIO) takes anything."""
    encoding = getattr(out, "encoding", None)
    if not encoding:
        return True
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def write_text(out: TextIO, text: str) -> None:
    """Write text for people: characters `out`'s encoding cannot take become `?` instead of an error."""
    encoding = getattr(out, "encoding", None)
    if encoding and not can_encode(out, text):
        try:
            text = text.encode(encoding, "replace").decode(encoding)
        except LookupError:
            text = text.encode("ascii", "replace").decode("ascii")
    out.write(text)


def marks_for(out: TextIO) -> dict[str, str]:
    """The status marks `out` can show: the Unicode ones, or plain ASCII when its encoding can't."""
    unicode_ok = can_encode(out, "".join(UNICODE_MARKS.values()) + UNICODE_BULLET)
    return UNICODE_MARKS if unicode_ok else ASCII_MARKS


def object_path(obj: ObjectRef) -> str:
    """`Kind/namespace/name`, or `Kind/name` for cluster-scoped objects."""
    return "/".join(part for part in (obj.kind, obj.namespace, obj.name) if part)


@dataclass(frozen=True)
class CheckGroup:
    """One check with its findings, in report order. `result` is None for a finding whose check the report
    does not list (it is kept rather than dropped)."""

    id: str
    title: str
    status: str
    reason: str
    findings: tuple[Finding, ...]
    result: CheckResult | None = None

    @property
    def active(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if not f.suppressed)

    @property
    def suppressed(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.suppressed)

    @property
    def failed(self) -> bool:
        return self.status == "fail" or bool(self.active)


def check_groups(report: DoctorReport) -> list[CheckGroup]:
    """The report's checks in order, each with its findings (in report order); then any check that only
    findings name."""
    by_check: dict[str, list[Finding]] = {}
    for finding in report.findings:
        by_check.setdefault(finding.check, []).append(finding)
    groups = []
    for result in report.checks:
        groups.append(
            CheckGroup(
                result.id,
                report.titles.get(result.id, ""),
                result.status,
                result.reason,
                tuple(by_check.pop(result.id, ())),
                result,
            )
        )
    for check_id, findings in by_check.items():
        status = "fail" if any(not f.suppressed for f in findings) else "pass"
        groups.append(CheckGroup(check_id, report.titles.get(check_id, ""), status, "", tuple(findings)))
    return groups


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def is_clean(report: DoctorReport) -> bool:
    """No finding at all (not even a suppressed one) and no skipped check."""
    return not report.findings and not any(c.status == "skipped" for c in report.checks)


def clean_line(report: DoctorReport) -> str:
    """The one line a clean report renders to (a contract: the wording never changes)."""
    return f"no problems found in {len(report.checks)} checks over {report.object_count} objects"


def summary_line(report: DoctorReport) -> str:
    """E.g. `2 errors, 1 warning in 13 checks (1 incomplete, 3 suppressed)`. A check that could not make a read
    it needed (skipped) or could use (partial) makes the report incomplete: without findings the line says so
    first and never reads healthy."""
    s = report.summary()
    counts = [
        plural(s[key], word)
        for key, word in (("errors", "error"), ("warnings", "warning"), ("infos", "info"))
        if s[key]
    ]
    suppressed = [f"{s['suppressed']} suppressed"] if s["suppressed"] else []
    if s["incomplete"] and not counts:
        tail = f" ({suppressed[0]})" if suppressed else ""
        return (
            f"incomplete: {s['incomplete']} of {plural(s['checks'], 'check')} could not read everything they "
            f"need; no problems found in what could be read{tail}"
        )
    extras = [f"{s[key]} {key}" for key in ("skipped", "incomplete") if s[key]] + suppressed
    head = ", ".join(counts) if counts else "no problems found"
    tail = f" ({', '.join(extras)})" if extras else ""
    return f"{head} in {plural(s['checks'], 'check')}{tail}"


GROUP_AT = 4  # this many findings of one cause are shown as one, with a count, a sample and the lister
SAMPLE = 3


@dataclass(frozen=True)
class FindingGroup:
    """Findings of one check, code, node group and cause: one problem hitting many objects. A group of one
    (or of findings without a cause) is a single finding."""

    findings: tuple[Finding, ...]

    @property
    def first(self) -> Finding:
        return self.findings[0]

    @property
    def grouped(self) -> bool:
        return len(self.findings) >= GROUP_AT

    @property
    def severity(self) -> str:
        return max((f.severity for f in self.findings), key=lambda s: SEVERITY_RANK.get(s, 0))

    @property
    def kinds(self) -> str:
        """`3000 Nodes` / `12 Pods and Nodes`."""
        kinds = sorted({f.object.kind for f in self.findings})
        return f"{len(self.findings)} {' and '.join(k + 's' for k in kinds)}"

    def sample(self, n: int = SAMPLE) -> str:
        names = [f.object.name for f in self.findings[:n]]
        more = len(self.findings) - n
        return ", ".join(names) + (f" and {more} more" if more > 0 else "")

    @property
    def hint(self) -> str:
        """The next command when it is the same for every object (a per-object command is not shown)."""
        hints = {f.hint for f in self.findings}
        return self.first.hint if len(hints) == 1 else ""


def finding_groups(findings: Sequence[Finding]) -> list[FindingGroup]:
    """`findings` in their order, those of one (check, code, node group, cause) together at the first one's
    place; findings without a cause stay alone."""
    keyed: dict[object, list[Finding]] = {}
    for i, f in enumerate(findings):
        key: object = (f.check, f.code, f.group, f.cause, f.suppressed) if f.cause else i
        keyed.setdefault(key, []).append(f)
    out: list[FindingGroup] = []
    for members in keyed.values():
        if len(members) >= GROUP_AT:
            out.append(FindingGroup(tuple(members)))
        else:
            out.extend(FindingGroup((f,)) for f in members)
    order = {id(f): i for i, f in enumerate(findings)}
    return sorted(out, key=lambda g: order[id(g.first)])
