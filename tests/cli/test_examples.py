"""The example snapshots in examples/, end to end through the CLI (in-process, `--from-file`).

healthy-cluster.yaml must give a clean doctor report and an empty reconcile plan; broken-cluster.yaml
must trip the checks it was written for. Both must be what `kubectl kcache dump` would write (every
read recorded, counts right) and what examples/make_examples.py generates today.
"""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path

import pytest

from kubectl_kcache.cli import run
from kubectl_kcache.snapshot import kinds
from kubectl_kcache.snapshot.files.from_files import load_files

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
HEALTHY = str(EXAMPLES / "healthy-cluster.yaml")
BROKEN = str(EXAMPLES / "broken-cluster.yaml")
AMBIGUOUS_POD = "llama-3-1-8b-instruct-predictor-7d9c6b5f48-nhngp"
AMBIGUOUS_CAPTURE = "llama-3-1-8b-instruct-kcc-7d9c6b5f48"
AMBIGUOUS_NODE = "ip-10-0-1-11.ec2.internal"
NEW_NODE = "ip-10-0-2-24.ec2.internal"
GONE_NODE = "ip-10-0-1-19.ec2.internal"
# The resources snapshot/live.py lists, by the name its reads record.
LIVE_READS = {
    "nodes",
    "kernelcachenodegroups",
    "kernelcachenodes",
    "kernelcaches",
    "kernelcachecaptures",
    "configmaps",
    "daemonsets",
    "pods",
    "deployments",
    "mutatingwebhookconfigurations",
    "validatingwebhookconfigurations",
    "endpointslices",
    "replicasets",
    "customresourcedefinitions",
    "namespaces",
    "jobs",
    "serviceaccounts",
    "rolebindings",
    "events",
    "roles",
    "secrets",  # the captures' identities (Secrets by metadata only)
}


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = run(list(argv))
    out, err = capsys.readouterr()
    assert "internal error" not in err, err
    return code, out


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    code, out = cli(capsys, *argv, "-o", "json")
    return code, json.loads(out)


# ---- the files ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [HEALTHY, BROKEN])
def test_example_is_a_complete_dump(path: str) -> None:
    snap = load_files([path])
    assert not snap.reads_assumed
    assert snap.meta.server_version == "v1.36.3"
    assert snap.meta.taken_at.endswith("Z") and snap.meta.cluster.startswith("arn:aws:eks:")
    assert {r.resource for r in snap.reads} == LIVE_READS
    assert all(r.status == "ok" for r in snap.reads)
    # Every object in the file came from one of the recorded lists, and each list's count is right.
    recorded = Counter()
    for r in snap.reads:
        recorded[r.resource] += r.count
    fields = {k.plural: k.field for k in kinds.KINDS}
    for resource in LIVE_READS:
        assert recorded[resource] == len(getattr(snap, fields[resource])), resource
    assert sum(recorded.values()) == snap.object_count()


def _generator():
    spec = importlib.util.spec_from_file_location("make_examples", EXAMPLES / "make_examples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["healthy-cluster.yaml", "broken-cluster.yaml"])
def test_example_is_what_the_generator_writes(name: str) -> None:
    gen = _generator()
    assert gen.render(name) == (EXAMPLES / name).read_text(encoding="utf-8"), (
        f"examples/{name} is out of date: run `python examples/make_examples.py`"
    )
    assert gen.render(name) == gen.render(name)  # deterministic


# ---- doctor -------------------------------------------------------------------------------------------


def test_doctor_on_healthy_example_finds_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    code, report = cli_json(capsys, "doctor", "--from-file", HEALTHY)
    problems = [f for f in report["findings"] if f["severity"] in ("error", "warning")]
    assert problems == []
    assert report["summary"]["errors"] == report["summary"]["warnings"] == report["summary"]["skipped"] == 0
    assert {c["id"]: c["status"] for c in report["checks"] if c["status"] not in ("pass", "not-applicable")} == {}
    assert code == 0


def test_doctor_table_on_healthy_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = cli(capsys, "doctor", "--from-file", HEALTHY)
    assert code == 0
    assert out.startswith("no problems found in ")


EXPECTED_BROKEN = {
    # check id -> (severity, object) pairs that must be among its findings
    "group-selector": {("warning", "KernelCacheNodeGroup/h200")},
    "group-overlap": {("error", f"Node/{AMBIGUOUS_NODE}")},
    "group-taints": {("error", "Node/ip-10-0-1-13.ec2.internal"), ("error", f"Node/{NEW_NODE}")},
    "nodes": {("warning", "Node/ip-10-0-2-22.ec2.internal"), ("warning", "Node/ip-10-0-2-23.ec2.internal")},
    "kcn-missing": {("error", f"Node/{NEW_NODE}")},
    "kcn-orphaned": {("warning", f"KernelCacheNode/{GONE_NODE}")},
    "agent": {("error", "DaemonSet/kserve/kserve-kernelcachenode-agent"), ("error", f"Node/{NEW_NODE}")},
    "registry-pull": {
        ("error", "Job/kserve-kernelcache-jobs/kc-llama-3-1-70b-instruct-k-ip-10-0-1-14-ec2-i-86e99cc7c8878f0f")
    },
    "cache-status": {
        ("error", "KernelCacheNode/ip-10-0-1-11.ec2.internal"),
        ("warning", "KernelCacheNode/ip-10-0-1-12.ec2.internal"),
    },
    "capture": {("error", f"KernelCacheCapture/team-llm/{AMBIGUOUS_CAPTURE}")},
}


def _ref(finding: dict) -> str:
    obj = finding["object"]
    return "/".join(x for x in (obj["kind"], obj["namespace"], obj["name"]) if x)


def test_doctor_on_broken_example_trips_every_check_it_was_written_for(capsys: pytest.CaptureFixture[str]) -> None:
    code, report = cli_json(capsys, "doctor", "--from-file", BROKEN)
    assert code == 1
    by_check: dict[str, set[tuple[str, str]]] = {}
    for f in report["findings"]:
        by_check.setdefault(f["check"], set()).add((f["severity"], _ref(f)))
    for check, expected in EXPECTED_BROKEN.items():
        missing = expected - by_check.get(check, set())
        assert not missing, f"{check}: missing {sorted(missing)}; got {sorted(by_check.get(check, set()))}"
    status = {c["id"]: c["status"] for c in report["checks"]}
    assert {c: status[c] for c in EXPECTED_BROKEN} == dict.fromkeys(EXPECTED_BROKEN, "fail")
    assert report["summary"]["skipped"] == 0


def test_broken_example_details(capsys: pytest.CaptureFixture[str]) -> None:
    _, report = cli_json(capsys, "doctor", "--from-file", BROKEN)
    text = {(f["check"], _ref(f)): f for f in report["findings"]}
    near = text[("group-selector", "KernelCacheNodeGroup/h200")]
    assert "ip-10-0-3-31.ec2.internal lacks kserve.example.com/kernel-cache=enabled" in near["message"]
    pull = next(f for f in report["findings"] if f["check"] == "registry-pull" and "ImagePullBackOff" in f["message"])
    assert "401 Unauthorized" in pull["message"]
    crash = next(f for f in report["findings"] if f["check"] == "agent" and "CrashLoopBackOff" in f["message"])
    assert crash["hint"].endswith(" -p")  # kubectl logs -p: the previous instance
    overlap = text[("group-overlap", f"Node/{AMBIGUOUS_NODE}")]
    assert overlap["hint"] == f"kubectl kcache why-group --capture {AMBIGUOUS_CAPTURE} -n team-llm"
    stale = text[("group-taints", f"Node/{NEW_NODE}")]
    assert (
        "has not updated the agent's DaemonSet" in stale["message"]
        and stale["hint"] == "kubectl kcache reconcile --once"
    )


def test_doctor_fail_on_never_exits_zero_on_broken_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = cli(capsys, "doctor", "--from-file", BROKEN, "--fail-on", "never")
    assert code == 0


# ---- reconcile ----------------------------------------------------------------------------------------


def test_reconcile_plan_on_broken_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, plan = cli_json(capsys, "reconcile", "--dry-run", "--from-file", BROKEN)
    assert code == 1  # writes planned, as `kubectl diff` says there are differences
    actions = {(a["verb"], a["kind"], a["name"]) for a in plan["actions"]}
    by_key = {(a["verb"], a["kind"], a["name"]): a for a in plan["actions"]}
    patch = by_key[("patch", "DaemonSet", "kserve-kernelcachenode-agent")]
    assert patch["body"]["spec"]["template"]["spec"]["tolerations"][0]["key"] == "dedicated"
    assert [line[:2] for line in patch["diff"]] == ["- ", "+ "] and "tolerations" in patch["diff"][1]
    create = by_key[("create", "KernelCacheNode", NEW_NODE)]
    assert create["body"] == {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "KernelCacheNode",
        "metadata": {"name": NEW_NODE},
    }
    assert "body" not in by_key[("delete", "KernelCacheNode", GONE_NODE)]
    assert ("create", "KernelCacheNode", NEW_NODE) in actions
    assert ("delete", "KernelCacheNode", GONE_NODE) in actions
    assert ("patch", "DaemonSet", "kserve-kernelcachenode-agent") in actions
    events = [a for a in plan["actions"] if a["verb"] == "event"]
    assert events == [
        {
            "verb": "event",
            "kind": "Event",
            "namespace": "team-llm",
            "name": AMBIGUOUS_CAPTURE,
            "reason": events[0]["reason"],
            "eventReason": "AmbiguousNodeGroup",
            "message": f"producer node {AMBIGUOUS_NODE} matches multiple node groups: h100, llm-serving; "
            "set serving.kserve.io/kernelcache-nodegroup",
        }
    ]


def test_reconcile_plan_on_healthy_example_is_empty(capsys: pytest.CaptureFixture[str]) -> None:
    code, plan = cli_json(capsys, "reconcile", "--dry-run", "--from-file", HEALTHY)
    assert code == 0
    source = plan.pop("source")
    assert plan == {"kind": "ReconcilePlan", "version": 1, "actions": []}
    assert source["from"] == "file" and source["files"] == [HEALTHY] and source["tool"].startswith("kubectl-kcache ")


# ---- why-group ----------------------------------------------------------------------------------------


def test_why_group_on_ambiguous_producer(capsys: pytest.CaptureFixture[str]) -> None:
    code, why = cli_json(capsys, "why-group", AMBIGUOUS_POD, "-n", "team-llm", "--from-file", BROKEN)
    assert code == 1  # no group: a negative verdict, as why-not-cached's
    assert why["basis"] == "capture"
    assert why["node"] == AMBIGUOUS_NODE
    assert why["capture"]["name"] == AMBIGUOUS_CAPTURE
    assert why["result"]["group"] is None
    assert why["result"]["reason"] == "AmbiguousNodeGroup"
    assert why["result"]["message"].startswith(f"producer node {AMBIGUOUS_NODE} matches multiple node groups")
    assert {g["name"] for g in why["groups"] if g["matches"]} == {"h100", "llm-serving"}
    assert why["kernelCache"] is None


def test_why_group_finds_the_namespace_offline(capsys: pytest.CaptureFixture[str]) -> None:
    code, why = cli_json(capsys, "why-group", AMBIGUOUS_POD, "--from-file", BROKEN)
    assert code == 1 and why["pod"]["namespace"] == "team-llm"


def test_why_group_what_if_the_pod_requested_a_group(capsys: pytest.CaptureFixture[str]) -> None:
    code, why = cli_json(capsys, "why-group", AMBIGUOUS_POD, "-n", "team-llm", "--group", "h100", "--from-file", BROKEN)
    assert code == 0
    assert why["basis"] == "what-if"
    assert (why["result"]["group"], why["result"]["source"], why["result"]["reason"]) == ("h100", "annotation", None)


def test_why_group_on_healthy_annotated_producer(capsys: pytest.CaptureFixture[str]) -> None:
    snap = load_files([HEALTHY])
    capture = next(c for c in snap.captures if c.active_session and c.active_session.requested_node_group)
    assert capture.active_session is not None
    pod = capture.active_session.pod_name
    code, why = cli_json(capsys, "why-group", pod, "-n", capture.namespace, "--from-file", HEALTHY)
    assert code == 0
    assert (why["result"]["group"], why["result"]["source"]) == ("l40s", "annotation")
    assert why["kernelCache"]["selectionSource"] == "annotation"
    assert why["drift"] == []


# ---- why-not-cached -----------------------------------------------------------------------------------

MISTRAL_MISS = "mistral-7b-instruct-v0-3-predictor-5c8d7b6f49-8zhfd"
LLAMA_HIT = "llama-3-1-8b-instruct-predictor-7c5d9b8f46-9sscc"


def test_why_not_cached_on_the_broken_examples_miss(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = cli_json(capsys, "why-not-cached", MISTRAL_MISS, "--from-file", BROKEN)
    assert code == 1
    assert doc["result"]["cached"] is False
    assert doc["result"]["now"]["kernelCache"] == "team-llm/mistral-7b-instruct-v0-3"
    assert any(n.startswith("The cache became Ready after the pod was created") for n in doc["notes"])
    assert doc["next"] == f"kubectl -n team-llm delete pod {MISTRAL_MISS}"
    stale = next(c for c in doc["candidates"] if c["kernelCache"] == "team-llm/mistral-7b-instruct-v0-3")
    assert [n["name"] for n in stale["nodes"]] == [
        "ip-10-0-1-11.ec2.internal",
        "ip-10-0-1-12.ec2.internal",
        "ip-10-0-1-19.ec2.internal",
    ]


def test_why_cached_on_the_healthy_examples_hit(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = cli_json(capsys, "why-cached", LLAMA_HIT, "--from-file", HEALTHY)
    assert code == 0
    assert doc["result"]["cached"] is True
    assert doc["result"]["kernelCache"] == doc["result"]["now"]["kernelCache"]
    assert doc["result"]["now"]["match"] == "Workload"
    assert doc["result"]["placement"]["preparedOnNode"] is True
    # the revision's capture is Complete: the sidecar step is skipped, its checks are not run
    sidecar = next(g for g in doc["gates"] if g["id"] == "sidecar")
    assert sidecar["passed"] is True and sidecar["detail"].startswith("skipped: capture ")
    steps = ("capture-paths", "readiness-probe", "capture-target", "capture-mounts")
    assert all(g["passed"] for g in doc["gates"] if g["id"] not in steps)
    assert all(g["passed"] is None for g in doc["gates"] if g["id"] in steps)


def test_reconcile_plan_table_shows_the_daemonset_diff(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = cli(capsys, "reconcile", "--dry-run", "--from-file", BROKEN)
    assert code == 1
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("PATCH"))
    assert lines[at + 1].startswith("    - tolerations: ") and lines[at + 2].startswith("    + tolerations: ")


@pytest.mark.parametrize(
    "argv",
    [
        ["doctor", "-o", "json"],
        ["doctor", "-o", "yaml"],
        ["reconcile", "--dry-run", "-o", "json"],
        ["why-group", AMBIGUOUS_POD, "-n", "team-llm", "-o", "json"],
    ],
)
def test_every_machine_format_says_where_it_came_from(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    """Issue 14: the input files (or server), when it was read and made, the tool's version and the scope."""
    import yaml

    from kubectl_kcache import __version__

    capsys.readouterr()
    run([*argv, "--from-file", BROKEN])
    doc = yaml.safe_load(capsys.readouterr().out)
    assert list(doc)[:3] == ["kind", "version", "source"]
    source = doc["source"]
    assert source["from"] == "file" and source["files"] == [BROKEN]
    assert source["takenAt"] == "2026-06-18T09:42:00Z" and source["generatedAt"].endswith("Z")
    assert source["tool"] == f"kubectl-kcache {__version__}"
    assert source["scope"] == {"namespace": "team-llm" if "-n" in argv else None}


def test_sarif_junit_and_markdown_carry_the_source_too(capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    run(["doctor", "-o", "sarif", "--from-file", BROKEN])
    sarif = json.loads(capsys.readouterr().out)
    assert sarif["runs"][0]["properties"]["provenance"]["files"] == [BROKEN]
    run(["doctor", "-o", "junit", "--from-file", BROKEN])
    junit = capsys.readouterr().out
    assert f'name="files" value="{BROKEN}"' in junit and 'name="tool" value="kubectl-kcache ' in junit
    run(["doctor", "-o", "markdown", "--from-file", BROKEN])
    assert f"Source: file {BROKEN}, read 2026-06-18T09:42:00Z, kubectl-kcache " in capsys.readouterr().out


def test_namespace_scopes_files_as_it_scopes_live_reads(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 14: -n means the same offline: captures and KernelCaches of other namespaces are left out."""
    code, everything = cli_json(capsys, "doctor", "--from-file", BROKEN)
    code, scoped = cli_json(capsys, "doctor", "--from-file", BROKEN, "-n", "team-chat")
    namespaced = {"KernelCache", "KernelCacheCapture"}
    assert {f["object"]["namespace"] for f in everything["findings"] if f["object"]["kind"] in namespaced} > {
        "team-chat"
    }
    assert {f["object"]["namespace"] for f in scoped["findings"] if f["object"]["kind"] in namespaced} == {"team-chat"}
