"""Agent DaemonSet placement as KServe's node reconciler computes it (kserve-notes.md §1.2, golden cases from
node_reconciler_test.go), Go's json.Marshal bytes for tolerations, placement_diff and placement_patch."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kubectl_kcache import objects as o
from kubectl_kcache.kernelcache import constants as c
from kubectl_kcache.kernelcache.gojson import marshal
from kubectl_kcache.kernelcache.placement import (
    agent_tolerations,
    desired_affinity,
    node_selector_terms,
    placement_diff,
    placement_patch,
)
from kubectl_kcache.objects.decode import convert
from tests import builders as b

from .helpers import daemonset, group, tol

H100_TOL = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
L40S_TOL = {"key": "workload", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
H100 = group("h100", {"nvidia.com/gpu.product": "NVIDIA-H100"}, [H100_TOL])
L40S = group("l40s", {"nvidia.com/gpu.product": "NVIDIA-L40S"}, [L40S_TOL])
H100_TERM = {"matchExpressions": [{"key": "nvidia.com/gpu.product", "operator": "In", "values": ["NVIDIA-H100"]}]}
L40S_TERM = {"matchExpressions": [{"key": "nvidia.com/gpu.product", "operator": "In", "values": ["NVIDIA-L40S"]}]}
DISABLED_TERM = {
    "matchExpressions": [{"key": "serving.kserve.io/kernelcache-agent", "operator": "In", "values": ["disabled"]}]
}


def required_terms(affinity: dict[str, Any]) -> list[dict[str, Any]]:
    return affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]


# ---- golden: TestKernelCacheNodeReconcilerConfiguresAgentDaemonSetFromNodeGroups ---------------------


def test_configures_agent_daemonset_from_node_groups():
    ds = daemonset(node_selector={"kserve/localmodel": "worker"})
    groups = [L40S, H100]  # list order does not matter: terms follow group names
    assert node_selector_terms(groups) == [H100_TERM, L40S_TERM]
    assert [t.to_dict() for t in agent_tolerations(groups)] == [H100_TOL, L40S_TOL]
    patch = placement_patch(ds, groups)
    pod_spec = patch["spec"]["template"]["spec"]
    assert pod_spec["nodeSelector"] is None  # removed
    assert required_terms(pod_spec["affinity"]) == [H100_TERM, L40S_TERM]
    assert pod_spec["tolerations"] == [H100_TOL, L40S_TOL]


def test_after_deleting_l40s_only_h100_remains():
    assert node_selector_terms([H100]) == [H100_TERM]
    assert [t.to_dict() for t in agent_tolerations([H100])] == [H100_TOL]
    pod_spec = placement_patch(daemonset(terms=[H100_TERM, L40S_TERM]), [H100])["spec"]["template"]["spec"]
    assert required_terms(pod_spec["affinity"]) == [H100_TERM]
    assert pod_spec["tolerations"] == [H100_TOL]


def test_no_groups_gives_exactly_the_disabled_term():
    # TestKernelCacheNodeReconcilerAgentDaemonSetDoesNotScheduleWithoutNodeGroups
    assert node_selector_terms([]) == [DISABLED_TERM]
    assert DISABLED_TERM["matchExpressions"][0]["key"] == c.AGENT_DISABLED_KEY
    assert agent_tolerations([]) == []
    pod_spec = placement_patch(daemonset(), [])["spec"]["template"]["spec"]
    assert required_terms(pod_spec["affinity"]) == [DISABLED_TERM]
    assert pod_spec["tolerations"] is None  # KServe sets nil, never []


def test_toleration_order_golden_json():
    assert (
        marshal(H100.tolerations[0].to_dict()) == b'{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}'
    )
    assert marshal(L40S.tolerations[0].to_dict()) == (
        b'{"key":"workload","operator":"Equal","value":"gpu","effect":"NoSchedule"}'
    )


def test_selector_keys_sorted_bytewise_within_a_term():
    g = group("g", {"zone": "a", "Role": "b", "nvidia.com/x": "c", "a_b": "d"})
    assert [e["key"] for e in node_selector_terms([g])[0]["matchExpressions"]] == [
        "Role",
        "a_b",
        "nvidia.com/x",
        "zone",
    ]


def test_identical_selectors_give_identical_terms_not_deduplicated():
    groups = [group("b", {"role": "gpu"}), group("a", {"role": "gpu"})]
    assert node_selector_terms(groups) == [b.term({"role": "gpu"})] * 2


def test_desired_affinity_keeps_other_parts_and_replaces_required_terms():
    current = {
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "x"}]},
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {"matchExpressions": []}}],
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [b.term({"old": "x"})]},
        },
    }
    got = desired_affinity(current, [H100])
    assert got["podAntiAffinity"] == current["podAntiAffinity"]
    assert (
        got["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
        == (current["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"])
    )
    assert required_terms(got) == [H100_TERM]
    # the input is not modified
    assert required_terms(current) == [b.term({"old": "x"})]


# ---- Go json.Marshal --------------------------------------------------------------------------------


def test_marshal_is_compact_and_keeps_field_order():
    assert marshal({"key": "a", "operator": "Exists"}) == b'{"key":"a","operator":"Exists"}'
    assert marshal([1, "x", None, True]) == b'[1,"x",null,true]'


def test_marshal_html_escapes():
    assert marshal({"key": "a<b>&c"}) == b'{"key":"a\\u003cb\\u003e\\u0026c"}'
    assert marshal({"key": "\u2028\u2029"}) == b'{"key":"\\u2028\\u2029"}'


def test_marshal_keeps_non_ascii_as_utf8():
    assert marshal({"key": "gpu-ключ-é-日本"}) == '{"key":"gpu-ключ-é-日本"}'.encode()


def test_marshal_escapes_control_characters_as_go_does():
    assert marshal({"key": 'a"b\\c\n\t\x01'}) == b'{"key":"a\\"b\\\\c\\n\\t\\u0001"}'


def test_marshal_lone_surrogate_like_go():
    assert marshal({"key": "\ud800"}) == '{"key":"\ufffd"}'.encode()


def test_toleration_to_dict_omits_empty_fields_and_keeps_zero_seconds():
    assert tol(key="a").to_dict() == {"key": "a"}
    assert tol(operator="Exists").to_dict() == {"operator": "Exists"}
    assert marshal(tol(key="k", operator="Exists", effect="NoExecute", toleration_seconds=0).to_dict()) == (
        b'{"key":"k","operator":"Exists","effect":"NoExecute","tolerationSeconds":0}'
    )
    assert marshal(tol(key="k", value="v", effect="NoExecute", toleration_seconds=300).to_dict()) == (
        b'{"key":"k","value":"v","effect":"NoExecute","tolerationSeconds":300}'
    )


def test_toleration_order_uses_escaped_bytes():
    # raw '&' (0x26) and '<' (0x3c) sort before 'Z' (0x5a), but Go writes \u0026 / \u003c: '\' is 0x5c
    groups = [group("g", {"r": "x"}, [{"key": "a&"}, {"key": "aZ"}, {"key": "a<"}, {"key": "a"}])]
    assert [t.key for t in agent_tolerations(groups)] == ["a", "aZ", "a&", "a<"]


def test_toleration_order_follows_the_json_text():
    groups = [
        group("a", {"r": "x"}, [{"key": "é"}, {"key": "z"}, {"effect": "NoExecute"}]),
        group("b", {"r": "y"}, [{"operator": "Exists"}, {"effect": "NoSchedule", "operator": "Exists"}]),
    ]
    got = [t.to_dict() for t in agent_tolerations(groups)]
    # {"effect" < {"key" < {"operator"; non-ASCII after ASCII; "," (0x2c) before "}" (0x7d)
    assert got == [
        {"effect": "NoExecute"},
        {"key": "z"},
        {"key": "é"},
        {"operator": "Exists", "effect": "NoSchedule"},
        {"operator": "Exists"},
    ]
    assert [marshal(t) for t in got] == sorted(marshal(t) for t in got)


def test_dedup_is_by_exact_json_text():
    # operator omitted (means Equal in Kubernetes) and operator Equal are different JSON: both kept
    groups = [
        group("a", {"r": "x"}, [{"key": "a", "operator": "Equal", "value": "x"}, H100_TOL]),
        group("b", {"r": "y"}, [{"key": "a", "value": "x"}, H100_TOL]),
    ]
    got = [t.to_dict() for t in agent_tolerations(groups)]
    assert got == [{"key": "a", "operator": "Equal", "value": "x"}, {"key": "a", "value": "x"}, H100_TOL]


# ---- placement_diff ---------------------------------------------------------------------------------


def kserve_shaped(groups: list[o.NodeGroup], **extra: Any) -> o.DaemonSet:
    return daemonset(
        tolerations=[t.to_dict() for t in agent_tolerations(groups)],
        terms=node_selector_terms(groups),
        **extra,
    )


def test_daemonset_in_kserves_shape_needs_no_patch():
    ds = daemonset(tolerations=[H100_TOL, L40S_TOL], terms=[H100_TERM, L40S_TERM])
    diff = placement_diff(ds, [H100, L40S])
    assert not diff
    assert diff.describe() == []


def test_daemonset_without_groups_in_kserves_shape_needs_no_patch():
    assert not placement_diff(daemonset(terms=[DISABLED_TERM]), [])


def test_tolerations_in_another_order_need_a_patch():
    ds = daemonset(tolerations=[L40S_TOL, H100_TOL], terms=[H100_TERM, L40S_TERM])
    diff = placement_diff(ds, [H100, L40S])
    assert diff
    assert (diff.node_selector, diff.affinity, diff.tolerations) == (False, False, True)
    assert diff.describe() == ["the tolerations differ from the union of the node groups' tolerations"]


def test_extra_node_selector_needs_a_patch():
    ds = daemonset(tolerations=[H100_TOL, L40S_TOL], terms=[H100_TERM, L40S_TERM], node_selector={"a": "b"})
    diff = placement_diff(ds, [H100, L40S])
    assert (diff.node_selector, diff.affinity, diff.tolerations) == (True, False, False)
    assert diff.describe() == ["the pod template has a nodeSelector (KServe removes it)"]


def test_stale_term_needs_a_patch():
    ds = daemonset(tolerations=[H100_TOL], terms=[H100_TERM, L40S_TERM])
    diff = placement_diff(ds, [H100])
    assert (diff.node_selector, diff.affinity, diff.tolerations) == (False, True, False)


def test_terms_in_another_order_need_a_patch():
    ds = daemonset(tolerations=[H100_TOL, L40S_TOL], terms=[L40S_TERM, H100_TERM])
    assert placement_diff(ds, [H100, L40S]).affinity


def test_missing_affinity_needs_a_patch():
    diff = placement_diff(daemonset(), [])
    assert (diff.node_selector, diff.affinity, diff.tolerations) == (False, True, False)


def test_extra_or_missing_toleration_fields_need_a_patch():
    seconds = dict(H100_TOL, tolerationSeconds=60)
    assert placement_diff(daemonset(tolerations=[seconds, L40S_TOL], terms=[H100_TERM, L40S_TERM]), [H100, L40S])
    assert placement_diff(daemonset(tolerations=[H100_TOL], terms=[H100_TERM, L40S_TERM]), [H100, L40S]).tolerations


def test_other_affinity_parts_do_not_cause_a_patch():
    ds_dict = b.agent_daemonset(tolerations=[H100_TOL], terms=[H100_TERM])
    aff = ds_dict["spec"]["template"]["spec"]["affinity"]
    aff["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "kubernetes.io/x"}]}
    aff["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] = [
        {"weight": 10, "preference": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}}
    ]
    ds = o.DaemonSet.from_dict(ds_dict)
    assert not placement_diff(ds, [H100])
    patch_aff = placement_patch(ds, [H100])["spec"]["template"]["spec"]["affinity"]
    assert patch_aff["podAntiAffinity"] == aff["podAntiAffinity"]
    assert (
        patch_aff["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
        == (aff["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"])
    )


def test_placement_patch_content_exactly():
    ds = daemonset(tolerations=[L40S_TOL], terms=[b.term({"old": "x"})], node_selector={"kserve/localmodel": "worker"})
    assert placement_patch(ds, [L40S, H100]) == {
        "spec": {
            "template": {
                "spec": {
                    "nodeSelector": None,
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [H100_TERM, L40S_TERM]
                            }
                        }
                    },
                    "tolerations": [H100_TOL, L40S_TOL],
                }
            }
        }
    }


def test_patch_applied_gives_no_diff():
    ds = daemonset(tolerations=[L40S_TOL], terms=[b.term({"old": "x"})], node_selector={"a": "b"})
    pod_spec = placement_patch(ds, [H100, L40S])["spec"]["template"]["spec"]
    applied = daemonset(tolerations=pod_spec["tolerations"], terms=required_terms(pod_spec["affinity"]))
    assert not placement_diff(applied, [H100, L40S])


# ---- properties of agent_tolerations -----------------------------------------------------------------

TOLERATIONS = st.builds(
    dict,
    key=st.sampled_from(["", "nvidia.com/gpu", "workload", "a&b", "é", "node.kubernetes.io/not-ready"]),
    operator=st.sampled_from(["", "Exists", "Equal"]),
    value=st.sampled_from(["", "gpu", "<x>"]),
    effect=st.sampled_from(["", "NoSchedule", "NoExecute", "PreferNoSchedule"]),
    tolerationSeconds=st.one_of(st.none(), st.integers(min_value=0, max_value=3600)),
).map(lambda d: {k: v for k, v in d.items() if v not in ("", None)})
GROUP_SPECS = st.lists(st.lists(TOLERATIONS, max_size=4), max_size=5)


def make_groups(specs: list[list[dict[str, Any]]]) -> list[o.NodeGroup]:
    return [group(f"g{i}", {"role": f"r{i}"}, tols) for i, tols in enumerate(specs)]


@given(GROUP_SPECS)
def test_agent_tolerations_sorted_unique_and_complete(specs):
    got = agent_tolerations(make_groups(specs))
    encoded = [marshal(t.to_dict()) for t in got]
    assert encoded == sorted(encoded)
    assert len(set(encoded)) == len(encoded)
    assert set(encoded) == {marshal(convert(t, o.Toleration).to_dict()) for s in specs for t in s}


@given(GROUP_SPECS)
def test_agent_tolerations_idempotent(specs):
    once = agent_tolerations(make_groups(specs))
    twice = agent_tolerations([group("all", {"r": "x"}, [t.to_dict() for t in once])])
    assert twice == once


@given(GROUP_SPECS, st.randoms(use_true_random=False))
def test_agent_tolerations_order_insensitive_over_groups(specs, rnd):
    groups = make_groups(specs)
    shuffled = list(groups)
    rnd.shuffle(shuffled)
    assert agent_tolerations(shuffled) == agent_tolerations(groups)


def test_agent_tolerations_all_permutations_small():
    groups = [H100, L40S, group("c", {"r": "x"}, [H100_TOL, {"operator": "Exists"}])]
    results = {tuple(agent_tolerations(p)) for p in itertools.permutations(groups)}
    assert len(results) == 1
