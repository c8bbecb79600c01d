"""What identifies KServe's controller of KernelCacheNodes: its Deployment's name, labels or image."""

from __future__ import annotations

import pytest

from kubectl_kcache.kernelcache import controller as kserve


@pytest.mark.parametrize(
    "image",
    [
        "kserve/kserve-localmodel-controller:v0.16.0",
        "docker.io/kserve/kserve-localmodel-controller",
        "registry.local:5000/mirror/kserve/kserve-kernelcache-controller:latest",
        "quay.io/x/kserve-localmodel-controller@sha256:" + "a" * 64,
        "kserve-localmodel-controller:v1@sha256:" + "b" * 64,
    ],
)
def test_its_image_from_any_registry_with_any_tag_or_digest(image):
    assert kserve.is_controller_image(image)


@pytest.mark.parametrize(
    "image",
    [
        "kserve/kserve-controller:v0.16.0",  # the InferenceService controller writes no KernelCacheNode
        "kserve/kserve-localmodelnode-agent:v0.16.0",
        "kserve/kserve-kernelcachenode-agent:v0.16.0",
        "registry.local:5000/kserve-localmodel-controller-fork:v1",
        "kserve-localmodel-controller.example.com/app:v1",  # a registry host named like it is not the image
        "",
    ],
)
def test_other_images_are_not_it(image):
    assert not kserve.is_controller_image(image)


def test_why_a_deployment_is_kserves_controller():
    assert kserve.why_controller("kserve-localmodel-controller-manager", {}, []) == "named as KServe installs it"
    assert (
        kserve.why_controller("lm", {"control-plane": "kserve-localmodel-controller-manager"}, [])
        == "labelled control-plane=kserve-localmodel-controller-manager"
    )
    assert (
        kserve.why_controller("lm", {}, ["busybox", "kserve/kserve-localmodel-controller:v0.17.0"])
        == "image kserve/kserve-localmodel-controller:v0.17.0"
    )
    assert kserve.why_controller("lm", {"control-plane": "other"}, ["kserve/kserve-controller:v1"]) == ""
