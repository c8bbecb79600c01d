"""A pod's workload identity and footprints, as KServe's pod webhook computes them
(pkg/webhook/admission/kernelcache/identity.go, model_source.go; pkg/kernelcache/identity/).

* workload: label `serving.kserve.io/inferenceservice` (kind InferenceService), else
  `app.kubernetes.io/name` with `app.kubernetes.io/part-of: llminferenceservice` (LLMInferenceService; only
  KServe's unit tests reach it: the webhook requires the InferenceService label first);
* runtime container (in `spec.containers` only): `kserve-container` then `main` for an InferenceService,
  `main` then `kserve-container` for an LLMInferenceService;
* runtime image class: digest (workload and compatibility footprints), tag other than `latest`
  (compatibility only), floating (`latest` or untagged: none); malformed images are errors that reject the
  pod (HTTP 500);
* model source: annotation `internal.serving.kserve.io/storage-initializer-sourceuri`, parsed with Go's
  net/url; userinfo, query and fragment dropped; hashed;
* footprints: the workload footprint hashes namespace, kind, name, image, model and the command/args hashes;
  the compatibility footprint hashes image, model and the runtime-config factors (factors.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cached_property

import msgspec

from ..objects import Container
from . import constants as c
from . import gourl
from .factors import runtime_factors
from .gojson import hash_map, hash_strings
from .gostrings import trim_space

KIND_ISVC = "InferenceService"
KIND_LLMISVC = "LLMInferenceService"
LABEL_APP_NAME = "app.kubernetes.io/name"
LABEL_PART_OF = "app.kubernetes.io/part-of"
PART_OF_LLMISVC = "llminferenceservice"
CONTAINER_KSERVE = "kserve-container"
CONTAINER_MAIN = "main"
RUNTIME_CONTAINERS = {KIND_ISVC: (CONTAINER_KSERVE, CONTAINER_MAIN), KIND_LLMISVC: (CONTAINER_MAIN, CONTAINER_KSERVE)}

IMAGE_DIGEST, IMAGE_TAG, IMAGE_FLOATING = "digest", "tag", "floating"

# KServe's error texts (each rejects the pod with HTTP 500 when it happens in the webhook)
ERR_WORKLOAD_LABELS = "workload identity labels are required"
ERR_RUNTIME_CONTAINER = "runtime container was not found"
ERR_IMAGE_REQUIRED = "runtime image is required"
ERR_DIGEST_INVALID = "runtime image digest is invalid"
ERR_DIGEST_UNSUPPORTED = "runtime image digest is unsupported"
ERR_TAG_EMPTY = "runtime image tag is empty"
ERR_WORKLOAD_REQUIRED = "namespace, workload kind, and workload name are required"
ERR_MODEL_HASH = "model URI hash is required and must be a SHA-256 value"

_SHA256 = re.compile(r"sha256:[0-9a-f]{64}")


class IdentityError(ValueError):
    """KServe could not compute the identity; the message is KServe's."""


class Workload(msgspec.Struct, frozen=True):
    kind: str
    name: str


def workload_ref(labels: Mapping[str, str]) -> Workload:
    """workloadRefForPod."""
    if labels.get(c.LABEL_ISVC):
        return Workload(KIND_ISVC, labels[c.LABEL_ISVC])
    if labels.get(LABEL_APP_NAME) and labels.get(LABEL_PART_OF) == PART_OF_LLMISVC:
        return Workload(KIND_LLMISVC, labels[LABEL_APP_NAME])
    raise IdentityError(ERR_WORKLOAD_LABELS)


def runtime_container(kind: str, containers: Sequence[Container]) -> Container:
    """runtimeContainerForPod: the first of the kind's names that exists in spec.containers."""
    by_name: dict[str, Container] = {}
    for ctr in containers:
        by_name.setdefault(ctr.name, ctr)
    for name in RUNTIME_CONTAINERS.get(kind, ()):
        if name in by_name:
            return by_name[name]
    raise IdentityError(ERR_RUNTIME_CONTAINER)


def resolve_container(name: str, containers: Sequence[Container]) -> Container | str:
    """ResolveRuntimeContainerName: the container a cache path targets (the cache mount step and the capture
    sidecar step), or KServe's error text."""
    if name:
        found = next((x for x in containers if x.name == name), None)
        return found if found is not None else f'cache container "{name}" was not found'
    for default in (CONTAINER_KSERVE, CONTAINER_MAIN):
        found = next((x for x in containers if x.name == default), None)
        if found is not None:
            return found
    return "containerName is required when no standard KServe runtime container is present"


def resolve_oci_path(oci_path: str) -> tuple[str, str]:
    """(resolved path, KServe's error text or "")."""
    if not oci_path:
        return c.OCI_PATH_VLLM, ""
    if oci_path in (c.OCI_PATH_VLLM, c.OCI_PATH_TRITON):
        return oci_path, ""
    return "", (f'unsupported OCI path "{oci_path}"; supported paths are "{c.OCI_PATH_VLLM}" and "{c.OCI_PATH_TRITON}"')


def classify_image(image: str) -> str:
    """classifyImageReference on the trimmed image: digest, tag or floating; IdentityError when malformed."""
    if not image or any(ch in image for ch in " \t\n"):
        raise IdentityError(ERR_IMAGE_REQUIRED)
    at = image.rfind("@sha256:")
    if at >= 0:
        digest = image[at + 1 :]
        if at == 0 or not _SHA256.fullmatch(digest):
            raise IdentityError(ERR_DIGEST_INVALID)
        return IMAGE_DIGEST
    if "@" in image:
        raise IdentityError(ERR_DIGEST_UNSUPPORTED)
    last_slash, last_colon = image.rfind("/"), image.rfind(":")
    if last_colon <= last_slash:
        return IMAGE_FLOATING
    tag = image[last_colon + 1 :]
    if not tag:
        raise IdentityError(ERR_TAG_EMPTY)
    return IMAGE_FLOATING if tag == "latest" else IMAGE_TAG


def model_uri_hash(raw: str) -> str:
    """identity.ModelURIHash: the URI parsed as Go does, without userinfo, query and fragment, hashed;
    "" when Go's url.Parse rejects it."""
    try:
        url = gourl.parse(raw)
    except gourl.URLError:
        return ""
    return hash_strings([gourl.string_without_user_query_fragment(url)])


class ModelSource(msgspec.Struct, frozen=True):
    """The pod's model source as the webhook resolves it; `uri` is "" when unknown."""

    uri: str = ""
    hash: str = ""
    problem: str = ""  # why it is unknown, in words

    @property
    def known(self) -> bool:
        return bool(self.hash)


def model_source(kind: str, annotations: Mapping[str, str]) -> ModelSource:
    """resolveWorkloadModelSource: only InferenceServices have one, from the storage-initializer annotation."""
    if kind != KIND_ISVC:
        return ModelSource(problem=f"KServe resolves no model source for kind {kind}")
    uri = trim_space(annotations.get(c.ANNOTATION_SOURCE_URI, ""))
    if not uri:
        return ModelSource(problem=f"the pod has no {c.ANNOTATION_SOURCE_URI} annotation")
    try:
        gourl.parse(uri)
    except gourl.URLError as exc:
        return ModelSource(uri=uri, problem=f"Go's url.Parse rejects the model URI: {exc}")
    return ModelSource(uri=uri, hash=model_uri_hash(uri))


class Identity(msgspec.Struct, frozen=True, dict=True):
    """The pod's identity: its factors and both footprints ("" when the image class gives none)."""

    namespace: str
    workload: Workload
    runtime_image: str
    image_class: str
    model_uri_hash: str
    command_hash: str = ""
    args_hash: str = ""
    runtime_factors: Mapping[str, str] = msgspec.field(default_factory=dict)
    workload_footprint: str = ""
    compatibility_footprint: str = ""

    @cached_property
    def factors(self) -> dict[str, str]:
        """Every factor (KServe's identity.Factors): workload keys, command/args hashes, runtime factors (made
        once: a decision compares them with every candidate's)."""
        out = {
            "namespace": self.namespace,
            "workloadKind": self.workload.kind,
            "workloadName": self.workload.name,
            "runtimeImage": self.runtime_image,
            "modelURIHash": self.model_uri_hash,
        }
        if self.command_hash:
            out["commandHash"] = self.command_hash
        if self.args_hash:
            out["argsHash"] = self.args_hash
        out.update(self.runtime_factors)
        return dict(sorted(out.items()))


def build(
    namespace: str,
    workload: Workload,
    image: str,
    model_hash: str,
    command_hash: str = "",
    args_hash: str = "",
    factors: Mapping[str, str] | None = None,
) -> Identity:
    """identity.Build: validate, classify the image, compute the footprints its class allows."""
    if not namespace or not workload.kind or not workload.name:
        raise IdentityError(ERR_WORKLOAD_REQUIRED)
    if not _SHA256.fullmatch(model_hash):
        raise IdentityError(ERR_MODEL_HASH)
    image = trim_space(image)
    image_class = classify_image(image)
    factors = dict(factors or {})
    compat = {"runtimeImage": image, "modelURIHash": model_hash, **{k: v for k, v in factors.items() if v}}
    workload_map = {
        "namespace": namespace,
        "workloadKind": workload.kind,
        "workloadName": workload.name,
        "runtimeImage": image,
        "modelURIHash": model_hash,
    }
    if command_hash:
        workload_map["commandHash"] = command_hash
    if args_hash:
        workload_map["argsHash"] = args_hash
    return Identity(
        namespace=namespace,
        workload=workload,
        runtime_image=image,
        image_class=image_class,
        model_uri_hash=model_hash,
        command_hash=command_hash,
        args_hash=args_hash,
        runtime_factors=dict(sorted(factors.items())),
        workload_footprint=hash_map(workload_map) if image_class == IMAGE_DIGEST else "",
        compatibility_footprint=hash_map(compat) if image_class != IMAGE_FLOATING else "",
    )


def container_identity(namespace: str, workload: Workload, container: Container, model_hash: str) -> Identity:
    """identityForPod once the runtime container and the model hash are known."""
    return build(
        namespace,
        workload,
        container.image,
        model_hash,
        command_hash=hash_strings(container.command) if container.command else "",
        args_hash=hash_strings(container.args) if container.args else "",
        factors=runtime_factors(container.env, container.command, container.args),
    )
