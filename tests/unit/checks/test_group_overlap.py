from .conftest import load, one, run_check


def test_disjoint_groups_pass(base):
    result, findings = run_check("group-overlap", base)
    assert (result.status, findings) == ("pass", [])


def test_nodes_in_several_groups_are_warnings():
    result, findings = run_check("group-overlap", load("group-overlap", "overlap.yaml"))
    assert result.status == "fail"
    assert sorted(f.object.name for f in findings) == ["gpu-1", "gpu-2", "l40s-1"]
    f = one(findings, name="gpu-1")
    assert (f.severity, f.object.kind) == ("warning", "Node")
    assert "matches several node groups: gpu-all, h100" in f.message
    assert "AmbiguousNodeGroup" in f.message and "serving.kserve.io/kernelcache-nodegroup" in f.message
    assert f.hint == "kubectl get nodes -l nvidia.com/gpu.present=true,nvidia.com/gpu.product=NVIDIA-H100"


def test_error_when_a_complete_capture_is_blocked_by_it():
    _, findings = run_check("group-overlap", load("group-overlap", "overlap.yaml", "blocked-capture.yaml"))
    f = one(findings, name="gpu-1")
    assert f.severity == "error"
    # one blocked capture is counted in the message and named by the next command and the evidence
    assert f.message.endswith("; 1 is blocked now")
    assert f.hint == "kubectl kcache why-group --capture llama-kcc-7d9f8c6b5 -n team-a"
    assert "blocked capture: team-a/llama-kcc-7d9f8c6b5" in f.evidence
    assert one(findings, name="gpu-2").severity == "warning"


def test_not_applicable_with_one_group():
    from .conftest import drop

    result, _ = run_check("group-overlap", drop(load(), "KernelCacheNodeGroup", "l40s"))
    assert result.status == "not-applicable"
