"""Serving pods that got a KernelCache but cannot start with it.

A pod the webhook mounted a cache into pulls the artifact itself, as the image volume `kernel-cache-source`
(KServe adds no node affinity, so it may run where the artifact was never prepared), and the init
container `kernel-cache-linker` links it into the runtime's cache path. The webhook adds no
`imagePullSecrets`: the pod pulls with the node's credentials, its own `imagePullSecrets` and those of its
ServiceAccount, which are not the prefetcher's (with `registry.auth.type: serviceAccountToken` only the
prefetcher gets a registry token).

* a pod (labelled `serving.kserve.io/inferenceservice`) with the `kernel-cache-source` volume whose
  containers wait in ErrImagePull, ImagePullBackOff, ErrImageNeverPull or InvalidImageName, or in
  CreateContainerConfigError/CreateContainerError, with a message naming the artifact (error; without a
  message that names an image, a pull failure of such a pod is a warning: it may be the artifact);
* a `kernel-cache-linker` that failed (error): "source directory does not exist" means the artifact lacks
  the KernelCache's ociPath; otherwise its exit code and message.
"""

from __future__ import annotations

from collections.abc import Iterator

from .. import objects as o
from ..kernelcache import constants as c
from ..kernelcache.config import AUTH_SA_TOKEN
from ..snapshot import plan as readplan
from ..snapshot.model import ClusterSnapshot
from ..suggest import Name, Namespace, kubectl
from .common import facts, pod_logs
from .model import CheckRead, Finding, NotApplicable, ObjectRef, finding_of
from .registry import check

ID = "consumer-pull"
finding = finding_of(ID)
PULL_REASONS = (*c.IMAGE_PULL_REASONS, "CreateContainerConfigError", "CreateContainerError")
MISSING_SOURCE = "source directory does not exist"


@check(
    ID,
    "serving pods pull the KernelCache artifact they were given",
    "error",
    order=140,
    needs_feature=True,
    codes={
        "pull-failed": (
            "error",
            "a serving pod cannot pull its kernel-cache-source image volume (warning when "
            "the message does not name the artifact)",
        ),
        "linker-failed": ("error", "the kernel-cache-linker init container fails"),
    },
    reads=(CheckRead(readplan.ISVC_PODS),),
)
def run(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    consumers = [
        (p, v) for p in snapshot.pods_labelled(None, c.LABEL_ISVC) for v in p.volumes if v.name == c.SOURCE_VOLUME
    ]
    if not consumers:
        raise NotApplicable("no serving pod has a KernelCache mounted")
    token_auth = facts(snapshot).config.registry.auth.type == AUTH_SA_TOKEN
    for pod, volume in consumers:
        found = _pull(pod, volume.image_reference, token_auth) or _linker(pod)
        if found is not None:
            yield found


def _pull(pod: o.Pod, artifact: str, token_auth: bool) -> Finding | None:
    repository = artifact.partition("@")[0]
    for cs in pod.containers:
        if cs.waiting_reason not in PULL_REASONS:
            continue
        names_artifact = bool(repository) and repository in cs.waiting_message
        names_other = cs.image and cs.image in cs.waiting_message and not names_artifact
        if cs.waiting_reason not in c.IMAGE_PULL_REASONS and not names_artifact:
            continue
        if names_other:
            continue
        text = f"{cs.waiting_reason}: {cs.waiting_message}" if cs.waiting_message else cs.waiting_reason
        creds = (
            "its own imagePullSecrets: " + ", ".join(pod.image_pull_secrets)
            if pod.image_pull_secrets
            else "no imagePullSecrets"
        )
        why = (
            " With registry.auth.type serviceAccountToken only the prefetcher gets a registry token."
            if token_auth
            else ""
        )
        lead = "cannot pull" if names_artifact else "cannot pull an image, maybe"
        return finding(
            "error" if names_artifact else "warning",
            ObjectRef("Pod", pod.name, pod.namespace),
            f"pod {pod.namespace}/{pod.name} {lead} the KernelCache artifact {artifact} (image volume "
            f"{c.SOURCE_VOLUME}): container {cs.name} is waiting: {text}. The webhook adds no pull "
            f"credentials: the node's and the pod's own must reach the registry ({creds}).{why}",
            hint=kubectl("-n {ns} describe pod {pod}", ns=Namespace(pod.namespace), pod=Name("pod", pod.name)),
            evidence=(f"{cs.name}: {cs.waiting_reason}", f"artifact: {artifact}"),
            code="pull-failed",
            cause=f"serving pods cannot pull {artifact}: {cs.waiting_reason}",
            lister=kubectl("-n {ns} get pods -l serving.kserve.io/inferenceservice", ns=Namespace(pod.namespace)),
        )
    return None


def _linker(pod: o.Pod) -> Finding | None:
    cs = next((x for x in pod.containers if x.name == c.LINKER_CONTAINER), None)
    if cs is None:
        return None
    failed = cs.exit_code not in (None, 0) or cs.waiting_reason == "CrashLoopBackOff"
    if not failed:
        return None
    detail = ": ".join(x for x in (cs.terminated_reason, cs.terminated_message) if x)
    if MISSING_SOURCE in cs.terminated_message:
        what = (
            "the artifact does not contain the KernelCache's ociPath (the linker found no source directory): "
            "the cache paths of the KernelCache do not match what was captured"
        )
    else:
        what = f"exit code {cs.exit_code}" + (f" ({detail})" if detail else "")
    return finding(
        "error",
        ObjectRef("Pod", pod.name, pod.namespace),
        f"pod {pod.namespace}/{pod.name}: init container {c.LINKER_CONTAINER} failed, so the runtime never "
        f"starts: {what}",
        hint=pod_logs(pod.namespace, pod.name, c.LINKER_CONTAINER),
        evidence=tuple(x for x in (f"restarts: {cs.restarts}", detail) if x),
        code="linker-failed",
    )
