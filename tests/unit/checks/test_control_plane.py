from kubectl_kcache.checks import run_doctor

from .conftest import drop, load, one, run_check, with_reads


def test_ready_controller_and_webhook_pass(base):
    result, findings = run_check("control-plane", base)
    assert (result.status, findings) == ("pass", [])


def test_controller_not_ready_blocks_pods_and_comes_first():
    snap = load("control-plane", "controller-not-ready.yaml")
    result, findings = run_check("control-plane", snap)
    assert result.status == "fail"
    f = one(findings)  # the Service finding is folded into the Deployment's evidence
    assert f.severity == "error"
    assert (f.object.kind, f.object.namespace, f.object.name) == (
        "Deployment",
        "kserve",
        "kserve-localmodel-controller-manager",
    )
    assert "is not ready (0/1 replicas ready)" in f.message
    assert "pods of InferenceServices with the kernel cache annotation" in f.message
    assert "failurePolicy is Fail" in f.message
    assert "Available=False: MinimumReplicasUnavailable: Deployment does not have minimum availability." in f.evidence
    assert f.hint == "kubectl -n kserve describe deployment kserve-localmodel-controller-manager"
    report = run_doctor(load("control-plane", "controller-not-ready.yaml", "../config/default-group-missing.yaml"))
    assert [x.check for x in report.findings][0] == "control-plane"
    # the capture status webhook is served by the same controller: its Service has no endpoints either
    assert {x.check for x in report.findings} == {"control-plane", "config", "capture-webhook"}


def test_missing_controller(base):
    _, findings = run_check("control-plane", drop(base, "Deployment", "kserve-localmodel-controller-manager", "kserve"))
    f = one(findings)
    assert "is missing" in f.message and "failurePolicy is Fail" in f.message


def test_webhook_service_without_ready_endpoints():
    _, findings = run_check("control-plane", load("control-plane", "endpoints-not-ready.yaml"))
    f = one(findings)
    assert (f.object.kind, f.object.name) == ("Service", "localmodel-webhook-server-service")
    assert "has no ready endpoints" in f.message
    assert f.hint == (
        "kubectl -n kserve get endpointslices -l kubernetes.io/service-name=localmodel-webhook-server-service"
    )


def test_endpoints_not_judged_when_forbidden():
    snap = with_reads(load("control-plane", "endpoints-not-ready.yaml"), ("endpointslices", "kserve", "forbidden"))
    result, findings = run_check("control-plane", snap)
    assert findings == []
    assert result.status == "pass"
    assert "partial: forbidden: list endpointslices in kserve" in result.reason


def test_webhook_without_ca_bundle():
    _, findings = run_check("control-plane", load("control-plane", "no-ca-bundle.yaml"))
    f = one(findings)
    assert f.object.kind == "MutatingWebhookConfiguration"
    assert "has no caBundle" in f.message
    assert "failurePolicy is Fail" in f.message


def test_missing_webhook_configuration(base):
    snap = drop(base, "MutatingWebhookConfiguration", "kernelcache.serving.kserve.io")
    _, findings = run_check("control-plane", snap)
    assert "is not installed" in one(findings).message


def test_recent_webhook_denials_are_errors_with_the_message():
    _, findings = run_check("control-plane", load("control-plane", "denied.yaml"))
    f = one(findings)  # the 3-hour-old denial and the quota failure are not reported
    assert (f.object.kind, f.object.namespace, f.object.name) == ("ReplicaSet", "team-a", "qwen-predictor-669889f77f")
    assert f.severity == "error"
    assert (
        'admission webhook "kernelcache.kserve-webhook-server.pod-mutator" denied the request: '
        "kernelcache.registry.endpoint is required when no KernelCacheCapture target is configured"
    ) in f.message
    assert "(14x, last at 2026-11-29T09:50:00Z)" in f.message
    assert f.hint == "kubectl -n team-a describe replicaset qwen-predictor-669889f77f"


def test_not_applicable_when_disabled_and_no_webhook(base):
    snap = drop(
        load("control-plane", "disabled-no-webhook.yaml"),
        "MutatingWebhookConfiguration",
        "kernelcache.serving.kserve.io",
    )
    result, findings = run_check("control-plane", snap)
    assert result.status == "not-applicable"
    assert findings == []


def test_disabled_feature_with_webhook_still_checked():
    snap = load("control-plane", "disabled-no-webhook.yaml", "controller-not-ready.yaml")
    result, findings = run_check("control-plane", snap)
    assert result.status == "fail"
    assert "failurePolicy is Fail" in one(findings).message
