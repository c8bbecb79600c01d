"""`table` and `wide`: what people read. Plain output has no escape codes and keeps messages and hints whole."""

from __future__ import annotations

import io
import re

import pytest

from kubectl_kcache.checks.model import CheckResult, DoctorReport, Finding, ObjectRef
from kubectl_kcache.report import render_doctor
from kubectl_kcache.report.doctor_common import plural, summary_line

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


def test_plain_table_has_marks_messages_and_hints_verbatim_and_no_escapes(problem_report):
    text = rendered(problem_report)
    assert "\x1b[" not in text
    lines = text.splitlines()
    for mark, check in (("✔", "crds"), ("✖", "group-taints"), ("⊘", "registry-pull"), ("–", "capture")):
        assert any(line.startswith(f"{mark} {check}") for line in lines), (mark, check)
    for finding in problem_report.findings:
        if finding.suppressed:
            assert finding.message not in text
            assert finding.hint not in text
            continue
        assert flat(finding.message) in flat(text), "wrapped, never cut"
        assert finding.hint in [line.strip() for line in lines], "a hint is a line of its own"
        path = "/".join(x for x in (finding.object.kind, finding.object.namespace, finding.object.name) if x)
        line = next(line for line in lines if path in line)
        assert line.split()[:3] == [finding.severity, path, finding.message.split()[0]]


def test_plain_table_keeps_check_order_titles_and_reasons(problem_report):
    text = rendered(problem_report)
    positions = [text.index(c.id) for c in problem_report.checks]
    assert positions == sorted(positions)
    assert "Member nodes' taints are tolerated" in text
    assert "skipped: forbidden: list pods in kserve" in text
    assert "not applicable: no KernelCacheCaptures" in text


def test_summary_line_ends_the_table(problem_report):
    lines = rendered(problem_report).splitlines()
    assert lines[-1] == "2 errors, 1 warning, 1 info in 7 checks (1 skipped, 1 incomplete, 1 suppressed)"
    assert lines[-2] == ""


def test_piped_output_wraps_at_80_or_columns(monkeypatch):
    """Issue 14: piped output wraps at $COLUMNS or 80, never cutting a word; hints stay whole."""
    reason = "forbidden: list pods in kserve: " + " ".join(["word"] * 40)
    hint = "kubectl get nodes -o name " + " ".join(f"--selector=k{i}=v{i}" for i in range(30))
    finding = Finding("registry-pull", "error", ObjectRef("Node", "gpu-1"), " ".join(["because"] * 30), hint)
    report = DoctorReport(checks=(CheckResult("registry-pull", "skipped", reason),
                                  CheckResult("nodes", "fail")), findings=(finding,),
                          titles={"registry-pull": "Preparation Jobs pull their images"})
    for columns, width in (("", 80), ("100", 100), ("oops", 80)):
        monkeypatch.setenv("COLUMNS", columns)
        text = rendered(report)
        assert all(len(line) <= width for line in text.splitlines() if line.strip() != hint), columns
        assert hint in [line.strip() for line in text.splitlines()]
        assert flat(f"skipped: {reason}") in flat(text) and flat(finding.message) in flat(text)


def test_no_trailing_blanks(problem_report):
    for fmt in ("table", "wide"):
        assert all(line == line.rstrip() for line in rendered(problem_report, fmt).splitlines())


def test_long_messages_and_hints_are_never_cut_or_wrapped_in_plain_output():
    message = "the agent DaemonSet tolerates " + ", ".join(f"taint-{i}=x:NoSchedule" for i in range(20))
    hint = "kubectl get nodes -o name " + " ".join(f"--selector=k{i}=v{i}" for i in range(30))
    report = DoctorReport(checks=(CheckResult("agent", "fail"),),
                          findings=(Finding("agent", "error", ObjectRef("DaemonSet", "agent", "kserve"), message,
                                            hint),))
    text = rendered(report)
    assert len(message) > 200 and len(hint) > 200
    assert flat(message) in flat(text) and hint in [line.strip() for line in text.splitlines()]


@pytest.mark.parametrize("columns", [60, 100])
def test_on_a_terminal_messages_wrap_whole_and_hints_stay_on_one_line(problem_report, monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    text = rendered(problem_report, "wide", color=True)
    assert "\x1b[" in text
    plain = ANSI.sub("", text)
    lines = [line.strip() for line in plain.splitlines()]
    for finding in problem_report.findings:
        assert finding.hint in lines
    assert lines[-1] == "2 errors, 1 warning, 1 info in 7 checks (1 skipped, 1 incomplete, 1 suppressed)"
    long_message = problem_report.findings[0].message
    if columns == 100:  # wrapped in its column: no line but hints and evidence is wider than the terminal
        assert long_message not in plain
        hints_and_evidence = {f.hint for f in problem_report.findings}
        assert all(len(line) <= columns for line in plain.splitlines()
                   if line.strip() not in hints_and_evidence and "·" not in line)
    else:  # too narrow for a message column: one line per finding, the terminal wraps it
        assert long_message in plain
    joined = " ".join(re.findall(r"\S+", plain))
    for finding in problem_report.findings:
        assert " ".join(finding.message.split()) in joined or all(w in joined for w in finding.message.split())


def test_colour_table_has_escapes_plain_has_none(problem_report):
    assert "\x1b[" in rendered(problem_report, color=True)
    assert "\x1b[" not in rendered(problem_report, color=False)
    assert "\x1b[" not in rendered(problem_report, "wide", color=False)


def test_wide_adds_groups_evidence_and_marked_suppressed_findings(problem_report):
    text = rendered(problem_report, "wide")
    taint_line = next(line for line in text.splitlines() if problem_report.findings[0].message in line)
    assert "gpu-workers" in taint_line
    for evidence in problem_report.findings[0].evidence:
        assert f"· {evidence}" in text
    suppressed = problem_report.findings[-1]
    line = next(line for line in text.splitlines() if suppressed.message in line)
    assert "(suppressed)" in line and "KernelCache/models/old-kc" in line and "cpu" in line
    assert suppressed.hint in text
    assert "\x1b[" not in text


def test_wide_of_a_clean_report_lists_the_checks_and_ends_with_the_clean_line(clean_report):
    lines = rendered(clean_report, "wide").splitlines()
    assert lines[-1] == "no problems found in 5 checks over 17 objects"
    assert lines[0].startswith("✔ crds")


def test_skips_are_not_clean(skipped_only_report):
    text = rendered(skipped_only_report)
    assert "⊘ registry-pull" in text and "forbidden: list pods in kserve" in text
    last = text.splitlines()[-1]
    assert last == ("incomplete: 1 of 2 checks could not read everything they need; no problems found in what "
                    "could be read")
    assert not last.startswith("no problems found")


def test_suppressed_findings_are_counted_not_shown(suppressed_only_report):
    text = rendered(suppressed_only_report)
    assert text.splitlines()[-1] == "no problems found in 2 checks (1 suppressed)"
    assert "node entry cpu-9 is in Error" not in flat(text)
    assert "node entry cpu-9 is in Error" in flat(rendered(suppressed_only_report, "wide"))


def test_a_finding_whose_check_is_not_listed_is_still_shown():
    finding = Finding("mystery", "warning", ObjectRef("Node", "n1"), "odd thing", "kubectl get node n1")
    text = rendered(DoctorReport(checks=(CheckResult("crds", "pass"),), findings=(finding,)))
    assert "✖ mystery" in text and "odd thing" in text and "kubectl get node n1" in text


def test_ascii_output_gets_ascii_marks_and_never_fails(problem_report):
    finding = Finding("nodes", "warning", ObjectRef("Node", "gpu-9"), "kubelet v1.30 … too old", "kubectl get node")
    report = DoctorReport(checks=problem_report.checks, findings=problem_report.findings + (finding,),
                          titles=problem_report.titles)
    for fmt in ("table", "wide", "markdown"):
        raw = io.BytesIO()
        out = io.TextIOWrapper(raw, encoding="ascii")
        render_doctor(report, fmt, out, color=False)
        out.flush()
        text = raw.getvalue().decode("ascii")
        assert "kubelet v1.30 ? too old" in text
        if fmt != "markdown":
            for mark, check in (("ok", "crds"), ("FAIL", "group-taints"), ("skip", "registry-pull"),
                                ("n/a", "capture")):
                assert re.search(rf"^{re.escape(mark)} +{re.escape(check)}\b", text, re.M), (mark, check)


def test_multi_line_hints_keep_each_line_whole():
    finding = Finding("config", "error", ObjectRef("ConfigMap", "inferenceservice-config", "kserve"),
                      "kernelcache is not valid JSON",
                      "kubectl -n kserve get configmap inferenceservice-config \\\n  -o jsonpath='{.data.kernelcache}'")
    text = rendered(DoctorReport(checks=(CheckResult("config", "fail"),), findings=(finding,)))
    lines = [line.strip() for line in text.splitlines()]
    assert "kubectl -n kserve get configmap inferenceservice-config \\" in lines
    assert "-o jsonpath='{.data.kernelcache}'" in lines


@pytest.mark.parametrize(("counts", "expected"), [
    ((1, 0, 0, 0, 0), "1 error in 3 checks"),
    ((2, 1, 0, 0, 0), "2 errors, 1 warning in 3 checks"),
    ((0, 0, 3, 1, 2), "3 infos in 3 checks (1 skipped, 1 incomplete, 2 suppressed)"),
    ((0, 0, 0, 1, 0), "incomplete: 1 of 3 checks could not read everything they need; no problems found in what "
                      "could be read"),
    ((0, 0, 0, 0, 0), "no problems found in 3 checks"),
])
def test_summary_line_wording(counts, expected):
    errors, warnings, infos, skipped, suppressed = counts
    obj = ObjectRef("Node", "n")
    findings = ([Finding("a", "error", obj, "e")] * errors + [Finding("a", "warning", obj, "w")] * warnings
                + [Finding("a", "info", obj, "i")] * infos + [Finding("a", "error", obj, "s", suppressed=True)]
                * suppressed)
    b_result = CheckResult("b", "skipped", "forbidden: list x", ("forbidden: list x",)) if skipped else CheckResult("b",
                                                                                                             "pass")
    checks = [CheckResult("a", "fail"), b_result, CheckResult("c", "pass")]
    assert summary_line(DoctorReport(checks=tuple(checks), findings=tuple(findings))) == expected


def test_plural():
    assert plural(1, "check") == "1 check" and plural(0, "check") == "0 checks" and plural(2, "info") == "2 infos"
