"""--request-timeout is the budget of the whole command (every page, list and retry), on the real API
server behind a proxy that stalls, or answers slowly but steadily."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import builders as b

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]


def proxy(cluster, *extra: str) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.e2e.tcp_proxy", "127.0.0.1", str(cluster.state["ports"]["apiserver"]), *extra],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    return proc, int(proc.stdout.readline())


def startup(cluster) -> float:
    """What a run costs besides its requests, on this machine now: the doctor on a bundled example (the same
    imports, and more work than a failed read leaves)."""
    started = time.monotonic()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "kubectl_kcache",
            "doctor",
            "--from-file",
            str(ROOT / "examples" / "healthy-cluster.yaml"),
            "-o",
            "json",
        ],
        capture_output=True,
        env=cluster.env,
        cwd=ROOT,
        timeout=60,
        check=True,
    )
    return time.monotonic() - started


def timed(cluster, port: int, *args: str) -> tuple[subprocess.CompletedProcess, float]:
    """A run against the proxy, and how long it took beyond its start-up."""
    base = startup(cluster)
    started = time.monotonic()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "kubectl_kcache",
            *args,
            "--server",
            f"https://127.0.0.1:{port}",
            "--request-timeout",
            "3s",
        ],
        capture_output=True,
        text=True,
        env=cluster.env,
        cwd=ROOT,
        timeout=120,
    )
    return proc, time.monotonic() - started - base


@pytest.mark.parametrize("command", [["doctor"], ["status"], ["dump", "--file", "/dev/null"]])
def test_a_stalled_api_server_costs_one_budget_not_one_per_request(cluster, command):
    pxy, port = proxy(cluster)
    try:
        pxy.send_signal(19)  # SIGSTOP: connections are accepted by the kernel, nothing is answered
        proc, took = timed(cluster, port, *command)
    finally:
        pxy.kill()
    assert proc.returncode == 3, proc.stderr
    assert "timed out after 3s (--request-timeout)" in proc.stderr and "Traceback" not in proc.stderr
    assert took < 3 + 1.5, f"{' '.join(command)} took {took:.1f}s beyond its start-up for a 3s budget"


def test_a_slow_but_steady_answer_is_cut_when_the_budget_is_spent(cluster):
    # ~1.2 MB of nodes, answered at 40 KB/s: 30 s to read in full, each chunk well within a socket timeout
    nodes = [b.node(f"slow-{i:04d}", {"pool": "gpu"}, ready=None) for i in range(700)]
    for n in nodes:
        n["metadata"]["annotations"] = {"kcache.test/padding": "x" * 1500}
    cluster.create(nodes)
    pxy, port = proxy(cluster, "40000")
    try:
        proc, took = timed(cluster, port, "status")
    finally:
        pxy.kill()
    assert proc.returncode == 3, proc.stderr
    assert "timed out after 3s (--request-timeout)" in proc.stderr
    assert took < 3 + 1.5, f"status took {took:.1f}s beyond its start-up for a 3s budget"
