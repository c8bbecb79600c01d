"""`-o name` as kubectl prints it: doctor's objects with findings, reconcile's objects written."""

from __future__ import annotations

import json
from pathlib import Path

from kubectl_kcache.cli import run

ROOT = Path(__file__).resolve().parents[2]
BROKEN = str(ROOT / "examples" / "broken-cluster.yaml")
HEALTHY = str(ROOT / "examples" / "healthy-cluster.yaml")


def cli(capsys, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = run(list(argv))
    return code, capsys.readouterr().out


def test_doctor_names_each_object_with_a_finding_once_in_kubectl_form(capsys):
    code, out = cli(capsys, "doctor", "-f", BROKEN, "-o", "name")
    _, doc = cli(capsys, "doctor", "-f", BROKEN, "-o", "json")
    report = json.loads(doc)
    names = out.splitlines()
    assert code == 1
    assert len(names) == len(set(names))
    expected = {(f["object"]["kind"], f["object"]["name"]) for f in report["findings"] if not f.get("suppressed")}
    assert len(names) == len(expected)
    assert "daemonset.apps/kserve-kernelcachenode-agent" in names
    assert "kernelcachenodegroup.serving.kserve.io/h200" in names
    assert any(n.startswith("node/") for n in names) and any(n.startswith("job.batch/") for n in names)


def test_doctor_on_a_healthy_cluster_names_nothing(capsys):
    code, out = cli(capsys, "doctor", "-f", HEALTHY, "-o", "name")
    assert (code, out) == (0, "")


def test_reconcile_dry_run_names_the_objects_it_would_write(capsys):
    code, out = cli(capsys, "reconcile", "--dry-run", "-f", BROKEN, "-o", "name")
    _, doc = cli(capsys, "reconcile", "--dry-run", "-f", BROKEN, "-o", "json")
    written = [a for a in json.loads(doc)["actions"] if a["verb"] != "event"]
    assert code == 1
    assert out.splitlines() == [
        f"{a['kind'].lower()}.{'apps' if a['kind'] == 'DaemonSet' else 'serving.kserve.io'}/{a['name']}"
        for a in written
    ]


def test_reconcile_dry_run_with_nothing_to_do_names_nothing(capsys):
    code, out = cli(capsys, "reconcile", "--dry-run", "-f", HEALTHY, "-o", "name")
    assert (code, out) == (0, "")
