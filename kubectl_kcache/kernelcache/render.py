"""The pod a manifest stands for, for `why-not-cached --manifest` (a what-if before anything is created).

Accepted, exactly:
* a Pod;
* a Deployment, ReplicaSet or PodTemplate: its pod template (KServe's predictor Deployment holds the pod
  exactly as KServe renders it, before the pod webhook: `kubectl get deployment <isvc>-predictor -o yaml`).

Accepted as a subset of KServe's rendering (what the pod webhook reads, nothing else):
* an InferenceService whose predictor is `spec.predictor.model` with the ServingRuntime or
  ClusterServingRuntime it names in the same manifest (or the only one there), or custom
  `spec.predictor.containers`. Rendered: the `kserve-container` as KServe merges it (the runtime's
  container, then the model's fields over it: image and command replaced, env merged by name, args
  appended to the runtime's), `{{.Name}}`/`{{.Namespace}}` placeholders, `runtimeVersion` as the image tag;
  labels (the InferenceService's, the predictor's, the runtime's, `serving.kserve.io/inferenceservice`,
  `component: predictor`); annotations (the runtime's `spec.annotations`, the InferenceService's and the
  predictor's); `storageUri` (or a custom container's `STORAGE_URI`) as the storage-initializer annotation.
  The container is rendered whole, its readinessProbe and ports included: the webhook's capture sidecar step
  reads them and denies a pod without an HTTP readinessProbe on loopback. Everything else a real pod gets
  (storage initializer, resources, transformer, other sidecars) does not change the decision and is not
  rendered. Whatever this cannot render as KServe would (other predictor fields, other placeholders,
  `storageUris`, the "-gpu" image suffix some runtimes get, an annotation set differently in two places) is
  an error that says so: give the predictor Deployment's pod template instead.

A pod of a Deployment carries the `pod-template-hash` label of its ReplicaSet, which the sidecar step needs.
For an InferenceService or a Deployment the hash is not known before the ReplicaSet exists: the label is
set to NEW_REVISION, a new revision (which has no capture yet). A ReplicaSet's template has the real hash.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import InputError
from . import constants as c

KIND_ISVC = "InferenceService"
RUNTIME_KINDS = ("ServingRuntime", "ClusterServingRuntime")
TEMPLATE_KINDS = ("Deployment", "ReplicaSet", "PodTemplate")
DROPPED_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",)
# UpdateImageTag appends "-gpu" to a tagged image of these runtimes when the container asks for a GPU
GPU_SUFFIX_RUNTIMES = ("kserve-tfserving", "kserve-torchserve", "kserve-huggingfaceserver")
NEW_REVISION = "(new-revision)"  # pod-template-hash of a pod whose ReplicaSet does not exist yet
_PLACEHOLDER = re.compile(r"\{\{\s*([^}]*?)\s*\}\}")
_TAG = re.compile(r"(:([\w.\-_]*))$")


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def pod_from_manifest(docs: Sequence[Mapping[str, Any]], origin: str) -> tuple[dict[str, Any], str]:
    """(a Pod as the API would receive it, how it was obtained) from a manifest's objects."""
    pods = [d for d in docs if d.get("kind") == "Pod"]
    templates = [d for d in docs if d.get("kind") in TEMPLATE_KINDS]
    isvcs = [d for d in docs if d.get("kind") == KIND_ISVC]
    found = len(pods) + len(templates) + len(isvcs)
    if found != 1:
        what = "nothing it can use" if not found else f"{found} candidates"
        raise InputError(
            f"--manifest {origin}: expected one Pod, Deployment, ReplicaSet, PodTemplate or "
            f"InferenceService (plus the ServingRuntime it uses), found {what}"
        )
    if pods:
        return dict(pods[0]), f"What-if for Pod {_name(pods[0])} from {origin}."
    if templates:
        return _from_template(templates[0], origin)
    runtimes = [d for d in docs if d.get("kind") in RUNTIME_KINDS]
    return render_isvc(isvcs[0], runtimes, origin)


def _name(obj: Mapping[str, Any]) -> str:
    return str(_map(obj.get("metadata")).get("name") or "")


def _from_template(obj: Mapping[str, Any], origin: str) -> tuple[dict[str, Any], str]:
    template = (
        _map(obj.get("template")) if obj.get("kind") == "PodTemplate" else _map(_map(obj.get("spec")).get("template"))
    )
    if not template:
        raise InputError(f"--manifest {origin}: {obj.get('kind')} {_name(obj)} has no pod template")
    md = dict(_map(template.get("metadata")))
    if obj.get("kind") == "Deployment":
        md["labels"] = {**_map(md.get("labels")), c.LABEL_POD_TEMPLATE_HASH: NEW_REVISION}
    md.setdefault("name", f"{_name(obj)}-(new)")
    md.setdefault("namespace", _map(obj.get("metadata")).get("namespace"))
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": dict(_map(template.get("spec")))}
    return pod, f"What-if for a new pod of {obj.get('kind')} {_name(obj)} (its pod template) from {origin}."


def _unsupported(origin: str, what: str) -> InputError:
    return InputError(
        f"--manifest {origin}: {what}; this cannot be rendered exactly as KServe would: give the "
        "predictor's pod template instead (kubectl get deployment <isvc>-predictor -o yaml)"
    )


def _merge_env(base: list[Any], override: list[Any]) -> list[Any]:
    """A strategic merge of env lists by name: entries of `override` replace those of the same name in place,
    the others are appended."""
    out = [dict(_map(e)) for e in base]
    for e in override:
        e = _map(e)
        at = next((i for i, x in enumerate(out) if x.get("name") == e.get("name")), None)
        if at is None:
            out.append(dict(e))
        else:
            out[at] = {**out[at], **e}
    return out


def _placeholders(value: Any, meta: Mapping[str, Any], origin: str) -> Any:
    if isinstance(value, str):

        def sub(m: re.Match[str]) -> str:
            field = m.group(1)
            if field not in (".Name", ".Namespace"):
                raise _unsupported(origin, f"placeholder {m.group(0)}")
            return str(meta.get(field[1:].lower()) or "")

        return _PLACEHOLDER.sub(sub, value)
    if isinstance(value, list):
        return [_placeholders(v, meta, origin) for v in value]
    if isinstance(value, Mapping):
        return {k: _placeholders(v, meta, origin) for k, v in value.items()}
    return value


def _merge_labels(origin: str, what: str, *sources: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for src in sources:
        for k, v in src.items():
            if k in DROPPED_ANNOTATIONS:
                continue
            if k in out and out[k] != str(v):
                raise _unsupported(origin, f"{what} {k} is set to {out[k]!r} and {str(v)!r} in different places")
            out[str(k)] = str(v)
    return out


def render_isvc(
    isvc: Mapping[str, Any], runtimes: Sequence[Mapping[str, Any]], origin: str
) -> tuple[dict[str, Any], str]:
    """The predictor pod of an InferenceService, as far as KServe's pod webhook reads it (module doc)."""
    meta = _map(isvc.get("metadata"))
    name = str(meta.get("name") or "")
    if not name:
        raise InputError(f"--manifest {origin}: the InferenceService has no metadata.name")
    spec = _map(isvc.get("spec"))
    predictor = _map(spec.get("predictor"))
    runtime_meta: Mapping[str, Any] = {}
    runtime_name = ""
    if predictor.get("model") is not None:
        model = _map(predictor.get("model"))
        if model.get("storageUris"):
            raise _unsupported(origin, "spec.predictor.model.storageUris")
        runtime_name = str(model.get("runtime") or "")
        chosen = [r for r in runtimes if not runtime_name or _name(r) == runtime_name]
        if len(chosen) != 1:
            want = f"ServingRuntime {runtime_name!r}" if runtime_name else "exactly one ServingRuntime"
            raise InputError(
                f"--manifest {origin}: the InferenceService's model needs {want} in the same manifest "
                "(KServe picks a runtime by model format when none is named; name it with "
                "spec.predictor.model.runtime)"
            )
        runtime_spec = _map(chosen[0].get("spec"))
        runtime_name = _name(chosen[0])
        runtime_meta = runtime_spec
        runtime_ctr = next(
            (x for x in _list(runtime_spec.get("containers")) if _map(x).get("name") == "kserve-container"), None
        )
        if runtime_ctr is None:
            raise InputError(
                f"--manifest {origin}: ServingRuntime {runtime_name} has no container named kserve-container"
            )
        container = dict(_map(runtime_ctr))
        for key in ("image", "command"):
            if model.get(key):
                container[key] = model[key]
        container["env"] = _merge_env(_list(container.get("env")), _list(model.get("env")))
        container["args"] = [*_list(runtime_ctr.get("args")), *_list(model.get("args"))]
        container["name"] = "kserve-container"
        version = model.get("runtimeVersion")
        image = str(container.get("image") or "")
        if version and "@sha256:" not in image:
            container["image"] = _TAG.sub(f":{version}", image) if _TAG.search(image) else f"{image}:{version}"
        elif not version and runtime_name in GPU_SUFFIX_RUNTIMES and _TAG.search(image) and _asks_gpu(container):
            raise _unsupported(origin, f"runtime {runtime_name} with a GPU: KServe may append -gpu to the image tag")
        storage = model.get("storageUri")
    elif predictor.get("containers"):
        containers = [dict(_map(x)) for x in _list(predictor.get("containers"))]
        container = next((x for x in containers if x.get("name") == "kserve-container"), containers[0])
        if container.get("name") not in (None, "", "kserve-container"):
            raise _unsupported(origin, "no predictor container is named kserve-container")
        container["name"] = "kserve-container"
        storage = next(
            (e.get("value") for e in _list(container.get("env")) if _map(e).get("name") == "STORAGE_URI"), None
        )
    else:
        other = ", ".join(k for k in predictor if k not in ("annotations", "labels")) or "nothing"
        raise _unsupported(origin, f"spec.predictor holds {other} (only model and containers are rendered)")
    container = _placeholders(container, {"name": name, "namespace": meta.get("namespace") or ""}, origin)
    labels = _merge_labels(
        origin, "label", _map(runtime_meta.get("labels")), _map(meta.get("labels")), _map(predictor.get("labels"))
    )
    labels.update({c.LABEL_ISVC: name, "component": "predictor", c.LABEL_POD_TEMPLATE_HASH: NEW_REVISION})
    annotations = _merge_labels(
        origin,
        "annotation",
        _map(runtime_meta.get("annotations")),
        _map(meta.get("annotations")),
        _map(predictor.get("annotations")),
    )
    if storage:
        annotations[c.ANNOTATION_SOURCE_URI] = str(storage)
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{name}-predictor-(new)",
            "namespace": meta.get("namespace"),
            "labels": labels,
            "annotations": annotations,
        },
        "spec": {"containers": [container]},
    }
    via = f" with ServingRuntime {runtime_name}" if runtime_name else ""
    return pod, (
        f"What-if for a new predictor pod of InferenceService {name}{via} from {origin}, rendered as far "
        "as KServe's pod webhook reads it (the kserve-container, labels and annotations)."
    )


def _asks_gpu(container: Mapping[str, Any]) -> bool:
    resources = _map(container.get("resources"))
    keys = {*_map(resources.get("limits")), *_map(resources.get("requests"))}
    return any(k.endswith("/gpu") for k in keys)
