"""The one door to the API server: `Client.request`, and the API verbs on top of it.

A Client holds only what does not change per request (the resolved kubeconfig, the transport, the
timeout); every answer (a list's resourceVersion, a page's continue token) is returned to the caller, so
one Client is safe to share between threads (reconcile runs one informer per kind on one Client).

Requests go over urllib3 (`transport.py`, credentials in `auth.py`); kubeconfigs with an `auth-provider`
use the official client (`official.py`). Lists (`listing.py`) and watches (`watching.py`) hand the raw
bytes of each page or event line to a decoder: typed Structs for the commands (`snapshot/kinds.py`), plain dicts
by default.
"""

from __future__ import annotations

import copy
import json
import random
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple, cast

from ..errors import ApiError, Forbidden, InputError, NotFound, Unreachable
from . import listing, requestlog, watching, write_guard
from .kubeconfig import Overrides, Resolved, resolve
from .resources import Page, Resource
from .status import HTTPStatus, api_error, transport_error
from .transport import Transport

DEFAULT_TIMEOUT = 30.0
FIELD_MANAGER = "kubectl-kcache"


def _user_agent() -> str:
    import platform

    from .. import __version__

    return f"kubectl-kcache/{__version__} ({platform.system().lower()}/{platform.machine().lower()})"


USER_AGENT = _user_agent()

__all__ = ["Client", "Resource", "Page", "strip_object", "backoff_delays", "DEFAULT_TIMEOUT", "FIELD_MANAGER"]

strip_object = listing.strip_object


MUTATING = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class Client:
    """A connection to one API server with the user's identity, timeouts and impersonation."""

    def __init__(self, overrides: Overrides, env: Mapping[str, str] | None = None, verbosity: int = 0):
        self.overrides = overrides
        self.verbosity = verbosity  # kubectl's -v: 6 logs each request and its answer, 8 the headers, 9 bodies
        self.resolved: Resolved = resolve(overrides, env)
        self.timeout = overrides.request_timeout if overrides.request_timeout is not None else DEFAULT_TIMEOUT
        self._user_agent = USER_AGENT
        self._official: Any = None
        self.deadline: float | None = None  # monotonic; set by `bounded` for one-shot commands
        self.write_guard: write_guard.Guard | None = None  # checked just before each mutating request is sent
        if overrides.impersonate_groups and not overrides.impersonate:
            raise InputError("--as-group requires --as (kubectl's rule)")
        if overrides.impersonate_uid and not overrides.impersonate:
            raise InputError("--as-uid requires --as (kubectl's rule)")
        if self.resolved.proxy and self.resolved.proxy.startswith("socks"):
            raise InputError(f"proxy {self.resolved.proxy}: SOCKS proxies are not supported; use an HTTP proxy")
        self._transport = Transport.create(
            self.resolved, overrides.impersonate, overrides.impersonate_groups, overrides.impersonate_uid
        )
        if self._transport is None:
            self._official = self._build()

    def _build(self) -> Any:
        from . import official

        return official.build(self.resolved, self.overrides, self._user_agent)

    def bounded(self) -> Client:
        """This connection with --request-timeout as the budget of everything it does from now on (every
        request, page and retry), as a one-shot command needs; watches are not bounded."""
        if self.timeout:
            self.deadline = time.monotonic() + self.timeout
        return self

    def guarded(self, guard: write_guard.Guard) -> Client:
        """This connection, with every mutating request checked by `guard` at the last moment before it is
        sent (kube/write_guard.py); the guard raises `WriteRefused` to stop it."""
        other = copy.copy(self)
        other.write_guard = guard
        return other

    @property
    def _api(self) -> Any:
        """The official client (kubernetes.client.ApiClient) for this connection, built on first use when
        requests go over the transport."""
        if self._official is None:
            self._official = self._build()
        return self._official

    @property
    def user_agent(self) -> str:
        return self._user_agent

    @user_agent.setter
    def user_agent(self, value: str) -> None:
        self._user_agent = value
        if self._official is not None:
            self._official.user_agent = value

    @property
    def namespace(self) -> str:
        return self.resolved.namespace

    @property
    def server(self) -> str:
        """The API server's URL as every message, log line, provenance and dump names it: without the
        credentials a URL can carry (the requests use `resolved.server`)."""
        from ..credentials import redact_url

        return redact_url(self.resolved.server)

    # ---- requests -------------------------------------------------------------------------------
    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str | None = None,
        timeout: float | None = None,
        stream: bool = False,
        raw: bool = False,
        deferred: bool = False,
        verb: str = "",
        resource: str = "",
        accept: str = "",
    ) -> Any:
        """One HTTP request: the decoded JSON answer, its bytes (`raw`), the open response (`stream`), or a
        `Deferred` answer (`deferred`): returned once its headers have arrived, its bytes read when asked for
        while the server goes on sending them. Non-2xx answers raise the error class of their status; transport
        failures `Unreachable` in words. `timeout` (default: --request-timeout) is the whole budget of the
        request."""
        headers = {"Accept": accept or "application/json", "User-Agent": self._user_agent}
        if content_type:
            headers["Content-Type"] = content_type
        params = [(k, v) for k, v in (query or {}).items() if v is not None and v != ""]
        t = self.timeout if timeout is None else timeout
        budget = t  # what an error says was spent
        if self.deadline is not None and not stream:
            left = self.deadline - time.monotonic()
            budget = self.timeout
            if left <= 0:
                raise Unreachable(
                    f"cannot reach the API server at {self.server}: timed out after "
                    f"{self.timeout:g}s (--request-timeout)"
                )
            t = min(t, left) if t else left
        guard = self.write_guard if method in MUTATING else None
        started = time.monotonic()

        def log(status: int, body: bytes | None = None) -> None:  # kubectl's -v
            if self.verbosity >= 6:
                requestlog.answer(self, method, path, params, headers, status, started, body)

        try:
            with write_guard.guarding(guard):
                if self._transport is not None:
                    answer = self._transport.request(method, path, params, headers, body, t or None, stream)
                else:
                    from . import official

                    answer = official.request(self._api, method, path, params, headers, body, t or None, stream)
        except HTTPStatus as exc:
            log(exc.status, exc.body)
            raise api_error(exc, method, path, verb, resource) from None
        except (InputError, write_guard.WriteRefused):  # an exec plugin failing on refresh, a missing CA file;
            raise  # a write refused by the guard
        except Exception as exc:  # noqa: BLE001 - urllib3's connection, TLS and timeout errors; ApiException
            is_http = type(exc).__name__ == "ApiException"
            log(getattr(exc, "status", 0) if is_http else 0)
            if is_http:
                raise api_error(exc, method, path, verb, resource) from None
            raise transport_error(exc, self.server, budget or None) from None
        if stream:
            log(getattr(answer, "status", 200))
            return answer
        if isinstance(answer, tuple):  # the official client reads its answers whole
            status, content = answer
            log(status, content)
            pending = Deferred(lambda: content, lambda: None)
        else:
            status = answer.status

            def read() -> bytes:
                try:
                    data: bytes = answer.read()
                except Exception as exc:  # noqa: BLE001 - the connection broken mid-answer, the budget spent
                    log(0)
                    raise transport_error(exc, self.server, budget or None) from None
                log(status, data)
                return data

            pending = Deferred(read, answer.close)
        if deferred:
            return pending
        data = pending.read()
        if raw:
            return data
        if not data:
            return {}
        try:
            return json.loads(data)
        except ValueError:
            raise ApiError(f"{method} {path}: the server did not answer JSON", status=status) from None

    # ---- verbs ----------------------------------------------------------------------------------
    def get(self, res: Resource, name: str, namespace: str | None = None) -> dict[str, Any]:
        return strip_object(self.request("GET", res.path(namespace, name), verb="get", resource=res.plural))

    list_all = listing.list_all  # every object of a list and its resourceVersion
    watch = watching.watch  # the events of a watch

    def _write(
        self, method: str, path: str, body: Mapping[str, Any], verb: str, resource: str, content_type: str | None = None
    ) -> dict[str, Any]:
        """A create, patch or update, with this tool as the field manager."""
        return cast(
            dict[str, Any],
            self.request(
                method,
                path,
                body=body,
                content_type=content_type,
                query={"fieldManager": FIELD_MANAGER},
                verb=verb,
                resource=resource,
            ),
        )

    def create(self, res: Resource, body: Mapping[str, Any], namespace: str | None = None) -> dict[str, Any]:
        return self._write("POST", res.path(namespace), body, "create", res.plural)

    def merge_patch(
        self, res: Resource, name: str, patch: Mapping[str, Any], namespace: str | None = None
    ) -> dict[str, Any]:
        path = res.path(namespace, name)
        return self._write("PATCH", path, patch, "patch", res.plural, "application/merge-patch+json")

    def replace_status(
        self, res: Resource, name: str, body: Mapping[str, Any], namespace: str | None = None
    ) -> dict[str, Any]:
        return self._write("PUT", res.path(namespace, name, "status"), body, "update", f"{res.plural}/status")

    def replace(
        self, res: Resource, name: str, body: Mapping[str, Any], namespace: str | None = None
    ) -> dict[str, Any]:
        return self._write("PUT", res.path(namespace, name), body, "update", res.plural)

    def delete(
        self, res: Resource, name: str, namespace: str | None = None, *, resource_version: str = "", uid: str = ""
    ) -> None:
        precond: dict[str, Any] = {}
        if resource_version:
            precond["resourceVersion"] = resource_version
        if uid:
            precond["uid"] = uid
        body = {"kind": "DeleteOptions", "apiVersion": "v1", **({"preconditions": precond} if precond else {})}
        self.request("DELETE", res.path(namespace, name), body=body, verb="delete", resource=res.plural)

    def server_version(self) -> str:
        try:
            return str(self.request("GET", "/version", timeout=min(self.timeout or 10, 10)).get("gitVersion", ""))
        except (Forbidden, NotFound):
            return ""


class Deferred(NamedTuple):
    """An answer whose body is still on its way: `read()` its bytes once, or `close()` it unread."""

    read: Callable[[], bytes]
    close: Callable[[], None]


def backoff_delays(base: float = 0.5, cap: float = 30.0) -> Iterator[float]:
    """Exponential backoff with full jitter."""
    attempt = 0
    while True:
        yield random.uniform(0, min(cap, base * (2**attempt)))
        attempt += 1
