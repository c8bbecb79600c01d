"""KServe's consumer admission (kernelcache/admission/) against KServe's own tests:
pkg/webhook/admission/kernelcache/selector_test.go (newest, with the verification gate),
consumer_test.go (injectKernelCacheMount), sidecar_test.go (the selection parts),
pkg/kernelcache/container_test.go, and webhook_manifest_test.go; plus the webhook gates."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec.structs import replace

from kubectl_kcache import objects as o
from kubectl_kcache.kernelcache import admission as a
from kubectl_kcache.kernelcache.config import ConfigState, parse_config
from kubectl_kcache.kernelcache.identity import Workload, container_identity, model_uri_hash
from tests import builders as b

NS = "team"
IMG_D = "registry.example/vllm@sha256:" + "b" * 64
CACHE_IMAGE = "registry.example/cache@sha256:" + "d" * 64
MODEL = "hf://Qwen/Qwen3-0.6B"
MODEL_ANN = {
    "internal.serving.kserve.io/storage-initializer-sourceuri": MODEL,
    "serving.kserve.io/kernelcache-supported": "true",
}


def selection_pod(image: str = IMG_D, annotations: dict[str, str] | None = MODEL_ANN, **ctr: Any) -> o.Pod:
    """selector_test.go's selectionPod: pod `pod` in ns team, ISVC `first`, one kserve-container."""
    return o.Pod.from_dict(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "pod",
                "namespace": NS,
                "labels": {"serving.kserve.io/inferenceservice": "first"},
                "annotations": dict(annotations or {}),
            },
            "spec": {"containers": [{"name": "kserve-container", "image": image, **ctr}]},
        }
    )


def identity_of(pod: o.Pod) -> dict[str, Any]:
    ctr = pod.spec_containers[0]
    ident = container_identity(NS, Workload("InferenceService", "first"), ctr, model_uri_hash(MODEL))
    return {"workloadFootprint": ident.workload_footprint, "compatibilityFootprint": ident.compatibility_footprint}


def ready_cache(name: str, footprints: dict[str, str], verification: dict | None = None, **spec: Any) -> dict[str, Any]:
    """selector_test.go's readyCache: oci, the cache image, one kserve-container path, status Ready."""
    obj = {
        "apiVersion": b.KSERVE,
        "kind": "KernelCache",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "mountType": "oci",
            "artifact": {
                "imageReference": CACHE_IMAGE,
                "identity": {"footprints": footprints},
                "cachePaths": [
                    {"containerName": "kserve-container", "containerPath": "/cache", "ociPath": "io.vllm.cache"}
                ],
            },
            **spec,
        },
        "status": {"state": "Ready"},
    }
    if verification is not None:
        obj["status"]["verification"] = verification
    return obj


def node(name: str, *entries: tuple[dict[str, Any], str]) -> dict[str, Any]:
    """selector_test.go's kernelCacheNode: entries equal to their KernelCache's spec, with a state."""
    return b.kcn(
        name,
        {
            f"{kc['metadata']['namespace']}/{kc['metadata']['name']}": {
                "kernelCacheRef": {"namespace": kc["metadata"]["namespace"], "name": kc["metadata"]["name"]},
                "imageReference": kc["spec"]["artifact"]["imageReference"],
                "footprints": kc["spec"]["artifact"]["identity"]["footprints"],
                "state": state,
            }
            for kc, state in entries
        },
    )


def config(**extra: Any) -> ConfigState:
    import json

    return ConfigState(True, parse_config(json.dumps({"enabled": True, "artifactSecurity": {"mode": "none"}, **extra})))


def decide(pod: o.Pod, *objs: dict[str, Any], cfg: ConfigState | None = None, **kw: Any) -> a.Admission:
    kcns = [o.KernelCacheNode.from_dict(x) for x in objs if x["kind"] == "KernelCacheNode"]
    kcs = {
        f"{k.namespace}/{k.name}": k for k in (o.KernelCache.from_dict(x) for x in objs if x["kind"] == "KernelCache")
    }
    inputs = a.Inputs(
        pod=pod,
        namespace=NS,
        config=cfg or config(),
        kcns=kcns,
        kernel_caches=kcs,
        webhook_known=kw.pop("webhook_known", False),
        **kw,
    )
    return a.decide(inputs)


def other_workload(fp: dict[str, str]) -> dict[str, str]:
    """The footprints of a KernelCache captured by another workload (name other, e/f command and args
    hashes) with the same compatibility: TestSelectKernelCacheWorkloadMatch's `compatible`."""
    from kubectl_kcache.kernelcache.identity import build

    other = build(
        NS,
        Workload("InferenceService", "other"),
        IMG_D,
        model_uri_hash(MODEL),
        "sha256:" + "e" * 64,
        "sha256:" + "f" * 64,
    )
    assert other.compatibility_footprint == fp["compatibilityFootprint"]
    return {"workloadFootprint": other.workload_footprint, "compatibilityFootprint": other.compatibility_footprint}


# ---- selector_test.go ---------------------------------------------------------------------------------


def test_select_kernel_cache_workload_match():
    """TestSelectKernelCacheWorkloadMatch: the workload pass wins over name order (`compatible` sorts first)."""
    pod = selection_pod()
    fp = identity_of(pod)
    workload, compatible = ready_cache("workload", fp), ready_cache("compatible", other_workload(fp))
    adm = decide(pod, workload, compatible, node("node-a", (workload, "Ready"), (compatible, "Ready")))
    assert (adm.outcome, adm.cached_kernel_cache, adm.match) == ("cached", "team/workload", "Workload")
    assert [(c.key, c.match, c.rejected_by) for c in adm.candidates] == [
        ("team/compatible", "Compatibility", None),
        ("team/workload", "Workload", None),
    ]


def test_select_kernel_cache_skips_pod_without_model_source():
    """TestSelectKernelCacheSkipsPodWithoutModelSource"""
    pod = selection_pod(annotations={"serving.kserve.io/kernelcache-supported": "true"})
    adm = decide(pod)
    assert adm.outcome == "not-cached" and adm.blocked_by.id == "model-source"
    assert adm.blocked_by.effect == "skip"


def test_select_kernel_cache_uses_ready_node():
    """TestSelectKernelCacheUsesReadyNode"""
    pod = selection_pod()
    kc = ready_cache("matching", identity_of(pod))
    adm = decide(pod, kc, node("node-a", (kc, "Ready")), node("node-b", (kc, "Pending")))
    assert adm.cached_kernel_cache == "team/matching"
    assert [e.node for e in adm.winner.entries] == ["node-a"]


def test_select_kernel_cache_requires_successful_artifact_verification():
    """TestSelectKernelCacheRequiresSuccessfulArtifactVerification"""
    pod = selection_pod()
    cert = config(artifactSecurity={"mode": "cert", "cert": {"signingProfileRef": "kernelcache-signer"}})
    failed = ready_cache("verified", identity_of(pod), verification={"mode": "cert", "state": "Failed"})
    adm = decide(pod, failed, node("node-a", (failed, "Ready")), cfg=cert)
    assert adm.cached_kernel_cache is None
    assert adm.candidates[0].rejected_by == "verification"
    ok = ready_cache(
        "verified", identity_of(pod), verification={"mode": "cert", "state": "Succeeded", "verified": True}
    )
    assert decide(pod, ok, node("node-a", (ok, "Ready")), cfg=cert).cached_kernel_cache == "team/verified"


@pytest.mark.parametrize("change", ["model", "image", "dtype"])
def test_select_kernel_cache_requires_exact_compatibility(change):
    """TestSelectKernelCacheRequiresExactCompatibility (3 sub-tests)"""
    command = ["vllm", "--dtype", "bfloat16", "--max-model-len", "4096", "--tensor-parallel-size", "2"]
    pod = selection_pod(command=command)
    if change == "model":
        other = replace(
            pod,
            metadata=replace(
                pod.meta,
                annotations={
                    **MODEL_ANN,
                    "internal.serving.kserve.io/storage-initializer-sourceuri": "hf://other/model",
                },
            ),
        )
    elif change == "image":
        other = selection_pod(image="registry.example/vllm@sha256:" + "c" * 64, command=command)
    else:
        other = selection_pod(command=[*command[:2], "float16", *command[3:]])
    kc = ready_cache("incompatible", identity_of(other) if change != "model" else _fp_of_model(other))
    adm = decide(pod, kc, node("node-a", (kc, "Ready")))
    assert adm.cached_kernel_cache is None
    assert adm.candidates[0].rejected_by == "footprint"


def _fp_of_model(pod: o.Pod) -> dict[str, str]:
    ident = container_identity(
        NS, Workload("InferenceService", "first"), pod.spec_containers[0], model_uri_hash("hf://other/model")
    )
    return {"workloadFootprint": ident.workload_footprint, "compatibilityFootprint": ident.compatibility_footprint}


def test_select_kernel_cache_uses_compatibility_match_across_workloads():
    """TestSelectKernelCacheUsesCompatibilityMatchAcrossWorkloads"""
    pod = selection_pod()
    kc = ready_cache("compatible", other_workload(identity_of(pod)))
    adm = decide(pod, kc, node("node-a", (kc, "Ready")))
    assert (adm.cached_kernel_cache, adm.match) == ("team/compatible", "Compatibility")


def test_select_kernel_cache_ignores_unready_node():
    """TestSelectKernelCacheIgnoresUnreadyNode"""
    pod = selection_pod()
    kc = ready_cache("preparing", identity_of(pod))
    adm = decide(pod, kc, node("node-a", (kc, "Pending")))
    assert adm.cached_kernel_cache is None and adm.blocked_by.id == "candidates"
    assert [(c.key, c.rejected_by, c.candidate) for c in adm.candidates] == [("team/preparing", "entry-ready", False)]


def test_select_kernel_cache_uses_compatibility_for_version_tag():
    """TestSelectKernelCacheUsesCompatibilityForVersionTag; sidecar_test's
    TestTerminalCaptureSkipsSidecarWithReadyCompatibilityCache (matchType Compatibility)"""
    pod = selection_pod(image="registry.example/vllm:v0.10")
    kc = ready_cache("tagged", identity_of(pod))
    adm = decide(pod, kc, node("node-a", (kc, "Ready")))
    assert (adm.cached_kernel_cache, adm.match) == ("team/tagged", "Compatibility")
    assert adm.identity.workload_footprint == ""


def test_workload_cache_match_type():
    """sidecar_test's TestTerminalCaptureSkipsSidecarWithReadyWorkloadCache: a digest image, matchType Workload"""
    pod = selection_pod()
    kc = ready_cache("qwen", identity_of(pod))
    assert decide(pod, kc, node("n", (kc, "Ready"))).match == "Workload"


def test_cache_can_mount_to_pod_resolves_optional_container_path():
    """TestCacheCanMountToPodResolvesOptionalContainerPath"""
    kc = o.KernelCache.from_dict(
        {
            **ready_cache("x", {}),
            "spec": {
                "artifact": {
                    "imageReference": CACHE_IMAGE,
                    "cachePaths": [{"ociPath": "io.vllm.cache"}],
                    "identity": {"footprints": {}},
                }
            },
        }
    )
    with_env = selection_pod(
        image="registry.example/vllm:v0.10", env=[{"name": "VLLM_CACHE_ROOT", "value": "/runtime/cache"}]
    )
    assert a.can_mount(kc, NS, with_env.spec_containers) is None
    value_from = selection_pod(env=[{"name": "VLLM_CACHE_ROOT", "valueFrom": {"fieldRef": {"fieldPath": "x"}}}])
    assert a.can_mount(kc, NS, value_from.spec_containers) == (
        "container-path",
        "cachePaths[0] (container kserve-container): VLLM_CACHE_ROOT uses valueFrom; provide containerPath explicitly",
    )


def test_candidate_matches_kernel_cache_on_any_ready_entry():
    """candidateMatchesKernelCache: some Ready entry (any node) equal to the spec, not necessarily the one
    whose footprint matched."""
    pod = selection_pod()
    kc = ready_cache("qwen", identity_of(pod))
    stale = node("node-a", (kc, "Ready"))
    stale["status"]["cacheStatus"]["team/qwen"]["imageReference"] = "registry.example/cache@sha256:" + "4" * 64
    adm = decide(pod, kc, stale)
    assert adm.candidates[0].rejected_by == "entry-matches-spec"
    assert adm.candidates[0].detail.startswith(
        "entry on node-a is Ready but its imageReference is @sha256:444444444444..., the KernelCache says "
        "@sha256:dddddddddddd..."
    )
    assert decide(pod, kc, stale, node("node-b", (kc, "Ready"))).cached_kernel_cache == "team/qwen"


def test_kernel_cache_state_is_not_read():
    pod = selection_pod()
    kc = ready_cache("qwen", identity_of(pod))
    kc["status"] = {"state": "Error"}
    assert decide(pod, kc, node("n", (kc, "Ready"))).cached_kernel_cache == "team/qwen"


def test_deleted_kernel_cache_is_skipped():
    pod = selection_pod()
    kc = ready_cache("gone", identity_of(pod))
    adm = decide(pod, node("n", (kc, "Ready")))
    assert adm.candidates[0].rejected_by == "kernelcache-exists"


@pytest.mark.parametrize(
    ("spec", "gate"),
    [
        ({"mountType": "pvc"}, "mount-type"),
        ({"artifact": {"imageReference": CACHE_IMAGE, "cachePaths": [], "identity": {"footprints": {}}}}, "artifact"),
        (
            {
                "artifact": {
                    "imageReference": CACHE_IMAGE,
                    "identity": {"footprints": {}},
                    "cachePaths": [{"containerName": "missing"}],
                }
            },
            "cache-container",
        ),
        (
            {
                "artifact": {
                    "imageReference": CACHE_IMAGE,
                    "identity": {"footprints": {}},
                    "cachePaths": [{"ociPath": "custom/cache"}],
                }
            },
            "oci-path",
        ),
    ],
)
def test_cache_can_mount_to_pod_checks(spec, gate):
    pod = selection_pod()
    kc = ready_cache("qwen", identity_of(pod))
    kc["spec"].update(spec)
    kc["spec"]["artifact"]["identity"] = {"footprints": identity_of(pod)}
    adm = decide(pod, kc, node("n", (kc, "Ready")))
    assert adm.candidates[0].rejected_by == gate


def test_other_namespace_is_never_a_candidate():
    pod = selection_pod()
    kc = ready_cache("elsewhere", identity_of(pod))
    kc["metadata"]["namespace"] = "team-b"
    adm = decide(pod, node("n", (kc, "Ready")))
    assert adm.blocked_by.id == "candidates"
    assert [(c.key, c.rejected_by, c.candidate) for c in adm.candidates] == [("team-b/elsewhere", "namespace", False)]


# ---- the verification gate (selector.go kernelCacheVerificationAllowsUse) --------------------------------------


@pytest.mark.parametrize(
    ("mode", "verification", "allowed"),
    [
        ("", None, True),
        ("none", None, True),
        ("cert", None, False),
        ("cert", o.Verification("cert", "Succeeded", verified=True), True),
        ("cert", o.Verification("cert", "Succeeded", verified=False), False),
        ("cert", o.Verification("none", "Succeeded", verified=True), False),
        ("disabled", o.Verification("none", "Skipped", reason="VerificationNotConfigured"), False),
    ],
)
def test_verification_allows_use(mode, verification, allowed):
    assert a.verification_allows_use(mode, verification) is allowed


def test_disabled_mode_blocks_every_cache_and_says_why():
    pod = selection_pod()
    cfg = config(artifactSecurity={"mode": "disabled"})
    kc = ready_cache("qwen", identity_of(pod), verification={"mode": "none", "state": "Skipped"})
    cand = decide(pod, kc, node("n", (kc, "Ready")), cfg=cfg).candidates[0]
    assert cand.rejected_by == "verification"
    assert 'set artifactSecurity.mode to "none"' in cand.detail


# ---- container_test.go (3-argument ResolveContainerPath) --------------------------------------------------------


def test_resolve_runtime_container_name():
    """TestResolveRuntimeContainerName"""
    k, m, s = o.Container("kserve-container"), o.Container("main"), o.Container("sidecar")
    assert a.resolve_container("sidecar", (k, s)) == s
    assert a.resolve_container("", (m, k)) == k and a.resolve_container("", (m, s)) == m
    assert a.resolve_container("x", (k,)) == 'cache container "x" was not found'
    assert a.resolve_container("", (s,)) == (
        "containerName is required when no standard KServe runtime container is present"
    )


def test_resolve_container_path():
    """TestResolveContainerPath"""
    both = o.Container("c", env=(o.EnvVar("VLLM_CACHE_ROOT", "/v"), o.EnvVar("TRITON_CACHE_DIR", "/t")))
    assert a.resolve_container_path(both, "/explicit", "io.vllm.cache") == ("/explicit", "")
    assert a.resolve_container_path(both, "", "io.vllm.cache") == ("/v", "")
    assert a.resolve_container_path(both, "", "io.triton.cache") == ("/t", "")
    bare = o.Container("c")
    assert a.resolve_container_path(bare, "", "io.vllm.cache") == ("/root/.cache/vllm", "")
    assert a.resolve_container_path(bare, "", "io.triton.cache")[0] == "/root/.triton/cache"
    empty = o.Container("c", env=(o.EnvVar("TRITON_CACHE_DIR", ""),))
    assert a.resolve_container_path(empty, "", "io.triton.cache") == (
        "",
        "TRITON_CACHE_DIR is empty; provide containerPath explicitly",
    )
    assert a.resolve_container_path(empty, "", "io.vllm.cache") == ("/root/.cache/vllm", "")


def test_resolve_oci_path():
    """TestResolveOCIPath"""
    assert a.resolve_oci_path("") == ("io.vllm.cache", "")
    assert a.resolve_oci_path("io.triton.cache") == ("io.triton.cache", "")
    assert a.resolve_oci_path("custom/cache") == (
        "",
        'unsupported OCI path "custom/cache"; supported paths are "io.vllm.cache" and "io.triton.cache"',
    )


# ---- consumer_test.go (injectKernelCacheMount with an empty config) ----------------------------------------------


def inject(container: dict[str, Any], paths: list[dict[str, str]], mount_type: str = "oci", **pod_spec: Any):
    pod = o.Pod.from_dict(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": NS},
            "spec": {"containers": [{"name": "kserve-container", "image": IMG_D, **container}], **pod_spec},
        }
    )
    kc = o.KernelCache.from_dict(
        {
            "apiVersion": b.KSERVE,
            "kind": "KernelCache",
            "metadata": {"name": "kc", "namespace": NS},
            "spec": {
                "mountType": mount_type,
                "artifact": {"imageReference": CACHE_IMAGE, "cachePaths": paths, "identity": {"footprints": {}}},
            },
        }
    )
    return a.plan_injection(pod, kc, "", "")


ENV_ROOT = [{"name": "VLLM_CACHE_ROOT", "value": "/runtime/cache"}]


@pytest.mark.parametrize(
    ("env", "path", "mount_type", "target"),
    [
        (ENV_ROOT, "/explicit/cache", "oci", "/explicit/cache"),  # preserves explicit path
        (ENV_ROOT, "", "oci", "/runtime/cache"),  # uses runtime environment
        ([], "", "", "/root/.cache/vllm"),  # uses fallback (mount type "" and an empty default: oci)
    ],
)
def test_inject_kernel_cache_mount_resolves_optional_container_path(env, path, mount_type, target):
    """TestInjectKernelCacheMountResolvesOptionalContainerPath"""
    inj = inject(
        {"env": env},
        [{"containerPath": path, "ociPath": "io.vllm.cache"} if path else {"ociPath": "io.vllm.cache"}],
        mount_type,
    )
    assert a.Mount("kserve-container", "kernel-cache-runtime-0", target) in inj.mounts
    assert inj.linker_args == ("/var/run/gkm/kernel-cache/io.vllm.cache", target) and inj.linker_added
    assert [v.name for v in inj.volumes] == ["kernel-cache-source", "kernel-cache-runtime-0"]
    assert dict(inj.volumes[0].spec) == {"image": {"reference": CACHE_IMAGE, "pullPolicy": "IfNotPresent"}}
    assert inj.annotation == ("internal.serving.kserve.io/kernelcache-usage", "team/kc")


def test_inject_kernel_cache_mount_rejects_unresolved_environment():
    """TestInjectKernelCacheMountRejectsUnresolvedEnvironment"""
    with pytest.raises(a.InjectionError, match="VLLM_CACHE_ROOT uses valueFrom"):
        inject(
            {"env": [{"name": "VLLM_CACHE_ROOT", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]},
            [{"ociPath": "io.vllm.cache"}],
        )


@pytest.mark.parametrize(
    ("container", "paths", "error"),
    [
        ({"env": [{"name": "VLLM_CACHE_ROOT", "value": "cache"}]}, [{}], 'invalid cache containerPath "cache"'),
        (
            {"env": [{"name": "VLLM_CACHE_ROOT", "value": "$HOME/.cache"}]},
            [{}],
            'invalid cache containerPath "$HOME/.cache"',
        ),
        (
            {"volumeMounts": [{"name": "m", "mountPath": "/cache", "readOnly": True}]},
            [{"containerPath": "/cache"}],
            'cache path "/cache" is read-only',
        ),
        (
            {"volumeMounts": [{"name": "m", "mountPath": "/cache/sub"}]},
            [{"containerPath": "/cache"}],
            'cache path "/cache" overlaps mount "/cache/sub"',
        ),
        (
            {"volumeMounts": [{"name": "m", "mountPath": "/var/run"}]},
            [{"containerPath": "/cache"}],
            'mount path "/var/run/gkm/kernel-cache" overlaps mount "/var/run"',
        ),
        (
            {},
            [{"containerPath": "/var/run/gkm/kernel-cache/x"}],
            'mount path "/var/run/gkm/kernel-cache/x" overlaps mount "/var/run/gkm/kernel-cache"',
        ),
    ],
)
def test_injection_errors_reject_the_pod(container, paths, error):
    with pytest.raises(a.InjectionError) as exc:
        inject(container, paths)
    assert str(exc.value) == error


def test_injection_reuses_a_writable_mount_at_the_exact_path():
    inj = inject(
        {"volumeMounts": [{"name": "mine", "mountPath": "/cache"}]},
        [{"containerPath": "/cache"}],
        volumes=[{"name": "mine", "emptyDir": {}}],
    )
    assert [v.name for v in inj.volumes] == ["kernel-cache-source"]
    assert inj.linker_args == ("/var/run/gkm/kernel-cache/io.vllm.cache", "/cache")


def test_conflicting_volume_and_recorded_cache():
    with pytest.raises(a.InjectionError, match='conflicting volume "kernel-cache-source"'):
        inject({}, [{}], volumes=[{"name": "kernel-cache-source", "emptyDir": {}}])
    usage = {"internal.serving.kserve.io/kernelcache-usage": "team/x"}
    pod = o.Pod.from_dict(b.consumer("p", ns=NS, annotations=usage))
    kc = o.KernelCache.from_dict(ready_cache("kc", {}))
    with pytest.raises(a.InjectionError, match='Pod already records KernelCache "team/x"'):
        a.plan_injection(pod, kc, "oci", "")


def test_injection_error_rejects_without_fallback():
    pod = selection_pod(env=[{"name": "VLLM_CACHE_ROOT", "value": "relative"}])
    kc = ready_cache("a-first", identity_of(pod))
    kc["spec"]["artifact"]["cachePaths"] = [{"ociPath": "io.vllm.cache"}]
    second = ready_cache("b-second", identity_of(pod))
    adm = decide(pod, kc, second, node("n", (kc, "Ready"), (second, "Ready")))
    assert adm.outcome == "rejected" and adm.blocked_by.id == "injection"
    assert a.denial_message(adm) == (
        'admission webhook "kernelcache.kserve-webhook-server.pod-mutator" denied the '
        'request: invalid cache containerPath "relative"'
    )


# ---- handler and API server gates ----------------------------------------------------------------------------


def gates(adm: a.Admission) -> dict[str, bool | None]:
    return {g.id: g.passed for g in adm.gates}


def test_gate_order_is_stable():
    adm = decide(selection_pod())
    assert [g.id for g in adm.gates] == list(a.POD_GATES)


def test_sidecar_annotation_must_be_true_or_false():
    pod = selection_pod(annotations={**MODEL_ANN, "serving.kserve.io/kernelcache-sidecar-injection": "yes"})
    adm = decide(pod)
    assert adm.outcome == "rejected" and adm.blocked_by.id == "sidecar-annotation"
    assert a.denial_message(adm).endswith("serving.kserve.io/kernelcache-sidecar-injection must be true or false")


def test_supported_annotation_must_be_exactly_true():
    pod = selection_pod(annotations={**MODEL_ANN, "serving.kserve.io/kernelcache-supported": "True"})
    assert decide(pod).blocked_by.id == "kernelcache-supported"


def test_disabled_feature_and_invalid_config():
    import json

    pod = selection_pod()
    off = ConfigState(True, parse_config(json.dumps({"enabled": False})))
    assert decide(pod, cfg=off).blocked_by.id == "enabled"
    bad = ConfigState(True, None, 'kernelcache.defaultMountType must be oci, got "pvc"')
    adm = decide(pod, cfg=bad)
    assert adm.outcome == "rejected" and adm.blocked_by.id == "config"
    assert gates(adm)["enabled"] is None


def test_runtime_image_errors_reject_the_pod():
    adm = decide(selection_pod(image="img@sha512:abc"))
    assert adm.outcome == "rejected" and a.denial_message(adm).endswith("runtime image digest is unsupported")
    assert decide(selection_pod(image="img:latest")).outcome == "not-cached"


def test_webhook_gates():
    webhook = o.WebhookConfiguration.from_dict(b.webhook_configuration())
    pod = selection_pod()
    kw = {"webhooks": [webhook], "webhook_known": True}
    assert gates(decide(pod, namespace_labels={"kubernetes.io/metadata.name": NS}, **kw))["namespace-selector"]
    adm = decide(pod, namespace_labels={"control-plane": "x"}, **kw)
    assert adm.outcome == "not-called" and adm.blocked_by.id == "namespace-selector"
    assert gates(decide(pod, namespace_labels=None, **kw))["namespace-selector"] is None
    assert decide(pod, webhooks=[], webhook_known=True).blocked_by.id == "webhook-installed"
    assert gates(decide(pod))["webhook-installed"] is None


def test_webhook_manifest_match_condition():
    """webhook_manifest_test.go TestKernelCacheWebhookMatchConditionDoesNotFilterSidecarInjection: the
    condition needs the InferenceService label and nothing about the sidecar annotation."""
    expr = "has(object.metadata.labels) && 'serving.kserve.io/inferenceservice' in object.metadata.labels"
    assert a.match_condition(expr, selection_pod()) is True
    unlabelled = o.Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}})
    assert a.match_condition(expr, unlabelled) is False
    assert a.match_condition("object.spec.containers.size() > 0", unlabelled) is None


def test_pre_admission_strips_the_webhooks_mutation():
    kc = b.consumer_cache("qwen")
    pod = o.Pod.from_dict(b.consumer("p", cache=kc))
    cached, usage = a.recorded_cache(pod)
    assert cached and usage == "team-a/qwen"
    clean = a.pre_admission(pod)
    assert a.recorded_cache(clean) == (False, "")
    assert clean.volumes == () and clean.init_containers == () and clean.spec_containers[0].volume_mounts == ()


def test_entry_matches_cache():
    kc = o.KernelCache.from_dict(b.kernel_cache("cache", "team-a"))
    kcn = o.KernelCacheNode.from_dict(b.kcn("n", {"team-a/cache": b.entry("team-a", "cache")}))
    assert a.entry_matches_cache(kcn.entries[0], kc)
    other = o.KernelCacheNode.from_dict(b.kcn("n", {"team-a/cache": b.entry("team-a", "cache", seed="old")}))
    assert not a.entry_matches_cache(other.entries[0], kc)


def test_a_triton_cache_path_without_container_path_is_inferred_never_certain():
    """§6.1a: the 3-argument ResolveContainerPath for io.triton.cache is not in KServe's stored code: a hit
    that depends on it says the path is inferred."""
    pod = selection_pod(env=[{"name": "TRITON_CACHE_DIR", "value": "/cache/triton"}])
    kc = ready_cache("triton", identity_of(pod))
    kc["spec"]["artifact"]["cachePaths"] = [{"containerName": "kserve-container", "ociPath": "io.triton.cache"}]
    adm = decide(pod, kc, node("node-a", (kc, "Ready")))
    assert adm.outcome == "cached"
    [line] = adm.inferred
    assert line.startswith(
        "cachePaths[0] (ociPath io.triton.cache, no containerPath): mounted at the path from "
        "TRITON_CACHE_DIR, else /root/.triton/cache, which is inferred"
    )
    explicit = ready_cache("vllm", identity_of(pod))
    assert decide(pod, explicit, node("node-a", (explicit, "Ready"))).inferred == ()
