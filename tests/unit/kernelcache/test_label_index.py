"""Membership from the label index is KServe's rule (selector_matches over every node and group), whatever the
labels and selectors: properties over random fleets, empty selectors included (they match every node, as in
KServe's MatchingGroups), plus the memo on the snapshot."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_kcache.kernelcache.membership import membership, membership_of, plan_memberships
from kubectl_kcache.kernelcache.selection import select_node_group
from kubectl_kcache.kernelcache.selectors import (
    LabelIndex,
    label_mismatch,
    matching_groups,
    near_misses,
    selector_matches,
)
from kubectl_kcache.objects import ActiveSession
from kubectl_kcache.snapshot import model as snap

from .helpers import bare_node, group, kcn

KEYS = st.sampled_from(["role", "zone", "tier", "nvidia.com/gpu.product", "node-role.kubernetes.io/worker", "a"])
VALUES = st.sampled_from(["", "gpu", "cpu", "east", "NVIDIA-H100", "x"])
LABELS = st.dictionaries(KEYS, VALUES, max_size=6)
SELECTORS = st.dictionaries(KEYS, VALUES, max_size=4)  # empty ones included
FLEETS = st.lists(LABELS, max_size=25)
GROUPS = st.lists(
    st.tuples(st.sampled_from(["b", "a", "gpu", "B", "z-1", "east"]), SELECTORS), max_size=8, unique_by=lambda g: g[0]
)


def _fleet(labels):
    return [bare_node(f"n{i}", lbl) for i, lbl in enumerate(labels)]


def _groups(specs):
    return [group(name, sel) for name, sel in specs]


@settings(max_examples=300)
@given(FLEETS, GROUPS)
def test_index_membership_is_the_naive_rule(labels, specs):
    nodes, groups = _fleet(labels), _groups(specs)
    m = membership(nodes, groups)
    naive = {
        n.name: sorted((g for g in groups if selector_matches(g.node_selector, n.labels)), key=lambda g: g.name)
        for n in nodes
    }
    assert m.groups_of_node == {k: v for k, v in naive.items() if v}
    assert m.member_nodes == [n for n in nodes if naive[n.name]]
    assert m.members_of_group == {
        g.name: [n for n in nodes if selector_matches(g.node_selector, n.labels)] for g in groups
    }
    for n in nodes:
        assert m.groups_for(n, groups) == matching_groups(n.labels, groups)


@settings(max_examples=300)
@given(FLEETS, SELECTORS)
def test_index_answers_each_selector_as_selector_matches(labels, selector):
    nodes = _fleet(labels)
    index = LabelIndex(nodes)
    assert list(index.matching(selector)) == [i for i, n in enumerate(nodes) if selector_matches(selector, n.labels)]
    assert index.with_keys(selector) == [i for i, n in enumerate(nodes) if all(k in n.labels for k in selector)]
    for key in selector:
        assert index.with_key(key) == [i for i, n in enumerate(nodes) if key in n.labels]


@settings(max_examples=300)
@given(FLEETS, SELECTORS.filter(bool))
def test_near_misses_from_the_index_are_those_of_every_node(labels, selector):
    nodes = _fleet(labels)
    g = group("g", selector)
    assert near_misses(g, LabelIndex(nodes)) == near_misses(g, nodes)
    # what the naive rule says a near miss is: some pairs right, not all
    assert {n.name for n, _ in near_misses(g, nodes)} == {
        n.name for n in nodes if 0 < label_mismatch(selector, n.labels).count < len(selector)
    }


def test_empty_selector_matches_every_node_including_unlabelled_ones():
    nodes = [bare_node("a", {}), bare_node("b", {"role": "gpu"})]
    m = membership(nodes, [group("everything", {}), group("gpu", {"role": "gpu"})])
    assert [n.name for n in m.members_of_group["everything"]] == ["a", "b"]
    assert [g.name for g in m.groups_of_node["b"]] == ["everything", "gpu"]


def test_a_node_from_elsewhere_is_matched_not_looked_up():
    nodes = [bare_node("n1", {"role": "cpu"})]
    groups = [group("gpu", {"role": "gpu"})]
    m = membership(nodes, groups)
    other = bare_node("n1", {"role": "gpu"})  # same name, other labels (a what-if)
    assert [g.name for g in m.groups_for(other, groups)] == ["gpu"]
    assert m.groups_for(nodes[0], groups) == []


@given(FLEETS, GROUPS)
def test_plan_from_the_computed_membership_is_the_plan(labels, specs):
    nodes, groups = _fleet(labels), _groups(specs)
    kcns = [kcn("n0"), kcn("gone")]
    assert plan_memberships(nodes, groups, kcns, membership(nodes, groups)) == plan_memberships(nodes, groups, kcns)


@given(FLEETS, GROUPS)
def test_selection_with_the_membership_decides_as_without(labels, specs):
    nodes, groups = _fleet(labels), _groups(specs)
    by_name, node_by_name = {g.name: g for g in groups}, {n.name: n for n in nodes}
    m = membership(nodes, groups)
    for n in nodes:
        session = ActiveSession(id="s", pod_name="p", node_name=n.name)
        assert select_node_group(session, by_name, node_by_name, "gpu", m) == select_node_group(
            session, by_name, node_by_name, "gpu"
        )


def test_membership_is_computed_once_per_snapshot():
    nodes = (bare_node("n1", {"role": "gpu"}),)
    s = snap.ClusterSnapshot(nodes=nodes, node_groups=(group("gpu", {"role": "gpu"}),))
    first = membership_of(s)
    assert membership_of(s) is first
    assert [n.name for n in first.members_of_group["gpu"]] == ["n1"]
    other = snap.ClusterSnapshot(nodes=nodes, node_groups=(group("gpu", {"role": "cpu"}),))
    assert membership_of(other).members_of_group["gpu"] == []


def test_the_next_snapshot_reuses_the_membership_only_while_nodes_and_groups_are_the_same_objects():
    # a kept-current view (snapshot/follow.py) hands the next snapshot the same tuple of a list that did not move
    nodes = (bare_node("n1", {"role": "gpu"}),)
    groups = (group("gpu", {"role": "gpu"}),)
    first = snap.ClusterSnapshot(nodes=nodes, node_groups=groups)
    assert "membership" not in snap.ClusterSnapshot(nodes=nodes, node_groups=groups).carry_derived(first)
    computed = membership_of(first)
    same = snap.ClusterSnapshot(nodes=nodes, node_groups=groups, kcns=(kcn("n1"),))  # a KernelCacheNode event
    assert "membership" in same.carry_derived(first) and membership_of(same) is computed
    relabelled = (bare_node("n1", {"role": "cpu"}),)  # a Node event: a new object, even with the same name
    changed = snap.ClusterSnapshot(nodes=relabelled, node_groups=groups)
    assert "membership" not in changed.carry_derived(first)
    assert membership_of(changed).members_of_group["gpu"] == []
    assert changed.carry_derived(None) == []
