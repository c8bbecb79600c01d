"""The one probe server of the long-running commands, and the liveness and readiness rule of their process."""

from __future__ import annotations

import signal
import threading
import urllib.error
import urllib.request

import pytest

from kubectl_kcache.errors import InputError
from kubectl_kcache.runtime import probes
from kubectl_kcache.runtime.process import Process


def get(port: int, path: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
            return resp.status, resp.headers["Content-Type"], resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.headers["Content-Type"], err.read().decode()


@pytest.fixture
def served():
    proc = Process("the test loop")
    reasons: list[str] = []
    proc.reasons.append(lambda: list(reasons))

    def broken() -> probes.Answer:
        raise RuntimeError("no page today")

    extra = [
        probes.Endpoint("/report", "a page", lambda: (200, probes.HTML, b"<p>page</p>")),
        probes.Endpoint("/broken", "always fails", broken),
    ]
    server = probes.serve("127.0.0.1", 0, "kubectl kcache test", probes.endpoints(proc, lambda: "x 1\n", "x", extra))
    yield server.server_address[1], reasons
    server.shutdown()


def test_the_server_answers_its_routes_and_lists_them_on_the_index(served):
    port, reasons = served
    assert get(port, "/healthz") == (200, probes.TEXT, "ok\n")
    assert get(port, "/readyz") == (200, probes.TEXT, "ok\n")
    assert get(port, "/metrics?x=1") == (200, "text/plain; version=0.0.4; charset=utf-8", "x 1\n")
    assert get(port, "/report") == (200, probes.HTML, "<p>page</p>")
    reasons += ["nodes: not synced yet", "not evaluated yet"]
    assert get(port, "/readyz") == (503, probes.TEXT, "not ready:\n- nodes: not synced yet\n- not evaluated yet\n")
    status, kind, index = get(port, "/")
    assert (status, kind) == (200, probes.HTML) and "<title>kubectl kcache test</title>" in index
    for path in ("/metrics", "/report", "/broken", "/healthz", "/readyz"):
        assert f'<a href="{path}">{path}</a>' in index


def test_an_unknown_path_is_404_and_a_failing_route_a_500_that_does_not_stop_the_server(served):
    port, _ = served
    assert get(port, "/nope") == (404, probes.TEXT, "not found\n")
    assert get(port, "/broken") == (500, probes.TEXT, "internal error: RuntimeError: no page today\n")
    assert get(port, "/healthz")[0] == 200


def test_a_port_in_use_is_a_usage_error(served):
    port, _ = served
    with pytest.raises(InputError, match=f"cannot listen on 127.0.0.1:{port}"):
        probes.serve("127.0.0.1", port, "t", [])


def test_liveness_fails_on_a_stalled_loop_and_on_a_thread_that_stopped_unasked():
    proc = Process("the test loop", stall=60)
    dead: list[str] = []
    proc.threads.append(("watch thread(s)", lambda: list(dead)))
    assert proc.liveness() == (True, "ok")
    dead += ["nodes", "pods"]
    assert proc.liveness() == (False, "watch thread(s) stopped: nodes, pods")
    proc.stop.set()  # stopping: threads end because they were asked to
    assert proc.liveness() == (True, "ok")
    proc.beat_at -= 61
    alive, why = proc.liveness()
    assert not alive and why.startswith("the test loop has not made progress for 6")
    proc.beat()
    assert proc.liveness() == (True, "ok")


def test_readiness_gathers_the_reasons_of_every_part():
    proc = Process("the test loop")
    assert proc.readiness() == (True, [])
    proc.reasons += [lambda: [], lambda: ["a"], lambda: ["b", "c"]]
    assert proc.readiness() == (False, ["a", "b", "c"])


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 0)])
def test_a_signal_stops_the_process_and_sigint_exits_130(signum, code):
    proc = Process("the test loop")
    stopped = threading.Event()
    proc.on_stop.append(stopped.set)
    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        proc.install_signals()
        signal.raise_signal(signum)
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    assert proc.stop.is_set() and stopped.is_set()
    assert proc.exit_code(0) == code
