"""The client against a real HTTP server on 127.0.0.1 (http.server in a thread, no fake client object):
a list returns its own resourceVersion even while another thread lists on the same Client; the words and
exit codes of transport failures (a server dying mid-response, a timeout that is the whole budget, bad
--server values, a missing CA file)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_kcache.cli import run
from kubectl_kcache.errors import EXIT_INCOMPLETE, EXIT_USAGE, Unreachable
from kubectl_kcache.kube import listing
from kubectl_kcache.kube import resources as r
from kubectl_kcache.kube.client import Client
from kubectl_kcache.kube.kubeconfig import Overrides

ROOT = Path(__file__).resolve().parents[3]

Handler = Callable[[BaseHTTPRequestHandler], None]


@contextmanager
def server(routes: dict[str, Handler]) -> Iterator[str]:
    """An HTTP server on a free port of 127.0.0.1 answering each path (without the query) with its
    handler; 404 otherwise. Yields its URL."""

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            handler = routes.get(self.path.split("?")[0])
            if handler is None:
                self.send_error(404)
                return
            handler(self)

        def log_message(self, *_args: Any) -> None:
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def answer(doc: Any) -> Handler:
    body = json.dumps(doc).encode()

    def handle(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    return handle


def node_list(rv: str, *names: str) -> dict[str, Any]:
    return {
        "kind": "NodeList",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": rv},
        "items": [{"metadata": {"name": n}} for n in names],
    }


def client_for(url: str, timeout: float | None = None) -> Client:
    return Client(Overrides(server=url, token="t", request_timeout=timeout), env={})


# ---- a list's resourceVersion belongs to that list --------------------------------------------------


def test_interleaved_lists_on_one_client_each_return_their_own_resource_version():
    """Two informer-like threads on one Client: A's list is still being converted when B's list completes.
    A must get its own list's resourceVersion (100), not B's (200): a watch from B's would miss events.
    (The client used to keep the last list's resourceVersion on itself and return that.)"""
    cms = {
        "kind": "ConfigMapList",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": "200"},
        "items": [{"metadata": {"name": "c", "namespace": "kserve"}}],
    }
    routes = {"/api/v1/nodes": answer(node_list("100", "n1")), "/api/v1/namespaces/kserve/configmaps": answer(cms)}
    with server(routes) as url:
        client = client_for(url)
        a_converting, b_done = threading.Event(), threading.Event()
        result: dict[str, Any] = {}

        def convert_a(item: Any) -> Any:
            a_converting.set()
            assert b_done.wait(10), "B did not finish"
            return item

        def list_a() -> None:
            result["a"] = client.list_all(r.NODES, convert=convert_a)

        thread = threading.Thread(target=list_a)
        thread.start()
        assert a_converting.wait(10)
        result["b"] = client.list_all(r.CONFIGMAPS, "kserve")
        b_done.set()
        thread.join(10)
        assert result["b"][1] == "200"
        items, resource_version = result["a"]
        assert [i["metadata"]["name"] for i in items] == ["n1"]
        assert resource_version == "100"


def test_list_follows_continue_tokens_and_returns_the_first_pages_resource_version():
    pages = iter(
        [
            {
                "kind": "NodeList",
                "metadata": {"resourceVersion": "7", "continue": "next"},
                "items": [{"metadata": {"name": "a"}}],
            },
            {"kind": "NodeList", "metadata": {"resourceVersion": "7"}, "items": [{"metadata": {"name": "b"}}]},
        ]
    )

    def handle(h: BaseHTTPRequestHandler) -> None:
        answer(next(pages))(h)

    with server({"/api/v1/nodes": handle}) as url:
        listed = client_for(url).list_all(r.NODES, page_size=1)
    assert [i["metadata"]["name"] for i in listed.items] == ["a", "b"]
    assert [i["kind"] for i in listed.items] == ["Node", "Node"]  # filled in from the resource
    assert listed.resource_version == "7"


# ---- transport failures in words ----------------------------------------------------------------------


def dies_mid_response(h: BaseHTTPRequestHandler) -> None:
    """Headers promising 100,000 bytes, 20 of them, then the connection closes (a server that crashed)."""
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", "100000")
    h.end_headers()
    h.wfile.write(b'{"kind":"NodeList","')
    h.wfile.flush()
    h.connection.shutdown(socket.SHUT_RDWR)
    h.close_connection = True


def test_server_dying_mid_response_names_the_cause():
    with server({"/api/v1/nodes": dies_mid_response}) as url, pytest.raises(Unreachable) as exc:
        client_for(url).list_all(r.NODES)
    message = str(exc.value)
    assert message == (
        f"cannot reach the API server at {url}: the server closed the connection in the middle of its response"
    )


def test_server_dying_mid_response_on_the_command_line(capsys, tmp_path):
    with server({"/api/v1/nodes": dies_mid_response}) as url:
        code = run(["doctor", "--server", url, "--token", "t", "--kubeconfig", empty_kubeconfig(tmp_path)])
    err = capsys.readouterr().err
    assert code == EXIT_INCOMPLETE
    assert (
        err == f"error: cannot reach the API server at {url}: the server closed the connection in the middle "
        "of its response\n"
    )
    for word in ("MaxRetryError", "ProtocolError", "IncompleteRead", "Traceback"):
        assert word not in err


def test_request_timeout_is_the_whole_budget():
    """A server that accepts and never answers: --request-timeout 1s ends the request after ~1 s (no retry
    doubling it) and says so."""

    def hang(h: BaseHTTPRequestHandler) -> None:
        time.sleep(5)

    with server({"/api/v1/nodes": hang}) as url:
        start = time.monotonic()
        with pytest.raises(Unreachable) as exc:
            client_for(url, timeout=1.0).list_all(r.NODES)
        took = time.monotonic() - start
    assert 0.9 <= took < 1.8, took
    assert str(exc.value) == f"cannot reach the API server at {url}: timed out after 1s (--request-timeout)"


def empty_kubeconfig(tmp_path: Path) -> str:
    path = tmp_path / "empty-kubeconfig"
    path.write_text("apiVersion: v1\nkind: Config\n")
    return str(path)


def run_cli(*argv: str) -> subprocess.CompletedProcess[str]:
    """The command in a child process, as a user runs it (warnings and all)."""
    return subprocess.run(
        [sys.executable, "-m", "kubectl_kcache", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"},
    )


def test_server_without_a_scheme_is_taken_as_kubectl_takes_it(tmp_path):
    """No scheme and no TLS settings: http://, as client-go's DefaultServerURL; no urllib3 FutureWarning."""
    proc = run_cli("doctor", "--server", "127.0.0.1:1", "--token", "t", "--kubeconfig", empty_kubeconfig(tmp_path))
    assert proc.returncode == EXIT_INCOMPLETE
    assert proc.stderr == "error: cannot reach the API server at http://127.0.0.1:1: connection refused\n"


def test_server_without_a_scheme_with_tls_settings_is_https(tmp_path):
    proc = run_cli(
        "doctor",
        "--server",
        "127.0.0.1:1",
        "--token",
        "t",
        "--insecure-skip-tls-verify",
        "--kubeconfig",
        empty_kubeconfig(tmp_path),
    )
    assert proc.returncode == EXIT_INCOMPLETE
    assert proc.stderr == "error: cannot reach the API server at https://127.0.0.1:1: connection refused\n"


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("ht!tp://::::", "not a valid URL"),
        ("ftp://example.com", "the scheme must be https:// or http://"),
        ("https://", "no host"),
        ("https://example.com:99999", "not a valid URL"),
    ],
)
def test_malformed_server_is_a_usage_error(tmp_path, value, why):
    proc = run_cli("doctor", "--server", value, "--token", "t", "--kubeconfig", empty_kubeconfig(tmp_path))
    assert proc.returncode == EXIT_USAGE, proc.stderr
    assert proc.stderr.startswith(f"error: --server {value!r} is not a valid URL")
    assert why in proc.stderr
    assert len(proc.stderr.splitlines()) == 1


def test_missing_ca_file_names_its_path(tmp_path):
    missing = tmp_path / "no-such-ca.crt"
    path = tmp_path / "kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "x",
                "clusters": [
                    {"name": "c", "cluster": {"server": "https://127.0.0.1:1", "certificate-authority": str(missing)}}
                ],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
            }
        )
    )
    proc = run_cli("doctor", "--kubeconfig", str(path))
    assert proc.returncode == EXIT_USAGE
    assert proc.stderr == f"error: kubeconfig: certificate-authority {missing}: No such file or directory\n"


@pytest.mark.parametrize("content", [bytes(range(256)) * 4, b"\xff\xfe\x00garbage\x00", b"\x00" * 100])
def test_binary_garbage_kubeconfig_is_a_usage_error(tmp_path, content):
    path = tmp_path / "kubeconfig"
    path.write_bytes(content)
    proc = run_cli("doctor", "--kubeconfig", str(path))
    assert proc.returncode == EXIT_USAGE, proc.stderr
    assert proc.stderr.startswith(f"error: kubeconfig {path}: ")
    assert len(proc.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    ("body", "token"),
    [
        (
            b'{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"7","continue":"eyJ2"},"items":[]}',
            "eyJ2",
        ),
        # a custom resource's list: the API server writes its metadata after the items
        (
            b'{"apiVersion":"x/v1","items":[{"metadata":{"continue":"no"}}],"kind":"L","metadata":{"continue":"yes"}}',
            "yes",
        ),
        # a built-in list whose last item's metadata is the last one in the text: not the list's
        (b'{"kind":"NodeList","metadata":{"continue":"tok"},"items":[{"metadata":{"continue":"no"}}]}', "tok"),
        (b'{"apiVersion":"x/v1","items":[{"metadata":{"continue":"no"}}],"kind":"L","metadata":{}}', ""),
        (b'{"kind":"L","x":{"metadata":{"continue":"no"}},"metadata":{"continue":"yes"},"items":[]}', "yes"),
        (b'{"kind":"NodeList","metadata":{"resourceVersion":"7"},"items":[]}', ""),
        (b'{"kind":"NodeList","metadata":null,"items":[]}', ""),
        (b'{"kind":"NodeList","items":[]}', ""),
        (b"[1, 2]", ""),
        (b"<html>a proxy's page</html>", ""),
        (b'{"metadata":{"continue":7}}', ""),
    ],
)
def test_a_pages_continue_token_is_read_without_its_items(body, token):
    assert listing.continue_of(body) == token
