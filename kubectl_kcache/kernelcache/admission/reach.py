"""Whether a new pod reaches KServe's webhook and gets past its handler: the pod as its controller created it,
the API server's side (configuration, selectors, match conditions), then the handler's own gates.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from msgspec.structs import replace as struct_replace

from ...objects import Container, Pod, PodSpec, WebhookEntry
from .. import constants as c
from ..config import ConfigState
from ..selectors import describe_label_selector, label_selector_matches
from ..webhook_reach import Reach
from .gates import (
    CONFIG,
    ENABLED,
    ISVC_LABEL,
    MATCH_CONDITIONS,
    NAMESPACE_SELECTOR,
    OBJECT_SELECTOR,
    SIDECAR_ANNOTATION,
    SKIP,
    SUPPORTED,
    WEBHOOK_INSTALLED,
    WEBHOOK_REACHABLE,
    Gate,
    Inputs,
)

# ---- the pod before the webhook ----------------------------------------------------------------------------


def is_injected_volume(name: str) -> bool:
    return name == c.SOURCE_VOLUME or name.startswith(c.RUNTIME_VOLUME_PREFIX)


def _is_sidecar_volume(name: str) -> bool:
    return name == c.MCV_REPORTER_VOLUME or name.startswith(c.MCV_CACHE_VOLUME_PREFIX)


def pre_admission(pod: Pod) -> Pod:
    """The pod as its controller created it: without the webhook's kernel cache volumes, mounts, linker and
    usage annotation, and without its capture sidecar (container `mcv`, its volumes and the reporter
    annotation; only when that annotation says the webhook added it): a pod read from the cluster carries
    them."""
    sidecar = c.ANNOTATION_REPORTER_SECRET in pod.meta.annotations

    def injected(name: str) -> bool:
        return is_injected_volume(name) or (sidecar and _is_sidecar_volume(name))

    def strip(ctr: Container) -> Container:
        return struct_replace(ctr, volume_mounts=tuple(m for m in ctr.volume_mounts if not injected(m.name)))

    spec = pod.spec or PodSpec()
    dropped = (c.ANNOTATION_USAGE, c.ANNOTATION_REPORTER_SECRET) if sidecar else (c.ANNOTATION_USAGE,)
    annotations = {k: v for k, v in pod.meta.annotations.items() if k not in dropped}
    return struct_replace(
        pod,
        metadata=struct_replace(pod.metadata, annotations=annotations),
        spec=struct_replace(
            spec,
            containers=tuple(strip(x) for x in spec.containers if not (sidecar and x.name == c.MCV_CONTAINER)),
            init_containers=tuple(strip(x) for x in spec.init_containers if x.name != c.LINKER_CONTAINER),
            volumes=[v for v in spec.volumes or () if not injected(str(v.get("name") or ""))],
        ),
    )


def recorded_cache(pod: Pod) -> tuple[bool, str]:
    """(whether the pod carries the webhook's mutation, the KernelCache its usage annotation names or "")."""
    usage = pod.meta.annotations.get(c.ANNOTATION_USAGE, "")
    linker = any(x.name == c.LINKER_CONTAINER for x in pod.init_containers)
    source = any(v.name == c.SOURCE_VOLUME for v in pod.volumes)
    return bool(usage or linker or source), usage


# ---- API server side ---------------------------------------------------------------------------------------

_MATCH_TERM = re.compile(
    r"""^(?:has\(object\.metadata\.(labels|annotations)\)"""
    r"""|(['"])(.*?)\2\s+in\s+object\.metadata\.(labels|annotations))$"""
)


def match_condition(expression: str, pod: Pod) -> bool | None:
    """A matchCondition of the shapes KServe uses (`has(object.metadata.labels) && 'k' in
    object.metadata.labels`, any conjunction of such terms); None for CEL this does not evaluate."""
    result = True
    for term in expression.split("&&"):
        m = _MATCH_TERM.match(term.strip())
        if m is None:
            return None
        if m.group(1):
            where = pod.meta.labels if m.group(1) == "labels" else pod.meta.annotations
            result = result and bool(where)
        else:
            where = pod.meta.labels if m.group(4) == "labels" else pod.meta.annotations
            result = result and m.group(3) in where
    return result


def rule_covers_pod_create(entry: WebhookEntry) -> bool:
    def has(values: Iterable[str], wanted: str) -> bool:
        return any(v in (wanted, "*") for v in values)

    return any(
        has(r.operations, "CREATE")
        and has(r.api_groups, "")
        and has(r.api_versions, "v1")
        and (has(r.resources, "pods"))
        for r in entry.rules
    )


def webhook_gates(inputs: Inputs) -> list[Gate]:
    pod = inputs.pod
    if not inputs.webhook_known:
        return [
            Gate(
                g,
                None,
                "the webhook configuration was not read (list mutatingwebhookconfigurations was "
                "forbidden, or it is not in the input): not checked",
            )
            for g in (WEBHOOK_INSTALLED, NAMESPACE_SELECTOR, OBJECT_SELECTOR, MATCH_CONDITIONS, WEBHOOK_REACHABLE)
        ]
    config = next((w for w in inputs.webhooks if w.meta.name == c.WEBHOOK_CONFIGURATION), None)
    entry = next((w for w in config.webhooks if w.name == c.WEBHOOK_NAME), None) if config else None
    gates: list[Gate] = []

    def gate(gate_id: str, passed: bool | None, detail: str) -> None:
        gates.append(Gate(gate_id, passed, detail))

    if config is None:
        gate(
            WEBHOOK_INSTALLED,
            False,
            f"MutatingWebhookConfiguration {c.WEBHOOK_CONFIGURATION} is "
            "not installed: the API server calls no kernel cache webhook",
        )
    elif entry is None:
        what = f"MutatingWebhookConfiguration {c.WEBHOOK_CONFIGURATION} has no webhook {c.WEBHOOK_NAME}"
        gate(WEBHOOK_INSTALLED, False, what)
    elif not rule_covers_pod_create(entry):
        gate(WEBHOOK_INSTALLED, False, f"webhook {c.WEBHOOK_NAME} has no rule for CREATE of v1 pods")
    else:
        policy = entry.failure_policy
        gate(WEBHOOK_INSTALLED, True, f"webhook {c.WEBHOOK_NAME} is installed for pod CREATE (failurePolicy {policy})")
    if entry is None:
        return gates + [
            Gate(g, None, "no webhook to check")
            for g in (NAMESPACE_SELECTOR, OBJECT_SELECTOR, MATCH_CONDITIONS, WEBHOOK_REACHABLE)
        ]
    selector = describe_label_selector(entry.namespace_selector)
    if inputs.namespace_labels is None:
        gate(
            NAMESPACE_SELECTOR,
            None,
            f"namespace {inputs.namespace} was not read (list namespaces "
            f"was forbidden, or it is not in the input): namespaceSelector "
            f"{selector} not checked",
        )
    elif label_selector_matches(entry.namespace_selector, inputs.namespace_labels):
        gate(NAMESPACE_SELECTOR, True, f"namespace {inputs.namespace} matches namespaceSelector {selector}")
    else:
        gate(
            NAMESPACE_SELECTOR,
            False,
            f"namespace {inputs.namespace} does not match the webhook's "
            f"namespaceSelector {selector}: its pods are never sent to "
            "the kernel cache webhook",
        )
    selector = describe_label_selector(entry.object_selector)
    if label_selector_matches(entry.object_selector, pod.meta.labels):
        gate(OBJECT_SELECTOR, True, f"the pod's labels match objectSelector {selector}")
    else:
        gate(OBJECT_SELECTOR, False, f"the pod's labels do not match the webhook's objectSelector {selector}")
    results = [(name, expr, match_condition(expr, pod)) for name, expr in entry.match_conditions]
    failed = [(n, e) for n, e, r in results if r is False]
    unknown_cel = [(n, e) for n, e, r in results if r is None]
    if failed:
        name, expr = failed[0]
        gate(
            MATCH_CONDITIONS,
            False,
            f"matchCondition {name} ({expr}) is false for the pod: the API server does not call the webhook",
        )
    elif unknown_cel:
        name, expr = unknown_cel[0]
        gate(MATCH_CONDITIONS, None, f"matchCondition {name} ({expr}) is CEL this tool does not evaluate")
    else:
        gate(
            MATCH_CONDITIONS,
            True,
            f"{len(results)} matchCondition(s) true for the pod" if results else "no matchConditions",
        )
    gates.append(reachable_gate(entry, inputs.webhook_endpoints))
    return gates


def reachable_gate(entry: WebhookEntry, endpoints: int | None) -> Gate:
    """Whether the API server can call the webhook (`webhook_reach`, the doctor's rule): with failurePolicy Fail
    it rejects the pod when it cannot, with Ignore it admits it untouched."""
    reach = Reach(entry, endpoints)
    why_not = reach.why_not
    if why_not and entry.failure_policy == "Ignore":
        return Gate(
            WEBHOOK_REACHABLE,
            False,
            f"{why_not}: with failurePolicy Ignore the API server admits the pod without calling it (no cache)",
            effect=SKIP,
        )
    if why_not:
        return Gate(
            WEBHOOK_REACHABLE,
            False,
            f"{why_not}: with failurePolicy Fail the API server rejects the pod (kubectl kcache doctor --only "
            "control-plane says why)",
            message=reach.api_server_error,
        )
    if endpoints is None:
        return Gate(WEBHOOK_REACHABLE, None, f"the endpoints of Service {reach.service} were not read: not checked")
    return Gate(WEBHOOK_REACHABLE, True, f"Service {reach.service} has {endpoints} ready endpoint(s)")


# ---- handler -------------------------------------------------------------------------------------------


def _config_error(config: ConfigState) -> str:
    if not config.present:
        return f'configmaps "{c.CONFIGMAP_NAME}" not found'
    return config.error


def handler_gates(inputs: Inputs) -> list[Gate]:
    pod, config = inputs.pod, inputs.config
    gates: list[Gate] = []

    def gate(gate_id: str, passed: bool | None, detail: str, message: str = "") -> None:
        gates.append(Gate(gate_id, passed, detail, message=message))

    isvc = pod.meta.labels.get(c.LABEL_ISVC, "")
    gate(
        ISVC_LABEL,
        bool(isvc),
        f"label {c.LABEL_ISVC}={isvc}"
        if isvc
        else f"the pod has no (or an empty) {c.LABEL_ISVC} label: the webhook allows it untouched",
    )
    supported = pod.meta.annotations.get(c.ANNOTATION_SUPPORTED)
    gate(
        SUPPORTED,
        supported == "true",
        f'annotation {c.ANNOTATION_SUPPORTED}: "true"'
        if supported == "true"
        else f"annotation {c.ANNOTATION_SUPPORTED} is "
        f'{"missing" if supported is None else repr(supported)}, not "true": the webhook skips the pod '
        "(set it on the ServingRuntime's spec.annotations or the InferenceService)",
    )
    if config.config is None:
        gate(
            CONFIG,
            False,
            f"the kernelcache configuration cannot be loaded: the webhook rejects every "
            f'pod it is called for with HTTP 500 "{_config_error(config)}"',
            message=_config_error(config),
        )
        gate(ENABLED, None, "no configuration to check")
        gate(SIDECAR_ANNOTATION, None, "no configuration to check")
        return gates
    gate(CONFIG, True, f"{c.KSERVE_NAMESPACE}/{c.CONFIGMAP_NAME} key {c.CONFIG_KEY} is valid")
    cfg = config.config
    enabled = (
        "kernelcache.enabled is true"
        if cfg.enabled
        else "kernelcache.enabled is false: the webhook allows every pod untouched"
    )
    gate(ENABLED, cfg.enabled, enabled)
    value = pod.meta.annotations.get(c.ANNOTATION_SIDECAR_INJECTION)
    if not cfg.enabled:
        gate(SIDECAR_ANNOTATION, None, "not read while the feature is disabled")
    elif value is None or value in ("true", "false"):
        gate(
            SIDECAR_ANNOTATION,
            True,
            f"annotation {c.ANNOTATION_SIDECAR_INJECTION}: {value}"
            if value is not None
            else f"no {c.ANNOTATION_SIDECAR_INJECTION} annotation",
        )
    else:
        message = f"{c.ANNOTATION_SIDECAR_INJECTION} must be true or false"
        gate(
            SIDECAR_ANNOTATION,
            False,
            f"annotation {c.ANNOTATION_SIDECAR_INJECTION} is {value!r}: the "
            f'webhook rejects the pod with HTTP 400 "{message}", before any '
            "cache is looked at",
            message=message,
        )
    return gates
