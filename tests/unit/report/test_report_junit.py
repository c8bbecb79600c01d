"""`-o junit`: parses, one suite, a test case per check, and the counts agree with the elements."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

from kubectl_kcache.checks.model import CheckResult, DoctorReport, Finding, ObjectRef
from kubectl_kcache.report import render_doctor


def junit(report: DoctorReport) -> ET.Element:
    out = io.StringIO()
    render_doctor(report, "junit", out, color=False)
    assert out.getvalue().startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    return ET.fromstring(out.getvalue().encode("utf-8"))


def counts(element: ET.Element) -> dict[str, int]:
    return {k: int(element.get(k, "-1")) for k in ("tests", "failures", "errors", "skipped")}


def test_one_suite_with_a_case_per_check_and_right_counts(problem_report):
    root = junit(problem_report)
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert len(suites) == 1
    suite = suites[0]
    assert suite.get("name") == "kubectl-kcache doctor"
    cases = suite.findall("testcase")
    assert [c.get("classname") for c in cases] == [f"kcache.{c.id}" for c in problem_report.checks]
    assert cases[2].get("name") == "Member nodes' taints are tolerated"
    expected = {"tests": 7, "failures": 3, "errors": 0, "skipped": 2}
    assert counts(suite) == expected and counts(root) == expected
    assert len(suite.findall("testcase/failure")) == expected["failures"]
    assert len(suite.findall("testcase/skipped")) == expected["skipped"]
    assert not suite.findall("testcase/error")


def test_failures_carry_each_findings_message_object_and_hint(problem_report):
    cases = {c.get("classname"): c for c in junit(problem_report).iter("testcase")}
    for finding in problem_report.findings:
        case = cases[f"kcache.{finding.check}"]
        failure = case.find("failure")
        assert failure is not None
        if finding.suppressed:
            assert finding.message not in (failure.text or "")
            assert finding.message in case.findtext("system-out")
            continue
        assert finding.message in failure.text
        assert str(finding.object) in failure.text
        assert finding.hint in failure.text
    taints = cases["kcache.group-taints"].find("failure")
    assert taints.get("type") == "error" and taints.get("message") == "2 findings (1 error, 1 warning)"
    assert cases["kcache.cache-status"].find("failure").get("type") == "info"
    assert cases["kcache.crds"].find("failure") is None and cases["kcache.crds"].find("skipped") is None


def test_skipped_and_not_applicable_checks_are_skipped_with_their_reason(problem_report):
    cases = {c.get("classname"): c for c in junit(problem_report).iter("testcase")}
    assert cases["kcache.registry-pull"].find("skipped").get("message") == "forbidden: list pods in kserve"
    assert cases["kcache.capture"].find("skipped").get("message") == "not applicable: no KernelCacheCaptures"


def test_clean_report(clean_report):
    suite = junit(clean_report).find("testsuite")
    assert counts(suite) == {"tests": 5, "failures": 0, "errors": 0, "skipped": 1}
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties == {"cluster": "kind-gpu", "source": "live", "objects": "17"}


def test_only_suppressed_findings_is_not_a_failure(suppressed_only_report):
    suite = junit(suppressed_only_report).find("testsuite")
    assert counts(suite)["failures"] == 0
    assert "node entry cpu-9 is in Error" in suite.findtext("testcase/system-out")


def test_odd_characters_still_make_valid_xml():
    finding = Finding(
        "nodes",
        "error",
        ObjectRef("Node", "gpu-ü"),
        'bad <label> & "quote" \x1b[0m … ✔',
        "kubectl get node 'gpu-ü' -o jsonpath='{.metadata.labels}' | grep -v x",
    )
    report = DoctorReport(checks=(CheckResult("nodes", "fail"),), findings=(finding,))
    failure = junit(report).find("testsuite/testcase/failure")
    assert 'bad <label> & "quote" \ufffd[0m … ✔' in failure.text
    assert finding.hint in failure.text
