"""why-not-ready on clusters the real control plane put into each preparation state (`preparation_scenarios`):
a Job whose pods PodSecurity refuses (the Job controller's FailedCreate events), a suspended Job, a Job
Complete after a failed pod, and a stuck Job of a deleted KernelCache holding every pass of its namespace.
Each is explained live and from a `dump` of the same cluster, identically, with exit 1 unless Ready."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from typing import Any

import pytest

from . import preparation_scenarios as scenarios
from .preparation_scenarios import JOB_NS, NODE, NS

pytestmark = pytest.mark.e2e

CACHE_GATES = [
    "exists",
    "capture-link",
    "usage",
    "config",
    "verification",
    "group",
    "job-namespace",
    "prefetcher-identity",
    "requeue",
]
NODE_GATES = [
    "member",
    "ready",
    "kernelcachenode",
    "agent-pod",
    "agent-pass",
    "entry",
    "job",
    "pod",
    "pull",
    "image-present",
    "entry-state",
]
PREPARING = {"nodeCount": 1, "nodesReady": 0, "nodesPreparing": 1, "nodesError": 0}


def kcache(cluster, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kubectl_kcache", *args],
        capture_output=True,
        text=True,
        env=cluster.env,
        timeout=120,
    )


def _moving_parts(cluster) -> list[tuple[str, str, str]]:
    """What the Job controller and KWOK may still be changing: the job namespace's Jobs, pods and events (a
    refused Job gets a new FailedCreate event at every retry of its backoff)."""
    out = cluster.kubectl("get", "jobs,pods,events", "-n", JOB_NS, "-o", "json")
    items = json.loads(out.stdout)["items"]
    return sorted((i["kind"], i["metadata"]["name"], i["metadata"]["resourceVersion"]) for i in items)


def why_not_ready(cluster, tmp_path, name: str) -> tuple[int, dict[str, Any]]:
    """why-not-ready NAME live and on a dump of the same cluster: the same answer (all but `source`) and the
    same exit code, 0 when Ready and 1 when not. Made again (at most 5 times) while the Job controller changed
    something between the two reads."""
    dump = str(tmp_path / "snap.yaml")
    kubeconfig = ("--kubeconfig", cluster.kubeconfig)
    for _ in range(5):
        before = _moving_parts(cluster)
        live = kcache(cluster, "why-not-ready", name, "-n", NS, "-o", "json", *kubeconfig)
        dumped = kcache(cluster, "dump", "--file", dump, *kubeconfig)
        if before == _moving_parts(cluster):
            break
    else:
        raise AssertionError("the job namespace never held still for a live read and a dump")
    assert dumped.returncode == 0, dumped.stderr
    offline = kcache(cluster, "why-not-ready", name, "-n", NS, "-o", "json", "--from-file", dump)
    assert live.returncode in (0, 1), live.stdout + live.stderr
    assert offline.returncode == live.returncode, offline.stdout + offline.stderr
    doc, offline_doc = json.loads(live.stdout), json.loads(offline.stdout)
    live_source, offline_source = doc.pop("source"), offline_doc.pop("source")
    assert live_source["from"] == "live" and live_source["server"] == cluster.server
    assert offline_source["from"] == "file" and offline_source["files"] == [dump]
    assert doc == offline_doc  # the same answer; only where it came from differs
    assert (doc["kind"], doc["version"]) == ("WhyNotReady", 1)
    assert doc["kernelCache"] == {"namespace": NS, "name": name, "group": scenarios.GROUP}
    assert live.returncode == (0 if doc["result"]["ready"] else 1)
    return live.returncode, doc


def the_node(doc: dict[str, Any], name: str = NODE) -> dict[str, Any]:
    [node] = [n for n in doc["result"]["nodes"] if n["name"] == name]
    assert (node["member"], node["ready"], node["cordoned"]) == (True, True, False), node
    gates = [g["id"] for g in node["gates"]]
    assert gates == [g for g in NODE_GATES if g in gates], gates  # KServe's order
    before = gates.index(node["blockedBy"]) if node["blockedBy"] else len(gates)
    # a gate not decided (e.g. a list the answer did not need) has passed null; none before the block failed
    assert all(g["passed"] in (True, None) for g in node["gates"][:before]), node["gates"]
    if node["blockedBy"]:
        assert node["gates"][before]["passed"] is not True, node["gates"][before]
    return node


def cache_gates(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    gates = doc["result"]["cache"]
    assert [g["id"] for g in gates] == CACHE_GATES
    return {g["id"]: g for g in gates}


def entry_is(node: dict[str, Any], state: str, message: str) -> None:
    assert node["entry"] is not None and (node["entry"]["state"], node["entry"]["message"]) == (state, message)
    assert node["entry"]["lastUpdate"]


def preparing(doc: dict[str, Any]) -> None:
    """KServe's aggregate of one Ready member whose entry is Pulling: Preparing, as written."""
    aggregate = doc["result"]["aggregate"]
    computed = aggregate["computed"]
    assert (computed["state"], computed["reason"], computed["counts"]) == ("Preparing", "Preparing", PREPARING)
    assert aggregate["written"]["state"] == "Preparing" and aggregate["lagging"] is False


@pytest.fixture
def restricted_job_namespace(cluster):
    """The test bed's reset keeps namespace labels: the PodSecurity level comes off whatever happens."""
    yield
    scenarios.restore_job_namespace(cluster)


@pytest.mark.simulate
def test_pod_security_refuses_the_preparation_pod(cluster, tmp_path, restricted_job_namespace):
    """The Job controller's pod creations are refused by PodSecurity: FailedCreate Warnings on the Job, no pod;
    the Job has a startTime (the Job controller sets it before making pods) and the entry stays Pulling."""
    s = scenarios.failed_create(cluster)
    refusals = {e["message"].split(" is forbidden: ", 1)[-1] for e in s.events}
    assert all(e["type"] == "Warning" for e in s.events) and len(refusals) == 1, s.events
    [refusal] = refusals
    assert refusal.startswith('violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false')
    assert s.job_object["status"].get("startTime") and not s.job_object["status"].get("active")
    # the API server keeps the image volume (ImageVolume is GA in the test bed's v1.36), and PodSecurity's
    # restricted level objects only to the missing securityContext, not to the volume
    [volume] = s.job_object["spec"]["template"]["spec"]["volumes"]
    assert volume == {"name": "kernel-cache", "image": {"reference": s.image, "pullPolicy": "IfNotPresent"}}
    assert "volume" not in refusal

    code, doc = why_not_ready(cluster, tmp_path, s.kernel_cache)
    assert code == 1 and doc["result"]["ready"] is False
    assert all(g["passed"] is True for g in cache_gates(doc).values())
    node = the_node(doc)
    assert node["blockedBy"] == "job"
    assert (node["job"]["name"], node["job"]["state"]) == (s.job, "failed-create")
    assert node["pod"] is None
    entry_is(node, "Pulling", scenarios.PREFETCHING)
    causes = [c for c in doc["result"]["causes"] if refusal in c["cause"]]
    assert causes and causes[0]["nodes"] == [NODE] and causes[0]["next"], doc["result"]["causes"]
    preparing(doc)


@pytest.mark.simulate
def test_suspended_job(cluster, tmp_path):
    """A suspended Job never starts: no startTime, no pod; the entry waits for it to start."""
    s = scenarios.suspended(cluster)
    assert not s.job_object["status"].get("startTime")
    assert [(e["reason"], e["message"]) for e in s.events] == [("Suspended", "Job suspended")]

    code, doc = why_not_ready(cluster, tmp_path, s.kernel_cache)
    assert code == 1 and doc["result"]["ready"] is False
    assert all(g["passed"] is True for g in cache_gates(doc).values())
    node = the_node(doc)
    assert node["blockedBy"] == "job"
    assert (node["job"]["name"], node["job"]["state"]) == (s.job, "suspended")
    assert node["pod"] is None
    entry_is(node, "Pulling", scenarios.WAITING_TO_START)
    assert any(NODE in c["nodes"] for c in doc["result"]["causes"]), doc["result"]["causes"]
    preparing(doc)


@pytest.mark.simulate
def test_job_complete_after_a_failed_pod(cluster, tmp_path):
    """The Job completed on its second pod; the first one, Failed with exit code 1, is still there. KServe reads
    no pods of a Complete Job: the entry is Ready, and no pod failure is reported."""
    s = scenarios.complete_after_failed_pod(cluster)
    failed, succeeded = s.pods
    assert failed["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 1
    assert succeeded["status"]["phase"] == "Succeeded"
    assert (s.job_object["status"]["failed"], s.job_object["status"]["succeeded"]) == (1, 1)

    code, doc = why_not_ready(cluster, tmp_path, s.kernel_cache)
    assert code == 0 and doc["result"]["ready"] is True
    assert all(g["passed"] is True for g in cache_gates(doc).values())
    node = the_node(doc)
    assert node["blockedBy"] is None
    assert (node["job"]["name"], node["job"]["state"]) == (s.job, "complete")
    assert node["pod"] is None or not node["pod"].get("failure"), node["pod"]
    assert scenarios.FAILED_CONTAINER["message"] not in json.dumps(doc)
    entry_is(node, "Ready", scenarios.PREFETCHED)
    assert doc["result"]["causes"] == []
    aggregate = doc["result"]["aggregate"]
    assert (aggregate["computed"]["state"], aggregate["computed"]["reason"]) == ("Ready", "CacheReady")
    assert aggregate["computed"]["counts"] == {"nodeCount": 1, "nodesReady": 1, "nodesPreparing": 0, "nodesError": 0}
    assert aggregate["written"]["state"] == "Ready" and aggregate["lagging"] is False


@pytest.mark.simulate
def test_orphan_job_of_a_deleted_kernel_cache_holds_the_namespace(cluster, tmp_path):
    """A stuck Job of a KernelCache that no longer exists, with KServe's managed prefetcher RoleBinding in the
    namespace: every KernelCache pass of the namespace requeues before making Jobs, for good."""
    s = scenarios.orphan_requeue(cluster)
    gone = s.extra["gone"]
    assert cluster.get("kernelcache", gone, NS, check=False) is None
    waiting = s.pods[0]["status"]["containerStatuses"][0]["state"]["waiting"]
    assert waiting["reason"] == "ImagePullBackOff"

    code, doc = why_not_ready(cluster, tmp_path, s.kernel_cache)
    assert code == 1 and doc["result"]["ready"] is False
    gates = cache_gates(doc)
    assert all(gates[g]["passed"] is True for g in CACHE_GATES[:-1]), gates
    requeue = gates["requeue"]
    assert requeue["passed"] is False, requeue
    said = json.dumps(requeue)
    assert s.job in said and gone in said, requeue
    assert re.search(r"no longer exists|does not exist|not found|deleted", said, re.IGNORECASE), requeue
    node = the_node(doc)
    entry_is(node, "Pending", scenarios.NOT_PRESENT)
    assert node["job"] is None or node["job"]["name"] != s.job  # the orphan is not this cache's Job


@pytest.mark.simulate
def test_a_forbidden_read_is_exit_3_and_its_gate_says_not_read(cluster):
    """A user who may read everything why-not-ready lists but the preparation Jobs: exit 3, the Job gates say
    "not read" (never a verdict made up from what was not seen), and the refused list is named."""
    from .test_status import grant

    s = scenarios.suspended(cluster)
    user = "why-not-ready-lacks-jobs"
    readable = [
        ("", "nodes"),
        ("", "configmaps"),
        ("", "pods"),
        ("", "events"),
        ("", "namespaces"),
        ("", "serviceaccounts"),
        ("apps", "daemonsets"),
        ("apps", "deployments"),
        ("rbac.authorization.k8s.io", "rolebindings"),
        ("serving.kserve.io", "kernelcachenodegroups"),
        ("serving.kserve.io", "kernelcachenodes"),
        ("serving.kserve.io", "kernelcaches"),
        ("serving.kserve.io", "kernelcachecaptures"),
    ]
    grant(cluster, user, [{"apiGroups": [g], "resources": [r], "verbs": ["get", "list"]} for g, r in readable])
    done = kcache(cluster, "why-not-ready", s.kernel_cache, "-n", NS, "-o", "json", "--as", user)
    assert done.returncode == 3, done.stderr
    result = json.loads(done.stdout)["result"]
    assert any(line.startswith("forbidden: list jobs") for line in result["notRead"]), result["notRead"]
    gates = {g["id"]: g for g in result["cache"]}
    assert gates["requeue"]["passed"] is None
    node = the_node({"result": result})
    assert {g["id"]: g["passed"] for g in node["gates"]}["job"] is None
    assert node["job"] is None
