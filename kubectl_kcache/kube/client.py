"""The one door to the API server: raw JSON requests, sent straight over urllib3.

The generated models cost seconds per thousand objects, so lists are read as raw JSON one page at a
time and handed to the caller with `managedFields` dropped. Importing the official client alone costs
~0.3 s (its ~700 modules) at every start, so requests go over urllib3 directly (`_Transport`), set up
from the kubeconfig as the official client sets itself up; only kubeconfigs with an `auth-provider`
(gcp, azure, oidc) use the official client (`kubernetes.client.ApiClient`), which is also what `_api`
gives (built on first use).
"""

from __future__ import annotations

import base64
import copy
import datetime as dt
import json
import logging
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote, urlencode, urlparse

from ..errors import ApiError, Conflict, Forbidden, Gone, InputError, NotFound, Unreachable
from . import write_guard
from .kubeconfig import Overrides, Resolved, resolve

DEFAULT_TIMEOUT = 30.0
PAGE_SIZE = 500
FIELD_MANAGER = "kubectl-kcache"
USER_AGENT = "kubectl-kcache"
MUTATING = frozenset({"POST", "PUT", "PATCH", "DELETE"})


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
        self._user_agent = USER_AGENT
        self._official: Any = None
        self.write_guard: write_guard.Guard | None = None  # checked just before each mutating request is sent
        if overrides.impersonate_groups and not overrides.impersonate:
            raise InputError("--as-group requires --as (kubectl's rule)")
        if self.resolved.proxy and self.resolved.proxy.startswith("socks"):
            raise InputError(f"proxy {self.resolved.proxy}: SOCKS proxies are not supported; use an HTTP proxy")
        self._transport = _Transport.create(self.resolved, overrides.impersonate, overrides.impersonate_groups)
        if self._transport is None:
            self._official = self._build()

    @property
    def _api(self) -> Any:
        """The official client (kubernetes.client.ApiClient) for this connection, built on first use when
        requests go over `_Transport`."""
        if self._official is None:
            self._official = self._build()
        return self._official

    def guarded(self, guard: write_guard.Guard) -> Client:
        """This connection, with every mutating request checked by `guard` at the last moment before it is
        sent (kube/write_guard.py); the guard raises `WriteRefused` to stop it."""
        other = copy.copy(self)
        other.write_guard = guard
        return other

    @property
    def user_agent(self) -> str:
        return self._user_agent

    @user_agent.setter
    def user_agent(self, value: str) -> None:
        self._user_agent = value
        if self._official is not None:
            self._official.user_agent = value

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
        api.user_agent = self._user_agent
        write_guard.install(api.rest_client.pool_manager)
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
        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        params = [(k, v) for k, v in (query or {}).items() if v is not None and v != ""]
        t = self.timeout if timeout is None else timeout
        timeouts = (min(t, 30.0) if t else None, t if t else None) if not stream else (t or None, None)
        guard = self.write_guard if method in MUTATING else None
        if self._transport is not None:
            headers["User-Agent"] = self._user_agent
            try:
                with write_guard.guarding(guard):
                    resp = self._transport.request(method, path, params, headers, body, timeouts)
            except _HTTPStatus as exc:
                raise _api_error(exc, method, path, verb, resource) from None
            except (InputError, write_guard.WriteRefused):  # an exec plugin failing on refresh; a refused write
                raise
            except Exception as exc:  # urllib3 connection, TLS and timeout errors
                raise _transport_error(exc, self.server) from None
        else:
            from kubernetes.client.exceptions import ApiException

            try:
                with write_guard.guarding(guard):
                    resp = self._api.call_api(
                        path,
                        method,
                        query_params=params,
                        header_params=headers,
                        body=body,
                        auth_settings=["BearerToken"],
                        _preload_content=False,
                        _return_http_data_only=True,
                        _request_timeout=timeouts,
                    )
            except ApiException as exc:
                raise _api_error(exc, method, path, verb, resource) from None
            except write_guard.WriteRefused:
                raise
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
                    page.clear()  # the raw page goes now, not after the next page has arrived (peak memory)
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
        opened: Callable[[], None] | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Watch events ({"type", "object"}) from resource_version. An ERROR event with code 410 raises Gone.
        `opened` is called once the server has accepted the watch (before any event)."""
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
        if opened is not None:
            opened()
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


class _HTTPStatus(Exception):
    """A response outside 2xx from `_Transport` (the attributes `_api_error` reads from ApiException)."""

    def __init__(self, status: int, reason: str, body: bytes):
        super().__init__(f"HTTP {status}")
        self.status = status
        self.reason = reason
        self.body = body


class _Transport:
    """Requests over urllib3, set up from a single-context kubeconfig as the official Python client sets
    itself up (kubernetes/config/kube_config.py), so that the `kubernetes` package is never imported:

    - server (trailing "/" dropped); certificate-authority (a file, preferred) or -data; insecure-skip-
      tls-verify; tls-server-name; no CA: the system's roots and certifi's;
    - credentials in the official client's order: token file or token (trimmed), else an exec plugin
      (token or client certificate, re-run when its credential expires or on a 401), else username and
      password; a client certificate (file or data) from the kubeconfig unless the plugin gave one;
    - the resolved proxy (HTTP, with user:password@ as Proxy-Authorization), one retry, up to 32 pooled
      connections (the reconcile loop holds 8 watches while 8 workers write);
    - a token file is read again after a minute (rotated service-account tokens), as client-go does.

    Kubeconfigs with an auth-provider return None from `create`: the official client handles them.
    """

    TOKEN_FILE_TTL = 60.0
    EXPIRY_SKEW = 60.0

    @classmethod
    def create(cls, resolved: Resolved, impersonate: str | None, groups: tuple[str, ...]) -> _Transport | None:
        user = resolved.config["users"][0].get("user") or {}
        if user.get("auth-provider"):
            return None
        return cls(resolved, impersonate, groups)

    def __init__(self, resolved: Resolved, impersonate: str | None, groups: tuple[str, ...]):
        self.cluster: Mapping[str, Any] = resolved.config["clusters"][0].get("cluster") or {}
        self.user: Mapping[str, Any] = resolved.config["users"][0].get("user") or {}
        self.host = str(self.cluster.get("server", "")).rstrip("/")
        self.proxy = resolved.proxy
        self.impersonate, self.groups = impersonate, groups
        self.lock = threading.Lock()
        self.authorization = ""
        self.token_file = ""
        self.token_read = 0.0
        self.exec_spec: Mapping[str, Any] | None = None
        self.exec_cert: tuple[str, str] | None = None
        self.expiry: float | None = None
        self._authenticate()
        self.pool: Any = None  # made at the first request: the CA and certificate files are read then

    # ---- credentials ----------------------------------------------------------------------------
    def _authenticate(self) -> None:
        user = self.user
        if "tokenFile" in user:
            self.token_file = str(user["tokenFile"])
            try:
                self._read_token_file()
            except OSError as exc:
                raise InputError(f"kubeconfig: {exc}") from None
            if self.authorization:
                return
        elif user.get("token"):
            self.authorization = f"Bearer {str(user['token']).strip()}"
            return
        if "exec" in user:
            self.exec_spec = user["exec"] if isinstance(user["exec"], Mapping) else {}
            try:
                self._run_exec()
                return
            except _ExecFailed as exc:
                self.exec_spec = None
                if not (user.get("client-certificate") or user.get("client-certificate-data")):
                    raise InputError(f"kubeconfig exec credential plugin failed: {exc}") from None
        if "username" in user and "password" in user:
            basic = base64.b64encode(f"{user['username']}:{user['password']}".encode()).decode()
            self.authorization = f"Basic {basic}"

    def _read_token_file(self) -> None:
        with open(self.token_file, encoding="utf-8") as fh:
            token = fh.read().strip()
        self.token_read = time.monotonic()
        self.authorization = f"Bearer {token}" if token else ""

    def _run_exec(self) -> None:
        """Run the credential plugin (client.authentication.k8s.io ExecCredential); errors as the official
        client words them."""
        spec = self.exec_spec or {}
        for key in ("command", "apiVersion"):
            if key not in spec:
                raise _ExecFailed(f"exec: malformed request. missing key '{key}'")
        api_version = spec["apiVersion"]
        env = dict(os.environ)
        try:
            args = [str(spec["command"]), *(str(a) for a in spec.get("args") or [])]
            for item in spec.get("env") or []:
                env[str(item["name"])] = str(item["value"])
        except (KeyError, TypeError) as exc:
            raise _ExecFailed(f"exec: malformed request: {exc}") from None
        interactive = spec.get("interactiveMode") != "Never" and all(
            getattr(stream, "isatty", lambda: False)() for stream in (sys.stdin, sys.stdout)
        )
        info: dict[str, Any] = {"apiVersion": api_version, "kind": "ExecCredential",
                                "spec": {"interactive": interactive}}
        if spec.get("provideClusterInfo"):
            info["spec"]["cluster"] = self._exec_cluster_info()
        env["KUBERNETES_EXEC_INFO"] = json.dumps(info)
        try:
            proc = subprocess.run(
                args, env=env, text=True, stdout=subprocess.PIPE,
                stderr=None if interactive else subprocess.PIPE,
                stdin=None if interactive else subprocess.DEVNULL,
            )
        except OSError as exc:
            raise _ExecFailed(str(exc)) from None
        if proc.returncode != 0:
            msg = f"exec: process returned {proc.returncode}"
            stderr = (proc.stderr or "").strip()
            raise _ExecFailed(f"{msg}. {stderr}" if stderr else msg)
        try:
            data = json.loads(proc.stdout)
        except ValueError as exc:
            raise _ExecFailed(f"exec: failed to decode process output: {exc}") from None
        if not isinstance(data, dict):
            raise _ExecFailed("exec: malformed response. missing key 'apiVersion'")
        for key in ("apiVersion", "kind", "status"):
            if key not in data:
                raise _ExecFailed(f"exec: malformed response. missing key '{key}'")
        if data["apiVersion"] != api_version:
            raise _ExecFailed(f"exec: plugin api version {data['apiVersion']} does not match {api_version}")
        status = data["status"] if isinstance(data["status"], dict) else {}
        if status.get("token"):
            self.authorization = f"Bearer {str(status['token']).strip()}"
        elif status.get("clientCertificateData"):
            if not status.get("clientKeyData"):
                raise _ExecFailed("exec: missing clientKeyData field in plugin output")
            self.exec_cert = (str(status["clientCertificateData"]), str(status["clientKeyData"]))
        else:
            raise _ExecFailed("exec: missing token or clientCertificateData field in plugin output")
        self.expiry = None
        if status.get("expirationTimestamp"):
            try:
                stamp = str(status["expirationTimestamp"]).replace("Z", "+00:00")
                self.expiry = dt.datetime.fromisoformat(stamp).timestamp()
            except ValueError:
                self.expiry = None

    def _exec_cluster_info(self) -> dict[str, Any]:
        """The ExecCredential's spec.cluster (client-go's clientauthentication Cluster)."""
        c = self.cluster
        out: dict[str, Any] = {"server": c.get("server", "")}
        for key in ("tls-server-name", "insecure-skip-tls-verify", "proxy-url"):
            if c.get(key):
                out[key] = c[key]
        ca = c.get("certificate-authority-data")
        if not ca and c.get("certificate-authority"):
            try:
                with open(str(c["certificate-authority"]), "rb") as fh:
                    ca = base64.b64encode(fh.read()).decode()
            except OSError:
                ca = None
        if ca:
            out["certificate-authority-data"] = ca
        for ext in c.get("extensions") or []:
            if isinstance(ext, Mapping) and ext.get("name") == "client.authentication.k8s.io/exec":
                out["config"] = ext.get("extension")
        return out

    def _refresh(self, force: bool = False) -> None:
        """Before a request: a new exec credential when expired (or after a 401), a token file re-read."""
        now = time.monotonic()
        if self.token_file and now - self.token_read > self.TOKEN_FILE_TTL:
            with self.lock:
                if now - self.token_read > self.TOKEN_FILE_TTL:
                    try:
                        self._read_token_file()
                    except OSError:
                        self.token_read = now  # keep the token we have; try again later
        if self.exec_spec is not None and (force or (self.expiry is not None
                                                      and time.time() >= self.expiry - self.EXPIRY_SKEW)):
            with self.lock:
                if force or (self.expiry is not None and time.time() >= self.expiry - self.EXPIRY_SKEW):
                    cert = self.exec_cert
                    try:
                        self._run_exec()
                    except _ExecFailed as exc:
                        raise InputError(f"kubeconfig exec credential plugin failed: {exc}") from None
                    if self.exec_cert != cert:
                        self.pool = None

    # ---- connections ----------------------------------------------------------------------------
    def _ssl_context(self) -> Any:
        import ssl

        from urllib3.util.ssl_ import create_urllib3_context

        c, user = self.cluster, self.user
        verify = not c.get("insecure-skip-tls-verify")
        ctx = create_urllib3_context(cert_reqs=ssl.CERT_REQUIRED if verify else ssl.CERT_NONE)
        try:
            if verify:
                if c.get("certificate-authority"):
                    ctx.load_verify_locations(cafile=str(c["certificate-authority"]))
                elif c.get("certificate-authority-data"):
                    ctx.load_verify_locations(cadata=base64.b64decode(c["certificate-authority-data"]).decode())
                else:
                    ctx.load_default_certs()
                    try:
                        import certifi

                        ctx.load_verify_locations(cafile=certifi.where())
                    except (ImportError, OSError):
                        pass
            if self.exec_cert is not None:
                _load_cert_data(ctx, self.exec_cert[0].encode(), self.exec_cert[1].encode())
            else:
                cert = _file_or_data(user, "client-certificate")
                key = _file_or_data(user, "client-key")
                if cert and key:
                    _load_cert_data(ctx, cert, key)
        except (OSError, ValueError, ssl.SSLError) as exc:
            raise InputError(f"kubeconfig: {exc}") from None
        return ctx

    def _pool(self) -> Any:
        import ssl

        import urllib3

        kw: dict[str, Any] = {"num_pools": 4, "maxsize": 32, "retries": 1}
        if self.host.startswith("https"):
            verify = not self.cluster.get("insecure-skip-tls-verify")
            if not verify:  # the user asked for it; kubectl does not warn on every request either
                urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
            kw.update(ssl_context=self._ssl_context(), cert_reqs=ssl.CERT_REQUIRED if verify else ssl.CERT_NONE)
            if self.cluster.get("tls-server-name"):
                kw["server_hostname"] = str(self.cluster["tls-server-name"])
        if self.proxy:
            parsed = urlparse(self.proxy)
            headers = None
            if parsed.username is not None:
                auth = f"{unquote(parsed.username)}:{unquote(parsed.password or '')}"
                headers = urllib3.make_headers(proxy_basic_auth=auth)
            manager: Any = urllib3.ProxyManager(self.proxy, proxy_headers=headers, **kw)
        else:
            manager = urllib3.PoolManager(**kw)
        write_guard.install(manager)
        return manager

    def _connections(self) -> Any:
        """The pool manager, made at the first request (and again after an exec plugin's new certificate)."""
        pool = self.pool
        if pool is None:
            with self.lock:
                if self.pool is None:
                    self.pool = self._pool()
                pool = self.pool
        return pool

    # ---- requests -------------------------------------------------------------------------------
    def request(
        self,
        method: str,
        path: str,
        params: list[tuple[str, Any]],
        headers: Mapping[str, str],
        body: Any,
        timeouts: tuple[float | None, float | None],
    ) -> Any:
        """The open response (2xx); anything else raises `_HTTPStatus` with the body read."""
        import urllib3

        self._refresh()
        url = self.host + path + ("?" + urlencode(params) if params else "")
        data = None if body is None else body if isinstance(body, (bytes, str)) else json.dumps(body)
        timeout = urllib3.Timeout(connect=timeouts[0], read=timeouts[1])
        for attempt in (1, 2):
            h = urllib3.HTTPHeaderDict({"Content-Type": "application/json"})
            h.update(headers)
            if self.authorization:
                h["Authorization"] = self.authorization
            if self.impersonate:
                h["Impersonate-User"] = self.impersonate
                for g in self.groups:
                    h.add("Impersonate-Group", g)
            resp = self._connections().request(method, url, body=data, headers=h, preload_content=False,
                                               timeout=timeout)
            if 200 <= resp.status <= 299:
                return resp
            content = resp.data
            resp.release_conn()
            if resp.status == 401 and attempt == 1 and self.exec_spec is not None:
                self._refresh(force=True)  # client-go runs the plugin again on a 401
                continue
            raise _HTTPStatus(resp.status, resp.reason or "", content)
        raise AssertionError("unreachable")


class _ExecFailed(Exception):
    pass


def _file_or_data(section: Mapping[str, Any], key: str) -> bytes | None:
    """A kubeconfig value given as a file (`key`, preferred, as the official client does) or as base64
    data (`key-data`)."""
    if section.get(key):
        with open(str(section[key]), "rb") as fh:
            return fh.read()
    if section.get(f"{key}-data"):
        return base64.b64decode(section[f"{key}-data"])
    return None


def _load_cert_data(ctx: Any, cert: bytes, key: bytes) -> None:
    """A client certificate and key given as PEM data: ssl loads them only from files, so they are written
    to a private temporary folder and removed at once."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="kcache-") as d:
        cert_path, key_path = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
        for path, content in ((cert_path, cert), (key_path, key)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(content)
        ctx.load_cert_chain(cert_path, key_path)


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
