"""KServe's KernelCache aggregate (§7.2, cache_status.go): expected nodes are the group's Ready members;
a missing entry is preparing; any Error fails the cache; all Ready (nodeCount > 0) is Ready; NotReady
members' entries are not counted; cordoned members are."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_kcache import objects as o
from kubectl_kcache.kernelcache import constants as c
from kubectl_kcache.kernelcache.aggregate import Aggregate, Counts, compute_aggregate
from tests import builders as b

from .helpers import node

NS, NAME = "team-a", "qwen"
KC = o.KernelCache.from_dict(b.kernel_cache(NAME, NS, "gpu"))


def kcn(name: str, state: str | None = "Ready", message: str = "", **others: dict[str, Any]) -> o.KernelCacheNode:
    """`name`'s KernelCacheNode with the cache's entry in `state` (None: no entry for it), and `others`."""
    entries = dict(others)
    if state is not None:
        entries[f"{NS}/{NAME}"] = b.entry(NS, NAME, state, message=message)
    return o.KernelCacheNode.from_dict(b.kcn(name, entries))


def aggregate(members: list[o.Node], kcns: list[o.KernelCacheNode]) -> Aggregate:
    return compute_aggregate(KC, members, {k.name: k for k in kcns})


def test_every_ready_member_ready_is_cache_ready():
    agg = aggregate([node("n1"), node("n2")], [kcn("n1"), kcn("n2")])
    assert agg == Aggregate(
        c.CACHE_READY, "CacheReady", "cache is ready on all selected nodes", Counts(2, 2, 0, 0), (), (), ()
    )
    assert agg.ready


def test_no_member_is_no_matching_nodes_with_every_count_zero():
    agg = aggregate([], [kcn("n1")])
    assert (agg.state, agg.reason, agg.message) == (
        "Pending",
        "NoMatchingNodes",
        "no nodes match the referenced KernelCacheNodeGroup",
    )
    assert agg.counts == Counts(0, 0, 0, 0) and not agg.ready


@pytest.mark.parametrize("ready", [False, None])  # NotReady, or no Ready condition at all
def test_no_ready_member_is_no_ready_nodes_even_with_ready_entries(ready):
    agg = aggregate([node("n1", ready=ready)], [kcn("n1")])
    assert (agg.state, agg.reason, agg.message) == ("Pending", "NoReadyNodes", "matching nodes are not ready")
    assert agg.counts == Counts(0, 0, 0, 0)


def test_an_error_entry_on_a_not_ready_member_is_not_counted():
    agg = aggregate([node("n1"), node("n2", ready=False)], [kcn("n1"), kcn("n2", "Error", "pull failed")])
    assert (agg.state, agg.reason) == ("Ready", "CacheReady")
    assert agg.counts == Counts(1, 1, 0, 0) and agg.error_nodes == ()


def test_a_cordoned_ready_member_counts():
    members = [node("n1"), node("n2", unschedulable=True)]
    assert aggregate(members, [kcn("n1"), kcn("n2")]).counts == Counts(2, 2, 0, 0)
    agg = aggregate(members, [kcn("n1"), kcn("n2", "Pulling")])
    assert (agg.state, agg.counts, agg.preparing_nodes) == ("Preparing", Counts(2, 1, 1, 0), ("n2",))


def test_a_missing_entry_or_kernel_cache_node_is_preparing():
    other = {"team-a/other": b.entry(NS, "other", "Ready")}
    members = [node("n1"), node("n2"), node("n3")]
    agg = aggregate(members, [kcn("n1"), kcn("n2", None, **other)])  # n2: no entry for it; n3: no KernelCacheNode
    assert (agg.state, agg.reason, agg.message) == ("Preparing", "Preparing", "cache preparation is in progress")
    assert agg.counts == Counts(3, 1, 2, 0)
    assert (agg.preparing_nodes, agg.missing_nodes) == (("n2", "n3"), ("n2", "n3"))


@pytest.mark.parametrize("state", ["Pending", "Pulling", "Extracting", "", "Rehydrating", "ready"])
def test_every_state_but_ready_and_error_is_preparing(state):
    agg = aggregate([node("n1")], [kcn("n1", state)])
    assert (agg.state, agg.counts, agg.missing_nodes) == ("Preparing", Counts(1, 0, 1, 0), ())


def test_any_error_fails_the_cache_with_the_first_non_empty_message_in_node_order():
    members = [node("n1"), node("n2"), node("n3"), node("n4")]
    kcns = [kcn("n1", "Error"), kcn("n2", "Pulling"), kcn("n3", "Error", "pull failed on n3"), kcn("n4", "Error", "x")]
    agg = aggregate(members, kcns)
    assert (agg.state, agg.reason, agg.message) == ("Error", "PreparationFailed", "pull failed on n3")
    assert agg.counts == Counts(4, 0, 1, 3)
    assert agg.error_nodes == ("n1", "n3", "n4") and agg.preparing_nodes == ("n2",)
    # node-list order decides, not names
    assert aggregate(list(reversed(members)), kcns).message == "x"


def test_error_entries_without_a_message_say_waiting():
    agg = aggregate([node("n1"), node("n2")], [kcn("n1", "Error"), kcn("n2")])
    assert (agg.state, agg.message) == ("Error", "waiting for node cache preparation status")


def test_the_message_of_a_not_ready_members_error_is_not_used():
    members = [node("n1", ready=False), node("n2")]
    agg = aggregate(members, [kcn("n1", "Error", "on a NotReady node"), kcn("n2", "Error")])
    assert (agg.message, agg.error_nodes) == ("waiting for node cache preparation status", ("n2",))


def test_the_entry_is_counted_by_state_only_not_by_artifact():
    stale = b.entry(NS, NAME, "Ready", seed="older")
    agg = aggregate([node("n1")], [o.KernelCacheNode.from_dict(b.kcn("n1", {f"{NS}/{NAME}": stale}))])
    assert agg.ready


def test_the_entry_index_gives_the_same_aggregate_for_every_cache():
    """The index (one pass over every entry, for the doctor's and status's thousands of aggregates) answers as
    the direct lookup does, for every cache of a mixed fleet, member order included."""
    from kubectl_kcache.kernelcache.aggregate import EntryIndex
    from kubectl_kcache.snapshot.model import build
    from tests import builders as b

    states = [None, "Ready", "Error", "Pulling", "Pending"]
    items = [b.group("gpu", {"pool": "gpu"})]
    for i in range(12):
        items.append(b.node(f"n{11 - i}", {"pool": "gpu"}, ready=i % 5 != 0, unschedulable=i % 4 == 0))
        entries = {}
        for j, kc in enumerate(("a", "b", "c")):
            state = states[(i + j) % len(states)]
            if state:
                entries[f"team-a/{kc}"] = b.entry("team-a", kc, state, message=f"m{i}{j}" if state == "Error" else "")
        if i % 6 != 3:
            items.append(b.kcn(f"n{11 - i}", entries))
    items += [b.kernel_cache(kc, "team-a", "gpu") for kc in ("a", "b", "c", "d")]
    snap = build(items)
    index = EntryIndex(snap.kcn_by_name)
    for kc in snap.kernel_caches:
        got = compute_aggregate(kc, snap.nodes, snap.kcn_by_name, index)
        assert got == compute_aggregate(kc, snap.nodes, snap.kcn_by_name) == literal(kc, snap)


def literal(kc: Any, snap: Any) -> Aggregate:
    """§7.2 word by word, member by member (the rule the index must not change)."""
    expected = [n for n in snap.nodes if n.ready is True]
    ready, preparing, missing, errors, message = [], [], [], [], ""
    for n in expected:
        kcn = snap.kcn_by_name.get(n.name)
        entry = ((kcn.status.cache_status if kcn and kcn.status else None) or {}).get(f"{kc.namespace}/{kc.name}")
        if entry is None:
            missing.append(n.name)
            preparing.append(n.name)
        elif entry.state == "Ready":
            ready.append(n.name)
        elif entry.state == "Error":
            errors.append(n.name)
            message = message or entry.message
        else:
            preparing.append(n.name)
    counts = Counts(len(expected), len(ready), len(preparing), len(errors))
    if errors:
        return Aggregate(
            "Error",
            "PreparationFailed",
            message or c.MSG_WAITING_FOR_PREPARATION,
            counts,
            tuple(errors),
            tuple(preparing),
            tuple(missing),
        )
    if len(ready) == len(expected):
        return Aggregate("Ready", "CacheReady", c.MSG_CACHE_READY, counts, (), tuple(preparing), tuple(missing))
    return Aggregate("Preparing", "Preparing", c.MSG_PREPARING, counts, (), tuple(preparing), tuple(missing))
