"""Ready for admission (reference §2.3): a Ready entry in the pod's namespace whose image and both footprints
equal the KernelCache's artifact, of an OCI KernelCache with an image and at least one cache path."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_kcache import objects as o
from kubectl_kcache.kernelcache.admission import entry_matches_cache, ready_for_admission
from tests import builders as b

NS = "team-a"


def kc(**kw: Any) -> o.KernelCache:
    return o.KernelCache.from_dict(b.kernel_cache("cache", ns=NS, **kw))


def kc_with(change) -> o.KernelCache:
    obj = b.kernel_cache("cache", ns=NS)
    change(obj["spec"])
    return o.KernelCache.from_dict(obj)


def entry(state: str = "Ready", seed: str = "cache", ns: str = NS, name: str = "cache", **changes: Any) -> o.CacheEntry:
    raw = b.entry(ns, name, state=state, seed=seed)
    raw.update(changes)
    kcn = o.KernelCacheNode.from_dict(b.kcn("gpu-1", {f"{ns}/{name}": raw}))
    return kcn.entries[0]


def test_ready_matching_entry_is_ready_for_admission():
    assert entry_matches_cache(entry(), kc())
    assert ready_for_admission(entry(), kc(), NS)
    assert ready_for_admission(entry(), kc())  # namespace not checked without a pod


@pytest.mark.parametrize("state", ["Pending", "Pulling", "Extracting", "Error", ""])
def test_only_ready_entries(state):
    assert entry_matches_cache(entry(state), kc())
    assert not ready_for_admission(entry(state), kc(), NS)


def test_pod_namespace_must_equal_the_entry_namespace():
    assert not ready_for_admission(entry(), kc(), "team-b")


def test_entry_needs_a_kernel_cache_name():
    e = entry(kernelCacheRef={"namespace": NS, "name": ""})
    assert not ready_for_admission(e, kc(), NS)


def test_image_must_match():
    e = entry(imageReference=b.image("other"))
    assert not entry_matches_cache(e, kc())
    assert not ready_for_admission(e, kc(), NS)


def test_both_footprints_must_match():
    fp = b.footprints("cache")
    wrong_workload = entry(footprints={**fp, "workloadFootprint": b.digest("x")})
    wrong_compat = entry(footprints={**fp, "compatibilityFootprint": b.digest("x")})
    missing = entry(footprints={"workloadFootprint": fp["workloadFootprint"]})
    for e in (wrong_workload, wrong_compat, missing):
        assert not entry_matches_cache(e, kc())
        assert not ready_for_admission(e, kc(), NS)


def test_stale_entry_of_another_artifact():
    assert not ready_for_admission(entry(seed="old"), kc(), NS)


@pytest.mark.parametrize(("mount_type", "ready"), [("oci", True), ("", True), ("pvc", False), ("OCI", False)])
def test_mount_type(mount_type, ready):
    cache = kc_with(lambda spec: spec.update(mountType=mount_type))
    assert ready_for_admission(entry(), cache, NS) is ready


def test_mount_type_absent_means_oci():
    assert ready_for_admission(entry(), kc_with(lambda spec: spec.pop("mountType")), NS)


def test_artifact_needs_cache_paths_and_an_image():
    no_paths = kc_with(lambda spec: spec["artifact"].update(cachePaths=[]))
    assert not ready_for_admission(entry(), no_paths, NS)
    no_artifact = kc_with(lambda spec: spec.pop("artifact"))
    assert not entry_matches_cache(entry(), no_artifact)
    assert not ready_for_admission(entry(), no_artifact, NS)
    no_image = kc_with(lambda spec: spec["artifact"].pop("imageReference"))
    assert not ready_for_admission(entry(imageReference=""), no_image, NS)


def test_kernel_cache_state_is_not_consulted():
    assert ready_for_admission(entry(), kc(state="Error", reason="StorageError"), NS)
    assert ready_for_admission(entry(), kc(state="Pending"), NS)
