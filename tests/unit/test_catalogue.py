"""docs/checks.md is generated from the check registry and must not go stale."""

from pathlib import Path

import yaml

from kubectl_kcache.checks import all_checks
from kubectl_kcache.checks.catalogue import api_group_of, cluster_role, render_catalogue

DOCS = Path(__file__).resolve().parents[2] / "docs" / "checks.md"
REGENERATE = "python -m kubectl_kcache.checks.catalogue > docs/checks.md"


def test_docs_checks_md_is_current():
    assert DOCS.exists(), f"docs/checks.md is missing; generate it: {REGENERATE}"
    assert DOCS.read_text(encoding="utf-8") == render_catalogue(), (
        f"docs/checks.md is stale (the check registry changed); regenerate it: {REGENERATE}"
    )


def test_every_check_is_documented():
    text = render_catalogue()
    for spec in all_checks():
        assert spec.doc, f"check {spec.id} has no module docstring"
        assert f'<a id="{spec.id}"></a>' in text
        assert spec.title in text


def test_cluster_role_is_read_only_and_covers_every_read():
    role = yaml.safe_load("\n".join(cluster_role()))
    assert role["kind"] == "ClusterRole"
    granted = set()
    for rule in role["rules"]:
        # Secrets: list and watch, no get (the plugin asks for metadata only; RBAC cannot narrow a grant to that)
        assert rule["verbs"] == (["list", "watch"] if rule["resources"] == ["secrets"] else ["get", "list", "watch"])
        granted |= {(g, r) for g in rule["apiGroups"] for r in rule["resources"]}
    wanted = {(api_group_of(r.resource), r.resource) for s in all_checks() for r in s.reads}
    assert granted == wanted
    assert ("", "pods") in granted and ("serving.kserve.io", "kernelcachenodes") in granted


def test_deploy_doctor_rbac_yaml_is_the_generated_role_and_binding():
    from kubectl_kcache.checks.catalogue import ROLE_NAME, render_doctor_rbac

    path = DOCS.parents[1] / "deploy" / "doctor-rbac.yaml"
    assert path.read_text(encoding="utf-8") == render_doctor_rbac(), (
        "deploy/doctor-rbac.yaml is stale (the checks' reads changed); regenerate it: make catalogue"
    )
    role, binding = [d for d in yaml.safe_load_all(path.read_text()) if d]
    assert role == yaml.safe_load("\n".join(cluster_role()))
    assert binding["kind"] == "ClusterRoleBinding" and binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": ROLE_NAME,
    }
    assert [s["kind"] for s in binding["subjects"]] == ["Group"]
    assert "```yaml\n" + "\n".join(cluster_role()) + "\n```" in render_catalogue(), "docs/checks.md shows the same role"


def test_every_check_read_is_a_list_the_doctor_makes():
    """One read plan: a check cannot declare a read that the live doctor (and dump) does not make."""
    from kubectl_kcache.snapshot import plan as readplan
    from kubectl_kcache.snapshot.reads import Read, covers

    made = [Read.of(spec, "ok") for spec in readplan.DOCTOR]
    for check in all_checks():
        for read in check.reads:
            for spec in read.lists:
                assert any(covers(m, spec) for m in made), f"check {check.id} reads {spec.describe()}: not planned"
