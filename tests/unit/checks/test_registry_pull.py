from .conftest import drop, load, one, run_check, with_reads

JOB = "kc-qwen-kcc-669889f77f-f84d-gpu-2-5b4532bc4cf7f262"


def test_no_failing_preparation_passes(base):
    result, findings = run_check("registry-pull", base)
    assert (result.status, findings) == ("pass", [])


def test_failed_job_and_pull_error():
    result, findings = run_check("registry-pull", load("registry-pull", "failed-job.yaml"))
    assert result.status == "fail"
    job = one(findings, kind="Job")  # the Job for the older artifact is ignored
    assert (job.severity, job.object.namespace, job.object.name) == ("error", "kserve-kernelcache-jobs", JOB)
    assert job.message.startswith("preparation Job on node gpu-2 failed (")
    assert "): for KernelCache team-a/qwen-kcc-669889f77f-f84d3ed2f7e88d1c1902c6df; the node's" in job.message
    assert "BackoffLimitExceeded: Job has reached the specified backoff limit" in job.message
    assert "does not create the Job again" in job.message
    assert "ttlSecondsAfterFinished 600s, due at 2026-11-29T10:05:00Z" in job.message
    assert job.hint == f"kubectl -n kserve-kernelcache-jobs delete job {JOB}"
    pod = one(findings, kind="Pod")
    assert pod.severity == "error"
    assert "container kernel-cache-prefetch is waiting" in pod.message
    assert "ErrImagePull: failed to pull and unpack image" in pod.message and "401 Unauthorized" in pod.message
    assert pod.hint == f"kubectl -n kserve-kernelcache-jobs describe pod {JOB}-7xq2n"


def test_unmanaged_prefetcher_service_account_and_old_role_binding():
    result, findings = run_check("registry-pull", load("registry-pull", "sa-token.yaml"))
    assert result.status == "fail"
    sa = one(findings, kind="ServiceAccount")
    assert sa.severity == "error"
    assert (
        "reserved ServiceAccount kserve-kernelcache-jobs/kernel-cache-prefetcher-sa already exists and is not "
        "managed by KernelCache"
    ) in sa.message
    assert sa.hint.startswith("kubectl -n kserve-kernelcache-jobs delete serviceaccount kernel-cache-prefetcher-sa")
    rb = one(findings, kind="RoleBinding")
    assert (rb.severity, rb.object.namespace) == ("warning", "team-a")
    assert (
        "binds ClusterRole/registry-puller-v1, not registry.auth.pullRoleRef ClusterRole/registry-puller" in rb.message
    )


def test_managed_service_account_must_disable_automount():
    _, findings = run_check("registry-pull", load("registry-pull", "sa-token.yaml", "sa-automount.yaml"))
    f = one(findings)
    assert (
        "managed ServiceAccount kserve-kernelcache-jobs/kernel-cache-prefetcher-sa must disable token automount"
        in f.message
    )
    assert f.hint == (
        "kubectl -n kserve-kernelcache-jobs patch serviceaccount kernel-cache-prefetcher-sa -p "
        "'{\"automountServiceAccountToken\":false}'"
    )


def test_malformed_endpoint():
    _, findings = run_check("registry-pull", load("registry-pull", "bad-endpoint.yaml"))
    f = one(findings)
    assert (f.severity, f.object.kind) == ("error", "ConfigMap")
    assert "registry.endpoint 'https://registry.example.com/v2' is not a registry host with optional port" in f.message


def test_skipped_when_jobs_are_forbidden(base):
    snap = with_reads(base, ("jobs", "kserve-kernelcache-jobs", "forbidden"))
    result, findings = run_check("registry-pull", snap)
    assert result.status == "skipped"
    assert result.reason == "forbidden: list jobs in kserve-kernelcache-jobs"
    assert findings == []


def test_prefetcher_identity_is_checked_with_auth_none():
    """prefetch_auth.go@6ca99b0c ensures kernel-cache-prefetcher-sa for every auth type: an unmanaged one is
    every KernelCache's StorageError with auth none too; an unmanaged kernel-cache-prefetcher-rb is ignored
    then (KServe does not touch it)."""
    result, findings = run_check("registry-pull", load("registry-pull", "auth-none-identities.yaml"))
    assert result.status == "fail"
    sa = one(findings, kind="ServiceAccount")
    assert sa.code == "prefetcher-sa-unmanaged"
    assert (
        "reserved ServiceAccount kserve-kernelcache-jobs/kernel-cache-prefetcher-sa already exists and is not "
        "managed by KernelCache"
    ) in sa.message
    assert [f for f in findings if f.object.kind == "RoleBinding"] == []


def test_missing_prefetcher_service_account_with_auth_none(base):
    snap = drop(base, "ServiceAccount", "kernel-cache-prefetcher-sa", "kserve-kernelcache-jobs")
    f = one(run_check("registry-pull", snap)[1])
    assert f.code == "prefetcher-sa-missing" and "for every registry auth type" in f.message


def test_preparation_pod_failures_as_the_agent_reads_them():
    """failedPodMessage (preparation.go@11588949): a non-zero exit in any phase, the pod's status message
    (an eviction), then `preparation Pod failed` for phase Failed."""
    _, findings = run_check("registry-pull", load("registry-pull", "evicted.yaml"))
    evicted = one(findings, name="kc-qwen-gpu-1-evicted")
    assert evicted.code == "pod-failed"
    assert evicted.message == (
        "preparation pod on node gpu-1 failed (it was evicted): for KernelCache team-a/qwen; "
        "The node was low on resource: ephemeral-storage.; the node's agent marks its entry "
        'Error with "The node was low on resource: ephemeral-storage."'
    )
    exited = one(findings, name="kc-qwen-gpu-2-exited")
    assert exited.code == "pod-exited" and "exited with code 1 (phase Running)" in exited.message
    assert 'marks its entry Error with "Error"' in exited.message
    failed = one(findings, name="kc-qwen-gpu-3-failed")
    assert failed.code == "pod-failed" and failed.message.endswith('with "preparation Pod failed"')
