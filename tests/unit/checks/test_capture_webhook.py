"""The capture-webhook check: the KernelCacheCapture status validator (failurePolicy Fail, no selectors)."""

from __future__ import annotations

from dataclasses import replace

from kubectl_kcache import objects as o

from .conftest import drop, one, run_check, with_reads

NAME = "kernelcachecapture.serving.kserve.io"


def _without_endpoints(snap):
    return replace(snap, endpoint_slices=())


def test_healthy_base_passes(base):
    result, findings = run_check("capture-webhook", base)
    assert (result.status, findings) == ("pass", [])


def test_missing_is_a_warning(base):
    f = one(run_check("capture-webhook", drop(base, "ValidatingWebhookConfiguration", NAME))[1])
    assert (f.code, f.severity) == ("missing", "warning")
    assert f.message.startswith(f"ValidatingWebhookConfiguration {NAME} is not installed")


def test_no_ready_endpoints_fail_every_capture_status_update(base):
    f = one(run_check("capture-webhook", _without_endpoints(base))[1])
    assert (f.code, f.severity, f.object.kind) == ("no-endpoints", "error", "Service")
    assert (
        "has no ready endpoints: every KernelCacheCapture status update fails (failurePolicy Fail, no "
        "selectors: the controller's own session claims"
    ) in f.message


def test_no_ca_bundle(base):
    config = next(x for x in base.validating_webhooks if x.meta.name == NAME)
    entry = config.webhooks[0]
    bare = o.WebhookConfiguration.from_dict(
        {
            "metadata": {"name": NAME},
            "webhooks": [
                {
                    "name": entry.name,
                    "failurePolicy": "Fail",
                    "clientConfig": {"service": {"name": "localmodel-webhook-server-service", "namespace": "kserve"}},
                }
            ],
        }
    )
    snap = replace(base, validating_webhooks=(bare,))
    f = one(run_check("capture-webhook", snap)[1])
    assert (f.code, f.severity) == ("no-ca", "error")


def test_forbidden_read_skips(base):
    result, _ = run_check("capture-webhook", with_reads(base, ("validatingwebhookconfigurations", None, "forbidden")))
    assert result.status == "skipped"
