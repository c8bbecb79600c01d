"""`table` and `wide`: what people read. Plain output has no escape codes and keeps messages and hints whole."""

from __future__ import annotations

import io
import os
import re

import pytest

from kubectl_kcache.checks.model import CheckResult, DoctorReport, Finding, ObjectRef
from kubectl_kcache.report import render_doctor
from kubectl_kcache.report.doctor_common import finding_groups, merged_command, plural, summary_line
from tests.layout_checks import fits, pasted

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def rendered(report: DoctorReport, fmt: str = "table", *, color: bool = False) -> str:
    out = io.StringIO()
    render_doctor(report, fmt, out, color=color)
    return out.getvalue()


def test_a_clean_report_is_exactly_one_line(clean_report):
    assert rendered(clean_report) == "no problems found in 5 checks over 17 objects\n"
    assert rendered(clean_report, color=True) == "no problems found in 5 checks over 17 objects\n"


def flat(text: str) -> str:
    return " ".join(text.split())


HEADLINE = re.compile(r"^(error|warning|info)\[([a-z-]+(?:/[a-z-]+)?)\]: ")


def test_plain_table_is_stacked_findings_with_help_lines_and_no_escapes(problem_report, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    text = rendered(problem_report)
    assert "\x1b[" not in text
    lines = text.splitlines()
    for finding in problem_report.findings:
        if finding.suppressed:
            assert finding.message not in flat(text) and finding.hint not in text
            continue
        head = next(line for line in lines if HEADLINE.match(line) and finding.message[:15] in line)
        assert head.startswith(f"{finding.severity}[{finding.check}]: ")
        words = {word.rstrip(":.;") for word in text.split()}
        assert all(word.rstrip(":.;") in words for word in finding.message.split()), "wrapped, never cut"
        assert f"  help: {finding.hint}" in pasted(lines), "the next command pastes whole"


def test_errors_come_before_warnings_and_infos_grouped_by_check_with_a_tally(problem_report, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    lines = rendered(problem_report).splitlines()
    severities = [HEADLINE.match(line).group(1) for line in lines if HEADLINE.match(line)]
    assert severities == ["error", "error", "warning", "info"]
    assert lines[2:5] == ["errors: group-taints 1, nodes 1", "warnings: group-taints 1", "infos: cache-status 1"]
    wide = rendered(problem_report, "wide").splitlines()
    assert "group-taints: 1 error, 1 warning · Member nodes' taints are tolerated" in wide
    assert "cache-status: 1 info · KernelCaches are ready" in wide
    assert "skipped registry-pull: forbidden: list pods in kserve" in lines
    assert "passed: crds, config" in lines and "not applicable: capture" in lines


def test_the_summary_is_the_first_line_and_the_last(problem_report):
    lines = rendered(problem_report).splitlines()
    summary = "2 errors, 1 warning, 1 info in 7 checks (1 skipped, 1 incomplete, 1 suppressed)"
    assert lines[0] == summary and lines[-1] == summary
    assert lines[-2] == ""


def test_on_a_terminal_width_text_wraps_at_spaces_and_help_lines_paste_whole(problem_report, monkeypatch):
    for columns in (40, 60, 100):
        monkeypatch.setenv("COLUMNS", str(columns))
        plain = ANSI.sub("", rendered(problem_report, "wide", color=True))
        assert all(fits(line, columns) for line in plain.splitlines()), columns
        tokens = {word.rstrip(":.;") for word in plain.split()}
        for finding in problem_report.findings:
            assert all(word.rstrip(":.;") in tokens for word in finding.message.split()), "no word is cut"
            assert f"  help: {finding.hint}" in pasted(plain.splitlines())


def test_with_no_terminal_at_all_each_finding_is_one_line(problem_report, monkeypatch):
    """As kubectl get prints into a file: never wrapped, so grep finds a finding with its object and command."""
    monkeypatch.delenv("COLUMNS", raising=False)
    lines = rendered(problem_report).splitlines()
    for finding in problem_report.findings:
        if finding.suppressed:
            continue
        (line,) = [line for line in lines if finding.message.split(":")[0] in line and HEADLINE.match(line)]
        obj = finding.object
        path = f"{obj.kind}/{obj.name}" + (f" in {obj.namespace}" if obj.namespace else "")
        assert path in line and flat(finding.message) in line and line.endswith(f"help: {finding.hint}")


def test_no_trailing_blanks(problem_report):
    for fmt in ("table", "wide"):
        assert all(line == line.rstrip() for line in rendered(problem_report, fmt).splitlines())


def test_long_messages_are_cut_only_between_words_and_hints_never():
    message = "the agent DaemonSet tolerates " + ", ".join(f"taint-{i}=x:NoSchedule" for i in range(30))
    hint = "kubectl get nodes -o name " + " ".join(f"--selector=k{i}=v{i}" for i in range(30))
    report = DoctorReport(
        checks=(CheckResult("agent", "fail"),),
        findings=(Finding("agent", "error", ObjectRef("DaemonSet", "agent", "kserve"), message, hint),),
    )
    assert len(message) > 600 and len(hint) > 200
    for columns in ("80", ""):
        os.environ["COLUMNS"] = columns
        try:
            text = rendered(report)
        finally:
            del os.environ["COLUMNS"]
        if columns:  # on a screen: the start, whole words, and how long the whole is
            shown = flat(text).split(" ... (")[0].split("error[agent]: ")[1]
            assert message.startswith(shown) and f"({len(message)} characters)" in flat(text)
            assert f"  help: {hint}" in pasted(text.splitlines())
            assert all(len(line) <= 80 for line in text.splitlines() if "help" in line or "--selector" in line)
        else:  # into a file: all of it, on one line with its command
            assert flat(message) in text and text.splitlines()[3].endswith(f"  help: {hint}")


def test_huge_free_text_is_cut_with_its_length_and_stays_fast(monkeypatch):
    """Issue 22 item 17: a 5 MB message is cut at a few hundred characters, in linear time."""
    import time

    message = "entry failed: " + "x" * 2_000_000 + " " + "word " * 600_000
    report = DoctorReport(
        checks=(CheckResult("cache-status", "fail"),),
        findings=(Finding("cache-status", "error", ObjectRef("KernelCacheNode", "n1"), message, "kubectl get kcn n1"),),
    )
    for columns in ("80", ""):
        monkeypatch.setenv("COLUMNS", columns)
        for fmt in ("table", "wide"):
            started = time.perf_counter()
            text = rendered(report, fmt)
            assert time.perf_counter() - started < 2
            assert len(text) < 5000 and re.search(r"\.\.\. \(\d{7} characters\)", text), (fmt, columns)
            assert "help: kubectl get kcn n1" in text
    for fmt in ("json", "yaml", "sarif", "junit", "markdown", "html"):  # machine formats: whole, and linear
        started = time.perf_counter()
        text = rendered(report, fmt)
        assert time.perf_counter() - started < 10 and len(text) > len(message), fmt


def test_colour_table_has_escapes_plain_has_none(problem_report):
    assert "\x1b[" in rendered(problem_report, color=True)
    assert "\x1b[" not in rendered(problem_report, color=False)
    assert "\x1b[" not in rendered(problem_report, "wide", color=False)


def test_the_next_command_is_never_dim(problem_report):
    text = rendered(problem_report, color=True)
    for finding in problem_report.findings:
        if not finding.suppressed:
            line = next(line for line in text.splitlines() if finding.hint in line)
            assert "\x1b[2m" not in line and line.endswith(finding.hint)


def test_wide_adds_groups_evidence_and_marked_suppressed_findings(problem_report, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    text = rendered(problem_report, "wide")
    assert "  --> Node/gpu-1 (group gpu-workers)" in text.splitlines()
    for evidence in problem_report.findings[0].evidence:
        assert f"  = {evidence}" in text.splitlines()
    suppressed = problem_report.findings[-1]
    head = next(line for line in text.splitlines() if "(suppressed)" in line)
    assert head.startswith("error[cache-status]: (suppressed) node entry cpu-9 is in Error")
    assert "  --> KernelCache/old-kc in models (group cpu)" in text and f"  help: {suppressed.hint}" in text
    assert "\x1b[" not in text


def test_wide_of_a_clean_report_lists_the_checks_and_ends_with_the_clean_line(clean_report):
    lines = rendered(clean_report, "wide").splitlines()
    assert lines[0] == lines[-1] == "no problems found in 5 checks over 17 objects"
    assert "passed: crds, config, group-taints, nodes" in lines
    assert "not applicable capture: no KernelCacheCaptures" in lines


def test_skips_are_not_clean(skipped_only_report):
    text = rendered(skipped_only_report)
    assert "skipped registry-pull: forbidden: list pods in kserve" in text.splitlines()
    last = text.splitlines()[-1]
    assert last == (
        "incomplete: 1 of 2 checks could not read everything they need; no problems found in what could be read"
    )
    assert not last.startswith("no problems found")


def test_suppressed_findings_are_counted_not_shown(suppressed_only_report):
    text = rendered(suppressed_only_report)
    assert text.splitlines()[-1] == "no problems found in 2 checks (1 suppressed)"
    assert "node entry cpu-9 is in Error" not in flat(text)
    assert "node entry cpu-9 is in Error" in flat(rendered(suppressed_only_report, "wide"))


def test_a_finding_whose_check_is_not_listed_is_still_shown():
    finding = Finding("mystery", "warning", ObjectRef("Node", "n1"), "odd thing", "kubectl get node n1")
    text = rendered(DoctorReport(checks=(CheckResult("crds", "pass"),), findings=(finding,)))
    assert "warning[mystery]: Node/n1: odd thing  help: kubectl get node n1" in text.splitlines()


def test_ascii_output_never_fails(problem_report):
    finding = Finding("nodes", "warning", ObjectRef("Node", "gpu-9"), "kubelet v1.30 … too old", "kubectl get node")
    report = DoctorReport(
        checks=problem_report.checks, findings=problem_report.findings + (finding,), titles=problem_report.titles
    )
    for fmt in ("table", "wide", "markdown"):
        raw = io.BytesIO()
        out = io.TextIOWrapper(raw, encoding="ascii")
        render_doctor(report, fmt, out, color=False)
        out.flush()
        text = raw.getvalue().decode("ascii")
        assert "kubelet v1.30 ? too old" in text
        if fmt == "table":
            assert "errors: group-taints 1, nodes 1" in text
        if fmt == "wide":
            assert "group-taints: 1 error, 1 warning - Member nodes' taints are tolerated" in text


def test_multi_line_hints_keep_each_line_whole():
    finding = Finding(
        "config",
        "error",
        ObjectRef("ConfigMap", "inferenceservice-config", "kserve"),
        "kernelcache is not valid JSON",
        "kubectl -n kserve get configmap inferenceservice-config \\\n  -o jsonpath='{.data.kernelcache}'",
    )
    for columns in ("80", ""):
        os.environ["COLUMNS"] = columns
        try:
            text = rendered(DoctorReport(checks=(CheckResult("config", "fail"),), findings=(finding,)))
        finally:
            del os.environ["COLUMNS"]
        assert "kubectl -n kserve get configmap inferenceservice-config \\" in text
        assert "-o jsonpath='{.data.kernelcache}'" in text


def test_shared_explanations_are_said_once_per_report(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    shared = "KServe's node pass runs on group and Node changes only; touch a group to trigger one"
    findings = tuple(
        Finding(
            "kcn-missing",
            "error",
            ObjectRef("Node", f"n{i}"),
            f"Node n{i} has no KernelCacheNode: nothing reports its cache status. {shared}",
            f"kubectl describe node n{i}",
            code="missing",
            shared=(shared,),
        )
        for i in range(3)
    )
    report = DoctorReport(checks=(CheckResult("kcn-missing", "fail"),), findings=findings)
    text = rendered(report)
    assert flat(text).count(flat(shared)) == 1 and "[1] " + shared.split()[0] in text
    assert text.count("(see [1] below)") == 3
    for columns in range(40, 121):  # a reference is never broken across lines
        monkeypatch.setenv("COLUMNS", str(columns))
        assert rendered(report).count("(see [1] below)") == 3, columns
    monkeypatch.setenv("COLUMNS", "100")
    assert flat(rendered(report, "wide")).count(flat(shared)) == 3, "wide keeps every message whole"
    assert all(f.to_dict()["message"].endswith(shared) for f in findings)


def test_show_hides_findings_below_it_but_the_summary_counts_them(problem_report, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    out = io.StringIO()
    render_doctor(problem_report, "table", out, show="error")
    lines = out.getvalue().splitlines()
    severities = [HEADLINE.match(line).group(1) for line in lines if HEADLINE.match(line)]
    assert severities == ["error", "error"]
    assert lines[0] == lines[-1] == "2 errors, 1 warning, 1 info in 7 checks (1 skipped, 1 incomplete, 1 suppressed)"
    assert "not shown: 1 warning, 1 info (--show error)" in lines


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        ((1, 0, 0, 0, 0), "1 error in 3 checks"),
        ((2, 1, 0, 0, 0), "2 errors, 1 warning in 3 checks"),
        ((0, 0, 3, 1, 2), "3 infos in 3 checks (1 skipped, 1 incomplete, 2 suppressed)"),
        (
            (0, 0, 0, 1, 0),
            "incomplete: 1 of 3 checks could not read everything they need; no problems found in what could be read",
        ),
        ((0, 0, 0, 0, 0), "no problems found in 3 checks"),
    ],
)
def test_summary_line_wording(counts, expected):
    errors, warnings, infos, skipped, suppressed = counts
    obj = ObjectRef("Node", "n")
    findings = (
        [Finding("a", "error", obj, "e")] * errors
        + [Finding("a", "warning", obj, "w")] * warnings
        + [Finding("a", "info", obj, "i")] * infos
        + [Finding("a", "error", obj, "s", suppressed=True)] * suppressed
    )
    b_result = (
        CheckResult("b", "skipped", "forbidden: list x", ("forbidden: list x",))
        if skipped
        else CheckResult("b", "pass")
    )
    checks = [CheckResult("a", "fail"), b_result, CheckResult("c", "pass")]
    assert summary_line(DoctorReport(checks=tuple(checks), findings=tuple(findings))) == expected


def test_plural():
    assert plural(1, "check") == "1 check" and plural(0, "check") == "0 checks" and plural(2, "info") == "2 infos"


def test_checks_skipped_for_one_reason_are_one_line(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    reason = "kernelcachenodegroups is not served (CRD not installed)"
    checks = tuple(CheckResult(c, "skipped", reason) for c in ("group-selector", "group-overlap", "nodes"))
    text = rendered(DoctorReport(checks=(*checks, CheckResult("crds", "fail")), findings=()))
    assert f"skipped group-selector, group-overlap, nodes: {reason}" in text.splitlines()
    assert text.count(reason) == 1


def _missing(node: str, group: str) -> Finding:
    return Finding(
        "kcn-missing",
        "error",
        ObjectRef("Node", node),
        f"Node {node} is a member of {group} but has no KernelCacheNode",
        group=group,
        hint=f'kubectl annotate kernelcachenodegroup {group} kcache.kserve.io/touched-at="$(date +%s)" --overwrite',
        code="missing",
        cause="member nodes without a KernelCacheNode",
        lister=f"kubectl get nodes -l pool={group}",
    )


def test_one_cause_is_one_entry_whatever_the_group_with_one_command_for_all():
    findings = [_missing(f"gpu-{i}", f"pool-{9 - i}") for i in range(6)]
    (group,) = finding_groups(findings)
    assert group.where() == "6 Nodes in 6 groups: gpu-0, gpu-1, gpu-2, … (+3); -o wide lists all"
    assert group.lister == ""  # one per group: none lists them all
    assert group.hint == (
        "kubectl annotate kernelcachenodegroup pool-4 pool-5 pool-6 pool-7 pool-8 pool-9 "
        'kcache.kserve.io/touched-at="$(date +%s)" --overwrite'
    )
    same = finding_groups([_missing(f"gpu-{i}", "pool-1") for i in range(4)])[0]
    assert same.where() == "4 Nodes in group pool-1: gpu-0, gpu-1, gpu-2, … (+1)" and same.lister


@pytest.mark.parametrize(
    "commands, merged",
    [
        (["kubectl uncordon a", "kubectl uncordon b"], "kubectl uncordon a b"),
        (["kubectl describe node a", "kubectl describe node b"], ""),  # looking is no fix
        (["kubectl -n x label pod a k=v", "kubectl -n y label pod a k=v"], ""),  # not a name that differs
        (["kubectl -n x label pod a k=v", "kubectl -n x label pod b k=v"], "kubectl -n x label pod a b k=v"),
        (["kubectl label pod a k=v", "kubectl label pod a k=w"], ""),
        ([f"kubectl uncordon n{i}" for i in range(13)], ""),  # too many to read before running it
    ],
)
def test_merged_command(commands, merged):
    assert merged_command(commands) == merged


def _finding(name: str, message: str, hint: str, check: str = "agent", code: str = "no-pod") -> Finding:
    return Finding(check, "error", ObjectRef("Node", name), message, hint, code=code)


def test_the_command_of_the_finding_just_above_is_said_once(monkeypatch):
    """On a terminal, a finding whose next command is the one of the finding just above it, in the same check,
    says `help: as above`; piped and in `wide`, every finding carries its command whole (grep returns it)."""
    monkeypatch.setenv("COLUMNS", "80")
    same = "kubectl kcache why-not-ready llama-3-1-70b-instruct-kcc-84b9f6cd57-008ead7571de3f5b9fb55dd7 -n team-llm"
    findings = (
        _finding("a", "no agent pod on a: the DaemonSet controller has not created one", same),
        _finding("b", "no agent pod on b: the DaemonSet controller has not created one", same),
        _finding("c", "no agent pod on c: the DaemonSet controller has not created one", "kubectl describe node c"),
        _finding("d", "no agent pod on d: the DaemonSet controller has not created one", same),
        _finding("e", "Node e has no KernelCacheNode: nothing reports", same, "kcn-missing", "missing"),
    )
    checks = (CheckResult("agent", "fail"), CheckResult("kcn-missing", "fail"))
    report = DoctorReport(checks=checks, findings=findings)
    lines = rendered(report).splitlines()
    helps = [line for line in lines if line.startswith("  help: ")]
    # b repeats a's command; d follows c's other one; e is in another check, after a blank line
    assert [h == "  help: as above" for h in helps] == [False, True, False, False, False]
    assert pasted(lines).count(f"  help: {same}") == 3
    monkeypatch.delenv("COLUMNS")
    assert rendered(report).count(same) == 4, "piped: every finding's line has its command"
    monkeypatch.setenv("COLUMNS", "80")
    assert "as above" not in rendered(report, "wide")


def test_a_short_last_clause_ends_the_headline_and_a_lone_reference_too(monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    shared = "image volumes need the ImageVolume feature gate before v1.35"
    findings = (
        Finding(
            "agent",
            "warning",
            ObjectRef("DaemonSet", "agent", "kserve"),
            "DaemonSet kserve/agent rollout is not healthy: 5/7 pods ready",
            "kubectl get ds",
            code="rollout",
        ),
        Finding(
            "nodes",
            "info",
            ObjectRef("KernelCacheNodeGroup", "h100"),
            f"1 member node of h100 runs a kubelet from v1.31 to v1.34 (gpu-1): {shared}",
            "kubectl get nodes",
            code="image-volume-gated",
            shared=(shared,),
        ),
    )
    checks = (CheckResult("agent", "fail"), CheckResult("nodes", "fail"))
    lines = rendered(DoctorReport(checks=checks, findings=findings)).splitlines()
    assert "warning[agent/rollout]: DaemonSet kserve/agent rollout is not healthy: 5/7 pods ready" in lines
    assert (
        "info[nodes/image-volume-gated]: 1 member node of h100 runs a kubelet from v1.31 to v1.34 (gpu-1) "
        "(see [1] below)"
    ) in lines
    assert not [line for line in lines if line.startswith("  note: ")], "nothing left for a note of its own"


def test_a_cut_text_ends_at_a_sentence_end_near_its_cut():
    from kubectl_kcache.report.layout import cut

    text = "the entry does not match its artifact, so the webhook does not count it. It has imageReference " + (
        "x" * 300
    )
    assert cut(text, 110) == (
        f"the entry does not match its artifact, so the webhook does not count it. ... ({len(text)} characters)"
    )
    far = "a sentence. " + "word " * 60
    assert cut(far, 100).startswith("a sentence. word word"), "a sentence end far from the cut is not used"
