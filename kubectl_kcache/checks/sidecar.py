"""Pods the pod webhook would deny in its capture sidecar step, found on their ReplicaSets before one is
created.

After the cache step, in the same admission, KServe's pod webhook injects the MCV capture sidecar into
every InferenceService pod of a ReplicaSet (a `pod-template-hash` label) whose revision has no terminal
capture, unless injection is off (`kernelcache.defaultSidecarInjection: false`, or the pod annotation
`serving.kserve.io/kernelcache-sidecar-injection: "false"`). Any error there denies the pod with HTTP 500,
also when a KernelCache matched and was mounted, and whatever the image (a `:latest` pod is denied the same
way): the ReplicaSet then loops on FailedCreate. The pod template of each ReplicaSet with replicas is what
the webhook sees, so this check replays the whole admission (the same decision as `why-not-cached`) for it:

* `capture-paths` (error): the capture's cachePaths, or the default vLLM path, do not resolve (a missing
  container, `VLLM_CACHE_ROOT` from valueFrom or empty, an unsupported OCI path);
* `readiness-probe` (error): the runtime container has no HTTP readinessProbe, its port is 0, empty or an
  unknown named port, or its host is not localhost or a loopback address;
* `capture-target` (error): no `registry.endpoint` in the configuration and no `targetImage` on the capture;
* `capture-mounts` (error): a capture path that is invalid, mounted read-only, or under another mount, or a
  volume named like the sidecar's (`mcv-cache-<i>`, `mcv-reporter-access`).

A running pod is not affected (admission ran once); the next pod of the ReplicaSet (a restart, scale-up or
rollout) is refused. Fix the pod template, or opt the InferenceService out of capture with the annotation.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..kernelcache import admission as a
from ..kernelcache import constants as c
from ..snapshot import plan as readplan
from ..snapshot.model import ClusterSnapshot
from ..suggest import Json, Name, Namespace, kubectl
from .common import read_ok
from .model import CheckRead, Finding, ObjectRef, finding_of
from .registry import check

ID = "capture-sidecar"
finding = finding_of(ID)
LISTER = kubectl("get replicasets -A -l serving.kserve.io/inferenceservice")


@check(
    ID,
    "the pod webhook's capture sidecar step admits the InferenceService pods",
    "error",
    order=145,
    needs_feature=True,
    codes={
        a.CAPTURE_PATHS: ("error", "the capture paths do not resolve against the pod template"),
        a.READINESS_PROBE: ("error", "no usable HTTP readinessProbe on loopback for the capture sidecar"),
        a.CAPTURE_TARGET: ("error", "no registry.endpoint and no capture targetImage"),
        a.CAPTURE_MOUNTS: ("error", "a capture path or sidecar volume collides with the pod template's"),
    },
    reads=(
        CheckRead(readplan.ISVC_REPLICASETS),
        CheckRead(readplan.CONFIGMAP),
        CheckRead(readplan.KERNEL_CACHE_NODES),
        CheckRead(readplan.KERNEL_CACHES),
        CheckRead(
            readplan.CAPTURES, optional=True, note="ReplicaSets are not replayed (a terminal capture skips the step)"
        ),
        CheckRead(readplan.WEBHOOK, optional=True, note="the webhook's selectors are not compared"),
        CheckRead(readplan.NAMESPACES, optional=True, note="the namespaceSelector is not compared"),
    ),
)
def run(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    if not read_ok(snapshot, readplan.CAPTURES):
        return
    webhook_known = read_ok(snapshot, readplan.WEBHOOK)
    for rs in sorted(snapshot.replica_sets, key=lambda x: (x.namespace, x.name)):
        if rs.replicas <= 0:
            continue  # an old revision: it creates no pods
        pod = rs.template_pod()
        if c.LABEL_ISVC not in pod.meta.labels:
            continue
        ns = rs.namespace
        adm = a.decide(a.snapshot_inputs(snapshot, ns, pod, webhook_known=webhook_known, captures_known=True))
        gate = adm.blocked_by
        if gate is None or gate.id not in a.SIDECAR_GATES:
            continue
        cached = f", after mounting KernelCache {adm.winner.key}" if adm.injection is not None and adm.winner else ""
        isvc = pod.meta.labels.get(c.LABEL_ISVC, "")
        yield finding(
            "error",
            ObjectRef("ReplicaSet", rs.name, ns),
            f"ReplicaSet {ns}/{rs.name} ({rs.replicas} replica(s), InferenceService {isvc}): KServe's pod "
            f"webhook would deny its next pod in the capture sidecar step{cached}, with HTTP 500 "
            f'"{gate.message}"; fix the pod template, or opt the InferenceService out of capture',
            hint=kubectl(
                "-n {ns} patch inferenceservice {isvc} --type=merge -p {patch}",
                ns=Namespace(ns),
                isvc=Name("inferenceservice", isvc),
                patch=Json({"spec": {"predictor": {"annotations": {c.ANNOTATION_SIDECAR_INJECTION: "false"}}}}),
            ),
            evidence=(f"{a.denial_message(adm)}", *(f"{g.id}: {g.detail}" for g in adm.gates if g.id == a.SIDECAR)),
            code=gate.id,
            cause=f"the capture sidecar step fails: {gate.message}",
            lister=LISTER,
        )
