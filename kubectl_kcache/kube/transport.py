"""Requests over urllib3, set up from a single-context kubeconfig as the official Python client sets
itself up (kubernetes/config/kube_config.py), so that the `kubernetes` package is never imported:

- server; certificate-authority (a file, preferred) or -data; insecure-skip-tls-verify; tls-server-name;
  no CA: the system's roots and certifi's; a client certificate (file or data) unless an exec plugin
  gave one (credentials: `auth.py`);
- the resolved proxy (HTTP, with user:password@ as Proxy-Authorization), up to 32 pooled connections (the
  reconcile loop holds 8 watches while 8 workers write);
- the request timeout is the whole budget of a request: a retry (once, only when the connection failed
  before the server answered, never after a timeout) gets what is left of it.
"""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlencode, urlparse

from ..errors import InputError
from . import write_guard
from .auth import Credentials
from .kubeconfig import Resolved
from .status import CutShort, HTTPStatus

# methods whose request may be sent again when the connection broke before an answer
_IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})


class Transport:
    def __init__(self, resolved: Resolved, impersonate: str | None, groups: tuple[str, ...], uid: str | None = None):
        self.cluster: Mapping[str, Any] = resolved.config["clusters"][0].get("cluster") or {}
        self.user: Mapping[str, Any] = resolved.config["users"][0].get("user") or {}
        self.host = str(self.cluster.get("server", "")).rstrip("/")
        self.proxy = resolved.proxy
        self.impersonate, self.groups, self.uid = impersonate, groups, uid
        self.lock = threading.Lock()
        self.credentials = Credentials(self.user, self.cluster)
        self.pool: Any = None  # made at the first request: the CA and certificate files are read then

    @classmethod
    def create(
        cls, resolved: Resolved, impersonate: str | None, groups: tuple[str, ...], uid: str | None = None
    ) -> Transport | None:
        """None for kubeconfigs with an auth-provider (gcp, azure, oidc): the official client serves them."""
        user = resolved.config["users"][0].get("user") or {}
        if user.get("auth-provider"):
            return None
        return cls(resolved, impersonate, groups, uid)

    # ---- connections ----------------------------------------------------------------------------
    def _ssl_context(self) -> Any:
        import ssl

        from urllib3.util.ssl_ import create_urllib3_context

        c, user = self.cluster, self.user
        verify = not c.get("insecure-skip-tls-verify")
        ctx = create_urllib3_context(cert_reqs=ssl.CERT_REQUIRED if verify else ssl.CERT_NONE)
        what = "certificate-authority"
        try:
            if verify:
                if c.get("certificate-authority"):
                    what = f"certificate-authority {c['certificate-authority']}"
                    ctx.load_verify_locations(cafile=str(c["certificate-authority"]))
                elif c.get("certificate-authority-data"):
                    what = "certificate-authority-data"
                    ctx.load_verify_locations(cadata=base64.b64decode(c["certificate-authority-data"]).decode())
                else:
                    ctx.load_default_certs()
                    try:
                        import certifi

                        ctx.load_verify_locations(cafile=certifi.where())
                    except (ImportError, OSError):
                        pass
            cred = self.credentials
            if cred.exec_cert is not None:
                what = "the exec plugin's client certificate"
                _load_cert_data(ctx, cred.exec_cert[0].encode(), cred.exec_cert[1].encode())
            else:
                what = "client-certificate"
                cert = _file_or_data(user, "client-certificate")
                what = "client-key"
                key = _file_or_data(user, "client-key")
                if cert and key:
                    what = "client-certificate and client-key"
                    _load_cert_data(ctx, cert, key)
        except OSError as exc:
            raise InputError(f"kubeconfig: {what}: {exc.strerror or exc}") from None
        except (ValueError, ssl.SSLError) as exc:
            raise InputError(f"kubeconfig: {what}: {exc}") from None
        return ctx

    def _pool(self) -> Any:
        import ssl

        import urllib3

        kw: dict[str, Any] = {"num_pools": 4, "maxsize": 32, "retries": False}
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
        write_guard.install(manager)  # mutating requests are checked by the guard just before they are sent
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
        timeout: float | None,
        stream: bool = False,
    ) -> Any:
        """A 2xx answer: its `Body`, not read yet, or the open response when `stream`. Anything else raises
        `HTTPStatus` with the body read; transport failures raise urllib3's errors (`CutShort` once the answer
        has begun)."""
        import urllib3

        if self.credentials.refresh():
            self.pool = None
        url = self.host + path + ("?" + urlencode(params) if params else "")
        data = None if body is None else body if isinstance(body, (bytes, str)) else json.dumps(body)
        deadline = time.monotonic() + timeout if timeout else None
        reauthenticated = False
        retried = False
        while True:
            left = None if deadline is None else max(deadline - time.monotonic(), 0.001)
            if stream:
                t = urllib3.Timeout(connect=min(left, 30.0) if left else 30.0, read=None)
            else:
                t = urllib3.Timeout(connect=min(left, 30.0) if left else None, read=left)
            h = urllib3.HTTPHeaderDict({"Content-Type": "application/json"})
            h.update(headers)
            if self.credentials.authorization:
                h["Authorization"] = self.credentials.authorization
            if self.impersonate:
                h["Impersonate-User"] = self.impersonate
                for g in self.groups:
                    h.add("Impersonate-Group", g)
                if self.uid:
                    h["Impersonate-Uid"] = self.uid
            try:
                resp = self._connections().request(
                    method, url, body=data, headers=h, preload_content=False, timeout=t, redirect=False
                )
            except (urllib3.exceptions.NewConnectionError, urllib3.exceptions.ProtocolError) as exc:
                # no answer yet (a pooled connection the server had closed, a server restarting): once more
                # with the time that is left, when that is safe
                if retried or _timed_out(exc) or (deadline is not None and time.monotonic() >= deadline):
                    raise
                if not isinstance(exc, urllib3.exceptions.NewConnectionError) and method not in _IDEMPOTENT:
                    raise
                retried = True
                continue
            if 200 <= resp.status <= 299 and stream:
                return resp
            body = Body(resp, deadline)
            if 200 <= resp.status <= 299:
                return body
            content = body.read()
            if resp.status == 401 and not reauthenticated and self.credentials.exec_spec is not None:
                reauthenticated = True  # client-go runs the plugin again on a 401
                if self.credentials.refresh(force=True):
                    self.pool = None
                continue
            raise HTTPStatus(resp.status, resp.reason or "", content)


class Body:
    """An answer whose headers have arrived and whose body is still on its way: `read()` it (once), or
    `close()` the connection it holds. Between the two the server keeps sending, into the socket."""

    def __init__(self, resp: Any, deadline: float | None):
        self.resp, self.deadline = resp, deadline

    @property
    def status(self) -> int:
        return int(self.resp.status)

    def read(self) -> bytes:
        try:
            return _read_body(self.resp, self.deadline)  # a failure here: the server going away mid-answer,
        except TimeoutError:  # never retried; or the budget spent on a slow answer
            raise
        except Exception as exc:
            raise CutShort(str(exc)) from exc
        finally:
            self.resp.release_conn()

    def close(self) -> None:
        """The answer not wanted: its connection closed, not put back with a body half read."""
        self.resp.close()
        self.resp.release_conn()


def _read_body(resp: Any, deadline: float | None) -> bytes:
    """The whole answer, within the deadline: a slow but steady answer is cut when the budget is spent (a
    socket timeout alone restarts with every chunk that arrives), and a stalled one is interrupted from a
    timer at the deadline, not a socket timeout later."""
    if deadline is None:
        return bytes(resp.read())
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("timed out before the answer was read")
    timer = threading.Timer(left, resp.shutdown)
    timer.daemon = True
    timer.start()
    parts = []
    try:
        for chunk in resp.stream(1 << 16):
            parts.append(chunk)
            if time.monotonic() >= deadline:
                raise TimeoutError("timed out reading the answer")
    except TimeoutError:
        raise
    except Exception:
        if time.monotonic() >= deadline:
            raise TimeoutError("timed out reading the answer") from None
        raise
    finally:
        timer.cancel()
    return b"".join(parts)


def _timed_out(exc: BaseException) -> bool:
    return "timed out" in str(exc).lower() or "timeout" in type(exc).__name__.lower()


def _file_or_data(section: Mapping[str, Any], key: str) -> bytes | None:
    """A kubeconfig value given as a file (`key`, preferred, as the official client does) or as base64
    data (`key-data`)."""
    if section.get(key):
        path = str(section[key])
        try:
            with open(path, "rb") as fh:
                return fh.read()
        except OSError as exc:
            raise InputError(f"kubeconfig: {key} {path}: {exc.strerror or exc}") from None
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
