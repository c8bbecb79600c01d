"""The identities a capture in progress reports and pushes with (`kernelcache/capture_identity.py`).

For every capture that is not terminal and whose producer pod exists, KServe's controller makes in the
capture's namespace the `kserve-kernelcache-token-requester` RoleBinding, the reporter ServiceAccount,
Role, RoleBinding and Secret (`kernel-cache-reporter-<capture>-<hash>`), and with
`registry.auth.type: serviceAccountToken` the pusher ServiceAccount and RoleBinding
(`kernel-cache-pusher-<capture>-<hash>`) and the registry access Secret the pod names (`mcv-registry-*`).

* a piece missing (warning): the mcv sidecar has no credential to report the capture's progress or to push
  its artifact, and the capture's status says nothing about it (a capture stuck in Pushing is the usual
  sign). Right after the pod starts this is brief; the finding names the piece and the controller's log.
* a piece that is not KServe's (error): another owner, another roleRef or a token requester binding without
  KServe's label: KServe's controller fails on it with the error quoted, every pass.

The reporter, pusher and registry objects are listed by KServe's labels, so one of that name without the
label is reported as missing (KServe then fails with "reserved ... is not managed by kernelcache"). Secrets
are listed by metadata only (the API server sends no data) and keep names, labels and owners only: their
annotations are dropped on receipt (`kubectl apply`'s copy of the object holds the values).
"""

from __future__ import annotations

from collections.abc import Iterator

from ..kernelcache import constants as c
from ..kernelcache.capture_identity import Identities, Piece, for_capture
from ..snapshot import plan as readplan
from ..snapshot.model import ClusterSnapshot
from ..suggest import Namespace, kubectl
from .common import facts, observed, read_ok
from .model import CheckRead, Finding, NotApplicable, ObjectRef, finding_of
from .registry import check

ID = "capture-identity"
finding = finding_of(ID)
CONTROLLER_LOG = kubectl(
    "-n {ns} logs deployment/kserve-localmodel-controller-manager", ns=Namespace(c.KSERVE_NAMESPACE)
)
SECRETS_NOTE = "the reporter and registry access Secrets are not checked"
SECRETS = (readplan.REPORTER_SECRETS, readplan.REGISTRY_SECRETS)
# the lists of a capture's identity (the capture check reads them too, to say why a capture is stuck in Pushing)
IDENTITY_LISTS = (
    readplan.TOKEN_REQUESTER_BINDINGS,
    readplan.REPORTER_SERVICE_ACCOUNTS,
    readplan.REPORTER_ROLES,
    readplan.REPORTER_ROLE_BINDINGS,
    readplan.REPORTER_SECRETS,
    readplan.PUSHER_SERVICE_ACCOUNTS,
    readplan.PUSHER_ROLE_BINDINGS,
    readplan.REGISTRY_SECRETS,
)


@check(
    ID,
    "captures in progress have the identities their sidecar reports and pushes with",
    "error",
    order=131,
    needs_feature=True,
    codes={
        "missing": (
            "warning",
            "a capture in progress lacks an identity KServe makes for it (token requester "
            "binding, reporter, pusher, registry access Secret): its sidecar cannot report or "
            "push",
        ),
        "conflict": (
            "error",
            "an identity object of a capture is not KServe's (another owner or roleRef, no "
            "managed label): KServe's controller fails on it",
        ),
    },
    reads=(
        CheckRead(readplan.CAPTURES),
        CheckRead(readplan.ISVC_PODS),
        CheckRead(readplan.CONFIGMAP),
        *(CheckRead(s, optional=True, note=SECRETS_NOTE) if s in SECRETS else CheckRead(s) for s in IDENTITY_LISTS),
    ),
)
def run(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    config = facts(snapshot).config
    found = [(cap, ids) for cap in snapshot.captures if (ids := for_capture(snapshot, cap, config)) is not None]
    if not found:
        raise NotApplicable("no capture in progress with its producer pod")
    for cap, ids in found:
        pieces = trusted(snapshot, ids)
        if not pieces:
            continue
        conflicts = [p for p in pieces if not p.absent]
        first = (conflicts or pieces)[0]
        more = len(pieces) - 1
        effect = "cannot push the artifact" if first.registry else "cannot report the capture's progress"
        yield finding(
            "error" if conflicts else "warning",
            ObjectRef(c.KIND_CAPTURE, cap.name, cap.namespace),
            f"capture {ids.capture} ({cap.phase or 'Pending'}): {_short(first)}: "
            f"the mcv sidecar of pod {ids.pod} {effect}" + (f" ({more} more below)" if more else ""),
            hint=CONTROLLER_LOG,
            evidence=tuple(_evidence(p) for p in pieces),
            code="conflict" if conflicts else "missing",
        )


def _short(p: Piece) -> str:
    """The piece in a headline: in the capture's namespace, what it is for left to the evidence (but for the
    pod, whose piece is one annotation)."""
    return f"{p.kind} {p.name} {p.role} {p.problem}" if p.kind == "Pod" else f"{p.kind} {p.name} {p.problem}"


def _evidence(p: Piece) -> str:
    return (
        f"{p.kind} {p.namespace}/{p.name}, {p.role}, {p.problem}"
        + (f": {p.detail}" if p.detail else "")
        + (f"; KServe's error: {p.kserve_error}" if p.kserve_error and not p.absent else "")
    )


def _observed(snapshot: ClusterSnapshot, p: Piece) -> bool:
    """Whether the absence or shape of a piece can be trusted (its list was read; from plain files, the
    files hold objects of that kind)."""
    if p.kind == "Pod":
        return True
    spec = _SPECS[(p.kind, p.registry, p.name == c.TOKEN_REQUESTER)]
    if p.kind == "Secret" and not read_ok(snapshot, spec):
        return False
    held = {
        "ServiceAccount": snapshot.service_accounts,
        "Role": snapshot.roles,
        "RoleBinding": snapshot.role_bindings,
        "Secret": snapshot.secrets,
    }[p.kind]
    return observed(snapshot, spec, bool(held))


_SPECS = {
    ("RoleBinding", False, True): readplan.TOKEN_REQUESTER_BINDINGS,
    ("ServiceAccount", False, False): readplan.REPORTER_SERVICE_ACCOUNTS,
    ("Role", False, False): readplan.REPORTER_ROLES,
    ("RoleBinding", False, False): readplan.REPORTER_ROLE_BINDINGS,
    ("Secret", False, False): readplan.REPORTER_SECRETS,
    ("ServiceAccount", True, False): readplan.PUSHER_SERVICE_ACCOUNTS,
    ("RoleBinding", True, False): readplan.PUSHER_ROLE_BINDINGS,
    ("Secret", True, False): readplan.REGISTRY_SECRETS,
}


def trusted(snapshot: ClusterSnapshot, ids: Identities | None) -> list[Piece]:
    """The pieces that are wrong, of those whose lists were read."""
    return [p for p in ids.missing if _observed(snapshot, p)] if ids is not None else []


def identities_text(snapshot: ClusterSnapshot, ids: Identities | None) -> str:
    """For another finding (a capture stuck in Pushing): the first wrong piece, short (it is in the capture's
    namespace; this check's finding says what it is for), or ""."""
    pieces = trusted(snapshot, ids)
    return _short(pieces[0]) if pieces else ""
