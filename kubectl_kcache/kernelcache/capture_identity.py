"""The identities a capture in progress needs in its namespace, as KServe's capture controller makes them
(`capture_controller.go`, `registry_reconciler.go`, `pkg/kernelcache/reporter`, `registryauth`; §5.3).

When the producer pod (an InferenceService pod with the `mcv` sidecar) exists and its capture is not
terminal, KServe's controller ensures, in this order:

1. the RoleBinding `kserve-kernelcache-token-requester` (label `...kernelcache-token-requester: "true"`,
   roleRef ClusterRole `kserve-kernelcache-token-requester`): the controller's right to request tokens;
2. the reporter ServiceAccount, Role and RoleBinding `kernel-cache-reporter-<capture>-<12 hex>` (label
   `...kernelcache-reporter: "true"`, controlled by the capture), then the reporter Secret of that name,
   which the pod's annotation `...kernelcache-reporter-secret` must name: the sidecar's credential for the
   capture's status;
3. with `registry.auth.type: serviceAccountToken`, the pusher ServiceAccount and RoleBinding
   `kernel-cache-pusher-<capture>-<12 hex>` (label `...kernelcache-registry: "true"`, controlled by the
   capture, roleRef `pushRoleRef`) and the registry access Secret the pod's annotation
   `...kernelcache-access-secret` names (`mcv-registry-*`, same label, controlled by the pod): the push's
   credential.

A missing piece leaves the sidecar without a credential: the capture stays where it is (typically
Pushing, whose status carries no cause). They are deleted once the capture is terminal. Only metadata is
read; a Secret's data never is.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING, TypeVar

import msgspec
from msgspec.structs import replace

from ..objects import Capture, Meta, Pod, Role, RoleBinding, Secret, ServiceAccount
from . import constants as c
from .config import AUTH_SA_TOKEN, KernelCacheConfig
from .names import pusher_name, reporter_name

if TYPE_CHECKING:  # kernelcache is below snapshot: the type only
    from ..snapshot.model import ClusterSnapshot

CLUSTER_ROLE = "ClusterRole"
_O = TypeVar("_O", ServiceAccount, Role, RoleBinding, Secret)


class Piece(msgspec.Struct, frozen=True):
    """One identity object the capture needs and what is wrong with it ("" when it is as KServe makes it)."""

    kind: str
    namespace: str
    name: str
    role: str  # what it is for, in words
    problem: str = ""
    kserve_error: str = ""  # KServe's own error text for it, when KServe fails on it (its controller's log)
    registry: bool = False  # one of the serviceAccountToken pieces
    absent: bool = False  # not found (rather than found but not KServe's)
    detail: str = ""  # why it may be so, in words


class Identities(msgspec.Struct, frozen=True):
    capture: str  # namespace/name
    pod: str
    pieces: tuple[Piece, ...]

    @property
    def missing(self) -> tuple[Piece, ...]:
        return tuple(p for p in self.pieces if p.problem)


def needs_identities(capture: Capture, pod: Pod | None) -> bool:
    """KServe ensures them for a capture that is not terminal while its producer pod exists."""
    return capture.phase not in c.CAPTURE_TERMINAL_PHASES and pod is not None and not pod.meta.deleting


def producer_pod(snapshot: ClusterSnapshot, capture: Capture) -> Pod | None:
    """The pod of the capture's active session, when the snapshot holds it."""
    session = capture.active_session
    if session is None or not session.pod_name:
        return None
    return _pod_by_key(snapshot).get((capture.namespace, session.pod_name))


def _pod_by_key(snapshot: ClusterSnapshot) -> dict[tuple[str, str], Pod]:
    """(namespace, name) -> the snapshot's (first) pod of that name, kept while the pods are the same."""

    def index() -> dict[tuple[str, str], Pod]:
        out: dict[tuple[str, str], Pod] = {}
        for p in snapshot.pods:
            out.setdefault((p.namespace, p.name), p)
        return out

    return snapshot.derived("pod-by-key", index, on=("pods",))


def for_capture(snapshot: ClusterSnapshot, capture: Capture, config: KernelCacheConfig) -> Identities | None:
    """The pieces of `capture` from the snapshot's objects; None when KServe keeps none for it (terminal, or no
    producer pod)."""
    pod = producer_pod(snapshot, capture)
    if pod is None or not needs_identities(capture, pod):
        return None
    auth = config.registry.auth
    push = auth.push_role_ref
    return capture_identities(
        capture,
        pod,
        token_auth=auth.type == AUTH_SA_TOKEN,
        push_role=(push.kind, push.name) if push is not None else None,
        service_accounts=snapshot.service_accounts,
        roles=snapshot.roles,
        role_bindings=snapshot.role_bindings,
        secrets=snapshot.secrets,
    )


def _controlled_by(meta: Meta, kind: str, name: str, uid: str) -> bool:
    owner = next((o for o in meta.owners if o.controller), None)
    if owner is None or owner.kind != kind or owner.name != name:
        return False
    return not (uid and owner.uid) or owner.uid == uid


def _find(objects: Iterable[_O], namespace: str, name: str) -> _O | None:
    return next((x for x in objects if x.namespace == namespace and x.name == name), None)


def capture_identities(
    capture: Capture,
    pod: Pod,
    *,
    token_auth: bool,
    push_role: tuple[str, str] | None,
    service_accounts: Iterable[ServiceAccount],
    roles: Iterable[Role],
    role_bindings: Iterable[RoleBinding],
    secrets: Iterable[Secret],
) -> Identities:
    """Each piece KServe makes for `capture` (in progress, producer `pod`), with what is wrong with it.
    The objects are those carrying KServe's labels (the token requester binding: by name)."""
    ns, cap = capture.namespace, capture.name
    sas, rls, rbs, scs = list(service_accounts), list(roles), list(role_bindings), list(secrets)
    pieces: list[Piece] = []

    trb = _find(rbs, ns, c.TOKEN_REQUESTER)
    requester = partial(
        Piece, "RoleBinding", ns, c.TOKEN_REQUESTER, "the controller's right to request the reporter's token"
    )
    if trb is None:
        pieces.append(
            requester(
                "is missing",
                absent=True,
                detail="KServe's controller makes it before the first reporter token, so it has not "
                "(is it running, may it create RoleBindings there?)",
            )
        )
    elif trb.meta.labels.get(c.TOKEN_REQUESTER_LABEL) != "true" or (trb.role_kind, trb.role_name) != (
        CLUSTER_ROLE,
        c.TOKEN_REQUESTER,
    ):
        pieces.append(
            requester(
                f"is not KServe's (label {c.TOKEN_REQUESTER_LABEL}="
                f"{trb.meta.labels.get(c.TOKEN_REQUESTER_LABEL, '(none)')}, roleRef "
                f"{trb.role_kind or '(none)'}/{trb.role_name or '(none)'})",
                f"reserved RoleBinding {ns}/{c.TOKEN_REQUESTER} conflicts with a KernelCache-managed identity",
            )
        )
    else:
        pieces.append(requester())

    reporter = reporter_name(cap)
    found: tuple[tuple[str, ServiceAccount | Role | RoleBinding | Secret | None, str], ...] = (
        ("ServiceAccount", _find(sas, ns, reporter), "the reporter's identity"),
        ("Role", _find(rls, ns, reporter), "the reporter's right to update the capture's status"),
        ("RoleBinding", _find(rbs, ns, reporter), "the reporter's Role bound to its ServiceAccount"),
        ("Secret", _find(scs, ns, reporter), "the reporter's token, mounted into the mcv sidecar"),
    )
    for kind, obj, what in found:
        pieces.append(
            _owned(kind, ns, reporter, what, obj, c.REPORTER_LABEL, "KernelCacheCapture", cap, capture.meta.uid)
        )
    on_pod = partial(Piece, "Pod", ns, pod.name)  # the pod's annotation naming a Secret
    named = pod.meta.annotations.get(c.ANNOTATION_REPORTER_SECRET, "")
    if named != reporter:
        pieces.append(
            on_pod(
                f"annotation {c.ANNOTATION_REPORTER_SECRET}",
                f"names {named or '(nothing)'}, not {reporter}",
                "capture Pod has no reporter access Secret reference",
            )
        )

    if token_auth:
        pusher = pusher_name(cap)
        registry_owned = (c.REGISTRY_LABEL, "KernelCacheCapture", cap, capture.meta.uid, True)  # by the capture
        pieces.append(
            _owned(
                "ServiceAccount", ns, pusher, "the push's registry identity", _find(sas, ns, pusher), *registry_owned
            )
        )
        role = "registry.auth.pushRoleRef bound to the pusher"
        piece = _owned("RoleBinding", ns, pusher, role, _find(rbs, ns, pusher), *registry_owned)
        if push_role is None and not piece.problem:
            piece = replace(
                piece,
                problem="cannot be made: no registry.auth.pushRoleRef",
                kserve_error="registry push RoleRef is required for serviceAccountToken authentication",
            )
        pieces.append(piece)
        access = pod.meta.annotations.get(c.ANNOTATION_ACCESS_SECRET, "")
        if not access.startswith(c.ACCESS_SECRET_PREFIX):
            pieces.append(
                on_pod(
                    f"annotation {c.ANNOTATION_ACCESS_SECRET}",
                    f"names {access or '(nothing)'}, not a {c.ACCESS_SECRET_PREFIX}* Secret",
                    "capture Pod has no registry access Secret reference",
                    registry=True,
                )
            )
        else:
            role = "the push's registry token, mounted into the mcv sidecar"
            secret = _find(scs, ns, access)
            pieces.append(
                _owned("Secret", ns, access, role, secret, c.REGISTRY_LABEL, "Pod", pod.name, pod.meta.uid, True)
            )
    return Identities(f"{ns}/{cap}", pod.name, tuple(pieces))


def _owned(
    kind: str,
    ns: str,
    name: str,
    role: str,
    obj: ServiceAccount | Role | RoleBinding | Secret | None,
    label: str,
    owner_kind: str,
    owner: str,
    owner_uid: str,
    registry: bool = False,
) -> Piece:
    piece = partial(Piece, kind, ns, name, role, registry=registry)
    if obj is None:
        return piece(
            "is missing",
            absent=True,
            detail=f"none of that name carries label {label}=true: KServe's controller has not made it, or "
            f"one without the label blocks it (KServe's error then: reserved {kind} {ns}/{name} "
            "already exists and is not managed by kernelcache)",
        )
    if obj.meta.labels.get(label) != "true":  # from files holding every object of the kind
        return piece(
            f"is not KServe's (no label {label}=true)",
            f"reserved {kind} {ns}/{name} already exists and is not managed by kernelcache",
        )
    if not _controlled_by(obj.meta, owner_kind, owner, owner_uid):
        return piece(f"is not controlled by {owner_kind} {owner}", f"reserved {kind} {ns}/{name} has a different owner")
    if (
        kind == "RoleBinding"
        and isinstance(obj, RoleBinding)
        and label == c.REPORTER_LABEL
        and (obj.role_kind, obj.role_name) != ("Role", name)
    ):
        return piece(
            f"binds {obj.role_kind}/{obj.role_name}, not Role/{name}",
            f"reserved RoleBinding {ns}/{name} conflicts with a KernelCache-managed identity",
        )
    return piece()
