"""The one informer (snapshot/informer.py) over a fake ListerWatcher: list, watch from the list's resourceVersion,
bookmarks, DELETED, 410 re-list, failures, and the decode-failure policy (a poison object in the first
list and in a watch event: skipped, counted, named until it decodes; never dies, never re-watches from the
same resourceVersion). And the one Coalescer."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest

from kubectl_kcache.errors import Forbidden, Gone, Unreachable
from kubectl_kcache.kube.resources import Page
from kubectl_kcache.snapshot import plan as readplan
from kubectl_kcache.snapshot.informer import Coalescer, Informer
from tests import builders as b


def node(name: str, rv: str, **changes: Any) -> dict[str, Any]:
    obj = b.node(name)
    obj["metadata"]["resourceVersion"] = rv
    obj["spec"].update(changes)
    return obj


POISON = {"unschedulable": {"not": "a boolean"}}  # the API server would not store it; our decoder refuses it


def page(items: list[dict[str, Any]], rv: str) -> bytes:
    return json.dumps(
        {"kind": "NodeList", "apiVersion": "v1", "metadata": {"resourceVersion": rv}, "items": items}
    ).encode()


def event(type_: str, obj: dict[str, Any]) -> bytes:
    return json.dumps({"type": type_, "object": obj}).encode()


class FakeLW:
    """Lists return the pages given; each watch plays the next script (lines, or an exception to raise)."""

    def __init__(self, pages: list[bytes], watches: list[list[bytes | BaseException]]):
        self.pages, self.watches = pages, watches
        self.lists = 0
        self.watched_from: list[str] = []
        self.done = threading.Event()

    def list(self, decode: Callable[[bytes], Page[Any]]) -> tuple[list[Any], str]:
        got = decode(self.pages[min(self.lists, len(self.pages) - 1)])
        self.lists += 1
        return list(got.items), got.resource_version

    def watch(self, resource_version: str, decode: Callable[[bytes], Any], opened: Callable[[], None]) -> Iterable[Any]:
        self.watched_from.append(resource_version)
        if not self.watches:
            self.done.set()
            time.sleep(0.05)
            return iter(())
        script = self.watches.pop(0)

        def run() -> Iterator[Any]:
            opened()
            for line in script:
                if isinstance(line, BaseException):
                    raise line
                yield decode(line)

        return run()


def run_informer(lw: FakeLW, **kw: Any) -> Informer:
    stop = threading.Event()
    inf = Informer(lw, readplan.NODES, stop=stop, delays=lambda: iter(lambda: 0.01, None), **kw)
    inf.start()
    assert lw.done.wait(5), "the informer did not play every watch"
    stop.set()
    inf.join(5)
    return inf


def names(inf: Informer) -> list[str]:
    return sorted(o.metadata.name for o in inf.items())


def test_list_then_watch_from_its_resource_version_with_bookmarks_and_deletes():
    lw = FakeLW(
        [page([node("a", "5"), node("b", "6")], "10")],
        [
            [
                event("ADDED", node("c", "11")),
                json.dumps(
                    {"type": "BOOKMARK", "object": {"kind": "Node", "metadata": {"resourceVersion": "15"}}}
                ).encode(),
                event("DELETED", node("a", "16")),
                event("MODIFIED", node("b", "17", unschedulable=True)),
            ]
        ],
    )
    inf = run_informer(lw)
    assert names(inf) == ["b", "c"]
    assert next(o for o in inf.items() if o.metadata.name == "b").spec.unschedulable is True
    assert lw.watched_from[:2] == ["10", "17"]  # the list's version, then where the last watch ended
    assert inf.synced.is_set() and inf.relists == 0 and inf.decode_failures == 0


def test_gone_lists_again_and_replaces_the_store():
    lw = FakeLW([page([node("a", "5")], "10"), page([node("b", "30")], "31")], [[Gone("too old", status=410)], []])
    inf = run_informer(lw)
    assert names(inf) == ["b"] and inf.relists == 1 and lw.lists == 2
    assert lw.watched_from[1] == "31"


def test_a_broken_watch_resumes_from_the_last_resource_version_and_says_why_meanwhile():
    errors: list[str] = []
    oks: list[bool] = []
    lw = FakeLW(
        [page([node("a", "5")], "10")],
        [[event("ADDED", node("b", "12")), Unreachable("connection refused")], [event("ADDED", node("c", "13"))]],
    )
    inf = run_informer(lw, on_error=lambda verb, exc: errors.append(f"{verb}: {exc}"), on_ok=lambda: oks.append(True))
    assert errors == ["watch: connection refused"] and oks == [True]
    assert lw.lists == 1 and lw.watched_from[:3] == ["10", "12", "13"]
    assert names(inf) == ["a", "b", "c"] and inf.problem == ""


def test_forbidden_is_fatal_only_when_the_owner_says_so():
    lw = FakeLW([page([], "1")], [[Forbidden("nodes is forbidden", status=403)]])
    stop = threading.Event()
    inf = Informer(lw, readplan.NODES, stop=stop, forbidden_is_fatal=True, delays=lambda: iter(lambda: 0.01, None))
    inf.start()
    inf.join(5)
    assert not inf.is_alive() and "cannot watch nodes (forbidden" in str(inf.fatal)
    kept = FakeLW([page([], "1")], [[Forbidden("nodes is forbidden", status=403)], []])
    inf = run_informer(kept)
    assert inf.fatal is None and kept.watched_from == ["1", "1", "1"]  # retried, from the same version: no event


def test_a_poison_object_in_the_first_list_is_skipped_counted_and_named_until_it_decodes():
    bad = node("bad", "7", **POISON)
    lw = FakeLW([page([node("a", "5"), bad], "10")], [[event("MODIFIED", node("bad", "12"))]])
    seen: list[list[str]] = []

    def watch_blocked() -> None:
        seen.append(inf.poison_lines())

    stop = threading.Event()
    inf = Informer(
        lw,
        readplan.NODES,
        stop=stop,
        delays=lambda: iter(lambda: 0.01, None),
        on_change=lambda what: watch_blocked() if what == "nodes" and not seen else None,
    )
    inf.start()
    assert lw.done.wait(5)
    stop.set()
    inf.join(5)
    assert seen and "Node bad" in seen[0][0] and "$.items[1].spec.unschedulable" in seen[0][0]
    assert inf.is_alive() is False and inf.synced.is_set()  # listed and watched: it never died
    assert inf.decode_failures == 1 and inf.poison_lines() == []  # it decodes again: no longer named
    assert names(inf) == ["a", "bad"]


def test_a_poison_watch_event_drops_the_stale_object_and_moves_past_it():
    lw = FakeLW(
        [page([node("a", "5"), node("b", "6")], "10")],
        [
            [event("MODIFIED", node("b", "11", **POISON)), event("ADDED", node("c", "12"))],
            [],  # resumed from after the poison event, not from before it
        ],
    )
    inf = run_informer(lw)
    assert names(inf) == ["a", "c"]  # the old b is not kept as if it were current
    assert (
        inf.decode_failures == 1
        and len(inf.poison_lines()) == 1
        and "$.object.spec.unschedulable" in inf.poison_lines()[0]
    )
    assert lw.watched_from[:2] == ["10", "12"] and lw.lists == 1  # never re-watched from 10, never re-listed
    assert inf.synced.is_set() and inf.problem == ""


def test_a_poison_object_deleted_is_no_longer_named():
    lw = FakeLW(
        [page([node("a", "5")], "10")],
        [[event("ADDED", node("b", "11", **POISON)), event("DELETED", node("b", "12", **POISON))]],
    )
    inf = run_informer(lw)
    assert names(inf) == ["a"] and inf.poison_lines() == [] and inf.decode_failures == 2


def test_our_own_write_enters_the_store_unless_the_watch_brought_something_newer():
    inf = Informer(FakeLW([], []), readplan.NODES, stop=threading.Event())
    inf.written(node("a", "10"))
    inf.written(node("a", "12"))
    inf.written(node("a", "11"))  # an older answer arriving late
    assert [o.metadata.resource_version for o in inf.items()] == ["12"]


@pytest.mark.parametrize(
    ("events", "settles_at"),
    [
        ([0.0, 0.1, 0.2], 0.5),  # quiet for 0.3 s after the last change
        ([i * 0.25 for i in range(13)], 2.0),  # a steady stream: at most 2 s after the first change
    ],
)
def test_the_coalescer_turns_a_burst_into_one_wake_up(events: list[float], settles_at: float):
    now = [0.0]
    co = Coalescer(0.3, 2.0, clock=lambda: now[0])
    pending = list(events)
    woke = None
    while now[0] < 5 and woke is None:
        while pending and pending[0] <= now[0] + 1e-9:
            pending.pop(0)
            co.notify()
        if co.settled():
            woke = now[0]
        now[0] = round(now[0] + 0.05, 2)
    assert woke == pytest.approx(settles_at, abs=0.06)


# ---- where a poison object is said: the controller's /readyz and metrics, status -w's screen and documents ----


class QuietLW:
    """An empty list, then watches that bring nothing."""

    def list(self, decode: Callable[[bytes], Page[Any]]) -> tuple[list[Any], str]:
        got = decode(json.dumps({"items": [], "metadata": {"resourceVersion": "1"}}).encode())
        return list(got.items), got.resource_version

    def watch(self, resource_version: str, decode: Callable[[bytes], Any], opened: Callable[[], None]) -> Iterable[Any]:
        opened()
        time.sleep(0.2)
        return iter(())


def controller(lw_of: Callable[[Any], Any]) -> Any:
    """The controller over fake lists: `lw_of(spec)` (None: an empty list, watches that bring nothing)."""
    from kubectl_kcache.reconcile.loop import Controller, LoopOptions

    class Client:  # the controller only names itself to it here: nothing is listed or written
        user_agent = ""

    return Controller(
        Client(),  # type: ignore[arg-type]
        LoopOptions(),
        log=lambda _m: None,
        lister_watcher=lambda made: lw_of(made.spec) or QuietLW(),
    )


def test_the_controller_says_a_poison_object_on_readyz_and_in_its_metrics_and_plans_nothing():
    lw = FakeLW([page([node("a", "5"), node("bad", "6", **POISON)], "10")], [])
    ctrl = controller(lambda spec: lw if spec == readplan.NODES else None)
    ctrl.live.start()
    try:
        assert lw.done.wait(5)
        ready, reasons = ctrl.readiness()
        assert not ready and any("nodes: skipped, cannot be decoded: " in r and "Node bad" in r for r in reasons)
        metrics = ctrl.metrics.render()
        assert 'kcache_decode_failures_total{resource="nodes"} 1' in metrics
        assert 'kcache_undecodable_objects{resource="nodes"} 1' in metrics
        assert ctrl.liveness()[0] is True  # alive: the informer still runs, it never died
        assert not ctrl._current()  # no pass plans from a store that lacks an object
    finally:
        ctrl.live.stop()


def test_status_watch_says_a_poison_object_on_the_screen_and_in_every_document():
    from kubectl_kcache.snapshot.follow import LiveSnapshot
    from kubectl_kcache.snapshot.model import ClusterSnapshot
    from kubectl_kcache.snapshot.reads import ListMade

    lw = FakeLW([page([node("a", "5")], "10")], [[event("MODIFIED", node("a", "11", **POISON))]])
    live = LiveSnapshot(None, ClusterSnapshot(), [ListMade(readplan.NODES, "10")], lister_watcher=lambda _l: lw)
    live.start()
    try:
        assert live.wait(timeout=5)
        assert lw.done.wait(5)
        problems = live.problems()
        assert len(problems) == 1 and problems[0].startswith("watch nodes: skipped, cannot be decoded: ")
        assert live.watch_state() == {"state": "failing", "problems": problems}
        assert live.snapshot().nodes == ()  # the stale version is not shown as current
    finally:
        live.stop()


class RefusingLW:
    """Every list raises `error` until `allow` is set; then it lists one node, and watches stay open."""

    def __init__(self, error: BaseException):
        self.error, self.allow, self.attempts = error, threading.Event(), 0

    def list(self, decode: Callable[[bytes], Page[Any]]) -> tuple[list[Any], str]:
        self.attempts += 1
        if not self.allow.is_set():
            raise self.error
        got = decode(page([node("n1", "5")], "5"))
        return list(got.items), got.resource_version

    def watch(self, resource_version: str, decode: Callable[[bytes], Any], opened: Callable[[], None]) -> Iterable[Any]:
        opened()
        time.sleep(0.05)
        return iter(())


def test_a_refused_read_is_tried_again_within_seconds_not_after_the_backoff_cap():
    lw, stop = RefusingLW(Forbidden("nodes is forbidden")), threading.Event()
    inf = Informer(lw, readplan.NODES, stop=stop, delays=lambda: iter(lambda: 30.0, None))
    inf.start()
    try:
        time.sleep(0.3)
        assert not inf.synced.is_set() and lw.attempts == 1
        lw.allow.set()  # RBAC granted
        assert inf.synced.wait(4), "a refused read waited out its backoff"
    finally:
        stop.set()


def test_an_informer_that_recovers_ends_the_others_backoff():
    """The server was unreachable for all three; the one with the shortest wait finds it back and wakes the
    two waiting out half a minute."""
    slow_a, slow_b, quick = (RefusingLW(Unreachable("connection refused")) for _ in range(3))
    stop = threading.Event()
    informers = [
        Informer(lw, readplan.NODES, stop=stop, delays=lambda: iter(lambda: 30.0, None)) for lw in (slow_a, slow_b)
    ]
    informers.append(Informer(quick, readplan.NODES, stop=stop, delays=lambda: iter(lambda: 0.2, None)))
    for inf in informers:
        inf.start()
    try:
        time.sleep(0.3)
        assert slow_a.attempts == slow_b.attempts == 1
        for lw in (slow_a, slow_b, quick):
            lw.allow.set()  # the server is back
        assert all(inf.synced.wait(3) for inf in informers), "a recovery elsewhere did not end the backoff"
        assert slow_a.attempts == slow_b.attempts == 2
    finally:
        stop.set()


def _heartbeat(obj: dict[str, Any], rv: str, at: str) -> dict[str, Any]:
    """The node as its kubelet's status report leaves it: a new lastHeartbeatTime, nothing else."""
    obj = json.loads(json.dumps(obj))
    obj["metadata"]["resourceVersion"] = rv
    for cond in obj.get("status", {}).get("conditions", []):
        cond["lastHeartbeatTime"] = at
    return obj


def test_an_update_that_changes_nothing_read_leaves_the_node_in_place_and_wakes_no_one():
    """A kubelet reports its node's status every 5 minutes (167 a second at 50,000 nodes): when nothing the
    plugin reads changed, the object held stays the very same (what was judged of it is reused) and no change
    is signalled; the informer still resumes from the event's resourceVersion."""
    first = node("a", "5")
    lw = FakeLW(
        [page([first], "10")],
        [
            [
                event("MODIFIED", _heartbeat(first, "11", "2026-12-05T10:00:00Z")),
                event("MODIFIED", _heartbeat(first, "12", "2026-12-05T10:05:00Z")),
            ],
            [event("MODIFIED", node("a", "13", unschedulable=True))],
        ],
    )
    changes: list[str] = []
    held: list[Any] = []
    stop = threading.Event()
    inf = Informer(lw, readplan.NODES, stop=stop, on_change=changes.append, delays=lambda: iter(lambda: 0.01, None))
    real_watch = lw.watch

    def watch(rv: str, decode: Any, opened: Any) -> Iterable[Any]:
        held.append((rv, inf.items()[0] if inf.items() else None, inf.changes))
        return real_watch(rv, decode, opened)

    lw.watch = watch  # type: ignore[method-assign]
    inf.start()
    assert lw.done.wait(5)
    stop.set()
    inf.join(5)
    (rv1, listed, n1), (rv2, after_reports, n2), (rv3, changed, n3) = held[:3]
    assert (rv1, rv2, rv3) == ("10", "12", "13")  # resumed from the last report's version
    assert after_reports is listed and n2 == n1 and changes.count("nodes") == 2  # the list, then the real change
    assert changed is not listed and changed.spec.unschedulable is True and n3 == n1 + 1


def test_a_kind_whose_version_a_write_carries_takes_every_update():
    """KernelCacheNodes: reconcile's deletes carry the resourceVersion the plan saw, so an update that changes
    nothing else still replaces the object held (a stale version would make every delete conflict)."""
    kcn = b.kcn("gpu-1", {})
    kcn["metadata"]["resourceVersion"] = "5"
    again = json.loads(json.dumps(kcn))
    again["metadata"]["resourceVersion"] = "6"
    lw = FakeLW(
        [json.dumps({"metadata": {"resourceVersion": "10"}, "items": [kcn]}).encode()],
        [[event("MODIFIED", again)]],
    )
    stop = threading.Event()
    inf = Informer(lw, readplan.KERNEL_CACHE_NODES, stop=stop, delays=lambda: iter(lambda: 0.01, None))
    inf.start()
    assert lw.done.wait(5)
    stop.set()
    inf.join(5)
    assert [o.metadata.resource_version for o in inf.items()] == ["6"]


def test_a_pod_update_that_changes_nothing_read_is_none_either():
    pod = b.pod("agent-1", ns="kserve", node_name="gpu-1", labels={"app": "agent"})
    pod["metadata"]["resourceVersion"] = "5"
    moved = json.loads(json.dumps(pod))
    moved["metadata"]["resourceVersion"] = "6"
    moved.setdefault("status", {})["podIP"] = "10.0.0.9"  # not read by the plugin
    lw = FakeLW(
        [json.dumps({"metadata": {"resourceVersion": "10"}, "items": [pod]}).encode()],
        [[event("MODIFIED", moved)]],
    )
    stop = threading.Event()
    inf = Informer(lw, readplan.AGENT_PODS, stop=stop, delays=lambda: iter(lambda: 0.01, None))
    listed_changes = []
    inf.on_change = listed_changes.append
    inf.start()
    assert lw.done.wait(5)
    stop.set()
    inf.join(5)
    assert [o.metadata.resource_version for o in inf.items()] == ["5"] and listed_changes == ["pods"]
    assert inf.resource_version == "6"
