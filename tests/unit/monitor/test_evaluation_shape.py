"""The shape of the monitor's evaluation (issue 36 point 3), counted, not timed: over bench.scale's fleet kept in
a LiveSnapshot's stores (as the monitor's lists hold it), one evaluation after a node changed builds each index
once and only those whose inputs changed (a relabelled node rebuilds the node indexes, not the entries'), every
KernelCache's aggregate once for the doctor, status and why-not-ready together, why-not-ready's chain and the
doctor's cache-status findings only for the KernelCaches of the node's group and status's counts only for that
group, the metrics text once however often /metrics is scraped, and no HTML until /report asks; what it exports
is what a fresh evaluation of the same objects exports."""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

import msgspec
import pytest

from bench.scale import write_dump
from kubectl_kcache.checks import cache_status
from kubectl_kcache.explain import status, why_not_ready
from kubectl_kcache.kernelcache import aggregate, selectors
from kubectl_kcache.kernelcache.admission import candidates
from kubectl_kcache.monitor import metrics
from kubectl_kcache.monitor.evaluate import evaluate
from kubectl_kcache.monitor.metrics import Health, render
from kubectl_kcache.runtime import metrics as prometheus
from kubectl_kcache.snapshot import kinds
from kubectl_kcache.snapshot.files.from_files import load_files
from kubectl_kcache.snapshot.follow import LiveSnapshot
from kubectl_kcache.snapshot.kinds import ListSpec
from kubectl_kcache.snapshot.reads import ListMade

GROUPS, CACHES, NODES = 6, 60, 240
HEALTH = Health(ready=True, read_errors={}, last_read=1.5e9, evaluations=1)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("fleet") / "fleet.json"
    write_dump(path, NODES, "small", GROUPS, CACHES)
    return load_files([str(path)])


def _live(snap: Any) -> LiveSnapshot:
    lists = [
        ListMade(
            ListSpec(k.resource),
            "1",
            frozenset((k.field, x.metadata.namespace or "", x.metadata.name) for x in getattr(snap, k.field)),
        )
        for k in kinds.KINDS
        if not (k.resource.plural == "events" and k.resource.group)  # one list per field
    ]
    return LiveSnapshot(None, snap, lists, lister_watcher=lambda _listed: None)  # type: ignore[arg-type,return-value]


def _relabel(live: LiveSnapshot, i: int) -> None:
    """A watch's MODIFIED of one node (a label added), as the informer applies it."""
    inf = next(x for x in live.informers if x.kind.field == "nodes")
    node = inf.store[sorted(inf.store)[i]]
    labels = {**(node.metadata.labels or {}), "test/flip": str(i)}
    relabelled = msgspec.structs.replace(node, metadata=msgspec.structs.replace(node.metadata, labels=labels))
    inf._apply(_Event("MODIFIED", relabelled))


class _Event(msgspec.Struct):
    type: str
    object: Any
    resource_version: str = ""


def _counting(monkeypatch: pytest.MonkeyPatch, counts: Counter[str]) -> None:
    def count(owner: Any, name: str, what: str) -> None:
        inner = getattr(owner, name)

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            counts[what] += 1
            return inner(*args, **kwargs)

        monkeypatch.setattr(owner, name, wrapped)

    count(selectors.LabelIndex, "__init__", "label index")
    count(aggregate.EntryIndex, "__init__", "entry index")
    count(aggregate, "_aggregate", "aggregate")
    count(candidates, "collect_entries", "admission entries")
    count(metrics, "evaluation_text", "metrics text")
    count(why_not_ready, "explain", "why-not-ready chain")
    count(status, "GroupStatus", "group counted")
    count(cache_status, "_judged", "cache judged")


def test_an_evaluation_after_a_change_rebuilds_only_what_changed(fleet: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    live = _live(fleet)
    first = live.snapshot()
    evaluate(first)
    again = live.snapshot()
    assert all(getattr(again, f) is getattr(first, f) for f in kinds.FIELDS)  # nothing changed: nothing re-sorted
    _relabel(live, 5)
    counts: Counter[str] = Counter()
    with monkeypatch.context() as m:
        _counting(m, counts)
        snap = live.snapshot()
        assert snap.nodes is not first.nodes and snap.kcns is first.kcns
        ev = evaluate(snap)
        for _ in range(3):  # scrapes
            render(ev, HEALTH)
    assert counts["label index"] == 1  # the nodes changed: rebuilt once for the doctor, status and why-not-ready
    assert counts["entry index"] <= 1  # the KernelCacheNodes did not: carried (a fresh copy of the same entries)
    assert counts["admission entries"] == 0
    assert 0 < counts["aggregate"] <= CACHES  # once per KernelCache, not once per part of the evaluation
    assert counts["metrics text"] == 1  # the evaluation's families rendered once; each scrape adds the monitor's own
    assert "html" not in ev.__dict__  # the page is rendered when /report asks, not per evaluation
    # the KernelCaches of the node's group are explained again, the other groups' rows are reused
    assert 0 < counts["why-not-ready chain"] <= CACHES // GROUPS
    assert counts["group counted"] == 1  # and status counts that group again, not every group
    assert 0 < counts["cache judged"] <= CACHES // GROUPS  # and the doctor's cache-status judges only its caches


def _unlabel(live: LiveSnapshot, i: int) -> None:
    """A node's labels all removed: out of its group."""
    inf = next(x for x in live.informers if x.kind.field == "nodes")
    node = inf.store[sorted(inf.store)[i]]
    inf._apply(
        _Event("MODIFIED", msgspec.structs.replace(node, metadata=msgspec.structs.replace(node.metadata, labels={})))
    )


def _delete_kcn(live: LiveSnapshot, i: int) -> None:
    inf = next(x for x in live.informers if x.kind.field == "kcns")
    inf._apply(_Event("DELETED", inf.store[sorted(inf.store)[i]]))


@pytest.mark.parametrize(
    ("change", "shows"),
    [
        (lambda live: _relabel(live, 7), False),
        (lambda live: _unlabel(live, 3), True),
        (lambda live: _delete_kcn(live, 11), True),
    ],
    ids=["label-added", "out-of-its-group", "kernelcachenode-deleted"],
)
def test_what_it_exports_is_a_fresh_evaluations(fleet: Any, change: Any, shows: bool) -> None:
    live = _live(fleet)
    before = evaluate(live.snapshot())
    change(live)
    kept = live.snapshot()
    fresh = dataclasses.replace(kept)  # the same objects, no index carried over
    a, b = evaluate(kept), evaluate(fresh)
    assert a.metrics_text == b.metrics_text  # every metric but the monitor's own (its duration and time differ)
    findings = lambda ev: {k: v for k, v in ev.report.to_dict().items() if k != "source"}  # noqa: E731 - (generatedAt)
    assert findings(a) == findings(b) and a.readiness == b.readiness
    assert (a.metrics_text != before.metrics_text) is shows  # a label no group selects changes no metric


def test_a_scrape_is_the_whole_text_rendered_at_once(fleet: Any) -> None:
    ev = evaluate(fleet)
    families = [
        *metrics._findings(ev),
        *metrics._groups(ev.status),  # type: ignore[arg-type]
        *metrics._readiness(ev.readiness),  # type: ignore[arg-type]
        metrics._pods(ev.fleet),  # type: ignore[arg-type]
        *metrics._own(ev, HEALTH),
    ]
    assert render(ev, HEALTH) == prometheus.render(families)


def test_a_kernelcachenode_written_explains_again_only_its_groups_caches(
    fleet: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    live = _live(fleet)
    evaluate(live.snapshot())
    _delete_kcn(live, 11)  # (an agent's status write replaces it the same way)
    counts: Counter[str] = Counter()
    with monkeypatch.context() as m:
        _counting(m, counts)
        evaluate(live.snapshot())
    assert 0 < counts["why-not-ready chain"] <= CACHES // GROUPS
    assert counts["group counted"] == 1
    assert 0 < counts["cache judged"] <= CACHES // GROUPS
    assert counts["admission entries"] == 0  # the hit rate's index updated for that KernelCacheNode's caches


def _entry_state(live: LiveSnapshot, i: int, state: str) -> None:
    """An agent's status write: one entry of a KernelCacheNode in another state."""
    inf = next(x for x in live.informers if x.kind.field == "kcns")
    kcn = inf.store[sorted(inf.store)[i]]
    doc = msgspec.to_builtins(kcn)
    key = sorted(doc["status"]["cacheStatus"])[0]
    doc["status"]["cacheStatus"][key]["state"] = state
    inf._apply(_Event("MODIFIED", msgspec.convert(doc, type(kcn))))


@pytest.mark.parametrize(
    "changes",
    [
        [lambda live: _entry_state(live, 4, "Pulling")],
        [lambda live: _entry_state(live, 4, "Pulling"), lambda live: _entry_state(live, 4, "Ready")],
        [lambda live: _delete_kcn(live, 9), lambda live: _entry_state(live, 20, "Error")],
    ],
    ids=["entry-pulling", "and-back", "deleted-and-error"],
)
def test_the_admission_index_updated_is_the_one_built_again(fleet: Any, changes: list[Any]) -> None:
    live = _live(fleet)
    evaluate(live.snapshot())
    for change in changes:
        change(live)
        kept = live.snapshot()
        evaluate(kept)
        fresh = candidates.index_entries(kept.kcns)
        assert kept.derived("admission-entries", lambda: None) == fresh  # (None: the evaluation built none)


def test_a_node_changed_is_the_one_node_judged_again(fleet: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The doctor's per-node checks judge again the node that changed (and its KernelCacheNode), not every member."""
    from kubectl_kcache.checks import group_taints, nodes

    live = _live(fleet)
    evaluate(live.snapshot())
    _relabel(live, 5)
    counts: Counter[str] = Counter()
    with monkeypatch.context() as m:
        for owner, name in ((group_taints, "_job"), (nodes, "_judged")):
            inner = getattr(owner, name)
            m.setattr(owner, name, lambda *a, _inner=inner, _name=name, **k: counts.update([_name]) or _inner(*a, **k))
        snap = live.snapshot()
        evaluate(snap)
    assert counts == {"_job": 1, "_judged": 1}  # the node is in one group
    for check in ("group-taints", "nodes", "agent", "node-images"):
        assert snap.judged(f"judged/{check}", ()).computed == 1, check
    # and with nothing changed, nothing at all, even after a snapshot that was not evaluated
    live.snapshot()
    again = live.snapshot()
    evaluate(again)
    assert all(again.judged(f"judged/{c}", ()).computed == 0 for c in ("group-taints", "nodes", "agent", "node-images"))


def test_an_agents_status_write_judges_again_only_its_kernelcachenode(fleet: Any) -> None:
    live = _live(fleet)
    evaluate(live.snapshot())
    _entry_state(live, 4, "Pulling")
    snap = live.snapshot()
    evaluate(snap)
    assert snap.judged("judged/node-images", ()).computed == 1
    for check in ("group-taints", "nodes", "agent"):  # the nodes' checks read no KernelCacheNode
        assert snap.judged(f"judged/{check}", ()).computed == 0, check
