"""Kubeconfig resolution with kubectl's rules (client-go clientcmd): KUBECONFIG merging, relative paths,
connection flags, in-cluster config, errors and proxies; and the Client built on a resolved config."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_kcache.errors import InputError
from kubectl_kcache.kube import kubeconfig
from kubectl_kcache.kube.kubeconfig import Overrides, resolve

API = "https://api.example.com:6443"


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No ~/.kube/config and no service account from the machine running the tests."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr(kubeconfig, "SERVICE_ACCOUNT_DIR", str(tmp_path / "no-service-account"))


def write(path: Path, *, clusters=(), users=(), contexts=(), current: str | None = None, **extra: Any) -> str:
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": n, "cluster": c} for n, c in clusters],
        "users": [{"name": n, "user": u} for n, u in users],
        "contexts": [{"name": n, "context": c} for n, c in contexts],
        **extra,
    }
    if current is not None:
        doc["current-context"] = current
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def simple(path: Path, server: str = API, user: dict[str, Any] | None = None, namespace: str | None = None) -> str:
    ctx: dict[str, Any] = {"cluster": "c", "user": "u"}
    if namespace:
        ctx["namespace"] = namespace
    return write(
        path,
        clusters=[("c", {"server": server})],
        users=[("u", user if user is not None else {"token": "t0"})],
        contexts=[("x", ctx)],
        current="x",
    )


def env_of(*paths: str) -> dict[str, str]:
    return {"KUBECONFIG": os.pathsep.join(paths)}


def cluster_of(r: kubeconfig.Resolved) -> dict[str, Any]:
    return r.config["clusters"][0]["cluster"]


def user_of(r: kubeconfig.Resolved) -> dict[str, Any]:
    return r.config["users"][0]["user"]


# ---- merging several files ---------------------------------------------------------------------------


def test_single_file(tmp_path):
    r = resolve(Overrides(), env=env_of(simple(tmp_path / "config", namespace="team-a")))
    assert r.server == API
    assert r.namespace == "team-a"
    assert r.context_name == "x"
    assert r.cluster_name == "c"
    assert user_of(r) == {"token": "t0"}
    assert not r.in_cluster
    ctx = r.config["contexts"][0]["context"]
    assert r.config["current-context"] == r.config["contexts"][0]["name"]
    assert ctx["namespace"] == "team-a"


def test_namespace_defaults_to_default(tmp_path):
    assert resolve(Overrides(), env=env_of(simple(tmp_path / "config"))).namespace == "default"


def test_first_file_that_sets_current_context_wins(tmp_path):
    a = write(tmp_path / "a", contexts=[("ctx-a", {"cluster": "ca"})], clusters=[("ca", {"server": "https://a"})])
    b = write(
        tmp_path / "b",
        contexts=[("ctx-b", {"cluster": "cb"})],
        clusters=[("cb", {"server": "https://b"})],
        current="ctx-b",
    )
    c = write(tmp_path / "c", current="ctx-a")
    r = resolve(Overrides(), env=env_of(a, b, c))
    assert r.context_name == "ctx-b"
    assert r.server == "https://b"
    r = resolve(Overrides(), env=env_of(c, a, b))
    assert r.context_name == "ctx-a"
    assert r.server == "https://a"


def test_first_definition_of_a_named_entry_wins(tmp_path):
    a = write(
        tmp_path / "a",
        clusters=[("shared", {"server": "https://first"})],
        users=[("me", {"token": "first"})],
        contexts=[("ctx", {"cluster": "shared", "user": "me", "namespace": "first-ns"})],
        current="ctx",
    )
    b = write(
        tmp_path / "b",
        clusters=[("shared", {"server": "https://second"}), ("only-b", {"server": "https://only-b"})],
        users=[("me", {"token": "second"})],
        contexts=[("ctx", {"cluster": "only-b", "user": "me", "namespace": "second-ns"})],
        current="ctx",
    )
    r = resolve(Overrides(), env=env_of(a, b))
    assert r.server == "https://first"
    assert user_of(r) == {"token": "first"}
    assert r.namespace == "first-ns"
    # an entry only the second file defines is still available
    assert resolve(Overrides(cluster="only-b"), env=env_of(a, b)).server == "https://only-b"
    # the other way round
    r = resolve(Overrides(), env=env_of(b, a))
    assert (r.server, user_of(r), r.namespace) == ("https://only-b", {"token": "second"}, "second-ns")


def test_missing_files_are_skipped(tmp_path):
    real = simple(tmp_path / "real")
    r = resolve(Overrides(), env=env_of(str(tmp_path / "missing-1"), real, str(tmp_path / "missing-2")))
    assert r.server == API
    assert r.files == [real]


def test_empty_entries_in_kubeconfig_are_ignored(tmp_path):
    real = simple(tmp_path / "real")
    r = resolve(Overrides(), env={"KUBECONFIG": os.pathsep + real + os.pathsep})
    assert r.server == API


def test_explicit_kubeconfig_ignores_the_environment(tmp_path):
    env_file = simple(tmp_path / "env", server="https://from-env")
    flag_file = simple(tmp_path / "flag", server="https://from-flag")
    assert resolve(Overrides(kubeconfig=flag_file), env=env_of(env_file)).server == "https://from-flag"


def test_default_location_when_kubeconfig_unset(tmp_path):
    simple(Path(os.environ["HOME"]) / ".kube" / "config", server="https://home")
    assert resolve(Overrides(), env={}).server == "https://home"


# ---- relative paths ----------------------------------------------------------------------------------


def test_relative_paths_are_resolved_against_the_file_that_holds_them(tmp_path):
    d = tmp_path / "dir-a"
    a = write(
        d / "config",
        clusters=[("c", {"server": API, "certificate-authority": "pki/ca.crt"})],
        users=[
            (
                "u",
                {
                    "client-certificate": "pki/client.crt",
                    "client-key": "../keys/client.key",
                    "tokenFile": "token",
                },
            )
        ],
        contexts=[("x", {"cluster": "c", "user": "u"})],
        current="x",
    )
    r = resolve(Overrides(), env=env_of(a))
    assert cluster_of(r)["certificate-authority"] == str(d / "pki" / "ca.crt")
    assert user_of(r)["client-certificate"] == str(d / "pki" / "client.crt")
    assert user_of(r)["client-key"] == str(tmp_path / "keys" / "client.key")
    assert user_of(r)["tokenFile"] == str(d / "token")


def test_paths_in_a_second_file_are_relative_to_that_file(tmp_path):
    a = write(tmp_path / "a" / "config", contexts=[("x", {"cluster": "c", "user": "u"})], current="x")
    b = write(
        tmp_path / "b" / "config",
        clusters=[("c", {"server": API, "certificate-authority": "ca.crt"})],
        users=[("u", {"tokenFile": "./t"})],
    )
    r = resolve(Overrides(), env=env_of(a, b))
    assert cluster_of(r)["certificate-authority"] == str(tmp_path / "b" / "ca.crt")
    assert user_of(r)["tokenFile"] == str(tmp_path / "b" / "t")


def test_exec_command_resolved_only_when_it_has_a_slash(tmp_path):
    def exec_user(command: str) -> dict[str, Any]:
        return {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": command}}

    d = tmp_path / "kube"
    a = write(
        d / "config",
        clusters=[("c", {"server": API})],
        users=[("rel", exec_user("./bin/plugin")), ("path", exec_user("kubectl-oidc")), ("abs", exec_user("/x/p"))],
        contexts=[("x", {"cluster": "c", "user": "rel"})],
        current="x",
    )
    assert user_of(resolve(Overrides(), env=env_of(a)))["exec"]["command"] == str(d / "bin" / "plugin")
    assert user_of(resolve(Overrides(user="path"), env=env_of(a)))["exec"]["command"] == "kubectl-oidc"
    assert user_of(resolve(Overrides(user="abs"), env=env_of(a)))["exec"]["command"] == "/x/p"


def test_absolute_paths_and_inline_data_are_untouched(tmp_path):
    a = write(
        tmp_path / "config",
        clusters=[("c", {"server": API, "certificate-authority": "/etc/ca.crt"})],
        users=[("u", {"client-certificate-data": "Zm9v", "client-key-data": "YmFy"})],
        contexts=[("x", {"cluster": "c", "user": "u"})],
        current="x",
    )
    r = resolve(Overrides(), env=env_of(a))
    assert cluster_of(r)["certificate-authority"] == "/etc/ca.crt"
    assert user_of(r) == {"client-certificate-data": "Zm9v", "client-key-data": "YmFy"}


def test_source_files_are_not_modified(tmp_path):
    path = tmp_path / "config"
    a = write(
        path,
        clusters=[("c", {"server": API, "certificate-authority": "ca.crt"})],
        users=[("u", {"token": "x"})],
        contexts=[("x", {"cluster": "c", "user": "u"})],
        current="x",
    )
    before = path.read_text()
    resolve(Overrides(), env=env_of(a))
    assert path.read_text() == before


# ---- overrides ---------------------------------------------------------------------------------------


@pytest.fixture
def two_clusters(tmp_path: Path) -> str:
    return write(
        tmp_path / "config",
        clusters=[
            ("prod", {"server": "https://prod:6443", "certificate-authority-data": "UFJPRA=="}),
            ("dev", {"server": "https://dev:6443", "certificate-authority": "/etc/dev-ca.crt"}),
        ],
        users=[
            ("admin", {"token": "admin-token"}),
            ("viewer", {"client-certificate-data": "Y2VydA==", "client-key-data": "a2V5"}),
        ],
        contexts=[
            ("prod", {"cluster": "prod", "user": "admin", "namespace": "kserve"}),
            ("dev", {"cluster": "dev", "user": "viewer", "namespace": "dev-ns"}),
        ],
        current="prod",
    )


def test_context_flag(two_clusters):
    r = resolve(Overrides(context="dev"), env=env_of(two_clusters))
    assert (r.context_name, r.server, r.namespace) == ("dev", "https://dev:6443", "dev-ns")
    assert "client-certificate-data" in user_of(r)


def test_cluster_and_user_flags(two_clusters):
    r = resolve(Overrides(cluster="dev", user="viewer"), env=env_of(two_clusters))
    assert r.server == "https://dev:6443"
    assert r.cluster_name == "dev"
    assert r.namespace == "kserve"  # still the current context's namespace
    assert "client-key-data" in user_of(r)


def test_namespace_flag(two_clusters):
    assert resolve(Overrides(namespace="other"), env=env_of(two_clusters)).namespace == "other"


def test_server_flag(two_clusters):
    r = resolve(Overrides(server="https://override:443"), env=env_of(two_clusters))
    assert r.server == "https://override:443"
    assert cluster_of(r)["certificate-authority-data"] == "UFJPRA=="


def test_certificate_authority_flag(two_clusters, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = resolve(Overrides(certificate_authority="my-ca.crt"), env=env_of(two_clusters))
    assert cluster_of(r)["certificate-authority"] == str(tmp_path / "my-ca.crt")
    assert "certificate-authority-data" not in cluster_of(r)


def test_insecure_skip_tls_verify_drops_the_ca(two_clusters):
    for ctx in ("prod", "dev"):
        r = resolve(Overrides(context=ctx, insecure_skip_tls_verify=True), env=env_of(two_clusters))
        assert cluster_of(r)["insecure-skip-tls-verify"] is True
        assert "certificate-authority" not in cluster_of(r)
        assert "certificate-authority-data" not in cluster_of(r)


def test_token_flag_replaces_the_users_auth(two_clusters):
    r = resolve(Overrides(context="dev", token="flag-token"), env=env_of(two_clusters))
    assert user_of(r) == {"token": "flag-token"}


def test_server_flag_without_any_kubeconfig():
    r = resolve(Overrides(server="https://bare:6443", token="t"), env={})
    assert r.server == "https://bare:6443"
    assert user_of(r) == {"token": "t"}
    assert r.namespace == "default"


# ---- in-cluster --------------------------------------------------------------------------------------


@pytest.fixture
def service_account(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    sa = tmp_path / "serviceaccount"
    sa.mkdir()
    (sa / "token").write_text("sa-token")
    (sa / "ca.crt").write_text("-----BEGIN CERTIFICATE-----\n")
    (sa / "namespace").write_text("kserve\n")
    monkeypatch.setattr(kubeconfig, "SERVICE_ACCOUNT_DIR", str(sa))
    return sa


IN_CLUSTER_ENV = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}


def test_in_cluster(service_account):
    r = resolve(Overrides(), env=IN_CLUSTER_ENV)
    assert r.in_cluster
    assert r.server == "https://10.96.0.1:443"
    assert r.namespace == "kserve"
    assert cluster_of(r)["certificate-authority"] == str(service_account / "ca.crt")
    assert user_of(r) == {"tokenFile": str(service_account / "token")}


def test_in_cluster_ipv6_and_flags(service_account):
    env = {"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "6443"}
    r = resolve(Overrides(namespace="other", token="flag-token"), env=env)
    assert r.server == "https://[fd00::1]:6443"
    assert r.namespace == "other"
    assert user_of(r) == {"token": "flag-token"}


def test_in_cluster_without_namespace_file(service_account):
    (service_account / "namespace").unlink()
    assert resolve(Overrides(), env=IN_CLUSTER_ENV).namespace == "default"


def test_kubeconfig_wins_over_in_cluster(service_account, tmp_path):
    env = {**IN_CLUSTER_ENV, **env_of(simple(tmp_path / "config"))}
    r = resolve(Overrides(), env=env)
    assert not r.in_cluster
    assert r.server == API


def test_service_host_without_a_token_is_not_in_cluster(service_account):
    (service_account / "token").unlink()
    with pytest.raises(InputError, match="no kubeconfig"):
        resolve(Overrides(), env=IN_CLUSTER_ENV)


# ---- errors ------------------------------------------------------------------------------------------


def test_unknown_context(two_clusters):
    with pytest.raises(InputError, match='context "nope" not found'):
        resolve(Overrides(context="nope"), env=env_of(two_clusters))


def test_current_context_that_does_not_exist(tmp_path):
    a = write(tmp_path / "config", clusters=[("c", {"server": API})], current="gone")
    with pytest.raises(InputError, match='context "gone" not found'):
        resolve(Overrides(), env=env_of(a))


def test_unknown_cluster_and_user(two_clusters):
    with pytest.raises(InputError, match='cluster "nope" not found'):
        resolve(Overrides(cluster="nope"), env=env_of(two_clusters))
    with pytest.raises(InputError, match='user "nope" not found'):
        resolve(Overrides(user="nope"), env=env_of(two_clusters))


def test_no_kubeconfig_at_all(tmp_path):
    with pytest.raises(InputError, match="no kubeconfig found"):
        resolve(Overrides(), env={})
    with pytest.raises(InputError, match="no kubeconfig found"):
        resolve(Overrides(), env=env_of(str(tmp_path / "missing")))


def test_explicit_kubeconfig_missing(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        resolve(Overrides(kubeconfig=str(tmp_path / "missing")), env={})


def test_no_current_context(tmp_path):
    a = write(tmp_path / "config", clusters=[("c", {"server": API})])
    with pytest.raises(InputError, match="no current-context"):
        resolve(Overrides(), env=env_of(a))


@pytest.mark.parametrize(
    "text",
    ["clusters: [\n  - name: c\n   bad", "apiVersion: v1\nkind: Config\nclusters: {a: [}\n", "\tkey: value\n"],
)
def test_malformed_yaml(tmp_path, text):
    path = tmp_path / "config"
    path.write_text(text)
    with pytest.raises(InputError) as exc:
        resolve(Overrides(), env=env_of(str(path)))
    assert str(path) in str(exc.value)
    assert "not valid YAML" in str(exc.value)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("- a\n- b\n", "expected a mapping"),
        ("clusters: {c: {server: x}}\n", "clusters must be a list"),
        ("users:\n- user: {token: x}\n", "needs a name"),
        ("contexts:\n- name: x\n  context: [a]\n", "must be a mapping"),
    ],
)
def test_not_a_kubeconfig(tmp_path, text, words):
    path = tmp_path / "config"
    path.write_text(text)
    with pytest.raises(InputError, match=words):
        resolve(Overrides(), env=env_of(str(path)))


def test_empty_file_is_an_empty_kubeconfig(tmp_path):
    empty = tmp_path / "empty"
    empty.write_text("")
    assert resolve(Overrides(), env=env_of(str(empty), simple(tmp_path / "config"))).server == API


def test_cluster_without_server(tmp_path):
    a = write(
        tmp_path / "config",
        clusters=[("c", {"certificate-authority-data": "eA=="})],
        contexts=[("x", {"cluster": "c"})],
        current="x",
    )
    with pytest.raises(InputError, match='cluster "c" has no server'):
        resolve(Overrides(), env=env_of(a))


# ---- proxies -----------------------------------------------------------------------------------------


def test_cluster_proxy_url_wins(tmp_path):
    a = write(
        tmp_path / "config",
        clusters=[("c", {"server": API, "proxy-url": "http://cluster-proxy:3128"})],
        contexts=[("x", {"cluster": "c"})],
        current="x",
    )
    env = {**env_of(a), "HTTPS_PROXY": "http://env-proxy:8080", "NO_PROXY": "api.example.com"}
    assert resolve(Overrides(), env=env).proxy == "http://cluster-proxy:3128"


@pytest.mark.parametrize("var", ["HTTPS_PROXY", "https_proxy"])
def test_https_proxy_for_https_servers(tmp_path, var):
    env = {**env_of(simple(tmp_path / "config")), var: "http://env-proxy:8080"}
    assert resolve(Overrides(), env=env).proxy == "http://env-proxy:8080"


def test_no_proxy_env_means_no_proxy(tmp_path):
    assert resolve(Overrides(), env=env_of(simple(tmp_path / "config"))).proxy is None


def test_http_proxy_is_not_used_for_https_servers(tmp_path):
    env = {**env_of(simple(tmp_path / "config")), "HTTP_PROXY": "http://plain:8080"}
    assert resolve(Overrides(), env=env).proxy is None
    env = {**env_of(simple(tmp_path / "plain", server="http://api.example.com:8080")), "HTTP_PROXY": "http://plain:1"}
    assert resolve(Overrides(), env=env).proxy == "http://plain:1"


@pytest.mark.parametrize("no_proxy", ["api.example.com", ".example.com", "example.com", "other,api.example.com", "*"])
def test_no_proxy_bypass(tmp_path, no_proxy):
    env = {**env_of(simple(tmp_path / "config")), "HTTPS_PROXY": "http://p:8080", "NO_PROXY": no_proxy}
    assert resolve(Overrides(), env=env).proxy is None


def test_no_proxy_for_another_host_keeps_the_proxy(tmp_path):
    env = {**env_of(simple(tmp_path / "config")), "HTTPS_PROXY": "http://p:8080", "no_proxy": "other.example.org"}
    assert resolve(Overrides(), env=env).proxy == "http://p:8080"


@pytest.mark.parametrize("server", ["https://127.0.0.1:6443", "https://localhost:6443", "https://[::1]:6443"])
def test_loopback_is_never_proxied(tmp_path, server):
    env = {**env_of(simple(tmp_path / "config", server=server)), "HTTPS_PROXY": "http://p:8080"}
    assert resolve(Overrides(), env=env).proxy is None


def test_no_proxy_cidr(tmp_path):
    env = {
        **env_of(simple(tmp_path / "config", server="https://10.1.2.3:6443")),
        "HTTPS_PROXY": "http://p:8080",
        "NO_PROXY": "10.0.0.0/8",
    }
    assert resolve(Overrides(), env=env).proxy is None


# ---- the client on a resolved config -----------------------------------------------------------------


def script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


EXEC_OK = (
    "cat <<'EOF'\n"
    '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"exec-token"}}\n'
    "EOF\n"
)


def exec_kubeconfig(tmp_path: Path, command: str) -> str:
    return write(
        tmp_path / "kube" / "config",
        clusters=[("c", {"server": API})],
        users=[
            (
                "u",
                {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1",
                        "command": command,
                        "interactiveMode": "Never",
                    }
                },
            )
        ],
        contexts=[("x", {"cluster": "c", "user": "u"})],
        current="x",
    )


def bearer(client: Any) -> str:
    return client._api.configuration.api_key.get("authorization")


def test_client_with_exec_plugin(tmp_path):
    from kubectl_kcache.kube.client import Client

    script(tmp_path / "kube" / "bin" / "get-token", EXEC_OK)
    client = Client(Overrides(kubeconfig=exec_kubeconfig(tmp_path, "./bin/get-token")), env={})
    assert bearer(client) == "Bearer exec-token"
    assert client.server == API
    assert client.namespace == "default"


def test_client_with_token_file(tmp_path):
    from kubectl_kcache.kube.client import Client

    (tmp_path / "kube").mkdir()
    (tmp_path / "kube" / "token").write_text("file-token")
    a = write(
        tmp_path / "kube" / "config",
        clusters=[("c", {"server": API})],
        users=[("u", {"tokenFile": "token"})],
        contexts=[("x", {"cluster": "c", "user": "u"})],
        current="x",
    )
    client = Client(Overrides(), env=env_of(a))
    assert bearer(client) == "Bearer file-token"


def test_client_token_file_with_trailing_newline(tmp_path):
    from kubectl_kcache.kube.client import Client

    (tmp_path / "kube").mkdir()
    (tmp_path / "kube" / "token").write_text("file-token\n")
    a = write(
        tmp_path / "kube" / "config",
        clusters=[("c", {"server": API})],
        users=[("u", {"tokenFile": "token"})],
        contexts=[("x", {"cluster": "c", "user": "u"})],
        current="x",
    )
    assert bearer(Client(Overrides(), env=env_of(a))) == "Bearer file-token"


def test_client_in_cluster(service_account):
    from kubectl_kcache.kube.client import Client

    client = Client(Overrides(), env=IN_CLUSTER_ENV)
    assert bearer(client) == "Bearer sa-token"
    assert client.server == "https://10.96.0.1:443"


def test_client_token_flag(tmp_path):
    from kubectl_kcache.kube.client import Client

    client = Client(Overrides(token="flag-token"), env=env_of(simple(tmp_path / "config")))
    assert bearer(client) == "Bearer flag-token"


def test_client_uses_the_resolved_proxy(tmp_path):
    from kubectl_kcache.kube.client import Client

    env = {**env_of(simple(tmp_path / "config")), "HTTPS_PROXY": "http://proxy.example:3128"}
    assert Client(Overrides(), env=env)._api.configuration.proxy == "http://proxy.example:3128"


def test_client_rejects_socks_proxies(tmp_path):
    from kubectl_kcache.kube.client import Client

    a = write(
        tmp_path / "config",
        clusters=[("c", {"server": API, "proxy-url": "socks5://localhost:1080"})],
        users=[("u", {"token": "x"})],
        contexts=[("x", {"cluster": "c", "user": "u"})],
        current="x",
    )
    with pytest.raises(InputError, match="SOCKS"):
        Client(Overrides(), env=env_of(a))


def test_failing_exec_plugin_is_an_input_error(tmp_path):
    from kubectl_kcache.kube.client import Client

    script(tmp_path / "kube" / "bin" / "get-token", "echo 'login required: run sso login' >&2\nexit 1\n")
    with pytest.raises(InputError) as exc:
        Client(Overrides(kubeconfig=exec_kubeconfig(tmp_path, "./bin/get-token")), env={})
    assert "exec" in str(exc.value)
    assert "login required" in str(exc.value)


def test_missing_exec_plugin_is_an_input_error(tmp_path):
    from kubectl_kcache.kube.client import Client

    with pytest.raises(InputError, match="exec"):
        Client(Overrides(kubeconfig=exec_kubeconfig(tmp_path, "./bin/not-there")), env={})


def test_exec_plugin_printing_garbage_is_an_input_error(tmp_path):
    from kubectl_kcache.kube.client import Client

    script(tmp_path / "kube" / "bin" / "get-token", "echo not-json\n")
    with pytest.raises(InputError, match="exec"):
        Client(Overrides(kubeconfig=exec_kubeconfig(tmp_path, "./bin/get-token")), env={})


def test_as_group_requires_as(tmp_path):
    from kubectl_kcache.kube.client import Client

    with pytest.raises(InputError, match="--as-group requires --as"):
        Client(Overrides(impersonate_groups=("admins",)), env=env_of(simple(tmp_path / "config")))
