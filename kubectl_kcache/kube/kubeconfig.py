"""Kubeconfig resolution as kubectl does it (client-go clientcmd), without the Python client's quirks.

- KUBECONFIG is a list of files: missing ones are skipped, and for every value the first file that sets
  it wins (clusters, users and contexts by name; current-context: the first file that sets it). The
  Python client lets the last win; kubectl does not.
- Relative paths are relative to the file that holds them.
- Flags override: --context, --cluster, --user, -n, --server, --certificate-authority,
  --insecure-skip-tls-verify, --tls-server-name, --token, --client-certificate, --client-key,
  --username, --password. (--disable-compression and --cache-dir are taken and change nothing: the plugin
  never asks for compressed answers and keeps no discovery cache.)
- With no kubeconfig at all, in a pod, the in-cluster service account is used.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from typing import Any, cast

import msgspec

from ..errors import InputError

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


class Overrides(msgspec.Struct, frozen=True):
    """The kubectl connection flags."""

    kubeconfig: str | None = None
    context: str | None = None
    cluster: str | None = None
    user: str | None = None
    namespace: str | None = None
    server: str | None = None
    certificate_authority: str | None = None
    insecure_skip_tls_verify: bool = False
    token: str | None = None
    impersonate: str | None = None
    impersonate_groups: tuple[str, ...] = ()
    impersonate_uid: str | None = None
    request_timeout: float | None = None
    tls_server_name: str | None = None
    client_certificate: str | None = None
    client_key: str | None = None
    username: str | None = None
    password: str | None = None


class Resolved(msgspec.Struct):
    """A kubeconfig reduced to what one connection needs."""

    config: dict[str, Any]  # a single-context kubeconfig dict for the client's loader
    context_name: str
    cluster_name: str
    namespace: str
    server: str
    proxy: str | None = None
    in_cluster: bool = False
    files: list[str] = msgspec.field(default_factory=list)


def kubeconfig_files(explicit: str | None, env: Mapping[str, str]) -> list[str]:
    if explicit:
        if not os.path.exists(explicit):
            raise InputError(f"--kubeconfig {explicit}: no such file")
        return [explicit]
    listed = env.get("KUBECONFIG")
    if listed:
        seen: list[str] = []
        for path in listed.split(os.pathsep):
            if path and path not in seen and os.path.exists(path):
                seen.append(path)
        return seen
    default = os.path.join(os.path.expanduser("~"), ".kube", "config")
    return [default] if os.path.exists(default) else []


def _load_yaml(path: str) -> dict[str, Any]:
    import yaml

    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except OSError as exc:
        raise InputError(f"kubeconfig {path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise InputError(f"kubeconfig {path}: not a kubeconfig (not UTF-8 text)") from None
    except yaml.YAMLError as exc:
        raise InputError(f"kubeconfig {path}: not valid YAML: {str(exc).splitlines()[0]}") from None
    except (RecursionError, ValueError, TypeError, OverflowError) as exc:
        raise InputError(f"kubeconfig {path}: not valid YAML: {type(exc).__name__}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError(f"kubeconfig {path}: not a kubeconfig (expected a mapping)")
    return data


def _resolve(base: str, path: Any) -> Any:
    if isinstance(path, str) and path and not os.path.isabs(path):
        return os.path.normpath(os.path.join(base, path))
    return path


def _resolve_paths(entry: dict[str, Any], section: str, base: str) -> None:
    if section == "clusters":
        if "certificate-authority" in entry:
            entry["certificate-authority"] = _resolve(base, entry["certificate-authority"])
    elif section == "users":
        for key in ("client-certificate", "client-key", "tokenFile"):
            if key in entry:
                entry[key] = _resolve(base, entry[key])
        ex = entry.get("exec")
        if isinstance(ex, dict) and isinstance(ex.get("command"), str) and os.sep in ex["command"]:
            ex["command"] = _resolve(base, ex["command"])


def merge_kubeconfigs(paths: list[str]) -> dict[str, Any]:
    """Merge as kubectl does: the first file to define a named entry or current-context wins."""
    merged: dict[str, Any] = {"clusters": [], "users": [], "contexts": [], "current-context": ""}
    names: dict[str, set[str]] = {"clusters": set(), "users": set(), "contexts": set()}
    for path in paths:
        data = _load_yaml(path)
        base = os.path.dirname(os.path.abspath(path))
        if not merged["current-context"] and data.get("current-context"):
            merged["current-context"] = str(data["current-context"])
        for section, inner in (("clusters", "cluster"), ("users", "user"), ("contexts", "context")):
            entries = data.get(section) or []
            if not isinstance(entries, list):
                raise InputError(f"kubeconfig {path}: {section} must be a list")
            for entry in entries:
                if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                    raise InputError(f"kubeconfig {path}: every entry of {section} needs a name")
                if entry["name"] in names[section]:
                    continue
                names[section].add(entry["name"])
                body = entry.get(inner) or {}
                if not isinstance(body, dict):
                    raise InputError(f"kubeconfig {path}: {section} {entry['name']}: {inner} must be a mapping")
                body = copy.deepcopy(body)
                _resolve_paths(body, section, base)
                merged[section].append({"name": entry["name"], inner: body})
    return merged


def _find(config: dict[str, Any], section: str, name: str) -> dict[str, Any] | None:
    for entry in config.get(section, []):
        if entry.get("name") == name:
            return cast(dict[str, Any], entry)
    return None


def _no_proxy_matches(host: str, port: int | None, no_proxy: str) -> bool:
    """Go's http.ProxyFromEnvironment rules: `*`, host names and domain suffixes, IPs, CIDRs, host:port."""
    import ipaddress

    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    for entry in (e.strip().lower() for e in no_proxy.split(",")):
        if not entry:
            continue
        if entry == "*":
            return True
        if ip is not None and "/" in entry:
            try:
                if ip in ipaddress.ip_network(entry, strict=False):
                    return True
            except ValueError:
                pass
            continue
        name, _, entry_port = entry.rpartition(":") if entry.count(":") == 1 else (entry, "", "")
        if entry_port and port is not None and entry_port != str(port):
            continue
        name = name.strip("[]")
        if ip is not None:
            try:
                if ip == ipaddress.ip_address(name):
                    return True
            except ValueError:
                pass
            continue
        name = name.lstrip("*")
        if host == name.lstrip(".") or (name.startswith(".") and host.endswith(name)) or host.endswith("." + name):
            return True
    return False


def _proxy_for(server: str, cluster: Mapping[str, Any], env: Mapping[str, str]) -> str | None:
    if cluster.get("proxy-url"):
        return str(cluster["proxy-url"])
    import ipaddress
    from urllib.parse import urlparse

    parsed = urlparse(server)
    scheme = parsed.scheme or "https"
    host = (parsed.hostname or "").lower()
    if host == "localhost":
        return None
    try:
        if ipaddress.ip_address(host).is_loopback:
            return None
    except ValueError:
        pass
    lowered = {k.lower(): v for k, v in env.items()}
    proxy = lowered.get(f"{scheme}_proxy")
    if not proxy:
        return None
    try:
        port = parsed.port or (443 if scheme == "https" else 80)
    except ValueError:
        port = None
    if _no_proxy_matches(host, port, lowered.get("no_proxy", "")):
        return None
    return proxy


def resolve(over: Overrides, env: Mapping[str, str] | None = None) -> Resolved:
    env = os.environ if env is None else env
    files = kubeconfig_files(over.kubeconfig, env)
    if not files:
        if env.get("KUBERNETES_SERVICE_HOST") and os.path.exists(os.path.join(SERVICE_ACCOUNT_DIR, "token")):
            return _in_cluster(over, env)
        if over.server:
            files = []
        else:
            raise InputError("no kubeconfig found: set KUBECONFIG or --kubeconfig (kubectl's own rules apply)")
    merged = merge_kubeconfigs(files) if files else {"clusters": [], "users": [], "contexts": [], "current-context": ""}
    context_name = str(over.context or merged["current-context"] or "")
    context: dict[str, Any] = {}
    if context_name:
        entry = _find(merged, "contexts", context_name)
        if entry is None:
            raise InputError(f'context "{context_name}" not found in kubeconfig ({", ".join(files)})')
        context = dict(entry.get("context") or {})
    elif not (over.cluster or over.server):
        raise InputError("kubeconfig has no current-context; use --context")
    cluster_name = over.cluster or context.get("cluster") or ""
    user_name = over.user or context.get("user") or ""
    cluster: dict[str, Any] = {}
    if cluster_name:
        found = _find(merged, "clusters", cluster_name)
        if found is None:
            if not over.server:
                raise InputError(f'cluster "{cluster_name}" not found in kubeconfig')
        else:
            cluster = copy.deepcopy(found["cluster"])
    user: dict[str, Any] = {}
    if user_name:
        found = _find(merged, "users", user_name)
        if found is None:
            raise InputError(f'user "{user_name}" not found in kubeconfig')
        user = copy.deepcopy(found["user"])
    if over.server:
        cluster["server"] = over.server
    if over.certificate_authority:
        cluster["certificate-authority"] = os.path.abspath(over.certificate_authority)
        cluster.pop("certificate-authority-data", None)
    if over.insecure_skip_tls_verify:
        cluster["insecure-skip-tls-verify"] = True
        cluster.pop("certificate-authority", None)
        cluster.pop("certificate-authority-data", None)
    if over.tls_server_name:
        cluster["tls-server-name"] = over.tls_server_name
    if over.token:
        user = {"token": over.token}
    _override_user(user, over)
    if not cluster.get("server"):
        raise InputError(f'cluster "{cluster_name or "(none)"}" has no server; use --server')
    cluster["server"] = server_url(cluster["server"], cluster, user, "--server" if over.server else "server")
    namespace = over.namespace or context.get("namespace") or "default"
    single = _single_context(cluster, user, namespace)
    return Resolved(
        config=single,
        context_name=context_name or "",
        cluster_name=cluster_name,
        namespace=namespace,
        server=str(cluster["server"]),
        proxy=_proxy_for(str(cluster["server"]), cluster, env),
        files=files,
    )


def _override_user(user: dict[str, Any], over: Overrides) -> None:
    """--client-certificate/--client-key and --username/--password replace those fields of the user, as
    kubectl's flags do (a file given on the command line is relative to the working folder)."""
    for flag, key in ((over.client_certificate, "client-certificate"), (over.client_key, "client-key")):
        if flag:
            user[key] = os.path.abspath(flag)
            user.pop(f"{key}-data", None)
    if over.username is not None or over.password is not None:
        if over.username is None or over.password is None:
            raise InputError("--username and --password go together")
        user["username"], user["password"] = over.username, over.password


def server_url(server: Any, cluster: Mapping[str, Any], user: Mapping[str, Any], what: str = "server") -> str:
    """The server as a URL. Without a scheme, as client-go's DefaultServerURL: https when TLS is configured
    (a CA, a client certificate or insecure-skip-tls-verify), else http; the host and port must be valid."""
    from urllib.parse import urlsplit

    text = str(server).strip()
    if "://" not in text:
        tls = any(
            cluster.get(k) for k in ("certificate-authority", "certificate-authority-data", "insecure-skip-tls-verify")
        ) or any(user.get(k) for k in ("client-certificate", "client-certificate-data"))
        text = ("https://" if tls else "http://") + text
    from ..credentials import redact_url

    bad = f"{what} {redact_url(str(server))!r} is not a valid URL"
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise InputError(f"{bad} ({exc})") from None
    if parts.scheme not in ("http", "https"):
        raise InputError(f"{bad}: the scheme must be https:// or http://")
    if not parts.hostname:
        raise InputError(f"{bad}: no host")
    if port == 0:
        raise InputError(f"{bad}: port 0")
    return text


def _single_context(cluster: dict[str, Any], user: dict[str, Any], namespace: str) -> dict[str, Any]:
    """A kubeconfig with exactly the one cluster, user and context a connection uses."""
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u", "namespace": namespace}}],
        "current-context": "x",
    }


def _in_cluster(over: Overrides, env: Mapping[str, str]) -> Resolved:
    host = env["KUBERNETES_SERVICE_HOST"]
    port = env.get("KUBERNETES_SERVICE_PORT", "443")
    if ":" in host:
        host = f"[{host}]"
    server = over.server or f"https://{host}:{port}"
    namespace = over.namespace
    if not namespace:
        try:
            with open(os.path.join(SERVICE_ACCOUNT_DIR, "namespace"), encoding="utf-8") as fh:
                namespace = fh.read().strip()
        except OSError:
            namespace = "default"
    cluster: dict[str, Any] = {"server": server, "certificate-authority": os.path.join(SERVICE_ACCOUNT_DIR, "ca.crt")}
    user: dict[str, Any] = {"tokenFile": os.path.join(SERVICE_ACCOUNT_DIR, "token")}
    if over.token:
        user = {"token": over.token}
    single = _single_context(cluster, user, namespace)
    return Resolved(
        config=single,
        context_name="in-cluster",
        cluster_name="in-cluster",
        namespace=namespace,
        server=server,
        proxy=_proxy_for(server, cluster, env),
        in_cluster=True,
    )
