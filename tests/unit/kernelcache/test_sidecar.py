"""KServe's capture sidecar step (kernelcache/sidecar.py, the last gates of admission.decide) against KServe's
own tests in pkg/webhook/admission/kernelcache/sidecar_test.go (@b3e3ce83), and each error sidecar.go returns
with its exact message, through the whole decision: the pod is rejected, a matched cache included."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_kcache import objects as o
from kubectl_kcache.kernelcache import admission as a
from kubectl_kcache.kernelcache import sidecar as sc
from kubectl_kcache.kernelcache.config import parse_config
from kubectl_kcache.kernelcache.names import reporter_name

from .test_admission import IMG_D, config, identity_of, node, ready_cache

HEALTH = {"httpGet": {"path": "/health", "port": 8080}}


def sidecar_pod(
    ns: str = "test",
    image: str = "registry.example/vllm:v0.10",
    annotations: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    volumes: list[dict[str, Any]] | None = None,
    **ctr: Any,
) -> o.Pod:
    """sidecar_test.go's sidecarTestPod: ISVC qwen, revision 669889f77f, VLLM_CACHE_ROOT=/cache/vllm, an
    HTTP readinessProbe on 8080."""
    container = {
        "name": "kserve-container",
        "image": image,
        "env": [{"name": "VLLM_CACHE_ROOT", "value": "/cache/vllm"}],
        "readinessProbe": HEALTH,
        **ctr,
    }
    return o.Pod.from_dict(
        {
            "metadata": {
                "name": "qwen-predictor-669889f77f-abcde",
                "namespace": ns,
                "labels": labels
                if labels is not None
                else {"serving.kserve.io/inferenceservice": "qwen", "pod-template-hash": "669889f77f"},
                "annotations": annotations
                if annotations is not None
                else {
                    "internal.serving.kserve.io/storage-initializer-sourceuri": "hf://Qwen/Qwen3-0.6B",
                    "serving.kserve.io/kernelcache-supported": "true",
                },
            },
            "spec": {"containers": [{k: v for k, v in container.items() if v is not None}], "volumes": volumes or []},
        }
    )


def cfg(endpoint: str = "registry.example:5000", **extra: Any) -> Any:
    import json

    raw = {
        "enabled": True,
        "mcvImage": "example/mcv:test",
        "registry": {"endpoint": endpoint} if endpoint else {},
        **extra,
    }
    return parse_config(json.dumps(raw))


def capture(
    phase: str = "",
    name: str = "qwen-kcc-669889f77f",
    ns: str = "test",
    generated: bool = False,
    reason: str = "",
    status: str = "False",
    artifact: bool = False,
    **spec: Any,
) -> o.Capture:
    obj: dict[str, Any] = {
        "metadata": {
            "name": name,
            "namespace": ns,
            "labels": {"internal.serving.kserve.io/kernelcache-capture-generated": "true"} if generated else {},
        },
        "spec": {"sourceRef": {"kind": "InferenceService", "name": "qwen"}, **spec},
        "status": {"phase": phase},
    }
    if reason:
        obj["status"]["conditions"] = [{"type": "Ready", "status": status, "reason": reason}]
    if artifact:
        obj["status"]["artifact"] = {"imageReference": "r@sha256:" + "a" * 64}
    return o.Capture.from_dict(obj)


def plan(pod: o.Pod, *caps: o.Capture, endpoint: str = "registry.example:5000") -> sc.Sidecar:
    return sc.plan(pod, pod.namespace, cfg(endpoint), {x.name: x for x in caps})


# ---- sidecar_test.go ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "caps,endpoint,want_path,want_target",
    [
        ((), "registry.example:5000", "/cache/vllm", "registry.example:5000/test/kernel-cache-qwen:"),
        (
            (
                capture(
                    cachePaths=[
                        {
                            "containerName": "kserve-container",
                            "containerPath": "/custom/vllm",
                            "ociPath": "io.vllm.cache",
                        }
                    ],
                    targetImage="registry.example:5000/test/custom:v1",
                ),
            ),
            "registry.example:5000",
            "/custom/vllm",
            "registry.example:5000/test/custom:v1",
        ),
        (
            (capture(cachePaths=[{"containerName": "kserve-container"}]),),
            "registry.example:5000",
            "/cache/vllm",
            "registry.example:5000/test/kernel-cache-qwen:",
        ),
        (
            (capture(targetImage="registry.example:5000/test/custom:v1"),),
            "",
            "/cache/vllm",
            "registry.example:5000/test/custom:v1",
        ),
        (
            (
                capture(
                    cachePaths=[
                        {
                            "containerName": "kserve-container",
                            "containerPath": "/custom/vllm",
                            "ociPath": "io.vllm.cache",
                        }
                    ]
                ),
            ),
            "registry.example:5000",
            "/custom/vllm",
            "registry.example:5000/test/kernel-cache-qwen:",
        ),
    ],
    ids=[
        "deterministic revision capture when missing",
        "capture overrides",
        "omitted path from runtime env",
        "default paths when capture only sets target",
        "default target when capture only sets paths",
    ],
)
def test_inject_sidecar(caps, endpoint, want_path, want_target):
    """TestInjectSidecar (5 sub-tests): capture name, container path and target image."""
    step = plan(sidecar_pod(), *caps, endpoint=endpoint)
    assert step.runs and step.error is None
    assert step.capture_name == "qwen-kcc-669889f77f"
    assert step.target_image.startswith(want_target)
    assert f"kserve-container:{want_path} (io.vllm.cache)" in dict(step.passed)[sc.CAPTURE_PATHS]
    assert step.readiness_url == "http://127.0.0.1:8080/health"


def test_inject_sidecar_uses_replicaset_revision_identity():
    """TestInjectSidecarUsesReplicaSetRevisionIdentity: the target tag is the revision; the reporter Secret
    is reporter.SecretName(capture)."""
    step = plan(sidecar_pod(ns="team"))
    assert step.capture_name == "qwen-kcc-669889f77f" and step.target_image.endswith(":669889f77f")
    assert reporter_name("qwen-kcc-669889f77f") in dict(step.passed)[sc.CAPTURE_MOUNTS]


def test_reporter_name_is_cut_to_63_with_a_12_hex_suffix():
    """reporter.scopedName (credentials.go@30750567): prefix, the capture name cut to fit, `-` and 12 hex of
    sha256 (digest[:6]; an older snapshot had digest[:4])."""
    import hashlib

    assert reporter_name("qwen-kcc-669889f77f") == (
        "kernel-cache-reporter-qwen-kcc-669889f77f-" + hashlib.sha256(b"qwen-kcc-669889f77f").hexdigest()[:12]
    )
    long = reporter_name("x" * 60 + "-kcc-1")
    assert len(long) == 63 and long.startswith("kernel-cache-reporter-xxx")


def test_inject_sidecar_skips_pod_without_replicaset_revision():
    """TestInjectSidecarSkipsPodWithoutReplicaSetRevision"""
    step = plan(sidecar_pod(labels={"serving.kserve.io/inferenceservice": "qwen"}))
    assert step.runs is False and "pod-template-hash" in step.why


@pytest.mark.parametrize(
    "host,want",
    [
        ("", "http://127.0.0.1:8080/health"),
        ("localhost", "http://127.0.0.1:8080/health"),
        ("127.0.0.2", "http://127.0.0.2:8080/health"),
        ("::1", "http://[::1]:8080/health"),
        ("kubernetes.default.svc", None),
        ("169.254.169.254", None),
    ],
)
def test_readiness_probe_config_restricts_host_to_loopback(host, want):
    """TestReadinessProbeConfigRestrictsHostToLoopback (6 sub-tests)"""
    ctr = sidecar_pod(readinessProbe={"httpGet": {"host": host, "path": "/health", "port": 8080}}).spec_containers[0]
    if want is None:
        with pytest.raises(sc.SidecarError) as exc:
            sc.readiness_url(ctr)
        assert str(exc.value) == (
            f'container "{ctr.name}" readinessProbe host: must be localhost or a loopback address, got "{host}"'
        )
    else:
        assert sc.readiness_url(ctr) == want


def test_terminal_capture_skips_sidecar_without_ready_cache():
    """TestTerminalCaptureSkipsSidecarWithoutReadyCache"""
    step = plan(sidecar_pod(), capture("Complete"))
    assert step.runs is False and "Complete" in step.why


def test_sidecar_skips_pod_without_model_source():
    """TestSidecarSkipsPodWithoutModelSource"""
    step = plan(sidecar_pod(annotations={"serving.kserve.io/kernelcache-supported": "true"}))
    assert step.runs is False and "model source" in step.why


def test_non_terminal_capture_still_injects_capture_sidecar():
    """TestNonTerminalCaptureStillInjectsCaptureSidecar"""
    step = plan(sidecar_pod(), capture("Capturing"))
    assert step.runs is True and step.error is None


@pytest.mark.parametrize(
    "phase,reason,status,generated,artifact,skip",
    [
        ("Complete", "", "", False, False, True),
        ("Unchanged", "", "", False, False, True),
        ("Failed", "", "", False, False, True),
        ("Failed", "ProducerGone", "False", False, False, True),
        ("Failed", "ProducerGone", "False", True, True, True),
        ("Failed", "ProducerGone", "False", True, False, False),
        ("Failed", "ProducerGone", "True", True, False, True),
        ("Failed", "ProducerGone", "Unknown", True, False, True),
        ("", "", "", False, False, False),
        ("Pending", "", "", False, False, False),
        ("WaitingForWorkload", "", "", False, False, False),
        ("Capturing", "", "", False, False, False),
        ("Pushing", "", "", False, False, False),
    ],
)
def test_skip_sidecar_for_terminal_capture(phase, reason, status, generated, artifact, skip):
    """TestSkipSidecarForTerminalCapture (8 sub-tests, and the 5 non-terminal phases)"""
    cap = capture(phase, reason=reason, status=status or "False", generated=generated, artifact=artifact)
    assert sc.terminal_capture_skips(cap) is skip


def test_sidecar_existing_mount_is_reused():
    """TestSidecarManifestsAndExistingMount: an existing writable mount at the capture path is reused (no
    mcv-cache volume)."""
    pod = sidecar_pod(
        volumeMounts=[{"name": "existing", "mountPath": "/cache/vllm", "subPath": "vllm"}],
        volumes=[{"name": "existing", "emptyDir": {}}],
    )
    step = plan(pod)
    assert step.error is None
    assert dict(step.passed)[sc.CAPTURE_MOUNTS].startswith("/cache/vllm shares the pod's mount existing; ")


def test_default_cache_paths():
    """TestDefaultCachePaths: VLLM_CACHE_ROOT (TRITON_CACHE_DIR is ignored), else /root/.cache/vllm for main."""
    with_env = sidecar_pod(
        env=[
            {"name": "VLLM_CACHE_ROOT", "value": "/cache/vllm"},
            {"name": "TRITON_CACHE_DIR", "value": "/cache/triton"},
        ]
    )
    assert sc.resolve_paths((), with_env.spec_containers)[0].container_path == "/cache/vllm"
    main = o.Pod.from_dict({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "main"}]}})
    assert sc.resolve_paths((), main.spec_containers) == (
        o.CachePath(container_name="main", container_path="/root/.cache/vllm", oci_path="io.vllm.cache"),
    )


# ---- every error of the step, with KServe's message ------------------------------------------------------


@pytest.mark.parametrize(
    "change,step,message",
    [
        (
            {"readinessProbe": None},
            "readiness-probe",
            'container "kserve-container" requires an HTTP readinessProbe for MCV capture',
        ),
        (
            {"readinessProbe": {"tcpSocket": {"port": 8080}}},
            "readiness-probe",
            'container "kserve-container" requires an HTTP readinessProbe for MCV capture',
        ),
        (
            {"readinessProbe": {"httpGet": {"path": "/health"}}},
            "readiness-probe",
            'container "kserve-container" readinessProbe requires a valid port',
        ),
        (
            {"readinessProbe": {"httpGet": {"path": "/health", "port": ""}}},
            "readiness-probe",
            'container "kserve-container" readinessProbe requires a port',
        ),
        (
            {"readinessProbe": {"httpGet": {"path": "/health", "port": "http"}}},
            "readiness-probe",
            'container "kserve-container" readinessProbe references unknown named port "http"',
        ),
        (
            {
                "readinessProbe": {"httpGet": {"path": "/health", "port": "http", "host": "10.0.0.1"}},
                "ports": [{"name": "http", "containerPort": 8080}],
            },
            "readiness-probe",
            'container "kserve-container" readinessProbe host: must be localhost or a loopback address, got "10.0.0.1"',
        ),
        (
            {"env": [{"name": "VLLM_CACHE_ROOT", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]},
            "capture-paths",
            "VLLM_CACHE_ROOT uses valueFrom; provide containerPath explicitly",
        ),
        (
            {"env": [{"name": "VLLM_CACHE_ROOT", "value": ""}]},
            "capture-paths",
            "VLLM_CACHE_ROOT is empty; provide containerPath explicitly",
        ),
        (
            {"volumeMounts": [{"name": "models", "mountPath": "/cache/vllm", "readOnly": True}]},
            "capture-mounts",
            'capture path "/cache/vllm" is read-only',
        ),
        (
            {"volumeMounts": [{"name": "models", "mountPath": "/cache"}]},
            "capture-mounts",
            'capture path "/cache/vllm" overlaps mount "/cache"; configure an exact cache mount',
        ),
        (
            {"env": [{"name": "VLLM_CACHE_ROOT", "value": "relative"}]},
            "capture-mounts",
            'invalid cache containerPath "relative"',
        ),
    ],
)
def test_each_error_denies_the_pod_with_kserves_message(change, step, message):
    pod = sidecar_pod(**change)
    got = plan(pod)
    assert got.runs and got.error is not None
    assert (got.error.step, str(got.error)) == (step, message)


def test_named_port_resolves_and_a_child_mount_does_not_overlap():
    """Only a mount above the capture path overlaps; a mount below it is fine (one direction is checked)."""
    pod = sidecar_pod(
        readinessProbe={"httpGet": {"path": "/h", "port": "http"}},
        ports=[{"name": "http", "containerPort": 9000}],
        volumeMounts=[{"name": "x", "mountPath": "/cache/vllm/sub"}],
    )
    got = plan(pod)
    assert got.error is None and got.readiness_url == "http://127.0.0.1:9000/h"


def test_conflicting_volumes():
    taken = plan(sidecar_pod(volumes=[{"name": "mcv-cache-0", "emptyDir": {}}]))
    assert str(taken.error) == 'conflicting volume "mcv-cache-0"'
    reporter = plan(sidecar_pod(volumes=[{"name": "mcv-reporter-access", "emptyDir": {}}]))
    assert str(reporter.error) == 'conflicting volume "mcv-reporter-access"'


def test_no_endpoint_and_no_capture_target():
    got = plan(sidecar_pod(), endpoint="")
    assert (got.error.step, str(got.error)) == (
        "capture-target",
        "kernelcache.registry.endpoint is required when no KernelCacheCapture target is configured",
    )


def test_unknown_capture_path_container_and_oci_path():
    got = plan(sidecar_pod(), capture(cachePaths=[{"containerName": "other"}]))
    assert str(got.error) == 'cache container "other" was not found'
    got = plan(sidecar_pod(), capture(cachePaths=[{"ociPath": "io.other"}]))
    assert got.error.step == "capture-paths" and str(got.error).startswith('unsupported OCI path "io.other"')


# ---- through the whole decision -------------------------------------------------------------------------


def decide(pod: o.Pod, *objs: dict[str, Any], captures: dict[str, o.Capture] | None = None, **cfg_extra: Any):
    kcns = [o.KernelCacheNode.from_dict(x) for x in objs if x["kind"] == "KernelCacheNode"]
    kcs = {
        f"{k.namespace}/{k.name}": k for k in (o.KernelCache.from_dict(x) for x in objs if x["kind"] == "KernelCache")
    }
    extra = {"artifactSecurity": {"mode": "none"}, "registry": {"endpoint": "registry.example:5000"}, **cfg_extra}
    return a.decide(
        a.Inputs(
            pod=pod,
            namespace=pod.namespace,
            config=config(**extra),
            kcns=kcns,
            kernel_caches=kcs,
            webhook_known=False,
            captures={} if captures is None else captures,
        )
    )


def test_a_matched_cache_does_not_save_a_pod_the_sidecar_step_denies():
    """The cache is selected and mounted, then the sidecar step fails: the pod is rejected (HTTP 500)."""
    pod = sidecar_pod(ns="team", image=IMG_D, readinessProbe=None)
    kc = ready_cache("matching", identity_of(pod))
    adm = decide(pod, kc, node("node-a", (kc, "Ready")))
    assert adm.gate("injection").passed is True and adm.winner is not None
    assert adm.outcome == "rejected" and adm.cached_kernel_cache is None
    assert adm.blocked_by.id == "readiness-probe"
    assert a.denial_message(adm) == (
        'admission webhook "kernelcache.kserve-webhook-server.pod-mutator" denied the '
        'request: container "kserve-container" requires an HTTP readinessProbe for MCV '
        "capture"
    )


def test_the_sidecar_sees_the_cache_mount_and_reuses_it():
    """The cache step mounts an emptyDir at the cache path; the sidecar reuses that writable mount."""
    pod = sidecar_pod(ns="team", image=IMG_D)
    kc = ready_cache("matching", identity_of(pod))
    kc["spec"]["artifact"]["cachePaths"][0]["containerPath"] = "/cache/vllm"
    adm = decide(pod, kc, node("node-a", (kc, "Ready")))
    assert adm.outcome == "cached"
    assert adm.gate("capture-mounts").detail.startswith("/cache/vllm shares the pod's mount kernel-cache-runtime-0")


def test_a_floating_image_pod_is_denied_the_same_way():
    """The image class is never checked: a :latest pod gets no cache and is still denied by the sidecar step."""
    adm = decide(sidecar_pod(image="registry.example/vllm:latest"), **{"registry": {}})
    assert adm.gate("runtime-image").passed is False
    assert adm.outcome == "rejected" and adm.blocked_by.id == "capture-target"


@pytest.mark.parametrize(
    "annotations,extra,why",
    [
        ({"serving.kserve.io/kernelcache-sidecar-injection": "false"}, {}, 'sidecar-injection: "false"'),
        ({}, {"defaultSidecarInjection": False}, "defaultSidecarInjection is false"),
    ],
)
def test_injection_off_skips_the_step(annotations, extra, why):
    ann = {
        "internal.serving.kserve.io/storage-initializer-sourceuri": "hf://Qwen/Qwen3-0.6B",
        "serving.kserve.io/kernelcache-supported": "true",
        **annotations,
    }
    adm = decide(sidecar_pod(readinessProbe=None, annotations=ann), **extra)
    assert adm.outcome == "not-cached" and adm.gate("sidecar").passed is True and why in adm.gate("sidecar").detail
    assert adm.gate("readiness-probe").passed is None


def test_annotation_true_overrides_a_default_off():
    ann = {
        "internal.serving.kserve.io/storage-initializer-sourceuri": "hf://Qwen/Qwen3-0.6B",
        "serving.kserve.io/kernelcache-supported": "true",
        "serving.kserve.io/kernelcache-sidecar-injection": "true",
    }
    adm = decide(sidecar_pod(readinessProbe=None, annotations=ann), defaultSidecarInjection=False)
    assert adm.outcome == "rejected" and adm.blocked_by.id == "readiness-probe"


def test_terminal_capture_and_producer_gone_retry_through_the_decision():
    pod = sidecar_pod(readinessProbe=None)
    done = decide(pod, captures={"qwen-kcc-669889f77f": capture("Complete")})
    assert done.outcome == "not-cached" and "Complete" in done.gate("sidecar").detail
    retry = decide(pod, captures={"qwen-kcc-669889f77f": capture("Failed", generated=True, reason="ProducerGone")})
    assert retry.outcome == "rejected" and "retried" in retry.gate("sidecar").detail


def test_captures_not_read_leave_the_step_undecided():
    adm = a.decide(
        a.Inputs(
            pod=sidecar_pod(readinessProbe=None),
            namespace="test",
            config=config(),
            kcns=[],
            kernel_caches={},
            webhook_known=False,
            captures=None,
        )
    )
    assert adm.gate("sidecar").passed is None and adm.outcome == "not-cached"
    assert all(adm.gate(g).passed is None for g in sc.STEPS)


def test_an_admitted_pod_is_replayed_without_its_sidecar():
    """A pod read from the cluster carries the webhook's sidecar; pre_admission removes it (only when the
    reporter annotation says the webhook added it) so the step is replayed, not skipped."""
    pod = sidecar_pod(
        volumeMounts=[{"name": "mcv-cache-0", "mountPath": "/cache/vllm"}],
        volumes=[{"name": "mcv-cache-0", "emptyDir": {}}, {"name": "mcv-reporter-access", "emptyDir": {}}],
    )
    data = pod.meta.annotations | {"internal.serving.kserve.io/kernelcache-reporter-secret": "s"}
    from msgspec.structs import replace

    admitted = replace(
        pod,
        metadata=replace(pod.meta, annotations=data),
        spec=replace(pod.spec, containers=(*pod.spec_containers, o.Container(name="mcv"))),
    )
    before = a.pre_admission(admitted)
    assert [x.name for x in before.spec_containers] == ["kserve-container"]
    assert before.volumes == () and before.spec_containers[0].volume_mounts == ()
    assert plan(before).runs is True
    assert (
        plan(
            pod.__class__.from_dict(
                {"metadata": {"name": "p", "labels": dict(pod.meta.labels)}, "spec": {"containers": [{"name": "mcv"}]}}
            )
        ).runs
        is False
    )
