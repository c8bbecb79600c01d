from .conftest import load, one, run_check, with_reads


def test_kserves_webhook_passes(base):
    result, findings = run_check("webhook", base)
    assert (result.status, findings) == ("pass", [])


def test_namespace_excluded_by_the_namespace_selector():
    result, findings = run_check("webhook", load("webhook", "namespace-excluded.yaml"))
    assert result.status == "fail"
    f = one(findings)
    assert (f.severity, f.object.kind, f.object.name) == ("error", "Namespace", "team-a")
    assert f.message == (
        "namespace team-a does not match the pod webhook's namespaceSelector !control-plane: its pods are never "
        "sent to the webhook, so they are never cached or captured (KernelCache "
        "qwen-kcc-669889f77f-f84d3ed2f7e88d1c1902c6df, pod qwen-predictor-669889f77f-x7k2p)"
    )
    assert f.hint == "kubectl label namespace team-a control-plane-"
    assert f.evidence == ("label control-plane=tenant",)


def test_namespaces_not_read_are_not_judged():
    snap = with_reads(load("webhook", "namespace-excluded.yaml"), ("namespaces", None, "forbidden"))
    result, findings = run_check("webhook", snap)
    assert findings == [] and "partial: forbidden: list namespaces" in result.reason


def test_misconfigured_webhook():
    _, findings = run_check("webhook", load("webhook", "misconfigured.yaml"))
    rule = one(findings, severity="error", kind="MutatingWebhookConfiguration")
    assert "has no rule for CREATE of v1 pods: the API server never calls it" in rule.message
    ignore = one(findings, severity="warning", message=next(f.message for f in findings if "Ignore" in f.message))
    assert "while it cannot be reached, pods are created without their kernel cache" in ignore.message
    sidecar = next(f for f in findings if "names serving.kserve.io/kernelcache-sidecar-injection" in f.message)
    assert sidecar.severity == "warning"
    pod = one(findings, kind="Pod")
    assert pod.message == (
        "pod team-a/qwen-predictor-669889f77f-x7k2p opts in to the kernel cache but its labels do "
        "not match the webhook's objectSelector kernel-cache=enabled: it is never sent to the "
        "webhook"
    )
    assert pod.hint == "kubectl get mutatingwebhookconfiguration kernelcache.serving.kserve.io -o yaml"


def test_match_condition_that_excludes_serving_pods():
    _, findings = run_check("webhook", load("webhook", "match-condition.yaml"))
    f = one(findings)
    assert f.message.startswith(
        "pod team-a/qwen-predictor-669889f77f-x7k2p opts in to the kernel cache but matchCondition gpu-workloads"
    )


def test_not_applicable_without_the_webhook(base):
    from .conftest import drop

    result, _ = run_check("webhook", drop(base, "MutatingWebhookConfiguration", "kernelcache.serving.kserve.io"))
    assert result.status == "not-applicable" and "see check control-plane" in result.reason
