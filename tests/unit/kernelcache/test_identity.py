"""The pod identity and footprints, against KServe's own tests (pkg/kernelcache/identity/identity_test.go,
pkg/webhook/admission/kernelcache/model_source_test.go, selector_test.go) and the literal footprints of
admission.md §3.6 (KServe's tests compute theirs by calling the code; these were computed with Go)."""

from __future__ import annotations

import pytest

from kubectl_kcache import objects as o
from kubectl_kcache.kernelcache import identity as i

IMG_D = "registry.example/vllm@sha256:" + "b" * 64
MODEL_HASH = "sha256:1b15e4988c0d47b53125cb681e6abb0490247bf430b3065dac279cd30ec1e402"  # hf://Qwen/Qwen3-0.6B
ISVC_FIRST = i.Workload("InferenceService", "first")
SHA_A = "sha256:" + "a" * 64


def ctr(name: str = "kserve-container", image: str = IMG_D, **kw) -> o.Container:
    return o.Container(name=name, image=image, **kw)


# ---- golden footprints (admission.md §3.6) -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("ns", "workload", "image", "cmd_hash", "args_hash", "factors", "wfp", "cfp"),
    [
        (
            "team",
            ISVC_FIRST,
            IMG_D,
            "",
            "",
            {},  # selector_test's selectionPod
            "sha256:be9c32be1f2dc9021bdc58793a047029cc7a35e9fc09c197d8fb522f2525c1b8",
            "sha256:2039ed3f20eb5fd3e7ddbabea0342131254eba1c973c65583dea0e60b66c742c",
        ),
        (
            "team",
            ISVC_FIRST,
            "registry.example/vllm:v0.10",
            "",
            "",
            {},
            "",
            "sha256:faaaaa8d88747ac760086090ff8bcd180b8dbfc65d3cafe66b984b02f9c1e998",
        ),
        (
            "team",
            i.Workload("LLMInferenceService", "first"),
            IMG_D,
            "",
            "",
            {},
            "sha256:9be626f6bfdd0e9049348e9fb15d079839869ece8df9faf8c023c499cb496dc1",
            "sha256:2039ed3f20eb5fd3e7ddbabea0342131254eba1c973c65583dea0e60b66c742c",
        ),
        (
            "team",
            i.Workload("InferenceService", "other"),
            IMG_D,
            "sha256:" + "e" * 64,
            "sha256:" + "f" * 64,
            {},
            "sha256:0317021efbb316370cc15b56dde4104b017f7e285aace9d50ef4056443b252e3",
            "sha256:2039ed3f20eb5fd3e7ddbabea0342131254eba1c973c65583dea0e60b66c742c",
        ),
    ],
)
def test_golden_footprints(ns, workload, image, cmd_hash, args_hash, factors, wfp, cfp):
    ident = i.build(ns, workload, image, MODEL_HASH, cmd_hash, args_hash, factors)
    assert (ident.workload_footprint, ident.compatibility_footprint) == (wfp, cfp)


def test_golden_footprints_from_a_container_command():
    command = ("vllm", "--dtype", "bfloat16", "--max-model-len", "4096", "--tensor-parallel-size", "2")
    ident = i.container_identity("team", ISVC_FIRST, ctr(command=command), MODEL_HASH)
    assert ident.command_hash == "sha256:ccb80915f66f6b745333ffc484fcc7dbffecf6830f71995a6f408f89bde768ef"
    assert ident.args_hash == ""
    assert ident.runtime_factors == {
        "option.dtype": "bfloat16",
        "option.maxModelLen": "4096",
        "option.tensorParallelSize": "2",
    }
    assert ident.workload_footprint == "sha256:51ef0978f65ebe2fca27a87ff838ef088e6a6bb2e4ca244f10c56db5ea30d5be"
    assert ident.compatibility_footprint == "sha256:bd3b173c11f439762eb53d74a593c2a3771a53445db2f0661762af380e9df515"


def test_golden_identity_test_base():
    ident = i.build(
        "team", i.Workload("InferenceService", "model"), IMG_D, SHA_A, factors={"option.tensorParallelSize": "2"}
    )
    assert ident.workload_footprint == "sha256:0d218e2b54dd000b5ad1029e4a6f193d6f090118e1ef71a6a85c298013be63ff"
    assert ident.compatibility_footprint == "sha256:a6c1a7abf91966538868af9f1dbf6d3cfaf9374d3518060115c83ee61821b7b7"


# ---- identity_test.go --------------------------------------------------------------------------------------


def base(**kw):
    args = {
        "namespace": "team",
        "workload": i.Workload("InferenceService", "model"),
        "image": IMG_D,
        "model_hash": SHA_A,
        "factors": {"option.tensorParallelSize": "2"},
    }
    args.update(kw)
    return i.build(**args)


@pytest.mark.parametrize(
    ("image", "workload", "compat"),
    [
        (IMG_D, True, True),
        ("registry.example/vllm:v0.10", False, True),
        ("registry.example/vllm:latest", False, False),
        ("registry.example/vllm", False, False),
    ],
)
def test_build_footprints_by_image_reference(image, workload, compat):
    """TestBuildFootprintsByImageReference"""
    ident = base(image=image)
    assert (bool(ident.workload_footprint), bool(ident.compatibility_footprint)) == (workload, compat)
    assert {
        "namespace": "team",
        "workloadName": "model",
        "runtimeImage": image,
        "modelURIHash": SHA_A,
    }.items() <= ident.factors.items()


def test_build_requires_model_uri_hash():
    """TestBuildRequiresModelURIHash"""
    for bad in ("", "sha256:abc", "md5:" + "a" * 64, "sha256:" + "A" * 64):
        with pytest.raises(i.IdentityError, match="model URI hash is required"):
            base(model_hash=bad)
    with pytest.raises(i.IdentityError, match="namespace, workload kind, and workload name are required"):
        base(namespace="")


def test_build_trims_runtime_image():
    """TestBuildTrimsRuntimeImage"""
    ident = base(image=f"  {IMG_D}  ")
    assert ident.factors["runtimeImage"] == IMG_D and ident.workload_footprint


def test_build_separates_workload_and_compatibility_factors():
    """TestBuildSeparatesWorkloadAndCompatibilityFactors, TestBuildIncludesWorkloadMetadataOnlyInWorkloadFootprint"""
    a = base()
    b = base(
        namespace="other",
        workload=i.Workload("InferenceService", "other"),
        command_hash="sha256:" + "e" * 64,
        args_hash="sha256:" + "f" * 64,
    )
    assert a.workload_footprint != b.workload_footprint
    assert a.compatibility_footprint == b.compatibility_footprint


def test_build_separates_workload_kinds():
    """TestBuildSeparatesWorkloadKinds, TestWorkloadKindIsNotExactMatch"""
    a, b = base(), base(workload=i.Workload("LLMInferenceService", "model"))
    assert a.workload_footprint != b.workload_footprint
    assert a.compatibility_footprint == b.compatibility_footprint


def test_runtime_config_factors_only_in_compatibility():
    """TestBuildIncludesRuntimeConfigFactorsOnlyInCompatibilityFootprint, TestWorkloadMatchRequiresCompatibility"""
    a = base(factors={"option.dtype": "bfloat16"})
    b = base(factors={"option.dtype": "float16"})
    assert a.workload_footprint == b.workload_footprint
    assert a.compatibility_footprint != b.compatibility_footprint
    assert a.factors["option.dtype"] == "bfloat16"


# ---- image classes (classifyImageReference) -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        (IMG_D, "digest"),
        ("repo:tag@sha256:" + "c" * 64, "digest"),
        ("registry.example/vllm:v0.10", "tag"),
        ("img:LATEST", "tag"),
        ("host:5000", "tag"),
        ("img:latest", "floating"),
        ("img", "floating"),
        ("host:5000/img", "floating"),
    ],
)
def test_image_classes(image, expected):
    """TestIsStableRuntimeImageRequiresDigest (only the digest is stable)"""
    assert i.classify_image(image) == expected


@pytest.mark.parametrize(
    ("image", "error"),
    [
        ("", i.ERR_IMAGE_REQUIRED),
        ("a b", i.ERR_IMAGE_REQUIRED),
        ("a\tb", i.ERR_IMAGE_REQUIRED),
        ("img@sha256:bad", i.ERR_DIGEST_INVALID),
        ("@sha256:" + "a" * 64, i.ERR_DIGEST_INVALID),
        ("img@sha256:" + "A" * 64, i.ERR_DIGEST_INVALID),
        ("img@sha512:abc", i.ERR_DIGEST_UNSUPPORTED),
        ("img@SHA256:" + "a" * 64, i.ERR_DIGEST_UNSUPPORTED),
        ("repo@", i.ERR_DIGEST_UNSUPPORTED),
        ("img:", i.ERR_TAG_EMPTY),
    ],
)
def test_malformed_images_are_errors(image, error):
    with pytest.raises(i.IdentityError) as exc:
        i.classify_image(image)
    assert str(exc.value) == error


# ---- workload and runtime container (identity.go; TestIdentityForPodIncludesWorkloadKind) ------------------


def test_workload_ref():
    assert i.workload_ref({"serving.kserve.io/inferenceservice": "first"}) == ISVC_FIRST
    llm = {"app.kubernetes.io/name": "first", "app.kubernetes.io/part-of": "llminferenceservice"}
    assert i.workload_ref(llm) == i.Workload("LLMInferenceService", "first")
    assert i.workload_ref({**llm, "serving.kserve.io/inferenceservice": "x"}).kind == "InferenceService"
    with pytest.raises(i.IdentityError, match="workload identity labels are required"):
        i.workload_ref({"serving.kserve.io/inferenceservice": "", "app.kubernetes.io/name": "first"})


def test_runtime_container_order_by_kind():
    containers = (ctr("kserve-container", "registry.example/sidecar:latest"), ctr("main", IMG_D))
    assert i.runtime_container("InferenceService", containers).name == "kserve-container"
    assert i.runtime_container("LLMInferenceService", containers).name == "main"
    assert i.runtime_container("InferenceService", (ctr("sidecar"), ctr("main"))).name == "main"
    with pytest.raises(i.IdentityError, match="runtime container was not found"):
        i.runtime_container("InferenceService", (ctr("vllm"),))


# ---- model_source_test.go -------------------------------------------------------------------------------------


def test_inference_service_model_source_resolver():
    """TestInferenceServiceModelSourceResolver"""
    ann = "internal.serving.kserve.io/storage-initializer-sourceuri"
    known = i.model_source("InferenceService", {ann: " hf://Qwen/Qwen3-0.6B "})
    assert (known.known, known.uri, known.hash) == (True, "hf://Qwen/Qwen3-0.6B", MODEL_HASH)
    assert not i.model_source("InferenceService", {}).known
    assert i.model_source("InferenceService", {}).uri == ""
    assert not i.model_source("InferenceService", {ann: "%"}).known


def test_model_source_does_not_assume_unsupported_workloads():
    """TestResolveWorkloadModelSourceDoesNotAssumeUnsupportedWorkloads"""
    ann = {"internal.serving.kserve.io/storage-initializer-sourceuri": "hf://x"}
    source = i.model_source("LLMInferenceService", ann)
    assert not source.known and "LLMInferenceService" in source.problem
