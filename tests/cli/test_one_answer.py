"""One answer (issue 33, point 5): why-not-cached and the doctor agree on a webhook that cannot be reached; every
`-l` is read by one parser (set-based selectors, malformed ones refused with exit 2); `status --problems` keeps
the same rows in every format; the anonymizer maps names only where they are names; the fleet view says when the
namespace or InferenceService asked for is not there (exit 1)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_kcache.anonymize import anonymize
from tests import builders as b
from tests.cli.in_process import cli
from tests.unit.explain.test_why_not_cached import CREATED, LATER, cluster

ROOT = Path(__file__).resolve().parents[2]
HEALTHY = ROOT / "examples" / "healthy-cluster.yaml"
BROKEN = ROOT / "examples" / "broken-cluster.yaml"


def write_list(path: Path, items: list[dict[str, Any]]) -> str:
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return str(path)


# ---- the webhook's reachability ---------------------------------------------------------------------------


def webhook_cluster(tmp_path: Path, *, ready: bool, policy: str = "Fail") -> str:
    """A pod created before its cache was Ready (today: "recreate the pod"), the controller Ready, and the
    webhook's Service with or without a ready endpoint."""
    kc = b.consumer_cache("qwen", ready_at=LATER)
    miss = b.consumer("miss", node="gpu-1", created=CREATED)
    items = cluster(
        [miss, b.webhook_endpoints(ready)],
        kc=kc,
        entry=b.cache_entry(kc, last_update=LATER),
        webhook=b.webhook_configuration(failure_policy=policy),
        extra=(b.controller_deployment(),),
        drop=("webhook-endpoints",),
    )
    return write_list(tmp_path / "snap.json", items)


def test_why_not_cached_says_rejected_when_the_webhook_has_no_ready_endpoint(tmp_path, capsys):
    snap = webhook_cluster(tmp_path, ready=False)
    code, out, _ = cli(capsys, "why-not-cached", "miss", "-n", "team-a", "-f", snap, "-o", "json")
    doc = json.loads(out)
    assert code == 1
    now = doc["result"]["now"]
    assert now["outcome"] == "rejected" and now["blockedBy"] == "webhook-reachable", now
    assert 'no endpoints available for service "localmodel-webhook-server-service"' in now["denial"]  # API server's
    gate = next(g for g in doc["gates"] if g["id"] == "webhook-reachable")
    assert gate["passed"] is False and "has no ready endpoints" in gate["detail"]
    assert "delete pod" not in doc["next"]
    code, out, _ = cli(capsys, "why-not-cached", "miss", "-n", "team-a", "-f", snap)
    assert "Recreate the pod" not in out and "recreate" not in out.lower(), out
    # the doctor says the same of the same snapshot
    code, out, _ = cli(capsys, "doctor", "-f", snap, "-o", "json", "--only", "control-plane")
    findings = json.loads(out)["findings"]
    assert code == 1 and any("has no ready endpoints" in f["message"] for f in findings), findings


def test_why_not_cached_with_a_ready_endpoint_still_says_recreate(tmp_path, capsys):
    snap = webhook_cluster(tmp_path, ready=True)
    code, out, _ = cli(capsys, "why-not-cached", "miss", "-n", "team-a", "-f", snap, "-o", "json")
    doc = json.loads(out)
    assert code == 1 and doc["result"]["now"]["outcome"] == "cached"
    gate = next(g for g in doc["gates"] if g["id"] == "webhook-reachable")
    assert gate["passed"] is True
    assert doc["next"] == "kubectl -n team-a delete pod miss"


def test_an_unreachable_webhook_that_is_ignored_admits_the_pod_without_a_cache(tmp_path, capsys):
    snap = webhook_cluster(tmp_path, ready=False, policy="Ignore")
    code, out, _ = cli(capsys, "why-not-cached", "miss", "-n", "team-a", "-f", snap, "-o", "json")
    now = json.loads(out)["result"]["now"]
    assert code == 1 and now["outcome"] == "not-cached" and now["blockedBy"] == "webhook-reachable"


def test_the_fleet_counts_the_pods_an_unreachable_webhook_would_deny(tmp_path, capsys):
    snap = webhook_cluster(tmp_path, ready=False)
    code, out, _ = cli(capsys, "why-not-cached", "-A", "-f", snap, "-o", "json")
    doc = json.loads(out)
    assert code == 1 and doc["summary"]["denied"] == 1 and doc["summary"]["wouldBeCachedNow"] == 0


# ---- one label-selector parser ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> str:
    doc = yaml.safe_load(HEALTHY.read_text())
    teams = iter(["a", "b", "c"])
    for item in doc["items"]:
        if item["kind"] == "KernelCache":
            item["metadata"]["labels"] = {"team": next(teams)}
        if item["kind"] == "Pod" and "serving.kserve.io/inferenceservice" in (item["metadata"].get("labels") or {}):
            item["metadata"]["labels"]["team"] = "a"
    path = tmp_path_factory.mktemp("labels") / "labelled.json"
    path.write_text(json.dumps(doc))
    return str(path)


def status_caches(capsys, path: str, selector: str) -> set[str]:
    code, out, err = cli(capsys, "status", "-f", path, "-o", "json", "-l", selector)
    assert code == 0, err
    doc = json.loads(out)
    return {k for g in doc["groups"] for k in g["caches"]} | {u["name"] for u in doc["unassignedCaches"]}


def test_status_reads_set_based_selectors(capsys, labelled):
    everything = status_caches(capsys, labelled, "team")
    assert len(everything) == 3
    assert len(status_caches(capsys, labelled, "team in (a,b)")) == 2
    assert len(status_caches(capsys, labelled, "team notin (a,b)")) == 1
    assert status_caches(capsys, labelled, "!team") == set()
    assert len(status_caches(capsys, labelled, "team!=a,team")) == 2


@pytest.mark.parametrize("selector", ["team in (a,b", "a=b=c", "=x", "team in ()", "-bad=x", "a b", "x=-y-", ","])
@pytest.mark.parametrize("command", [["status"], ["why-not-cached", "-A"], ["why-not-ready", "-A"]])
def test_a_malformed_selector_is_exit_2_everywhere(capsys, labelled, selector, command):
    code, out, err = cli(capsys, *command, "-f", labelled, "-l", selector)
    assert code == 2, (command, selector, out, err)
    assert err.startswith("error: ") and out == ""


def test_why_not_cached_and_status_read_a_selector_alike(capsys, labelled):
    code, out, _ = cli(capsys, "why-not-cached", "-A", "-f", labelled, "-o", "json", "-l", "team in (a)")
    assert json.loads(out)["summary"]["pods"] > 0


# ---- --problems in every format ---------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_status_problems_in_machine_formats(capsys, fmt):
    code, out, _ = cli(capsys, "status", "-f", str(BROKEN), "-o", fmt)
    everything = yaml.safe_load(out)
    code, out, _ = cli(capsys, "status", "-f", str(BROKEN), "-o", fmt, "--problems")
    problems = yaml.safe_load(out)
    assert code == 0
    code, table, _ = cli(capsys, "status", "-f", str(BROKEN), "--problems", "--no-headers")
    shown_groups = {line.split()[0] for line in table.splitlines() if line.strip()}
    kept = {g["name"] for g in problems["groups"]}
    healthy = {g["name"] for g in everything["groups"]} - shown_groups
    assert healthy and not (kept & healthy - _holding_problem_caches(problems)), (kept, healthy)
    for g in problems["groups"]:
        for key in g["caches"]:
            assert any(line.startswith(key) for line in table.splitlines()), key
    assert len(json.dumps(problems)) < len(json.dumps(everything))


def _holding_problem_caches(doc: dict[str, Any]) -> set[str]:
    return {g["name"] for g in doc["groups"] if g["caches"]}


# ---- the anonymizer ---------------------------------------------------------------------------------------


def test_a_namespace_named_like_an_api_group_or_a_field_is_mapped_only_as_a_name(tmp_path, capsys):
    doc = yaml.safe_load(HEALTHY.read_text())
    for name in ("apps", "status", "v1"):
        doc["items"].append(b.namespace(name))
    items, meta = anonymize(copy.deepcopy(doc["items"]), copy.deepcopy(doc["meta"]))

    def shape(value: Any, key: str = "") -> Any:
        """Every key, apiVersion and kind, with the names left out."""
        if isinstance(value, dict):
            return {
                (k if key not in ("cacheStatus", "labels", "annotations") else "*"): shape(v, k)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [shape(v) for v in value]
        return value if key in ("apiVersion", "kind") else None

    assert shape(items) == shape(doc["items"])
    path = tmp_path / "anon.json"
    path.write_text(json.dumps({**doc, "meta": meta, "items": items}))
    code, out, _ = cli(capsys, "doctor", "-f", str(path), "-o", "json")
    report = json.loads(out)
    assert code == 0, report["findings"]
    assert {c["id"]: c["status"] for c in report["checks"]}["agent"] == "pass"


# ---- the fleet view's scope -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["-A", "--isvc", "nope"], 'no InferenceService "nope"'),
        (["-A", "-n", "team-llm", "--isvc", "nope"], 'no InferenceService "nope"'),
        (["-n", "team-llm", "--isvc", "nope"], 'no InferenceService "nope" in namespace "team-llm"'),
        (["-n", "nope"], 'namespace "nope" not found'),
        (["-n", "nope", "--isvc", "x"], 'namespace "nope" not found'),
    ],
)
@pytest.mark.parametrize("fmt", ["tree", "json"])
def test_the_fleet_says_when_what_was_asked_for_is_not_there(capsys, args, said, fmt):
    code, out, err = cli(capsys, "why-not-cached", *args, "-f", str(HEALTHY), "-o", fmt)
    assert code == 1, (out, err)
    assert said in out + err, (out, err)


def test_the_fleet_on_an_existing_inference_service_is_unchanged(capsys):
    code, out, _ = cli(capsys, "why-not-cached", "-A", "-f", str(HEALTHY), "-o", "json")
    isvc = json.loads(out)["inferenceServices"][0]
    code, out, err = cli(
        capsys,
        "why-not-cached",
        "-n",
        isvc["namespace"],
        "--isvc",
        isvc["inferenceService"],
        "-f",
        str(HEALTHY),
        "-o",
        "json",
    )
    assert code == 0 and json.loads(out)["summary"]["pods"] > 0, err
