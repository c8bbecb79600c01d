"""Advice for each verification and signing reason KServe records (§7.1, §7.2), in the findings that show them."""

from __future__ import annotations

import json

import pytest

from kubectl_kcache.checks import run_doctor
from kubectl_kcache.kernelcache import security as sec
from kubectl_kcache.snapshot.model import build
from tests import builders as b

NS = "team"
CERT = {
    "mode": "cert",
    "cert": {
        "signingProfileRef": "kernelcache-signer",
        "trustBundle": "kserve/kernelcache-root-ca",
        "subjectRegexp": "spiffe://kserve/kernelcache-signer",
    },
}


@pytest.mark.parametrize(
    "reason",
    [
        "VerifierUnavailable",
        "RegistryUnavailable",
        "VerificationError",
        "VerifiedDigestMismatch",
        "VerificationFailed",
        "VerificationNotConfigured",
    ],
)
def test_every_verification_reason_has_advice(reason):
    assert sec.verification_advice(reason).startswith(f"{reason}: ")


@pytest.mark.parametrize(
    "reason",
    [
        "SigningProfileNotFound",
        "SignerUnavailable",
        "SigningFailed",
        "InvalidArtifactReference",
        "SignedDigestMismatch",
    ],
)
def test_every_signing_failure_reason_has_advice(reason):
    advice = sec.signing_advice(reason)
    assert advice.startswith(f"{reason}: ") and "; " in advice


def test_unknown_reasons_get_no_made_up_advice():
    assert sec.verification_advice("SomethingNew") == "" and sec.signing_advice("") == ""


def test_signing_again_after_a_mode_change():
    assert sec.next_signing("cert", "none", "Skipped", "p") == sec.Resigning("cert", "none")
    assert sec.next_signing("disabled", "none", "Skipped", "") is None  # disabled is recorded as none
    assert sec.next_signing("cert", None, None, "p") == sec.Resigning("cert", "")  # not signed yet: signed now


def test_cache_status_gives_the_advice_of_the_verification_reason():
    kc = b.kernel_cache(
        "kc", NS, "gpu", state="Error", reason="VerificationFailed", message="kernel cache artifact verification failed"
    )
    kc["status"]["verification"] = {
        "mode": "cert",
        "state": "Failed",
        "verified": False,
        "reason": "VerifiedDigestMismatch",
        "message": "verifier returned digest x",
    }
    items = [
        b.config_map({"enabled": True, "defaultNodeGroup": "gpu"}),
        b.group("gpu", {"pool": "gpu"}),
        b.node("gpu-1", {"pool": "gpu"}),
        kc,
    ]
    [f] = [
        x
        for x in run_doctor(build(items, reads_assumed=True), only=["cache-status"]).findings
        if x.code == "error-state"
    ]
    assert sec.verification_advice("VerifiedDigestMismatch") in f.evidence


def test_capture_signing_failure_gives_the_advice_of_its_reason():
    status = b.capture_status(
        signing={
            "mode": "cert",
            "state": "Failed",
            "signed": False,
            "reason": "SigningProfileNotFound",
            "message": "profile kernelcache-signer",
        }
    )
    items = [
        b.config_map({"enabled": True, "defaultNodeGroup": "gpu", "artifactSecurity": CERT}),
        b.group("gpu", {"pool": "gpu"}),
        b.node("gpu-1", {"pool": "gpu"}),
        b.capture("model-capture", NS, status=status),
    ]
    [f] = [
        x for x in run_doctor(build(items, reads_assumed=True), only=["capture"]).findings if x.code == "signing-failed"
    ]
    assert sec.signing_advice("SigningProfileNotFound") in f.evidence


def _signing_findings(config_security, signing, profile=""):
    status = b.capture_status(signing=signing)
    cap = b.capture("model-capture", NS, status=status)
    if profile:
        cap["spec"]["signing"] = {"profileRef": {"name": profile}}
    config = {"enabled": True, "defaultNodeGroup": "gpu"}
    if config_security is not None:
        config["artifactSecurity"] = config_security
    items = [b.config_map(config), b.group("gpu", {"pool": "gpu"}), b.node("gpu-1", {"pool": "gpu"}), cap]
    return [
        x
        for x in run_doctor(build(items, reads_assumed=True), only=["capture"]).findings
        if x.code == "signing-mode-changed"
    ]


def test_a_capture_skipped_under_none_is_signed_again_when_cert_is_turned_on():
    """reconcileArtifactSigning (@31681cd0): status.signing of another mode is redone under the configured one;
    a capture KServe made before cert mode has no spec.signing.profileRef, so that fails at once."""
    skipped = {"mode": "none", "state": "Skipped", "signed": False, "reason": "SigningNotConfigured"}
    [f] = _signing_findings(CERT, skipped)
    assert f.severity == "error"
    assert f.message.startswith(
        "capture team/model-capture was signed under mode none (state Skipped), "
        "artifactSecurity.mode is now cert: KServe signs it again under mode cert on its next "
        "pass over InferenceService model (it does not watch the ConfigMap"
    )
    assert (
        "that pass fails at once: SigningProfileNotFound: spec.signing.profileRef.name is required for cert signing"
    ) in f.message
    [g] = _signing_findings(CERT, skipped, profile="kernelcache-signer")
    assert g.severity == "warning" and "fails" not in g.message


def test_disabled_is_recorded_as_none_so_nothing_is_signed_again():
    skipped = {"mode": "none", "state": "Skipped", "signed": False}
    assert _signing_findings({"mode": "disabled"}, skipped) == []
    assert _signing_findings(None, skipped) == []


def test_a_capture_signed_under_cert_is_signed_again_when_cert_is_turned_off():
    signed = {"mode": "cert", "state": "Succeeded", "signed": True, "reason": "SigningSucceeded"}
    [f] = _signing_findings({"mode": "none"}, signed, profile="kernelcache-signer")
    assert f.severity == "warning" and "KServe signs it again under mode none" in f.message
    assert sec.next_signing("cert", "cert", "Succeeded", "p") is None
    assert sec.next_signing("cert", "cert", "Failed", "p") == sec.Resigning("cert", "cert")  # retried as is


def test_failure_policy_warn_passes_validation_and_fails_later():
    from kubectl_kcache.kernelcache.config import ConfigInvalid, parse_config

    try:
        parse_config(json.dumps({"enabled": True, "artifactSecurity": {"failurePolicy": "warn"}}))
    except ConfigInvalid as exc:
        error = str(exc)
    assert error == "kernelcache.artifactSecurity.failurePolicy must be reject"
    items = [b.config_map({"enabled": True, "artifactSecurity": {"failurePolicy": "warn"}})]
    [f] = [x for x in run_doctor(build(items, reads_assumed=True), only=["config"]).findings if x.code == "invalid"]
    assert (
        "failurePolicy warn passes KServe's artifact security validation (reject and warn are its values), then "
        "the configuration loader rejects it: only reject works"
    ) in f.evidence


@pytest.mark.parametrize(
    "recorded",
    [
        'invalid kernelcache.artifactSecurity: unknown verification mode: "weird"',
        'invalid kernelcache.artifactSecurity: unknown security mode: "weird"',
    ],
)
def test_both_wordings_of_the_unknown_mode_error_are_kserves_error(recorded):
    """types/config.go @8b03659c says `unknown verification mode`, @d9804a31 `unknown security mode`: the plugin
    emits the second and takes a KernelCache recording either as showing the same error."""
    kc = b.kernel_cache("kc", NS, "gpu", state="Error", reason="ConfigError", message=recorded)
    items = [b.config_map({"enabled": True, "artifactSecurity": {"mode": "weird"}}), kc]
    [f] = [x for x in run_doctor(build(items, reads_assumed=True), only=["config"]).findings if x.code == "invalid"]
    assert f.message.endswith("; 1 of 1 KernelCaches show it already")
    assert (
        'KServe builds word this error either way: "invalid kernelcache.artifactSecurity: unknown verification '
        'mode: "weird""'
        in f.evidence
        or any("unknown verification mode" in e for e in f.evidence)
    )
    assert sec.same_config_error(recorded, 'invalid kernelcache.artifactSecurity: unknown security mode: "weird"')
    assert not sec.same_config_error(recorded, 'invalid kernelcache.artifactSecurity: unknown security mode: "odd"')


def test_the_verification_check_gives_the_advice_of_a_skipped_cache():
    """A cache recorded as {mode none, Skipped, VerificationNotConfigured} while cert is configured: the webhook
    skips it, and the finding says what the reason means."""
    kc = b.kernel_cache("kc", NS, "gpu", state="Ready", reason="CacheReady")
    kc["status"]["verification"] = {
        "mode": "none",
        "state": "Skipped",
        "verified": False,
        "reason": "VerificationNotConfigured",
        "message": "artifact verification is not configured",
    }
    items = [
        b.config_map({"enabled": True, "defaultNodeGroup": "gpu", "artifactSecurity": CERT}),
        b.group("gpu", {"pool": "gpu"}),
        b.node("gpu-1", {"pool": "gpu"}),
        kc,
    ]
    [f] = [
        x
        for x in run_doctor(build(items, reads_assumed=True), only=["verification"]).findings
        if x.code == "blocks-admission"
    ]
    assert 'was verified under mode "none", not "cert"' in f.message
    assert sec.verification_advice("VerificationNotConfigured") in f.evidence
