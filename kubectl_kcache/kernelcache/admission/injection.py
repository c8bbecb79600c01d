"""Mounting the winner: the volumes and mounts KServe's webhook adds to the pod, and the errors that reject it."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping

from msgspec.structs import replace as struct_replace

from ...objects import Container, KernelCache, Pod, PodSpec, Volume, VolumeMount
from .. import constants as c
from ..identity import resolve_container, resolve_oci_path
from .candidates import resolve_container_path
from .gates import Injection, Mount

# ---- injection ---------------------------------------------------------------------------------------------


class InjectionError(ValueError):
    """The webhook fails while mounting the winner: the pod is rejected (HTTP 500) with this message."""


def _clean(p: str) -> str:
    cleaned = posixpath.normpath(p) if p else "."
    if cleaned.startswith("//"):
        cleaned = "/" + cleaned.lstrip("/")
    return cleaned.rstrip("/")


def paths_overlap(a: str, b: str) -> bool:
    x, y = _clean(a), _clean(b)
    return x == y or y.startswith(x + "/") or x.startswith(y + "/")


def validate_cache_path(container_path: str, oci_path: str) -> None:
    cleaned = posixpath.normpath(container_path) if container_path else "."
    if (
        not container_path.startswith("/")
        or cleaned in ("/", "//")
        or "$" in container_path
        or "\x00" in container_path
    ):
        raise InjectionError(f'invalid cache containerPath "{container_path}"')
    if (
        not oci_path
        or oci_path.startswith("/")
        or oci_path in (".", "..")
        or oci_path.startswith("../")
        or "\x00" in oci_path
    ):
        raise InjectionError(f'invalid cache ociPath "{oci_path}"')


def plan_injection(pod: Pod, kc: KernelCache, default_mount_type: str, prefetch_image: str) -> Injection:
    """injectKernelCacheMount on the pod as its controller created it; InjectionError with KServe's message."""
    art = kc.artifact
    key = f"{kc.namespace}/{kc.name}"
    if art is None or not art.cache_paths:
        raise InjectionError(f"KernelCache {key} has no cache paths")
    if not art.image_reference:
        raise InjectionError(f"KernelCache {key} has no artifact image reference")
    resolved: list[tuple[Container, str, str]] = []
    for path in art.cache_paths:
        found = resolve_container(path.container_name, pod.spec_containers)
        if isinstance(found, str):
            raise InjectionError(found)
        oci, problem = resolve_oci_path(path.oci_path)
        if problem:
            raise InjectionError(problem)
        target, problem = resolve_container_path(found, path.container_path, oci)
        if problem:
            raise InjectionError(problem)
        validate_cache_path(target, oci)
        resolved.append((found, target, oci))
    mount_type = kc.mount_type or default_mount_type or c.MOUNT_TYPE_OCI
    if mount_type != c.MOUNT_TYPE_OCI:
        raise InjectionError(f'unsupported KernelCache mount type "{mount_type}"')
    volumes = {v.name: v for v in pod.volumes}
    added: list[Volume] = []
    source = Volume(
        c.SOURCE_VOLUME, "image", {"image": {"reference": art.image_reference, "pullPolicy": "IfNotPresent"}}
    )
    if c.SOURCE_VOLUME in volumes and dict(volumes[c.SOURCE_VOLUME].spec) != dict(source.spec):
        raise InjectionError(f'conflicting volume "{c.SOURCE_VOLUME}"')
    if c.SOURCE_VOLUME not in volumes:
        added.append(source)
    mounts: dict[str, list[VolumeMount]] = {x.name: list(x.volume_mounts) for x in pod.spec_containers}
    new_mounts: list[Mount] = []
    linker = [VolumeMount(c.SOURCE_VOLUME, c.LINKER_MOUNT_PATH, True)]
    args: list[str] = []
    with_source: set[str] = set()
    for i, (ctr, target, oci) in enumerate(resolved):
        mount = _target_mount(ctr.name, mounts[ctr.name], target, i, volumes, added, new_mounts)
        _add_linker_mount(linker, mount)
        args += [f"{c.LINKER_MOUNT_PATH}/{posixpath.normpath(oci)}", target]
        if ctr.name not in with_source:
            _add_source_mount(ctr.name, mounts[ctr.name], new_mounts)
            with_source.add(ctr.name)
    usage = pod.meta.annotations.get(c.ANNOTATION_USAGE, "")
    if usage and usage != key:
        raise InjectionError(f'Pod already records KernelCache "{usage}"')
    return Injection(
        kernel_cache=key,
        image_reference=art.image_reference,
        volumes=tuple(added),
        mounts=tuple(new_mounts),
        linker_args=tuple(args),
        linker_added=not any(x.name == c.LINKER_CONTAINER for x in pod.init_containers),
        linker_image=prefetch_image,
        annotation=(c.ANNOTATION_USAGE, key),
    )


def _target_mount(
    container: str,
    mounts: list[VolumeMount],
    target: str,
    index: int,
    volumes: Mapping[str, Volume],
    added: list[Volume],
    new_mounts: list[Mount],
) -> VolumeMount:
    for m in mounts:
        if m.mount_path == target:
            if m.read_only:
                raise InjectionError(f'cache path "{target}" is read-only')
            return m
        if paths_overlap(m.mount_path, target):
            raise InjectionError(f'cache path "{target}" overlaps mount "{m.mount_path}"')
    name = f"{c.RUNTIME_VOLUME_PREFIX}{index}"
    volume = Volume(name, "emptyDir", {"emptyDir": {}})
    existing = volumes.get(name) or next((v for v in added if v.name == name), None)
    if existing is not None and dict(existing.spec) != dict(volume.spec):
        raise InjectionError(f'conflicting volume "{name}"')
    if existing is None:
        added.append(volume)
    mount = VolumeMount(name, target)
    mounts.append(mount)
    new_mounts.append(Mount(container, name, target))
    return mount


def _add_linker_mount(linker: list[VolumeMount], mount: VolumeMount) -> None:
    for m in linker:
        if m.mount_path == mount.mount_path:
            if m.name != mount.name:
                raise InjectionError(f'conflicting mount at "{mount.mount_path}"')
            return
        if paths_overlap(m.mount_path, mount.mount_path):
            raise InjectionError(f'mount path "{mount.mount_path}" overlaps mount "{m.mount_path}"')
    linker.append(mount)


def _add_source_mount(container: str, mounts: list[VolumeMount], new_mounts: list[Mount]) -> None:
    for m in mounts:
        if m.mount_path == c.LINKER_MOUNT_PATH:
            if m.name != c.SOURCE_VOLUME or not m.read_only:
                raise InjectionError(f'conflicting mount at "{c.LINKER_MOUNT_PATH}"')
            return
        if paths_overlap(m.mount_path, c.LINKER_MOUNT_PATH):
            raise InjectionError(f'mount path "{c.LINKER_MOUNT_PATH}" overlaps mount "{m.mount_path}"')
    mounts.append(VolumeMount(c.SOURCE_VOLUME, c.LINKER_MOUNT_PATH, True))
    new_mounts.append(Mount(container, c.SOURCE_VOLUME, c.LINKER_MOUNT_PATH, True))


def with_injection(pod: Pod, injection: Injection | None) -> Pod:
    """The pod as the cache step leaves it: the injection's volumes and mounts added (what the sidecar step
    sees)."""
    if injection is None:
        return pod
    spec = pod.spec or PodSpec()
    extra: dict[str, list[VolumeMount]] = {}
    for m in injection.mounts:
        extra.setdefault(m.container, []).append(VolumeMount(m.name, m.path, m.read_only))

    def add(ctr: Container) -> Container:
        return struct_replace(ctr, volume_mounts=(*ctr.volume_mounts, *extra.get(ctr.name, ())))

    volumes = [*(spec.volumes or ()), *({"name": v.name, **dict(v.spec)} for v in injection.volumes)]
    return struct_replace(
        pod, spec=struct_replace(spec, containers=tuple(add(x) for x in spec.containers), volumes=volumes)
    )
