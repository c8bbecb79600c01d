"""docs/checks.md and deploy/doctor-rbac.yaml, generated from the check registry (`make catalogue`):
`python -m kubectl_kcache.checks.catalogue > docs/checks.md`, `... --rbac > deploy/doctor-rbac.yaml`.

For each check: id, title, default severity, when it applies, what it reads (verb, resource, scope) and
its module's docstring; then a read-only ClusterRole granting exactly get/list/watch on what the checks
read, grouped by API group.
"""

from __future__ import annotations

import sys

from ..kernelcache import constants as c
from ..snapshot import kinds
from ..snapshot import plan as readplan
from .model import JOB_NAMESPACE, CheckRead, CheckSpec
from .registry import all_checks

VERBS = ("get", "list", "watch")
METADATA_VERBS = ("list", "watch")  # a metadata-only resource: never `get` (the plugin gets none by name)
ROLE_NAME = "kubectl-kcache-doctor"
EXAMPLE_GROUP = "kubectl-kcache-doctors"  # the example binding's subject: edit it before applying
RBAC_FILE = "deploy/doctor-rbac.yaml"
_JOB_NS_TEXT = "the job namespace (kernelcache.jobNamespace)"


def api_group_of(resource: str) -> str:
    """The API group of a resource the plugin reads (the first kind that maps to it: core events)."""
    for k in kinds.KINDS:
        if k.plural == resource:
            return k.group
    raise KeyError(f"unknown resource {resource!r}: add it to kinds.KINDS")


def _where(read: CheckRead) -> str:
    if read.namespace == JOB_NAMESPACE:
        return f" in {_JOB_NS_TEXT}"
    if read.namespace == readplan.SCOPE:
        return " in the namespace of -n (all by default)"
    if read.namespace:
        return f" in {read.namespace}"
    return ""


def _read_line(read: CheckRead) -> str:
    group = api_group_of(read.resource)
    resource = f"{read.resource}.{group}" if group else read.resource
    line = f"`{read.verb} {resource}`{_where(read)}"
    if read.selector:
        line += f" ({read.selector})"
    if read.optional:
        line += f"; optional: without it, {read.note or 'part of the check is left out'}"
    return line


def _section(spec: CheckSpec) -> list[str]:
    applies = "only while the feature is enabled and its configuration valid" if spec.needs_feature else "always"
    out = [
        f'<a id="{spec.id}"></a>',
        f"## `{spec.id}`: {spec.title}",
        "",
        f"- default severity: **{spec.severity}**",
        f"- applies: {applies}",
        "- reads:",
    ]
    out += [f"  - {_read_line(r)}" for r in spec.reads]
    out += ["", spec.doc, ""]
    if spec.codes:
        out += ["| code | severity | meaning |", "|---|---|---|"]
        out += [
            f'| <a id="{spec.id}/{code.id}"></a>`{spec.id}/{code.id}` | {code.severity} | {code.summary} |'
            for code in spec.codes
        ]
        out.append("")
    return out


def _metadata_only(resource: str) -> bool:
    return any(k.resource.metadata_only for k in kinds.KINDS if k.plural == resource)


def cluster_role() -> list[str]:
    """A read-only ClusterRole for every list of the read plan (the checks', status's, the explanations' and
    reconcile's), grouped by API group, scopes as comments. A resource listed by metadata only (Secrets) gets
    `list` and `watch` (the monitor keeps its lists current) in a rule of its own, never `get`: RBAC cannot
    grant metadata without values, so nothing more is granted than the requests the plugin makes (which ask
    for metadata only)."""
    by_group: dict[str, dict[str, set[str]]] = {}
    for spec in readplan.every_list():  # THE read plan: every list some command makes
        read = CheckRead(spec)
        scopes = by_group.setdefault(api_group_of(read.resource), {}).setdefault(read.resource, set())
        scope = ", ".join(x for x in (_where(read).strip(), read.selector) if x)
        scopes.add(scope or "all")
    out = [
        "apiVersion: rbac.authorization.k8s.io/v1",
        "kind: ClusterRole",
        "metadata:",
        f"  name: {ROLE_NAME}",
        "  labels:",
        "    app.kubernetes.io/name: kubectl-kcache",
        "rules:",
    ]
    for group in sorted(by_group):
        resources = by_group[group]
        for metadata_only in (False, True):
            names = sorted(res for res in resources if _metadata_only(res) == metadata_only)
            if not names:
                continue
            out.append(f'  - apiGroups: ["{group}"]')
            out.append("    resources:")
            for res in names:
                note = "metadata only (PartialObjectMetadataList), never data; " if metadata_only else ""
                out.append(f"      - {res}  # {note}{'; '.join(sorted(resources[res]))}")
            out.append(f"    verbs: [{', '.join(METADATA_VERBS if metadata_only else VERBS)}]")
    return out


def render_doctor_rbac() -> str:
    """deploy/doctor-rbac.yaml: the read-only ClusterRole and an example ClusterRoleBinding."""
    return "\n".join(
        [
            "# The read-only ClusterRole of kubectl-kcache's read commands (doctor, status, why-group,",
            "# why-not-cached, dump): get, list and watch on exactly what the doctor's checks read, and an",
            "# example binding. Generated from the check registry (make catalogue): do not edit.",
            "#",
            f"# Bind it to whoever runs the doctor: edit the binding's subject (here the group {EXAMPLE_GROUP}),",
            f"# then `kubectl apply -f {RBAC_FILE}`, or apply the role and bind it with",
            f"#   kubectl create clusterrolebinding kcache-doctor-alice --clusterrole={ROLE_NAME} --user=alice",
            "---",
            *cluster_role(),
            "---",
            "apiVersion: rbac.authorization.k8s.io/v1",
            "kind: ClusterRoleBinding",
            "metadata:",
            f"  name: {ROLE_NAME}",
            "  labels:",
            "    app.kubernetes.io/name: kubectl-kcache",
            "roleRef:",
            "  apiGroup: rbac.authorization.k8s.io",
            "  kind: ClusterRole",
            f"  name: {ROLE_NAME}",
            "subjects:",
            "  - apiGroup: rbac.authorization.k8s.io",
            "    kind: Group",
            f"    name: {EXAMPLE_GROUP}",
            "",
        ]
    )


def render_catalogue() -> str:
    specs = all_checks()
    lines = [
        "# Doctor checks",
        "",
        "<!-- Generated from the check registry (kubectl_kcache/checks). Do not edit by hand: run",
        "     python -m kubectl_kcache.checks.catalogue > docs/checks.md -->",
        "",
        "`kubectl kcache doctor` runs these checks, in this order, over one snapshot of the cluster (or",
        "`--from-file`). Each finding names the object, the KernelCacheNodeGroup when relevant, what is wrong",
        "with the evidence, and the next command to run. A check is `skipped` when a read it needs was",
        "forbidden or its resource is not served (the reason names the verb and resource), and",
        "`not-applicable` when there is nothing to check, such as while the feature is disabled (the `config`",
        "check says so once). In the report, `control-plane` findings come first.",
        "",
        "Every finding has a stable code, `check/code`, listed under its check below. Suppress a known finding",
        'with `--config FILE` (`{"suppress": [{"check": "group-taints", "code": "prefer-no-schedule",',
        '"object": {"kind": "Node", "name": "gpu-*"}, "reason": "..."}]}`; every field but `check` is',
        "optional, names take globs, `code` hides one kind of finding and not another on the same object) or",
        'with the annotation `kcache.kserve.io/suppress: "group-taints/prefer-no-schedule,nodes"` (check ids, or',
        "`check/code`) on the finding's object; `--no-suppressions` ignores both.",
        "",
        "| id | title | default severity |",
        "|---|---|---|",
    ]
    lines += [f"| [`{s.id}`](#{s.id}) | {s.title} | {s.severity} |" for s in specs]
    lines.append("")
    for spec in specs:
        lines += _section(spec)
    lines += [
        "## Read-only RBAC for the doctor",
        "",
        "Every read above, as one ClusterRole (get, list and watch only; the doctor writes nothing), shipped with",
        f"an example binding as [`{RBAC_FILE}`](../{RBAC_FILE}) (`kubectl apply -f {RBAC_FILE}` after editing",
        "the binding's subject). The",
        "comments give the scope the doctor uses; a ClusterRole cannot express it, but Roles per namespace",
        f"(`{c.KSERVE_NAMESPACE}` and the job namespace) with `resourceNames` can narrow it further.",
        "",
        "```yaml",
        *cluster_role(),
        "```",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    sys.stdout.write(render_doctor_rbac() if sys.argv[1:] == ["--rbac"] else render_catalogue())


if __name__ == "__main__":
    main()
