"""The one door to the API server: raw JSON requests over the official client's connection setup.

The generated models cost seconds per thousand objects, so lists are read as raw JSON one page at a
time (`_preload_content=False`) and handed to the caller with `managedFields` dropped.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from ..errors import ApiError, Conflict, Forbidden, Gone, InputError, NotFound, Unreachable
from .kubeconfig import Overrides, Resolved, resolve

DEFAULT_TIMEOUT = 30.0
PAGE_SIZE = 500
FIELD_MANAGER = "kubectl-kcache"
USER_AGENT = "kubectl-kcache"


@dataclass(frozen=True)
class Resource:
    """An API resource: where it lives and whether it is namespaced."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool

    def path(self, namespace: str | None = None, name: str | None = None, sub: str | None = None) -> str:
        base = f"/api/{self.version}" if not self.group else f"/apis/{self.group}/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{quote(namespace, safe='')}"
        base += f"/{self.plural}"
        if name:
            base += f"/{quote(name, safe='')}"
        if sub:
            base += f"/{sub}"
        return base

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


def strip_object(obj: dict[str, Any]) -> dict[str, Any]:
    md = obj.get("metadata")
    if isinstance(md, dict):
        md.pop("managedFields", None)
    if obj.get("kind") == "Secret":
        obj.pop("data", None)
        obj.pop("stringData", None)
    return obj


def _trim_token(cfg: Any) -> None:
    """client-go trims token files; the Python client sends a trailing newline, which breaks the request."""
    token = cfg.api_key.get("authorization")
    if isinstance(token, str) and token != token.strip():
        cfg.api_key["authorization"] = token.strip()


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


class Client:
    """A connection to one API server with the user's identity, timeouts and impersonation."""

    def __init__(self, overrides: Overrides, env: Mapping[str, str] | None = None):
        self.overrides = overrides
        self.resolved: Resolved = resolve(overrides, env)
        self.timeout = overrides.request_timeout if overrides.request_timeout is not None else DEFAULT_TIMEOUT
        self.request_count = 0
        self._api = self._build()

    # ---- construction ---------------------------------------------------------------------------
    def _build(self) -> Any:
        import tempfile

        from kubernetes import client as kclient
        from kubernetes import config as kconfig
        from kubernetes.config.config_exception import ConfigException

        cfg = kclient.Configuration()
        capture = _Capture()
        root = logging.getLogger()
        root.addHandler(capture)
        try:
            kconfig.load_kube_config_from_dict(
                self.resolved.config,
                client_configuration=cfg,
                persist_config=False,
                temp_file_path=tempfile.gettempdir(),
            )
        except ConfigException as exc:
            raise InputError(f"kubeconfig: {exc}") from None
        except (OSError, ValueError) as exc:
            raise InputError(f"kubeconfig: {exc}") from None
        finally:
            root.removeHandler(capture)
        _trim_token(cfg)
        hook = cfg.refresh_api_key_hook
        if hook is not None:  # called before every request; it may set the untrimmed token again

            def refresh(conf: Any) -> None:
                hook(conf)
                _trim_token(conf)

            cfg.refresh_api_key_hook = refresh
        exec_errors = [m for m in capture.messages if m]
        user = self.resolved.config["users"][0]["user"]
        if exec_errors and "exec" in user and not cfg.api_key.get("authorization") and not cfg.cert_file:
            raise InputError(f"kubeconfig exec credential plugin failed: {exec_errors[-1]}")
        if self.resolved.proxy:
            if self.resolved.proxy.startswith("socks"):
                raise InputError(f"proxy {self.resolved.proxy}: SOCKS proxies are not supported; use an HTTP proxy")
            cfg.proxy = self.resolved.proxy
        cfg.retries = 1
        api = kclient.ApiClient(cfg)
        api.user_agent = USER_AGENT
        self._install_impersonation(api)
        return api

    def _install_impersonation(self, api: Any) -> None:
        """Impersonate-Group must be sent once per group; the client's header dict would fold them."""
        user, groups = self.overrides.impersonate, self.overrides.impersonate_groups
        if not user and not groups:
            return
        if groups and not user:
            raise InputError("--as-group requires --as (kubectl's rule)")
        from urllib3 import HTTPHeaderDict

        rest = api.rest_client
        original = rest.request

        def request(method: str, url: str, query_params: Any = None, headers: Any = None, **kw: Any) -> Any:
            h = HTTPHeaderDict(headers or {})
            h["Impersonate-User"] = user
            for g in groups:
                h.add("Impersonate-Group", g)
            return original(method, url, query_params=query_params, headers=h, **kw)

        rest.request = request

    @property
    def namespace(self) -> str:
        return self.resolved.namespace

    @property
    def server(self) -> str:
        return self.resolved.server

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
        verb: str = "",
        resource: str = "",
    ) -> Any:
        """One HTTP request; returns the decoded JSON (or the open response when stream=True)."""
        from kubernetes.client.exceptions import ApiException

        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        params = [(k, v) for k, v in (query or {}).items() if v is not None and v != ""]
        t = self.timeout if timeout is None else timeout
        self.request_count += 1
        try:
            resp = self._api.call_api(
                path,
                method,
                query_params=params,
                header_params=headers,
                body=body,
                auth_settings=["BearerToken"],
                _preload_content=False,
                _return_http_data_only=True,
                _request_timeout=(min(t, 30.0) if t else None, t if t else None) if not stream else (t or None, None),
            )
        except ApiException as exc:
            raise _api_error(exc, method, path, verb, resource) from None
        except Exception as exc:  # urllib3 connection, TLS and timeout errors
            raise _transport_error(exc, self.server) from None
        if stream:
            return resp
        try:
            data = resp.data
        except Exception as exc:  # noqa: BLE001
            raise _transport_error(exc, self.server) from None
        if not data:
            return {}
        try:
            return json.loads(data)
        except ValueError:
            raise ApiError(f"{method} {path}: the server did not answer JSON", status=resp.status) from None

    def get(self, res: Resource, name: str, namespace: str | None = None) -> dict[str, Any]:
        return strip_object(self.request("GET", res.path(namespace, name), verb="get", resource=res.plural))

    def list_pages(
        self,
        res: Resource,
        namespace: str | None = None,
        *,
        label_selector: str = "",
        field_selector: str = "",
        page_size: int = PAGE_SIZE,
    ) -> Iterator[list[dict[str, Any]]]:
        """Pages of objects (kind and apiVersion filled in, managedFields dropped).

        A 410 Gone on a continue token means the list is too old to finish: the caller is told by a
        `Gone` error and restarts (list_all does that).
        """
        cont = ""
        while True:
            data = self.request(
                "GET",
                res.path(namespace),
                query={
                    "limit": page_size,
                    "continue": cont,
                    "labelSelector": label_selector,
                    "fieldSelector": field_selector,
                },
                verb="list",
                resource=res.plural,
            )
            items = data.get("items") or []
            for item in items:
                item.setdefault("kind", res.kind)
                item.setdefault("apiVersion", res.api_version)
                strip_object(item)
            self.last_list_resource_version = (data.get("metadata") or {}).get("resourceVersion", "")
            yield items
            cont = (data.get("metadata") or {}).get("continue") or ""
            if not cont:
                return

    def list_all(
        self,
        res: Resource,
        namespace: str | None = None,
        *,
        convert: Callable[[dict[str, Any]], Any] = lambda x: x,
        label_selector: str = "",
        field_selector: str = "",
        page_size: int = PAGE_SIZE,
    ) -> tuple[list[Any], str]:
        """Every object, converted page by page; restarts from the beginning on 410 Gone."""
        for _attempt in range(5):
            out: list[Any] = []
            try:
                for page in self.list_pages(
                    res, namespace, label_selector=label_selector, field_selector=field_selector, page_size=page_size
                ):
                    out.extend(convert(item) for item in page)
                return out, self.last_list_resource_version
            except Gone:
                continue
        raise ApiError(f"listing {res.plural}: the list kept expiring (410 Gone); try again", status=410)

    def create(self, res: Resource, body: Mapping[str, Any], namespace: str | None = None) -> dict[str, Any]:
        return self.request(
            "POST",
            res.path(namespace),
            body=body,
            query={"fieldManager": FIELD_MANAGER},
            verb="create",
            resource=res.plural,
        )

    def merge_patch(
        self, res: Resource, name: str, patch: Mapping[str, Any], namespace: str | None = None
    ) -> dict[str, Any]:
        return self.request(
            "PATCH",
            res.path(namespace, name),
            body=patch,
            content_type="application/merge-patch+json",
            query={"fieldManager": FIELD_MANAGER},
            verb="patch",
            resource=res.plural,
        )

    def replace_status(
        self, res: Resource, name: str, body: Mapping[str, Any], namespace: str | None = None
    ) -> dict[str, Any]:
        return self.request(
            "PUT",
            res.path(namespace, name, "status"),
            body=body,
            query={"fieldManager": FIELD_MANAGER},
            verb="update",
            resource=f"{res.plural}/status",
        )

    def replace(
        self, res: Resource, name: str, body: Mapping[str, Any], namespace: str | None = None
    ) -> dict[str, Any]:
        return self.request(
            "PUT",
            res.path(namespace, name),
            body=body,
            query={"fieldManager": FIELD_MANAGER},
            verb="update",
            resource=res.plural,
        )

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

    def watch(
        self,
        res: Resource,
        resource_version: str,
        namespace: str | None = None,
        *,
        timeout_seconds: int = 300,
        label_selector: str = "",
        field_selector: str = "",
    ) -> Iterator[dict[str, Any]]:
        """Watch events ({"type", "object"}) from resource_version. An ERROR event with code 410 raises Gone."""
        resp = self.request(
            "GET",
            res.path(namespace),
            query={
                "watch": "true",
                "resourceVersion": resource_version,
                "allowWatchBookmarks": "true",
                "timeoutSeconds": timeout_seconds,
                "labelSelector": label_selector,
                "fieldSelector": field_selector,
            },
            stream=True,
            timeout=timeout_seconds + 30,
            verb="watch",
            resource=res.plural,
        )
        buf = b""
        try:
            for chunk in resp.stream(65536, decode_content=True):
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if not line.strip():
                        continue
                    event = json.loads(line)
                    if event.get("type") == "ERROR":
                        status = event.get("object") or {}
                        code = int(status.get("code") or 0)
                        msg = status.get("message", "watch error")
                        if code == 410:
                            raise Gone(msg, status=410)
                        raise ApiError(msg, status=code)
                    obj = event.get("object")
                    if isinstance(obj, dict):
                        obj.setdefault("kind", res.kind)
                        obj.setdefault("apiVersion", res.api_version)
                        strip_object(obj)
                    yield event
        except (Gone, ApiError):
            raise
        except Exception as exc:  # noqa: BLE001 - the stream broke: the server went away
            raise _transport_error(exc, self.server) from None
        finally:
            resp.release_conn()

    def server_version(self) -> str:
        try:
            return str(self.request("GET", "/version", timeout=min(self.timeout or 10, 10)).get("gitVersion", ""))
        except (Forbidden, NotFound):
            return ""

    def discover(self, group_version: str) -> dict[str, Any] | None:
        """The resources served at /apis/<group>/<version>, or None when the group/version is not served."""
        try:
            return self.request("GET", f"/apis/{group_version}", verb="get", resource=f"/apis/{group_version}")
        except NotFound:
            return None


def _api_error(exc: Any, method: str, path: str, verb: str, resource: str) -> ApiError:
    status = int(getattr(exc, "status", 0) or 0)
    message, reason = "", ""
    body = getattr(exc, "body", None)
    if body:
        try:
            doc = json.loads(body)
            message, reason = doc.get("message", ""), doc.get("reason", "")
        except (ValueError, AttributeError):
            message = body.decode(errors="replace")[:200] if isinstance(body, bytes) else str(body)[:200]
    message = message or getattr(exc, "reason", "") or f"HTTP {status}"
    cls = {403: Forbidden, 404: NotFound, 409: Conflict, 410: Gone}.get(status, ApiError)
    if status == 401:
        message = f"Unauthorized: the server rejected the credentials ({message})"
    return cls(message, status=status, reason=reason, verb=verb or method.lower(), resource=resource or path)


def _transport_error(exc: Exception, server: str) -> Unreachable:
    text = str(exc)
    low = text.lower()
    if "certificate" in low or "ssl" in low:
        why = "TLS handshake failed (check the cluster's certificate-authority)"
    elif "timed out" in low or "timeout" in low:
        why = "timed out"
    elif "refused" in low:
        why = "connection refused"
    elif "name or service not known" in low or "nodename nor servname" in low or "resolve" in low:
        why = "the host name does not resolve"
    else:
        why = type(exc).__name__
    return Unreachable(f"cannot reach the API server at {server}: {why}")


def backoff_delays(base: float = 0.5, cap: float = 30.0) -> Iterator[float]:
    """Exponential backoff with full jitter."""
    attempt = 0
    while True:
        yield random.uniform(0, min(cap, base * (2**attempt)))
        attempt += 1


def sleep_backoff(delays: Iterator[float]) -> None:
    time.sleep(next(delays))
