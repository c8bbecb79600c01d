"""`-o markdown`: for tickets. A heading, a table of the checks (pipes escaped), findings with hints as code."""

from __future__ import annotations

import io
import re

import pytest

from kubectl_kcache.checks.model import CheckResult, DoctorReport, Finding, ObjectRef
from kubectl_kcache.report import render_doctor
from kubectl_kcache.report.doctor_markdown import code_span, escape_cell

UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def markdown(report: DoctorReport) -> str:
    out = io.StringIO()
    render_doctor(report, "markdown", out, color=False)
    return out.getvalue()


def table_rows(text: str) -> list[str]:
    """The table's rows, without the padding that aligns its columns."""
    return [re.sub(r" {2,}", " ", line) for line in text.splitlines() if line.startswith("|")]


def test_heading_summary_and_a_row_per_check(problem_report):
    text = markdown(problem_report)
    lines = text.splitlines()
    assert lines[0] == "# kubectl-kcache doctor: kind-gpu"
    assert "**2 errors, 1 warning, 1 info in 7 checks (1 skipped, 1 incomplete, 1 suppressed)**" in lines
    rows = table_rows(text)
    assert len(rows) == 2 + len(problem_report.checks)
    columns = len(UNESCAPED_PIPE.findall(rows[0]))
    assert all(len(UNESCAPED_PIPE.findall(row)) == columns for row in rows)
    for check, row in zip(problem_report.checks, rows[2:], strict=True):
        assert f"`{check.id}`" in row and f"| {check.status} |" in row
    assert any(row.startswith("| ⊘ | `registry-pull` |") for row in rows) and "forbidden: list pods in kserve" in text
    assert "1 (+1 suppressed)" in text


def test_findings_are_listed_with_hints_in_backticks(problem_report):
    text = markdown(problem_report)
    findings_part = text.split("## Findings", 1)[1].split("## Suppressed findings", 1)[0]
    for finding in problem_report.findings:
        if finding.suppressed:
            assert finding.message not in findings_part
            continue
        assert f"`{finding.hint}`" in findings_part
        assert f"`{finding.object}`" in findings_part
        assert f"**{finding.severity}**" in findings_part
    assert "### `group-taints`: Member nodes' taints are tolerated" in findings_part
    suppressed_part = text.split("## Suppressed findings", 1)[1]
    assert "node entry cpu-9 is in Error" in suppressed_part


def test_pipes_in_table_cells_are_escaped():
    checks = (CheckResult("crds", "pass"), CheckResult("agent", "skipped", "get daemonsets | pods forbidden"))
    titles = {"crds": "CRDs | versions", "agent": "The agent runs"}
    text = markdown(DoctorReport(checks=checks, findings=(), titles=titles))
    rows = table_rows(text)
    columns = len(UNESCAPED_PIPE.findall(rows[0]))
    assert all(len(UNESCAPED_PIPE.findall(row)) == columns for row in rows)
    assert "CRDs \\| versions" in text and "get daemonsets \\| pods forbidden" in text


def test_a_clean_report_says_so(clean_report):
    text = markdown(clean_report)
    assert "**no problems found in 5 checks over 17 objects**" in text
    assert "## Findings" not in text


def test_hints_with_backticks_or_several_lines():
    odd = Finding(
        "config",
        "error",
        ObjectRef("ConfigMap", "inferenceservice-config", "kserve"),
        "bad *value* in [config]",
        "echo `date` | kubectl apply -f -",
    )
    multi = Finding(
        "config",
        "warning",
        ObjectRef("ConfigMap", "inferenceservice-config", "kserve"),
        "second",
        "kubectl -n kserve get cm inferenceservice-config \\\n  -o yaml",
    )
    text = markdown(DoctorReport(checks=(CheckResult("config", "fail"),), findings=(odd, multi)))
    assert "``echo `date` | kubectl apply -f -``" in text
    assert "bad \\*value\\* in \\[config\\]" in text
    block = "    ```sh\n    kubectl -n kserve get cm inferenceservice-config \\\n      -o yaml\n    ```"
    assert f"  - next:\n\n{block}" in text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("kubectl get nodes", "`kubectl get nodes`"),
        ("a `b` c", "``a `b` c``"),
        ("`x`", "`` `x` ``"),
        ("a ``b`` c", "```a ``b`` c```"),
    ],
)
def test_code_span(text, expected):
    assert code_span(text) == expected


def test_escape_cell():
    assert escape_cell("a|b\nc") == "a\\|b<br>c"
