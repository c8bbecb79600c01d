"""The algorithmic shape of the fleet-wide commands, counted, not timed (issue 36): a doctor run and status over
N nodes match O(N) node labels against group selectors and read each node's Ready condition O(1) times, however
many KernelCaches each group has (the aggregate of thousands of caches walks their entries, not their groups'
members again). Fleets are bench.scale's generator (the shapes of the 130,000-node benchmark) at two sizes, with
the groups and KernelCaches fixed: four times the nodes must cost at most about four times the work."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bench.scale import write_dump
from kubectl_kcache.checks import run_doctor
from kubectl_kcache.explain.status import fleet_status
from kubectl_kcache.kernelcache import selectors
from kubectl_kcache.objects import Node
from kubectl_kcache.snapshot.files.from_files import load_files

GROUPS, CACHES = 10, 200  # 20 KernelCaches per group: per-cache work over the group's members would be 20x


def _counted(monkeypatch: pytest.MonkeyPatch, counts: Counter[str]) -> None:
    original = selectors.selector_matches

    def selector_matches(selector: Any, labels: Any) -> bool:
        counts["selector_matches"] += 1
        return original(selector, labels)

    for name, module in list(sys.modules.items()):  # every module that imported the function by name
        if name.startswith("kubectl_kcache") and getattr(module, "selector_matches", None) is original:
            monkeypatch.setattr(module, "selector_matches", selector_matches)
    for method in ("with_label", "matching", "near"):
        inner = getattr(selectors.LabelIndex, method)

        def wrapped(self: Any, *args: Any, _inner: Any = inner, _name: str = method) -> Any:
            out = _inner(self, *args)
            counts["label_index_nodes"] += len(out)
            return out

        monkeypatch.setattr(selectors.LabelIndex, method, wrapped)
    ready = Node.ready

    def counted_ready(self: Node) -> Any:
        counts["node_ready"] += 1
        return ready.fget(self)  # type: ignore[attr-defined]

    monkeypatch.setattr(Node, "ready", property(counted_ready))


def _work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nodes: int) -> Counter[str]:
    path = tmp_path / f"fleet-{nodes}.json"
    write_dump(path, nodes, "small", GROUPS, CACHES)
    snap = load_files([str(path)])
    counts: Counter[str] = Counter()
    with monkeypatch.context() as m:
        _counted(m, counts)
        report = run_doctor(snap)
        fleet_status(snap, None)
    assert report.findings  # the fleet is the benchmark's: every cache misses entries on most members
    return counts


def test_a_fleet_costs_work_linear_in_its_nodes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small, large = _work(tmp_path, monkeypatch, 300), _work(tmp_path, monkeypatch, 1200)
    for what in ("selector_matches", "label_index_nodes", "node_ready"):
        # 4x the nodes: at most ~4x the work (a pass per cache over its group's members would be ~4x too, but
        # starts 20x higher: the per-node bounds below catch that)
        assert large[what] <= 4.4 * small[what] + 100, (what, small[what], large[what])
    # per node, a handful of each, not one per KernelCache of its group (20 here)
    assert large["node_ready"] <= 8 * 1200, large
    assert large["selector_matches"] + large["label_index_nodes"] <= 12 * 1200, large
