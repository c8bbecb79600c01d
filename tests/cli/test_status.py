"""`kubectl kcache status` on the bundled examples, end to end through the CLI (in-process, `--from-file`)."""

from __future__ import annotations

import json

from tests.cli.in_process import cli

from .test_examples import BROKEN, HEALTHY

LLAMA_70B = "team-llm/llama-3-1-70b-instruct-kcc-84b9f6cd57-008ead7571de3f5b9fb55dd7"
MISTRAL = "team-llm/mistral-7b-instruct-v0-3"
QWEN_VL = "team-vision/qwen2-5-vl-7b-instruct-kcc-6f9d8c7b45-8aeb68ee28ff53c88831af2f"


def counts(
    ready: int = 0,
    pending: int = 0,
    pulling: int = 0,
    error: int = 0,
    *,
    nodes: int,
    state: str | None = None,
    reason: str | None = None,
    not_ready: dict[str, int] | None = None,
) -> dict[str, object]:
    """A cache's cell: its phases over the group's `nodes` Ready members (KServe's nodeCount), the Ready members
    without an entry, the entries on NotReady members, and KServe's state (None: not the cache's own group)."""
    return {
        "Ready": ready,
        "Pending": pending,
        "Pulling": pulling,
        "Error": error,
        "nodeCount": nodes,
        "noEntry": nodes - ready - pending - pulling - error,
        "notReady": {"Ready": 0, "Pending": 0, "Pulling": 0, "Error": 0, **(not_ready or {})},
        "state": state,
        "reason": reason,
    }


# The broken example, counted by hand from examples/make_examples.py: h100 has four members, one of them
# (ip-10-0-1-11) also in llm-serving, one with a crash-looping agent; l40s has a NotReady node, a cordoned
# one and a new node (ip-10-0-2-24) without KernelCacheNode or agent; h200 matches no node. Counts are over
# Ready members, as KServe counts them: l40s's NotReady node holds a Ready entry of the Qwen cache, which is
# counted apart (before, it was counted Ready: 2 Ready of 4 nodes; KServe's status says nodeCount 3,
# nodesReady 1, Preparing, as here).
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
        "caches": {
            LLAMA_70B: counts(pulling=1, error=2, nodes=4, state="Error", reason="PreparationFailed"),
            MISTRAL: counts(ready=2, nodes=4),
        },
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
        "caches": {
            QWEN_VL: counts(ready=1, pulling=1, nodes=3, state="Preparing", reason="Preparing", not_ready={"Ready": 1})
        },
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
        "caches": {
            LLAMA_70B: counts(error=1, nodes=1),
            MISTRAL: counts(ready=1, nodes=1, state="Ready", reason="CacheReady"),
        },
    },
]


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
    assert qwen.split()[1:] == ["l40s", "3", "1", "0", "1", "0", "1", "0"]  # NODES: the 3 Ready members
    # the NotReady member's Ready entry, apart: KServe does not count it
    apart = lines.index("Entries on NotReady members (KServe does not count them):")
    assert lines[apart + 1].split() == ["KERNELCACHE", "GROUP", "READY", "PENDING", "PULLING", "ERROR"]
    assert lines[apart + 2].split() == [QWEN_VL, "l40s", "1", "0", "0", "0"]


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
        assert g["caches"] and all(
            c == counts(ready=g["members"], nodes=g["members"], state="Ready", reason="CacheReady")
            for c in g["caches"].values()
        )


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


def kserve_ready_with_a_not_ready_error(tmp_path) -> str:
    """A group of three: two Ready members with the cache Ready (one cordoned) and a NotReady one whose entry is
    in Error. KServe counts the two Ready members only: the cache is Ready."""
    from tests import builders as b

    def entries(state: str) -> dict[str, dict]:
        return {"team/kc": b.entry("team", "kc", state, message="pull failed" if state == "Error" else "")}

    items = [
        b.config_map({"enabled": True}),
        b.group("gpu", {"pool": "gpu"}),
        b.node("gpu-1", {"pool": "gpu"}),
        b.node("gpu-2", {"pool": "gpu"}, unschedulable=True),
        b.node("gpu-3", {"pool": "gpu"}, ready=False),
        b.kcn("gpu-1", entries("Ready")),
        b.kcn("gpu-2", entries("Ready")),
        b.kcn("gpu-3", entries("Error")),
        b.kernel_cache("kc", "team", "gpu", state="Ready"),
    ]
    items += [
        b.pod(f"agent-{n}", ns="kserve", node_name=n, labels={"control-plane": "kserve-kernelcachenode-agent"})
        for n in ("gpu-1", "gpu-2", "gpu-3")
    ]
    path = tmp_path / "not-ready-error.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return str(path)


def test_a_not_ready_members_error_is_counted_apart_and_is_no_problem(capsys, tmp_path):
    path = kserve_ready_with_a_not_ready_error(tmp_path)
    code, out, _ = cli(capsys, "status", "--from-file", path, "-o", "json")
    assert code == 0
    (group,) = json.loads(out)["groups"]
    assert (group["members"], group["notReady"], group["cordoned"]) == (3, 1, 1)
    assert group["caches"] == {
        "team/kc": counts(ready=2, nodes=2, state="Ready", reason="CacheReady", not_ready={"Error": 1})
    }
    _, table, _ = cli(capsys, "status", "--from-file", path)
    lines = table.splitlines()
    kc = next(line for line in lines if line.startswith("team/kc "))
    assert kc.split()[1:] == ["gpu", "2", "2", "0", "0", "0", "0", "0"]  # 2 Ready members, both Ready, no Error
    apart = lines.index("Entries on NotReady members (KServe does not count them):")
    assert lines[apart + 2].split() == ["team/kc", "gpu", "0", "0", "0", "1"]
    _, wide, _ = cli(capsys, "status", "--from-file", path, "-o", "wide")
    assert next(line for line in wide.splitlines() if line.startswith("team/kc ")).split()[1:4] == ["gpu", "Ready", "2"]
    # --problems agrees with KServe: the group (a NotReady member) is a problem, the Ready cache is not
    code, problems, _ = cli(capsys, "status", "--from-file", path, "--problems")
    assert code == 0
    assert "no KernelCache with a problem" in problems and "team/kc" not in problems
    assert any(line.startswith("gpu ") for line in problems.splitlines())
