"""why-not-ready end to end through the CLI over files: the bundled broken example's 70b cache (four nodes,
four causes, one screen at 80 columns), -A, the JSON contract, --node, exit codes and bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_kcache.explain.why_not_ready import CACHE_GATES, NODE_GATES
from tests import builders as b
from tests.cli.in_process import cli
from tests.unit.explain.test_why_not_ready import KC, NS, cluster

ROOT = Path(__file__).resolve().parents[2]
BROKEN = str(ROOT / "examples" / "broken-cluster.yaml")
HEALTHY = str(ROOT / "examples" / "healthy-cluster.yaml")
BIG = "llama-3-1-70b-instruct-kcc-84b9f6cd57-008ead7571de3f5b9fb55dd7"


def write(path: Path, items: list[dict[str, Any]]) -> str:
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return str(path)


def test_the_broken_example_answers_first_four_nodes_four_causes(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = cli(capsys, "why-not-ready", BIG, "-f", BROKEN)
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "x Ready on 0 of 4 Ready members of h100; KServe: Error" or lines[0].endswith(
        "Ready on 0 of 4 Ready members of h100; KServe: Error"
    )
    assert "4 nodes, 4 causes:" in out
    for words in (
        "the registry answers 401 Unauthorized for harbor.ml.example.com/team-llm/kernel-cache-llama-3-1-70b-instruct",
        "the agent pod is Running but not Ready",
        "untolerated taint {dedicated: training}",
        "the preparation Job failed (Job has",
    ):
        assert words in " ".join(x.strip() for x in lines), words
    assert len(lines) <= 45  # one screen
    for line in lines:  # commands too: broken between words with a shell continuation, never cut by the terminal
        assert len(line) <= 80, line
    assert "    kubectl -n kserve-kernelcache-jobs delete \\" in lines


def test_json_is_the_documented_contract(capsys):
    code, out, _ = cli(capsys, "why-not-ready", BIG, "-n", "team-llm", "-f", BROKEN, "-o", "json")
    assert code == 1
    doc = json.loads(out)
    assert doc["kind"] == "WhyNotReady" and doc["version"] == 1
    assert doc["kernelCache"] == {"namespace": "team-llm", "name": BIG, "group": "h100"}
    result = doc["result"]
    assert result["ready"] is False
    assert [g["id"] for g in result["cache"]] == list(CACHE_GATES)
    blocked = {n["name"]: n["blockedBy"] for n in result["nodes"]}
    assert sorted(blocked.values()) == ["agent-pod", "job", "pod", "pull"]
    for n in result["nodes"]:
        assert set(n) >= {"name", "member", "ready", "cordoned", "gates", "blockedBy", "entry", "job", "pod"}
        assert [g["id"] for g in n["gates"]] == list(NODE_GATES[: len(n["gates"])])
    assert sum(len(c["nodes"]) for c in result["causes"]) == 4
    agg = result["aggregate"]
    assert agg["computed"]["state"] == "Error" and agg["computed"]["reason"] == "PreparationFailed"
    assert agg["computed"]["counts"]["nodeCount"] == 4 and agg["lagging"] is False
    assert doc["source"]["files"]


def test_yaml_and_wide(capsys):
    code, out, _ = cli(capsys, "why-not-ready", BIG, "-f", BROKEN, "-o", "yaml")
    assert code == 1 and yaml.safe_load(out)["kind"] == "WhyNotReady"
    code, out, _ = cli(capsys, "why-not-ready", BIG, "-f", BROKEN, "-o", "wide")
    assert code == 1
    for gate in ("member", "kernelcachenode", "agent-pod", "agent-pass"):
        assert f" {gate}: " in out


def test_all_lists_every_cache_not_ready_with_its_top_cause(capsys):
    code, out, _ = cli(capsys, "why-not-ready", "-A", "-f", BROKEN)
    assert code == 1
    assert out.splitlines()[0] == "1 of 3 KernelCaches Ready on every Ready member; 2 not"
    assert BIG in out and "qwen2-5-vl-7b-instruct" in out and "mistral" not in out
    code, out, _ = cli(capsys, "why-not-ready", "-A", "-f", HEALTHY)
    assert code == 0
    code, out, _ = cli(capsys, "why-not-ready", "-A", "-f", BROKEN, "-o", "json")
    doc = json.loads(out)
    assert doc["kind"] == "WhyNotReadyList" and len(doc["items"]) == 3
    code, out, _ = cli(capsys, "why-not-ready", "-A", "-f", BROKEN, "--group", "l40s", "-o", "json")
    assert [i["kernelCache"]["group"] for i in json.loads(out)["items"]] == ["l40s"]


def test_a_ready_cache_exits_0(capsys, tmp_path):
    path = write(tmp_path / "ok.json", cluster())
    code, out, _ = cli(capsys, "why-not-ready", KC, "-n", NS, "-f", path)
    assert code == 0 and "Ready on 4 of 4 Ready members of gpu; KServe: Ready" in out


def test_a_node_outside_the_group(capsys, tmp_path):
    path = write(tmp_path / "n.json", [*cluster(), b.node("n9", {"pool": "cpu"})])
    code, out, _ = cli(capsys, "why-not-ready", KC, "-n", NS, "-f", path, "--node", "n9", "-o", "json")
    n9 = next(n for n in json.loads(out)["result"]["nodes"] if n["name"] == "n9")
    assert code == 0 and n9["member"] is False and n9["blockedBy"] == "member"


def test_bad_input(capsys, tmp_path):
    path = write(tmp_path / "ok.json", cluster())
    code, _, err = cli(capsys, "why-not-ready", "nope", "-n", NS, "-f", path)
    assert code == 2 and 'KernelCache "nope" not found' in err
    code, _, err = cli(capsys, "why-not-ready", KC, "-A", "-f", path)
    assert code == 2
    code, _, err = cli(capsys, "why-not-ready", "--node", "x", "-f", path)
    assert code == 2
    only_caches = write(tmp_path / "kc.json", [b.kernel_cache(KC, NS, "gpu")])
    code, _, err = cli(capsys, "why-not-ready", KC, "-f", only_caches)
    assert code == 2 and "not in the input" in err


def test_completion_offers_the_kernelcaches_of_the_input():
    from kubectl_kcache.cli.complete import complete_words

    assert complete_words(["why-not-ready", "-f", BROKEN, "-n", "team-llm", "ll"]) == [BIG]


@pytest.mark.parametrize("compact", [True, False])
@pytest.mark.parametrize("namespace", ["team-llm", None])
def test_one_cache_from_a_file_decodes_only_what_it_needs_and_answers_the_same(tmp_path, namespace, compact):
    """From a dump, one KernelCache's chain decodes only its group's KernelCacheNodes (and those holding its
    entry) and the agent pods on its members: the same answer as with every object decoded."""
    from kubectl_kcache.cli.why_not_ready import _one_cache, reads
    from kubectl_kcache.explain.why_not_ready import explain
    from kubectl_kcache.snapshot.files.from_files import load_files
    from kubectl_kcache.snapshot.files.layout import DUMP_HEAD, DUMP_META
    from kubectl_kcache.snapshot.files.load import Selection

    doc = yaml.safe_load(Path(BROKEN).read_text())
    dump = tmp_path / "dump.json"  # laid out as `dump -o json` writes it: streamed, items held back by key
    seps = (",", ":") if compact else (", ", ": ")  # as the API server writes it, and spaced
    lines = b",\n".join(json.dumps(item, separators=seps).encode() for item in doc["items"])
    dump.write_bytes(DUMP_HEAD + b"\n" + lines + b"\n" + DUMP_META + json.dumps(doc["meta"]).encode() + b"}\n")
    for source in (BROKEN, str(dump)):
        whole = load_files([source], Selection(reads()))
        some = load_files([source], _one_cache(BIG, namespace, ("ip-10-0-2-21.ec2.internal",)))
        assert len(some.kcns) < len(whole.kcns) and len(some.pods) < len(whole.pods)
        nodes = ("ip-10-0-2-21.ec2.internal",)
        assert explain(some, "team-llm", BIG, nodes).to_dict() == explain(whole, "team-llm", BIG, nodes).to_dict()


def test_an_unknown_node_is_a_usage_error(capsys, tmp_path):
    path = write(tmp_path / "ok.json", cluster())
    code, _, err = cli(capsys, "why-not-ready", KC, "-n", NS, "-f", path, "--node", "n9")
    assert code == 2 and "--node: no node named 'n9'" in err
