"""why-not-ready: the chain of one KernelCache, gate by gate, against the reference's §2.2, §2.4, §5.2 and §7.2
(each case is a state KServe can be in, and the words KServe uses for it)."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_kcache.explain.why_not_ready import CACHE_GATES, NODE_GATES, explain, explain_all
from kubectl_kcache.kernelcache import preparation as prep
from kubectl_kcache.kernelcache.aggregate import compute_aggregate
from kubectl_kcache.kernelcache.membership import membership_of
from kubectl_kcache.kernelcache.names import preparation_job_name
from kubectl_kcache.snapshot.model import build
from tests import builders as b

NS, KC, JOBS = "team-a", "llama", "kserve-kernelcache-jobs"
NODES = ("n1", "n2", "n3", "n4")
CONFIG = {"enabled": True, "jobNamespace": JOBS}


def job(node: str, *, kc: str = KC, ns: str = NS, seed: str = "cache", **state: Any) -> dict[str, Any]:
    """A preparation Job as KServe makes it; `state`: complete, failed (message), suspend, started, created."""
    name = preparation_job_name(ns, kc, b.image(seed), node)
    status: dict[str, Any] = {}
    if state.get("started", True) and not state.get("suspend"):
        status["startTime"] = "2026-12-01T10:00:00Z"
    conds = []
    if state.get("complete"):
        conds.append({"type": "Complete", "status": "True"})
    if "failed" in state:
        conds.append({"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": state["failed"]})
    if conds:
        status["conditions"] = conds
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": JOBS,
            "creationTimestamp": state.get("created", "2026-12-01T10:00:00Z"),
            "labels": {
                "serving.kserve.io/kernel-cache-name": kc,
                "serving.kserve.io/kernel-cache-namespace": ns,
                "serving.kserve.io/kernel-cache-node": node,
            },
        },
        "spec": {
            **({"suspend": True} if state.get("suspend") else {}),
            "ttlSecondsAfterFinished": 600,
            "template": {
                "spec": {
                    "nodeSelector": {"kubernetes.io/hostname": node},
                    "volumes": [{"name": "kernel-cache", "image": {"reference": b.image(seed)}}],
                }
            },
        },
        "status": status,
    }


def job_pod(job_obj: dict[str, Any], suffix: str = "x", **kw: Any) -> dict[str, Any]:
    name = job_obj["metadata"]["name"]
    labels = {**job_obj["metadata"]["labels"], "batch.kubernetes.io/job-name": name}
    return b.pod(f"{name}-{suffix}", JOBS, labels=labels, **kw)


def event(kind: str, name: str, ns: str, reason: str, message: str, when: str = "2026-12-01T10:05:00Z") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{name}.{reason}", "namespace": ns},
        "involvedObject": {"kind": kind, "name": name, "namespace": ns if kind == "Job" else ""},
        "type": "Warning",
        "reason": reason,
        "message": message,
        "lastTimestamp": when,
        "count": 3,
        **({"reportingComponent": "kernelcachenode-agent"} if kind == "KernelCacheNode" else {}),
    }


def cluster(*extra: dict[str, Any], entries: dict[str, str] | None = None, **kw: Any) -> list[dict[str, Any]]:
    """Group gpu of n1..n4 (Ready), their KernelCacheNodes with an entry for team-a/llama in `entries`' state
    (default Ready), agents Running, the job namespace, config enabled."""
    states = {n: "Ready" for n in NODES} if entries is None else entries
    items: list[dict[str, Any]] = [
        b.config_map(kw.get("config", CONFIG)),
        b.group("gpu", {"pool": "gpu"}),
        b.kernel_cache(KC, NS, "gpu", state=kw.get("kc_state", "Ready")),
        b.namespace(JOBS),
        b.namespace(NS),
    ]
    for n in NODES:
        items.append(b.node(n, {"pool": "gpu"}, **kw.get("node_kw", {}).get(n, {})))
        if n not in kw.get("no_kcn", ()):
            st = states.get(n)
            items.append(b.kcn(n, {f"{NS}/{KC}": b.entry(NS, KC, st)} if st else {}))
        if n not in kw.get("no_agent", ()):
            items.append(
                b.pod(
                    f"agent-{n}",
                    "kserve",
                    n,
                    labels={"control-plane": "kserve-kernelcachenode-agent"},
                )
            )
    return items + list(extra)


def trace(*items: dict[str, Any], nodes: tuple[str, ...] = ()) -> Any:
    return explain(build(list(items), reads_assumed=True), NS, KC, nodes)


def node_of(why: Any, name: str) -> Any:
    return next(n for n in why.nodes if n.name == name)


def test_every_gate_in_order_with_stable_ids():
    why = trace(*cluster())
    assert [g.id for g in why.cache] == list(CACHE_GATES)
    assert why.ready and why.verdict == "Ready on 4 of 4 Ready members of gpu; KServe: Ready"
    for n in why.nodes:
        assert n.blocked_by is None
        assert [g.id for g in n.gates][:6] == list(NODE_GATES[:6])
    doc = why.to_dict()
    assert doc["kind"] == "WhyNotReady" and doc["result"]["ready"] is True
    assert doc["result"]["aggregate"]["computed"]["counts"] == {
        "nodeCount": 4,
        "nodesReady": 4,
        "nodesPreparing": 0,
        "nodesError": 0,
    }


def test_a_ready_member_without_an_entry_is_preparing_for_good():
    why = trace(*cluster(entries={"n1": "Ready", "n2": "Ready", "n3": "Ready", "n4": None}))
    n4 = node_of(why, "n4")
    assert n4.blocked_by == "entry"
    assert "no Job" in n4.gates[-1].detail and "Preparing for good" in n4.gates[-1].detail
    assert why.aggregate.state == "Preparing" and why.aggregate.missing_nodes == ("n4",)
    assert not why.ready and why.causes[0].nodes == ("n4",)


def test_a_job_whose_pods_are_refused_stays_pulling_for_good():
    j = job("n2", started=False)
    refused = 'pods "x" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false'
    ev = event("Job", j["metadata"]["name"], JOBS, "FailedCreate", f"Error creating: {refused}")
    why = trace(*cluster(j, ev, entries={**{n: "Ready" for n in NODES}, "n2": "Pulling"}))
    n2 = node_of(why, "n2")
    assert n2.blocked_by == "job" and n2.job == (j["metadata"]["name"], prep.JOB_FAILED_CREATE)
    assert "PodSecurity" in n2.cause and "FailedCreate" in n2.cause
    assert 'pods "x"' not in n2.cause and 'pods "x"' in n2.gates[-1].detail  # the try's pod name: detail only


def test_one_refusal_on_two_nodes_is_one_cause():
    items = []
    for n, pod in (("n1", "a1b2c"), ("n2", "z9y8x")):
        j = job(n, started=True)
        msg = f'Error creating: pods "{j["metadata"]["name"]}-{pod}" is forbidden: exceeded quota: gpu-jobs'
        items += [j, event("Job", j["metadata"]["name"], JOBS, "FailedCreate", msg)]
    why = trace(*cluster(*items, entries={**{n: "Ready" for n in NODES}, "n1": "Pulling", "n2": "Pulling"}))
    assert [(c.nodes, c.cause) for c in why.causes] == [
        (("n1", "n2"), "pod creation refused (FailedCreate): exceeded quota: gpu-jobs")
    ]


def test_a_suspended_job_has_no_pod_and_no_start():
    j = job("n3", suspend=True)
    why = trace(*cluster(j, entries={**{n: "Ready" for n in NODES}, "n3": "Pulling"}))
    n3 = node_of(why, "n3")
    assert n3.blocked_by == "job" and n3.job[1] == prep.JOB_SUSPENDED
    assert "suspended" in n3.cause


def test_pods_of_a_complete_job_are_not_read():
    j = job("n1", complete=True)
    failed = job_pod(j, "a", phase="Failed", waiting=("ErrImagePull", "pull failed"))
    why = trace(*cluster(j, failed))
    n1 = node_of(why, "n1")
    assert n1.blocked_by is None and n1.job[1] == prep.JOB_COMPLETE and n1.pod is None


def test_a_failed_job_carries_its_condition_message_not_a_pods():
    j = job("n1", failed="Job has reached the specified backoff limit")
    pod = job_pod(j, "a", phase="Failed", waiting=("CrashLoopBackOff", "a pod's message"))
    why = trace(*cluster(j, pod, entries={**{n: "Ready" for n in NODES}, "n1": "Error"}))
    n1 = node_of(why, "n1")
    assert n1.blocked_by == "job" and "backoff limit" in n1.cause and "pod's message" not in n1.cause
    assert n1.next.startswith("kubectl -n kserve-kernelcache-jobs delete job/")
    p = prep.preparation(build([j]).jobs[0], build([pod]).pods, ())
    assert (p.entry_state, p.entry_message) == ("Error", "Job has reached the specified backoff limit")


def test_a_pull_failure_says_what_the_registry_answered():
    j = job("n1")
    msg = (
        'failed to pull and unpack image "registry.example.com/team-a/cache@sha256:1": failed to resolve '
        "reference: pulling from host registry.example.com failed with status code [manifests sha256:1]: "
        "401 Unauthorized"
    )
    pod = job_pod(j, "a", phase="Pending", waiting=("ErrImagePull", msg))
    why = trace(*cluster(j, pod, entries={**{n: "Ready" for n in NODES}, "n1": "Error"}))
    n1 = node_of(why, "n1")
    assert n1.blocked_by == "pull" and n1.pod == (pod["metadata"]["name"], msg)
    assert n1.cause == "the registry answers 401 Unauthorized for registry.example.com/team-a/cache"


def test_an_error_on_a_notready_node_does_not_fail_the_cache():
    why = trace(*cluster(entries={**{n: "Ready" for n in NODES}, "n4": "Error"}, node_kw={"n4": {"ready": False}}))
    assert why.ready and why.verdict.startswith("Ready on 3 of 3 Ready members")
    assert node_of(why, "n4").blocked_by == "ready" and not node_of(why, "n4").counted
    assert why.aggregate.state == "Ready"


def test_a_cordoned_member_counts_and_its_pod_cannot_be_scheduled():
    j = job("n2")
    pod = job_pod(j, "a", phase="Pending")
    pod["status"]["conditions"] = [
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": "0/4 nodes: 1 node(s) were unschedulable",
        }
    ]
    why = trace(
        *cluster(
            j, pod, entries={**{n: "Ready" for n in NODES}, "n2": "Pulling"}, node_kw={"n2": {"unschedulable": True}}
        )
    )
    n2 = node_of(why, "n2")
    assert n2.counted and n2.cordoned and n2.blocked_by == "pod" and "cordoned" in n2.cause
    assert why.aggregate.counts.node_count == 4


def test_a_second_subject_on_the_prefetcher_binding_is_a_storage_error():
    rb = b.prefetcher_binding(NS, ("kernel-cache-prefetcher-sa", JOBS), ("other", JOBS))
    why = trace(*cluster(rb))
    gate = why.cache_blocked_by
    assert gate.id == "prefetcher-identity" and gate.kserve[:2] == ("Error", "StorageError")
    assert (
        gate.kserve[2]
        == f"managed RoleBinding {NS}/kernel-cache-prefetcher-rb has an unexpected ServiceAccount subject"
    )
    # a subject left in an older job namespace is patched by KServe: not an error
    rb["subjects"] = [{"kind": "ServiceAccount", "name": "kernel-cache-prefetcher-sa", "namespace": "old-jobs"}]
    assert trace(*cluster(rb)).cache_blocked_by is None


def test_a_reserved_prefetcher_service_account_fails_every_cache():
    sa = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "kernel-cache-prefetcher-sa", "namespace": JOBS},
        "automountServiceAccountToken": False,
    }
    gate = trace(*cluster(sa)).cache_blocked_by
    assert gate.id == "prefetcher-identity" and gate.kserve == (
        "Error",
        "StorageError",
        f"reserved ServiceAccount {JOBS}/kernel-cache-prefetcher-sa already exists and is not managed by KernelCache",
    )


def test_an_orphan_job_holds_every_pass_of_the_namespace_for_good():
    rb = b.prefetcher_binding(NS, ("kernel-cache-prefetcher-sa", JOBS))
    orphan = job("n1", kc="deleted-cache", seed="old")
    stuck = job_pod(orphan, "a", phase="Pending", waiting=("ImagePullBackOff", "back-off"))
    why = trace(*cluster(rb, orphan, stuck))
    gate = why.cache_blocked_by
    assert gate.id == "requeue" and gate.passed is False
    assert "no longer exists" in gate.detail and "for good" in gate.detail
    assert gate.next == f"kubectl -n {JOBS} delete job/{orphan['metadata']['name']}"
    assert not why.ready


def test_the_agents_warning_event_stops_the_node():
    ev = event("KernelCacheNode", "n3", "default", "ReconcileError", 'discover KernelCaches for node "n3": forbidden')
    why = trace(*cluster(ev, entries={**{n: "Ready" for n in NODES}, "n3": "Pending"}))
    n3 = node_of(why, "n3")
    assert n3.blocked_by == "agent-pass" and "ReconcileError" in n3.cause


def test_no_kernelcachenode_means_no_job_and_preparing():
    why = trace(*cluster(no_kcn=("n2",)))
    assert node_of(why, "n2").blocked_by == "kernelcachenode"
    assert why.aggregate.state == "Preparing"


def test_a_node_outside_the_group_names_the_failing_pair():
    outside = b.node("n9", {"pool": "cpu"})
    why = trace(*cluster(outside), nodes=("n9",))
    n9 = node_of(why, "n9")
    assert not n9.member and n9.blocked_by == "member" and "pool=gpu wanted, has 'cpu'" in n9.gates[0].detail
    assert why.ready  # a node outside the group is not counted


@pytest.mark.parametrize(
    ("config", "gate", "kserve"),
    [
        ({"enabled": False, "jobNamespace": JOBS}, "config", ("Pending", "FeatureDisabled")),
        ({"enabled": True, "jobNamespace": "missing-ns"}, "job-namespace", ("Error", "StorageError")),
    ],
)
def test_cache_level_gates_stop_every_node(config, gate, kserve):
    why = trace(*cluster(config=config))
    stop = why.cache_blocked_by
    assert stop.id == gate and stop.kserve[:2] == kserve and not why.ready


def test_the_aggregate_is_the_one_status_and_kserve_compute():
    """One rule: the chain's aggregate is compute_aggregate's, over the same members."""
    items = cluster(entries={"n1": "Ready", "n2": "Error", "n3": "Pulling", "n4": None})
    snap = build(items, reads_assumed=True)
    why = explain(snap, NS, KC)
    members = membership_of(snap).members_of_group["gpu"]
    assert why.aggregate == compute_aggregate(snap.kernel_caches[0], members, snap.kcn_by_name)
    # the nodes the chain says are not Ready are exactly those the aggregate does not count as ready
    not_ready = {n.name for n in why.nodes if n.counted and n.blocked_by is not None}
    assert not_ready == set(why.aggregate.error_nodes) | set(why.aggregate.preparing_nodes)


def test_every_cache_in_scope_not_ready_first():
    items = cluster(entries={**{n: "Ready" for n in NODES}, "n1": "Error"})
    items.append(b.kernel_cache("other", NS, "gpu", seed="other", state="Preparing"))
    fleet = explain_all(build(items, reads_assumed=True), None)
    assert [w.name for w in fleet.rows] == ["llama", "other"]
    assert not fleet.all_ready
    assert fleet.to_dict()["kind"] == "WhyNotReadyList"


@pytest.mark.parametrize(
    ("change", "kserve"),
    [
        (
            "no-group-name",
            ("Error", "NodeGroupNotFound", "nodeGroupRef.name is required and default node group is not specified"),
        ),
        ("group-missing", ("Error", "NodeGroupNotFound", "referenced KernelCacheNodeGroup was not found")),
        ("no-members", ("Pending", "NoMatchingNodes", "no nodes match the referenced KernelCacheNodeGroup")),
        ("none-ready", ("Pending", "NoReadyNodes", "matching nodes are not ready")),
    ],
)
def test_the_group_gate_in_kserves_words(change, kserve):
    items = cluster()
    kc = next(x for x in items if x["kind"] == "KernelCache")
    if change == "no-group-name":
        del kc["spec"]["nodeGroupRef"]
    elif change == "group-missing":
        kc["spec"]["nodeGroupRef"]["name"] = "gone"
    elif change == "no-members":
        items = [x for x in items if x["kind"] != "Node"]
    else:
        items = [x for x in items if x["kind"] != "Node"] + [b.node(n, {"pool": "gpu"}, ready=False) for n in NODES]
    gate = trace(*items).cache_blocked_by
    assert gate.id == "group" and gate.kserve == kserve


def test_a_terminating_cache_names_what_holds_it():
    items = cluster()
    kc = next(x for x in items if x["kind"] == "KernelCache")
    kc["metadata"]["deletionTimestamp"] = "2026-12-01T10:00:00Z"
    kc["metadata"]["finalizers"] = ["example.com/hold"]
    why = trace(*items)
    gate = why.cache_blocked_by
    assert gate.id == "exists" and "no link, no status, no Jobs" in gate.detail
    assert gate.evidence == ("finalizers: example.com/hold",)


def test_verification_failed_in_cert_mode_stops_before_any_job():
    config = {
        "enabled": True,
        "jobNamespace": JOBS,
        "artifactSecurity": {"mode": "cert", "cert": {"signingProfileRef": "p", "trustBundle": "ca"}},
    }
    items = cluster(config=config, kc_state="Error")
    kc = next(x for x in items if x["kind"] == "KernelCache")
    kc["status"]["conditions"][0].update(
        reason="VerificationFailed", message="kernel cache artifact verification failed"
    )
    gate = trace(*items).cache_blocked_by
    assert gate.id == "verification" and gate.kserve == (
        "Error",
        "VerificationFailed",
        "kernel cache artifact verification failed",
    )
    assert "no node gets a Job" in gate.detail


# ---- from review: what the first version got wrong ---------------------------------------------------------


def test_a_chain_that_ends_on_a_list_not_read_is_not_ready():
    """KernelCacheNodes not read: every member's chain stops there, unknown: not Ready, never exit 0."""
    from kubectl_kcache.snapshot.kinds import PLURALS
    from kubectl_kcache.snapshot.reads import Read

    reads = [Read(p, None, "forbidden" if p == "kernelcachenodes" else "ok") for p in PLURALS]
    snap = build([x for x in cluster() if x["kind"] != "KernelCacheNode"], reads=reads)
    why = explain(snap, NS, KC)
    assert any("kernelcachenodes" in u for u in why.unread)
    assert {n.blocked_by for n in why.nodes} == {"kernelcachenode"} and not why.ready


@pytest.mark.parametrize(
    ("config", "words"),
    [
        ({"enabled": False, "jobNamespace": JOBS}, "the feature is disabled"),
        ({"enabled": True, "jobNamespace": JOBS, "artifactSecurity": {"mode": "disabled"}}, 'mode is "disabled"'),
    ],
)
def test_the_admission_note_asks_what_the_webhook_asks(config, words):
    """§2.3 5 and §4: with the feature off, or a verification mode the cache's status does not match (the
    `disabled` trap), the webhook mounts nothing, Ready entries or not."""
    why = trace(*cluster(config=config))
    assert why.admission.startswith("the pod webhook cannot mount it today") and words in why.admission


def test_another_caches_group_with_an_empty_selector_fails_every_agent():
    """§2.2: a group referenced by any KernelCache with an empty nodeSelector fails every Ready node's pass."""
    empty = b.group("g2", {})
    empty["spec"]["nodeSelector"] = {}
    other = b.kernel_cache("c2", NS, "g2", seed="c2")
    why = trace(*cluster(empty, other, entries={**{n: "Ready" for n in NODES}, "n1": "Pending"}))
    n1 = node_of(why, "n1")
    assert n1.blocked_by == "agent-pass" and 'KernelCacheNodeGroup "g2" requires a non-empty nodeSelector' in n1.cause


def test_a_second_subject_is_not_a_requeue_and_names_the_binding_in_its_namespace():
    rb = b.prefetcher_binding(NS, ("kernel-cache-prefetcher-sa", JOBS), ("other", JOBS))
    running = job("n1")
    gate = trace(*cluster(rb, running)).cache_blocked_by
    assert gate.id == "prefetcher-identity"  # KServe fails on the subject before it looks at running Jobs
    assert gate.next == f"kubectl -n {NS} get rolebinding/kernel-cache-prefetcher-rb -o yaml"
    assert "every KernelCache of the namespace" in gate.detail


def test_the_caches_own_stuck_job_holds_the_namespace_for_good():
    rb = b.prefetcher_binding(NS, ("kernel-cache-prefetcher-sa", JOBS))
    j = job("n1")
    stuck = job_pod(j, "a", phase="Pending", waiting=("ImagePullBackOff", "back-off"))
    gate = trace(*cluster(rb, j, stuck)).cache_blocked_by
    assert gate.id == "requeue" and gate.passed is False and "until someone deletes the Job" in gate.detail
    assert gate.next == f"kubectl -n {JOBS} delete job/{j['metadata']['name']}"


def test_a_notready_members_entry_is_shown():
    why = trace(*cluster(entries={**{n: "Ready" for n in NODES}, "n4": "Error"}, node_kw={"n4": {"ready": False}}))
    n4 = node_of(why, "n4")
    assert n4.blocked_by == "ready" and n4.entry is not None and n4.entry.state == "Error"


def test_the_verdict_when_the_pass_stops_before_the_group():
    why = trace(*cluster(config={"enabled": False, "jobNamespace": JOBS}))
    assert why.verdict.startswith("Ready on ") and "no group has no member" not in why.verdict
    assert not why.lagging  # the aggregate is not reached: nothing to lag behind


def test_an_agent_warning_older_than_the_entry_is_history():
    """The hourly image check's Warning at 08:00, the entry written at 10:00 by a later pass: the pass has run
    since, so the chain goes on to the Job and its pod (the real cause)."""
    old = event("KernelCacheNode", "n1", "default", "ImageValidationError", "x", when="2026-12-01T08:00:00Z")
    items = cluster(old, entries={**{n: "Ready" for n in NODES}, "n1": "Pending"})
    for x in items:
        if x["kind"] == "KernelCacheNode" and x["metadata"]["name"] == "n1":
            x["status"]["cacheStatus"][f"{NS}/{KC}"]["lastUpdate"] = "2026-12-01T10:00:00Z"
    n1 = node_of(trace(*items), "n1")
    assert n1.blocked_by != "agent-pass"
    assert [g.passed for g in n1.gates if g.id == "agent-pass"] == [True]
    # the same Warning newer than the entry holds the node
    for x in items:
        if x["kind"] == "KernelCacheNode" and x["metadata"]["name"] == "n1":
            x["status"]["cacheStatus"][f"{NS}/{KC}"]["lastUpdate"] = "2026-12-01T07:00:00Z"
    assert node_of(trace(*items), "n1").blocked_by == "agent-pass"


def test_a_cordon_the_groups_tolerations_cover_does_not_block_the_job():
    items = cluster(node_kw={"n1": {"unschedulable": True}})
    group = next(x for x in items if x["kind"] == "KernelCacheNodeGroup")
    group["spec"]["tolerations"] = [{"operator": "Exists"}]
    n1 = node_of(trace(*items), "n1")
    assert n1.gates[1].detail == "Ready, cordoned: the group's tolerations let its Job's pod on"
    items = cluster(node_kw={"n1": {"unschedulable": True}})
    assert "cannot be scheduled while it stays cordoned" in node_of(trace(*items), "n1").gates[1].detail
