"""kubectl's connection flags that the README promises and kubectl users type, against the real API server:
--client-certificate/--client-key (the server names the certificate's user), --tls-server-name (verified
against the server certificate's names), --as-uid (in the audit log's impersonated user), --username and
--password (sent as basic credentials, which kube-apiserver no longer accepts: it answers as to an anonymous
request, and the plugin says no credentials were taken), --disable-compression and --cache-dir (taken; the
plugin never asks for compressed answers and keeps no discovery cache)."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e


def kcache(cluster, *args: str, kubeconfig: str | None = None) -> subprocess.CompletedProcess:
    env = {**cluster.env, **({"KUBECONFIG": kubeconfig} if kubeconfig else {})}
    return subprocess.run(
        [sys.executable, "-m", "kubectl_kcache", *args], capture_output=True, text=True, env=env, timeout=180
    )


@pytest.fixture
def no_kubeconfig(tmp_path: Path) -> str:
    """A kubeconfig with nothing in it: every connection setting comes from the flags."""
    path = tmp_path / "empty-kubeconfig"
    path.write_text("{}\n")
    return str(path)


def flags(cluster, *extra: str) -> list[str]:
    return ["--server", cluster.server, "--certificate-authority", str(cluster.dir / "pki" / "ca.crt"), *extra]


def test_client_certificate_and_key_authenticate_as_the_certificate_user(cluster, no_kubeconfig):
    pki = cluster.dir / "pki"
    admin = kcache(
        cluster,
        "status",
        *flags(cluster, "--client-certificate", str(pki / "admin.crt"), "--client-key", str(pki / "admin.key")),
        kubeconfig=no_kubeconfig,
    )
    assert admin.returncode == 0, admin.stderr
    alice = kcache(
        cluster,
        "status",
        *flags(cluster, "--client-certificate", str(pki / "alice.crt"), "--client-key", str(pki / "alice.key")),
        kubeconfig=no_kubeconfig,
    )
    assert alice.returncode == 3 and 'User "alice" was refused' in alice.stderr, alice.stderr
    # over the kubeconfig's own user (admin): the flags win
    over = kcache(
        cluster, "status", "--client-certificate", str(pki / "alice.crt"), "--client-key", str(pki / "alice.key")
    )
    assert over.returncode == 3 and 'User "alice" was refused' in over.stderr, over.stderr
    missing = kcache(
        cluster, "status", "--client-certificate", str(pki / "nope.crt"), "--client-key", str(pki / "alice.key")
    )
    assert missing.returncode == 2 and "client-certificate" in missing.stderr and "No such file" in missing.stderr


def test_tls_server_name_is_what_the_certificate_is_checked_against(cluster):
    localhost = cluster.server.replace("127.0.0.1", "localhost")
    wrong = kcache(cluster, "status", "--server", localhost, "--tls-server-name", "wrong.example")
    assert wrong.returncode == 3 and "TLS handshake failed" in wrong.stderr, wrong.stderr
    right = kcache(cluster, "status", "--server", cluster.server, "--tls-server-name", "kubernetes.default")
    assert right.returncode == 0, right.stderr  # a name of the certificate, not the address connected to


def test_as_uid_is_sent_with_the_impersonated_user(cluster):
    mark = cluster.audit_mark()
    proc = kcache(cluster, "status", "--as", "alice", "--as-uid", "uid-1234", "-o", "json")
    assert proc.returncode == 3, proc.stderr  # alice may read nothing
    impersonated = [e.get("impersonatedUser") for e in cluster.audit_events(mark) if e.get("impersonatedUser")]
    assert impersonated, "no impersonated request in the audit log"
    assert all((u["username"], u.get("uid")) == ("alice", "uid-1234") for u in impersonated), impersonated
    alone = kcache(cluster, "status", "--as-uid", "uid-1234")
    assert alone.returncode == 2 and "--as-uid requires --as" in alone.stderr


def test_username_and_password_are_basic_credentials(cluster, no_kubeconfig):
    from kubectl_kcache.kube.auth import Credentials
    from kubectl_kcache.kube.kubeconfig import Overrides, resolve

    over = Overrides(kubeconfig=no_kubeconfig, server=cluster.server, username="ann", password="s3cret:x")
    user = resolve(over, {}).config["users"][0]["user"]
    assert Credentials(user, {}).authorization == "Basic " + base64.b64encode(b"ann:s3cret:x").decode()
    proc = kcache(
        cluster, "status", *flags(cluster, "--username", "ann", "--password", "s3cret:x"), kubeconfig=no_kubeconfig
    )
    assert proc.returncode == 3, proc.stderr
    assert "system:anonymous: no credentials it accepts were sent" in proc.stderr
    assert "s3cret" not in proc.stderr + proc.stdout
    half = kcache(cluster, "status", *flags(cluster, "--username", "ann"), kubeconfig=no_kubeconfig)
    assert half.returncode == 2 and "--username and --password go together" in half.stderr


def test_disable_compression_and_cache_dir_are_taken(cluster, tmp_path):
    cache = tmp_path / "cache"
    proc = kcache(
        cluster,
        "doctor",
        "-o",
        "json",
        "--fail-on",
        "never",
        "--disable-compression",
        "--cache-dir",
        str(cache),
        "-v",
        "8",
    )
    assert proc.returncode in (0, 3), proc.stderr  # 3: whatever this cluster lacks, not the flags
    assert json.loads(proc.stdout)["kind"] == "DoctorReport"
    assert "gzip" not in proc.stderr.lower()
    assert not cache.exists(), "nothing is cached"
