"""KernelCacheNode membership and node-group matching, golden cases from KServe's node_reconciler_test.go and
pkg/kernelcache/nodegroup/nodes_test.go (kserve-notes.md §1.3-1.4), plus properties of the selector rule."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kubectl_kcache.kernelcache import constants as c
from kubectl_kcache.kernelcache.membership import MembershipPlan, membership, plan_memberships
from kubectl_kcache.kernelcache.selectors import (
    label_mismatch,
    matching_groups,
    near_misses,
    selector_matches,
)

from .helpers import bare_node, group, kcn, node

GPU = group("gpu", {"role": "gpu"})


# ---- node reconciler (node_reconciler_test.go) ------------------------------------------------------


def test_removes_orphan_nodes_and_creates_the_member():
    # TestKernelCacheNodeReconcilerRemovesOrphanNodes
    plan = plan_memberships([node("gpu-node", {"role": "gpu"})], [GPU], [kcn("orphan-node")])
    assert plan == MembershipPlan(missing=("gpu-node",), orphaned=("orphan-node",))


def test_keeps_not_ready_matching_node():
    # TestKernelCacheNodeReconcilerKeepsNotReadyMatchingNode
    plan = plan_memberships([node("gpu-node", {"role": "gpu"}, ready=False)], [GPU], [kcn("gpu-node")])
    assert plan == MembershipPlan(missing=(), orphaned=())
    assert not plan.blocked_by


def test_creates_not_ready_matching_node():
    # TestKernelCacheNodeReconcilerCreatesNotReadyMatchingNode: readiness is not considered
    plan = plan_memberships([node("gpu-node", {"role": "gpu"}, ready=False)], [GPU], [])
    assert plan.missing == ("gpu-node",)
    assert plan.orphaned == ()


def test_node_without_ready_condition_is_a_member():
    plan = plan_memberships([node("gpu-node", {"role": "gpu"}, ready=None)], [GPU], [])
    assert plan.missing == ("gpu-node",)


def test_invalid_node_group_blocks_the_whole_pass_with_kserves_message():
    # TestKernelCacheNodeReconcilerDoesNotUpdateDaemonSetForInvalidNodeGroup
    invalid = group("invalid", {})
    plan = plan_memberships([node("gpu-node", {"role": "gpu"})], [GPU, invalid], [kcn("orphan-node")])
    assert plan.blocked_by == 'KernelCacheNodeGroup "invalid" requires a non-empty nodeSelector'
    assert plan.blocked_by == c.MSG_EMPTY_SELECTOR.format(name="invalid")
    # nothing is created or deleted while blocked
    assert plan.missing == ()
    assert plan.orphaned == ()


def test_invalid_node_group_message_names_the_first_in_list_order():
    plan = plan_memberships([], [group("b-empty", {}), group("a-empty", {})], [])
    assert plan.blocked_by == 'KernelCacheNodeGroup "a-empty" requires a non-empty nodeSelector'


def test_removes_nodes_after_group_deletion():
    # TestKernelCacheNodeReconcilerRemovesNodesAfterGroupDeletion: no groups, no nodes
    plan = plan_memberships([], [], [kcn("orphan-node")])
    assert plan == MembershipPlan(missing=(), orphaned=("orphan-node",))


def test_node_that_lost_its_label_is_orphaned():
    plan = plan_memberships([node("gpu-node", {"role": "cpu"})], [GPU], [kcn("gpu-node")])
    assert plan.orphaned == ("gpu-node",)
    assert plan.missing == ()


def test_node_in_two_groups_gets_one_kernelcachenode():
    groups = [GPU, group("east", {"zone": "east"})]
    plan = plan_memberships([node("n1", {"role": "gpu", "zone": "east"})], groups, [])
    assert plan.missing == ("n1",)


def test_plan_is_sorted():
    nodes = [node(n, {"role": "gpu"}) for n in ("n3", "n1", "n2")]
    plan = plan_memberships(nodes, [GPU], [kcn("z"), kcn("a")])
    assert plan.missing == ("n1", "n2", "n3")
    assert plan.orphaned == ("a", "z")


def test_steady_state_plans_nothing():
    nodes = [node("n1", {"role": "gpu"}), node("cpu-1", {"role": "cpu"})]
    assert plan_memberships(nodes, [GPU], [kcn("n1")]) == MembershipPlan((), ())


def test_member_nodes_keeps_input_order():
    nodes = [node("b", {"role": "gpu"}), node("x", {"role": "cpu"}), node("a", {"role": "gpu"})]
    assert [n.name for n in membership(nodes, [GPU]).member_nodes] == ["b", "a"]


# ---- nodegroup.GetNodes / MatchingGroups (nodes_test.go) -------------------------------------------


def test_get_nodes_selects_only_matching_labels():
    # TestGetNodesSelectsOnlyMatchingLabels: ready=[gpu-a], notReady=[gpu-b]
    nodes = [
        node("gpu-a", {"role": "gpu", "zone": "east"}),
        node("gpu-b", {"role": "gpu", "zone": "east"}, ready=False),
        node("cpu-a", {"role": "cpu"}),
    ]
    members = membership(nodes, [GPU]).members_of_group[GPU.name]
    assert [n.name for n in members if n.ready] == ["gpu-a"]
    assert [n.name for n in members if not n.ready] == ["gpu-b"]


def test_requires_all_selector_labels():
    # TestGetNodesRequiresAllSelectorLabels
    g = group("g", {"role": "gpu", "zone": "east"})
    nodes = [node("partial", {"role": "gpu"}), node("full", {"role": "gpu", "zone": "east"})]
    assert [n.name for n in membership(nodes, [g]).members_of_group[g.name]] == ["full"]


def test_requires_empty_value_selector_label_to_exist():
    # TestGetNodesRequiresEmptyValueSelectorLabelToExist
    g = group("workers", {"node-role.kubernetes.io/worker": ""})
    nodes = [
        node("missing", {"role": "gpu"}),
        node("empty", {"role": "gpu", "node-role.kubernetes.io/worker": ""}),
    ]
    assert [n.name for n in membership(nodes, [g]).members_of_group[g.name]] == ["empty"]
    assert not selector_matches({"node-role.kubernetes.io/worker": ""}, {"role": "gpu"})
    assert selector_matches({"node-role.kubernetes.io/worker": ""}, {"node-role.kubernetes.io/worker": ""})
    assert not selector_matches({"node-role.kubernetes.io/worker": ""}, {"node-role.kubernetes.io/worker": "x"})


def test_matching_groups_sorted_by_name():
    # TestMatchingGroups
    groups = [
        group("gpu-zone", {"role": "gpu", "zone": "east"}),
        group("cpu", {"role": "cpu"}),
        group("gpu-oci", {"role": "gpu"}),
    ]
    got = matching_groups({"role": "gpu", "zone": "east"}, groups)
    assert [g.name for g in got] == ["gpu-oci", "gpu-zone"]


def test_matching_groups_sorts_bytewise_like_go():
    groups = [group(n, {"role": "gpu"}) for n in ("b", "B", "a-1", "a", "a1")]
    assert [g.name for g in matching_groups({"role": "gpu"}, groups)] == ["B", "a", "a-1", "a1", "b"]


def test_value_comparison_is_exact():
    assert not selector_matches({"role": "gpu"}, {"role": "GPU"})
    assert not selector_matches({"role": "gpu"}, {"role": "gpu "})
    assert not selector_matches({"role": "gpu"}, {"Role": "gpu"})


def test_matching_groups_empty_selector_matches_every_node_as_in_kserve():
    groups = [group("gpu", {"role": "gpu"}), group("everything", {})]
    assert [g.name for g in matching_groups({"role": "gpu"}, groups)] == ["everything", "gpu"]


# ---- near misses ------------------------------------------------------------------------------------


def test_label_mismatch_lists_missing_and_different():
    mm = label_mismatch({"role": "gpu", "zone": "east", "tier": "a"}, {"role": "gpu", "zone": "west"})
    assert mm.missing == {"tier": "a"}
    assert mm.different == {"zone": ("east", "west")}
    assert mm.wanted == {"tier": "a", "zone": "east"}
    assert mm.count == 2


def test_near_misses_are_partial_matches_only():
    g = group("g", {"role": "gpu", "zone": "east"})
    nodes = [
        bare_node("full", {"role": "gpu", "zone": "east"}),
        bare_node("half", {"role": "gpu"}),
        bare_node("none", {"other": "x"}),
        bare_node("wrong", {"role": "gpu", "zone": "west"}),
    ]
    got = near_misses(g, nodes)
    assert [(n.name, mm.count) for n, mm in got] == [("half", 1), ("wrong", 1)]


# ---- properties -------------------------------------------------------------------------------------

KEYS = st.sampled_from(["role", "zone", "tier", "nvidia.com/gpu.product", "node-role.kubernetes.io/worker", "a"])
VALUES = st.sampled_from(["", "gpu", "cpu", "east", "NVIDIA-H100", "x"])
LABELS = st.dictionaries(KEYS, VALUES, max_size=6)
SELECTORS = st.dictionaries(KEYS, VALUES, min_size=1, max_size=4)
NAMES = st.text(alphabet="abcxyz-019", min_size=1, max_size=6)


@given(LABELS.filter(bool))
def test_a_nodes_own_labels_as_selector_always_match(labels):
    assert selector_matches(labels, labels)


@given(LABELS, st.data())
def test_any_non_empty_subset_of_the_labels_matches(labels, data):
    keys = data.draw(st.lists(st.sampled_from(sorted(labels)), min_size=1, unique=True)) if labels else []
    if keys:
        assert selector_matches({k: labels[k] for k in keys}, labels)


@given(SELECTORS, LABELS, KEYS, VALUES)
def test_adding_a_selector_key_never_turns_a_non_match_into_a_match(selector, labels, key, value):
    if key not in selector and not selector_matches(selector, labels):
        assert not selector_matches({**selector, key: value}, labels)


@given(SELECTORS, LABELS)
def test_selector_rule_restated(selector, labels):
    expected = all(k in labels and labels[k] == v for k, v in selector.items())
    assert selector_matches(selector, labels) == expected


@given(LABELS, st.lists(st.tuples(NAMES, SELECTORS), max_size=8, unique_by=lambda t: t[0]))
def test_matching_groups_is_the_sorted_filter_of_selector_matches(labels, specs):
    groups = [group(name, sel) for name, sel in specs]
    got = [g.name for g in matching_groups(labels, groups)]
    assert got == sorted(got, key=lambda n: n.encode())
    assert got == sorted(g.name for g in groups if selector_matches(g.node_selector, labels))


@given(
    st.lists(st.tuples(NAMES, LABELS), max_size=8, unique_by=lambda t: t[0]),
    st.lists(st.tuples(NAMES, SELECTORS), max_size=5, unique_by=lambda t: t[0]),
    st.lists(NAMES, max_size=8, unique=True),
)
def test_membership_plan_converges(node_specs, group_specs, kcn_names):
    nodes = [bare_node(n, labels) for n, labels in node_specs]
    groups = [group(n, sel) for n, sel in group_specs]
    plan = plan_memberships(nodes, groups, [kcn(k) for k in kcn_names])
    members = {n.name for n in nodes if any(selector_matches(g.node_selector, n.labels) for g in groups)}
    assert set(plan.missing) == members - set(kcn_names)
    assert set(plan.orphaned) == set(kcn_names) - members
    after = (set(kcn_names) | set(plan.missing)) - set(plan.orphaned)
    assert plan_memberships(nodes, groups, [kcn(k) for k in sorted(after)]) == MembershipPlan((), ())
