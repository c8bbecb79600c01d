from kubectl_kcache.checks.cache_status import why_not_ready

from .conftest import drop, load, one, run_check

KC = "qwen-kcc-669889f77f-f84d3ed2f7e88d1c1902c6df"


def test_ready_cache_passes(base):
    result, findings = run_check("cache-status", base)
    assert (result.status, findings) == ("pass", [])


def test_verification_failed():
    result, findings = run_check("cache-status", load("cache-status", "verification-failed.yaml"))
    assert result.status == "fail"
    f = one(findings)
    assert (f.severity, f.object.kind, f.object.namespace, f.object.name, f.group) == (
        "error",
        "KernelCache",
        "team-a",
        KC,
        "h100",
    )
    assert "is in Error: VerificationFailed: kernel cache artifact verification failed" in f.message
    assert "verification Failed, VerifiedDigestMismatch: signed digest sha256:9f0c does not match" in f.message
    assert f.hint == f"kubectl -n team-a get kernelcache {KC} -o 'jsonpath={{.status.verification}}'"


def test_entry_in_error_names_the_node_and_the_job():
    result, findings = run_check("cache-status", load("cache-status", "preparation-failed.yaml"))
    assert result.status == "fail"
    f = one(findings)  # the KernelCache's PreparationFailed is the same fact
    assert (f.severity, f.object.kind, f.object.name, f.group) == ("error", "KernelCacheNode", "gpu-2", "h100")
    assert f"KernelCache team-a/{KC} failed to prepare on node gpu-2: ErrImagePull: 401 Unauthorized" in f.message
    assert f.hint == f"kubectl kcache why-not-ready {KC} -n team-a"
    assert f.evidence[-1] == (
        "Job: kubectl -n kserve-kernelcache-jobs describe job kc-qwen-kcc-669889f77f-f84d-gpu-2-5b4532bc4cf7f262"
    )


def test_groups_and_mount_types():
    result, findings = run_check("cache-status", load("cache-status", "groups-and-mounts.yaml"))
    assert result.status == "fail"
    missing = one(findings, name="gemma-a100")
    assert missing.severity == "error"
    assert "group 'a100' (from spec.nodeGroupRef) does not exist" in missing.message
    assert 'NodeGroupNotFound "referenced KernelCacheNodeGroup was not found"' in missing.message
    not_ready = one(findings, name="gemma-l40s")
    assert not_ready.severity == "warning"
    assert 'Pending/NoReadyNodes "matching nodes are not ready"' in not_ready.message
    pvc = one(findings, name="gemma-pvc")
    assert pvc.severity == "error"
    assert 'unsupported KernelCache mount type "pvc"' in pvc.message
    # gemma-default (defaultNodeGroup) is fine as a group; its members lack its entry (entry-missing, another rule)
    assert not [f for f in findings if f.object.name == "gemma-default" and f.code != "entry-missing"]


def test_entry_that_differs_from_the_cache_is_never_ready_for_admission():
    result, findings = run_check("cache-status", load("cache-status", "stale-entry.yaml"))
    assert result.status == "fail"
    f = one(findings)
    assert (f.severity, f.object.kind, f.object.name) == ("warning", "KernelCacheNode", "gpu-1")
    assert "does not match its artifact, so the pod webhook does not count it until the node's agent" in f.message
    assert "imageReference registry.example.com:5000/team-a/kernel-cache-qwen@sha256:cba06b" in f.message
    # one repository, two digests: the repository is said once in the message, both references whole as evidence
    assert f.message.endswith(
        " instead of digest sha256:2e1901c1cc8da7957c2d23ca52ca94c54ac33bee30a31a93b0801bc03d649999"
    )
    assert f.evidence[0].endswith(
        " instead of registry.example.com:5000/team-a/kernel-cache-qwen@sha256:2e1901c1cc8da7957c2d23ca52ca94c54ac33be"
        "e30a31a93b0801bc03d649999"
    )
    assert f.hint == f"kubectl kcache why-not-ready {KC} -n team-a"
    assert f.evidence[-1] == (
        "agent pod: kubectl -n kserve get pods -l control-plane=kserve-kernelcachenode-agent --field-selector "
        "spec.nodeName=gpu-1"
    )


def test_default_group_is_not_trimmed_for_caches():
    snap = load("cache-status", "groups-and-mounts.yaml", "../config/default-group-spaces.yaml")
    f = one(run_check("cache-status", snap)[1], name="gemma-default")
    assert "group ' h100 ' (from defaultNodeGroup) does not exist (the name has surrounding white space" in f.message
    assert f.hint == "kubectl -n kserve edit configmap inferenceservice-config"


def test_not_applicable_without_caches():
    result, _ = run_check("cache-status", load(without=("caches",)))
    assert (result.status, result.reason) == ("not-applicable", "no KernelCache exists")


def test_ready_member_without_an_entry_while_its_agent_runs():
    """§2.4 B.5, §5.2: KServe makes a Job only for a node whose KernelCacheNode has the cache's entry; a Ready
    member without one counts as preparing, so the cache stays Preparing for good."""
    result, findings = run_check("cache-status", load("cache-status", "entry-missing.yaml"))
    assert result.status == "fail"
    f = one(findings, code="entry-missing")  # gpu-1 has the entry; team-a/fresh is seconds old
    assert (f.severity, f.object.kind, f.object.name, f.group) == ("error", "KernelCache", "gemma", "h100")
    assert f.message.startswith(
        "KernelCacheNode gpu-2 has no entry for KernelCache team-a/gemma, although gpu-2 is a Ready member of "
        "group h100 and its agent pod kserve/kserve-kernelcachenode-agent-9pq7d is Running"
    )
    assert "KServe makes no preparation Job for the node" in f.message and "Preparing for good" in f.message
    assert f.hint == "kubectl kcache why-not-ready gemma -n team-a"
    assert f.evidence == (
        "nodes without the entry (1): gpu-2",
        "agent log: kubectl -n kserve logs kserve-kernelcachenode-agent-9pq7d -c manager",
    )
    assert (f.cause, f.lister) == (
        "KernelCaches have no entry on nodes whose agent runs",
        "kubectl get kernelcachenodes",
    )


def test_no_entry_missing_finding_where_the_agent_does_not_run():
    snap = drop(load("cache-status", "entry-missing.yaml"), "Pod", "kserve-kernelcachenode-agent-9pq7d", "kserve")
    assert [f for f in run_check("cache-status", snap)[1] if f.code == "entry-missing"] == []


def test_error_entry_on_a_not_ready_node_does_not_fail_the_cache():
    """§7.2: the aggregate counts the entries of the group's Ready members only; an Error left on a NotReady
    node does not fail the cache (which is Ready here)."""
    result, findings = run_check("cache-status", load("cache-status", "error-on-not-ready-node.yaml"))
    assert result.status == "pass"
    f = one(findings)
    assert (f.code, f.severity, f.object.kind, f.object.name) == (
        "entry-error-uncounted",
        "info",
        "KernelCacheNode",
        "gpu-2",
    )
    assert f.message == (
        f"KernelCacheNode gpu-2 keeps an Error entry for KernelCache team-a/{KC} (ErrImagePull: 401 Unauthorized), "
        "but node gpu-2 is not Ready: KServe counts the entries of the group's Ready members only, so it does not "
        "fail the cache (the node's agent drops the entry at its next pass)"
    )
    assert f.hint == f"kubectl kcache why-not-ready {KC} -n team-a"


def test_namespace_held_for_good_by_an_unfinished_job_of_a_deleted_cache():
    """§5.2: the Job of deleted team-a/llama never finishes; with the managed binding of team-a KServe requeues
    qwen's pass before status for good, not "until those Jobs finish"."""
    result, findings = run_check("cache-status", load("registry-pull", "orphan-job.yaml"))
    assert result.status == "fail"
    f = one(findings)
    assert (f.code, f.severity, f.object.kind, f.object.name) == ("status-held", "error", "KernelCache", KC)
    assert "left by deleted KernelCaches of namespace team-a have not finished" in f.message
    assert "for team-a/llama, which no longer exists" in f.message and "until those Jobs finish" not in f.message
    assert f.hint == "kubectl -n kserve-kernelcache-jobs delete job kc-llama-gpu-1-4f0c2e9a7b1d3c58"


def test_why_not_ready_only_for_names_kubectl_reads_as_names():
    assert why_not_ready("team-a", KC) == f"kubectl kcache why-not-ready {KC} -n team-a"
    for ns, name in (("team-a", "-o=yaml"), ("Team_A", "qwen"), ("team-a", "a b"), ("", "qwen"), ("team-a", "")):
        assert why_not_ready(ns, name) is None, (ns, name)


def test_preparation_failed_without_a_counted_error_entry_points_to_why_not_ready():
    snap = drop(load("cache-status", "preparation-failed.yaml"), "KernelCacheNode", "gpu-2")
    f = one(run_check("cache-status", snap)[1], code="error-state")
    assert f.hint == f"kubectl kcache why-not-ready {KC} -n team-a"
    assert f.evidence == (
        "preparation: kubectl -n kserve-kernelcache-jobs get jobs,pods -l "
        "serving.kserve.io/kernel-cache-name=qwen-kcc-669889f77f-f84d3ed2f7e88d1c1902c6df",
    )
