"""The KernelCacheCapture status validator, which every capture status update goes through.

KServe installs the ValidatingWebhookConfiguration `kernelcachecapture.serving.kserve.io` (webhook
`kernelcachecapture.kserve-webhook-server.status-validator`, path `/validate-kernelcachecapture-status`,
served by the localmodel controller behind `kserve/localmodel-webhook-server-service`) for UPDATE of
`kernelcachecaptures/status`, with failurePolicy `Fail` and no namespace, object or match selectors. It
only constrains the MCV reporters, but every update is sent to it, the controller's own included: while it
cannot be reached, every capture status update fails (session claims, phases, signing, kernelCacheRef
links) and captures stop progressing, with nothing on the capture itself.

* not installed, or without its webhook (warning): reporter updates are not constrained (a reporter may
  write more than its runtimeResult);
* no caBundle (error), or its Service without ready endpoints (error) while failurePolicy is Fail: every
  capture status update fails; with failurePolicy Ignore (warning) they are admitted unvalidated.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..kernelcache import constants as c
from ..snapshot import plan as readplan
from ..snapshot.model import ClusterSnapshot
from ..suggest import Name, Namespace, kubectl
from .common import endpoints_command, ready_endpoints
from .model import CheckRead, Finding, NotApplicable, ObjectRef, finding_of
from .registry import check

ID = "capture-webhook"
finding = finding_of(ID)
REF = ObjectRef("ValidatingWebhookConfiguration", c.CAPTURE_WEBHOOK_CONFIGURATION)
SHOW = kubectl(
    "get validatingwebhookconfiguration {webhook} -o yaml",
    webhook=Name("validatingwebhookconfiguration", c.CAPTURE_WEBHOOK_CONFIGURATION),
)


@check(
    ID,
    "the capture status webhook can be reached",
    "error",
    order=36,
    needs_feature=True,
    codes={
        "missing": ("warning", "the capture status webhook is not installed: reporters are not constrained"),
        "no-ca": ("error", "the capture status webhook has no caBundle: every capture status update fails"),
        "no-endpoints": (
            "error",
            "the capture status webhook's Service has no ready endpoints: every capture status update fails",
        ),
        "failure-ignore": ("warning", "the capture status webhook's failurePolicy is Ignore"),
    },
    reads=(
        CheckRead(readplan.CAPTURE_WEBHOOK),
        CheckRead(readplan.WEBHOOK_ENDPOINTS, optional=True, note="the webhook Service's endpoints not checked"),
        CheckRead(readplan.CAPTURES, optional=True, note="the captures it stops are not counted"),
    ),
)
def run(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    config = next((w for w in snapshot.validating_webhooks if w.meta.name == c.CAPTURE_WEBHOOK_CONFIGURATION), None)
    entry = next((w for w in config.webhooks if w.name == c.CAPTURE_WEBHOOK_NAME), None) if config else None
    if entry is None:
        what = "is not installed" if config is None else f"has no webhook {c.CAPTURE_WEBHOOK_NAME}"
        yield finding(
            "warning",
            REF,
            f"ValidatingWebhookConfiguration {c.CAPTURE_WEBHOOK_CONFIGURATION} {what}: capture status "
            "updates by the MCV reporters are not constrained (KServe installs it with the localmodel "
            "controller)",
            hint="kubectl get validatingwebhookconfigurations",
            code="missing",
        )
        return
    policy = entry.failure_policy
    active = [x for x in snapshot.captures if x.phase not in c.CAPTURE_TERMINAL_PHASES]
    stuck = f" ({len(active)} capture(s) in progress now: they stop progressing)" if active else ""
    effect = (
        "every KernelCacheCapture status update fails (failurePolicy Fail, no selectors: the controller's "
        f"own session claims, phases, signing and kernelCacheRef links too){stuck}"
        if policy == "Fail"
        else f"capture status updates are admitted without validation (failurePolicy {policy})"
    )
    if policy != "Fail":
        yield finding(
            "warning",
            REF,
            f"webhook {c.CAPTURE_WEBHOOK_NAME} has failurePolicy {policy}: while it "
            "cannot be reached, reporter updates are not validated (KServe installs "
            "Fail)",
            hint=SHOW,
            evidence=(f"failurePolicy: {policy}",),
            code="failure-ignore",
        )
    if not entry.has_ca_bundle:
        yield finding(
            "error" if policy == "Fail" else "warning",
            REF,
            f"webhook {c.CAPTURE_WEBHOOK_NAME} has no caBundle, so the API server cannot verify the "
            f"webhook server's certificate: {effect}",
            hint=kubectl("-n {ns} describe certificate localmodel-serving-cert", ns=Namespace(c.KSERVE_NAMESPACE)),
            code="no-ca",
        )
    ns = entry.service_namespace or c.KSERVE_NAMESPACE
    service = entry.service_name or c.WEBHOOK_SERVICE
    if not entry.service_name and entry.url:
        raise NotApplicable(f"webhook {c.CAPTURE_WEBHOOK_NAME} calls a URL, not a Service")
    if ready_endpoints(snapshot, ns, service) == 0:
        yield finding(
            "error" if policy == "Fail" else "warning",
            ObjectRef("Service", service, ns),
            f"Service {ns}/{service} behind webhook {c.CAPTURE_WEBHOOK_NAME} has no ready endpoints: {effect}",
            hint=endpoints_command(ns, service),
            evidence=(f"failurePolicy: {policy}",),
            code="no-endpoints",
        )
