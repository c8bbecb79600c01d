"""captureNodeGroup (kserve-notes.md §2.5): the golden selection table of capture_cache_reconciler_test.go,
every reason with its exact message, the three sources, and Go's strings.TrimSpace."""

from __future__ import annotations

import pytest

from kubectl_kcache import objects as o
from kubectl_kcache.kernelcache import constants as c
from kubectl_kcache.kernelcache.gostrings import trim_space
from kubectl_kcache.kernelcache.selection import Decision, select_node_group

from .helpers import bare_node, group

MSG_AMBIGUOUS = (
    "producer node gpu-node matches multiple node groups: gpu-a, gpu-b; set serving.kserve.io/kernelcache-nodegroup"
)
MSG_PENDING = "producer Pod node assignment has not been observed yet"
MSG_NO_MATCH = "no node group matched the producer node and no defaultNodeGroup is configured"


def session(node_name: str = "", requested: str = "") -> o.ActiveSession:
    return o.ActiveSession(id="session", pod_name="model-pod", node_name=node_name, requested_node_group=requested)


def groups(*gs: o.NodeGroup) -> dict[str, o.NodeGroup]:
    return {g.name: g for g in gs}


def nodes(*ns: o.Node) -> dict[str, o.Node]:
    return {n.name: n for n in ns}


GPU_NODE = bare_node("gpu-node", {"role": "gpu"})


def assert_selected(d: Decision, name: str, source: str) -> None:
    assert (d.group, d.source, d.reason) == (name, source, None)
    assert d.ok


def assert_blocked(d: Decision, reason: str, message: str) -> None:
    assert (d.group, d.source, d.reason, d.message) == (None, None, reason, message)
    assert not d.ok
    assert d.to_dict() == {"group": None, "source": None, "reason": reason, "message": message}


# ---- the golden table --------------------------------------------------------------------------------


def test_automatically_selects_unique_node_group():
    gs = groups(group("gpu", {"role": "gpu"}), group("cpu", {"role": "cpu"}), group("fallback", {"role": "other"}))
    d = select_node_group(session("gpu-node"), gs, nodes(GPU_NODE), "fallback")
    assert_selected(d, "gpu", "auto")
    assert d.to_dict()["source"] == c.SOURCE_AUTO


def test_uses_default_when_no_node_group_matches():
    d = select_node_group(
        session("gpu-node"), groups(group("fallback", {"role": "other"})), nodes(GPU_NODE), "fallback"
    )
    assert_selected(d, "fallback", "default")


def test_waits_for_producer_node_assignment():
    d = select_node_group(session(""), groups(group("fallback", {})), {}, "fallback")
    assert_blocked(d, "ProducerNodePending", MSG_PENDING)


def test_skips_ambiguous_node_groups_without_fallback():
    gs = groups(group("gpu-a", {"role": "gpu"}), group("gpu-b", {"zone": "east"}), group("fallback", {"role": "other"}))
    node = bare_node("gpu-node", {"role": "gpu", "zone": "east"})
    d = select_node_group(session("gpu-node"), gs, nodes(node), "fallback")
    assert_blocked(d, "AmbiguousNodeGroup", MSG_AMBIGUOUS)
    assert "gpu-a, gpu-b" in d.message


def test_does_not_fall_back_for_invalid_requested_node_group():
    d = select_node_group(
        session("gpu-node", "missing"), groups(group("fallback", {"role": "gpu"})), nodes(GPU_NODE), "fallback"
    )
    assert_blocked(d, "InvalidRequestedNodeGroup", 'KernelCacheNodeGroup "missing" was not found')


def test_creates_kernel_cache_from_requested_group():
    # CreatesKernelCacheFromCompletedCapture: no node recorded, the requested group exists
    d = select_node_group(
        session("", "annotation-group"), groups(group("annotation-group", {"role": "gpu"})), {}, "config-group"
    )
    assert_selected(d, "annotation-group", "annotation")


def test_no_matching_node_group_without_default():
    d = select_node_group(session("gpu-node"), groups(group("cpu", {"role": "cpu"})), nodes(GPU_NODE), "")
    assert_blocked(d, "NoMatchingNodeGroup", MSG_NO_MATCH)


def test_invalid_default_node_group():
    d = select_node_group(session("gpu-node"), groups(group("cpu", {"role": "cpu"})), nodes(GPU_NODE), "fallback")
    assert_blocked(d, "InvalidDefaultNodeGroup", 'KernelCacheNodeGroup "fallback" was not found')


# ---- the rest of the algorithm -----------------------------------------------------------------------


def test_requested_group_wins_even_when_the_node_matches_another():
    gs = groups(group("gpu", {"role": "gpu"}), group("other", {"role": "other"}))
    assert_selected(select_node_group(session("gpu-node", "other"), gs, nodes(GPU_NODE), ""), "other", "annotation")


def test_requested_group_wins_over_ambiguity():
    gs = groups(group("gpu-a", {"role": "gpu"}), group("gpu-b", {"role": "gpu"}))
    assert_selected(select_node_group(session("gpu-node", "gpu-b"), gs, nodes(GPU_NODE), ""), "gpu-b", "annotation")


def test_no_session_goes_straight_to_the_default():
    gs = groups(group("gpu", {"role": "gpu"}), group("fallback", {"role": "other"}))
    assert_selected(select_node_group(None, gs, nodes(GPU_NODE), "fallback"), "fallback", "default")
    assert_blocked(select_node_group(None, gs, {}, ""), "NoMatchingNodeGroup", MSG_NO_MATCH)
    assert_blocked(
        select_node_group(None, gs, {}, "gone"), "InvalidDefaultNodeGroup", 'KernelCacheNodeGroup "gone" was not found'
    )


def test_missing_node_falls_through_to_the_default():
    gs = groups(group("gpu", {"role": "gpu"}), group("fallback", {"role": "other"}))
    assert_selected(select_node_group(session("gone-node"), gs, {}, "fallback"), "fallback", "default")


def test_ambiguous_message_lists_every_group_sorted():
    gs = groups(*(group(n, {"role": "gpu"}) for n in ("c", "a", "b")))
    d = select_node_group(session("gpu-node"), gs, nodes(GPU_NODE), "")
    assert d.message == c.MSG_AMBIGUOUS.format(node="gpu-node", groups="a, b, c")
    assert d.message == "producer node gpu-node matches multiple node groups: a, b, c; set " + c.ANNOTATION_NODE_GROUP


def test_reasons_are_kserves():
    assert (
        c.REASON_INVALID_REQUESTED,
        c.REASON_PRODUCER_PENDING,
        c.REASON_AMBIGUOUS,
        c.REASON_NO_MATCH,
        c.REASON_INVALID_DEFAULT,
    ) == (
        "InvalidRequestedNodeGroup",
        "ProducerNodePending",
        "AmbiguousNodeGroup",
        "NoMatchingNodeGroup",
        "InvalidDefaultNodeGroup",
    )
    assert c.EVENT_ACTION_SELECT == "SelectNodeGroup"


def test_steps_trace_the_decision():
    gs = groups(group("gpu", {"role": "gpu"}))
    d = select_node_group(session("gpu-node"), gs, nodes(GPU_NODE), "")
    assert [(s.step, s.outcome) for s in d.steps] == [
        ("session", "present"),
        ("annotation", "none"),
        ("node", "found"),
        ("match", "one"),
    ]
    d = select_node_group(None, gs, {}, "gpu")
    assert [(s.step, s.outcome) for s in d.steps] == [("session", "absent"), ("default", "selected")]


# ---- TrimSpace ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "requested",
    [" gpu", "gpu ", "\tgpu\n", "\u00a0gpu\u00a0", "\u3000gpu\u3000", "\u2000\u200agpu\u2028\u2029", "\x85gpu\v\f\r"],
)
def test_requested_group_is_trimmed_like_go(requested):
    d = select_node_group(session("", requested), groups(group("gpu", {"role": "gpu"})), {}, "")
    assert_selected(d, "gpu", "annotation")


@pytest.mark.parametrize("char", ["\x1c", "\x1d", "\x1e", "\x1f", "\u200b", "\u180e", "\ufeff"])
def test_characters_go_does_not_trim_are_kept(char):
    # Python's str.strip() would trim \x1c-\x1f; Go's unicode.IsSpace does not
    requested = f"{char}gpu"
    d = select_node_group(session("", requested), groups(group("gpu", {"role": "gpu"})), {}, "")
    assert_blocked(d, "InvalidRequestedNodeGroup", f'KernelCacheNodeGroup "{requested}" was not found')


def test_blank_requested_group_counts_as_none():
    gs = groups(group("gpu", {"role": "gpu"}))
    assert_selected(select_node_group(session("gpu-node", " \u00a0\t"), gs, nodes(GPU_NODE), ""), "gpu", "auto")
    assert_blocked(select_node_group(session("", "  "), gs, {}, ""), "ProducerNodePending", MSG_PENDING)


def test_default_group_is_trimmed():
    gs = groups(group("fallback", {"role": "other"}))
    assert_selected(select_node_group(None, gs, {}, " fallback\u3000"), "fallback", "default")
    assert_blocked(select_node_group(None, gs, {}, " \u00a0 "), "NoMatchingNodeGroup", MSG_NO_MATCH)


def test_trim_space_matches_go_unicode_is_space():
    go_spaces = (
        "\t\n\v\f\r \x85\xa0\u1680" + "".join(chr(x) for x in range(0x2000, 0x200B)) + "\u2028\u2029\u202f\u205f\u3000"
    )
    assert trim_space(go_spaces + "a b" + go_spaces) == "a b"
    for ch in "\x1c\x1d\x1e\x1f\u200b\u180e\ufeff\x00":
        assert trim_space(ch) == ch
    assert trim_space("") == ""
