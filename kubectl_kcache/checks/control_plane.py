"""KServe's localmodel controller and the pod webhook it serves.

The Deployment `kserve/kserve-localmodel-controller-manager` runs the kernel cache reconcilers and the
pod webhook `kernelcache.kserve-webhook-server.pod-mutator` (MutatingWebhookConfiguration
`kernelcache.serving.kserve.io`, Service `kserve/localmodel-webhook-server-service`). The webhook's
failurePolicy is `Fail` and it is called for every pod labelled `serving.kserve.io/inferenceservice`:
while it cannot be reached (controller not ready, no ready endpoints, no CA bundle to verify its
certificate) the API server rejects those pods, including every pod of an InferenceService with the
kernel cache annotation. So these findings come first in the report. Also reported: Warning events
`FailedCreate` on ReplicaSets in the last hour whose message names the kernel cache webhook (the
webhook denied or could not be called), with the API server's message.

While the feature is disabled only a webhook that is still installed matters (it still intercepts
pods); without one the check is not applicable.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

from .. import objects as o
from ..kernelcache import constants as c
from ..snapshot import plan as readplan
from ..snapshot.model import ClusterSnapshot
from ..suggest import Name, Namespace, kubectl
from .common import condition_text, endpoints_command, facts, parse_time, ready_endpoints, rfc3339
from .model import CheckRead, Finding, NotApplicable, ObjectRef, finding_of
from .registry import check

ID = "control-plane"
finding = finding_of(ID)
RECENT = dt.timedelta(hours=1)
DEPLOY_REF = ObjectRef("Deployment", c.CONTROLLER_DEPLOYMENT, c.KSERVE_NAMESPACE)
WEBHOOK_REF = ObjectRef("MutatingWebhookConfiguration", c.WEBHOOK_CONFIGURATION)


def _blocked(policy: str) -> str:
    if policy != "Fail":
        return (
            f"the webhook's failurePolicy is {policy}, so pods are admitted without kernel cache injection or capture"
        )
    return (
        "pods of InferenceServices with the kernel cache annotation "
        f"({c.ANNOTATION_SUPPORTED}) are blocked because the webhook's failurePolicy is Fail (it is called "
        f"for every pod labelled {c.LABEL_ISVC}, so their other pods are blocked too)"
    )


@check(
    ID,
    "KServe controller and pod webhook ready",
    "error",
    order=30,
    codes={
        "controller-missing": ("error", "KServe's localmodel controller Deployment does not exist"),
        "controller-not-ready": ("error", "KServe's localmodel controller is scaled to zero or not ready"),
        "webhook-missing": ("error", "the pod webhook's MutatingWebhookConfiguration (or its webhook) is missing"),
        "webhook-no-ca": ("error", "the pod webhook has no caBundle"),
        "webhook-no-endpoints": ("error", "the pod webhook's Service has no ready endpoints"),
        "pods-denied": ("error", "the kernel cache webhook denied ReplicaSets' pod creation recently"),
    },
    reads=(
        CheckRead(readplan.CONTROLLER),
        CheckRead(readplan.WEBHOOK),
        CheckRead(readplan.WEBHOOK_ENDPOINTS, optional=True, note="webhook Service endpoints not checked"),
        CheckRead(readplan.FAILED_CREATES, optional=True, note="FailedCreate events not checked"),
    ),
)
def run(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    feature = facts(snapshot).feature
    disabled = feature.valid and not feature.enabled
    wh_config = next((w for w in snapshot.webhooks if w.meta.name == c.WEBHOOK_CONFIGURATION), None)
    if disabled and wh_config is None:
        raise NotApplicable("the kernel cache feature is disabled and its pod webhook is not installed")
    entry = next((w for w in wh_config.webhooks if w.name == c.WEBHOOK_NAME), None) if wh_config is not None else None
    policy = entry.failure_policy if entry is not None else "Fail"
    service_ns = (entry.service_namespace if entry else "") or c.KSERVE_NAMESPACE
    service = (entry.service_name if entry else "") or c.WEBHOOK_SERVICE

    endpoints = ready_endpoints(snapshot, service_ns, service)
    deploy = snapshot.deployment(c.KSERVE_NAMESPACE, c.CONTROLLER_DEPLOYMENT)
    deploy_ok = deploy is not None and deploy.replicas > 0 and deploy.ready_replicas >= deploy.replicas
    yield from _deployment(deploy, deploy_ok, policy, endpoints, service_ns, service)

    if wh_config is None:
        yield finding(
            "error",
            WEBHOOK_REF,
            f"MutatingWebhookConfiguration {c.WEBHOOK_CONFIGURATION} is not installed: no pod gets a kernel "
            "cache mounted or the capture sidecar injected",
            hint="kubectl get mutatingwebhookconfigurations",
            code="webhook-missing",
        )
    elif entry is None:
        names = ", ".join(w.name for w in wh_config.webhooks) or "none"
        yield finding(
            "error",
            WEBHOOK_REF,
            f"MutatingWebhookConfiguration {c.WEBHOOK_CONFIGURATION} has no webhook {c.WEBHOOK_NAME}: no "
            "pod gets a kernel cache mounted or the capture sidecar injected",
            hint=f"kubectl get mutatingwebhookconfiguration {c.WEBHOOK_CONFIGURATION} -o yaml",
            evidence=(f"webhooks: {names}",),
            code="webhook-missing",
        )
    else:
        if not entry.has_ca_bundle:
            yield finding(
                "error",
                WEBHOOK_REF,
                f"webhook {c.WEBHOOK_NAME} has no caBundle, so the API server cannot verify the webhook "
                f"server's certificate and every call fails: {_blocked(policy)}",
                hint=f"kubectl -n {c.KSERVE_NAMESPACE} describe certificate localmodel-serving-cert",
                evidence=(f"failurePolicy: {policy}",),
                code="webhook-no-ca",
            )
        if endpoints is not None and endpoints == 0 and deploy_ok:
            yield finding(
                "error",
                ObjectRef("Service", service, service_ns),
                f"Service {service_ns}/{service} behind webhook {c.WEBHOOK_NAME} has no ready endpoints: "
                f"{_blocked(policy)}",
                hint=endpoints_command(service_ns, service),
                evidence=(f"failurePolicy: {policy}",),
                code="webhook-no-endpoints",
            )
    yield from _denials(snapshot)


def _deployment(
    deploy: o.Deployment | None, ok: bool, policy: str, endpoints: int | None, service_ns: str, service: str
) -> Iterator[Finding]:
    if ok:
        return
    evidence = []
    if endpoints == 0:
        evidence.append(f"Service {service_ns}/{service} has no ready endpoints")
    if deploy is None:
        yield finding(
            "error",
            DEPLOY_REF,
            f"Deployment {c.KSERVE_NAMESPACE}/{c.CONTROLLER_DEPLOYMENT} (KServe's localmodel controller) "
            "is missing: nothing reconciles node groups, KernelCacheNodes, KernelCaches or captures, and "
            f"{_blocked(policy)}",
            hint=f"kubectl -n {c.KSERVE_NAMESPACE} get deployments",
            evidence=tuple(evidence),
            code="controller-missing",
        )
        return
    cond = next((x for x in deploy.conditions if x.type == "Available" and x.status != "True"), None)
    if cond is not None:
        evidence.append(f"Available=False: {condition_text(cond)}")
    what = (
        "is scaled to zero"
        if deploy.replicas == 0
        else (f"is not ready ({deploy.ready_replicas}/{deploy.replicas} replicas ready)")
    )
    yield finding(
        "error",
        DEPLOY_REF,
        f"Deployment {c.KSERVE_NAMESPACE}/{c.CONTROLLER_DEPLOYMENT} (KServe's localmodel controller) {what}: "
        f"kernel cache reconciliation has stopped and {_blocked(policy)}. It may crash-loop until its "
        f"webhook certificate ({c.WEBHOOK_CERT_SECRET}) is issued",
        hint=f"kubectl -n {c.KSERVE_NAMESPACE} describe deployment {c.CONTROLLER_DEPLOYMENT}",
        evidence=tuple(evidence),
        code="controller-not-ready",
    )


def _denials(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    now = facts(snapshot).now
    latest: dict[tuple[str, str], o.Event] = {}
    for ev in snapshot.events:
        if ev.reason != "FailedCreate" or ev.involved_kind != "ReplicaSet" or ev.type not in ("Warning", ""):
            continue
        if "kernelcache" not in ev.message.lower():
            continue
        seen = parse_time(ev.last_seen)
        if seen is not None and now - seen > RECENT:
            continue
        key = (ev.involved_namespace or ev.meta.namespace or "", ev.involved_name)
        prev = latest.get(key)
        if prev is None or (parse_time(ev.last_seen) or now) >= (parse_time(prev.last_seen) or now):
            latest[key] = ev
    for (ns, name), ev in sorted(latest.items()):
        seen = parse_time(ev.last_seen)
        when = f", last at {rfc3339(seen)}" if seen else ""
        yield finding(
            "error",
            ObjectRef("ReplicaSet", name, ns or None),
            f"ReplicaSet {ns}/{name} cannot create pods ({ev.count}x{when}): {ev.message}",
            hint=kubectl("-n {ns} describe replicaset {rs}", ns=Namespace(ns), rs=Name("replicaset", name)),
            evidence=(f"event {ev.meta.name}: {ev.reason}",),
            code="pods-denied",
            cause=ev.message,
            lister=kubectl("get events -A --field-selector reason=FailedCreate,involvedObject.kind=ReplicaSet"),
        )
