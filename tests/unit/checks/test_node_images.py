from .conftest import load, one, run_check

KC = "team-a/qwen-kcc-669889f77f-f84d3ed2f7e88d1c1902c6df"


def test_base_passes(base):
    result, findings = run_check("node-images", base)
    assert (result.status, findings) == ("pass", [])


def test_artifact_cut_off_the_nodes_image_list():
    result, findings = run_check("node-images", load("node-images", "truncated.yaml", "completed-job.yaml"))
    assert result.status == "fail"
    assert [f.object.name for f in findings] == ["gpu-1", "gpu-2"]
    f = one(findings, name="gpu-1")
    assert f.severity == "warning"
    assert (
        "Node gpu-1 lists 50 images in status.images, the kubelet's limit (nodeStatusMaxImages, 50 by default, "
        "largest first; the smallest listed is 11.0 GB)"
    ) in f.message
    assert f"the kernel cache artifacts of {KC} (Pending) are not listed" in f.message
    assert "Raise nodeStatusMaxImages in the kubelet configuration of these nodes (-1: no limit)" in f.message
    assert f.hint == "kubectl get --raw /api/v1/nodes/gpu-1/proxy/configz"
    assert f.evidence == ("status.images: 50 images", f"not listed: {KC} (Pending)")
    assert f"{KC} (Ready)" in one(findings, name="gpu-2").message


def test_artifact_gone_from_a_node_below_the_limit():
    result, findings = run_check("node-images", load("node-images", "gone.yaml", "completed-job.yaml"))
    f = one(findings)
    assert (f.severity, f.object.name) == ("info", "gpu-1")
    assert "no longer has the artifact" in f.message and "lists 3 images, below the kubelet's limit" in f.message
    assert f.hint == f"kubectl kcache why-not-ready {KC.split('/')[1]} -n team-a"
    assert f.evidence == ("entries: kubectl get kernelcachenode gpu-1 -o yaml",)
    assert result.status == "pass"


def test_a_new_entrys_first_pending_is_not_garbage_collection():
    """§2.2: a new entry's first written state is Pending "OCI artifact is not present in Node.status.images",
    before any Job: the artifact was never on the node. Without a completed Job it is neither gone nor cut off
    the image list."""
    result, findings = run_check("node-images", load("node-images", "gone.yaml"))
    assert (result.status, findings) == ("pass", [])
    _, findings = run_check("node-images", load("node-images", "truncated.yaml"))
    assert [f.object.name for f in findings] == ["gpu-2"]  # gpu-2's entry is Ready: it was prepared
