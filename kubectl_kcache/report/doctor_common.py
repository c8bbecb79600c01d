"""What the doctor renderers share: marks per status, grouping findings by check and by cause, the summary
line, the width of plain output."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from .layout import shell_words

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
    groups = [
        CheckGroup(r.id, report.titles.get(r.id, ""), r.status, r.reason, tuple(by_check.pop(r.id, ())), r)
        for r in report.checks
    ]
    for check_id, findings in by_check.items():
        status = "fail" if any(not f.suppressed for f in findings) else "pass"
        groups.append(CheckGroup(check_id, report.titles.get(check_id, ""), status, "", tuple(findings)))
    return groups


def without_shared(message: str, shared: Sequence[str]) -> str:
    """`message` without the `shared` parts (said once per report, as a note) and the punctuation that led
    into them."""
    for part in shared:
        if part in message:
            message = message.replace(part, "")
            if not message.rstrip().endswith(")"):
                message = re.sub(r"([.;:,])\s*[.;:,]?\s*$", "", message.rstrip())
    return re.sub(r"\. \.", ".", message).strip()


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
MERGE_AT_MOST = 12  # names one merged next command may take: past that it is no longer read before it is run
# kubectl verbs that take several names of one resource and fix something (`describe` fixes nothing)
MANY_NAMES = frozenset({"annotate", "label", "uncordon"})
WIDE_LISTS_ALL = "-o wide lists all"


@dataclass(frozen=True)
class FindingGroup:
    """Findings of one check, code and cause, whatever their node group: one problem hitting many objects. A
    group of one (or of findings without a cause) is a single finding."""

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

    @property
    def node_groups(self) -> list[str]:
        return sorted({f.group for f in self.findings if f.group})

    def sample(self, n: int = SAMPLE, ellipsis: str = "…") -> str:
        """`a, b, c, … (+27)`: the first names and how many more."""
        names = [f.object.name for f in self.findings[:n]]
        more = len(self.findings) - len(names)
        return ", ".join(names) + (f", {ellipsis} (+{more})" if more > 0 else "")

    def where(self, n: int = SAMPLE, ellipsis: str = "…") -> str:
        """`30 Nodes in 30 groups: a, b, c, … (+27)` (`in group h100` for one), and how to see them all when no
        one command lists them."""
        groups = self.node_groups
        scope = f" in group {groups[0]}" if len(groups) == 1 else f" in {len(groups)} groups" if groups else ""
        text = f"{self.kinds}{scope}: {self.sample(n, ellipsis)}"
        return text if self.lister or len(self.findings) <= n else f"{text}; {WIDE_LISTS_ALL}"

    @property
    def hint(self) -> str:
        """The next command when one fixes every object: the same for all, or theirs merged into one."""
        hints = list(dict.fromkeys(f.hint for f in self.findings))
        return hints[0] if len(hints) == 1 else merged_command(hints)

    @property
    def lister(self) -> str:
        """The command listing every object, when it is the same for all (one per group is none)."""
        listers = {f.lister for f in self.findings}
        return self.first.lister if len(listers) == 1 else ""


def merged_command(commands: Sequence[str]) -> str:
    """One command doing what `commands` do, when they differ in one word only, the object's name, and kubectl
    takes several names there (`kubectl uncordon a b`, `kubectl annotate kernelcachenodegroup a b k=v`); else
    ''."""
    if not 2 <= len(commands) <= MERGE_AT_MOST:
        return ""
    split = [shell_words(cmd) for cmd in commands]
    if len({len(words) for words in split}) != 1 or split[0][:1] != ["kubectl"]:
        return ""
    differ = [i for i in range(len(split[0])) if len({words[i] for words in split}) > 1]
    verb = next((i for i, w in enumerate(split[0]) if i and not w.startswith("-") and split[0][i - 1] != "-n"), 0)
    if len(differ) != 1 or split[0][verb] not in MANY_NAMES or differ[0] <= verb:
        return ""
    at = differ[0]
    names = sorted(words[at] for words in split)
    if any(name.startswith("-") or "=" in name for name in names):
        return ""
    return " ".join([*split[0][:at], *names, *split[0][at + 1 :]])


def finding_groups(findings: Sequence[Finding]) -> list[FindingGroup]:
    """`findings` in their order, those of one (check, code, cause) together at the first one's place whatever
    their node group (30 NotReady nodes in 30 groups are one problem); findings without a cause stay alone."""
    keyed: dict[object, list[Finding]] = {}
    for i, f in enumerate(findings):
        key: object = (f.check, f.code, f.cause, f.suppressed) if f.cause else i
        keyed.setdefault(key, []).append(f)
    out: list[FindingGroup] = []
    for members in keyed.values():
        if len(members) >= GROUP_AT:
            out.append(FindingGroup(tuple(members)))
        else:
            out.extend(FindingGroup((f,)) for f in members)
    order = {id(f): i for i, f in enumerate(findings)}
    return sorted(out, key=lambda g: order[id(g.first)])
