from kubectl_kcache.checks.crds import INSTALL_HINT

from .conftest import drop, load, one, run_check, with_reads


def test_installed_crds_pass(base):
    result, findings = run_check("crds", base)
    assert result.status == "pass"
    assert findings == []


def test_missing_crd_is_an_error(base):
    snap = drop(base, "CustomResourceDefinition", "kernelcachenodes.serving.kserve.io")
    result, findings = run_check("crds", snap)
    assert result.status == "fail"
    f = one(findings, name="kernelcachenodes.serving.kserve.io")
    assert f.severity == "error"
    assert f.object.kind == "CustomResourceDefinition"
    assert "is not installed" in f.message
    assert f.hint == INSTALL_HINT


def test_v1alpha1_not_served_is_an_error_and_other_versions_are_noted():
    result, findings = run_check("crds", load("crds", "other-versions.yaml"))
    assert result.status == "fail"
    capture = one(findings, name="kernelcachecaptures.serving.kserve.io")
    assert capture.severity == "error"
    assert "does not serve v1alpha1 (served: v1beta1)" in capture.message
    cache = one(findings, name="kernelcaches.serving.kserve.io")
    assert cache.severity == "info"
    assert "also serves v1beta1" in cache.message


def test_inferred_from_kind_reads_when_crds_are_forbidden(base):
    snap = with_reads(base, ("customresourcedefinitions", None, "forbidden"), ("kernelcachecaptures", None, "absent"))
    result, findings = run_check("crds", snap)
    assert result.status == "fail"
    assert "partial: forbidden: list customresourcedefinitions" in result.reason
    f = one(findings)
    assert f.object.name == "kernelcachecaptures.serving.kserve.io"
    assert "is not served" in f.message and "not installed" in f.message


def test_skipped_when_nothing_can_be_read(base):
    snap = with_reads(
        base,
        ("customresourcedefinitions", None, "forbidden"),
        *(
            (p, None, "forbidden")
            for p in ("kernelcachenodegroups", "kernelcachenodes", "kernelcaches", "kernelcachecaptures")
        ),
    )
    result, findings = run_check("crds", snap)
    assert result.status == "skipped"
    assert "forbidden: list customresourcedefinitions" in result.reason
    assert findings == []


def test_every_crd_missing_is_one_cause_shown_once(base):
    """Issue 20: with the CRDs not installed, the table says it once, not four times."""
    import io
    import os

    from kubectl_kcache.checks.model import CheckResult, DoctorReport
    from kubectl_kcache.report import render_doctor

    snap = base
    for name in ("kernelcachenodegroups", "kernelcachenodes", "kernelcaches", "kernelcachecaptures"):
        snap = drop(snap, "CustomResourceDefinition", f"{name}.serving.kserve.io")
    _, findings = run_check("crds", snap)
    assert len(findings) == 4 and len({f.cause for f in findings}) == 1
    out = io.StringIO()
    os.environ["COLUMNS"] = "120"
    try:
        render_doctor(DoctorReport(checks=(CheckResult("crds", "fail"),), findings=tuple(findings)), "table", out)
    finally:
        del os.environ["COLUMNS"]
    text = out.getvalue()
    assert text.count("error[crds/not-installed]") == 1 and "4 CustomResourceDefinitions" in text
    assert text.count(INSTALL_HINT) == 1
