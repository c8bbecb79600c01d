"""The preparation Job the agent reads and the entry it writes from it (`preparation.go@11588949`:
getPreparationJob, getPreparationPodFailure, preparationState)."""

from __future__ import annotations

from kubectl_kcache.kernelcache import preparation as prep
from kubectl_kcache.snapshot.model import build
from tests import builders as b
from tests.unit.explain.test_why_not_ready import JOBS, KC, NS, job, job_pod


def one_job(**state):
    return build([job("n1", **state)]).jobs[0]


def test_no_job_keeps_ready_with_kserves_message_else_pending():
    assert (
        prep.preparation(None, (), (), "Ready").entry_state,
        prep.preparation(None, (), (), "Ready").entry_message,
    ) == (
        "Ready",
        "OCI artifact was prefetched on the node",
    )
    p = prep.preparation(None, (), (), "Pulling")
    assert (p.entry_state, p.entry_message) == ("Pending", "waiting for the OCI prefetch Job")


def test_not_started_needs_no_start_time_and_no_active_pod():
    j = job("n1", started=False)
    p = prep.preparation(build([j]).jobs[0], (), ())
    assert (p.state, p.entry_state, p.entry_message) == (
        "not-started",
        "Pulling",
        "waiting for the OCI prefetch Job to start",
    )
    j["status"]["active"] = 1
    p = prep.preparation(build([j]).jobs[0], (), ())
    assert (p.state, p.entry_message) == ("running", "OCI artifact is being prefetched")


def test_the_newest_job_of_the_node_for_the_current_artifact():
    old = job("n1", created="2026-12-01T09:00:00Z")
    new = job("n1", created="2026-12-01T11:00:00Z")
    new["metadata"]["name"] += "-new"
    stale = job("n1", seed="other", created="2026-12-01T12:00:00Z")
    stale["metadata"]["labels"]["serving.kserve.io/kernel-cache-name"] = KC
    other_node = job("n2", created="2026-12-01T13:00:00Z")
    snap = build([old, new, stale, other_node, b.kernel_cache(KC, NS, "gpu")])
    found = prep.agent_job(snap.jobs, snap.kernel_caches[0], "n1", JOBS)
    assert found is not None and found.meta.name == new["metadata"]["name"]


def test_a_complete_job_is_ready_whatever_its_pods_did():
    j = job("n1", complete=True)
    pods = build([job_pod(j, "a", phase="Failed", waiting=("ErrImagePull", "x"))]).pods
    p = prep.preparation(build([j]).jobs[0], pods, ())
    assert (p.state, p.entry_state, p.failure) == ("complete", "Ready", None)


def test_refusal_reason_drops_the_pod_name_of_the_try():
    msg = 'Error creating: pods "kc-a-n1-0123-x7k2p" is forbidden: violates PodSecurity "restricted:latest": x'
    assert prep.refusal_reason(msg) == 'violates PodSecurity "restricted:latest": x'
    assert prep.refusal_reason("Error creating: quota exceeded") == "quota exceeded"


def test_a_job_holds_the_namespace_until_it_has_a_complete_or_failed_condition_of_any_status():
    """isPrefetchJobTerminal (prefetch_auth.go@6ca99b0c) looks at the condition's type only."""
    j = job("n1")
    j["status"]["conditions"] = [{"type": "Failed", "status": "False"}]
    assert prep.job_finished(build([j]).jobs[0])
    j["status"]["conditions"] = [{"type": "Suspended", "status": "True"}]
    assert not prep.job_finished(build([j]).jobs[0])
