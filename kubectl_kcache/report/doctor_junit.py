"""`junit`: JUnit XML for CI dashboards: one test suite, a test case per check.

A check with unsuppressed findings (or status `fail`) has one `<failure>` listing each finding's severity,
object, message, evidence and hint; `skipped` and `not-applicable` checks have a `<skipped>` element with
the reason; suppressed findings go to the test case's `<system-out>`.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING, TextIO

from .doctor_common import SEVERITY_RANK, CheckGroup, check_groups, object_path, plural
from .registry import renderer

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

    from ..checks.model import DoctorReport, Finding

SUITE_NAME = "kubectl-kcache doctor"
CLASS_PREFIX = "kcache."
NOT_RUN = ("skipped", "not-applicable")

# Characters XML 1.0 cannot carry at all, even escaped.
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: str) -> str:
    return _XML_INVALID.sub("\ufffd", text)


@renderer("junit", order=20)
def render_junit(report: DoctorReport, out: TextIO, *, color: bool = False) -> None:
    import xml.etree.ElementTree as ET

    groups = check_groups(report)
    skipped = sum(g.status in NOT_RUN for g in groups)
    failures = sum(g.failed and g.status not in NOT_RUN for g in groups)
    counts = {"tests": str(len(groups)), "failures": str(failures), "errors": "0", "skipped": str(skipped), "time": "0"}

    root = ET.Element("testsuites", {"name": SUITE_NAME, **counts})
    suite = ET.SubElement(root, "testsuite", {"name": SUITE_NAME, **counts})
    properties = ET.SubElement(suite, "properties")
    prov = report.provenance
    for name, value in (
        ("cluster", report.cluster),
        ("source", report.source),
        ("objects", str(report.object_count)),
        ("server", prov.get("server", "")),
        ("files", ", ".join(prov.get("files") or ())),
        ("takenAt", prov.get("takenAt", "")),
        ("generatedAt", prov.get("generatedAt", "")),
        ("tool", prov.get("tool", "")),
        ("namespace", (prov.get("scope") or {}).get("namespace") or ""),
    ):
        if value or name in ("cluster", "source", "objects"):
            ET.SubElement(properties, "property", {"name": name, "value": _clean(value)})
    for group in groups:
        _testcase(suite, group)

    ET.indent(root)
    # ASCII with character references: valid in any output encoding, and still UTF-8 as declared.
    text = ET.tostring(root, encoding="us-ascii", xml_declaration=False).decode("ascii")
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n' + text + "\n")


def _testcase(suite: Element, group: CheckGroup) -> None:
    import xml.etree.ElementTree as ET

    case = ET.SubElement(
        suite, "testcase", {"classname": CLASS_PREFIX + group.id, "name": _clean(group.title or group.id), "time": "0"}
    )
    if group.status in NOT_RUN:
        reason = group.reason or group.status
        message = reason if group.status == "skipped" else f"not applicable: {reason}"
        ET.SubElement(case, "skipped", {"message": _clean(message)})
    elif group.failed:
        active = group.active
        if len(active) == 1:
            message = f"{active[0].severity}: {object_path(active[0].object)}: {active[0].message}"
        elif active:
            by_severity = Counter(f.severity for f in active)
            detail = ", ".join(
                plural(n, s) for s, n in sorted(by_severity.items(), key=lambda kv: -SEVERITY_RANK.get(kv[0], 0))
            )
            message = f"{plural(len(active), 'finding')} ({detail})"
        else:
            message = group.reason or "check failed"
        worst = max((f.severity for f in active), key=lambda s: SEVERITY_RANK.get(s, 0), default="error")
        failure = ET.SubElement(case, "failure", {"message": _clean(message), "type": worst})
        failure.text = _clean("\n\n".join(_describe(f) for f in active) or message)
    if group.suppressed:
        system_out = ET.SubElement(case, "system-out")
        system_out.text = _clean("\n\n".join("suppressed: " + _describe(f) for f in group.suppressed))


def _describe(finding: Finding) -> str:
    lines = [f"{finding.severity} {object_path(finding.object)}: {finding.message}"]
    if finding.group:
        lines.append(f"  group: {finding.group}")
    lines.extend(f"  evidence: {e}" for e in finding.evidence)
    if finding.hint:
        lines.append(f"  next: {finding.hint}")
    return "\n".join(lines)
