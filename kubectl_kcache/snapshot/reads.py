"""THE read rule: what was read (`Read`: the list's full spec and what happened), which read speaks for a
list an answer needs (`covering`), and `require`: no answer on data not read (exit 3 when the cluster
could not be read, exit 2 when only input files lack it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import msgspec

from ..errors import EXIT_INCOMPLETE, EXIT_USAGE, IncompleteError, InputError
from ..provenance import FILE
from . import kinds

if TYPE_CHECKING:
    from .model import ClusterSnapshot


OK = "ok"
FORBIDDEN = "forbidden"  # 403
ABSENT = "absent"  # 404: the resource is not served (a CRD not installed)
FAILED = "failed"  # any other failure recorded in a dump
NOT_IN_INPUT = "not-in-input"  # from files that hold no object of the kind: nothing is known about it
NOT_READ = "not-read"  # no read covers the list (a live command that did not make it)
# which of several covering reads speaks for a list when none was ok: the worst first
_RANK = {FORBIDDEN: 0, FAILED: 1, ABSENT: 3, NOT_IN_INPUT: 4, NOT_READ: 5}


class Read(msgspec.Struct, frozen=True):
    """One list that was made, with its full spec, and what happened: ok, forbidden (403), absent (404:
    resource not served), failed, or not-in-input (from plain files that hold no object of the kind).

    A dump written before selectors were recorded has none: such a read covers every list of its resource
    in its namespace, which is what it named."""

    resource: str
    namespace: str | None
    status: str
    count: int = 0
    verb: str = "list"
    message: str = ""
    label_selector: str = ""
    field_selector: str = ""

    @property
    def ok(self) -> bool:
        return self.status == OK

    @property
    def incomplete(self) -> bool:
        """The cluster could not be read (exit 3), as opposed to input files lacking the kind (exit 2) or
        a resource that is not served (a fact)."""
        return self.status not in (OK, ABSENT, NOT_IN_INPUT)

    @property
    def failed(self) -> bool:
        """The read was made and the cluster refused or failed it (forbidden, failed, ...)."""
        return self.incomplete and self.status != NOT_READ

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "resource": self.resource,
            "namespace": self.namespace,
            "status": self.status,
            "count": self.count,
        }
        if self.label_selector:
            out["labelSelector"] = self.label_selector
        if self.field_selector:
            out["fieldSelector"] = self.field_selector
        if self.verb != "list":
            out["verb"] = self.verb
        if self.message:
            out["message"] = self.message
        return out

    @classmethod
    def of(cls, spec: kinds.ListSpec, status: str, count: int = 0, message: str = "") -> Read:
        return cls(
            spec.plural,
            spec.namespace,
            status,
            count,
            message=message,
            label_selector=spec.label_selector,
            field_selector=spec.field_selector,
        )


def _terms(selector: str) -> frozenset[str]:
    """The requirements of a selector (`a=b,c in (x,y)` -> {a=b, c in (x,y)}), commas inside () kept."""
    out, depth, term = [], 0, ""
    for ch in selector:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            out.append(term)
            term = ""
        else:
            term += ch
    out.append(term)
    return frozenset(t.strip().replace(" ", "") for t in out if t.strip())


def covers(read: Read, spec: kinds.ListSpec) -> bool:
    """Whether `read` returned (or would have returned) every object `spec` lists: the same resource, all
    namespaces or the same one, and selectors that ask for no more than the spec's (each requirement of
    the read's selector is one of the spec's)."""
    return (
        read.resource == spec.plural
        and (read.namespace is None or read.namespace == spec.namespace)
        and _terms(read.label_selector) <= _terms(spec.label_selector)
        and _terms(read.field_selector) <= _terms(spec.field_selector)
    )


def covering(snapshot: ClusterSnapshot, spec: kinds.ListSpec) -> Read:
    """THE read rule: the read that speaks for the list `spec`. An ok read that covers it (its objects are
    all there); else the worst covering read (forbidden, failed, absent, not in the input); else a
    made-up one: ok for a snapshot whose reads are assumed (tests, fixtures), not-in-input from files, or
    not-read."""
    found = [r for r in snapshot.reads if covers(r, spec)]
    ok = next((r for r in found if r.ok), None)
    if ok is not None:
        return ok
    if found:
        return min(found, key=lambda r: _RANK.get(r.status, 2))
    if snapshot.reads_assumed:
        return Read.of(spec, OK)
    return Read.of(
        spec,
        NOT_IN_INPUT if snapshot.meta.source == FILE else NOT_READ,
        message="not in the input" if snapshot.meta.source == FILE else "not read",
    )


class Unread(msgspec.Struct, frozen=True):
    """A list an answer needs that is not usable, and why (the read that speaks for it)."""

    spec: kinds.ListSpec
    read: Read

    @property
    def exit_code(self) -> int:
        """3: the cluster could not be read; 2: input files lack it."""
        return EXIT_USAGE if self.read.status == NOT_IN_INPUT else EXIT_INCOMPLETE

    @property
    def what(self) -> str:
        return f"{self.read.verb} {self.spec.plural}" + (f" in {self.spec.namespace}" if self.spec.namespace else "")

    def __str__(self) -> str:
        """`forbidden: list pods in kserve`, `not in the input: list jobs in x`, `failed: list nodes (...)`."""
        status = self.read.status
        if status == ABSENT:
            return f"{self.spec.plural} is not served by the API server"
        if status == NOT_IN_INPUT:
            return f"not in the input: {self.what}"
        if status == NOT_READ:
            return f"not read: {self.what}"
        tail = f" ({self.read.message})" if status != FORBIDDEN and self.read.message else ""
        return f"{status}: {self.what}{tail}"


def unusable(snapshot: ClusterSnapshot, spec: kinds.ListSpec, absent_is_none: bool = False) -> Unread | None:
    """Why the list `spec` cannot be trusted, or None when it was read (`absent_is_none`: a resource the
    API server does not serve means there are none)."""
    read = covering(snapshot, spec)
    if read.ok or (absent_is_none and read.status == ABSENT):
        return None
    return Unread(spec, read)


class Unreadable(IncompleteError):
    """An answer needs lists that could not be read (exit 3); `unread` names each."""

    def __init__(self, message: str, unread: tuple[Unread, ...]):
        super().__init__(message)
        self.unread = unread


class NotInInput(InputError):
    """An answer needs lists the input files do not hold (exit 2); `unread` names each."""

    def __init__(self, message: str, unread: tuple[Unread, ...]):
        super().__init__(message)
        self.unread = unread


def require(
    snapshot: ClusterSnapshot, command: str, specs: Iterable[kinds.ListSpec], absent_is_none: bool = False
) -> None:
    """No answer on data that was not read: raise naming every list of `specs` that is not usable, exit 3
    (`Unreadable`) when the cluster could not be read, exit 2 (`NotInInput`) when only input files lack them."""
    unread: list[Unread] = []
    for spec in specs:
        problem = unusable(snapshot, spec, absent_is_none)
        if problem is not None and str(problem) not in map(str, unread):
            unread.append(problem)
    if not unread:
        return
    text = f"{command} cannot answer: {'; '.join(_problem_text(u) for u in unread)}"
    if all(u.exit_code == EXIT_USAGE for u in unread):
        raise NotInInput(text + " (add them to the files, or read the cluster live)", tuple(unread))
    error = Unreadable(text, tuple(unread))
    error.refused = tuple(r for r in snapshot.reads if r.status == "forbidden")  # for the access hint
    raise error


def _problem_text(u: Unread) -> str:
    what = f"{u.read.verb} {u.spec.plural}" + (f" in namespace {u.spec.namespace}" if u.spec.namespace else "")
    if u.read.status == NOT_IN_INPUT:
        return f"{u.spec.plural}{' in namespace ' + u.spec.namespace if u.spec.namespace else ''} {IN_INPUT_FILES}"
    if u.read.status == FORBIDDEN:
        return f"cannot {what} (forbidden)"
    if u.read.status == ABSENT:
        return f"cannot {what}: the API server does not serve {u.spec.plural}"
    if u.read.status == NOT_READ:
        return f"{u.spec.plural}{' in namespace ' + u.spec.namespace if u.spec.namespace else ''} were not read"
    return f"cannot {what} ({u.read.status}{': ' + u.read.message if u.read.message else ''})"


IN_INPUT_FILES = "are not in the input files"


class ListMade(msgspec.Struct, frozen=True):
    """One list that was made, and the resourceVersion it was read at: where a watch of it starts."""

    spec: kinds.ListSpec
    resource_version: str
    keys: frozenset[tuple[str, str, str]] = frozenset()  # (snapshot field, namespace, name) of what it returned
