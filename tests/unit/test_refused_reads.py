"""ONE policy for a refused (403) list or watch, the kept-current snapshot's (snapshot/follow.py), as each of
the three commands that keep one declares it, over a fake ListerWatcher (the informer's seam; the e2e tests
hold the same against the test bed's API server): the monitor and reconcile retry, say it (readiness,
metrics) and recover within FORBIDDEN_RETRY seconds of access returning; `status -w` declares a refusal
fatal and ends with exit 3's error naming the verb and the list."""

from __future__ import annotations

import threading
import time

import pytest

from kubectl_kcache.errors import Forbidden, IncompleteError
from kubectl_kcache.monitor.source import Source
from kubectl_kcache.runtime.read_errors import ReadErrors
from kubectl_kcache.snapshot import plan
from kubectl_kcache.snapshot.follow import LiveSnapshot
from kubectl_kcache.snapshot.informer import FORBIDDEN_RETRY
from kubectl_kcache.snapshot.model import ClusterSnapshot
from kubectl_kcache.snapshot.reads import FORBIDDEN, ListMade, Read
from tests.unit.test_informer import FakeLW, RefusingLW, controller, page

REFUSED = Forbidden('nodes is forbidden: User "x" cannot list resource "nodes"', status=403)
RECOVERY = FORBIDDEN_RETRY + 1.0  # the policy probes at most every FORBIDDEN_RETRY s; 1 s for a busy machine


def until(condition, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return bool(condition())


def test_the_monitor_says_a_refused_list_counts_it_and_follows_it_once_allowed():
    lw, lines = RefusingLW(REFUSED), []
    source = Source(None, errors=ReadErrors(lines.append))  # type: ignore[arg-type]
    refused = ClusterSnapshot(reads=(Read.of(plan.NODES, FORBIDDEN),))
    source.follow(refused, [ListMade(plan.NODES, "")], lister_watcher=lambda _made: lw)
    try:
        assert until(lambda: lw.attempts >= 2, RECOVERY)  # retried, not given up
        assert source.problems() and "nodes is forbidden" in source.problems()[0]
        assert source.read_errors()["list nodes"] >= 2 and source.read_errors()["watch nodes"] == 0
        assert len([line for line in lines if "nodes is forbidden" in line]) == 1  # said once
        lw.allow.set()  # the role is bound
        assert until(lambda: not source.problems(), RECOVERY), source.problems()
        now = source.snapshot("")
        assert [n.name for n in now.nodes] == ["n1"] and [r.status for r in now.reads] == ["ok"]
        assert "working again" in lines[-1]
    finally:
        source.stop()


def test_reconcile_says_a_refused_list_on_readyz_and_in_its_metrics_and_plans_once_allowed():
    lw = RefusingLW(REFUSED)
    ctrl = controller(lambda spec: lw if spec == plan.NODES else None)
    ctrl.live.start()
    try:
        assert until(lambda: lw.attempts >= 2, RECOVERY)
        ready, reasons = ctrl.readiness()
        assert not ready and any(r.startswith("nodes: cannot list nodes: nodes is forbidden") for r in reasons)
        assert 'kcache_read_errors_total{reason="forbidden",resource="nodes"}' in ctrl.metrics.render()
        assert not ctrl._current()  # no pass plans without the nodes
        lw.allow.set()
        assert until(ctrl._current, RECOVERY)
        assert not any(r.startswith("nodes:") for r in ctrl.readiness()[1])
    finally:
        ctrl.live.stop()


def test_status_watch_declares_a_refused_watch_fatal():
    lw = FakeLW([page([], "1")], [[REFUSED]])
    live = LiveSnapshot(
        None, ClusterSnapshot(), [ListMade(plan.NODES, "1")], forbidden_is_fatal=True, lister_watcher=lambda _m: lw
    )
    live.start()
    try:
        with pytest.raises(IncompleteError, match=r"^status --watch cannot watch nodes \(forbidden: nodes is forbid"):
            live.wait(timeout=5)
    finally:
        live.stop()


def test_the_same_refusal_is_retried_where_the_owner_does_not_declare_it_fatal():
    lw, stop = FakeLW([page([], "1")], [[REFUSED], []]), threading.Event()
    live = LiveSnapshot(None, ClusterSnapshot(), [ListMade(plan.NODES, "1")], stop=stop, lister_watcher=lambda _m: lw)
    live.start()
    try:
        assert lw.done.wait(RECOVERY)  # the second watch was made: retried, not fatal
        assert lw.watched_from[:2] == ["1", "1"]
    finally:
        live.stop()
