"""Generated names (kserve-notes.md §2.3, §3.1, §3.4, §3.5): KernelCache from capture, capture from pod,
preparation Job, hashed label values. Test literals from KServe's tests and values computed from the Go code."""

from __future__ import annotations

import hashlib
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubectl_kcache.kernelcache.names import (
    capture_revision_name,
    generated_kernel_cache_name,
    label_value,
    preparation_job_name,
)

IMAGE_A = "registry.example.com/cache@sha256:" + "a" * 64
IMAGE_D = "registry.example.com/cache@sha256:" + "d" * 64
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


# ---- generatedKernelCacheName -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("capture", "image", "expected"),
    [
        ("model-capture", IMAGE_A, "model-5fc2f4e1d106aaa8a0970991"),
        ("qwen-kernelcache-capture", IMAGE_A, "qwen-kernelcache-5fc2f4e1d106aaa8a0970991"),
        ("qwen-kernelcache-capture-second", IMAGE_D, "qwen-kernelcache-capture-second-4edec3a96632b9c65d549669"),
    ],
)
def test_generated_kernel_cache_name_golden(capture, image, expected):
    assert generated_kernel_cache_name(capture, image) == expected


def test_digest_is_the_first_24_hex_of_sha256_of_the_image():
    assert hashlib.sha256(IMAGE_A.encode()).hexdigest().startswith("5fc2f4e1d106aaa8a0970991")
    assert generated_kernel_cache_name("x", IMAGE_A).endswith("-" + hashlib.sha256(IMAGE_A.encode()).hexdigest()[:24])


def test_a_new_digest_gives_a_new_name():
    assert generated_kernel_cache_name("model-capture", IMAGE_A) != generated_kernel_cache_name(
        "model-capture", IMAGE_D
    )


def test_only_one_trailing_capture_suffix_is_removed():
    assert generated_kernel_cache_name("x-capture-capture", IMAGE_A) == "x-capture-5fc2f4e1d106aaa8a0970991"
    assert generated_kernel_cache_name("capture-x", IMAGE_A) == "capture-x-5fc2f4e1d106aaa8a0970991"


def test_prefix_is_cut_to_38_then_trailing_dash_and_dot_removed():
    assert generated_kernel_cache_name("a" * 50, IMAGE_A) == "a" * 38 + "-5fc2f4e1d106aaa8a0970991"
    name = "b" * 35 + "-.-" + "c" * 10  # the cut falls after "-.-"
    assert generated_kernel_cache_name(name, IMAGE_A) == "b" * 35 + "-5fc2f4e1d106aaa8a0970991"
    assert len(generated_kernel_cache_name("z" * 100 + "-capture", IMAGE_A)) == 38 + 1 + 24


def test_real_world_capture_name():
    name = generated_kernel_cache_name("opt-125m-no-cache-kcc-566d8dc4bf", IMAGE_A)
    assert name.startswith("opt-125m-no-cache-kcc-566d8dc4bf-")
    assert len(name) == 32 + 1 + 24


def test_empty_prefix_is_not_guarded():
    assert generated_kernel_cache_name("-capture", IMAGE_A) == "-5fc2f4e1d106aaa8a0970991"


# ---- KernelCacheCaptureRevisionName ------------------------------------------------------------------

Q60 = "qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq-50ddcf818ce5-kcc-669889f77f"
Q59X = "qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq-690affa49d80-kcc-669889f77f"


def test_capture_revision_name_short():
    assert capture_revision_name("qwen", "669889f77f") == "qwen-kcc-669889f77f"


def test_capture_revision_name_60_q():
    got = capture_revision_name("q" * 60, "669889f77f")
    assert got == Q60
    assert len(got) == 63
    assert got.endswith("-kcc-669889f77f")


def test_capture_revision_name_59_q_and_x_differs():
    got = capture_revision_name("q" * 59 + "x", "669889f77f")
    assert got == Q59X
    assert len(got) == 63
    assert got != capture_revision_name("q" * 60, "669889f77f")


def test_capture_revision_name_boundary():
    # a 10-char revision leaves 48 characters for the source name
    assert capture_revision_name("s" * 48, "669889f77f") == "s" * 48 + "-kcc-669889f77f"
    longer = capture_revision_name("s" * 49, "669889f77f")
    assert len(longer) == 63
    assert longer.startswith("s" * 35 + "-")


def test_capture_revision_name_trims_dashes_before_the_digest():
    got = capture_revision_name("a" * 34 + "--" + "b" * 30, "669889f77f")
    assert got.startswith("a" * 34 + "-" + hashlib.sha256(("a" * 34 + "--" + "b" * 30).encode()).hexdigest()[:12])


@pytest.mark.parametrize(
    ("source", "revision"), [("", "669889f77f"), ("qwen", ""), ("qwen", "r" * 58), ("q", "r" * 70)]
)
def test_capture_revision_name_empty_when_nothing_fits(source, revision):
    assert capture_revision_name(source, revision) == ""


# ---- preparation Job names ---------------------------------------------------------------------------


def test_job_name_golden_test_literal_prefix():
    name = preparation_job_name("team-a", "opt-cache-kcc-abcdef", "", "ip-10-0-1-2")
    assert name.startswith("kc-opt-cache-kcc-abcdef-ip-10-0-1-2-")
    assert len(name) <= 63
    assert name == preparation_job_name("team-a", "opt-cache-kcc-abcdef", "", "ip-10-0-1-2")
    assert name != preparation_job_name("team-a", "opt-cache-kcc-abcdef", "", "ip-10-0-1-3")


@pytest.mark.parametrize(
    ("ns", "kc", "image", "node", "expected"),
    [
        ("team-a", "opt-cache-kcc-abcdef", "", "ip-10-0-1-2", "kc-opt-cache-kcc-abcdef-ip-10-0-1-2-9c8b4f027b5e6d14"),
        ("team", "cache", IMAGE_A, "gpu-node", "kc-cache-gpu-node-f66646c0c90ba559"),
    ],
)
def test_job_name_computed(ns, kc, image, node, expected):
    assert preparation_job_name(ns, kc, image, node) == expected


def test_job_name_parts_lowercased_dots_replaced_cut_and_trimmed():
    name = preparation_job_name("ns", "My.Cache", IMAGE_A, "ip-10.0.1.2.ec2.internal")
    assert name.startswith("kc-my-cache-ip-10-0-1-2-ec2-in-")
    name = preparation_job_name("ns", "a" * 23 + "-b", IMAGE_A, "n" * 17 + ".x")
    assert name.startswith("kc-" + "a" * 23 + "-" + "n" * 17 + "-")
    assert preparation_job_name("ns", "--", IMAGE_A, "..").startswith("kc-unknown-unknown-")


@given(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-.", min_size=1, max_size=253),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-.", min_size=1, max_size=253),
)
def test_job_name_always_fits_in_63(kc, node):
    name = preparation_job_name("ns", kc, IMAGE_A, node)
    assert len(name) <= 63
    assert DNS_LABEL.match(name)


# ---- label values ------------------------------------------------------------------------------------


def test_label_value_keeps_valid_values():
    assert label_value("gpu-node-1") == "gpu-node-1"
    assert label_value("a" * 63) == "a" * 63
    assert label_value("A_b.c-9") == "A_b.c-9"
    assert label_value("") == ""


def test_label_value_hashes_long_values():
    got = label_value("n" * 64)
    assert got == "h-ce068a195ab380a813c713035ed74921acee4d3bd1c4ede24c11cba02c3ca"
    assert len(got) == 63
    assert got == label_value("n" * 64)


@pytest.mark.parametrize("value", ["-a", "a-", "a/b", "a b", "é", ".a", "a:b"])
def test_label_value_hashes_invalid_values(value):
    got = label_value(value)
    assert got == "h-" + hashlib.sha256(value.encode()).hexdigest()[:61]


def test_label_value_hashes_value_with_trailing_newline():
    assert label_value("gpu-node\n") == "h-" + hashlib.sha256(b"gpu-node\n").hexdigest()[:61]


@given(st.text(max_size=80))
def test_label_value_is_always_a_valid_label_value(value):
    got = label_value(value)
    assert len(got) <= 63
    assert LABEL_VALUE.fullmatch(got)
