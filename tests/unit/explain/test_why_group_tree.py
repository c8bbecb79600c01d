"""The why-group tree, rendered without colour: every key fact is in the text."""

from __future__ import annotations

import io
from pathlib import Path

from kubectl_kcache.explain import explain
from kubectl_kcache.report.why_group_tree import render
from kubectl_kcache.snapshot.files.from_files import load_files
from kubectl_kcache.snapshot.model import build
from tests import builders as b

from .test_why_group import ANN, MSG_AMBIGUOUS, NS, POD, config, gpu_node, producer, session_capture

FIXTURES = Path(__file__).parent / "fixtures"
DRIFT_POD = "qwen-predictor-669889f77f-x7k2p"


def render_text(why, wide: bool = True) -> str:
    out = io.StringIO()
    render(why, out, color=False, width=120, wide=wide)
    return out.getvalue()


def flat(text: str) -> str:
    """The tree's text with its wrapping undone (tree guides and line breaks become single spaces)."""
    for ch in "│├└─":
        text = text.replace(ch, " ")
    return " ".join(text.split())


def test_tree_of_a_recorded_annotation_with_drift_and_overlap():
    text = render_text(explain(load_files([str(FIXTURES / "annotation-drift.yaml")]), "team", DRIFT_POD))
    assert "\x1b[" not in text  # no colour codes
    lines = text.splitlines()
    assert lines[0] == f"why-group team/{DRIFT_POD} → gpu-a (source annotation)"
    words = flat(text)
    assert "Capture team/qwen-kcc-669889f77f (basis: the session recorded on the capture)" in words
    assert 'requestedNodeGroup "gpu-a"' in words
    assert f'Requested group ({ANN}): "gpu-a" ✓ exists' in words
    assert (
        'pod annotation now: "gpu-b" (the session recorded "gpu-a" when the pod claimed the capture; '
        "KServe never updates it)"
    ) in words
    # the node: only labels some group selects on, plus a count of the others
    assert "Node gpu-node" in words and "role=gpu" in words and "zone=east" in words
    assert "(+3 other labels)" in words and "kubernetes.io/arch" not in words
    # every group with its mark, missing labels and untolerated taints
    assert "✓ gpu-a matches (role=gpu) ← selected" in words
    assert "✓ gpu-b matches (zone=east) untolerated taints: nvidia.com/gpu=present:NoSchedule" in words
    assert "✗ fallback missing role=other" in words
    assert 'Default (defaultNodeGroup): "fallback" ✓ exists' in words
    assert "Outcome ✓ gpu-a (source annotation)" in words
    assert 'KernelCache team/qwen-kcc-669889f77f-5fc2f4e1d106aaa8a0970991: group "gpu-a", source annotation' in words
    assert "⚠ Drift" in words and 'is now "gpu-b" but the session recorded "gpu-a"' in words
    assert "⚠ Warnings" in words and "node gpu-node is in several groups (gpu-a, gpu-b)" in words


def test_tree_of_a_failure_shows_kserve_event_line():
    items = (
        config("fallback"),
        gpu_node(role="gpu", zone="east"),
        b.group("gpu-a", {"role": "gpu"}),
        b.group("gpu-b", {"zone": "east"}),
        session_capture(),
        producer(),
    )
    text = render_text(explain(build(list(items), reads_assumed=True), NS, POD))
    words = flat(text)
    assert text.splitlines()[0] == f"why-group {NS}/{POD} → ✗ no group: AmbiguousNodeGroup"
    assert "Outcome ✗ no group selected: KServe creates no KernelCache and emits" in words
    assert f"Warning AmbiguousNodeGroup SelectNodeGroup: {MSG_AMBIGUOUS}" in words
    assert f"kubectl get events -n {NS} --field-selector involvedObject.name=model-kcc-669889f77f" in words
    assert "KernelCache none created yet" in words


def test_tree_of_a_missing_requested_group_and_missing_node():
    items = (config("fallback"), b.group("fallback", {"role": "x"}), session_capture(requested="missing"))
    words = flat(render_text(explain(build(list(items), reads_assumed=True), NS, POD)))
    assert f'Requested group ({ANN}): "missing" ✗ not found' in words
    assert 'Warning InvalidRequestedNodeGroup SelectNodeGroup: KernelCacheNodeGroup "missing" was not found' in words
    assert "Node gpu-node ✗ not found" in words
    assert f"Pod {NS}/{POD} ✗ gone" in words
    assert "- fallback (role=x; no node to match)" in words


def test_tree_of_a_prediction_and_a_what_if():
    items = (config(None), gpu_node(), b.group("gpu", {"role": "gpu"}), producer(node_name=""))
    snapshot = build(list(items), reads_assumed=True)
    words = flat(render_text(explain(snapshot, NS, POD)))
    assert "Capture none found (basis: predicted from the pod)" in words
    assert "Node (not recorded: the producer is not scheduled yet)" in words
    assert (
        "Warning ProducerNodePending SelectNodeGroup: producer Pod node assignment has not been observed yet" in words
    )
    assert "Default (defaultNodeGroup): (not set)" in words
    text = render_text(explain(snapshot, NS, POD, what_if_node="gpu-node"))
    assert text.splitlines()[0] == f"why-group {NS}/{POD} → gpu (source auto)  [what-if]"
    words = flat(text)
    assert "decided from: node gpu-node, requestedNodeGroup (none)" in words
    assert "Outcome ✓ gpu (source auto) (what-if)" in words


def test_tree_shows_config_problems_and_label_defaults():
    items = (
        b.config_map({"enabled": True, "defaultNodeGroup": "role=gpu"}),
        b.node("gpu-node", {"role": "x"}),
        b.group("gpu", {"role": "gpu"}),
        session_capture(),
    )
    words = flat(render_text(explain(build(list(items), reads_assumed=True), NS, POD)))
    assert 'Default (defaultNodeGroup): "role=gpu" ✗ not found' in words
    assert 'default: defaultNodeGroup "role=gpu" looks like a node label' in words
    items = [gpu_node(), b.group("gpu", {"role": "gpu"}), session_capture()]
    words = flat(render_text(explain(build(items, reads_assumed=True), NS, POD)))
    assert "⚠ ConfigMap kserve/inferenceservice-config not found" in words


def test_tree_escapes_nothing_it_should_not():
    # names with rich markup characters are printed as they are
    items = (
        config(None),
        b.node("gpu-node", {"role": "[bold]x"}),
        b.group("gpu", {"role": "[bold]x"}),
        session_capture(),
    )
    words = flat(render_text(explain(build(list(items), reads_assumed=True), NS, POD)))
    assert "role=[bold]x" in words
