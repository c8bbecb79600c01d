from .conftest import TOUCH_H100, load, one, run_check


def test_no_orphans(base):
    result, findings = run_check("kcn-orphaned", base)
    assert (result.status, findings) == ("pass", [])


def test_orphans_are_warnings():
    result, findings = run_check("kcn-orphaned", load("kcn-orphaned", "orphans.yaml"))
    assert result.status == "fail"
    gone = one(findings, name="gpu-9")
    assert (gone.severity, gone.object.kind) == ("warning", "KernelCacheNode")
    assert "KernelCacheNode gpu-9 is orphaned: its Node no longer exists" in gone.message
    assert "(until then the pod webhook may count its 1 Ready entry)" in gone.message
    assert gone.hint == TOUCH_H100
    assert (
        "KServe's node pass runs on KernelCacheNodeGroup, Node and inferenceservice-config changes, not on "
        "KernelCacheNode or DaemonSet changes"
    ) in gone.message
    assert "kubectl kcache reconcile --once" in gone.message
    cpu = one(findings, name="cpu-1")
    assert "KernelCacheNode cpu-1 is orphaned: its Node matches no KernelCacheNodeGroup" in cpu.message


def test_all_orphaned_when_no_group_exists():
    result, findings = run_check("kcn-orphaned", load(without=("groups",)))
    assert result.status == "fail"
    assert sorted(f.object.name for f in findings) == ["gpu-1", "gpu-2", "l40s-1"]


def test_empty_selector_means_kserve_deletes_none():
    result, _ = run_check("kcn-orphaned", load("kcn-orphaned", "orphans.yaml", "../group-selector/empty-selector.yaml"))
    assert result.status == "not-applicable"
    assert "KServe would not delete any KernelCacheNode" in result.reason
