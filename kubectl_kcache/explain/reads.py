"""No verdict on data that could not be read: the explanations and status name every read their answer
depends on; a read that was forbidden, failed or not served stops them with exit 3, input files that lack
a kind with exit 2."""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import IncompleteError, InputError
from ..snapshot import NOT_IN_INPUT, ClusterSnapshot, Read

IN_INPUT_FILES = "are not in the input files"


def covering_read(snapshot: ClusterSnapshot, resource: str, namespace: str | None) -> Read | None:
    """The read of `resource` that covers `namespace`: the worst read made in exactly that namespace, else
    the worst read of all namespaces (the agent pods read in kserve are not judged by a forbidden read of
    producer pods elsewhere). A snapshot built from objects with no record of reads (`reads_assumed`,
    tests) counts as read."""
    for ns in ((namespace, None) if namespace is not None else (None,)):
        found = [r for r in snapshot.reads if r.resource == resource and r.namespace == ns]
        for status in ("forbidden", NOT_IN_INPUT, "absent", "ok"):
            r = next((x for x in found if x.status == status), None)
            if r is not None:
                return r
        if found:
            return found[0]
    return Read(resource, None, "ok") if snapshot.reads_assumed else None


def read_problem(snapshot: ClusterSnapshot, resource: str, namespace: str | None,
                 absent_is_none: bool = False) -> str | None:
    """Why `list resource [in namespace]` cannot be trusted, in words, or None when it was read.
    `absent_is_none`: a resource the API server does not serve (a CRD not installed) means there are none."""
    read = covering_read(snapshot, resource, namespace)
    where = f" in namespace {namespace}" if namespace else ""
    if read is None:
        return f"{resource}{where} were not read"
    what = f"{read.verb} {resource}{where}"
    if read.status == "ok":
        return None
    if read.status == "forbidden":
        return f"cannot {what} (forbidden)"
    if read.status == "absent":
        return None if absent_is_none else f"cannot {what}: the API server does not serve {resource}"
    if read.status == NOT_IN_INPUT:
        return f"{resource}{where} {IN_INPUT_FILES}"
    return f"cannot {what} ({read.status}{': ' + read.message if read.message else ''})"


def require(snapshot: ClusterSnapshot, command: str, reads: Iterable[tuple[str, str | None]],
            absent_is_none: bool = False) -> None:
    """Raise IncompleteError naming every read of `reads` that was not possible (InputError when each is
    only missing from the input files)."""
    problems = []
    for resource, namespace in reads:
        problem = read_problem(snapshot, resource, namespace, absent_is_none)
        if problem and problem not in problems:
            problems.append(problem)
    if not problems:
        return
    text = f"{command} cannot answer: {'; '.join(problems)}"
    if all(p.endswith(IN_INPUT_FILES) for p in problems):
        raise InputError(text + " (add them to the files, or read the cluster live)")  # exit 2: the input
    error = IncompleteError(text)  # exit 3: the cluster could not be read
    error.refused = tuple(r for r in snapshot.reads if r.status == "forbidden")
    raise error
