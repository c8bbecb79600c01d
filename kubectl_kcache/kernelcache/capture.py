"""Which captures KServe turns into a KernelCache (isCaptureComplete), with the reason when not."""

from __future__ import annotations

from dataclasses import dataclass

from ..objects import Capture, find_condition
from . import constants as c


@dataclass(frozen=True)
class Eligibility:
    eligible: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.eligible


def signing_allows(capture: Capture) -> Eligibility:
    s = capture.signing
    if s is None:
        return Eligibility(False, "status.signing is not set yet (signing not reconciled)")
    if s.state == c.SIGNING_SKIPPED and s.mode in ("none", "disabled"):
        return Eligibility(True)
    if s.state == c.SIGNING_SUCCEEDED and s.signed:
        return Eligibility(True)
    detail = f"signing state {s.state or '(empty)'}"
    if s.reason:
        detail += f" ({s.reason}{': ' + s.message if s.message else ''})"
    return Eligibility(False, detail)


def capture_complete(capture: Capture) -> Eligibility:
    """KServe's complete-capture rule; every part must hold."""
    ready = find_condition(capture.conditions, "Ready")
    if ready is None or ready.status != "True":
        why = f"{ready.reason}" if ready and ready.reason else "no Ready=True condition"
        return Eligibility(False, f"Ready condition is not True ({why})")
    if (ready.observed_generation or 0) != capture.meta.generation:  # Go reads an absent field as 0
        return Eligibility(
            False,
            f"Ready condition observedGeneration {ready.observed_generation} != "
            f"generation {capture.meta.generation} (spec changed after completion)",
        )
    result = capture.runtime_result
    session = capture.active_session
    if session is not None:
        if result.get("captureSessionID", "") != session.id:
            return Eligibility(
                False, "runtimeResult.captureSessionID does not match activeSession.id (a stale reporter)"
            )
        if result.get("sourcePodName", "") != session.pod_name:
            return Eligibility(False, "runtimeResult.sourcePodName does not match activeSession.podName")
    if capture.phase != c.PHASE_COMPLETE:
        return Eligibility(False, f"phase is {capture.phase or '(empty)'}, not {c.PHASE_COMPLETE}")
    if capture.artifact is None:
        return Eligibility(False, "status.artifact is not set")
    signing = signing_allows(capture)
    if not signing:
        return signing
    state = result.get("state", "")
    if state == c.RESULT_SUCCEEDED:
        if capture.artifact.image_reference != result.get("imageReference", ""):
            return Eligibility(False, "status.artifact.imageReference differs from runtimeResult.imageReference")
        return Eligibility(True)
    if state == c.RESULT_UNCHANGED and capture.kernel_cache_ref is not None:
        return Eligibility(True)
    return Eligibility(False, f"runtimeResult.state is {state or '(empty)'}")


def needs_kernel_cache(capture: Capture) -> bool:
    """A complete capture not yet linked to a KernelCache: KServe would select a group and create one."""
    return bool(capture_complete(capture)) and capture.kernel_cache_ref is None
