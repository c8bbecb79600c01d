"""What to tell a user whose reads the API server refused (exit 3), on the error's one line: who was refused,
the read-only role that grants every read of the read commands (deploy/doctor-rbac.yaml, the doctor's
ClusterRole) with a binding for that identity, and how to check a refused read with `kubectl auth can-i`."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .. import __version__
from ..checks.catalogue import RBAC_FILE, ROLE_NAME, api_group_of
from ..suggest import Identity, Name, Namespace, Url, Verb, kubectl
from ..text import escape

RBAC_URL = f"https://raw.githubusercontent.com/kserve/kubectl-kcache/v{__version__}/{RBAC_FILE}"
# the API server's words for RBAC's refusal: `pods is forbidden: User "alice" cannot list resource "pods" ...`
_REFUSED = re.compile(r'User "((?:[^"\\]|\\.)*)" cannot ')
ANONYMOUS = "system:anonymous"


@dataclass(frozen=True)
class Refused:
    verb: str
    resource: str
    namespace: str | None
    message: str  # the API server's


def identity(refused: Iterable[Refused]) -> str | None:
    """The user the API server names in its refusals (the first one)."""
    for r in refused:
        m = _REFUSED.search(r.message)
        if m:
            return m.group(1)
    return None


def _binding(user: str) -> str:
    sa = re.fullmatch(r"system:serviceaccount:([^:]+):([^:]+)", user)
    name = Name(
        "clusterrolebinding",
        re.sub(r"[^a-z0-9.-]+", "-", f"kcache-doctor-{sa.group(2) if sa else user}".lower()).strip("-.")[:63],
    )
    role = Name("clusterrole", ROLE_NAME)
    if sa:
        return kubectl(
            "create clusterrolebinding {name} --clusterrole={role} --serviceaccount={ns}:{sa}",
            name=name,
            role=role,
            ns=Namespace(sa.group(1)),
            sa=Name("serviceaccount", sa.group(2)),
        )
    return kubectl(
        "create clusterrolebinding {name} --clusterrole={role} --user={user}", name=name, role=role, user=Identity(user)
    )


def access_hint(refused: list[Refused], impersonated: bool) -> str:
    """What follows the exit-3 error on its line when reads were refused ("" when none were): who was refused,
    the commands that grant every read of the read commands, and how to check one refused read."""
    if not refused:
        return ""
    user = identity(refused)
    if not user:  # the refusal does not say whom it refused (a file's record of reads without the message)
        return ""
    if user == ANONYMOUS:  # no credentials reached the server: a role for everyone is not the answer
        return (
            f"the API server took the requests as {ANONYMOUS}: no credentials it accepts were sent (check the "
            "kubeconfig's user, or give --token, or --client-certificate and --client-key)"
        )
    unique = _unique(refused)
    first = unique[0]
    verb, resource = Verb(first.verb), Name("resource", _qualified(first.resource))
    if first.namespace and impersonated:
        can_i = kubectl(
            "auth can-i {verb} {resource} -n {ns} --as={user}",
            verb=verb,
            resource=resource,
            ns=Namespace(first.namespace),
            user=Identity(user),
        )
    elif first.namespace:
        can_i = kubectl(
            "auth can-i {verb} {resource} -n {ns}", verb=verb, resource=resource, ns=Namespace(first.namespace)
        )
    elif impersonated:
        can_i = kubectl("auth can-i {verb} {resource} --as={user}", verb=verb, resource=resource, user=Identity(user))
    else:
        can_i = kubectl("auth can-i {verb} {resource}", verb=verb, resource=resource)
    grant = kubectl("apply -f {url}", url=Url(RBAC_URL)) + " && " + _binding(user)
    who = f'User "{escape(user)}"'
    reads = f"{len(unique)} read{'s' if len(unique) > 1 else ''}"
    return f"{who} was refused {reads}; bind the read-only role: {grant}; check a read: {can_i}"


def _qualified(resource: str) -> str:
    """`kernelcaches.serving.kserve.io`: kubectl auth can-i finds a resource of another group by this name."""
    try:
        group = api_group_of(resource)
    except KeyError:
        return resource
    return f"{resource}.{group}" if group else resource


def _unique(refused: list[Refused]) -> list[Refused]:
    seen, out = set(), []
    for r in refused:
        key = (r.verb, r.resource, r.namespace)
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def from_reads(reads: Iterable[object]) -> list[Refused]:
    """The forbidden reads of a snapshot (reads.Read records)."""
    return [
        Refused(
            getattr(r, "verb", "list"),
            getattr(r, "resource", ""),
            getattr(r, "namespace", None),
            getattr(r, "message", ""),
        )
        for r in reads
        if getattr(r, "status", "") == "forbidden"
    ]
