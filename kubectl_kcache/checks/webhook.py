"""The pod webhook's configuration, as it decides which pods KServe's kernel cache webhook ever sees.

Whether the webhook is up (the controller Deployment, ready endpoints, a CA bundle) and the FailedCreate
denials it causes are the `control-plane` check's; this one reads the MutatingWebhookConfiguration
`kernelcache.serving.kserve.io` against the pods and KernelCaches that need it. The API server sends a pod
to the webhook only when a rule covers pod CREATE, the pod's namespace matches `namespaceSelector` (KServe
installs `control-plane DoesNotExist`), its labels match `objectSelector` and every `matchCondition` holds
(KServe's: the pod has the `serving.kserve.io/inferenceservice` label). A pod the webhook never sees is
never cached and never captured, with no event and no log line anywhere.

* no rule for CREATE of v1 pods (error): no pod is ever sent to the webhook;
* a namespace with KernelCaches, or with pods that opt in (`serving.kserve.io/kernelcache-supported:
  "true"`), that the namespaceSelector excludes, e.g. one labelled `control-plane` (error): KernelCaches
  are only used by pods of their own namespace, and those pods are never sent;
* opted-in pods excluded by the objectSelector or by a matchCondition (error), and matchConditions that
  name `serving.kserve.io/kernelcache-sidecar-injection` (warning: KServe's own manifest test forbids it,
  since an opt-out of the sidecar must not skip the cache);
* failurePolicy `Ignore` (warning): while the webhook is unreachable pods are created without their cache
  or capture sidecar and nothing says so (KServe installs `Fail`, which blocks them instead: see
  `control-plane`).
"""

from __future__ import annotations

from collections.abc import Iterator

from .. import objects as o
from ..kernelcache import admission as a
from ..kernelcache import constants as c
from ..kernelcache.selectors import describe_label_selector, label_selector_matches
from ..snapshot import plan as readplan
from ..snapshot.model import ClusterSnapshot
from ..suggest import Name, Namespace, Selector, kubectl
from .common import join_names, read_ok
from .model import CheckRead, Finding, NotApplicable, ObjectRef, finding_of
from .registry import check

ID = "webhook"
finding = finding_of(ID)
WEBHOOK_REF = ObjectRef("MutatingWebhookConfiguration", c.WEBHOOK_CONFIGURATION)
SHOW = kubectl(
    "get mutatingwebhookconfiguration {webhook} -o yaml",
    webhook=Name("mutatingwebhookconfiguration", c.WEBHOOK_CONFIGURATION),
)


@check(
    ID,
    "pod webhook configuration reaches the pods that need it",
    "error",
    order=35,
    needs_feature=True,
    codes={
        "no-pod-rule": ("error", "the pod webhook has no rule for CREATE of v1 pods"),
        "failure-ignore": ("warning", "the pod webhook's failurePolicy is Ignore: misses are silent"),
        "match-condition-sidecar": ("warning", "a matchCondition names the sidecar-injection annotation"),
        "namespace-excluded": ("error", "a namespace with KernelCaches or opted-in pods outside the namespaceSelector"),
        "pod-excluded": ("error", "an opted-in pod the objectSelector or a matchCondition keeps from the webhook"),
    },
    reads=(
        CheckRead(readplan.WEBHOOK),
        CheckRead(readplan.NAMESPACES, optional=True, note="namespaceSelector not compared with namespaces"),
        CheckRead(readplan.ISVC_PODS, optional=True, note="opted-in pods not checked"),
        CheckRead(readplan.KERNEL_CACHES, optional=True, note="namespaces of KernelCaches not checked"),
    ),
)
def run(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    config = next((w for w in snapshot.webhooks if w.meta.name == c.WEBHOOK_CONFIGURATION), None)
    entry = next((w for w in config.webhooks if w.name == c.WEBHOOK_NAME), None) if config else None
    if entry is None:
        raise NotApplicable(f"webhook {c.WEBHOOK_NAME} is not installed (see check control-plane)")
    if not a.rule_covers_pod_create(entry):
        yield finding(
            "error",
            WEBHOOK_REF,
            f"webhook {c.WEBHOOK_NAME} has no rule for CREATE of v1 pods: the API server never calls it, so "
            'no pod gets a kernel cache or the capture sidecar (KServe installs apiGroups "", apiVersions '
            "v1, operations CREATE, resources pods)",
            hint=SHOW,
            code="no-pod-rule",
        )
    if entry.failure_policy == "Ignore":
        yield finding(
            "warning",
            WEBHOOK_REF,
            f"webhook {c.WEBHOOK_NAME} has failurePolicy Ignore: while it cannot be reached, pods are "
            "created without their kernel cache or capture sidecar and nothing records it (KServe installs "
            "Fail)",
            hint=SHOW,
            evidence=("failurePolicy: Ignore",),
            code="failure-ignore",
        )
    for name, expr in entry.match_conditions:
        if c.ANNOTATION_SIDECAR_INJECTION in expr:
            yield finding(
                "warning",
                WEBHOOK_REF,
                f"matchCondition {name} names {c.ANNOTATION_SIDECAR_INJECTION}: pods that opt out of the "
                "capture sidecar would also skip the kernel cache (KServe's own manifest test forbids this)",
                hint=SHOW,
                evidence=(f"{name}: {expr}",),
                code="match-condition-sidecar",
            )
    yield from _namespaces(snapshot, entry)
    yield from _pods(snapshot, entry)


def _opted_in(snapshot: ClusterSnapshot) -> list[o.Pod]:
    return [
        p
        for p in snapshot.pods_labelled(None, c.LABEL_ISVC)
        if p.meta.annotations.get(c.ANNOTATION_SUPPORTED) == "true"
    ]


def _namespaces(snapshot: ClusterSnapshot, entry: o.WebhookEntry) -> Iterator[Finding]:
    if not read_ok(snapshot, readplan.NAMESPACES) or not snapshot.namespaces:
        return
    needs: dict[str, list[str]] = {}
    if read_ok(snapshot, readplan.KERNEL_CACHES):
        for kc in snapshot.kernel_caches:
            needs.setdefault(kc.namespace, []).append(f"KernelCache {kc.name}")
    if read_ok(snapshot, readplan.ISVC_PODS):
        for pod in _opted_in(snapshot):
            needs.setdefault(pod.namespace, []).append(f"pod {pod.name}")
    labels = {n.meta.name: n.meta.labels for n in snapshot.namespaces}
    selector = describe_label_selector(entry.namespace_selector)
    for ns, what in sorted(needs.items()):
        if ns not in labels or label_selector_matches(entry.namespace_selector, labels[ns]):
            continue
        shown = {k: v for k, v in labels[ns].items() if k != "kubernetes.io/metadata.name"}
        fix = next(
            (
                req.key
                for req in (entry.namespace_selector.match_expressions if entry.namespace_selector else ())
                if req.operator == "DoesNotExist" and req.key in labels[ns]
            ),
            None,
        )
        hint = kubectl("label namespace {ns} {key}-", ns=Namespace(ns), key=Selector.has(fix)) if fix else SHOW
        yield finding(
            "error",
            ObjectRef("Namespace", ns),
            f"namespace {ns} does not match the pod webhook's namespaceSelector {selector}: its pods are "
            f"never sent to the webhook, so they are never cached or captured ({join_names(what, 5)})",
            hint=hint,
            evidence=tuple(f"label {k}={v}" for k, v in sorted(shown.items())),
            code="namespace-excluded",
        )


def _pods(snapshot: ClusterSnapshot, entry: o.WebhookEntry) -> Iterator[Finding]:
    if not read_ok(snapshot, readplan.ISVC_PODS):
        return
    for pod in _opted_in(snapshot):
        ref = ObjectRef("Pod", pod.name, pod.namespace)
        if not label_selector_matches(entry.object_selector, pod.meta.labels):
            yield finding(
                "error",
                ref,
                f"pod {pod.namespace}/{pod.name} opts in to the kernel cache but its labels do not match the "
                f"webhook's objectSelector {describe_label_selector(entry.object_selector)}: it is never "
                "sent to the webhook",
                hint=SHOW,
                code="pod-excluded",
                cause=f"opted-in pods outside the objectSelector {describe_label_selector(entry.object_selector)}",
                lister=kubectl("get pods -A -l serving.kserve.io/inferenceservice"),
            )
            continue
        for name, expr in entry.match_conditions:
            if a.match_condition(expr, pod) is False:
                yield finding(
                    "error",
                    ref,
                    f"pod {pod.namespace}/{pod.name} opts in to the kernel cache but matchCondition {name} "
                    f"({expr}) is false for it: it is never sent to the webhook",
                    hint=SHOW,
                    code="pod-excluded",
                    cause=f"opted-in pods for which matchCondition {name} is false",
                    lister=kubectl("get pods -A -l serving.kserve.io/inferenceservice"),
                )
                break
