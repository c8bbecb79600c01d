"""Taints and tolerations with Kubernetes' rules (core/v1 Toleration.ToleratesTaint, the NoExecute taint
manager) and the DaemonSet controller's default tolerations (kserve-notes.md §6)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubectl_kcache import objects as o
from kubectl_kcache.kernelcache.taints import (
    DAEMONSET_DEFAULT_TOLERATIONS,
    daemon_pod_tolerations,
    evicting_after,
    tolerated_by,
    tolerates,
    untolerated_taints,
)
from tests import builders as b

T = o.Toleration


def taint(key: str, value: str = "", effect: str = "NoSchedule") -> o.Taint:
    return o.Taint(key=key, value=value, effect=effect)


def node_with(*taints: o.Taint) -> o.Node:
    return o.Node.from_dict(b.node("n1", taints=[{"key": t.key, "value": t.value, "effect": t.effect} for t in taints]))


GPU = taint("nvidia.com/gpu", "present", "NoSchedule")


# ---- ToleratesTaint ----------------------------------------------------------------------------------


def test_exists_with_empty_key_matches_every_taint():
    everything = T(operator="Exists")
    for t in (GPU, taint("a", effect="NoExecute"), taint("b", "v", "PreferNoSchedule")):
        assert tolerates(everything, t)


def test_empty_effect_matches_all_effects():
    tol = T(key="nvidia.com/gpu", operator="Exists")
    for effect in ("NoSchedule", "NoExecute", "PreferNoSchedule"):
        assert tolerates(tol, taint("nvidia.com/gpu", "x", effect))


def test_effect_must_match_when_set():
    assert not tolerates(T(key="nvidia.com/gpu", operator="Exists", effect="NoExecute"), GPU)
    assert tolerates(T(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule"), GPU)


def test_equal_requires_value():
    assert tolerates(T(key="nvidia.com/gpu", operator="Equal", value="present", effect="NoSchedule"), GPU)
    assert not tolerates(T(key="nvidia.com/gpu", operator="Equal", value="other"), GPU)
    assert not tolerates(T(key="nvidia.com/gpu", operator="Equal"), GPU)
    assert tolerates(T(key="dedicated", operator="Equal"), taint("dedicated"))


def test_empty_operator_means_equal():
    assert tolerates(T(key="nvidia.com/gpu", value="present"), GPU)
    assert not tolerates(T(key="nvidia.com/gpu"), GPU)


def test_exists_ignores_the_value():
    assert tolerates(T(key="nvidia.com/gpu", operator="Exists"), GPU)


def test_key_must_match():
    assert not tolerates(T(key="other", operator="Exists"), GPU)
    assert not tolerates(T(key="nvidia.com/GPU", operator="Exists"), GPU)


def test_unknown_operator_tolerates_nothing():
    assert not tolerates(T(key="nvidia.com/gpu", operator="In", value="present"), GPU)
    assert not tolerates(T(operator="exists"), GPU)


def test_tolerated_by_returns_the_first_match():
    a, c = T(key="x", operator="Exists"), T(operator="Exists")
    assert tolerated_by(GPU, [a, c]) is c
    assert tolerated_by(GPU, [a]) is None


def test_untolerated_taints_consider_only_blocking_effects():
    node = node_with(GPU, taint("soft", effect="PreferNoSchedule"), taint("evict", effect="NoExecute"))
    assert [t.key for t in untolerated_taints(node, [])] == ["nvidia.com/gpu", "evict"]
    assert [t.key for t in untolerated_taints(node, [T(key="nvidia.com/gpu", operator="Exists")])] == ["evict"]
    assert untolerated_taints(node, [T(operator="Exists")]) == []
    assert [t.key for t in untolerated_taints(node, [], effects=("PreferNoSchedule",))] == ["soft"]


# ---- NoExecute with tolerationSeconds ----------------------------------------------------------------


def test_noexecute_tolerated_for_a_while_is_evicting():
    evict = taint("maintenance", effect="NoExecute")
    node = node_with(evict, GPU)
    tols = [T(key="maintenance", operator="Exists", effect="NoExecute", toleration_seconds=300)]
    assert evicting_after(node, tols) == [(evict, 300)]


def test_noexecute_tolerated_forever_is_not_evicting():
    node = node_with(taint("maintenance", effect="NoExecute"))
    assert evicting_after(node, [T(key="maintenance", operator="Exists")]) == []


def test_untolerated_noexecute_is_not_listed_as_evicting_later():
    assert evicting_after(node_with(taint("maintenance", effect="NoExecute")), []) == []


def test_noschedule_taints_never_evict():
    tols = [T(key="nvidia.com/gpu", operator="Exists", toleration_seconds=10)]
    assert evicting_after(node_with(GPU), tols) == []


def test_zero_seconds_evicts_at_once():
    evict = taint("maintenance", effect="NoExecute")
    assert evicting_after(node_with(evict), [T(key="maintenance", operator="Exists", toleration_seconds=0)]) == [
        (evict, 0)
    ]


def test_evicting_after_uses_the_first_matching_toleration_like_the_taint_manager():
    evict = taint("maintenance", effect="NoExecute")
    node = node_with(evict)
    # first match has 60s: the pod is evicted after 60s even though a later toleration would tolerate forever
    assert evicting_after(
        node, [T(key="maintenance", operator="Exists", toleration_seconds=60), T(operator="Exists")]
    ) == [(evict, 60)]
    # first match tolerates forever: never evicted
    assert (
        evicting_after(node, [T(operator="Exists"), T(key="maintenance", operator="Exists", toleration_seconds=60)])
        == []
    )
    # two timed matches: the first one counts, not the longest
    assert evicting_after(
        node,
        [
            T(key="maintenance", operator="Exists", toleration_seconds=300),
            T(key="maintenance", operator="Exists", effect="NoExecute", toleration_seconds=600),
        ],
    ) == [(evict, 300)]


# ---- the DaemonSet controller's tolerations ----------------------------------------------------------


def test_daemonset_default_tolerations_exactly():
    assert [t.to_dict() for t in DAEMONSET_DEFAULT_TOLERATIONS] == [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
        {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
    ]


@pytest.mark.parametrize(
    "t",
    [
        taint("node.kubernetes.io/not-ready", effect="NoExecute"),
        taint("node.kubernetes.io/unreachable", effect="NoExecute"),
        taint("node.kubernetes.io/unschedulable", effect="NoSchedule"),
        taint("node.kubernetes.io/disk-pressure", effect="NoSchedule"),
        taint("node.kubernetes.io/memory-pressure", effect="NoSchedule"),
        taint("node.kubernetes.io/pid-pressure", effect="NoSchedule"),
    ],
)
def test_daemon_pods_tolerate_node_condition_taints(t):
    node = node_with(t)
    assert untolerated_taints(node, daemon_pod_tolerations([])) == []
    assert evicting_after(node, daemon_pod_tolerations([])) == []
    assert untolerated_taints(node, []) == [t]


def test_daemon_pods_do_not_tolerate_other_taints():
    node = node_with(GPU, taint("node.kubernetes.io/network-unavailable"), taint("node.kubernetes.io/not-ready"))
    # network-unavailable only with hostNetwork; not-ready is only tolerated with effect NoExecute
    assert [t.key for t in untolerated_taints(node, daemon_pod_tolerations([]))] == [
        "nvidia.com/gpu",
        "node.kubernetes.io/network-unavailable",
        "node.kubernetes.io/not-ready",
    ]
    template = [T(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule")]
    assert [t.key for t in untolerated_taints(node, daemon_pod_tolerations(template))] == [
        "node.kubernetes.io/network-unavailable",
        "node.kubernetes.io/not-ready",
    ]


def test_daemon_pod_tolerations_are_template_then_defaults():
    template = [T(key="a", operator="Exists")]
    assert daemon_pod_tolerations(template) == template + list(DAEMONSET_DEFAULT_TOLERATIONS)


# ---- properties: the rule restated from the API documentation ----------------------------------------


def documented_rule(tol: o.Toleration, t: o.Taint) -> bool:
    """core/v1 Toleration, from the API reference:
    effect: "Empty means match all taint effects."
    key: "Empty means match all taint keys. If the key is empty, operator must be Exists."
    operator: "Exists and Equal. Defaults to Equal. Exists is equivalent to wildcard for value."
    value: "If the operator is Exists, the value should be empty, otherwise just a regular string."
    """
    if tol.effect != "" and tol.effect != t.effect:
        return False
    operator = tol.operator if tol.operator != "" else "Equal"
    if operator == "Exists":
        return tol.key == "" or tol.key == t.key
    if operator == "Equal":
        return tol.key != "" and tol.key == t.key and tol.value == t.value
    return False


KEYS = st.sampled_from(["nvidia.com/gpu", "dedicated", "node.kubernetes.io/not-ready", "a"])
TOL_KEYS = st.one_of(st.just(""), KEYS)
VALUES = st.sampled_from(["", "present", "gpu", "x"])
EFFECTS = st.sampled_from(["NoSchedule", "NoExecute", "PreferNoSchedule"])
TAINTS = st.builds(o.Taint, key=KEYS, value=VALUES, effect=EFFECTS)
TOLERATIONS = st.builds(
    o.Toleration,
    key=TOL_KEYS,
    operator=st.sampled_from(["", "Exists", "Equal", "Lt"]),
    value=VALUES,
    effect=st.one_of(st.just(""), EFFECTS),
    toleration_seconds=st.one_of(st.none(), st.integers(min_value=0, max_value=600)),
)


@given(TOLERATIONS, TAINTS)
def test_tolerates_agrees_with_the_documented_rule(tol, t):
    assert tolerates(tol, t) == documented_rule(tol, t)


@given(TAINTS)
def test_exists_with_empty_key_and_effect_tolerates_every_taint(t):
    assert tolerates(T(operator="Exists"), t)


@given(TAINTS)
def test_a_toleration_copied_from_the_taint_tolerates_it(t):
    assert tolerates(T(key=t.key, operator="Equal", value=t.value, effect=t.effect), t)
    assert tolerates(T(key=t.key, operator="Exists", effect=t.effect), t)


@given(st.lists(TAINTS, max_size=5), st.lists(TOLERATIONS, max_size=5), TOLERATIONS)
def test_adding_a_toleration_never_adds_an_untolerated_taint(taints, tols, extra):
    node = o.Node(metadata=o.Meta(name="n"), spec=o.NodeSpec(taints=tuple(taints)))
    before = untolerated_taints(node, tols)
    after = untolerated_taints(node, tols + [extra])
    assert all(t in before for t in after)


@given(st.lists(st.lists(TAINTS, max_size=3), max_size=8), st.lists(TOLERATIONS, max_size=5))
def test_the_taint_join_answers_every_node_as_the_rule_does(fleet, tols):
    from kubectl_kcache.kernelcache.taints import TaintJoin

    join = TaintJoin(tols)
    for i, taints in enumerate(fleet + fleet):  # each set twice: the second answer comes from the join's memo
        node = o.Node(metadata=o.Meta(name=f"n{i}"), spec=o.NodeSpec(taints=tuple(taints)))
        assert join.untolerated(node) == untolerated_taints(node, tols)
        assert join.untolerated(node, ("PreferNoSchedule",)) == untolerated_taints(node, tols, ("PreferNoSchedule",))
        assert join.evicting(node) == evicting_after(node, tols)
