"""`sarif`: SARIF 2.1.0 for code-scanning dashboards (GitHub, GitLab, Azure DevOps...).

One rule per kind of finding (`ruleId` is `check/code`; a check without findings has a rule of its own for
its notifications), one result per finding. Kubernetes objects have no file, so a result's physical location
is a `k8s://` URI naming the cluster and the object (`k8s://<cluster>/Node/-/gpu-1`, `-` for no namespace),
beside a logical location `{"name": "gpu-1", "fullyQualifiedName": "Node/gpu-1", "kind": "resource"}`, and
`partialFingerprints` (check, code, object, group) let code-scanning dashboards follow one finding across runs
and deduplicate it. Suppressed findings are kept, with `suppressions: [{"kind": "external"}]`; skipped and
not-applicable checks become tool execution notifications of the one invocation.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import quote

from .. import __version__
from .doctor_common import SEVERITY_RANK, CheckGroup, check_groups, object_path
from .registry import renderer

if TYPE_CHECKING:
    from ..checks.model import DoctorReport, Finding, ObjectRef

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
TOOL_NAME = "kubectl-kcache"
# The plugin's home, as cli/'s ISSUES_URL names it (report/ does not import cli/).
INFORMATION_URI = "https://github.com/kserve/kubectl-kcache"

LEVELS = {"error": "error", "warning": "warning", "info": "note"}
NOTIFICATION_LEVELS = {"skipped": "warning", "not-applicable": "note"}


@renderer("sarif", order=30)
def render_sarif(report: DoctorReport, out: TextIO, *, color: bool = False) -> None:
    json.dump(sarif_log(report), out, indent=2)
    out.write("\n")


def sarif_log(report: DoctorReport) -> dict[str, Any]:
    groups = check_groups(report)
    rules: list[dict[str, Any]] = []
    rule_index: dict[str, int] = {}
    for g in groups:
        codes = list(dict.fromkeys(f.full_code for f in g.findings))
        for code in codes or [g.id]:
            rule_index[code] = len(rules)
            found = [f for f in g.findings if f.full_code == code]
            rules.append(_rule(g, code, found))
    results = [_result(f, rule_index[f.full_code], report.cluster) for g in groups for f in g.findings]
    invocation: dict[str, Any] = {"executionSuccessful": True}
    notifications = [
        _notification(g, rule_index[g.id]) for g in groups if g.status in NOTIFICATION_LEVELS and g.id in rule_index
    ]
    if notifications:
        invocation["toolExecutionNotifications"] = notifications

    run: dict[str, Any] = {
        "tool": {
            "driver": {"name": TOOL_NAME, "version": __version__, "informationUri": INFORMATION_URI, "rules": rules}
        },
        "invocations": [invocation],
        "results": results,
        "properties": {
            "cluster": report.cluster,
            "source": report.source,
            "objectCount": report.object_count,
            **({"provenance": report.provenance} if report.provenance else {}),
        },
    }
    return {"$schema": SARIF_SCHEMA_URI, "version": SARIF_VERSION, "runs": [run]}


def object_uri(cluster: str, obj: ObjectRef) -> str:
    """`k8s://<cluster>/<Kind>/<namespace or ->/<name>`, each part percent-encoded."""
    parts = (cluster or "cluster", obj.kind, obj.namespace or "-", obj.name)
    return "k8s://" + "/".join(quote(p, safe="") for p in parts)


def fingerprint(finding: Finding) -> str:
    """Stable across runs for one finding: its check, code, object and group (not its wording or times)."""
    obj = finding.object
    key = "\0".join((finding.check, finding.code, obj.kind, obj.namespace or "", obj.name, finding.group or ""))
    return hashlib.sha256(key.encode()).hexdigest()


def rule_name(check_id: str) -> str:
    """`group-taints` -> `GroupTaints`: SARIF's rule names are identifiers, distinct from the ids."""
    return "".join(part[:1].upper() + part[1:] for part in check_id.replace("_", "-").split("-") if part)


def _rule(group: CheckGroup, rule_id: str, findings: list[Finding]) -> dict[str, Any]:
    # The worst it found; else SARIF's default.
    severity = max((f.severity for f in findings), key=lambda s: SEVERITY_RANK.get(s, 0)) if findings else None
    code = rule_id.partition("/")[2]
    text = group.title or group.id
    return {
        "id": rule_id,
        "name": rule_name(rule_id.replace("/", "-")),
        "shortDescription": {"text": f"{text} ({code})" if code else text},
        "helpUri": f"{INFORMATION_URI}/blob/main/docs/checks.md#{quote(rule_id, safe='')}",
        "defaultConfiguration": {"level": LEVELS.get(severity or "warning", "warning")},
    }


def _result(finding: Finding, index: int, cluster: str) -> dict[str, Any]:
    text = finding.message + (f"\nNext: {finding.hint}" if finding.hint else "")
    obj = finding.object
    result: dict[str, Any] = {
        "ruleId": finding.full_code,
        "ruleIndex": index,
        "level": LEVELS.get(finding.severity, "warning"),
        "message": {"text": text},
        "locations": [
            {
                "physicalLocation": {"artifactLocation": {"uri": object_uri(cluster, obj)}},
                "logicalLocations": [{"name": obj.name, "fullyQualifiedName": object_path(obj), "kind": "resource"}],
            }
        ],
        "partialFingerprints": {"kcacheFinding/v1": fingerprint(finding)},
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
    return {
        "level": NOTIFICATION_LEVELS[group.status],
        "message": {"text": text},
        "associatedRule": {"id": group.id, "index": index},
    }
