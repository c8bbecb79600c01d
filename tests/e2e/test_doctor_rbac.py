"""deploy/doctor-rbac.yaml on the test bed: a user bound to exactly that ClusterRole (its example binding
with the subject edited, as the file says) gets every check of the doctor run, none `skipped`, and status,
why-group, why-not-cached and dump answer too; a user without it gets exit 3 naming who was refused, the role
to bind and `kubectl auth can-i` for the refused reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests import builders as b

from .cluster import OWNED_LABEL
from .test_doctor import healthy_install

pytestmark = pytest.mark.e2e

RBAC = Path(__file__).resolve().parents[2] / "deploy" / "doctor-rbac.yaml"
USER = "alice"  # a context of the test bed's kubeconfig (a client certificate), bound to nothing by default


def bind_doctor_role(cluster, user: str) -> None:
    docs = [d for d in yaml.safe_load_all(RBAC.read_text()) if d]
    for d in docs:
        d["metadata"].setdefault("labels", {})[OWNED_LABEL] = "true"  # the test bed's reset removes them
        if d["kind"] == "ClusterRoleBinding":
            d["subjects"] = [{"kind": "User", "name": user, "apiGroup": "rbac.authorization.k8s.io"}]
    assert [d["kind"] for d in docs] == ["ClusterRole", "ClusterRoleBinding"]
    cluster.apply(docs)


def test_a_user_bound_to_the_doctor_role_gets_no_skipped_check(cluster, tmp_path):
    healthy_install(cluster, extra=[b.capture("model-kcc-1", "team-a")])
    bind_doctor_role(cluster, USER)
    mark = cluster.audit_mark()
    proc = cluster.kcache("doctor", "--context", USER, "-o", "json")
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    assert [c["id"] for c in doc["checks"] if c["status"] == "skipped"] == []
    assert doc["summary"]["skipped"] == 0 and doc["summary"]["incomplete"] == 0
    refused = [
        e for e in cluster.audit_events(mark) if e["user"]["username"] == USER and e["responseStatus"]["code"] == 403
    ]
    assert refused == [], [e["requestURI"] for e in refused]
    for args in (
        ["status"],
        ["why-group", "--capture", "model-kcc-1", "-n", "team-a"],
        ["dump", "--file", str(tmp_path / "d.yaml")],
    ):
        other = cluster.kcache(*args, "--context", USER)
        assert other.returncode == 0, (args, other.stderr)


def test_a_user_without_it_is_told_who_was_refused_and_what_to_bind(cluster):
    healthy_install(cluster)
    proc = cluster.kcache("doctor", "--context", USER, "-o", "json")
    assert proc.returncode == 3
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr  # one line: the error, then who was refused and what to run
    line = lines[0]
    assert line.startswith("doctor: incomplete: forbidden: list ")
    assert f'. User "{USER}" was refused ' in line
    version = __import__("kubectl_kcache").__version__
    grant = (
        f"bind the read-only role: kubectl apply -f https://raw.githubusercontent.com/kserve/kubectl-kcache/"
        f"v{version}/deploy/doctor-rbac.yaml && kubectl create clusterrolebinding kcache-doctor-{USER} "
        f"--clusterrole=kubectl-kcache-doctor --user={USER}; "
    )
    assert grant in line
    can_i = line.split("; check a read: ", 1)[1]
    assert can_i.startswith("kubectl auth can-i list ")
    answer = cluster.kubectl(*can_i.split()[1:], f"--as={USER}", check=False)
    assert answer.stdout.strip() == "no", (can_i, answer.stdout, answer.stderr)  # as the doctor found
    bind_doctor_role(cluster, USER)
    again = cluster.kcache("doctor", "--context", USER, "-o", "json")
    assert again.returncode in (0, 1), again.stderr
