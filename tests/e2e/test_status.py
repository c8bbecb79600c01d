"""`kubectl kcache status` on a real control plane: a cluster built with known membership, agents (pods run by
KWOK on simulated nodes, one crash-looping), KernelCacheNodes and entries gives exactly the expected JSON,
live and from its dump; `status -w` follows label and entry changes from watches (no list after the first),
survives an API server restart and a 410 after compaction, redraws in place on a terminal and exits 130 on
Ctrl-C; a forbidden read or watch is exit 3 naming verb and resource."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import termios
import time
from typing import Any

import pytest
import yaml

from tests import builders as b

from .cluster import FAIL_LABEL, OWNED_LABEL

pytestmark = pytest.mark.e2e

AGENT_LABELS = {"control-plane": "kserve-kernelcachenode-agent"}
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
SCREEN_HEAD = "watching, Ctrl-C to stop"


def counts(ready: int = 0, pending: int = 0, pulling: int = 0, error: int = 0) -> dict[str, int]:
    return {"Ready": ready, "Pending": pending, "Pulling": pulling, "Error": error}


def cell(
    ready: int = 0,
    pending: int = 0,
    pulling: int = 0,
    error: int = 0,
    *,
    nodes: int,
    no_entry: int,
    not_ready: dict[str, int] | None = None,
    aggregate: str | None = None,
) -> dict[str, Any]:
    """A cache's cell in a group: the phases over the group's Ready members, `nodes` of them (KServe's
    nodeCount), `no_entry` of them without the entry, the entries on NotReady members apart, and KServe's
    aggregate as "State/Reason" on the cache's own group (None in another group's cell)."""
    state, reason = aggregate.split("/") if aggregate else (None, None)
    return {
        **counts(ready, pending, pulling, error),
        "nodeCount": nodes,
        "noEntry": no_entry,
        "notReady": not_ready or counts(),
        "state": state,
        "reason": reason,
    }


def agent(node: str, fail: str = "") -> dict[str, Any]:
    labels = dict(AGENT_LABELS, **({FAIL_LABEL: fail} if fail else {}))
    pod = b.pod(f"agent-{node}", "kserve", node_name=node, labels=labels)
    del pod["status"]  # KWOK runs it (or makes it fail) on its simulated node
    pod["spec"]["tolerations"] = [{"operator": "Exists"}]
    return pod


def build_fleet(cluster) -> None:
    """gpu: fleet-g1, -g2 (cordoned), -g3 (NotReady, no kubelet), -g4 (no KernelCacheNode, agent
    crash-looping); cpu: fleet-c1; fleet-x1 is in no group (names used by no other test: KWOK keeps state per
    node name). Entries in every state, an old agent's Extracting, an entry of a cache of the other group,
    and a KernelCache of a group that does not exist."""
    sim = {"ready": None, "simulated": True}
    cluster.apply(
        [
            b.config_map({"enabled": True, "defaultNodeGroup": "gpu"}),
            b.group("gpu", {"pool": "gpu"}),
            b.group("cpu", {"pool": "cpu"}),
            b.node("fleet-g1", {"pool": "gpu"}, **sim),
            b.node("fleet-g2", {"pool": "gpu"}, unschedulable=True, **sim),
            b.node("fleet-g3", {"pool": "gpu"}, ready=False),
            b.node("fleet-g4", {"pool": "gpu"}, **sim),
            b.node("fleet-c1", {"pool": "cpu"}, **sim),
            b.node("fleet-x1", {"pool": "none"}, **sim),
            *(b.kcn(n) for n in ("fleet-g1", "fleet-g2", "fleet-g3", "fleet-c1")),
            b.kcn("old"),
            b.kernel_cache("llama", "team-a", group_name="gpu"),
            b.kernel_cache("mistral", "team-a", group_name=None),
            b.kernel_cache("qwen", "team-b", group_name="cpu"),
            b.kernel_cache("lost", "team-b", group_name="nope"),
        ]
    )
    cluster.apply([agent("fleet-g1"), agent("fleet-g2"), agent("fleet-g4", fail="CrashLoopBackOff"), agent("fleet-c1")])
    entries = {
        "fleet-g1": {"team-a/llama": "Ready", "team-a/mistral": "Pulling", "team-b/qwen": "Ready"},
        "fleet-g2": {"team-a/llama": "Error", "team-a/mistral": "Extracting"},
        "fleet-g3": {"team-a/llama": "Pending"},
        "fleet-c1": {"team-b/qwen": "Ready"},
    }
    for node, states in entries.items():
        set_entries(cluster, node, states)
    # pods using the caches, as KServe records them: on the KernelCache (status.usage) and per node (counts)
    cluster.set_status(
        "kernelcache",
        "llama",
        {
            "usage": {
                "totalPodsUsing": 2,
                "pods": [
                    {
                        "podUID": f"uid-{i}",
                        "podRef": {"namespace": "team-a", "name": f"llama-{i}"},
                        "nodeName": node,
                        "observedAt": b.NOW,
                    }
                    for i, node in ((1, "fleet-g1"), (2, "fleet-g2"))
                ],
            }
        },
        "team-a",
    )
    for node, using in (("fleet-g1", 1), ("fleet-g2", 1), ("fleet-c1", 3)):
        cluster.set_status(
            "kernelcachenode",
            node,
            {"counts": {"cachesReady": 1, "cachesPreparing": 0, "cachesError": 0, "totalPodsUsing": using}},
        )

    def is_ready(obj: dict[str, Any]) -> bool:
        return any(
            c["type"] == "Ready" and c["status"] == "True" for c in (obj.get("status") or {}).get("conditions", [])
        )

    def settled() -> bool:
        nodes = {n["metadata"]["name"]: n for n in cluster.get("nodes")["items"]}
        ready = all(is_ready(nodes[n]) for n in ("fleet-g1", "fleet-g2", "fleet-g4", "fleet-c1"))
        pods = {p["metadata"]["name"]: p for p in cluster.get("pods", namespace="kserve")["items"]}
        running = all(
            pods.get(f"agent-{n}", {}).get("status", {}).get("phase") == "Running" and is_ready(pods[f"agent-{n}"])
            for n in ("fleet-g1", "fleet-g2", "fleet-c1")
        )
        crashing = any(
            cs.get("state", {}).get("waiting", {}).get("reason") == "CrashLoopBackOff"
            for cs in pods.get("agent-fleet-g4", {}).get("status", {}).get("containerStatuses", [])
        )
        return ready and running and crashing

    cluster.wait_for("KWOK to run the nodes and agent pods", settled, timeout=90)


def set_entries(cluster, node: str, states: dict[str, str]) -> None:
    status = {}
    for key, state in states.items():
        ns, name = key.split("/")
        status[key] = b.entry(ns, name, state)
    cluster.set_status("kernelcachenode", node, {"cacheStatus": status})


# Counted by hand from build_fleet, as KServe counts (reference §7.2): a cache's phases are over its group's
# Ready members only (Ready condition True, cordoned ones included); entries on NotReady members are apart.
# cpu: fleet-c1 (Ready) -> nodeCount 1.
# gpu: fleet-g1 (Ready), fleet-g2 (Ready, cordoned: still counted), fleet-g3 (NotReady: not counted),
#      fleet-g4 (Ready, no KernelCacheNode: no entry for any cache) -> nodeCount 3.
EXPECTED_GROUPS = [
    {
        "name": "cpu",
        "selector": {"pool": "cpu"},
        "members": 1,
        "notReady": 0,
        "cordoned": 0,
        "kernelCacheNodes": 1,
        "agentReady": 1,
        "podsUsing": 3,
        "caches": {"team-b/qwen": cell(ready=1, nodes=1, no_entry=0, aggregate="Ready/CacheReady")},
    },
    {
        "name": "gpu",
        "selector": {"pool": "gpu"},
        "members": 4,
        "notReady": 1,
        "cordoned": 1,
        "kernelCacheNodes": 3,
        "agentReady": 2,
        "podsUsing": 2,
        "caches": {
            # g1 Ready, g2 Error, g4 no entry; g3's Pending is on a NotReady member: apart, not counted.
            # An Error on a Ready member (cordoned g2) -> Error/PreparationFailed
            "team-a/llama": cell(
                ready=1, error=1, nodes=3, no_entry=1, not_ready=counts(pending=1), aggregate="Error/PreparationFailed"
            ),
            # its group is defaultNodeGroup gpu; g1 Pulling, g2 the legacy Extracting (counts as Pulling), g4 no
            # entry: no error, not all Ready -> Preparing
            "team-a/mistral": cell(pulling=2, nodes=3, no_entry=1, aggregate="Preparing/Preparing"),
            # cpu's cache, listed because g1 carries its entry: of gpu's 3 Ready members g2 and g4 have none;
            # no aggregate here (not its group)
            "team-b/qwen": cell(ready=1, nodes=3, no_entry=2),
        },
    },
]
EXPECTED_UNASSIGNED = [
    {"name": "team-b/lost", "group": "nope", "reason": "group 'nope' (from spec.nodeGroupRef) does not exist"}
]
# Sums over both groups, and over the cells of the caches in their own groups (gpu's llama and mistral, cpu's
# qwen; gpu's qwen cell is not its own and is not summed).
EXPECTED_TOTALS = {
    "groups": 2,
    "members": 5,
    "notReady": 1,  # fleet-g3
    "cordoned": 1,  # fleet-g2
    "kernelCacheNodesMissing": 1,  # fleet-g4
    "agentsNotReady": 2,  # fleet-g3 (none) and fleet-g4 (crash-looping): 4 - 2 in gpu, 1 - 1 in cpu
    "kernelCaches": 4,  # llama, mistral, qwen, lost
    "unassignedCaches": 1,  # lost
    "podsUsing": 2,  # llama's status.usage; the others have none
    "entriesReady": 2,  # llama on g1, qwen on c1
    "entriesPending": 0,  # the only Pending (llama on g3) is on a NotReady member
    "entriesPulling": 2,  # mistral on g1 and g2
    "entriesError": 1,  # llama on g2
    "noEntry": 2,  # llama and mistral on g4 (cpu's qwen: c1 has it)
    "entriesNotReady": 1,  # llama's Pending on g3
}


@pytest.mark.simulate
def test_status_counts_a_known_fleet_live_and_from_its_dump(cluster, tmp_path):
    build_fleet(cluster)
    live = cluster.kcache("status", "-o", "json")
    assert live.returncode == 0, live.stderr
    doc = json.loads(live.stdout)
    assert doc["groups"] == EXPECTED_GROUPS
    assert doc["unassignedCaches"] == EXPECTED_UNASSIGNED
    assert doc["totals"] == EXPECTED_TOTALS
    assert doc["podsUsing"] == {"team-a/llama": 2, "team-a/mistral": 0, "team-b/lost": 0, "team-b/qwen": 0}
    meta = doc["source"]
    assert (meta["from"], meta["server"], meta["cluster"]) == ("live", cluster.server, "testbed")
    assert meta["scope"] == {"namespace": None} and meta["takenAt"].endswith("Z")

    dumped = cluster.kcache("dump", "--file", str(tmp_path / "snap.json"), "-o", "json")
    assert dumped.returncode == 0, dumped.stderr
    offline = cluster.kcache("status", "-o", "json", "--from-file", str(tmp_path / "snap.json"))
    assert offline.returncode == 0, offline.stderr
    offline_doc = json.loads(offline.stdout)
    assert {k: v for k, v in offline_doc.items() if k != "source"} == {k: v for k, v in doc.items() if k != "source"}
    assert offline_doc["source"]["files"] == [str(tmp_path / "snap.json")]

    scoped = json.loads(cluster.kcache("status", "-o", "json", "-n", "team-b").stdout)
    assert [g["caches"] for g in scoped["groups"]] == [  # team-a's entries are out of scope
        {"team-b/qwen": cell(ready=1, nodes=1, no_entry=0, aggregate="Ready/CacheReady")},
        {"team-b/qwen": cell(ready=1, nodes=3, no_entry=2)},
    ]

    table = cluster.kcache("status", "-o", "wide")
    assert table.returncode == 0 and "\x1b[" not in table.stdout
    lines = table.stdout.splitlines()
    gpu = next(line for line in lines if line.startswith("gpu "))  # the groups table
    # MEMBERS READY NOTREADY CORDONED KCN MISSING AGENTS CACHES PODS
    assert gpu.split()[1:] == ["pool=gpu", "4", "3", "1", "1", "3", "1", "2/4", "2", "2"]
    # KERNELCACHE GROUP STATE NODES READY PENDING PULLING ERROR "NO ENTRY" PODS, worst state first; PODS is the
    # cache's status.usage, on its first row only; gpu's qwen cell is another group's (`*`, no state)
    assert [line.split() for line in rows_under(lines, "KERNELCACHE")] == [
        ["team-a/llama", "gpu", "Error", "3", "1", "0", "0", "1", "1", "2"],
        ["team-a/mistral", "gpu", "Preparing", "3", "0", "0", "2", "0", "1", "0"],
        ["team-b/qwen", "cpu", "Ready", "1", "1", "0", "0", "0", "0", "0"],
        ["gpu*", "-", "3", "1", "0", "0", "0", "2"],
    ]
    # the entries on NotReady members, apart: llama's Pending on fleet-g3
    not_ready = rows_under(
        lines[lines.index("Entries on NotReady members (KServe does not count them):") :], "KERNELCACHE"
    )
    assert [line.split() for line in not_ready] == [["team-a/llama", "gpu", "0", "1", "0", "0"]]


def rows_under(lines: list[str], title: str) -> list[str]:
    """The rows of the first table whose header starts with `title`, up to a blank line or its footnote."""
    start = next(i for i, line in enumerate(lines) if line.startswith(title)) + 1
    rows = []
    for line in lines[start:]:
        if not line.strip() or line.startswith("* "):
            break
        rows.append(line)
    return rows


def test_status_reads_like_doctor_and_writes_nothing(cluster):
    cluster.apply([b.group("gpu", {"pool": "gpu"}), b.node("g1", {"pool": "gpu"}), b.kcn("g1")])
    mark = cluster.audit_mark()
    done = cluster.kcache("status", "-o", "json", "-n", "team-a")
    assert done.returncode == 0, done.stderr
    time.sleep(1)  # the audit log is written as requests complete
    mine = [
        e
        for e in cluster.audit_events(mark)
        if e.get("userAgent", "").startswith("kubectl-kcache") and e.get("stage") == "ResponseComplete"
    ]
    lists = sorted(
        (e["objectRef"].get("resource", ""), e["objectRef"].get("namespace", "")) for e in mine if e["verb"] == "list"
    )
    assert lists == [
        ("configmaps", "kserve"),
        ("kernelcachecaptures", "team-a"),  # their active sessions name the producers (cold by design)
        ("kernelcachenodegroups", ""),
        ("kernelcachenodes", ""),
        ("kernelcaches", "team-a"),
        ("nodes", ""),
        ("pods", "kserve"),
        ("pods", "team-a"),
        ("replicasets", "team-a"),
    ]
    assert {e["verb"] for e in mine} <= {"list", "get"}  # `get` is /version


def test_status_exit_3_names_a_forbidden_read(cluster):
    user = "status-lacks-pods"
    rules = [
        {"apiGroups": [g], "resources": [r], "verbs": ["get", "list", "watch"]}
        for g, r in (
            ("", "nodes"),
            ("", "configmaps"),
            ("serving.kserve.io", "kernelcachenodegroups"),
            ("serving.kserve.io", "kernelcachenodes"),
            ("serving.kserve.io", "kernelcaches"),
        )
    ]
    grant(cluster, user, rules)
    cluster.apply([b.group("gpu", {"pool": "gpu"}), b.node("g1", {"pool": "gpu"})])
    done = cluster.kcache("status", "--as", user)
    assert done.returncode == 3
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: status cannot answer: cannot list pods in namespace kserve (forbidden)")
    assert f'User "{user}" was refused' in line and "doctor-rbac.yaml" in line  # who, and the role to bind


def test_status_watch_exit_3_when_list_is_allowed_but_watch_is_not(cluster):
    user = "status-lists-only"
    rules = [
        {"apiGroups": [g], "resources": [r], "verbs": ["get", "list"] + (["watch"] if r != "nodes" else [])}
        for g, r in (
            ("", "nodes"),
            ("", "configmaps"),
            ("", "pods"),
            ("serving.kserve.io", "kernelcachenodegroups"),
            ("serving.kserve.io", "kernelcachenodes"),
            ("serving.kserve.io", "kernelcaches"),
        )
    ]
    grant(cluster, user, rules)
    done = cluster.kcache("status", "-w", "--as", user, timeout=60)
    assert done.returncode == 3
    assert "status --watch cannot watch nodes (forbidden" in done.stderr
    assert "Traceback" not in done.stderr


def grant(cluster, user: str, rules: list[dict[str, Any]]) -> None:
    name = f"kcache-test-{user}"
    cluster.apply(
        [
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": {"name": name, "labels": {OWNED_LABEL: "true"}},
                "rules": rules,
            },
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": name, "labels": {OWNED_LABEL: "true"}},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                "subjects": [{"kind": "User", "name": user, "apiGroup": "rbac.authorization.k8s.io"}],
            },
        ]
    )


# ---- status -w ------------------------------------------------------------------------------------


class Watch:
    """`status -w -o json` in the background; every re-render is one JSON document on stdout."""

    def __init__(self, cluster, *args: str):
        self.cluster = cluster
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kubectl_kcache", "status", "-w", "-o", "json", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=cluster.env,
        )
        os.set_blocking(self.proc.stdout.fileno(), False)
        self.buffer = ""
        self.docs: list[dict[str, Any]] = []

    def read(self) -> None:
        chunk = self.proc.stdout.read()
        if chunk:
            self.buffer += chunk.decode()
        decoder = json.JSONDecoder()
        while self.buffer.strip():
            text = self.buffer.lstrip()
            try:
                doc, end = decoder.raw_decode(text)
            except ValueError:
                return  # a document still being written
            self.docs.append(doc)
            self.buffer = text[end:]

    def until(self, what: str, check, timeout: float = 30) -> dict[str, Any]:
        def found() -> dict[str, Any] | None:
            self.read()
            assert self.proc.poll() is None, self.proc.stderr.read().decode()
            return self.docs[-1] if self.docs and check(self.docs[-1]) else None

        return self.cluster.wait_for(what, found, timeout=timeout, interval=0.2)

    def interrupt(self) -> tuple[int, str]:
        self.proc.send_signal(signal.SIGINT)
        _, err = self.proc.communicate(timeout=20)
        return self.proc.returncode, err.decode()


def group(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(g for g in doc["groups"] if g["name"] == name)


YAML_WATCHER = ("--as", "yaml-watcher", "--as-group", "system:masters")


def test_status_watch_follows_changes_from_watches(cluster):
    cluster.apply(
        [
            b.group("gpu", {"pool": "gpu"}),
            b.node("g1", {"pool": "gpu"}),
            b.node("g2", {"pool": "cpu"}),
            b.kcn("g1"),
            b.kernel_cache("llama", "team-a", group_name="gpu"),
        ]
    )
    mark = cluster.audit_mark()
    watch = Watch(cluster)
    # the same in YAML (issue 27 item 5): read once it has been interrupted, one document per `---`
    in_yaml = subprocess.Popen(
        # as another user, to tell its requests from the other watch's in the audit log
        [sys.executable, "-m", "kubectl_kcache", "status", "-w", "-o", "yaml", *YAML_WATCHER],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cluster.env,
    )
    try:
        first = watch.until("the first screen", lambda d: True)
        assert group(first, "gpu")["members"] == 1
        # g1 is Ready and has its KernelCacheNode but no entry: KServe counts it as preparing
        assert group(first, "gpu")["caches"] == {
            "team-a/llama": cell(nodes=1, no_entry=1, aggregate="Preparing/Preparing")
        }
        listed_at = cluster.audit_mark()

        cluster.kubectl("label", "node", "g2", "pool=gpu", "--overwrite")
        doc = watch.until("g2 to join gpu", lambda d: group(d, "gpu")["members"] == 2)
        assert group(doc, "gpu")["kernelCacheNodes"] == 1
        # g2 is Ready too (without a KernelCacheNode): two Ready members, neither with an entry
        assert group(doc, "gpu")["caches"] == {
            "team-a/llama": cell(nodes=2, no_entry=2, aggregate="Preparing/Preparing")
        }

        cluster.apply(b.kcn("g2"))
        set_entries(cluster, "g1", {"team-a/llama": "Pulling"})
        watch.until(
            "g2's KernelCacheNode and g1's entry",
            lambda d: (
                group(d, "gpu")["kernelCacheNodes"] == 2
                # g2's KernelCacheNode has no entry yet
                and group(d, "gpu")["caches"]
                == {"team-a/llama": cell(pulling=1, nodes=2, no_entry=1, aggregate="Preparing/Preparing")}
            ),
        )
        set_entries(cluster, "g1", {"team-a/llama": "Ready"})
        set_entries(cluster, "g2", {"team-a/llama": "Error"})
        both = cell(ready=1, error=1, nodes=2, no_entry=0, aggregate="Error/PreparationFailed")
        doc = watch.until("the entries' new states", lambda d: group(d, "gpu")["caches"] == {"team-a/llama": both})
        assert doc["source"]["from"] == "live"

        # between the first screen and here: watches only, not one list
        time.sleep(0.5)
        # (the YAML watch may still be making its first lists: it started beside this one)
        mine = [
            e
            for e in cluster.audit_events(listed_at)
            if e.get("userAgent", "").startswith("kubectl-kcache") and "impersonatedUser" not in e
        ]
        assert [e for e in mine if e["verb"] == "list"] == []

        # the API server goes away and its resourceVersions are compacted: the watches resume, get 410
        # Gone, list again and keep up
        for i in range(3):
            cluster.apply(b.group(f"noise-{i}", {"noise": str(i)}))
        cluster.testbed_cmd("compact")
        cluster.testbed_cmd("restart", "apiserver")
        cluster.kubectl("delete", "node", "g1")
        cluster.apply(b.group("cpu", {"pool": "cpu"}))
        doc = watch.until(
            "the changes after the restart and the 410",
            lambda d: group(d, "gpu")["members"] == 1 and any(g["name"] == "cpu" for g in d["groups"]),
            timeout=60,
        )
        # g2 alone: its Error
        assert group(doc, "gpu")["caches"] == {
            "team-a/llama": cell(error=1, nodes=1, no_entry=0, aggregate="Error/PreparationFailed")
        }
        # issue 27 item 5: every document carries the state of the watches; the outage is in them
        assert all("watch" in d for d in watch.docs)
        assert any(d["watch"]["state"] == "failing" and d["watch"]["problems"] for d in watch.docs), (
            "no document said the watches were failing during the restart"
        )
        watch.until("the watches current again", lambda d: d["watch"] == {"state": "current", "problems": []})
        relists = [
            e
            for e in cluster.audit_events(listed_at)
            if e.get("userAgent", "").startswith("kubectl-kcache")
            and e["verb"] == "list"
            and e.get("stage") == "ResponseComplete"
        ]
        assert relists, "a 410 Gone re-lists"
        assert {
            e["verb"] for e in cluster.audit_events(mark) if e.get("userAgent", "").startswith("kubectl-kcache")
        } <= {"list", "watch", "get"}
    finally:
        code, err = watch.interrupt()
        in_yaml.send_signal(signal.SIGINT)
        out, yaml_err = in_yaml.communicate(timeout=20)
    assert code == 130, err
    assert err.strip().endswith("interrupted")
    assert "Traceback" not in err
    docs = [yaml.safe_load(d) for d in out.decode().split("---\n") if d.strip()]
    assert in_yaml.returncode == 130 and len(docs) >= 2, yaml_err
    assert all("watch" in d for d in docs)
    assert any(d["watch"]["state"] == "failing" and d["watch"]["problems"] for d in docs), (
        "no YAML document said the watches were failing during the restart"
    )


def _pty_spawn(cluster, *args: str) -> tuple[subprocess.Popen, int]:
    """Run the plugin on a new pseudo-terminal as its controlling terminal (Ctrl-C typed there is SIGINT)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, b"\x00\x28\x00\x78\x00\x00\x00\x00")  # 40 rows, 120 columns
    env = dict(cluster.env, TERM="xterm-256color")

    def controlling_tty() -> None:
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen(
        [sys.executable, "-m", "kubectl_kcache", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,
        preexec_fn=controlling_tty,
    )
    os.close(slave)
    return proc, master


def _pty_read(master: int, seconds: float) -> str:
    out = b""
    deadline = time.time() + seconds
    while time.time() < deadline:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                out += os.read(master, 65536)
            except OSError:
                break
    return out.decode(errors="replace")


def test_status_watch_redraws_in_place_on_a_terminal_and_ctrl_c_exits_130(cluster):
    cluster.apply([b.group("gpu", {"pool": "gpu"}), b.node("g1", {"pool": "gpu"}), b.node("g2", {"pool": "cpu"})])
    proc, master = _pty_spawn(cluster, "status", "-w")
    try:
        screen = ""
        deadline = time.time() + 30
        while "no KernelCaches" not in screen and time.time() < deadline:  # the first screen's last line
            screen += _pty_read(master, 0.5)
        lines = screen.lstrip().splitlines()
        assert ANSI.sub("", lines[0]).startswith("1 node group: 1 with problems; 1 node:"), screen  # the answer
        assert lines[1].startswith("\x1b[2m" + SCREEN_HEAD), screen  # then what this screen is
        assert "\x1b[" in screen  # colour on a terminal
        first = ANSI.sub("", screen)
        assert re.search(r"^gpu\s+1\s", first, re.MULTILINE), first  # selectors are in -o wide

        cluster.kubectl("label", "node", "g2", "pool=gpu", "--overwrite")
        more = ""
        deadline = time.time() + 30
        while not re.search(r"gpu\s+2\s.* ~\r?$", ANSI.sub("", more), re.MULTILINE) and time.time() < deadline:
            more += _pty_read(master, 0.5)
        assert re.search(r"gpu\s+2\s.* ~\r?$", ANSI.sub("", more), re.MULTILINE), more  # marked as changed
        # redrawn in place: every redraw moves the cursor back up to the first line of the screen before it
        # (however many screens were drawn before the label changed), and clears from there
        frames = re.split(r"\x1b\[(\d+)F\x1b\[J", screen + more)
        assert len(frames) >= 3, frames  # at least one redraw
        for before, moved_up in zip(frames[0::2], frames[1::2], strict=False):  # the last screen moves nothing
            assert int(moved_up) == before.replace("\r\n", "\n").count("\n"), (before, moved_up)

        os.write(master, b"\x03")  # Ctrl-C, typed on the terminal
        code = proc.wait(timeout=20)
        tail = _pty_read(master, 0.5)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert code == 130, tail
    assert "interrupted" in tail and "Traceback" not in tail
