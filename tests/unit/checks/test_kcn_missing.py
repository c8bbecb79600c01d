from .conftest import TOUCH_H100, drop, load, one, run_check


def test_every_member_has_a_kcn(base):
    result, findings = run_check("kcn-missing", base)
    assert (result.status, findings) == ("pass", [])


def test_member_without_kcn_is_an_error(base):
    result, findings = run_check("kcn-missing", drop(base, "KernelCacheNode", "gpu-2"))
    assert result.status == "fail"
    f = one(findings)
    assert (f.severity, f.object.kind, f.object.name, f.group) == ("error", "Node", "gpu-2", "h100")
    assert "has no KernelCacheNode" in f.message
    assert f.hint == TOUCH_H100
    assert (
        "KServe's node pass runs on KernelCacheNodeGroup, Node and inferenceservice-config changes, not on "
        "KernelCacheNode or DaemonSet changes"
    ) in f.message
    assert "kubectl kcache reconcile --once" in f.message
    assert f.evidence == ()


def test_missing_daemonset_is_named_as_the_cause(base):
    snap = drop(drop(base, "KernelCacheNode", "gpu-2"), "DaemonSet", "kserve-kernelcachenode-agent", "kserve")
    f = one(run_check("kcn-missing", snap)[1])
    assert "DaemonSet kserve/kserve-kernelcachenode-agent is missing" in f.evidence[0]


def test_empty_selector_means_kserve_creates_none():
    snap = drop(load("kcn-missing", "empty-selector.yaml"), "KernelCacheNode", "gpu-2")
    result, findings = run_check("kcn-missing", snap)
    assert result.status == "not-applicable"
    assert "KServe would not create any KernelCacheNode" in result.reason
    assert 'KernelCacheNodeGroup "broken" requires a non-empty nodeSelector' in result.reason
    assert findings == []
