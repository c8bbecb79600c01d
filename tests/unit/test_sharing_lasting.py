"""The table of a long-running process (sharing.lasting): an object of a watch event shares its parts with the
objects of the first lists, the table lets go of what no object holds any more, and it stays bounded by what
the live objects hold while agents and kubelets rewrite their objects for days."""

from __future__ import annotations

import json
import threading
from typing import Any

import msgspec

from kubectl_kcache import sharing
from kubectl_kcache.kube import resources as r
from kubectl_kcache.sharing import Lasting, lasting
from kubectl_kcache.snapshot import kinds
from tests import builders as b

KCNS = kinds.for_resource(r.KERNEL_CACHE_NODES)
NODES = kinds.for_resource(r.NODES)


def _kcn(node: str, stamp: int, caches: int = 3) -> dict[str, Any]:
    """A KernelCacheNode as its agent writes it: the same entries on every node of a group, the time of the
    agent's last write in each."""
    entries = {
        f"team/cache-{c}": {
            "kernelCacheRef": {"namespace": "team", "name": f"cache-{c}"},
            "imageReference": f"registry.example.com/team/cache-{c}@sha256:{c:064x}",
            "state": "Ready",
            "lastUpdate": f"2026-12-05T10:{stamp % 60:02d}:{stamp // 60 % 60:02d}Z",
        }
        for c in range(caches)
    }
    return {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "KernelCacheNode",
        "metadata": {"name": node, "resourceVersion": str(stamp)},
        "spec": {"nodeName": node},
        "status": {"cacheStatus": entries},
    }


def _event(doc: dict[str, Any], type_: str = "MODIFIED") -> bytes:
    return json.dumps({"type": type_, "object": doc}).encode()


def _page(docs: list[dict[str, Any]]) -> bytes:
    return json.dumps({"metadata": {"resourceVersion": "1"}, "items": docs}).encode()


def _held(table: Lasting) -> list[Any]:
    """The values of the table that are objects' parts (single characters and the like are the interpreter's)."""
    return [v for v in table.values() if isinstance(v, (tuple, list, msgspec.Struct))]


def test_an_events_object_shares_its_parts_with_the_first_lists_objects():
    tainted = [
        b.node(f"gpu-{i}", {"pool": "gpu"}, taints=[{"key": "nvidia.com/gpu", "effect": "NoSchedule"}])
        for i in range(3)
    ]
    with lasting():
        listed = NODES.decode_page(_page(tainted[:2])).items
        event = NODES.decode_watch_line(_event(tainted[2], "ADDED")).object
        assert event.spec.taints == listed[0].spec.taints
        assert event.spec.taints is listed[0].spec.taints is listed[1].spec.taints
    outside = NODES.decode_watch_line(_event(tainted[2])).object
    assert outside.spec.taints is not listed[0].spec.taints  # the table ended with the block


def test_the_table_lets_go_of_what_no_object_holds_and_keeps_what_one_does():
    with lasting(floor=1 << 20) as table:  # pruned by hand here
        kept = KCNS.decode_page(_page([_kcn("gpu-0", 1)])).items[0]
        gone = [KCNS.decode_watch_line(_event(_kcn(f"gpu-{i}", 100 + i))).object for i in range(1, 4)]
        assert gone[0].status.cache_status["team/cache-0"].image_reference is (
            kept.status.cache_status["team/cache-0"].image_reference
        )
        before = len(_held(table))
        del gone
        table.prune()
        table.prune()  # what the dropped entries held goes at the next one
        held = _held(table)
        # of the entries (each node's differ by their lastUpdate), gpu-0's alone are left, with their references
        entries = list(kept.status.cache_status.values())
        parts = [*entries, *(e.kernel_cache_ref for e in entries)]
        assert len(held) < before
        assert sorted(map(id, held)) == sorted(map(id, parts))
        again = KCNS.decode_watch_line(_event(_kcn("gpu-9", 1))).object  # equal to gpu-0's: shared again
        assert again.status.cache_status["team/cache-1"] is kept.status.cache_status["team/cache-1"]
        del kept, again, entries, held, parts
        table.prune()
        table.prune()
        assert _held(table) == []


def test_rewritten_objects_leave_the_table_what_the_live_ones_hold():
    """50 KernelCacheNodes rewritten 40 times each (a new lastUpdate in every entry, as agents write): the table
    never holds more than its limit allows, and after the churn exactly what the live objects hold."""
    floor, live, peak = 200, {}, 0
    with lasting(floor=floor) as table:
        for stamp in range(40):
            for n in range(50):
                live[n] = KCNS.decode_watch_line(_event(_kcn(f"gpu-{n}", stamp * 50 + n))).object
                peak = max(peak, len(table))
        assert table.prunings >= 5
        table.prune()
        table.prune()
        after = len(table)
    with lasting() as fresh:  # the live objects' parts alone
        for n in range(50):
            KCNS.decode_watch_line(_event(_kcn(f"gpu-{n}", 39 * 50 + n)))
        alone = len(fresh)
    assert after == alone
    # what the live objects hold, twice, and the parts of the few objects decoded while it fills: never more,
    # however long the churn
    assert peak <= max(floor, 2 * alone) + 40


def test_threads_decoding_while_the_table_is_pruned_get_what_they_decoded():
    docs = [_kcn(f"gpu-{n}", n % 7) for n in range(300)]
    wanted = [KCNS.decode_json(json.dumps(d).encode()) for d in docs]
    got: dict[int, list[Any]] = {}
    errors: list[BaseException] = []

    def decode(t: int) -> None:
        try:
            got[t] = [KCNS.decode_watch_line(_event(d)).object for d in docs]
        except BaseException as exc:  # noqa: BLE001 - said by the assertion below
            errors.append(exc)

    with lasting(floor=16) as table:
        threads = [threading.Thread(target=decode, args=(t,)) for t in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == [] and table.prunings
    assert all(got[t] == wanted for t in range(4))


def test_a_one_shot_block_inside_a_lasting_one_uses_the_lasting_table():
    with lasting() as table:
        with sharing.sharing():
            first = NODES.decode_page(_page([b.node("a", taints=[{"key": "k", "effect": "NoSchedule"}])])).items[0]
        later = NODES.decode_watch_line(_event(b.node("b", taints=[{"key": "k", "effect": "NoSchedule"}]))).object
        assert later.spec.taints is first.spec.taints and first.spec.taints in table
    assert not sharing.active()


def test_the_long_running_commands_run_inside_one_lasting_table_with_two_arenas(monkeypatch):
    from kubectl_kcache.cli import status
    from kubectl_kcache.monitor import run as monitor_run
    from kubectl_kcache.reconcile import loop

    seen: list[Any] = []

    def body(*_args: Any) -> int:
        seen.append(sharing._table)
        return 0

    from kubectl_kcache.runtime import memory

    limited: list[int] = []
    monkeypatch.setattr(memory, "limit_arenas", lambda arenas=2: limited.append(arenas) or True)
    monkeypatch.setattr(monitor_run, "_run_monitor", body)
    monkeypatch.setattr(loop, "_run_loop", body)
    monkeypatch.setattr(status, "_watch", body)
    monitor_run.run_monitor(None, None)  # type: ignore[arg-type]
    loop.run_loop(None, None)  # type: ignore[arg-type]
    status._watch_status({}, "table", False, {})
    assert len(seen) == 3 and all(type(t) is Lasting for t in seen)
    assert limited == [2, 2, 2]  # and each limits the allocator's arenas first (runtime/memory.py)
    assert not sharing.active()  # and none after
