from .conftest import load, one, run_check

KC = "qwen-kcc-669889f77f-f84d3ed2f7e88d1c1902c6df"


def test_mode_none_passes(base):
    result, findings = run_check("verification", base)
    assert (result.status, findings) == ("pass", [])


def test_disabled_mode_blocks_every_cache():
    result, findings = run_check("verification", load("verification", "disabled.yaml"))
    assert result.status == "fail"
    f = one(findings)
    assert (f.severity, f.object.kind, f.object.name) == ("error", "ConfigMap", "inferenceservice-config")
    assert 'kernelcache.artifactSecurity.mode is "disabled"' in f.message
    assert 'so it skips every KernelCache (1 now): no pod gets a cache. Set mode "none"' in f.message
    assert f.hint == "kubectl -n kserve edit configmap inferenceservice-config"


def test_cert_mode_names_each_blocked_cache():
    _, findings = run_check("verification", load("verification", "cert.yaml"))
    assert sorted(f.object.name for f in findings) == ["gemma-pending", KC]
    old = one(findings, name=KC)
    assert old.message == (
        f'KernelCache team-a/{KC} was verified under mode "none", not "cert" (verification was '
        'turned on after it was made): with artifactSecurity.mode "cert" the pod webhook skips '
        "it, so no pod gets it until KServe's controller verifies it"
    )
    assert old.hint == f"kubectl -n team-a get kernelcache {KC} -o 'jsonpath={{.status.verification}}'"
    assert old.group == "h100"
    pending = one(findings, name="gemma-pending")
    assert "is not verified yet (state Pending)" in pending.message
