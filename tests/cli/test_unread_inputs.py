"""No verdict or plan on data not read, through the CLI, on the examples with one list taken away:
reconcile's plan (issue 22 item 1), a dump's namespace scope (item 2), why-group with configmaps
forbidden and why-not-cached with the webhook configuration forbidden or missing (issue 27 items 2, 3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.in_process import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BROKEN = EXAMPLES / "broken-cluster.yaml"
AMBIGUOUS_POD = "llama-3-1-8b-instruct-predictor-7d9c6b5f48-nhngp"
MISTRAL_MISS = "mistral-7b-instruct-v0-3-predictor-5c8d7b6f49-8zhfd"


def dump() -> dict[str, Any]:
    return yaml.safe_load(BROKEN.read_text())


def with_status(doc: dict[str, Any], resource: str, status: str) -> dict[str, Any]:
    for read in doc["meta"]["reads"]:
        if read["resource"] == resource:
            read.update(status=status, count=0)
    gone = {"mutatingwebhookconfigurations": "mutatingwebhookconfiguration"}.get(resource, resource[:-1])
    doc["items"] = [x for x in doc["items"] if x["kind"].lower() != gone]
    return doc


def write(tmp_path: Path, doc: dict[str, Any], name: str = "input.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def plain_list(doc: dict[str, Any], without: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "items": [x for x in doc["items"] if x["kind"] != without]}


# ---- issue 22 item 1: no plan from unread data ----------------------------------------------------------------


@pytest.mark.parametrize("resource", ["nodes", "kernelcachenodegroups", "kernelcaches", "kernelcachenodes"])
def test_reconcile_dry_run_plans_nothing_from_a_forbidden_list(capsys, tmp_path, resource):
    code, out, err = cli(
        capsys, "reconcile", "--dry-run", "-f", write(tmp_path, with_status(dump(), resource, "forbidden"))
    )
    assert code == 3
    assert out == ""
    assert f"error: reconcile cannot answer: cannot list {resource} (forbidden)" in err


def test_reconcile_dry_run_on_a_plain_list_without_nodes_is_exit_2(capsys, tmp_path):
    code, out, err = cli(capsys, "reconcile", "--dry-run", "-f", write(tmp_path, plain_list(dump(), "Node")))
    assert code == 2 and out == ""
    assert "reconcile cannot answer: nodes are not in the input files" in err


def test_reconcile_dry_run_on_a_failed_read_is_exit_3(capsys, tmp_path):
    """Issue 22 item 6: a read recorded `failed` is not read."""
    code, _, err = cli(
        capsys, "reconcile", "--dry-run", "-f", write(tmp_path, with_status(dump(), "kernelcachecaptures", "failed"))
    )
    assert code == 3 and "cannot list kernelcachecaptures (failed)" in err


# ---- issue 22 item 2: a dump taken with -n ---------------------------------------------------------------------


def namespaced_dump(namespace: str) -> dict[str, Any]:
    doc = dump()
    doc["meta"]["scope"] = {"namespace": namespace, "parts": ["nodes", "install", "preparation", "producers", "events"]}
    scoped = {"kernelcaches", "kernelcachecaptures", "events", "rolebindings"}
    for read in doc["meta"]["reads"]:
        # the lists of -n's scope (all namespaces in a full dump); those of a fixed namespace stay
        if (read["resource"] in scoped or read["resource"] == "pods") and read["namespace"] is None:
            read["namespace"] = namespace
    namespaced = {"KernelCache", "KernelCacheCapture", "Event", "RoleBinding"}
    doc["items"] = [
        x
        for x in doc["items"]
        if not (
            x["kind"] in namespaced
            or (x["kind"] == "Pod" and "serving.kserve.io/inferenceservice" in (x["metadata"].get("labels") or {}))
        )
        or x["metadata"].get("namespace") == namespace
    ]
    return doc


def test_a_dump_taken_with_n_is_answered_within_its_namespace_and_says_so(capsys, tmp_path):
    path = write(tmp_path, namespaced_dump("team-llm"))
    code, out, err = cli(capsys, "doctor", "-f", path, "-o", "json")
    report = json.loads(out)
    assert report["source"]["scope"] == {"namespace": "team-llm"}
    assert report["summary"]["incomplete"] == 0
    assert "note: the input was dumped with -n team-llm: answering for namespace team-llm only" in err
    code, out, _ = cli(capsys, "status", "-f", path)
    assert code == 0 and "namespace team-llm" in out.splitlines()[1]  # under the answer line
    code, out, _ = cli(capsys, "status", "-f", path, "-o", "json")
    assert json.loads(out)["source"]["scope"] == {"namespace": "team-llm"}


def test_a_dump_taken_with_n_does_not_answer_for_another_namespace(capsys, tmp_path):
    path = write(tmp_path, namespaced_dump("team-llm"))
    code, out, err = cli(capsys, "status", "-f", path, "-n", "team-vision")
    assert code == 3 and out == ""  # not read, as with -A: no verdict on what the dump never listed
    assert "cannot answer for namespace team-vision: the input was dumped with -n team-llm" in err
    assert "kernelcaches" in err and "(give -n team-llm, or dump with -n team-vision or -A)" in err


# ---- issue 27 items 2 and 3 -------------------------------------------------------------------------------------


def test_why_group_with_configmaps_forbidden_names_the_read(capsys, tmp_path):
    code, out, err = cli(
        capsys,
        "why-group",
        AMBIGUOUS_POD,
        "-n",
        "team-llm",
        "-f",
        write(tmp_path, with_status(dump(), "configmaps", "forbidden")),
    )
    assert code == 3 and out == ""
    assert err == "error: why-group cannot answer: cannot list configmaps in namespace kserve (forbidden)\n"


def test_why_not_cached_with_the_webhook_configuration_forbidden_is_exit_3(capsys, tmp_path):
    code, out, err = cli(
        capsys,
        "why-not-cached",
        MISTRAL_MISS,
        "-n",
        "team-llm",
        "-f",
        write(tmp_path, with_status(dump(), "mutatingwebhookconfigurations", "forbidden")),
    )
    assert code == 3 and out == ""
    assert "why-not-cached cannot answer: cannot list mutatingwebhookconfigurations (forbidden)" in err


def test_why_not_cached_names_an_optional_list_it_could_not_read(capsys, tmp_path):
    path = write(tmp_path, plain_list(dump(), "MutatingWebhookConfiguration"))
    code, out, _ = cli(capsys, "why-not-cached", MISTRAL_MISS, "-n", "team-llm", "-f", path, "-o", "json")
    doc = json.loads(out)
    assert doc["unread"] == ["not in the input: list mutatingwebhookconfigurations"]
    assert {g["id"]: g["passed"] for g in doc["gates"]}["webhook-installed"] is None  # not checked, not failed
    code, out, _ = cli(capsys, "why-not-cached", MISTRAL_MISS, "-n", "team-llm", "-f", path)
    assert "Not read" in out and "not in the input: list mutatingwebhookconfigurations" in out
