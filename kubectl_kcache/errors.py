"""The error hierarchy. Raised where a problem is found, turned into one line and an exit code in cli/."""

from __future__ import annotations

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INCOMPLETE = 3
EXIT_INTERNAL = 4
EXIT_INTERRUPTED = 130


class KcacheError(Exception):
    """Base of every error the plugin reports as one line."""

    exit_code = EXIT_INTERNAL


class InputError(KcacheError):
    """Bad input from the user: a malformed file, a bad flag value, a kubeconfig that does not resolve."""

    exit_code = EXIT_USAGE


class IncompleteError(KcacheError):
    """The command could not do its job: API unreachable, or a read it cannot do without was forbidden."""

    exit_code = EXIT_INCOMPLETE
    refused: tuple[object, ...] = ()  # the reads the API server refused (reads.Read), for the access hint


class ApiError(IncompleteError):
    """An API request failed. `status` is the HTTP status (0 when the server could not be reached)."""

    def __init__(self, message: str, status: int = 0, reason: str = "", verb: str = "", resource: str = ""):
        super().__init__(message)
        self.status = status
        self.reason = reason
        self.verb = verb
        self.resource = resource


class Unreachable(ApiError):
    """The API server could not be reached at all (connection refused, DNS, TLS, timeout)."""


class Forbidden(ApiError):
    """403: RBAC denied the request."""


class NotFound(ApiError):
    """404: the object, or the resource type (CRD not installed), does not exist."""


class Conflict(ApiError):
    """409: a conflict on update (resourceVersion) or AlreadyExists on create."""


class Gone(ApiError):
    """410: the resourceVersion is too old (list continue token or watch); restart from a fresh list."""


class NotInScope(KcacheError):
    """What the user named (a namespace, an InferenceService) is not there: an answer, as kubectl's NotFound is
    (exit 1), not a usage error."""

    exit_code = EXIT_FINDINGS
