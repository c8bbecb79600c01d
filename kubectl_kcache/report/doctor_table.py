"""`table` (the default, for people) and `wide`: a stacked layout, as rustc and ruff print diagnostics.

    16 errors, 7 warnings, 1 info in 17 checks

    group-taints: 3 errors · member nodes' taints tolerated by preparation Jobs and the agent
    error[group-taints/blocks-jobs]: preparation Jobs cannot run on ip-10-0-1-13.ec2.internal
      --> Node/ip-10-0-1-13.ec2.internal
      note: taint dedicated=training:NoSchedule is not tolerated by KernelCacheNodeGroup h100's tolerations
      help: kubectl patch kernelcachenodegroup h100 --type=json -p '[...]'
    ...
    16 errors, 7 warnings, 1 info in 17 checks

Errors first, then warnings, then infos; findings of one check together under a line with its tally. The
summary is the first line and the last. The headline is the message's first clause; the rest is the note,
word-wrapped at the width `terminal.terminal_width` gives, only at spaces (no name is ever cut). Text that many
findings share (why KServe's node pass may not have run) is said once, at the end, as a numbered note. The
next command (`help:`) is printed on its own line, never dim, broken only between shell words with a line
continuation when longer than the width (a paste runs it whole); the same command as the finding's just above,
in the same check, is `help: as above` (one command for both). With no terminal at all
(piped into a file), every finding is one line, as `kubectl get` prints. Findings of one cause on many objects
(a taint on 3,000 nodes) are one entry with the count, a sample of names and the command listing them all.
`wide` lists every object, the evidence, the full messages and every check; `show` hides findings below a
severity (the summary still counts them). A clean report is the single line `no problems found in N checks
over M objects`. Every value from the cluster is escaped; free text is cut at a few hundred characters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from ..text import escape
from . import layout
from .doctor_common import (
    SEVERITY_RANK,
    WIDE_LISTS_ALL,
    FindingGroup,
    can_encode,
    check_groups,
    clean_line,
    finding_groups,
    is_clean,
    plural,
    summary_line,
    without_shared,
    write_text,
)
from .registry import renderer
from .terminal import terminal_width

if TYPE_CHECKING:
    from ..checks.model import DoctorReport, Finding

SHORT_REST = 40  # a message's last clause this short stays in the headline (`rollout is not healthy: 5/7 pods ready`)
NOTE_ROWS = 3  # the table's note is cut past about this many rows: the first screen holds a few findings
WIDE_FREE_TEXT = 2000
WORK_TEXT = 4 * WIDE_FREE_TEXT  # -o wide shows every message whole; only a pathological field is cut
INDENT = "  "
NOTE = "note: "
HELP = "help: "
AS_ABOVE = "as above"  # the next command of a finding whose command is the one of the finding above it


@renderer("table", order=0, wants=("show",))
def render_table(report: DoctorReport, out: TextIO, *, color: bool = False, show: str = "info") -> None:
    _render(report, out, color=color, wide=False, show=show)


@renderer("wide", order=1, wants=("show",))
def render_wide(report: DoctorReport, out: TextIO, *, color: bool = False, show: str = "info") -> None:
    _render(report, out, color=color, wide=True, show=show)


def _render(report: DoctorReport, out: TextIO, *, color: bool, wide: bool, show: str) -> None:
    if is_clean(report) and not wide:
        write_text(out, clean_line(report) + "\n")
        return
    writer = _Writer(
        report,
        terminal_width(out),
        color=color,
        wide=wide,
        show=show,
        dot=" · " if can_encode(out, "·") else " - ",
    )
    write_text(out, "".join(line + "\n" for line in writer.lines()))


def split_message(message: str, shared: Sequence[str] = ()) -> tuple[str, str, str]:
    """(headline, separator, rest): the headline is the message's first clause (up to the first `: `, `. ` or
    `; ` outside parentheses), the rest what follows, without the `shared` parts."""
    message = without_shared(message, shared)
    cuts = _clause_ends(message)
    for n, i in enumerate(cuts):
        if i < 12:
            continue
        # `matches several node groups: h100, llm-serving. Captures...`: a short list stays in the headline
        if message[i] == ":" and n + 1 < len(cuts) and cuts[n + 1] - i <= 40:
            i = cuts[n + 1]
        rest = message[i + 2 :].strip()
        if message[i] == ":" and i == cuts[-1] and len(rest) <= SHORT_REST:  # `rollout is not healthy: 5/7 pods
            break  # ready`: a short last clause ends the headline rather than being a note of its own
        return message[:i], message[i], rest
    return message.rstrip(".:; "), "", ""


def _clause_ends(message: str) -> list[int]:
    """Where `: `, `. ` or `; ` end a clause outside parentheses (linear; stops after a few)."""
    out: list[int] = []
    depth = 0
    for i, ch in enumerate(message):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(depth - 1, 0)
        elif depth == 0 and ch in ":.;" and message[i + 1 : i + 2] == " ":
            out.append(i)
            if len(out) > 3:
                break
    return out


def _tally(findings: Sequence[Finding]) -> str:
    """`2 errors, 1 warning` ("" for none)."""
    return ", ".join(
        plural(n, word) for word in ("error", "warning", "info") if (n := sum(f.severity == word for f in findings))
    )


@dataclass
class _Entry:
    severity: str
    check: str
    group: FindingGroup


class _Writer:
    def __init__(
        self, report: DoctorReport, width: int | None, *, color: bool, wide: bool, show: str, dot: str = " · "
    ):
        self.report = report
        self.dot = dot
        self.ellipsis = "…" if dot == " · " else "..."
        self.width = width
        self.color = color
        self.wide = wide
        self.show = SEVERITY_RANK.get(show, 1)
        self.show_word = show if show in SEVERITY_RANK else "info"
        self.checks = check_groups(report)
        self.shared: list[str] = []  # the shared explanations, in the order first used (note [1], [2]...)
        self.above: list[str] = []  # the next commands of the finding just above, in the same check
        # piped into a file, a finding is one line: its whole text, for grep
        whole = wide or width is None
        self.limit = WIDE_FREE_TEXT if whole else layout.MAX_FREE_TEXT
        self.note_limit = WIDE_FREE_TEXT if whole or width is None else NOTE_ROWS * (width - len(INDENT + NOTE))

    def paint(self, text: str, style: str) -> str:
        return layout.paint(text, style, self.color)

    def lines(self) -> list[str]:
        out = [self._summary(), *self._source()]
        entries = self._entries()
        hidden = self._hidden()
        if hidden:
            out.append(f"not shown: {hidden} (--show {self.show_word})")
        if not self.wide:
            out += self._tallies(entries)
        current: tuple[str, str, bool] | None = None
        for entry in entries:
            key = (entry.severity, entry.check, entry.group.first.suppressed)
            if key != current:  # a blank line between checks; `wide` names each check with its title
                out.append("")
                self.above = []
                if self.wide:
                    out += self._check_header(entry.check, suppressed=entry.group.first.suppressed)
                current = key
            out += self._finding(entry.group)
        out += self._checks_section()
        out += self._notes()
        out.append("")
        out.append(self._summary())
        return out

    def _source(self) -> list[str]:
        """Which cluster, read from where and when: said under the first summary line."""
        p = self.report.provenance or {}
        parts = []
        if p.get("cluster") or self.report.cluster:
            parts.append(f"cluster {escape(str(p.get('cluster') or self.report.cluster))}")
        if p.get("from") == "file" and p.get("files"):
            parts.append("from " + ", ".join(escape(str(f)) for f in p["files"]))
        elif p.get("server"):
            parts.append(f"server {escape(str(p['server']))}")
        if p.get("takenAt"):
            parts.append(f"taken {escape(str(p['takenAt']))}")
        if not parts:
            return []
        return [self.paint(line, "dim") for line in layout.wrap(self.dot.join(parts), self.width, indent=4)]

    def _summary(self) -> str:
        s = self.report.summary()
        style = "bold red" if s["errors"] else "bold yellow" if s["warnings"] or s["incomplete"] else "bold green"
        text = clean_line(self.report) if is_clean(self.report) else summary_line(self.report)
        return "\n".join(
            self.paint(line, "bold green" if is_clean(self.report) else style)
            for line in layout.wrap(text, self.width, indent=4)
        )

    def _hidden(self) -> str:
        return _tally(
            [f for f in self.report.findings if not f.suppressed and SEVERITY_RANK.get(f.severity, 0) < self.show]
        )

    def _entries(self) -> list[_Entry]:
        """Findings to show, most severe first; within a severity in check order; one cause's findings as one."""
        order = {c.id: i for i, c in enumerate(self.checks)}
        entries: list[tuple[int, int, int, _Entry]] = []
        for check in self.checks:
            findings = check.findings if self.wide else check.active
            shown = [f for f in findings if SEVERITY_RANK.get(f.severity, 0) >= self.show]
            groups = [FindingGroup((f,)) for f in shown] if self.wide else finding_groups(shown)
            for i, group in enumerate(groups):
                severity = group.severity
                rank = 0 if group.first.suppressed else SEVERITY_RANK.get(severity, 0)  # wide: suppressed last
                entries.append((-rank, order[check.id], i, _Entry(severity, check.id, group)))
        entries.sort(key=lambda e: e[:3])
        return [e[3] for e in entries]

    def _tallies(self, entries: list[_Entry]) -> list[str]:
        """Per severity, the checks with findings at it and how many (`errors: agent 3, nodes 1`), worst first."""
        out: list[str] = []
        for severity, word in (("error", "errors"), ("warning", "warnings"), ("info", "infos")):
            counts: dict[str, int] = {}
            for entry in entries:
                if entry.severity == severity:
                    counts[entry.check] = counts.get(entry.check, 0) + len(entry.group.findings)
            if counts:
                label = f"{word}: "
                items = [f"{escape(check)} {n}" for check, n in counts.items()]
                lines = layout.wrap_items(items, self.width, len(label), len(label))
                lines[0] = label + lines[0]
                lines[0] = self.paint(word, layout.SEVERITY_STYLES[severity]) + lines[0][len(word) :]
                out += lines
        return out

    def _check_header(self, check_id: str, *, suppressed: bool = False) -> list[str]:
        check = next(c for c in self.checks if c.id == check_id)
        tally = f"{len(check.suppressed)} suppressed" if suppressed else _tally(check.active) or "no active finding"
        head = f"{escape(check.id)}: {tally}"
        if not check.title:
            return [self.paint(head, "bold")]
        title = escape(check.title)
        lines = layout.wrap(f"{head}{self.dot}{title}", self.width, indent=4)
        lines[0] = self.paint(head, "bold") + lines[0][len(head) :]
        return lines

    def _finding(self, group: FindingGroup) -> list[str]:
        finding = group.first
        code = escape(finding.full_code)
        label = self.paint(escape(group.severity), layout.SEVERITY_STYLES.get(group.severity, "bold"))
        head_prefix = f"{label}{self.paint(f'[{code}]', 'bold')}: "
        prefix_len = len(group.severity) + len(code) + 4
        shared = () if self.wide else finding.shared
        if group.grouped:
            headline, sep, rest = split_message(escape(layout.cut(finding.cause, self.limit)))
            where = escape(group.where(ellipsis=self.ellipsis))
        else:
            # only the start of a huge message is looked at: the work stays small whatever its size
            message = finding.message[:WORK_TEXT]
            dropped = len(finding.message) - len(message)
            headline, sep, rest = split_message(escape(message), [escape(s) for s in shared])
            if dropped and not rest:
                headline = layout.cut(headline, self.limit, total=len(headline) + dropped)
            else:
                headline = layout.cut(headline, self.limit)
                rest = layout.cut(rest, self.note_limit, slack=self.note_limit // 3, total=len(rest) + dropped)
            obj = finding.object  # `Kind/name in ns`: a long namespace and name need not share a line
            where = escape(f"{obj.kind}/{obj.name}") + (f" in {escape(obj.namespace)}" if obj.namespace else "")
            if finding.group and self.wide:
                where += f" (group {escape(finding.group)})"
        if finding.suppressed:
            why = f": {escape(finding.suppressed_by)}" if finding.suppressed_by else ""
            headline = f"(suppressed{why}) {headline}"
        refs = [f"[{self._note_number(s)}]" for s in shared if s in finding.message]
        see = f"(see {', '.join(refs)} below)" if refs else ""
        whole = (see,) if see else ()  # never `(see` / `[1] below)` on two lines
        if see and rest:  # at the end of the note, or of the headline when there is no note of its own
            rest, see = f"{rest} {see}", ""
        hint = group.hint if group.grouped else finding.hint
        hints = [escape(h) for h in hint.splitlines() if h.strip()]
        if group.grouped and group.lister:
            hints.append(f"{escape(group.lister)}  # all {len(group.findings)}")
        evidence = [escape(layout.cut(e, self.limit)) for e in finding.evidence] if self.wide else []
        if self.width is None:
            named = self._names_object(headline, finding, group) and not self.wide
            if group.grouped:  # the cause, then which objects: `... (500 Nodes: a, b, c and 497 more)`
                headline, where = f"{headline} ({where})", ""
            headline += f" {see}" if see else ""
            return [
                self._one_line(
                    head_prefix, headline + (sep or ":" if rest else ""), "" if named else where, rest, evidence, hints
                )
            ]
        out = self._wrapped(
            f"{headline} {see}" if see else headline,
            prefix_len,
            indent=4,
            first=head_prefix,
            keep=whole,
        )
        if self.wide or not self._names_object(headline, finding, group):
            keep = ("… (+", "... (+", WIDE_LISTS_ALL)  # never `-o wide` / `lists all` on two lines
            out += self._wrapped(where, len(INDENT) + 4, indent=len(INDENT) + 4, first=f"{INDENT}--> ", keep=keep)
        if rest:
            out += self._wrapped(rest, len(INDENT + NOTE), indent=len(INDENT + NOTE), first=INDENT + NOTE, keep=whole)
        for line in evidence:
            out += self._wrapped(line, len(INDENT) + 2, indent=len(INDENT) + 4, first=f"{INDENT}= ")
        if hints and hints == self.above and not self.wide:  # one command fixes both: said once, just above
            return [*out, INDENT + self.paint(HELP, "bold cyan") + AS_ABOVE]
        self.above = hints
        for h in hints:  # broken only between shell words, with a line continuation: it must paste whole
            first, *more = layout.command_lines(h, self.width, len(INDENT + HELP), len(INDENT) + 4)
            out += [INDENT + self.paint(HELP, "bold cyan") + first, *more]
        return out

    @staticmethod
    def _names_object(headline: str, finding: Finding, group: FindingGroup) -> bool:
        """Whether the headline already says which object (then the `-->` line would only repeat it)."""
        if group.grouped:
            return False
        obj = finding.object
        return escape(obj.name) in headline and (not obj.namespace or escape(obj.namespace) in headline)

    def _one_line(
        self, head_prefix: str, headline: str, where: str, rest: str, evidence: list[str], hints: list[str]
    ) -> str:
        parts = [f"{head_prefix}{where + ': ' if where else ''}{headline}"]
        if rest:
            parts.append(rest)
        parts += [f"[{e}]" for e in evidence]
        line = layout.wrap(" ".join(parts), None)[0]
        return line + "".join(f"  {self.paint(HELP, 'bold cyan')}{h}" for h in hints)

    def _wrapped(self, text: str, used: int, *, indent: int, first: str, keep: tuple[str, ...] = ()) -> list[str]:
        lines = layout.wrap(text, self.width, first_indent=used, indent=indent, keep=keep)
        return [first + lines[0], *lines[1:]]

    def _note_number(self, text: str) -> int:
        if text not in self.shared:
            self.shared.append(text)
        return self.shared.index(text) + 1

    def _notes(self) -> list[str]:
        out: list[str] = []
        for i, text in enumerate(self.shared, 1):
            if not out:
                out.append("")
            mark = f"[{i}] "
            body = escape(text)
            if self.width is None:
                out.append(mark + layout.wrap(body, None)[0])
            else:
                out += self._wrapped(body, len(mark), indent=len(mark), first=self.paint(mark, "bold"))
        return out

    def _checks_section(self) -> list[str]:
        """What did not fail: skipped checks with why (they leave the report incomplete), and the rest named on
        a line per status; `wide` gives every check's line and reason."""
        out: list[str] = []
        words = {"pass": "passed", "not-applicable": "not applicable"}
        said = set()
        skipped: dict[str, list[str]] = {}  # one reason (a CRD not installed) skips many checks: said once
        for check in self.checks:
            if check.status == "skipped":
                skipped.setdefault(check.reason, []).append(check.id)
        for reason, ids in skipped.items():
            said.update(ids)
            text = f"{', '.join(escape(i) for i in ids)}: {escape(layout.cut(reason, self.limit))}"
            out += self._wrapped(text, len("skipped "), indent=4, first=self.paint("skipped ", "bold yellow"))
        for check in self.checks:
            if self.wide and check.reason and check.status != "skipped":
                said.add(check.id)
                status = words.get(check.status, check.status)
                out += self._wrapped(
                    f"{escape(check.id)}: {escape(layout.cut(check.reason, self.limit))}",
                    len(status) + 1,
                    indent=4,
                    first=f"{status} ",
                )
        for status, word in words.items():
            ids = [escape(c.id) for c in self.checks if c.status == status and c.id not in said]
            if ids:
                text = ", ".join(ids)
                if self.width is None:
                    out.append(f"{word}: {text}")
                else:
                    out += self._wrapped(text, len(word) + 2, indent=4, first=f"{word}: ")
        return [""] + out if out else out
