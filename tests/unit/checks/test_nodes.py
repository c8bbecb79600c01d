from .conftest import load, one, run_check


def test_ready_schedulable_recent_nodes_pass(base):
    result, findings = run_check("nodes", base)
    assert (result.status, findings) == ("pass", [])


def test_not_ready_cordoned_and_old_kubelet():
    result, findings = run_check("nodes", load("nodes", "unhealthy.yaml"))
    assert result.status == "fail"
    assert {f.severity for f in findings} == {"warning"}
    cordoned = one(findings, name="gpu-1")
    assert "is cordoned" in cordoned.message and "preparation Jobs cannot be scheduled" in cordoned.message
    assert cordoned.hint == "kubectl uncordon gpu-1"
    assert cordoned.group == "h100"
    not_ready = one(findings, name="gpu-2")
    assert "is NotReady (KubeletNotReady: container runtime network not ready" in not_ready.message
    assert "excludes it from preparation" in not_ready.message
    assert not_ready.hint == "kubectl describe node gpu-2"
    old = one(findings, name="l40s-1")
    assert "kubelet v1.30.6, older than v1.31" in old.message and "image volumes" in old.message
    assert old.group == "l40s"


def test_kubelets_before_default_image_volumes_are_info_per_group():
    result, findings = run_check("nodes", load("nodes", "gated-kubelets.yaml"))
    assert result.status == "pass"
    f = one(findings)
    assert (f.severity, f.object.kind, f.object.name) == ("info", "KernelCacheNodeGroup", "h100")
    assert "2 member nodes of h100" in f.message and "ImageVolume feature gate" in f.message
