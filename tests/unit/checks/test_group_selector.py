from .conftest import load, one, run_check


def test_groups_that_match_nodes_pass(base):
    result, findings = run_check("group-selector", base)
    assert (result.status, findings) == ("pass", [])


def test_empty_selector_blocks_kserves_whole_pass():
    result, findings = run_check("group-selector", load("group-selector", "empty-selector.yaml"))
    assert result.status == "fail"
    f = one(findings)
    assert (f.severity, f.object.kind, f.object.name, f.group) == ("error", "KernelCacheNodeGroup", "broken", "broken")
    assert f.message.startswith('KernelCacheNodeGroup "broken" requires a non-empty nodeSelector')
    assert "aborts every pass" in f.message
    assert f.hint.startswith("kubectl patch kernelcachenodegroup broken --type=merge")


def test_group_without_members_lists_near_misses():
    result, findings = run_check("group-selector", load("group-selector", "no-match.yaml"))
    assert result.status == "fail"
    f = one(findings)
    assert (f.severity, f.object.name, f.group) == ("warning", "h100-east", "h100-east")
    assert (
        "matches no node (nodeSelector nvidia.com/gpu.product=NVIDIA-H100,topology.kubernetes.io/zone=us-east-1a)"
        in f.message
    )
    assert "Pending/NoMatchingNodes" in f.message
    assert "gpu-1 lacks topology.kubernetes.io/zone=us-east-1a" in f.message
    assert "gpu-3 has nvidia.com/gpu.product=NVIDIA-H100-NVL (wants NVIDIA-H100)" in f.message
    assert f.hint == "kubectl label node gpu-1 topology.kubernetes.io/zone=us-east-1a"


def test_single_label_group_shows_nodes_with_other_values(tmp_path):
    (tmp_path / "a100.yaml").write_text(
        "apiVersion: serving.kserve.io/v1alpha1\nkind: KernelCacheNodeGroup\nmetadata: {name: a100}\n"
        "spec: {nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100}}\n"
    )
    _, findings = run_check("group-selector", load(None, str(tmp_path / "a100.yaml")))
    f = one(findings)
    assert "gpu-1 has nvidia.com/gpu.product=NVIDIA-H100 (wants NVIDIA-A100)" in f.message
    assert f.hint == "kubectl label node gpu-1 nvidia.com/gpu.product=NVIDIA-A100 --overwrite"


def test_not_applicable_without_groups():
    result, findings = run_check("group-selector", load(without=("groups",)))
    assert result.status == "not-applicable"
    assert "no KernelCacheNodeGroup exists" in result.reason


def test_empty_selector_referenced_by_a_kernel_cache_freezes_every_agent(tmp_path):
    """status.go@30750567 matchingNodeGroups: a referenced empty-selector group fails every Ready node's
    agent pass (all entries freeze cluster-wide) and that group's KernelCaches in GetNodes."""
    import yaml

    from kubectl_kcache.snapshot.files.from_files import load_files

    from .conftest import BASE, BASE_FILES, HERE, with_reads

    kc = {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "KernelCache",
        "metadata": {"name": "frozen", "namespace": "team-a"},
        "spec": {
            "nodeGroupRef": {"name": "broken"},
            "mountType": "oci",
            "artifact": {
                "imageReference": "r.example/c@sha256:" + "a" * 64,
                "cachePaths": [{"containerPath": "/c"}],
                "identity": {"footprints": {}},
            },
        },
    }
    extra = tmp_path / "kc.yaml"
    extra.write_text(yaml.safe_dump(kc))
    snap = with_reads(
        load_files(
            [
                *(str(BASE / f"{x}.yaml") for x in BASE_FILES),
                str(HERE / "group-selector" / "empty-selector.yaml"),
                str(extra),
            ]
        )
    )
    _, findings = run_check("group-selector", snap)
    f = next(x for x in findings if x.code == "empty-selector")
    assert "KernelCaches reference it (team-a/frozen), so every Ready node's agent fails its status pass" in f.message
    assert "all KernelCacheNode entries freeze cluster-wide" in f.message
    _, status = run_check("cache-status", snap)
    stop = next(x for x in status if x.object.name == "frozen")
    assert stop.code == "pass-stopped" and "step 8 (node-group)" in stop.message
