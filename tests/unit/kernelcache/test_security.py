"""Advice for each verification and signing reason KServe records (§7.1, §7.2), in the findings that show them."""

from __future__ import annotations

import pytest

from kubectl_kcache.checks import run_doctor
from kubectl_kcache.kernelcache import security as sec
from kubectl_kcache.snapshot.model import build
from tests import builders as b

NS = "team"


@pytest.mark.parametrize("reason", ["VerifierUnavailable", "RegistryUnavailable", "VerificationError",
                                    "VerifiedDigestMismatch", "VerificationFailed", "VerificationNotConfigured"])
def test_every_verification_reason_has_advice(reason):
    assert sec.verification_advice(reason).startswith(f"{reason}: ")


@pytest.mark.parametrize("reason", ["SigningProfileNotFound", "SignerUnavailable", "SigningFailed",
                                    "InvalidArtifactReference", "SignedDigestMismatch"])
def test_every_signing_failure_reason_has_advice(reason):
    advice = sec.signing_advice(reason)
    assert advice.startswith(f"{reason}: ") and "; " in advice


def test_unknown_reasons_get_no_made_up_advice():
    assert sec.verification_advice("SomethingNew") == "" and sec.signing_advice("") == ""


def test_signing_again_after_a_mode_change():
    assert sec.signing_mode_changed("none", "cert") and not sec.signing_mode_changed("none", "disabled")
    assert not sec.signing_mode_changed("", "cert")  # not signed yet


def test_cache_status_gives_the_advice_of_the_verification_reason():
    kc = b.kernel_cache("kc", NS, "gpu", state="Error", reason="VerificationFailed",
                        message="kernel cache artifact verification failed")
    kc["status"]["verification"] = {"mode": "cert", "state": "Failed", "verified": False,
                                    "reason": "VerifiedDigestMismatch", "message": "verifier returned digest x"}
    items = [b.config_map({"enabled": True, "defaultNodeGroup": "gpu"}), b.group("gpu", {"pool": "gpu"}),
             b.node("gpu-1", {"pool": "gpu"}), kc]
    [f] = [x for x in run_doctor(build(items, reads_assumed=True), only=["cache-status"]).findings
           if x.code == "error-state"]
    assert sec.verification_advice("VerifiedDigestMismatch") in f.evidence


def test_capture_signing_failure_gives_the_advice_of_its_reason():
    status = b.capture_status(signing={"mode": "cert", "state": "Failed", "signed": False,
                                       "reason": "SigningProfileNotFound", "message": "profile kernelcache-signer"})
    items = [b.config_map({"enabled": True, "defaultNodeGroup": "gpu"}), b.group("gpu", {"pool": "gpu"}),
             b.node("gpu-1", {"pool": "gpu"}), b.capture("model-capture", NS, status=status)]
    [f] = [x for x in run_doctor(build(items, reads_assumed=True), only=["capture"]).findings
           if x.code == "signing-failed"]
    assert sec.signing_advice("SigningProfileNotFound") in f.evidence
