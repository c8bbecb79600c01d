"""Artifact verification as the pod webhook applies it to KernelCaches.

With `kernelcache.artifactSecurity.mode` `""` or `none` the webhook uses any KernelCache. Any other mode
makes it use only KernelCaches whose `status.verification` has that same mode, state `Succeeded` and
`verified: true`; the others are skipped, silently (no event, the KernelCache may even be Ready).

* `artifactSecurity.mode: disabled` (error): KServe's config validation accepts it, its controller records
  disabled verification as `{mode: none, state: Skipped}`, and the webhook compares the mode as written, so
  no KernelCache is ever used. Set `mode: none`.
* a KernelCache the webhook skips because of its verification (error): not verified yet (no
  `status.verification`, or state Pending), verified under another mode (e.g. `none` before `cert` was
  turned on), `Succeeded` without `verified: true`, or `Skipped`. Failed verifications that already put
  the KernelCache in `Error/VerificationFailed` are the `cache-status` check's.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..kernelcache import admission as a
from ..kernelcache import constants as c
from ..kernelcache.config import SECURITY_CERT
from ..kernelcache.security import verification_advice
from ..snapshot import plan as readplan
from ..snapshot.model import ClusterSnapshot
from ..suggest import Name, Namespace, kubectl
from .common import EDIT_CONFIG, config_ref, facts
from .model import CheckRead, Finding, ObjectRef, finding_of
from .registry import check

ID = "verification"
finding = finding_of(ID)
MODE_DISABLED = "disabled"


@check(
    ID,
    "artifact verification lets pods use the KernelCaches",
    "error",
    order=125,
    needs_feature=True,
    codes={
        "mode-blocks-all": ("error", "an artifactSecurity mode that passes validation but blocks every cache"),
        "blocks-admission": ("error", "a KernelCache whose verification state keeps the webhook from using it"),
    },
    reads=(
        CheckRead(readplan.CONFIGMAP),
        CheckRead(readplan.KERNEL_CACHES),
    ),
)
def run(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    mode = facts(snapshot).config.artifact_security.mode
    if mode == MODE_DISABLED:
        count = len(snapshot.kernel_caches)
        yield finding(
            "error",
            config_ref(),
            f'kernelcache.artifactSecurity.mode is "{MODE_DISABLED}": KServe accepts it, but its controller '
            'records disabled verification as mode "none" and the pod webhook requires the mode it is '
            f"configured with, so it skips every KernelCache ({count} now): no pod gets a cache. Set mode "
            '"none"',
            hint=EDIT_CONFIG,
            evidence=(f"artifactSecurity.mode: {mode}",),
            code="mode-blocks-all",
        )
        return
    if mode in c.SECURITY_MODES_ALLOWING_ANY:
        return
    for kc in snapshot.kernel_caches:
        v = kc.verification
        if a.verification_allows_use(mode, v):
            continue
        ready = next((x for x in kc.conditions if x.type == "Ready"), None)
        if v is not None and v.state == "Failed" and ready is not None and ready.reason == "VerificationFailed":
            continue  # cache-status reports the Error/VerificationFailed KernelCache
        ref = ObjectRef(c.KIND_CACHE, kc.name, kc.namespace)
        if v is None or v.state in ("", "Pending"):
            why = "is not verified yet" + (f" (state {v.state})" if v is not None and v.state else "")
        elif v.mode != mode:
            why = f'was verified under mode "{v.mode or "(none)"}", not "{mode}"' + (
                " (verification was turned on after it was made)" if mode == SECURITY_CERT else ""
            )
        elif v.state == "Succeeded":
            why = "has state Succeeded but verified is not true"
        else:
            why = f"has verification state {v.state}" + (f" ({v.reason}: {v.message})" if v.reason else "")
        got = "none" if v is None else f"mode {v.mode or '(none)'}, state {v.state or '(none)'}, verified {v.verified}"
        yield finding(
            "error",
            ref,
            f'KernelCache {kc.namespace}/{kc.name} {why}: with artifactSecurity.mode "{mode}" the pod '
            "webhook skips it, so no pod gets it until KServe's controller verifies it",
            group=kc.node_group or None,
            hint=kubectl(
                "-n {ns} get kernelcache {kc} -o jsonpath={{.status.verification}}",
                ns=Namespace(kc.namespace),
                kc=Name("kernelcache", kc.name),
            ),
            evidence=(
                f"status.verification: {got}",
                *((verification_advice(v.reason),) if v is not None and verification_advice(v.reason) else ()),
            ),
            code="blocks-admission",
        )
