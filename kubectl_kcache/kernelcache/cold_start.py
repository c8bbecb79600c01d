"""Serving pods that start cold by design: not cache misses.

* `producer`: the pod a KernelCacheCapture's `status.activeSession.podName` names (same namespace; the pod of
  the capture's InferenceService). KServe's webhook gave it the capture sidecar: it compiled the kernels itself,
  so it started without a cache and already holds the compiled kernels.
* `being-captured`: a pod whose revision is still being captured: the capture KServe generates for its
  InferenceService and `pod-template-hash` (`capture_revision_name`) exists and is not in a terminal phase
  (Complete, Unchanged, Failed). Its cache does not exist until the capture completes.

Matched only by what KServe records (the capture's active session, the pod's InferenceService label and its
`pod-template-hash`), never by name patterns. The one rule `why-not-cached` (one pod and the fleet), `status`
and the monitor apply: such a pod is neither a miss nor a pod a recreate would help, and is not in the hit
rate's denominator.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from ..objects import Capture, Pod
from . import constants as c
from .names import capture_revision_name

PRODUCER = "producer"
BEING_CAPTURED = "being-captured"


class ColdByDesign(msgspec.Struct, frozen=True):
    """Why a pod started cold by design, and the capture that says so."""

    reason: str  # PRODUCER or BEING_CAPTURED
    capture: Capture

    @property
    def capture_key(self) -> str:
        return f"{self.capture.namespace}/{self.capture.name}"

    @property
    def kernel_cache(self) -> str:
        """The KernelCache the capture records (status.kernelCacheRef, "ns/name"), "" when none yet."""
        ref = self.capture.kernel_cache_ref
        return f"{ref.namespace}/{ref.name}" if ref is not None and ref.name else ""

    @property
    def phase(self) -> str:
        return self.capture.phase or "Pending"

    def to_dict(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "capture": self.capture_key,
            "phase": self.phase,
            "kernelCache": self.kernel_cache or None,
        }

    def sentence(self, kernel_cache_exists: bool = True) -> str:
        """What it means, first words first: "this pod produced team/x's cache; ..."."""
        if self.reason == PRODUCER:
            if self.kernel_cache and kernel_cache_exists:
                return (
                    f"This pod produced KernelCache {self.kernel_cache} (it is the active session of "
                    f"KernelCacheCapture {self.capture_key}): a producer starts cold by design and already holds "
                    "the compiled kernels."
                )
            if self.capture.phase in c.CAPTURE_TERMINAL_PHASES:
                return (
                    f"This pod is the producer of KernelCacheCapture {self.capture_key} (its active session; the "
                    f"capture is {self.phase}): a producer starts cold by design and already holds the compiled "
                    "kernels."
                )
            return (
                f"This pod is producing the cache of KernelCacheCapture {self.capture_key} (its active session; "
                f"the capture is {self.phase}): a producer starts cold by design and holds the kernels it compiles."
            )
        session = self.capture.active_session
        producer = f" (its producer is pod {session.pod_name})" if session is not None and session.pod_name else ""
        return (
            f"This pod's revision is being captured: KernelCacheCapture {self.capture_key} is {self.phase}"
            f"{producer}. Pods of a revision being captured start cold by design: KServe creates its KernelCache "
            "when the capture completes; pods created once that cache is Ready on their node get it."
        )


class CaptureIndex(msgspec.Struct, frozen=True):
    """Captures by the pod their active session names and by "namespace/name"."""

    producers: Mapping[tuple[str, str], Capture]
    by_key: Mapping[str, Capture]


def capture_index(captures: Iterable[Capture]) -> CaptureIndex:
    producers: dict[tuple[str, str], Capture] = {}
    by_key: dict[str, Capture] = {}
    for cap in sorted(captures, key=lambda x: (x.namespace, x.name)):
        by_key[f"{cap.namespace}/{cap.name}"] = cap
        session = cap.active_session
        if session is not None and session.pod_name:
            producers.setdefault((cap.namespace, session.pod_name), cap)
    return CaptureIndex(producers, by_key)


def cold_by_design(pod: Pod, captures: CaptureIndex | Iterable[Capture]) -> ColdByDesign | None:
    """Whether `pod` starts cold by design (it is a producer, or its revision is being captured), else None."""
    index = captures if isinstance(captures, CaptureIndex) else capture_index(captures)
    isvc = pod.meta.labels.get(c.LABEL_ISVC, "")
    if not isvc:
        return None
    cap = index.producers.get((pod.namespace, pod.name))
    if cap is not None and (not cap.source_name or cap.source_name == isvc):
        return ColdByDesign(PRODUCER, cap)
    name = capture_revision_name(isvc, pod.meta.labels.get(c.LABEL_POD_TEMPLATE_HASH, ""))
    cap = index.by_key.get(f"{pod.namespace}/{name}") if name else None
    if cap is not None and cap.phase not in c.CAPTURE_TERMINAL_PHASES:
        return ColdByDesign(BEING_CAPTURED, cap)
    return None
