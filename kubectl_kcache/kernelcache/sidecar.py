"""KServe's capture sidecar step (`injectMCVSidecar`, pkg/webhook/admission/kernelcache/sidecar.go): the pod
webhook's last step, in the same admission as the cache and after it.

It runs on the pod as the cache step left it (with the cache's volumes and mounts) whenever sidecar
injection is on (config `defaultSidecarInjection`, overridden either way by the pod annotation
`serving.kserve.io/kernelcache-sidecar-injection`). It is skipped, silently, when the pod already has a
container `mcv`, is not an InferenceService pod, has no `pod-template-hash` label (not a pod of a
Deployment's ReplicaSet), has no model source, or when the revision's capture (`<isvc>-kcc-<hash>`) is
terminal: Complete, Unchanged, or Failed, except a generated capture that failed with ProducerGone and has
neither artifact nor kernelCacheRef (that one is retried). The image class is never looked at.

Any error in the step denies the pod (HTTP 500), also when a cache was matched and mounted. The steps, in
KServe's order, each a gate of the admission decision:

* `capture-paths`: the capture's cachePaths (or the default vLLM path) resolve against the pod;
* `readiness-probe`: the first path's container has an HTTP readinessProbe with a usable port on loopback;
* `capture-target`: the capture's targetImage, or `registry.endpoint` to generate one;
* `capture-mounts`: each capture path is valid, not read-only, not under another mount, and the sidecar's
  volumes do not collide with the pod's.
"""

from __future__ import annotations

import ipaddress
import posixpath
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from ..objects import CachePath, Capture, Container, Pod, VolumeMount, find_condition
from . import constants as c
from .config import KernelCacheConfig
from .identity import KIND_ISVC, IdentityError, model_source, resolve_container, resolve_oci_path, workload_ref
from .names import capture_revision_name, reporter_name

SIDECAR = "sidecar"
CAPTURE_PATHS = "capture-paths"
READINESS_PROBE = "readiness-probe"
CAPTURE_TARGET = "capture-target"
CAPTURE_MOUNTS = "capture-mounts"
STEPS = (CAPTURE_PATHS, READINESS_PROBE, CAPTURE_TARGET, CAPTURE_MOUNTS)
GATES = (SIDECAR, *STEPS)


class SidecarError(ValueError):
    """The step fails: the webhook denies the pod with HTTP 500 and this message (KServe's words)."""

    def __init__(self, step: str, message: str):
        super().__init__(message)
        self.step = step


class Sidecar(msgspec.Struct, frozen=True):
    """What the step does for one pod. `runs` is None when it cannot be told (the captures were not read);
    `why` says why it runs or is skipped. When it runs, `passed` lists the steps that passed with their
    evidence, and `error` is the first failure (None: the sidecar is injected)."""

    runs: bool | None
    why: str
    capture_name: str = ""
    capture: Capture | None = None
    passed: tuple[tuple[str, str], ...] = ()
    error: SidecarError | None = None
    target_image: str = ""
    readiness_url: str = ""


def injection_enabled(config: KernelCacheConfig, annotations: Mapping[str, str]) -> tuple[bool, str]:
    """(whether the step runs, in words): `defaultSidecarInjection`, overridden by the pod annotation
    (an invalid annotation value is the `sidecar-annotation` gate's rejection, before any of this)."""
    value = annotations.get(c.ANNOTATION_SIDECAR_INJECTION)
    if value in ("true", "false"):
        return value == "true", f'annotation {c.ANNOTATION_SIDECAR_INJECTION}: "{value}"'
    state = "true" if config.default_sidecar_injection else "false"
    return config.default_sidecar_injection, f"kernelcache.defaultSidecarInjection is {state}"


def terminal_capture_skips(capture: Capture | None) -> bool:
    """skipSidecarForTerminalCapture."""
    if capture is None:
        return False
    if capture.phase in (c.PHASE_COMPLETE, c.PHASE_UNCHANGED):
        return True
    if capture.phase != c.PHASE_FAILED:
        return False
    if capture.meta.labels.get(c.LABEL_CAPTURE_GENERATED) != "true":
        return True
    if capture.artifact is not None or capture.kernel_cache_ref is not None:
        return True
    cond = find_condition(capture.conditions, c.CAPTURE_READY_CONDITION)
    return cond is None or cond.status != "False" or cond.reason != c.REASON_PRODUCER_GONE


def _container(name: str, containers: Sequence[Container]) -> Container:
    """The container a capture path targets, or SidecarError with KServe's text."""
    found = resolve_container(name, containers)
    if isinstance(found, str):
        raise SidecarError(CAPTURE_PATHS, found)
    return found


def _container_path(container: Container, explicit: str) -> str:
    """The 2-argument ResolveContainerPath: explicit, else VLLM_CACHE_ROOT, else /root/.cache/vllm."""
    if explicit:
        return explicit
    env = next((e for e in container.env if e.name == c.VLLM_CACHE_ENV), None)
    if env is None:
        return c.VLLM_DEFAULT_CACHE_PATH
    if env.value_from:
        raise SidecarError(CAPTURE_PATHS, f"{c.VLLM_CACHE_ENV} uses valueFrom; provide containerPath explicitly")
    if not env.value:
        raise SidecarError(CAPTURE_PATHS, f"{c.VLLM_CACHE_ENV} is empty; provide containerPath explicitly")
    return env.value


def _oci_path(oci: str) -> str:
    path, error = resolve_oci_path(oci)
    if error:
        raise SidecarError(CAPTURE_PATHS, error)
    return path


def resolve_paths(paths: Sequence[CachePath], containers: Sequence[Container]) -> tuple[CachePath, ...]:
    """The capture's cachePaths resolved as the step resolves them (container, then path, then OCI path), or
    the default vLLM path of the runtime container when the capture gives none."""
    out: list[CachePath] = []
    for path in paths:
        found = _container(path.container_name, containers)
        target = _container_path(found, path.container_path)
        out.append(CachePath(container_name=found.name, container_path=target, oci_path=_oci_path(path.oci_path)))
    if out:
        return tuple(out)
    found = _container("", containers)
    return (CachePath(container_name=found.name, container_path=_container_path(found, ""), oci_path=c.OCI_PATH_VLLM),)


def readiness_url(container: Container) -> str:
    """readinessProbeConfig's URL, or SidecarError with KServe's message."""
    probe = container.readiness_probe
    http = probe.http_get if probe is not None else None
    if http is None:
        raise SidecarError(
            READINESS_PROBE, f'container "{container.name}" requires an HTTP readinessProbe for MCV capture'
        )
    port = _probe_port(container, http.port)
    host = _probe_host(container, http.host)
    scheme = (http.scheme or "HTTP").lower()
    hostport = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return f"{scheme}://{hostport}{http.path or '/'}"


def _probe_port(container: Container, port: int | str | None) -> str:
    if port is None or isinstance(port, int):
        if not port or port <= 0:
            raise SidecarError(READINESS_PROBE, f'container "{container.name}" readinessProbe requires a valid port')
        return str(port)
    if port == "":
        raise SidecarError(READINESS_PROBE, f'container "{container.name}" readinessProbe requires a port')
    for declared in container.ports:
        if declared.name == port and declared.container_port > 0:
            return str(declared.container_port)
    raise SidecarError(
        READINESS_PROBE, f'container "{container.name}" readinessProbe references unknown named port "{port}"'
    )


def _probe_host(container: Container, host: str) -> str:
    if not host or host.lower() == "localhost":
        return "127.0.0.1"
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    if ip is None or not ip.is_loopback:
        raise SidecarError(
            READINESS_PROBE,
            f'container "{container.name}" readinessProbe host: must be localhost or a loopback address, got "{host}"',
        )
    return str(ip)


def target_image(endpoint: str, namespace: str, isvc: str, revision: str) -> str:
    """KernelCacheTargetImage for a generated capture."""
    return f"{endpoint.rstrip('/')}/{namespace}/kernel-cache-{isvc}:{revision}"


def validate_capture_path(path: CachePath) -> None:
    """validateCachePath, as the sidecar step calls it on each resolved path."""
    target, oci = path.container_path, path.oci_path
    if not target.startswith("/") or posixpath.normpath(target) in ("/", "//") or any(ch in target for ch in "$\x00"):
        raise SidecarError(CAPTURE_MOUNTS, f'invalid cache containerPath "{target}"')
    clean = posixpath.normpath(oci) if oci else "."
    if not oci or oci.startswith("/") or clean in (".", "..") or clean.startswith("../") or "\x00" in oci:
        raise SidecarError(CAPTURE_MOUNTS, f'invalid cache ociPath "{oci}"')


def reporter_volume(secret: str) -> dict[str, Any]:
    """The volume ApplyCaptureReporter adds (compared whole with one the pod already has)."""
    return {
        "name": c.MCV_REPORTER_VOLUME,
        "projected": {
            "sources": [
                {
                    "secret": {
                        "name": secret,
                        "optional": False,
                        "items": [{"key": c.REPORTER_ACCESS_KEY, "path": c.REPORTER_ACCESS_KEY}],
                    }
                },
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            ]
        },
    }


def check_mounts(pod: Pod, paths: Sequence[CachePath], reporter_secret: str) -> str:
    """addCacheMount for each path, then the reporter volume; SidecarError on the first problem. The pod is
    the one the cache step left."""
    volumes = [str(v.get("name") or "") for v in pod.spec.volumes or ()] if pod.spec else []
    mounts = {x.name: list(x.volume_mounts) for x in pod.spec_containers}
    how: list[str] = []
    for index, path in enumerate(paths):
        validate_capture_path(path)
        if path.container_name not in mounts:
            raise SidecarError(CAPTURE_MOUNTS, f'cache container "{path.container_name}" was not found')
        target = path.container_path
        found = ""
        for existing in mounts[path.container_name]:
            if existing.mount_path == target:
                if existing.read_only:
                    raise SidecarError(CAPTURE_MOUNTS, f'capture path "{existing.mount_path}" is read-only')
                found = existing.name
                break
            if target.startswith(existing.mount_path.rstrip("/") + "/"):
                raise SidecarError(
                    CAPTURE_MOUNTS,
                    f'capture path "{target}" overlaps mount "{existing.mount_path}"; configure an exact cache mount',
                )
        if found:
            how.append(f"{target} shares the pod's mount {found}")
            continue
        name = f"{c.MCV_CACHE_VOLUME_PREFIX}{index}"
        how.append(f"{target} gets emptyDir {name}")
        if name in volumes:
            raise SidecarError(CAPTURE_MOUNTS, f'conflicting volume "{name}"')
        volumes.append(name)
        mounts[path.container_name].append(VolumeMount(name, target))
    existing_reporter = (
        next((v for v in pod.spec.volumes or () if v.get("name") == c.MCV_REPORTER_VOLUME), None) if pod.spec else None
    )
    if existing_reporter is not None and _plain(existing_reporter) != reporter_volume(reporter_secret):
        raise SidecarError(CAPTURE_MOUNTS, f'conflicting volume "{c.MCV_REPORTER_VOLUME}"')
    return f"{'; '.join(how)}; volume {c.MCV_REPORTER_VOLUME} mounts the reporter Secret {reporter_secret}"


def _plain(volume: Mapping[str, Any]) -> dict[str, Any]:
    """A volume as the API returns it, with the defaults the API server adds left out (defaultMode)."""
    out = dict(volume)
    projected = dict(out.get("projected") or {})
    projected.pop("defaultMode", None)
    out["projected"] = projected
    return out


def plan(
    pod: Pod,
    namespace: str,
    config: KernelCacheConfig,
    captures: Mapping[str, Capture] | None,
    revision_known: bool = True,
) -> Sidecar:
    """The step for `pod` (as the cache step left it), assuming injection is on. `captures` (by name, the
    pod's namespace) is None when they could not be read; `revision_known` is False for a manifest whose
    pod-template-hash is not known yet (a new revision: no capture exists for it)."""
    containers = pod.spec_containers
    if any(x.name == c.MCV_CONTAINER for x in containers):
        return Sidecar(False, f"the pod already has a container {c.MCV_CONTAINER}")
    try:
        workload = workload_ref(pod.meta.labels)
    except IdentityError:
        return Sidecar(False, "not an InferenceService pod")
    revision = pod.meta.labels.get(c.LABEL_POD_TEMPLATE_HASH, "")
    if workload.kind != KIND_ISVC:
        return Sidecar(False, f"a {workload.kind} pod: only InferenceService pods are captured")
    if not revision:
        return Sidecar(
            False,
            f"the pod has no {c.LABEL_POD_TEMPLATE_HASH} label (not a pod of a Deployment's "
            "ReplicaSet): nothing to capture",
        )
    name = capture_revision_name(workload.name, revision)
    if not name:
        return Sidecar(False, "no capture name fits 63 characters for this InferenceService and revision")
    model = model_source(workload.kind, pod.meta.annotations)
    if not model.known:
        return Sidecar(False, f"{model.problem}: no model source, nothing to capture", name)
    capture: Capture | None = None
    if revision_known:
        if captures is None:
            return Sidecar(
                None,
                f"KernelCacheCaptures in {namespace} were not read (list kernelcachecaptures was "
                f"forbidden, or they are not in the input): whether capture {name} is terminal "
                "(which skips the step) is not known",
                name,
            )
        capture = captures.get(name)
    if terminal_capture_skips(capture):
        assert capture is not None
        return Sidecar(
            False, f"capture {name} is {capture.phase}: a terminal capture gets no new sidecar", name, capture
        )
    if capture is None:
        why = (
            f"capture {name} does not exist yet"
            if revision_known
            else "a new revision of the manifest has no capture yet"
        )
    elif capture.phase == c.PHASE_FAILED:
        why = f"capture {name} failed with {c.REASON_PRODUCER_GONE}: a generated capture is retried"
    else:
        why = f"capture {name} is {capture.phase or 'not started'}"
    passed: list[tuple[str, str]] = []
    try:
        paths = resolve_paths(capture.cache_paths if capture is not None else (), containers)
        source = "the capture's cachePaths" if capture is not None and capture.cache_paths else "the default vLLM path"
        passed.append(
            (
                CAPTURE_PATHS,
                f"{source}: " + ", ".join(f"{p.container_name}:{p.container_path} ({p.oci_path})" for p in paths),
            )
        )
        first = next(x for x in containers if x.name == paths[0].container_name)
        url = readiness_url(first)
        passed.append((READINESS_PROBE, f"container {first.name} readinessProbe {url}"))
        target = capture.target_image if capture is not None else ""
        if target:
            passed.append((CAPTURE_TARGET, f"the capture's targetImage {target}"))
        elif not config.registry.endpoint:
            raise SidecarError(
                CAPTURE_TARGET,
                "kernelcache.registry.endpoint is required when no KernelCacheCapture target is configured",
            )
        else:
            target = target_image(
                config.registry.endpoint, namespace, workload.name, revision if revision_known else "<revision>"
            )
            passed.append((CAPTURE_TARGET, f"generated from registry.endpoint: {target}"))
        passed.append((CAPTURE_MOUNTS, check_mounts(pod, paths, reporter_name(name))))
    except SidecarError as exc:
        return Sidecar(True, why, name, capture, tuple(passed), exc)
    return Sidecar(True, why, name, capture, tuple(passed), None, target, url)
