"""`-o json` and `-o yaml`: exactly DoctorReport.to_dict(), in the documented shape."""

from __future__ import annotations

import io
import json

import yaml

from kubectl_kcache.checks.model import CheckResult, DoctorReport, Finding, ObjectRef
from kubectl_kcache.report import render_doctor

TOP_KEYS = ["kind", "version", "summary", "checks", "findings"]
SUMMARY_KEYS = ["errors", "warnings", "infos", "skipped", "incomplete", "suppressed", "checks"]
CHECK_KEYS = ["id", "status", "reason"]
FINDING_KEYS = ["check", "code", "severity", "object", "group", "message", "hint", "suppressed"]
OBJECT_KEYS = ["kind", "name", "namespace"]


def rendered(report: DoctorReport, fmt: str, out: io.StringIO | None = None) -> str:
    out = out or io.StringIO()
    render_doctor(report, fmt, out, color=False)
    return out.getvalue()


def assert_contract_shape(doc: dict) -> None:
    assert list(doc) == TOP_KEYS
    assert doc["kind"] == "DoctorReport" and doc["version"] == 1
    assert list(doc["summary"]) == SUMMARY_KEYS
    assert all(isinstance(v, int) for v in doc["summary"].values())
    for check in doc["checks"]:
        assert list(check)[: len(CHECK_KEYS)] == CHECK_KEYS
        assert set(check) - set(CHECK_KEYS) <= {"unread"}  # present only when some read could not be made
        assert all(isinstance(u, str) for u in check.get("unread", []))
        assert check["status"] in ("pass", "fail", "skipped", "not-applicable")
        assert isinstance(check["id"], str) and isinstance(check["reason"], str)
    for finding in doc["findings"]:
        assert list(finding)[: len(FINDING_KEYS)] == FINDING_KEYS
        assert set(finding) - set(FINDING_KEYS) <= {"evidence"}
        assert finding["severity"] in ("error", "warning", "info")
        assert list(finding["object"]) == OBJECT_KEYS
        assert finding["object"]["namespace"] is None or isinstance(finding["object"]["namespace"], str)
        assert finding["group"] is None or isinstance(finding["group"], str)
        assert isinstance(finding["message"], str) and isinstance(finding["hint"], str)
        assert isinstance(finding["suppressed"], bool)
    assert doc["summary"]["checks"] == len(doc["checks"])


def test_json_is_the_report_dict_and_round_trips(problem_report):
    doc = json.loads(rendered(problem_report, "json"))
    assert doc == problem_report.to_dict()
    assert json.loads(json.dumps(doc)) == doc
    assert_contract_shape(doc)


def test_json_summary_counts(problem_report):
    doc = json.loads(rendered(problem_report, "json"))
    assert doc["summary"] == {
        "errors": 2,
        "warnings": 1,
        "infos": 1,
        "skipped": 1,
        "incomplete": 1,
        "suppressed": 1,
        "checks": 7,
    }
    assert [c["id"] for c in doc["checks"]] == [c.id for c in problem_report.checks]
    assert [f["suppressed"] for f in doc["findings"]] == [False, False, False, False, True]
    assert doc["findings"][0]["object"] == {"kind": "Node", "name": "gpu-1", "namespace": None}
    assert doc["findings"][3]["object"] == {"kind": "KernelCache", "name": "llama-kc", "namespace": "models"}
    assert doc["findings"][0]["evidence"] == list(problem_report.findings[0].evidence)


def test_json_of_a_clean_report(clean_report):
    doc = json.loads(rendered(clean_report, "json"))
    assert_contract_shape(doc)
    assert doc["findings"] == []
    assert doc["summary"] == {
        "errors": 0,
        "warnings": 0,
        "infos": 0,
        "skipped": 0,
        "incomplete": 0,
        "suppressed": 0,
        "checks": 5,
    }


def test_yaml_is_the_same_document_in_the_same_order(problem_report, clean_report, skipped_only_report):
    for report in (problem_report, clean_report, skipped_only_report):
        text = rendered(report, "yaml")
        doc = yaml.safe_load(text)
        assert doc == json.loads(rendered(report, "json"))
        assert list(doc) == TOP_KEYS  # not sorted
        assert text.startswith("kind: DoctorReport\n")


def test_yaml_keeps_long_hints_on_one_line(problem_report):
    text = rendered(problem_report, "yaml")
    hint = problem_report.findings[0].hint
    assert len(hint) > 200
    assert any(line.strip() == f"hint: {hint}" or hint in line for line in text.splitlines())


def test_non_ascii_survives_any_output_encoding():
    finding = Finding("nodes", "warning", ObjectRef("Node", "gpu-ü"), "kubelet v1.30 … too old", "kubectl get node")
    report = DoctorReport(checks=(CheckResult("nodes", "fail"),), findings=(finding,))
    for fmt in ("json", "yaml"):
        raw = io.BytesIO()
        out = io.TextIOWrapper(raw, encoding="ascii")
        render_doctor(report, fmt, out, color=False)
        out.flush()
        text = raw.getvalue().decode("ascii")
        doc = json.loads(text) if fmt == "json" else yaml.safe_load(text)
        assert doc == report.to_dict()
    assert "kubelet v1.30 … too old" in rendered(report, "yaml")  # UTF-8 (or unknown) stays readable
