from .conftest import load, one, run_check


def test_linked_complete_capture_passes(base):
    result, findings = run_check("capture", base)
    assert (result.status, findings) == ("pass", [])


def test_selection_failures_carry_kserves_reason_and_message():
    snap = load("capture", "selection.yaml", "../group-overlap/overlap.yaml")
    result, findings = run_check("capture", snap)
    assert result.status == "fail"
    ambiguous = one(findings, name="llama-kcc-7d9f8c6b5")
    assert (ambiguous.severity, ambiguous.object.kind, ambiguous.object.namespace) == (
        "error",
        "KernelCacheCapture",
        "team-b",
    )
    assert (
        "KServe cannot select a node group (AmbiguousNodeGroup: producer node gpu-1 matches multiple node groups: "
        "gpu-all, h100; set serving.kserve.io/kernelcache-nodegroup)"
    ) in ambiguous.message
    assert ambiguous.hint == "kubectl kcache why-group --capture llama-kcc-7d9f8c6b5 -n team-b"
    requested = one(findings, name="mistral-kcc-5c4b3a2d1")
    assert 'InvalidRequestedNodeGroup: KernelCacheNodeGroup "a100" was not found' in requested.message
    missing_kc = one(findings, name="phi-kcc-8e7d6c5b4")
    assert missing_kc.severity == "warning"
    assert (
        "KServe would create team-b/phi-kcc-8e7d6c5b4-85f92fe5506ba28c25f9f196 for group h100 (source default)"
        in missing_kc.message
    )
    assert missing_kc.group == "h100"
    assert missing_kc.hint == "kubectl kcache reconcile --once"


def test_no_default_group():
    snap = load("capture", "selection.yaml", "../control-plane/disabled-no-webhook.yaml")
    from dataclasses import replace

    from kubectl_kcache.objects import ConfigMap

    cm = ConfigMap.from_dict(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "inferenceservice-config", "namespace": "kserve"},
            "data": {"kernelcache": '{"enabled": true}'},
        }
    )
    snap = replace(snap, configmaps=(cm,))
    f = one(run_check("capture", snap)[1], name="phi-kcc-8e7d6c5b4")
    assert f.severity == "error"
    assert (
        "NoMatchingNodeGroup: no node group matched the producer node and no defaultNodeGroup is configured"
        in f.message
    )


def test_signing_failed_and_missing():
    result, findings = run_check("capture", load("capture", "signing.yaml"))
    assert result.status == "fail"
    failed = one(findings, name="granite-kcc-6f5e4d3c2")
    assert failed.severity == "error"
    assert (
        "artifact signing failed (SignerUnavailable: signer kserve/kernelcache-signer is not ready)" in failed.message
    )
    assert "creates no KernelCache" in failed.message
    missing = one(findings, name="falcon-kcc-3b2a1f0e9")
    assert missing.severity == "warning"
    assert "Complete without status.signing" in missing.message


def test_failed_stuck_stale_and_requested_group():
    result, findings = run_check("capture", load("capture", "progress.yaml"))
    assert result.status == "fail"
    failed = one(findings, name="bloom-kcc-1a2b3c4d5")
    assert failed.severity == "warning"
    assert "Failed: CaptureFailed: torch.compile failed: CUDA out of memory" in failed.message
    stuck = one(findings, name="opt-kcc-2b3c4d5e6")
    assert "is stuck in Pushing since 2026-11-29T07:00:00Z, over an hour" in stuck.message
    assert stuck.hint == "kubectl -n team-b logs opt-predictor-2b3c4d5e6-x7k2p -c mcv"
    # §5.3: the status carries no cause of a stalled push: the identities to check, by their exact names
    from kubectl_kcache.kernelcache.names import reporter_name

    assert (
        f"check the reporter identity (ServiceAccount, Role, RoleBinding and Secret "
        f"{reporter_name('opt-kcc-2b3c4d5e6')}), the RoleBinding kserve-kernelcache-token-requester in team-b"
        in stuck.message
    )
    assert not [f for f in findings if f.object.name == "t5-kcc-3c4d5e6f7"]  # capturing for 10 minutes
    stale = one(findings, name="bert-kcc-4d5e6f7a8")
    assert "stale reporter" in stale.message and "bert-predictor-4d5e6f7a8-old11" in stale.message
    requested = next(f for f in findings if f.object.name == "qwen3-kcc-5e6f7a8b9" and "requests group" in f.message)
    assert requested.severity == "warning"
    assert "requests group h100" in requested.message and "producer's node l40s-1" in requested.message
    assert requested.hint == "kubectl kcache why-group --capture qwen3-kcc-5e6f7a8b9 -n team-b"


def test_not_applicable_without_captures():
    result, _ = run_check("capture", load(without=("caches",)))
    assert (result.status, result.reason) == ("not-applicable", "no KernelCacheCapture exists")
