from .conftest import drop, load, one, run_check, with_reads

JOB = "kc-qwen-kcc-669889f77f-f84d-gpu-2-5b4532bc4cf7f262"
KC = "qwen-kcc-669889f77f-f84d3ed2f7e88d1c1902c6df"


def test_no_failing_preparation_passes(base):
    result, findings = run_check("registry-pull", base)
    assert (result.status, findings) == ("pass", [])


def test_failed_job_carries_its_condition_message_and_its_pods_are_not_judged():
    """§2.2: the agent reads no pod of a Failed Job; the entry is Error with the Job's condition message. The
    pod pulling with 401 is not judged (it would say the agent marks the entry Error with the pull message)."""
    result, findings = run_check("registry-pull", load("registry-pull", "failed-job.yaml"))
    assert result.status == "fail"
    job = one(findings)  # the Job for the older artifact is ignored; the Failed Job's pod is not judged
    assert (job.severity, job.object.kind, job.object.namespace, job.object.name) == (
        "error",
        "Job",
        "kserve-kernelcache-jobs",
        JOB,
    )
    assert job.message.startswith("preparation Job on node gpu-2 failed (")
    # the next command names the KernelCache; the message does not say it again
    assert "for KernelCache" not in job.message
    assert (
        "failed (BackoffLimitExceeded: Job has reached the specified backoff limit): the node's cache entry is "
        "Error with that message, whatever its pods said"
    ) in job.message
    assert "KServe creates the Job again only after its TTL deletes it" in job.message
    assert "ttlSecondsAfterFinished 600s, due at 2026-11-29T10:05:00Z" in job.message
    assert job.hint == "kubectl kcache why-not-ready qwen-kcc-669889f77f-f84d3ed2f7e88d1c1902c6df -n team-a"
    assert f"retry now: kubectl -n kserve-kernelcache-jobs delete job {JOB}" in job.evidence


def test_pods_of_a_complete_job_are_not_judged():
    """§2.2: a Complete Job gives Ready even if an earlier pod failed and was retried."""
    result, findings = run_check("registry-pull", load("registry-pull", "complete-retried.yaml"))
    assert (result.status, findings) == ("pass", [])


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
        "preparation pod on node gpu-1 failed (it was evicted): "
        "The node was low on resource: ephemeral-storage.; the node's agent marks its entry "
        'Error with "The node was low on resource: ephemeral-storage."'
    )
    exited = one(findings, name="kc-qwen-gpu-2-exited")
    assert exited.code == "pod-exited" and "exited with code 1 (phase Running)" in exited.message
    assert 'marks its entry Error with "Error"' in exited.message
    failed = one(findings, name="kc-qwen-gpu-3-failed")
    assert failed.code == "pod-failed" and failed.message.endswith('with "preparation Pod failed"')


GPU1_JOB = "kc-qwen-kcc-669889f77f-f84d-gpu-1-0c1e6a2f9d4b7a31"


def test_job_that_never_gets_a_pod():
    """§2.2: a Job whose pods are refused (FailedCreate on the Job, no pod) or that stays suspended keeps the
    entry Pulling for good; KServe does not watch Jobs and makes none while one of that name exists."""
    result, findings = run_check("registry-pull", load("registry-pull", "job-no-pod.yaml"))
    assert result.status == "fail"
    refused = one(findings, code="job-pod-refused")
    assert (refused.severity, refused.object.kind, refused.object.name) == ("error", "Job", GPU1_JOB)
    assert refused.message.startswith(
        "preparation Job on node gpu-1 has no pod: the Job controller's pod creation is refused (FailedCreate: "
        'Error creating: pods "kc-qwen-kcc-669889f77f-f84d-gpu-1-0c1e6a2f9d4b7a31-q9z7p" is forbidden: violates '
        'PodSecurity "restricted:latest"'
    )  # the newest event first
    assert (
        '): the node\'s entry stays Pulling "OCI artifact is being prefetched" and the '
        "KernelCache Preparing for good: KServe does not watch Jobs and creates no Job while one of this name "
        "exists, so nothing changes by itself; fix the refusal, then delete the Job (KServe makes it again)"
    ) in refused.message
    assert refused.hint == f"kubectl kcache why-not-ready {KC} -n team-a"
    assert refused.evidence[-1] == f"then: kubectl -n kserve-kernelcache-jobs delete job {GPU1_JOB}"
    assert "exceeded quota: jobs-quota" in refused.evidence[0]
    suspended = one(findings, code="job-suspended")
    assert (suspended.severity, suspended.object.name) == ("error", JOB)
    assert suspended.message.startswith(
        "preparation Job on node gpu-2 is suspended (spec.suspend: true) and has not started: "
        'the node\'s entry stays Pulling "waiting for the OCI prefetch Job to start"'
    )
    assert suspended.evidence == (
        f"resume: kubectl -n kserve-kernelcache-jobs patch job {JOB} --type=merge -p "
        '\'{"spec":{"suspend":false}}\'',
    )


def test_refusals_are_not_seen_without_the_jobs_warning_events():
    snap = with_reads(load("registry-pull", "job-no-pod.yaml"), ("events", "kserve-kernelcache-jobs", "forbidden"))
    result, findings = run_check("registry-pull", snap)
    assert [f.code for f in findings] == ["job-suspended"]
    assert "pods refused to preparation Jobs not seen" in result.reason


ORPHAN = "kc-llama-gpu-1-4f0c2e9a7b1d3c58"


def test_unfinished_job_of_a_deleted_cache_holds_the_namespace():
    """§5.2: preparation Jobs have no owner; one left by a deleted KernelCache and stuck never terminates, and
    with a managed binding in its namespace it requeues every KernelCache pass of the namespace for good. Its
    pod marks no entry: the agents dropped the deleted cache's entries."""
    result, findings = run_check("registry-pull", load("registry-pull", "orphan-job.yaml"))
    assert result.status == "fail"
    f = one(findings)  # the pod in ImagePullBackOff is not judged
    assert (f.code, f.severity, f.object.kind, f.object.namespace, f.object.name) == (
        "job-orphan",
        "error",
        "Job",
        "kserve-kernelcache-jobs",
        ORPHAN,
    )
    assert f.message.startswith(
        f"preparation Job kserve-kernelcache-jobs/{ORPHAN} on node gpu-1 was made for KernelCache team-a/llama, "
        f"which no longer exists, and has not finished (pod {ORPHAN}-p2x7q: Back-off pulling image"
    )
    assert (
        "with the managed RoleBinding team-a/kernel-cache-prefetcher-rb, KServe requeues every KernelCache pass of "
        "namespace team-a every minute before it creates Jobs or writes status, for good"
    ) in f.message
    assert "lag" not in f.message and "marks its entry" not in f.message
    assert f.hint == f"kubectl -n kserve-kernelcache-jobs delete job {ORPHAN}"


def test_unfinished_job_of_a_deleted_cache_without_a_managed_binding_holds_nothing():
    snap = drop(load("registry-pull", "orphan-job.yaml"), "RoleBinding", "kernel-cache-prefetcher-rb", "team-a")
    result, findings = run_check("registry-pull", snap)
    f = one(findings)
    assert (f.code, f.severity, result.status) == ("job-orphan", "info", "pass")
    assert "it holds no KernelCache pass while namespace team-a has no managed RoleBinding" in f.message


def test_jobs_are_not_called_orphans_when_the_caches_were_not_read():
    snap = with_reads(load("registry-pull", "orphan-job.yaml"), ("kernelcaches", None, "forbidden"))
    _, findings = run_check("registry-pull", snap)
    pod = one(findings)
    assert (pod.code, pod.object.kind) == ("pod-cannot-start", "Pod")
    # the KernelCache is not known: no why-not-ready, the pod's own command
    assert pod.hint == f"kubectl -n kserve-kernelcache-jobs describe pod {ORPHAN}-p2x7q"


def test_binding_subject_in_an_older_job_namespace_is_not_an_error():
    """prefetch_auth.go@6ca99b0c: the subject's namespace is not checked; KServe patches it once no prefetch
    Job of the namespace runs."""
    result, findings = run_check("registry-pull", load("registry-pull", "rb-old-namespace.yaml"))
    assert result.status == "pass"
    f = one(findings)
    assert (f.code, f.severity) == ("prefetcher-rb-moving", "info")
    assert f.message == (
        "managed RoleBinding team-a/kernel-cache-prefetcher-rb binds ServiceAccount "
        "kernelcache-jobs-old/kernel-cache-prefetcher-sa, not the one in the job namespace kserve-kernelcache-jobs: "
        "KServe deletes the binding (auth none) once no prefetch Job of namespace team-a runs; not an error"
    )


def test_binding_with_a_second_subject_is_an_error():
    result, findings = run_check("registry-pull", load("registry-pull", "rb-two-subjects.yaml"))
    assert result.status == "fail"
    f = one(findings)
    assert (f.code, f.severity, f.object.namespace) == ("prefetcher-rb-subject", "error", "team-a")
    assert f.message.startswith(
        "managed RoleBinding team-a/kernel-cache-prefetcher-rb has an unexpected ServiceAccount subject (KServe "
        "wants exactly one subject"
    )
    assert "every KernelCache in team-a fails with this StorageError" in f.message
    assert f.evidence == (
        "subject: ServiceAccount kserve-kernelcache-jobs/kernel-cache-prefetcher-sa",
        "subject: ServiceAccount team-a/debug",
    )
