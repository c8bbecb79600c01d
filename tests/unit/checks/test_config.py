from .conftest import drop, load, one, run_check


def test_valid_enabled_config_passes(base):
    result, findings = run_check("config", base)
    assert (result.status, findings) == ("pass", [])


def test_validation_error_is_kserves_text():
    result, findings = run_check("config", load("config", "invalid.yaml"))
    assert result.status == "fail"
    f = one(findings)
    assert f.severity == "error"
    assert (f.object.kind, f.object.namespace, f.object.name) == ("ConfigMap", "kserve", "inferenceservice-config")
    assert 'kernelcache.defaultMountType must be oci, got "pvc"' in f.message
    assert f.hint == "kubectl -n kserve edit configmap inferenceservice-config"


def test_unparsable_json():
    _, findings = run_check("config", load("config", "not-json.yaml"))
    assert "unable to unmarshal kernelcache" in one(findings).message


def test_missing_configmap(base):
    result, findings = run_check("config", drop(base, "ConfigMap", "inferenceservice-config", "kserve"))
    assert result.status == "fail"
    f = one(findings)
    assert f.severity == "error"
    assert "inferenceservice-config was not found" in f.message


def test_disabled_is_said_once_as_a_warning_when_objects_exist():
    result, findings = run_check("config", load("config", "disabled.yaml"))
    f = one(findings)
    assert f.severity == "warning"
    assert "the kernel cache feature is disabled (kernelcache.enabled is false)" in f.message
    assert "not applicable" in f.message
    assert result.status == "fail"


def test_disabled_is_info_on_an_empty_cluster():
    snap = load("config", "disabled.yaml", without=("groups", "caches"))
    result, findings = run_check("config", snap)
    assert one(findings).severity == "info"
    assert result.status == "pass"


def test_default_group_that_looks_like_a_label():
    _, findings = run_check("config", load("config", "default-group-label.yaml"))
    f = one(findings)
    assert f.severity == "warning"
    assert "looks like a node label" in f.message
    assert f.hint == "kubectl get kernelcachenodegroups"


def test_default_group_that_does_not_exist():
    _, findings = run_check("config", load("config", "default-group-missing.yaml"))
    f = one(findings)
    assert f.severity == "warning"
    assert 'KernelCacheNodeGroup "a100" was not found' in f.message
    assert "InvalidDefaultNodeGroup" in f.message


def test_default_group_with_white_space():
    _, findings = run_check("config", load("config", "default-group-spaces.yaml"))
    f = one(findings)
    assert "surrounding white space" in f.message
    assert "NodeGroupNotFound" in f.message


def test_missing_job_namespace(base):
    result, findings = run_check("config", drop(base, "Namespace", "kserve-kernelcache-jobs"))
    assert result.status == "fail"
    f = one(findings)
    assert (f.severity, f.object.kind, f.object.name) == ("error", "Namespace", "kserve-kernelcache-jobs")
    assert 'job namespace "kserve-kernelcache-jobs" was not found; create it before using KernelCache' in f.message
    assert f.hint == "kubectl create namespace kserve-kernelcache-jobs"


def test_job_namespace_not_judged_without_namespaces_in_plain_files():
    snap = load("config", "other-job-namespace.yaml", plain=True)
    _, findings = run_check("config", snap)
    assert one(findings).hint == "kubectl create namespace kernel-cache-jobs"
    from dataclasses import replace

    result, findings = run_check("config", replace(snap, namespaces=()))
    assert (result.status, findings) == ("pass", [])


def test_unknown_keys_are_info_with_a_suggestion():
    result, findings = run_check("config", load("config", "unknown-keys.yaml"))
    f = one(findings)
    assert f.severity == "info"
    assert "jobNamspace (did you mean jobNamespace?)" in f.message
    assert result.status == "pass"
