"""What each artifact verification and signing reason means and what to do about it (newest
`cache_status.go` for KernelCache.status.verification, `capture_lifecycle.go` for KernelCacheCapture
.status.signing; §7.1, §7.2 of KServe's behaviour). Every reason here is KServe's exact value."""

from __future__ import annotations

import msgspec

# reason -> (what KServe did, what to do)
VERIFICATION: dict[str, tuple[str, str]] = {
    "VerifierUnavailable": (
        "the verifier could not be built (trust bundle or signing configuration); the error is retried with backoff",
        "check artifactSecurity.cert (trustBundle Secret or ConfigMap, trustBundleKey, "
        "subjectRegexp) and the controller's log",
    ),
    "RegistryUnavailable": (
        "the registry could not be reached or its CA ConfigMap read (cert mode only); retried with backoff",
        "check registry.caConfigMapRef in the KernelCache's namespace and the registry's "
        "reachability from the controller",
    ),
    "VerificationError": (
        "verification itself failed with an error; retried with backoff",
        "read status.verification.message and the controller's log",
    ),
    "VerifiedDigestMismatch": (
        "the verifier returned another digest than the artifact's: not verified, not retried (no error)",
        "the artifact was replaced or the signature covers another digest: re-capture or re-sign it",
    ),
    "VerificationFailed": (
        "the signature did not verify (the verifier's reason is the message): not retried",
        "sign the artifact with the configured signing profile, or fix subjectRegexp",
    ),
    "VerificationNotConfigured": (
        'verification is off (mode "", none or disabled): recorded as mode none, Skipped',
        "with artifactSecurity.mode disabled the pod webhook skips every cache: set mode none",
    ),
    "VerificationSucceeded": ("the artifact was verified", ""),
}

SIGNING: dict[str, tuple[str, str]] = {
    "SigningProfileNotFound": (
        "the signing profile named by spec.signing.profileRef (from "
        "artifactSecurity.cert.signingProfileRef) does not exist",
        "create the profile (KServe's example: kernelcache-signer) or fix signingProfileRef",
    ),
    "SignerUnavailable": ("the signer could not be built from the profile", "check the signing certificate and key"),
    "SigningFailed": ("signing the artifact failed", "read status.signing.message and the controller's log"),
    "InvalidArtifactReference": (
        "the artifact reference cannot be signed (not a digest reference)",
        "the capture's artifact must be pinned by digest",
    ),
    "SignedDigestMismatch": ("the signature was made for another digest", "re-run the capture"),
    "SigningNotConfigured": ("signing is off (Skipped)", ""),
    "SigningSucceeded": ("the artifact was signed", ""),
}

SIGNED_STATES = ("Skipped", "Succeeded")
NO_PROFILE = ("SigningProfileNotFound", "spec.signing.profileRef.name is required for cert signing")
# KServe's two stored wordings of one error (types/config.go @8b03659c and @d9804a31: which is newer cannot be
# dated from the stored code); the plugin emits the second and accepts both
UNKNOWN_MODE_WORDINGS = ("unknown verification mode", "unknown security mode")


def verification_advice(reason: str) -> str:
    what, todo = VERIFICATION.get(reason, ("", ""))
    return f"{reason}: {what}" + (f"; {todo}" if todo else "") if what else ""


def signing_advice(reason: str) -> str:
    what, todo = SIGNING.get(reason, ("", ""))
    return f"{reason}: {what}" + (f"; {todo}" if todo else "") if what else ""


def recorded_mode(configured_mode: str) -> str:
    """The mode KServe's signing records for the configured one (`disabled` is recorded as `none`)."""
    return "none" if configured_mode in ("", "disabled") else configured_mode


class Resigning(msgspec.Struct, frozen=True):
    """What KServe's next signing pass does with a capture whose runtime result is complete, when it signs it
    (again): the mode it signs under, and KServe's reason and message when that pass fails at once."""

    mode: str
    was: str  # the mode of the status.signing it replaces ("" when there is none)
    fails: tuple[str, str] | None = None


def next_signing(
    configured_mode: str, signing_mode: str | None, signing_state: str | None, profile_ref: str
) -> Resigning | None:
    """reconcileArtifactSigning (capture_reconciler.go@31681cd0): nothing while status.signing has the mode KServe
    records for the configured one and state Skipped or Succeeded; otherwise it signs again under the configured
    mode (so a mode change re-signs every complete capture: it is not watched, the next pass over the
    InferenceService does it), and in cert mode a capture without spec.signing.profileRef (KServe sets it only
    when it creates a capture in cert mode) fails with SigningProfileNotFound. `signing_mode` None: no
    status.signing yet."""
    mode = recorded_mode(configured_mode)
    if signing_mode is not None and signing_mode == mode and signing_state in SIGNED_STATES:
        return None
    fails = NO_PROFILE if mode == "cert" and not profile_ref else None
    return Resigning(mode, signing_mode or "", fails)


FAILURE_POLICY_NOT_REJECT = "kernelcache.artifactSecurity.failurePolicy must be reject"


def config_error_notes(error: str) -> tuple[str, ...]:
    """What a reader of KServe's config error needs besides its text."""
    if error == FAILURE_POLICY_NOT_REJECT:
        return (
            "failurePolicy warn passes KServe's artifact security validation (reject and warn are its values), "
            "then the configuration loader rejects it: only reject works",
        )
    for ours, other in (UNKNOWN_MODE_WORDINGS, UNKNOWN_MODE_WORDINGS[::-1]):
        if ours in error:
            return (f'KServe builds word this error either way: "{error.replace(ours, other)}"',)
    return ()


def same_config_error(a: str, b: str) -> bool:
    """Two config error texts are KServe's same error: equal, or differing only in the unknown-mode wording."""

    def norm(text: str) -> str:
        return text.replace(UNKNOWN_MODE_WORDINGS[0], UNKNOWN_MODE_WORDINGS[1]).strip()

    return norm(a) == norm(b)
