"""Read failures: said once per cause, then with backoff; counted by resource and reason; cleared on success."""

from __future__ import annotations

from kubectl_kcache.errors import ApiError, Forbidden, Gone, NotFound, Unreachable
from kubectl_kcache.runtime.read_errors import ReadErrors, one_line, reason_of


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_once_per_cause_then_with_backoff():
    clock, lines = Clock(), []
    errors = ReadErrors(lines.append, clock, first_repeat=30, max_repeat=120)
    denied = Forbidden('nodes is forbidden: User "x" cannot list resource "nodes"', status=403)
    for t in range(0, 400, 2):
        clock.now = float(t)
        errors.failed("list/watch nodes", "list", "nodes", denied)
    assert (
        lines[0] == 'cannot list nodes: nodes is forbidden: User "x" cannot list resource "nodes"; '
        "retrying with backoff"
    )
    repeats = [line for line in lines[1:]]
    # again after 30 s, then 60 s, then every 120 s (the cap)
    assert [line.split("still failing: ")[1] for line in repeats] == [
        "16 attempts in 30s)",
        "46 attempts in 90s)",
        "106 attempts in 210s)",
        "166 attempts in 330s)",
    ]
    assert errors.counts[("nodes", "forbidden")] == 200
    assert errors.current("list/watch nodes").startswith("cannot list nodes: nodes is forbidden")


def test_a_new_cause_is_said_at_once_and_recovery_once():
    clock, lines = Clock(), []
    errors = ReadErrors(lines.append, clock)
    errors.failed("list/watch nodes", "list", "nodes", Forbidden("denied", status=403))
    clock.now = 1
    errors.failed("list/watch nodes", "watch", "nodes", Unreachable("cannot reach the API server at x: timed out"))
    clock.now = 5
    errors.ok("list/watch nodes")
    errors.ok("list/watch nodes")
    assert lines == [
        "cannot list nodes: denied; retrying with backoff",
        "cannot watch nodes: cannot reach the API server at x: timed out; retrying with backoff",
        "list/watch nodes: working again after 1 failed attempt(s) in 4s",
    ]
    assert errors.current("list/watch nodes") == ""


def test_readers_are_independent():
    lines: list[str] = []
    errors = ReadErrors(lines.append, Clock())
    for reader in ("list/watch nodes", "list/watch daemonsets"):
        errors.failed(reader, "list", reader.split()[-1], Unreachable("connection refused"))
    assert len(lines) == 2 and errors.counts[("daemonsets", "unreachable")] == 1


def test_reasons():
    assert reason_of(Unreachable("x")) == "unreachable"
    assert reason_of(Forbidden("x", status=403)) == "forbidden"
    assert reason_of(NotFound("x", status=404)) == "not-found"
    assert reason_of(Gone("x", status=410)) == "expired"
    assert reason_of(ApiError("x", status=401)) == "unauthorized"
    assert reason_of(ApiError("x", status=429)) == "throttled"
    assert reason_of(ApiError("x", status=503)) == "server-error"
    assert reason_of(ApiError("x", status=422)) == "http-422"
    assert reason_of(ValueError("bad json")) == "bad-response"


def test_server_text_is_one_line():
    assert one_line("a\nb\x1b[31mc") == "a\\x0ab\\x1b[31mc"
