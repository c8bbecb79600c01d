"""What each artifact verification and signing reason means and what to do about it (newest
`cache_status.go` for KernelCache.status.verification, `capture_lifecycle.go` for KernelCacheCapture
.status.signing; §7.1, §7.2 of KServe's behaviour). Every reason here is KServe's exact value."""

from __future__ import annotations

# reason -> (what KServe did, what to do)
VERIFICATION: dict[str, tuple[str, str]] = {
    "VerifierUnavailable": ("the verifier could not be built (trust bundle or signing configuration); the "
                            "error is retried with backoff",
                            "check artifactSecurity.cert (trustBundle Secret or ConfigMap, trustBundleKey, "
                            "subjectRegexp) and the controller's log"),
    "RegistryUnavailable": ("the registry could not be reached or its CA ConfigMap read (cert mode only); retried "
                            "with backoff",
                            "check registry.caConfigMapRef in the KernelCache's namespace and the registry's "
                            "reachability from the controller"),
    "VerificationError": ("verification itself failed with an error; retried with backoff",
                          "read status.verification.message and the controller's log"),
    "VerifiedDigestMismatch": ("the verifier returned another digest than the artifact's: not verified, not "
                               "retried (no error)",
                               "the artifact was replaced or the signature covers another digest: re-capture or "
                               "re-sign it"),
    "VerificationFailed": ("the signature did not verify (the verifier's reason is the message): not retried",
                           "sign the artifact with the configured signing profile, or fix subjectRegexp"),
    "VerificationNotConfigured": ("verification is off (mode \"\", none or disabled): recorded as mode none, "
                                  "Skipped",
                                  "with artifactSecurity.mode disabled the pod webhook skips every cache: set "
                                  "mode none"),
    "VerificationSucceeded": ("the artifact was verified", ""),
}

SIGNING: dict[str, tuple[str, str]] = {
    "SigningProfileNotFound": ("the signing profile named by spec.signing.profileRef (from "
                               "artifactSecurity.cert.signingProfileRef) does not exist",
                               "create the profile (KServe's example: kernelcache-signer) or fix signingProfileRef"),
    "SignerUnavailable": ("the signer could not be built from the profile", "check the signing certificate and key"),
    "SigningFailed": ("signing the artifact failed", "read status.signing.message and the controller's log"),
    "InvalidArtifactReference": ("the artifact reference cannot be signed (not a digest reference)",
                                 "the capture's artifact must be pinned by digest"),
    "SignedDigestMismatch": ("the signature was made for another digest", "re-run the capture"),
    "SigningNotConfigured": ("signing is off (Skipped)", ""),
    "SigningSucceeded": ("the artifact was signed", ""),
}


def verification_advice(reason: str) -> str:
    what, todo = VERIFICATION.get(reason, ("", ""))
    return f"{reason}: {what}" + (f"; {todo}" if todo else "") if what else ""


def signing_advice(reason: str) -> str:
    what, todo = SIGNING.get(reason, ("", ""))
    return f"{reason}: {what}" + (f"; {todo}" if todo else "") if what else ""


def signing_mode_changed(signed_mode: str, configured_mode: str) -> bool:
    """A capture signed (or skipped) under another mode than the configured one is signed again."""
    norm = {"": "none", "disabled": "none"}
    return bool(signed_mode) and norm.get(signed_mode, signed_mode) != norm.get(configured_mode, configured_mode)

