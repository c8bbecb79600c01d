"""The reconcile planner: every duty and rule, and idempotency (apply the plan to the objects, plan
again: no writes)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from kubectl_kcache.kernelcache.names import generated_kernel_cache_name
from kubectl_kcache.reconcile import actions as a
from kubectl_kcache.reconcile.actions import plan_document
from kubectl_kcache.reconcile.planner import plan
from kubectl_kcache.snapshot.model import build
from tests import builders as b

GPU_TOL = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
SOURCE = "internal.serving.kserve.io/kernelcache-nodegroup-selection-source"


def enabled(**extra: Any) -> dict:
    return b.config_map({"enabled": True, **extra})


def verbs(p) -> list[tuple[str, str, str]]:
    return [(x.verb, x.kind, x.name) for x in p.actions]


def apply_plan(items: list[dict], p) -> list[dict]:
    """What the executor would leave behind, applied to plain objects."""
    items = copy.deepcopy(items)
    for act in p.actions:
        if act.verb == a.CREATE:
            items.append(copy.deepcopy(dict(act.body)))
        elif act.verb == a.DELETE:
            items = [i for i in items if not (i["kind"] == act.kind and i["metadata"]["name"] == act.name)]
        elif act.verb == a.PATCH:
            ds = next(i for i in items if i["kind"] == "DaemonSet")
            spec = ds["spec"]["template"]["spec"]
            for key, value in act.body["spec"]["template"]["spec"].items():
                if value is None:
                    spec.pop(key, None)
                else:
                    spec[key] = value
        elif act.verb == a.UPDATE_STATUS:
            cap = next(i for i in items if i["kind"] == "KernelCacheCapture" and i["metadata"]["name"] == act.name)
            cap["status"]["kernelCacheRef"] = {"namespace": act.namespace, "name": act.related}
    return items


def test_disabled_or_broken_config_plans_nothing():
    items = [b.agent_daemonset(), b.group("g", {"a": "b"}), b.node("n", {"a": "b"})]
    for cm in (b.config_map({"enabled": False}), b.config_map("not-json"), None):
        p = plan(build(items + ([cm] if cm else [])))
        assert p.actions == [] and p.notes


def test_membership_creates_and_deletes_by_group_match_ignoring_readiness():
    items = [
        enabled(),
        b.agent_daemonset(terms=[b.term({"role": "gpu"})]),
        b.group("gpu", {"role": "gpu"}),
        b.node("gpu-node", {"role": "gpu"}, ready=False),
        b.node("cpu", {"role": "cpu"}),
        b.kcn("orphan-node"),
        b.kcn("cpu"),
    ]
    p = plan(build(items))
    assert verbs(p) == [
        ("create", "KernelCacheNode", "gpu-node"),
        ("delete", "KernelCacheNode", "cpu"),
        ("delete", "KernelCacheNode", "orphan-node"),
    ]
    reasons = {x.name: x.reason for x in p.actions}
    assert reasons["orphan-node"] == "node is gone" and reasons["cpu"] == "node matches no KernelCacheNodeGroup"
    create = p.actions[0]
    assert create.body == {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "KernelCacheNode",
        "metadata": {"name": "gpu-node"},
    }


def test_empty_selector_aborts_the_node_pass():
    items = [
        enabled(),
        b.agent_daemonset(node_selector={"x": "y"}),
        b.group("invalid", {}),
        b.node("n", {}),
        b.kcn("orphan"),
    ]
    p = plan(build(items))
    assert p.actions == []
    assert 'KernelCacheNodeGroup "invalid" requires a non-empty nodeSelector' in p.notes[0]


def test_missing_daemonset_blocks_kernel_cache_nodes():
    p = plan(build([enabled(), b.group("gpu", {"role": "gpu"}), b.node("n", {"role": "gpu"})]))
    assert p.actions == [] and "get KernelCacheNode agent DaemonSet" in p.notes[0]


def test_placement_patch_only_when_kserve_would_patch():
    groups = [
        b.group(
            "l40s", {"p": "l40s"}, [{"key": "workload", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
        ),
        b.group("h100", {"p": "h100"}, [GPU_TOL]),
    ]
    shaped = b.agent_daemonset(
        tolerations=[GPU_TOL, groups[0]["spec"]["tolerations"][0]], terms=[b.term({"p": "h100"}), b.term({"p": "l40s"})]
    )
    assert plan(build([enabled(), shaped, *groups])).actions == []
    reordered = copy.deepcopy(shaped)
    reordered["spec"]["template"]["spec"]["tolerations"].reverse()
    p = plan(build([enabled(), reordered, *groups]))
    assert verbs(p) == [("patch", "DaemonSet", "kserve-kernelcachenode-agent")]
    patch = p.actions[0].body["spec"]["template"]["spec"]
    assert patch["nodeSelector"] is None
    assert patch["tolerations"] == [GPU_TOL, groups[0]["spec"]["tolerations"][0]]
    assert patch["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [b.term({"p": "h100"}), b.term({"p": "l40s"})]
    }


def test_no_groups_gives_the_disabled_term():
    p = plan(build([enabled(), b.agent_daemonset(terms=[b.term({"p": "x"})])]))
    terms = p.actions[0].body["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"]
    assert terms == [
        {"matchExpressions": [{"key": "serving.kserve.io/kernelcache-agent", "operator": "In", "values": ["disabled"]}]}
    ]


def _capture_items(**status_kw: Any) -> list[dict]:
    return [
        enabled(defaultNodeGroup="fallback"),
        b.agent_daemonset(
            terms=[
                b.term({"role": "other"}),  # fallback, gpu
                b.term({"role": "gpu"}),
            ]
        ),
        b.group("gpu", {"role": "gpu"}),
        b.group("fallback", {"role": "other"}),
        b.node("gpu-node", {"role": "gpu"}),
        b.kcn("gpu-node"),
        b.capture("model-capture", "team", status=b.capture_status(**status_kw)),
    ]


def test_complete_capture_creates_the_kernel_cache_then_links_it():
    p = plan(build(_capture_items(node_name="gpu-node")))
    name = generated_kernel_cache_name("model-capture", b.image("cache"))
    assert verbs(p) == [("create", "KernelCache", name), ("update-status", "KernelCacheCapture", "model-capture")]
    create = p.actions[0]
    assert create.node_group == "gpu" and create.selection_source == "auto"
    assert create.body["metadata"] == {"name": name, "namespace": "team", "annotations": {SOURCE: "auto"}}
    assert create.body["spec"]["artifact"] == b.artifact("cache")
    assert create.body["spec"]["mountType"] == "oci" and create.body["spec"]["nodeGroupRef"] == {"name": "gpu"}
    doc = plan_document(p.actions)
    assert doc["kind"] == "ReconcilePlan" and doc["actions"][0] == {
        "verb": "create",
        "kind": "KernelCache",
        "namespace": "team",
        "name": name,
        "reason": "captured by model-capture",
        "nodeGroup": "gpu",
        "selectionSource": "auto",
        "body": create.body,
    }
    assert "eventReason" not in doc["actions"][0]
    assert doc["actions"][1]["body"] == {"status": {"kernelCacheRef": {"namespace": "team", "name": name}}}


@pytest.mark.parametrize(
    "kw,source,group",
    [
        ({"node_name": "gpu-node", "requested": "fallback"}, "annotation", "fallback"),
        ({"node_name": "gone-node"}, "default", "fallback"),
    ],
)
def test_selection_sources(kw, source, group):
    p = plan(build(_capture_items(**kw)))
    assert (p.actions[0].selection_source, p.actions[0].node_group) == (source, group)


@pytest.mark.parametrize(
    "kw,reason,message",
    [
        (
            {"node_name": "gpu-node", "requested": "missing"},
            "InvalidRequestedNodeGroup",
            'KernelCacheNodeGroup "missing" was not found',
        ),
        ({"node_name": ""}, "ProducerNodePending", "producer Pod node assignment has not been observed yet"),
    ],
)
def test_selection_failure_is_one_event_and_nothing_else(kw, reason, message):
    p = plan(build(_capture_items(**kw)))
    assert [(x.verb, x.event_reason, x.message) for x in p.actions] == [("event", reason, message)]
    assert not p.writes
    assert plan_document(p.actions)["actions"][0] == {
        "verb": "event",
        "kind": "Event",
        "namespace": "team",
        "name": "model-capture",
        "reason": "node-group selection failed",
        "eventReason": reason,
        "message": message,
    }


def test_ineligible_or_linked_captures_are_left_alone():
    name = generated_kernel_cache_name("model-capture", b.image("cache"))
    linked = _capture_items(node_name="gpu-node", kernel_cache_ref={"namespace": "team", "name": name})
    assert plan(build(linked + [b.kernel_cache(name, "team", "gpu")])).actions == []
    unsigned = _capture_items(node_name="gpu-node", signing={"mode": "cert", "state": "Failed", "signed": False})
    assert plan(build(unsigned)).actions == []
    stale = _capture_items(node_name="gpu-node", generation=1)
    stale[-1]["metadata"]["generation"] = 2
    assert plan(build(stale)).actions == []


def test_a_deleted_kernel_cache_is_recreated_whatever_the_ref_says():
    """cache_reconciler.go: the capture -> KernelCache path runs when the generated name is NotFound."""
    name = generated_kernel_cache_name("model-capture", b.image("cache"))
    items = _capture_items(node_name="gpu-node", kernel_cache_ref={"namespace": "team", "name": name})
    p = plan(build(items))
    assert verbs(p) == [("create", "KernelCache", name)]  # the ref already names it: no status write
    assert p.actions[0].reason == "captured by model-capture (it was deleted: KServe re-creates it)"
    assert p.actions[0].node_group == "gpu" and p.actions[0].selection_source == "auto"


def test_a_ref_to_another_name_is_overwritten_by_the_generated_one():
    name = generated_kernel_cache_name("model-capture", b.image("cache"))
    items = _capture_items(node_name="gpu-node", kernel_cache_ref={"namespace": "team", "name": "hand-made"})
    p = plan(build(items + [b.kernel_cache("hand-made", "team", "gpu")]))
    assert verbs(p) == [("create", "KernelCache", name), ("update-status", "KernelCacheCapture", "model-capture")]
    assert p.actions[1].reason == f"link KernelCache {name} (status.kernelCacheRef, was team/hand-made)"


def test_existing_kernel_cache_is_linked_not_recreated_and_a_mismatch_is_not_linked():
    name = generated_kernel_cache_name("model-capture", b.image("cache"))
    same = _capture_items(node_name="gpu-node") + [b.kernel_cache(name, "team", "gpu")]
    assert verbs(plan(build(same))) == [("update-status", "KernelCacheCapture", "model-capture")]
    other = _capture_items(node_name="gpu-node") + [b.kernel_cache(name, "team", "gpu", seed="other")]
    p = plan(build(other))
    assert p.actions == []
    assert p.notes == [
        f"KernelCache team/{name} artifact does not match KernelCacheCapture team/model-capture: "
        "KServe refuses to link them and stops that KernelCache's pass"
    ]


def test_an_existing_kernel_cache_is_linked_without_selection_or_event():
    """Linking needs no node group: even with an ambiguous node (selection would fail), no event is planned."""
    name = generated_kernel_cache_name("model-capture", b.image("cache"))
    items = _capture_items(node_name="gpu-node") + [
        b.group("gpu-2", {"role": "gpu"}),
        b.kernel_cache(name, "team", "gpu"),
    ]
    assert [v for v in verbs(plan(build(items))) if v[1] != "DaemonSet"] == [
        ("update-status", "KernelCacheCapture", "model-capture")
    ]


def test_links_are_planned_while_the_feature_is_disabled():
    """The exists path runs before KServe reads the configuration; creation needs the feature enabled."""
    name = generated_kernel_cache_name("model-capture", b.image("cache"))
    items = _capture_items(node_name="gpu-node")
    items[0] = b.config_map({"enabled": False})
    assert plan(build(items)).actions == []
    assert verbs(plan(build(items + [b.kernel_cache(name, "team", "gpu")]))) == [
        ("update-status", "KernelCacheCapture", "model-capture")
    ]


def test_two_captures_with_one_generated_name_link_only_the_first():
    """Names sharing the first 38 characters and one digest map to one KernelCache: KServe's
    findCompletedCapture takes the first complete capture; the other is never linked."""
    first, second = (
        "llama-3-8b-instruct-production-east-kcc-5d8c7b9f4",
        "llama-3-8b-instruct-production-east-kcc-669889f77f",
    )
    name = generated_kernel_cache_name(first, b.image("cache"))
    assert name == generated_kernel_cache_name(second, b.image("cache"))
    items = _capture_items(node_name="gpu-node")[:-1] + [
        b.capture(second, "team", status=b.capture_status(node_name="gpu-node")),
        b.capture(first, "team", status=b.capture_status(node_name="gpu-node")),
    ]
    p = plan(build(items))
    assert verbs(p) == [("create", "KernelCache", name), ("update-status", "KernelCacheCapture", first)]
    assert p.notes == [
        f"capture team/{second} maps to KernelCache {name} like capture {first}: KServe links only "
        "one capture per KernelCache name"
    ]


def test_applying_a_plan_then_planning_again_writes_nothing():
    items = [
        enabled(),
        b.agent_daemonset(node_selector={"old": "x"}, tolerations=[{"key": "stale", "operator": "Exists"}]),
        b.group("gpu", {"role": "gpu"}, [GPU_TOL]),
        b.group("l40s", {"role": "l40s"}),
        *(b.node(f"n{i}", {"role": "gpu" if i % 2 else "l40s"}) for i in range(6)),
        b.kcn("gone"),
        b.capture("c1", "team", status=b.capture_status(node_name="n1")),
        b.capture("c2", "team", status=b.capture_status(node_name="n2", seed="two")),
    ]
    first = plan(build(items))
    assert first.writes
    after = apply_plan(items, first)
    second = plan(build(json.loads(json.dumps(after))))
    assert second.writes == [] and second.events == []
