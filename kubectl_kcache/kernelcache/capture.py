"""Which captures KServe turns into a KernelCache (isCaptureComplete), with the reason when not."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from ..objects import Artifact, Capture, KernelCache, Node, NodeGroup, find_condition
from . import constants as c
from .membership import Membership
from .names import generated_kernel_cache_name
from .selection import Decision, select_node_group


class Eligibility(msgspec.Struct, frozen=True):
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


# ---- what KServe's KernelCache reconciler does with each capture (cache_reconciler.go,
# ---- capture_cache_reconciler.go: findCompletedCapture, reconcileCaptureKernelCache, setCaptureKernelCacheRef)
# Its key is the KernelCache name generated from a complete capture. For each name it takes the first complete
# capture that maps to it (the others are never linked); when the KernelCache does not exist it selects a group
# and creates it (whatever the capture's kernelCacheRef says), when it exists it only links the capture.

NOT_ELIGIBLE = "not-eligible"  # not complete: KServe does nothing with it
CREATE = "create"  # complete, its KernelCache does not exist: select a group, create it, link
LINK = "link"  # its KernelCache exists: set status.kernelCacheRef (no selection, no event)
LINKED = "linked"  # its KernelCache exists and status.kernelCacheRef names it: nothing to do
MISMATCH = "mismatch"  # its KernelCache exists with another artifact: KServe refuses to link, every pass
SHADOWED = "shadowed"  # another complete capture maps to the same KernelCache name: never linked
TERMINATING = "terminating"  # its KernelCache has a deletionTimestamp: KServe's pass returns at once, no link

DEFAULT_OCI_PATH = "io.vllm.cache"  # the CRD's default for cachePaths[].ociPath


def artifact_key(raw: Mapping[str, Any] | None) -> Any:
    """An artifact as Go's reflect.DeepEqual sees the typed struct after the API server's defaulting: absent
    and empty are equal, unknown fields do not exist, ociPath defaults to io.vllm.cache."""
    if raw is None:
        return None
    paths = []
    for p in raw.get("cachePaths") or []:
        p = p if isinstance(p, Mapping) else {}
        paths.append(
            (
                str(p.get("containerName") or ""),
                str(p.get("containerPath") or ""),
                str(p.get("ociPath") or DEFAULT_OCI_PATH),
            )
        )
    identity = _mapping(raw.get("identity"))
    footprints, factors = _mapping(identity.get("footprints")), _mapping(identity.get("factors"))
    return (
        str(raw.get("imageReference") or ""),
        tuple(paths),
        (str(footprints.get("workloadFootprint") or ""), str(footprints.get("compatibilityFootprint") or "")),
        tuple(sorted((str(k), str(v)) for k, v in factors.items())),
    )


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def artifacts_equal(a: Artifact | None, b: Artifact | None) -> bool:
    if a is None or b is None:
        return False
    return bool(artifact_key(a.raw) == artifact_key(b.raw))


def mismatch_message(kc_namespace: str, kc_name: str, capture: Capture) -> str:
    return (
        f"KernelCache {kc_namespace}/{kc_name} artifact does not match KernelCacheCapture "
        f"{capture.namespace}/{capture.name}"
    )


class CacheOutcome(msgspec.Struct, frozen=True):
    """What KServe does for one capture, and why."""

    outcome: str
    kernel_cache: str = ""  # the generated KernelCache name (empty when not eligible)
    reason: str = ""  # for NOT_ELIGIBLE: why; for MISMATCH: KServe's error
    owner: str = ""  # for SHADOWED: the capture whose pass the name belongs to
    ref_was: str = ""  # the capture's status.kernelCacheRef ("ns/name") when it is not the generated name


def cache_outcomes(
    captures: Iterable[Capture], kernel_caches: Mapping[str, KernelCache]
) -> dict[tuple[str, str], CacheOutcome]:
    """(namespace, name) of each capture -> what KServe's KernelCache reconciler does for it.

    `kernel_caches` is keyed "namespace/name". Of several complete captures with one generated name the first
    by name is the one KServe considers (its tests and an uncached list give that order; a live controller
    reads its informer cache, whose order is not fixed, so which one it links is not guaranteed).
    """
    captures = sorted(captures, key=lambda x: (x.namespace, x.name))
    out: dict[tuple[str, str], CacheOutcome] = {}
    owners: dict[tuple[str, str], Capture] = {}
    for cap in captures:
        complete = capture_complete(cap)
        if not complete:
            out[(cap.namespace, cap.name)] = CacheOutcome(NOT_ELIGIBLE, reason=complete.reason)
            continue
        assert cap.artifact is not None  # complete captures have one
        name = generated_kernel_cache_name(cap.name, cap.artifact.image_reference)
        ref = cap.kernel_cache_ref
        ref_was = str(ref) if ref is not None and (ref.namespace, ref.name) != (cap.namespace, name) else ""
        owner = owners.setdefault((cap.namespace, name), cap)
        if owner is not cap:
            out[(cap.namespace, cap.name)] = CacheOutcome(SHADOWED, name, owner=owner.name, ref_was=ref_was)
            continue
        kc = kernel_caches.get(f"{cap.namespace}/{name}")
        if kc is None:
            out[(cap.namespace, cap.name)] = CacheOutcome(CREATE, name, ref_was=ref_was)
        elif kc.meta.deleting:
            out[(cap.namespace, cap.name)] = CacheOutcome(
                TERMINATING, name, terminating_text(kc, cap.name), ref_was=ref_was
            )
        elif not artifacts_equal(cap.artifact, kc.artifact):
            out[(cap.namespace, cap.name)] = CacheOutcome(
                MISMATCH, name, mismatch_message(cap.namespace, name, cap), ref_was=ref_was
            )
        elif ref_was or ref is None:
            out[(cap.namespace, cap.name)] = CacheOutcome(LINK, name, ref_was=ref_was)
        else:
            out[(cap.namespace, cap.name)] = CacheOutcome(LINKED, name)
    return out


def terminating_text(kc: KernelCache, capture: str = "") -> str:
    """What KServe does with a KernelCache that has a deletionTimestamp, and what holds it (its finalizers)."""
    held = kc.meta.finalizers
    holds = f"held by finalizer(s) {', '.join(held)}" if held else "no finalizer holds it (it is about to disappear)"
    after = (
        f"; once it is gone KServe re-creates it from capture {capture} (node-group selection runs again)"
        if capture
        else "; once it is gone nothing re-creates it unless a complete capture maps to its name"
    )
    return (
        f"KernelCache {kc.namespace}/{kc.name} is terminating (deletionTimestamp {kc.meta.deletion_timestamp}), "
        f"{holds}: KServe's reconciler returns right after reading it, so no link, no usage, no status and no "
        f"Jobs (its status is frozen); the pod webhook still mounts it{after}"
    )


class CaptureCache(msgspec.Struct, frozen=True):
    """One capture, what KServe does with it, and for a KernelCache to create, the node-group decision."""

    capture: Capture
    outcome: CacheOutcome
    decision: Decision | None = None  # only for CREATE

    @property
    def blocked(self) -> bool:
        """A KernelCache to create whose node-group selection fails: KServe emits a Warning event instead."""
        return self.decision is not None and not self.decision.ok


def capture_caches(
    captures: Iterable[Capture],
    kernel_caches: Mapping[str, KernelCache],
    groups: Mapping[str, NodeGroup],
    nodes: Mapping[str, Node],
    default_group: str,
    membership: Membership | None = None,
) -> list[CaptureCache]:
    """Every capture with its outcome, in (namespace, name) order; the KernelCaches to create carry KServe's
    node-group decision for them. `membership`: of `nodes` in `groups`, when already computed."""
    captures = list(captures)
    outcomes = cache_outcomes(captures, kernel_caches)
    out = []
    for cap in sorted(captures, key=lambda x: (x.namespace, x.name)):
        outcome = outcomes[(cap.namespace, cap.name)]
        decision = None
        if outcome.outcome == CREATE:
            decision = select_node_group(cap.active_session, groups, nodes, default_group, membership)
        out.append(CaptureCache(cap, outcome, decision))
    return out
