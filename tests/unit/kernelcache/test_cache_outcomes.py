"""What KServe's KernelCache reconciler does with each capture (cache_reconciler.go, capture_cache_reconciler.go:
findCompletedCapture, reconcileCaptureKernelCache, setCaptureKernelCacheRef), with the golden cases of
capture_cache_reconciler_test.go and the corrected reference (§6.1b)."""

from __future__ import annotations

import copy
from typing import Any

from kubectl_kcache import objects as o
from kubectl_kcache.kernelcache.capture import (
    CREATE,
    LINK,
    LINKED,
    MISMATCH,
    NOT_ELIGIBLE,
    SHADOWED,
    artifact_key,
    cache_outcomes,
    capture_caches,
)
from tests import builders as b

NS = "team"
IMAGE_A = "registry.example.com/cache@sha256:" + "a" * 64
IMAGE_D = "registry.example.com/cache@sha256:" + "d" * 64


def capture(name: str, image: str = IMAGE_A, **kw: Any) -> o.Capture:
    st = b.capture_status(**kw)
    st["artifact"]["imageReference"] = image
    st["runtimeResult"]["imageReference"] = image
    return o.Capture.from_dict(b.capture(name, ns=NS, status=st))


def cache(name: str, artifact_of: o.Capture) -> o.KernelCache:
    obj = b.kernel_cache(name, NS, "gpu")
    assert artifact_of.artifact is not None
    obj["spec"]["artifact"] = copy.deepcopy(dict(artifact_of.artifact.raw))
    return o.KernelCache.from_dict(obj)


def outcomes(*captures: o.Capture, caches: tuple[o.KernelCache, ...] = ()) -> dict[str, tuple[str, str]]:
    got = cache_outcomes(captures, {f"{k.namespace}/{k.name}": k for k in caches})
    return {name: (x.outcome, x.kernel_cache) for (_, name), x in got.items()}


def test_golden_create_from_a_completed_capture_and_a_second_with_its_own_name():
    """TestKernelCacheReconcilerCreatesKernelCacheFromCompletedCapture: two captures, two images, two names."""
    first = capture("qwen-kernelcache-capture", requested="annotation-group")
    second = capture("qwen-kernelcache-capture-second", IMAGE_D)
    assert outcomes(first, second) == {
        "qwen-kernelcache-capture": (CREATE, "qwen-kernelcache-5fc2f4e1d106aaa8a0970991"),
        "qwen-kernelcache-capture-second": (CREATE, "qwen-kernelcache-capture-second-4edec3a96632b9c65d549669"),
    }


def test_golden_different_image_is_a_mismatch():
    """TestCaptureRejectsKernelCacheWithDifferentImage: the KernelCache under the generated name holds
    another image: KServe refuses to link, with its error text."""
    cap = capture("model-capture")
    other = capture("other", "registry.example.com/cache@sha256:" + "b" * 64)
    got = cache_outcomes(
        [cap], {f"{NS}/model-5fc2f4e1d106aaa8a0970991": cache("model-5fc2f4e1d106aaa8a0970991", other)}
    )
    x = got[(NS, "model-capture")]
    assert x.outcome == MISMATCH
    assert x.reason == (
        f"KernelCache {NS}/model-5fc2f4e1d106aaa8a0970991 artifact does not match KernelCacheCapture {NS}/model-capture"
    )


def test_a_deleted_kernel_cache_is_created_again_whatever_the_ref_says():
    cap = capture("model-capture", kernel_cache_ref={"namespace": NS, "name": "model-5fc2f4e1d106aaa8a0970991"})
    got = cache_outcomes([cap], {})[(NS, "model-capture")]
    assert (got.outcome, got.ref_was) == (CREATE, "")


def test_an_existing_kernel_cache_is_linked_and_then_left_alone():
    cap = capture("model-capture")
    kc = cache("model-5fc2f4e1d106aaa8a0970991", cap)
    assert outcomes(cap, caches=(kc,)) == {"model-capture": (LINK, kc.name)}
    linked = capture("model-capture", kernel_cache_ref={"namespace": NS, "name": kc.name})
    assert outcomes(linked, caches=(kc,)) == {"model-capture": (LINKED, kc.name)}


def test_a_ref_to_another_kernel_cache_is_overwritten():
    cap = capture("model-capture", kernel_cache_ref={"namespace": NS, "name": "hand-made"})
    kc = cache("model-5fc2f4e1d106aaa8a0970991", cap)
    got = cache_outcomes([cap], {f"{NS}/{kc.name}": kc})[(NS, "model-capture")]
    assert (got.outcome, got.ref_was) == (LINK, f"{NS}/hand-made")


def test_colliding_names_link_only_the_first_capture_by_name():
    """Names sharing the first 38 characters, one digest: one KernelCache name, one capture considered."""
    a = capture("llama-3-8b-instruct-production-east-kcc-5d8c7b9f4")
    z = capture("llama-3-8b-instruct-production-east-kcc-669889f77f")
    name = "llama-3-8b-instruct-production-east-kc-5fc2f4e1d106aaa8a0970991"
    got = cache_outcomes([z, a], {})
    assert (got[(NS, a.name)].outcome, got[(NS, a.name)].kernel_cache) == (CREATE, name)
    shadowed = got[(NS, z.name)]
    assert (shadowed.outcome, shadowed.kernel_cache, shadowed.owner) == (SHADOWED, name, a.name)
    # the same with the KernelCache present: only the first is linked
    got = cache_outcomes([z, a], {f"{NS}/{name}": cache(name, a)})
    assert got[(NS, a.name)].outcome == LINK and got[(NS, z.name)].outcome == SHADOWED


def test_a_trailing_capture_suffix_collides_too():
    assert outcomes(capture("model-a-capture"), capture("model-a")) == {
        "model-a": (CREATE, "model-a-5fc2f4e1d106aaa8a0970991"),
        "model-a-capture": (SHADOWED, "model-a-5fc2f4e1d106aaa8a0970991"),
    }


def test_an_incomplete_capture_is_not_the_owner_of_its_name():
    """findCompletedCapture skips captures that are not complete: a later complete one takes the name."""
    pending = capture("model-a", phase="Pushing")
    done = capture("model-a-capture")
    got = outcomes(pending, done)
    assert got["model-a"][0] == NOT_ELIGIBLE and got["model-a-capture"] == (CREATE, "model-a-5fc2f4e1d106aaa8a0970991")


def test_unchanged_captures_are_ignored():
    """Phase Unchanged is never Complete: the KernelCache reconciler creates and links nothing for it."""
    cap = capture("model-capture", phase="Unchanged")
    assert outcomes(cap)["model-capture"][0] == NOT_ELIGIBLE


def test_artifact_equality_is_go_deep_equal_after_defaulting():
    base = dict(b.artifact("cache"))
    assert artifact_key(base) == artifact_key(copy.deepcopy(base))
    no_oci = copy.deepcopy(base)
    for p in no_oci["cachePaths"]:
        p.pop("ociPath", None)
    with_default = copy.deepcopy(no_oci)
    for p in with_default["cachePaths"]:
        p["ociPath"] = "io.vllm.cache"
    assert artifact_key(no_oci) == artifact_key(with_default)  # the CRD defaults ociPath
    extra = copy.deepcopy(base)
    extra["unknownField"] = "x"  # pruned by the API server: not part of Go's struct
    assert artifact_key(extra) == artifact_key(base)
    other = copy.deepcopy(base)
    other["cachePaths"] = list(reversed(other["cachePaths"])) + [{"containerPath": "/x"}]
    assert artifact_key(other) != artifact_key(base)  # order and items matter


def test_capture_caches_decide_only_for_kernel_caches_to_create():
    groups = {"gpu": o.NodeGroup.from_dict(b.group("gpu", {"role": "gpu"}))}
    nodes = {"gpu-node": o.Node.from_dict(b.node("gpu-node", {"role": "gpu"}))}
    cap = capture("model-capture", node_name="gpu-node")
    kc = cache("model-5fc2f4e1d106aaa8a0970991", cap)
    [create] = capture_caches([cap], {}, groups, nodes, "")
    assert create.decision is not None and create.decision.group == "gpu" and not create.blocked
    [link] = capture_caches([cap], {f"{NS}/{kc.name}": kc}, {}, {}, "")
    assert link.decision is None and not link.blocked  # linking selects nothing
    [blocked] = capture_caches([cap], {}, {}, nodes, "")
    assert blocked.blocked and blocked.decision is not None and blocked.decision.reason == "NoMatchingNodeGroup"
