"""`kubectl kcache status` on the bundled examples, end to end through the CLI (in-process, `--from-file`)."""

from __future__ import annotations

import json

import pytest

from kubectl_kcache.cli import run

from .test_examples import BROKEN, HEALTHY

LLAMA_70B = "team-llm/llama-3-1-70b-instruct-kcc-84b9f6cd57-008ead7571de3f5b9fb55dd7"
MISTRAL = "team-llm/mistral-7b-instruct-v0-3"
QWEN_VL = "team-vision/qwen2-5-vl-7b-instruct-kcc-6f9d8c7b45-8aeb68ee28ff53c88831af2f"


def counts(ready: int = 0, pending: int = 0, pulling: int = 0, error: int = 0) -> dict[str, int]:
    return {"Ready": ready, "Pending": pending, "Pulling": pulling, "Error": error}


# The broken example, counted by hand from examples/make_examples.py: h100 has four members, one of them
# (ip-10-0-1-11) also in llm-serving, one with a crash-looping agent; l40s has a NotReady node, a cordoned
# one and a new node (ip-10-0-2-24) without KernelCacheNode or agent; h200 matches no node.
BROKEN_GROUPS = [
    {
        "name": "h100",
        "selector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
        "members": 4,
        "notReady": 0,
        "cordoned": 0,
        "kernelCacheNodes": 4,
        "agentReady": 3,
        "podsUsing": 0,
        "caches": {LLAMA_70B: counts(pulling=1, error=2), MISTRAL: counts(ready=2)},
    },
    {
        "name": "h200",
        "selector": {"kserve.example.com/kernel-cache": "enabled", "nvidia.com/gpu.product": "NVIDIA-H200"},
        "members": 0,
        "notReady": 0,
        "cordoned": 0,
        "kernelCacheNodes": 0,
        "agentReady": 0,
        "podsUsing": 0,
        "caches": {},
    },
    {
        "name": "l40s",
        "selector": {"nvidia.com/gpu.product": "NVIDIA-L40S"},
        "members": 4,
        "notReady": 1,
        "cordoned": 1,
        "kernelCacheNodes": 3,
        "agentReady": 2,
        "podsUsing": 0,
        "caches": {QWEN_VL: counts(ready=2, pulling=1)},
    },
    {
        "name": "llm-serving",
        "selector": {"workload.example.com/pool": "llm-serving"},
        "members": 1,
        "notReady": 0,
        "cordoned": 0,
        "kernelCacheNodes": 1,
        "agentReady": 1,
        "podsUsing": 0,
        "caches": {LLAMA_70B: counts(error=1), MISTRAL: counts(ready=1)},
    },
]


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = run(list(argv))
    out, err = capsys.readouterr()
    assert "internal error" not in err, err
    return code, out, err


def test_status_json_on_broken_example(capsys):
    code, out, _ = cli(capsys, "status", "--from-file", BROKEN, "-o", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["groups"] == BROKEN_GROUPS
    assert doc["unassignedCaches"] == []
    source = doc["source"]
    assert source["from"] == "file" and source["files"] == [BROKEN]
    assert source["cluster"] == "arn:aws:eks:us-west-2:210987654321:cluster/gpu-staging"
    assert source["takenAt"] == "2026-06-18T09:42:00Z" and source["scope"] == {"namespace": None}
    assert source["tool"].startswith("kubectl-kcache ")


def test_status_yaml_equals_json(capsys):
    import yaml

    _, as_json, _ = cli(capsys, "status", "--from-file", BROKEN, "-o", "json")
    _, as_yaml, _ = cli(capsys, "status", "--from-file", BROKEN, "-o", "yaml")
    a, b = json.loads(as_json), yaml.safe_load(as_yaml)
    a["source"].pop("generatedAt"), b["source"].pop("generatedAt")
    assert a == b


def test_status_scope_with_namespace(capsys):
    code, out, _ = cli(capsys, "status", "--from-file", BROKEN, "-o", "json", "-n", "team-vision")
    assert code == 0
    doc = json.loads(out)
    assert doc["source"]["scope"] == {"namespace": "team-vision"}
    assert {g["name"]: list(g["caches"]) for g in doc["groups"]} == {
        "h100": [],
        "h200": [],
        "l40s": [QWEN_VL],
        "llm-serving": [],
    }


def test_status_table_on_broken_example(capsys):
    code, out, _ = cli(capsys, "status", "--from-file", BROKEN)
    assert code == 0
    assert "\x1b[" not in out
    lines = out.splitlines()
    l40s = next(line for line in lines if line.startswith("l40s "))
    assert l40s.split()[1:] == ["4", "3", "1", "1", "3", "1", "2/4", "1", "0"]
    qwen = next(line for line in lines if line.startswith(QWEN_VL))
    assert qwen.split()[1:] == ["l40s", "4", "2", "0", "1", "0", "1", "0"]


def test_status_shows_the_pods_using_each_cache_and_group(capsys):
    """The healthy example records one pod on each of two caches (KernelCache.status.usage) and one on a
    KernelCacheNode of each group (totalPodsUsing)."""
    code, out, _ = cli(capsys, "status", "--from-file", HEALTHY)
    assert code == 0
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("GROUP")).split()
    assert header[-1] == "PODS"
    assert {line.split()[0]: line.split()[-1] for line in lines if line.startswith(("h100 ", "l40s "))} == {
        "h100": "1",
        "l40s": "1",
    }
    doc = json.loads(cli(capsys, "status", "--from-file", HEALTHY, "-o", "json")[1])
    assert sorted(doc["podsUsing"].values()) == [0, 1, 1] and doc["totals"]["podsUsing"] == 2


def test_status_on_healthy_example_is_all_ready(capsys):
    code, out, _ = cli(capsys, "status", "--from-file", HEALTHY, "-o", "json")
    assert code == 0
    doc = json.loads(out)
    for g in doc["groups"]:
        assert g["notReady"] == g["cordoned"] == 0
        assert g["kernelCacheNodes"] == g["agentReady"] == g["members"] > 0
        assert g["caches"] and all(c == counts(ready=g["members"]) for c in g["caches"].values())


def test_status_watch_needs_a_live_cluster(capsys):
    code, _, err = cli(capsys, "status", "--from-file", BROKEN, "--watch")
    assert code == 2
    assert "--watch needs a live cluster" in err


def test_status_from_files_without_a_needed_kind_is_bad_input(capsys, tmp_path):
    only_groups = tmp_path / "groups.yaml"
    only_groups.write_text(
        "apiVersion: serving.kserve.io/v1alpha1\nkind: KernelCacheNodeGroup\n"
        "metadata: {name: gpu}\nspec: {nodeSelector: {pool: gpu}}\n"
    )
    code, out, err = cli(capsys, "status", "--from-file", str(only_groups))
    assert code == 2 and out == ""  # the input lacks them: exit 2 (a forbidden read live is exit 3)
    assert err == (
        "error: status cannot answer: nodes are not in the input files; kernelcachenodes are not in the "
        "input files; kernelcaches are not in the input files; pods in namespace kserve are not in the "
        "input files (add them to the files, or read the cluster live)\n"
    )
