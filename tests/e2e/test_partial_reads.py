"""No verdict on a partial read (issue 12): for each read command, a user who may read everything but one
of the resources the command needs gets exit 3 and the verb and resource named, never 0, 1 or 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests import builders as b

from .cluster import OWNED_LABEL

pytestmark = pytest.mark.e2e

NS = "team-a"
CAPTURE = "model-kcc-7d9f8c6b5"  # KServe's generated name for ISVC model, pod-template-hash 7d9f8c6b5
POD = "model-predictor-7d9f8c6b5-abcde"

# (API group, resource): every resource any read command lists
READABLE = [
    ("", "nodes"),
    ("", "pods"),
    ("", "configmaps"),
    ("", "events"),
    ("", "namespaces"),
    ("", "serviceaccounts"),
    ("apps", "daemonsets"),
    ("apps", "deployments"),
    ("apps", "replicasets"),
    ("batch", "jobs"),
    ("serving.kserve.io", "kernelcachenodegroups"),
    ("serving.kserve.io", "kernelcachenodes"),
    ("serving.kserve.io", "kernelcaches"),
    ("serving.kserve.io", "kernelcachecaptures"),
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"),
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"),
    ("discovery.k8s.io", "endpointslices"),
    ("rbac.authorization.k8s.io", "rolebindings"),
    ("apiextensions.k8s.io", "customresourcedefinitions"),
    ("rbac.authorization.k8s.io", "roles"),
    ("", "secrets"),  # the captures' identities (Secrets: metadata)
]


def readers(cluster, missing: list[str]) -> dict[str, str]:
    """One user per resource in `missing` (impersonated by the test bed's admin), who may get/list/watch
    every resource but that one; "" stands for a user who may read everything. Returns resource -> user."""
    users, objs = {}, []
    for res in missing:
        user = f"lacks-{res}" if res else "reads-all"
        users[res] = user
        rules = [
            {"apiGroups": [group], "resources": [r], "verbs": ["get", "list", "watch"]}
            for group, r in READABLE
            if r != res
        ]
        name = f"kcache-test-{user}"
        objs += [
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
    cluster.apply(objs)
    return users


def install(cluster) -> None:
    """A cluster where the producer ran on a node of no group, so why-group falls back to the default (it
    reads the node and the ConfigMap), with a capture, a KernelCache and the agent."""
    producer = b.pod(
        POD,
        NS,
        node_name="cpu-1",
        labels={"serving.kserve.io/inferenceservice": "model", "pod-template-hash": "7d9f8c6b5"},
    )
    del producer["status"]
    cluster.apply(
        [
            b.config_map({"enabled": True, "defaultNodeGroup": "gpu"}),
            b.group("gpu", {"pool": "gpu"}),
            b.node("gpu-1", {"pool": "gpu"}),
            b.node("cpu-1", {}),
            b.kcn("gpu-1"),
            b.agent_daemonset(terms=[b.term({"pool": "gpu"})]),
            b.controller_deployment(ready=None),
            producer,
            b.capture(CAPTURE, NS),
        ]
    )
    status = b.capture_status(pod=POD, node_name="cpu-1")
    status["conditions"][0]["observedGeneration"] = cluster.get("kernelcachecapture", CAPTURE, NS)["metadata"][
        "generation"
    ]
    cluster.set_status("kernelcachecapture", CAPTURE, status, NS)


def test_a_user_who_can_read_everything_gets_an_answer(cluster):
    install(cluster)
    user = readers(cluster, [""])[""]
    doctor = cluster.kcache("doctor", "--as", user, "-o", "json")
    assert doctor.returncode in (0, 1), doctor.stderr
    assert json.loads(doctor.stdout)["summary"]["incomplete"] == 0
    why = cluster.kcache("why-group", POD, "-n", NS, "--as", user, "-o", "json")
    assert why.returncode == 0, why.stderr
    assert json.loads(why.stdout)["result"] == {
        "group": "gpu",
        "source": "default",
        "reason": None,
        "message": 'default KernelCacheNodeGroup "gpu" selected',
    }


def test_doctor_without_any_one_read_is_incomplete(cluster):
    install(cluster)
    users = readers(cluster, [res for _, res in READABLE])
    wrong = {}
    for resource, user in users.items():
        proc = cluster.kcache("doctor", "--as", user, "-o", "json")
        unread = [u for c in json.loads(proc.stdout)["checks"] for u in c.get("unread", [])] if proc.stdout else []
        if (
            proc.returncode != 3
            or not any(u.startswith(f"forbidden: list {resource}") for u in unread)
            or f"list {resource}" not in proc.stderr
        ):
            wrong[resource] = (proc.returncode, unread, proc.stderr)
    assert wrong == {}


WHY_GROUP_READS = {
    "pods": f"cannot list pods in namespace {NS} (forbidden)",
    "kernelcachecaptures": f"cannot list kernelcachecaptures in namespace {NS} (forbidden)",
    "kernelcaches": f"cannot list kernelcaches in namespace {NS} (forbidden)",
    "kernelcachenodegroups": "cannot list kernelcachenodegroups (forbidden)",
    "nodes": "cannot list nodes (forbidden)",
    "configmaps": "cannot list configmaps in namespace kserve (forbidden)",
}


def test_why_group_without_any_one_read_it_uses_is_incomplete(cluster):
    install(cluster)
    users = readers(cluster, list(WHY_GROUP_READS))
    wrong = {}
    for resource, named in WHY_GROUP_READS.items():
        for target in ([POD], ["--capture", CAPTURE]):
            proc = cluster.kcache("why-group", *target, "-n", NS, "--as", users[resource], "-o", "json")
            if proc.returncode != 3 or proc.stdout or named not in proc.stderr or proc.stderr.count("\n") != 1:
                wrong[(resource, target[0])] = (proc.returncode, proc.stdout[:200], proc.stderr)
    assert wrong == {}


def test_dump_without_one_read_is_incomplete_and_so_is_a_doctor_on_it(cluster, tmp_path):
    install(cluster)
    users = readers(cluster, ["nodes", "kernelcachecaptures", "pods", "jobs"])
    wrong = {}
    for resource, user in users.items():
        out = tmp_path / f"{resource}.yaml"
        proc = cluster.kcache("dump", "--as", user, "--file", str(out))
        # the dump records the forbidden read: a doctor on it is incomplete too, never "missing in the cluster"
        offline = cluster.kcache("doctor", "--from-file", str(out), "-o", "json")
        if proc.returncode != 3 or f"list {resource}" not in proc.stderr or offline.returncode != 3:
            wrong[resource] = (proc.returncode, proc.stderr, offline.returncode, offline.stderr)
    assert wrong == {}


def _same_answer_or_incomplete(cluster, command: list[str]) -> dict:
    """For every readable resource, a user lacking it gets the full reader's answer (a read the command does
    not depend on), exit 3 naming `list <resource>`, or the same verdict from a gate that fails anyway with
    the unread one said to be not checked (naming `list <resource>`): never another verdict, never a silent
    difference. The answers compared are the JSON documents without `source` (when they were made)."""
    users = readers(cluster, [""] + [res for _, res in READABLE])

    def answer(proc):
        doc = json.loads(proc.stdout)
        doc.pop("source", None)
        return proc.returncode, doc

    full = cluster.kcache(*command, "--as", users[""], "-o", "json")
    assert full.returncode in (0, 1), full.stderr
    expected = answer(full)
    wrong, incomplete, said = {}, [], []
    for _, resource in READABLE:
        proc = cluster.kcache(*command, "--as", users[resource], "-o", "json")
        if (
            proc.returncode == 3
            and not proc.stdout
            and f"list {resource}" in proc.stderr
            and proc.stderr.count("\n") == 1
        ):
            incomplete.append(resource)
        elif proc.returncode == 3 or not proc.stdout:
            wrong[resource] = (proc.returncode, proc.stdout[:300], proc.stderr)
        elif answer(proc) != expected:
            if proc.returncode != full.returncode or f"list {resource}" not in proc.stdout:
                wrong[resource] = (proc.returncode, proc.stdout[:300], proc.stderr)
            else:
                said.append(resource)
    assert wrong == {}
    return {"incomplete": incomplete, "said": said}


def test_status_without_any_one_read_answers_the_same_or_is_incomplete(cluster):
    install(cluster)
    cluster.apply([b.kernel_cache("model-cache", NS, group_name=None)])  # its group comes from the ConfigMap
    seen = _same_answer_or_incomplete(cluster, ["status"])
    assert set(seen["incomplete"]) == {
        "nodes",
        "pods",
        "configmaps",
        "kernelcachenodegroups",
        "kernelcachenodes",
        "kernelcaches",
    }
    # the serving pods section says it cannot count them: whether a cold pod is a producer needs the captures
    assert seen["said"] == ["kernelcachecaptures"]


def test_why_not_cached_without_any_one_read_answers_the_same_or_is_incomplete(cluster):
    install(cluster)
    seen = _same_answer_or_incomplete(cluster, ["why-not-cached", POD, "-n", NS])
    # the webhook configuration decides the first gates: its read forbidden is exit 3 (issue 27 item 3)
    # without the namespace's captures a pod without a cache is not known to be a producer (or not): exit 3
    assert {"pods", "kernelcaches", "kernelcachenodes", "mutatingwebhookconfigurations", "kernelcachecaptures"} <= set(
        seen["incomplete"]
    )
    # the lists that only refine the answer are named in it (`unread`) when they could not be read
    assert set(seen["said"]) == {"nodes", "namespaces", "kernelcachenodegroups"}


def test_reconcile_dry_run_without_any_one_read_it_depends_on_plans_nothing(cluster):
    """Issue 22 item 1, live: a plan is made only from complete reads of every list it depends on."""
    install(cluster)
    cluster.apply([b.node("gpu-2", {"pool": "gpu"})])  # a KernelCacheNode to create: the plan has a write
    needed = [
        "nodes",
        "kernelcachenodegroups",
        "kernelcachenodes",
        "kernelcaches",
        "kernelcachecaptures",
        "configmaps",
        "daemonsets",
    ]
    users = readers(cluster, ["", *needed, "deployments"])
    full = cluster.kcache("reconcile", "--dry-run", "--as", users[""], "-o", "json")
    assert full.returncode == 1, full.stderr
    planned = json.loads(full.stdout)["actions"]
    assert any(x["verb"] == "create" and x["name"] == "gpu-2" for x in planned), planned
    for resource in needed:
        proc = cluster.kcache("reconcile", "--dry-run", "--as", users[resource], "-o", "json")
        assert (proc.returncode, proc.stdout) == (3, ""), (resource, proc.stdout[:300], proc.stderr)
        assert f"reconcile cannot answer: cannot list {resource}" in proc.stderr and "(forbidden)" in proc.stderr
        assert "Traceback" not in proc.stderr
    # KServe's controller's Deployment only decides whether to write: a dry run plans without it
    proc = cluster.kcache("reconcile", "--dry-run", "--as", users["deployments"], "-o", "json")
    assert proc.returncode == 1 and json.loads(proc.stdout)["actions"] == planned, proc.stderr


def test_dump_names_each_forbidden_read_once(cluster, tmp_path):
    """Issue 27 item 9: pods and events are listed several times (by namespace and selector); the warning
    names each refused list once."""
    install(cluster)
    user = readers(cluster, ["pods"])["pods"]
    proc = cluster.kcache("dump", "--as", user, "--file", str(tmp_path / "d.json"), "-o", "json")
    assert proc.returncode == 3, proc.stderr
    line = next(x for x in proc.stderr.splitlines() if x.startswith("warning: some reads were forbidden"))
    entries = line.split("missing from the dump: ", 1)[1].split(", ")
    assert len(entries) == len(set(entries)), entries
    assert entries and all(e.startswith("list pods") for e in entries), entries


@pytest.mark.parametrize("output", ["json", "yaml"])
def test_a_dump_cut_short_is_said_to_be_truncated(cluster, tmp_path, output):
    """Issue 27 item 9: a dump written to standard output and cut short (here: its budget spent on a slow
    server) is refused when read back, as truncated, never read as a snapshot of what it happened to hold."""
    install(cluster)
    cluster.create([b.node(f"extra-{i:02d}", {"pool": "cpu"}) for i in range(40)])
    root = Path(__file__).resolve().parents[2]
    pxy = subprocess.Popen(
        [sys.executable, "-m", "tests.e2e.tcp_proxy", "127.0.0.1", str(cluster.state["ports"]["apiserver"]), "20000"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=root,
    )
    try:
        assert pxy.stdout is not None
        port = int(pxy.stdout.readline())
        out = tmp_path / f"cut.{output}"
        with open(out, "w") as fh:
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "kubectl_kcache",
                    "dump",
                    "-o",
                    output,
                    "--server",
                    f"https://127.0.0.1:{port}",
                    "--request-timeout",
                    "3s",
                ],
                stdout=fh,
                stderr=subprocess.PIPE,
                text=True,
                env=cluster.env,
                timeout=120,
            )
    finally:
        pxy.kill()
    assert proc.returncode == 3 and "timed out after 3s" in proc.stderr, proc.stderr
    assert out.stat().st_size > 0
    doctor = cluster.kcache("doctor", "--from-file", str(out))
    assert doctor.returncode == 2, (doctor.stdout, doctor.stderr)
    assert "the dump is truncated: it ends after" in doctor.stderr and doctor.stdout == ""
    assert "not in the input" not in doctor.stderr and "not read" not in doctor.stderr
