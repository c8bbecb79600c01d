"""The official Python client (`kubernetes.client.ApiClient`), for kubeconfigs with an `auth-provider`
(gcp, azure, oidc), which only it implements. Importing it costs ~0.35 s, so nothing else uses it."""

from __future__ import annotations

import logging
from typing import Any

from ..errors import InputError
from . import write_guard
from .kubeconfig import Overrides, Resolved


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


def build(resolved: Resolved, overrides: Overrides, user_agent: str) -> Any:
    """An ApiClient for this connection (with the same user, proxy and impersonation)."""
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
            resolved.config,
            client_configuration=cfg,
            persist_config=False,
            temp_file_path=tempfile.gettempdir(),
        )
    except (ConfigException, OSError, ValueError) as exc:
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
    user = resolved.config["users"][0]["user"]
    if exec_errors and "exec" in user and not cfg.api_key.get("authorization") and not cfg.cert_file:
        raise InputError(f"kubeconfig exec credential plugin failed: {exec_errors[-1]}")
    if resolved.proxy:
        cfg.proxy = resolved.proxy
    cfg.retries = 0
    api = kclient.ApiClient(cfg)
    api.user_agent = user_agent
    write_guard.install(api.rest_client.pool_manager)
    _install_impersonation(api, overrides)
    return api


def _install_impersonation(api: Any, overrides: Overrides) -> None:
    """Impersonate-Group must be sent once per group; the client's header dict would fold them."""
    user, groups = overrides.impersonate, overrides.impersonate_groups
    if not user and not groups:
        return
    from urllib3 import HTTPHeaderDict

    rest = api.rest_client
    original = rest.request

    def request(method: str, url: str, query_params: Any = None, headers: Any = None, **kw: Any) -> Any:
        h = HTTPHeaderDict(headers or {})
        h["Impersonate-User"] = user or ""
        for g in groups:
            h.add("Impersonate-Group", g)
        if overrides.impersonate_uid:
            h["Impersonate-Uid"] = overrides.impersonate_uid
        return original(method, url, query_params=query_params, headers=h, **kw)

    rest.request = request


def request(
    api: Any,
    method: str,
    path: str,
    params: list[tuple[str, Any]],
    headers: dict[str, str],
    body: Any,
    timeout: float | None,
    stream: bool,
) -> Any:
    """Like Transport.request: (status, bytes) or the open response; HTTP errors as the official
    ApiException (it has the status, reason and body that `status.api_error` reads)."""
    timeouts = (timeout or None, None) if stream else (min(timeout, 30.0) if timeout else None, timeout or None)
    resp = api.call_api(
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
    if stream:
        return resp
    return resp.status, resp.data
