"""`sarif`: SARIF 2.1.0 for code-scanning dashboards (GitHub, GitLab, Azure DevOps...).

One rule per check, one result per finding. Kubernetes objects have no file and line, so a result's
location is a logical location: `{"name": "gpu-1", "fullyQualifiedName": "Node/gpu-1", "kind": "resource"}`.
Suppressed findings are kept, with `suppressions: [{"kind": "external"}]`; skipped and not-applicable checks
become tool execution notifications of the one invocation.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TextIO

from .. import __version__
from .doctor_common import SEVERITY_RANK, CheckGroup, check_groups, object_path
from .registry import renderer

if TYPE_CHECKING:
    from ..checks.model import DoctorReport, Finding

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
TOOL_NAME = "kubectl-kcache"
# The plugin's home, as cli.py's ISSUES_URL names it (report/ does not import cli.py).
INFORMATION_URI = "https://github.com/kserve/kubectl-kcache"

LEVELS = {"error": "error", "warning": "warning", "info": "note"}
NOTIFICATION_LEVELS = {"skipped": "warning", "not-applicable": "note"}


@renderer("sarif", order=30)
def render_sarif(report: DoctorReport, out: TextIO, *, color: bool = False) -> None:
    json.dump(sarif_log(report), out, indent=2)
    out.write("\n")


def sarif_log(report: DoctorReport) -> dict[str, Any]:
    groups = check_groups(report)
    rule_index = {g.id: i for i, g in enumerate(groups)}
    severities: dict[str, str] = dict(getattr(report, "severities", None) or {})

    results = [_result(f, rule_index[g.id]) for g in groups for f in g.findings]
    invocation: dict[str, Any] = {"executionSuccessful": True}
    notifications = [_notification(g, rule_index[g.id]) for g in groups if g.status in NOTIFICATION_LEVELS]
    if notifications:
        invocation["toolExecutionNotifications"] = notifications

    run: dict[str, Any] = {
        "tool": {"driver": {"name": TOOL_NAME, "version": __version__, "informationUri": INFORMATION_URI,
                            "rules": [_rule(g, severities.get(g.id)) for g in groups]}},
        "invocations": [invocation],
        "results": results,
        "properties": {"cluster": report.cluster, "source": report.source,
                       "objectCount": report.object_count},
    }
    return {"$schema": SARIF_SCHEMA_URI, "version": SARIF_VERSION, "runs": [run]}


def rule_name(check_id: str) -> str:
    """`group-taints` -> `GroupTaints`: SARIF's rule names are identifiers, distinct from the ids."""
    return "".join(part[:1].upper() + part[1:] for part in check_id.replace("_", "-").split("-") if part)


def _rule(group: CheckGroup, severity: str | None) -> dict[str, Any]:
    # The check's own severity when the report carries it; else the worst it found; else SARIF's default.
    if severity is None and group.findings:
        severity = max((f.severity for f in group.findings), key=lambda s: SEVERITY_RANK.get(s, 0))
    return {"id": group.id, "name": rule_name(group.id),
            "shortDescription": {"text": group.title or group.id},
            "defaultConfiguration": {"level": LEVELS.get(severity or "warning", "warning")}}


def _result(finding: Finding, index: int) -> dict[str, Any]:
    text = finding.message + (f"\nNext: {finding.hint}" if finding.hint else "")
    obj = finding.object
    result: dict[str, Any] = {
        "ruleId": finding.check,
        "ruleIndex": index,
        "level": LEVELS.get(finding.severity, "warning"),
        "message": {"text": text},
        "locations": [{"logicalLocations": [{"name": obj.name, "fullyQualifiedName": object_path(obj),
                                             "kind": "resource"}]}],
        "suppressions": [{"kind": "external"}] if finding.suppressed else [],
    }
    properties: dict[str, Any] = {}
    if finding.group:
        properties["group"] = finding.group
    if finding.evidence:
        properties["evidence"] = list(finding.evidence)
    if properties:
        result["properties"] = properties
    return result


def _notification(group: CheckGroup, index: int) -> dict[str, Any]:
    label = "skipped" if group.status == "skipped" else "not applicable"
    text = f"{group.id}: {label}" + (f": {group.reason}" if group.reason else "")
    return {"level": NOTIFICATION_LEVELS[group.status], "message": {"text": text},
            "associatedRule": {"id": group.id, "index": index}}
