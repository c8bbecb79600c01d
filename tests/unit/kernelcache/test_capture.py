"""isCaptureComplete and captureSigningAllowsCache (kserve-notes.md §2.2), golden cases from
capture_cache_reconciler_test.go, plus every other clause of the rule."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubectl_kcache import objects as o
from kubectl_kcache.kernelcache.capture import capture_complete, signing_allows
from tests import builders as b

IMAGE_A = "registry.example.com/cache@sha256:" + "a" * 64


def capture(status: dict[str, Any], generation: int | None = 1) -> o.Capture:
    obj = b.capture("model-capture", ns="team", status=status)
    if generation is None:
        del obj["metadata"]["generation"]
    else:
        obj["metadata"]["generation"] = generation
    return o.Capture.from_dict(obj)


def status(**kw: Any) -> dict[str, Any]:
    st = b.capture_status(**kw)
    st["artifact"]["imageReference"] = IMAGE_A
    st["runtimeResult"]["imageReference"] = IMAGE_A
    return st


def with_signing(signing: dict[str, Any] | None) -> o.Capture:
    st = status()
    if signing is None:
        del st["signing"]
    else:
        st["signing"] = signing
    return capture(st)


# ---- captureSigningAllowsCache -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("signing", "allowed"),
    [
        (None, False),  # "missing status"
        ({"mode": "none", "state": "Skipped"}, True),
        ({"mode": "cert", "state": "Succeeded", "signed": True}, True),
        ({"mode": "cert", "state": "Failed"}, False),
        # the rest of the rule
        ({"mode": "disabled", "state": "Skipped"}, True),
        ({"mode": "cert", "state": "Skipped"}, False),
        ({"state": "Skipped"}, False),
        ({"mode": "cert", "state": "Succeeded", "signed": False}, False),
        ({"mode": "cert", "state": "Succeeded"}, False),
        ({"mode": "cert", "state": "Pending"}, False),
        ({"mode": "none", "state": "Succeeded", "signed": True}, True),
    ],
)
def test_signing_allows(signing, allowed):
    cap = with_signing(signing)
    assert bool(signing_allows(cap)) is allowed
    if not allowed:
        assert signing_allows(cap).reason
        assert not capture_complete(cap)


def test_signing_failure_reason_is_reported():
    cap = with_signing({"mode": "cert", "state": "Failed", "reason": "SignFailed", "message": "no key"})
    assert "Failed" in signing_allows(cap).reason
    assert "SignFailed" in signing_allows(cap).reason


# ---- isCaptureComplete golden cases ------------------------------------------------------------------


def unchanged_status(kernel_cache_ref: dict[str, str] | None) -> dict[str, Any]:
    """The harness of the Unchanged test: no activeSession, Ready=True without observedGeneration."""
    st = status(kernel_cache_ref=kernel_cache_ref)
    del st["activeSession"]
    st["runtimeResult"] = {"state": "Unchanged"}
    del st["conditions"][0]["observedGeneration"]
    return st


def test_unchanged_with_kernel_cache_ref_is_complete_golden():
    cap = capture(unchanged_status({"namespace": "team", "name": "cache"}), generation=None)
    assert capture_complete(cap)


def test_unchanged_with_kernel_cache_ref_is_complete():
    st = unchanged_status({"namespace": "team", "name": "cache"})
    st["conditions"][0]["observedGeneration"] = 1
    assert capture_complete(capture(st, generation=1))


def test_unchanged_without_kernel_cache_ref_is_not_complete():
    st = unchanged_status(None)
    st["conditions"][0]["observedGeneration"] = 1
    result = capture_complete(capture(st, generation=1))
    assert not result
    assert "Unchanged" in result.reason
    assert not capture_complete(capture(unchanged_status(None), generation=None))


def test_generation_must_equal_observed_generation():
    st = status(generation=1)  # Ready observedGeneration 1
    assert not capture_complete(capture(st, generation=2))
    assert "observedGeneration" in capture_complete(capture(st, generation=2)).reason
    st = status(generation=2)
    assert capture_complete(capture(st, generation=2))


def test_condition_without_observed_generation_on_a_real_cluster_is_not_complete():
    st = status()
    del st["conditions"][0]["observedGeneration"]
    assert not capture_complete(capture(st, generation=1))


# ---- every clause ------------------------------------------------------------------------------------


def test_succeeded_complete_capture():
    cap = capture(status())
    assert capture_complete(cap)
    assert capture_complete(cap).reason == ""


def test_a_kernel_cache_ref_does_not_change_completeness():
    cap = capture(status(kernel_cache_ref={"namespace": "team", "name": "x"}))
    assert capture_complete(cap)


def mutated(fn) -> o.Capture:
    st = status()
    fn(st)
    return capture(st)


@pytest.mark.parametrize(
    ("mutation", "words"),
    [
        (lambda s: s.update(conditions=[]), "Ready"),
        (lambda s: s["conditions"][0].update(status="False", reason="Capturing"), "Capturing"),
        (lambda s: s["conditions"][0].update(type="Other"), "Ready"),
        (lambda s: s["runtimeResult"].update(captureSessionID="other"), "captureSessionID"),
        (lambda s: s["runtimeResult"].update(sourcePodName="other-pod"), "sourcePodName"),
        (lambda s: s["runtimeResult"].pop("captureSessionID"), "captureSessionID"),
        (lambda s: s.update(phase="Pushing"), "Pushing"),
        (lambda s: s.pop("phase"), "phase"),
        (lambda s: s.pop("artifact"), "artifact"),
        (lambda s: s["runtimeResult"].update(imageReference=IMAGE_A.replace("a" * 64, "b" * 64)), "imageReference"),
        (lambda s: s["runtimeResult"].update(state="Failed"), "Failed"),
        (lambda s: s["runtimeResult"].pop("state"), "state"),
    ],
)
def test_each_clause_can_make_a_capture_incomplete(mutation, words):
    result = capture_complete(mutated(mutation))
    assert not result
    assert words in result.reason


def test_without_active_session_the_session_clause_is_skipped():
    assert capture_complete(mutated(lambda s: s.pop("activeSession")))


def test_empty_session_matches_missing_runtime_result_keys():
    # missing map keys read as "": activeSession{id:"",podName:""} passes the session clause
    def change(s: dict[str, Any]) -> None:
        s["activeSession"] = {"id": "", "podName": ""}
        s["runtimeResult"] = {"state": "Succeeded", "imageReference": IMAGE_A}

    assert capture_complete(mutated(change))


def test_first_failing_clause_is_reported():
    def change(s: dict[str, Any]) -> None:
        s["phase"] = "Pushing"
        s["signing"] = {"mode": "cert", "state": "Failed"}

    assert "Pushing" in capture_complete(mutated(change)).reason


def test_status_is_not_modified():
    st = status()
    before = copy.deepcopy(st)
    capture_complete(capture(st))
    assert st == before
