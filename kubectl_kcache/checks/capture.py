"""KernelCacheCaptures and the KernelCaches KServe makes from them.

* A complete capture (KServe's `isCaptureComplete`) without a KernelCache: KServe's node-group selection
  is re-run on the capture's `status.activeSession` (the requested group, else the producer node's
  groups, else `defaultNodeGroup`). When it fails (InvalidRequestedNodeGroup, ProducerNodePending,
  AmbiguousNodeGroup, NoMatchingNodeGroup, InvalidDefaultNodeGroup) no KernelCache is created: error with
  KServe's reason and exact message, the hint runs `why-group`. When it succeeds but the KernelCache with
  KServe's generated name does not exist (or is not linked): warning, KServe's controller is not doing
  its work. A KernelCache under that name with another artifact: error (KServe refuses to link it).
* Signing: phase Complete with `status.signing.state` Failed (error: no KernelCache), Complete without
  `status.signing` (warning: not eligible yet), or otherwise not eligible (warning, with why). A capture
  signed under another mode than `artifactSecurity.mode` (`disabled` is recorded as `none`) is signed again
  on KServe's next pass over its InferenceService (warning); in cert mode a capture without
  `spec.signing.profileRef`, made before cert was turned on, then fails with SigningProfileNotFound (error).
* Failed captures (warning) with the Ready condition's reason and message.
* Stuck: a non-terminal phase (Pending, WaitingForWorkload, Capturing, Pushing) for more than an hour
  (warning). The age is taken from the Ready condition's lastTransitionTime (when the capture last
  changed between done and not done), else from metadata.creationTimestamp, against the snapshot's time.
* The requested group (pod annotation `serving.kserve.io/kernelcache-nodegroup`) exists but does not
  contain the producer's node (warning): KServe accepts it silently and prepares the cache on nodes other
  than the one it was compiled on.
* A stale reporter: `runtimeResult` names another session or pod than `activeSession` (warning): the
  capture is not complete until the current producer reports.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

from .. import objects as o
from ..apivalidation import label_value_errors
from ..kernelcache import constants as c
from ..kernelcache.capture import LINK, LINKED, MISMATCH, NOT_ELIGIBLE, SHADOWED, TERMINATING, artifacts_equal
from ..kernelcache.capture_identity import for_capture
from ..kernelcache.config import AUTH_SA_TOKEN
from ..kernelcache.names import reporter_name
from ..kernelcache.security import next_signing, signing_advice
from ..kernelcache.selection import requested_group_outside
from ..snapshot import plan as readplan
from ..snapshot.model import ClusterSnapshot
from ..suggest import Name, Namespace, Selector, kubectl
from .capture_identity import CONTROLLER_LOG, IDENTITY_LISTS, identities_text
from .common import RECONCILE, condition_text, facts, parse_time, pod_logs, rfc3339
from .model import CheckRead, Finding, NotApplicable, ObjectRef, finding_of
from .registry import check

ID = "capture"
finding = finding_of(ID)
STUCK_AFTER = dt.timedelta(hours=1)


IDENTITY_NOTE = "a capture stuck in Pushing is not told which piece of its identity is wrong"


@check(
    ID,
    "complete captures become KernelCaches",
    "error",
    order=130,
    needs_feature=True,
    codes={
        "stale-reporter": ("warning", "a runtime result from another session or pod than the active session"),
        "requested-outside": ("warning", "the requested group does not contain the producer's node"),
        "failed": ("warning", "a Failed capture"),
        "stuck": ("warning", "a capture in a non-terminal phase for over an hour"),
        "unsigned": ("warning", "a Complete capture without status.signing (not eligible yet)"),
        "signing-failed": ("error", "a Complete capture whose artifact signing failed: no KernelCache"),
        "signing-mode-changed": (
            "warning",
            "a Complete capture signed under another artifactSecurity.mode: KServe signs "
            "it again (error when that fails at once: cert mode, no spec.signing)",
        ),
        "not-eligible": ("warning", "a Complete capture KServe's isCaptureComplete rejects"),
        "shadowed": (
            "warning",
            "another capture maps to the same KernelCache name: only one is linked (info when "
            "their artifacts are equal)",
        ),
        "artifact-mismatch": ("error", "the KernelCache under the generated name has another artifact"),
        "not-linked": ("warning", "the KernelCache exists but the capture's kernelCacheRef does not name it"),
        "kernel-cache-terminating": (
            "warning",
            "the capture's KernelCache is terminating: KServe neither links nor "
            "reconciles it until it is gone, then re-creates it",
        ),
        "selection-fails": ("error", "no KernelCache: KServe's node-group selection fails (its Warning event)"),
        "kernel-cache-missing": ("warning", "no KernelCache although selection succeeds (KServe not running?)"),
    },
    reads=(
        CheckRead(readplan.CAPTURES),
        CheckRead(readplan.KERNEL_CACHES),
        CheckRead(readplan.NODE_GROUPS),
        CheckRead(readplan.NODES),
        # a capture stuck in Pushing names the first wrong piece of its identity (the capture-identity check's)
        *(CheckRead(spec, optional=True, note=IDENTITY_NOTE) for spec in (readplan.ISVC_PODS, *IDENTITY_LISTS)),
    ),
)
def run(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    if not snapshot.captures:
        raise NotApplicable("no KernelCacheCapture exists")
    for cap in snapshot.captures:
        yield from _capture(snapshot, cap)


def _capture(snapshot: ClusterSnapshot, cap: o.Capture) -> Iterator[Finding]:
    f = facts(snapshot)
    key = f"{cap.namespace}/{cap.name}"
    ref = ObjectRef(c.KIND_CAPTURE, cap.name, cap.namespace)
    why_group = kubectl(
        "kcache why-group --capture {capture} -n {ns}",
        capture=Name("kernelcachecapture", cap.name),
        ns=Namespace(cap.namespace),
    )
    describe = kubectl(
        "-n {ns} describe kernelcachecapture {capture}",
        ns=Namespace(cap.namespace),
        capture=Name("kernelcachecapture", cap.name),
    )
    ready = o.find_condition(cap.conditions, "Ready")
    session = cap.active_session
    result = cap.runtime_result

    stale = False
    if session is not None and cap.phase != c.PHASE_FAILED:
        reported = (result.get("captureSessionID", ""), result.get("sourcePodName", ""))
        stale = any(reported) and reported != (session.id, session.pod_name)
        if stale:
            yield finding(
                "warning",
                ref,
                f"capture {key} has a result from a stale reporter: runtimeResult names session "
                f"{reported[0] or '(none)'} / pod {reported[1] or '(none)'}, the active session is "
                f"{session.id or '(none)'} / pod {session.pod_name or '(none)'}; it is not complete until "
                "the current producer reports",
                hint=describe,
                code="stale-reporter",
            )
        outside = requested_group_outside(session, snapshot.group_by_name, snapshot.node_by_name)
        if outside is not None:
            lacks = ", ".join(f"{k}={v}" for k, v in outside.wanted.items())
            yield finding(
                "warning",
                ref,
                f"capture {key} requests group {outside.group} ({c.ANNOTATION_NODE_GROUP}), which does "
                f"not contain the producer's node {outside.node} (it lacks {lacks}): KServe accepts it "
                f"silently and prepares the cache on {outside.group}'s nodes, not on the kind of node it "
                "was compiled on",
                group=outside.group,
                hint=why_group,
                code="requested-outside",
            )

    if cap.phase == c.PHASE_FAILED:
        yield finding(
            "warning",
            ref,
            f"capture {key} Failed: {condition_text(ready) or 'no Ready condition'}",
            hint=describe,
            evidence=tuple(f"runtimeResult.{k}: {result[k]}" for k in ("reason", "message") if result.get(k)),
            code="failed",
        )
        return
    if cap.phase == c.PHASE_COMPLETE:
        yield from _complete(snapshot, cap, key, ref, ready, why_group, describe, stale)
        return
    if cap.phase in c.CAPTURE_TERMINAL_PHASES:
        return
    since = parse_time(ready.last_transition if ready else "") or parse_time(cap.meta.created)
    if since is None or f.now - since <= STUCK_AFTER:
        return
    phase = cap.phase or "Pending"
    pod = session.pod_name if session else ""
    if session is None:
        what = "no producer pod has claimed it"
        hint = (
            kubectl(
                "-n {ns} get pods -l {selector}",
                ns=Namespace(cap.namespace),
                selector=Selector.of({c.LABEL_ISVC: cap.source_name}),
            )
            if not label_value_errors(cap.source_name)
            else describe
        )
    elif phase == "WaitingForWorkload":
        what = (
            f"the producer pod {pod} is not ready (the capture gives up after mcvCaptureReadinessTimeoutSeconds "
            f"{f.config.mcv_capture_readiness_timeout_seconds}s)"
        )
        hint = kubectl("-n {ns} describe pod {pod}", ns=Namespace(cap.namespace), pod=Name("pod", pod))
    elif phase == "Pushing" and (missing := identities_text(snapshot, for_capture(snapshot, cap, f.config))):
        what = f"a piece of the capture's identity is wrong: {missing} (capture-identity names every piece)"
        hint = CONTROLLER_LOG
    elif phase == "Pushing":
        reporter = reporter_name(cap.name)
        token = f.config.registry.auth.type == AUTH_SA_TOKEN
        what = (
            "the capture sidecar is pushing the artifact; the capture status carries no cause of a stalled push: "
            f"check the reporter identity (ServiceAccount, Role, RoleBinding and Secret {reporter}), the "
            f"RoleBinding {c.TOKEN_REQUESTER} in {cap.namespace}"
            + (
                ", the per-capture pusher ServiceAccount and RoleBinding (kernel-cache-pusher-*, the "
                "registry.auth.pushRoleRef) and the registry access Secret (mcv-registry-*)"
                if token
                else ""
            )
            + ", and the mcv sidecar's log, which also gets the capture status webhook's denials"
        )
        hint = pod_logs(cap.namespace, pod, "mcv")
    else:
        what = f"the producer pod {pod} has not reported progress" if pod else "no session progress"
        hint = pod_logs(cap.namespace, pod, "mcv") if pod else describe
    # a condition whose reason is the phase the headline names adds its message, unless that is KServe's default
    if ready is not None and ready.reason == phase:
        detail = "" if ready.message == c.CAPTURE_PHASE_MESSAGES.get(phase) else ready.message
    else:
        detail = condition_text(ready)
    yield finding(
        "warning",
        ref,
        f"capture {key} is stuck in {phase} since {rfc3339(since)}, over an hour: {what}"
        f"{f'. Ready condition: {detail}' if detail else ''}",
        hint=hint,
        evidence=tuple(f"runtimeResult.{k}: {result[k]}" for k in ("state", "message") if result.get(k)),
        code="stuck",
    )


def _complete(
    snapshot: ClusterSnapshot,
    cap: o.Capture,
    key: str,
    ref: ObjectRef,
    ready: o.Condition | None,
    why_group: str,
    describe: str,
    stale: bool,
) -> Iterator[Finding]:
    signing = cap.signing
    config_mode = facts(snapshot).config.artifact_security.mode
    again = next_signing(
        config_mode, signing.mode if signing else None, signing.state if signing else None, cap.signing_profile
    )
    if signing is not None and again is not None and signing.mode != again.mode:
        fails = (
            f"; that pass fails at once: {again.fails[0]}: {again.fails[1]} (KServe sets spec.signing only when "
            "it creates a capture in cert mode), and the capture is no longer eligible for a KernelCache"
            if again.fails
            else ""
        )
        yield finding(
            "error" if again.fails else "warning",
            ref,
            f"capture {key} was signed under mode {signing.mode or '(none)'} (state "
            f"{signing.state or '(none)'}), artifactSecurity.mode is now {config_mode}: KServe signs it "
            f"again under mode {again.mode} on its next pass over InferenceService {cap.source_name} (it "
            "does not watch the ConfigMap: a change to the InferenceService, the capture or its pods "
            f"starts it){fails}",
            hint=describe,
            evidence=(f"signing: mode {signing.mode}, state {signing.state}", f"artifactSecurity.mode: {config_mode}"),
            code="signing-mode-changed",
        )
    if signing is None:
        yield finding(
            "warning",
            ref,
            f"capture {key} is Complete without status.signing (signing not reconciled yet, or a controller "
            "error): it is not eligible for a KernelCache",
            hint=describe,
            code="unsigned",
        )
        return
    if signing.state == c.SIGNING_FAILED:
        detail = ": ".join(x for x in (signing.reason, signing.message) if x) or condition_text(ready)
        yield finding(
            "error",
            ref,
            f"capture {key} is Complete but artifact signing failed ({detail or 'no reason given'}): KServe "
            "creates no KernelCache from it",
            hint=describe,
            evidence=tuple(
                x for x in (f"signing: mode {signing.mode}, state {signing.state}", signing_advice(signing.reason)) if x
            ),
            code="signing-failed",
        )
        return
    cc = facts(snapshot).capture_caches[(cap.namespace, cap.name)]
    outcome, name = cc.outcome, cc.outcome.kernel_cache
    kc_text = f"{cap.namespace}/{name}"
    if outcome.outcome == NOT_ELIGIBLE:
        if not stale:  # a stale reporter is said above
            yield finding(
                "warning",
                ref,
                f"capture {key} is Complete but not eligible for a KernelCache: {outcome.reason}",
                hint=describe,
                code="not-eligible",
            )
        return
    if outcome.outcome == LINKED:
        return
    if outcome.outcome == SHADOWED:
        owner_kc = snapshot.kc_by_key.get(kc_text)
        same = owner_kc is not None and artifacts_equal(cap.artifact, owner_kc.artifact)
        yield finding(
            "info" if same else "warning",
            ref,
            f"capture {key} maps to the same KernelCache name {kc_text} as capture {outcome.owner} (their "
            "names share the first 38 characters and their artifacts one digest): KServe links only one "
            f"capture per KernelCache name (the first it lists: not guaranteed which)"
            + (
                "; their artifacts are equal, so nothing is lost"
                if same
                else "; this capture's artifact differs, so no KernelCache is ever made from it"
            ),
            hint=describe,
            code="shadowed",
        )
        return
    if outcome.outcome == MISMATCH:
        kc = snapshot.kc_by_key[kc_text]
        yield finding(
            "error",
            ref,
            f"{outcome.reason}: KServe refuses to link them and stops that KernelCache's pass (someone made "
            "a KernelCache under the generated name, or the capture's artifact changed)",
            group=kc.node_group or None,
            hint=kubectl(
                "-n {ns} get kernelcache {kc} -o yaml", ns=Namespace(cap.namespace), kc=Name("kernelcache", name)
            ),
            code="artifact-mismatch",
        )
        return
    if outcome.outcome == TERMINATING:
        kc = snapshot.kc_by_key[kc_text]
        finalizers = kc.meta.finalizers
        yield finding(
            "warning",
            ref,
            f"capture {key}: {outcome.reason}",
            group=kc.node_group or None,
            hint=kubectl(
                "-n {ns} get kernelcache {kc} -o jsonpath={{.metadata.finalizers}}",
                ns=Namespace(cap.namespace),
                kc=Name("kernelcache", name),
            ),
            evidence=tuple(f"finalizer {f}" for f in finalizers),
            code="kernel-cache-terminating",
        )
        return
    if outcome.outcome == LINK:
        kc = snapshot.kc_by_key[kc_text]
        was = f"names {outcome.ref_was}" if outcome.ref_was else "is empty"
        yield finding(
            "warning",
            ref,
            f"complete capture {key} is not linked to its KernelCache {kc_text} (status.kernelCacheRef "
            f"{was}): KServe sets it on its next pass over that KernelCache; is KServe's controller "
            "running?",
            group=kc.node_group or None,
            hint=RECONCILE,
            code="not-linked",
        )
        return
    decision = cc.decision
    assert decision is not None  # CREATE carries the decision
    steps = tuple(f"{s.step}: {s.outcome}{f' ({s.detail})' if s.detail else ''}" for s in decision.steps)
    deleted = cap.kernel_cache_ref is not None and not outcome.ref_was
    what = (
        f"its KernelCache {kc_text} was deleted (status.kernelCacheRef still names it): KServe re-creates it at "
        "once, running the node-group selection again"
        if deleted
        else f"complete capture {key} has no KernelCache"
    )
    if not decision.ok:
        yield finding(
            "error",
            ref,
            f"{what}: KServe cannot select a node group ({decision.reason}: {decision.message})",
            hint=why_group,
            evidence=steps,
            code="selection-fails",
        )
        return
    yield finding(
        "warning",
        ref,
        f"{what}: KServe would create {kc_text} for group {decision.group} (source {decision.source}), but "
        "it does not exist; is KServe's controller running?",
        group=decision.group,
        hint=RECONCILE,
        evidence=steps,
        code="kernel-cache-missing",
    )
