"""No verdict on data that could not be read: the explanations name every read their answer depends on,
and a read that was forbidden, not served or not in the input files stops them with exit 3."""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import IncompleteError, InputError
from ..snapshot import ClusterSnapshot

IN_INPUT_FILES = "are not in the input files"


def read_problem(snapshot: ClusterSnapshot, resource: str, namespace: str | None) -> str | None:
    """Why `list resource [in namespace]` cannot be trusted, in words, or None when it was read."""
    read = snapshot.read_status(resource, namespace)
    if read is None:
        if namespace is not None:  # a read of every namespace covers this one
            read = snapshot.read_status(resource, None)
        if read is None:
            return f"{resource} were not read"
    where = f" in namespace {namespace}" if namespace else ""
    what = f"{read.verb} {resource}{where}"
    if read.status == "ok":
        return None
    if read.status == "forbidden":
        return f"cannot {what} (forbidden)"
    if read.status == "absent":
        return f"cannot {what}: the API server does not serve {resource}"
    if read.status == "not-in-input":
        return f"{resource}{where} {IN_INPUT_FILES}"
    return f"cannot {what} ({read.status}{': ' + read.message if read.message else ''})"


def require(snapshot: ClusterSnapshot, command: str, reads: Iterable[tuple[str, str | None]]) -> None:
    """Raise IncompleteError naming every read of `reads` that was not possible."""
    problems = []
    for resource, namespace in reads:
        problem = read_problem(snapshot, resource, namespace)
        if problem and problem not in problems:
            problems.append(problem)
    if not problems:
        return
    text = f"{command} cannot answer: {'; '.join(problems)}"
    if all(p.endswith(IN_INPUT_FILES) for p in problems):
        raise InputError(text + " (add them to the files, or read the cluster live)")  # exit 2: the input
    raise IncompleteError(text)  # exit 3: the cluster could not be read
