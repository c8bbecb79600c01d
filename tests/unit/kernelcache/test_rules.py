"""The rules doctor, why-group and reconcile share (one place each, issue 13): membership index, ambiguity,
the defaultNodeGroup trap, the session KServe records from a pod and its drift, a requested group outside the
producer's node, group tolerations Kubernetes rejects."""

from __future__ import annotations

from kubectl_kcache import objects as o
from kubectl_kcache.kernelcache.config import (
    DEFAULT_GROUP_LABEL,
    DEFAULT_GROUP_MISSING,
    DEFAULT_GROUP_UNTRIMMED,
    default_group_problem,
)
from kubectl_kcache.kernelcache.membership import is_ambiguous, membership
from kubectl_kcache.kernelcache.placement import rejected_tolerations
from kubectl_kcache.kernelcache.selection import (
    requested_group_outside,
    session_drift,
    session_from_pod,
)
from tests import builders as b


def group(name: str, selector: dict[str, str], tolerations=None) -> o.NodeGroup:
    return o.NodeGroup.from_dict(b.group(name, selector, tolerations))


def node(name: str, labels: dict[str, str]) -> o.Node:
    return o.Node.from_dict(b.node(name, labels))


def test_groups_by_node_is_kserves_matching_groups_sorted():
    groups = [group("b", {"zone": "east"}), group("a", {"role": "gpu"}), group("c", {"role": "cpu"})]
    nodes = [node("n1", {"role": "gpu", "zone": "east"}), node("n2", {"role": "cpu"}), node("n3", {})]
    index = membership(nodes, groups).groups_of_node
    assert {k: [g.name for g in v] for k, v in index.items()} == {"n1": ["a", "b"], "n2": ["c"]}
    assert is_ambiguous(index["n1"]) and not is_ambiguous(index["n2"])
    assert [n.name for n in membership(nodes, groups).member_nodes] == ["n1", "n2"]


def test_an_empty_selector_matches_every_node_as_in_kserve():
    index = membership([node("n", {})], [group("all", {})]).groups_of_node
    assert [g.name for g in index["n"]] == ["all"]


def test_default_group_problems():
    groups, keys = {"gpu": None, "fallback": None}, {"role", "nvidia.com/gpu.product"}
    assert default_group_problem("", groups, keys) is None
    assert default_group_problem("gpu", groups, keys) is None
    assert default_group_problem(" gpu ", groups, keys).kind == DEFAULT_GROUP_UNTRIMMED
    assert default_group_problem("missing", groups, keys).kind == DEFAULT_GROUP_MISSING
    assert default_group_problem("role", groups, keys).kind == DEFAULT_GROUP_LABEL
    label = default_group_problem("role=gpu", groups, keys, {"gpu": {"role": "gpu"}, "fallback": {"role": "x"}})
    assert (label.kind, label.groups_with_label, label.never_a_group_name) == (DEFAULT_GROUP_LABEL, ("gpu",), True)
    # a label key that is also a group name is the group: KServe uses it (no trap)
    assert default_group_problem("gpu", groups, {"gpu"}) is None


def pod(annotation: str | None = None, node_name: str = "gpu-1") -> o.Pod:
    ann = {"serving.kserve.io/kernelcache-nodegroup": annotation} if annotation is not None else None
    return o.Pod.from_dict(b.pod("p", "team", node_name=node_name, annotations=ann))


def test_the_session_kserve_records_from_a_pod():
    s = session_from_pod(pod("gpu"))
    assert (s.pod_name, s.node_name, s.requested_node_group) == ("p", "gpu-1", "gpu")


def test_drift_is_what_changed_on_the_pod_after_the_claim():
    recorded = session_from_pod(pod("gpu"))
    assert session_drift(pod("gpu"), recorded) == []
    [d] = session_drift(pod("other"), recorded)
    assert (d.field, d.recorded, d.now) == ("requestedNodeGroup", "gpu", "other")
    assert session_drift(o.Pod.from_dict(b.pod("another", "team")), recorded) == []  # not the claiming pod


def test_a_requested_group_outside_the_producer_node():
    groups = {"gpu": group("gpu", {"role": "gpu", "zone": "east"})}
    nodes = {"n": node("n", {"role": "gpu"})}
    session = o.ActiveSession(id="s", pod_name="p", node_name="n", requested_node_group=" gpu ")
    outside = requested_group_outside(session, groups, nodes)
    assert outside is not None and (outside.group, outside.node, dict(outside.wanted)) == ("gpu", "n", {"zone": "east"})
    inside = {"n": node("n", {"role": "gpu", "zone": "east"})}
    assert requested_group_outside(session, groups, inside) is None
    assert requested_group_outside(o.ActiveSession(node_name="n"), groups, nodes) is None  # nothing requested


def test_rejected_tolerations_name_the_group_and_the_union_index():
    ok = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    bad = {"key": "zzz", "operator": "Exists", "value": "v"}
    rejected = rejected_tolerations([group("b", {"x": "y"}, [bad]), group("a", {"x": "z"}, [ok])])
    assert rejected.lines() == [
        'KernelCacheNodeGroup "b" spec.tolerations[0].operator: Invalid value: "v": value '
        "must be empty when `operator` is 'Exists'"
    ]
    # the DaemonSet's index is in the sorted union (the bad one sorts after the good one)
    assert "spec.template.spec.tolerations[1].operator" in rejected.api_text
    assert not rejected_tolerations([group("a", {"x": "z"}, [ok])])
