"""why-group: every branch of KServe's captureNodeGroup as seen through explain(), with exact reasons and
messages, plus capture lookup, drift, what-if, traps and the JSON contract."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kubectl_kcache.errors import IncompleteError, InputError
from kubectl_kcache.explain import WhyGroup, explain
from kubectl_kcache.kernelcache.names import generated_kernel_cache_name
from kubectl_kcache.snapshot.files.from_files import load_files
from kubectl_kcache.snapshot.model import build
from kubectl_kcache.snapshot.reads import Read
from tests import builders as b

FIXTURES = Path(__file__).parent / "fixtures"
NS = "team-a"
ANN = "serving.kserve.io/kernelcache-nodegroup"
SOURCE = "internal.serving.kserve.io/kernelcache-nodegroup-selection-source"
POD = "model-predictor-669889f77f-x7k2p"
CAPTURE = "model-kcc-669889f77f"  # KServe's generated name for isvc "model", revision 669889f77f
GEN = generated_kernel_cache_name(CAPTURE, b.image("cache"))  # the KernelCache KServe makes from it
GPU = b.group("gpu", {"role": "gpu"})
FALLBACK = b.group("fallback", {"role": "other"})
PRODUCER_LABELS = {"serving.kserve.io/inferenceservice": "model", "pod-template-hash": "669889f77f"}

MSG_AMBIGUOUS = (
    "producer node gpu-node matches multiple node groups: gpu-a, gpu-b; set serving.kserve.io/kernelcache-nodegroup"
)
MSG_PENDING = "producer Pod node assignment has not been observed yet"
MSG_NO_MATCH = "no node group matched the producer node and no defaultNodeGroup is configured"


def config(default: str | None = "fallback", **extra: Any) -> dict[str, Any]:
    cfg: dict[str, Any] = {"enabled": True, "defaultMountType": "oci", **extra}
    if default is not None:
        cfg["defaultNodeGroup"] = default
    return b.config_map(cfg)


def gpu_node(**labels: str) -> dict[str, Any]:
    return b.node("gpu-node", labels or {"role": "gpu"})


def producer(node_name: str = "gpu-node", annotation: str | None = None, name: str = POD) -> dict[str, Any]:
    return b.pod(
        name,
        NS,
        node_name=node_name,
        labels=dict(PRODUCER_LABELS),
        annotations={ANN: annotation} if annotation is not None else None,
    )


def session_capture(
    node_name: str = "gpu-node",
    requested: str = "",
    pod: str = POD,
    name: str = CAPTURE,
    kernel_cache_ref: dict[str, str] | None = None,
    **status: Any,
) -> dict[str, Any]:
    return b.capture(
        name,
        NS,
        status=b.capture_status(
            pod=pod, node_name=node_name, requested=requested, kernel_cache_ref=kernel_cache_ref, **status
        ),
    )


def snap(*items: dict[str, Any], reads: tuple[Read, ...] = ()) -> Any:
    return build(list(items), reads=reads, reads_assumed=True)


def steps(why: WhyGroup) -> list[tuple[str, str]]:
    return [(s.step, s.outcome) for s in why.steps]


def warnings(why: WhyGroup) -> list[str]:
    return [s.detail for s in why.steps if s.outcome == "warning"]


def result(why: WhyGroup) -> dict[str, Any]:
    return why.to_dict()["result"]


def failed(reason: str, message: str) -> dict[str, Any]:
    return {"group": None, "source": None, "reason": reason, "message": message}


# ---- basis: predicted from the pod ----------------------------------------------------------------


def test_no_capture_predicts_from_pod():
    why = explain(snap(config(), gpu_node(), GPU, FALLBACK, producer()), NS, POD)
    assert why.basis == "pod"
    assert why.capture is None
    assert why.node == "gpu-node"
    assert result(why) == {
        "group": "gpu",
        "source": "auto",
        "reason": None,
        "message": 'node gpu-node matches only KernelCacheNodeGroup "gpu"',
    }
    assert steps(why)[:2] == [("session", "not-found"), ("session", "predicted")]
    assert 'the generated name "model-kcc-669889f77f" does not exist' in why.steps[0].detail
    assert "predicted from pod " + POD in why.steps[1].detail
    assert why.to_dict()["capture"] is None and why.to_dict()["kernelCache"] is None
    assert why.event is None


def test_capture_without_session_predicts_from_pod_annotation():
    capture = b.capture(CAPTURE, NS, status={"phase": "WaitingForWorkload"})
    why = explain(
        snap(config(), gpu_node(), GPU, b.group("pinned", {"role": "x"}), capture, producer(annotation="pinned")),
        NS,
        POD,
    )
    assert why.basis == "pod"
    assert why.to_dict()["capture"] == {"namespace": NS, "name": CAPTURE, "activeSession": None}
    assert result(why)["group"] == "pinned" and result(why)["source"] == "annotation"
    assert ("session", "predicted") in steps(why)
    assert ("session", "incomplete") in steps(why)
    # the requested group does not contain the producer's node: a trap KServe accepts silently
    trap = 'requested group "pinned" does not contain the producer node gpu-node'
    assert any(trap in w for w in warnings(why))


def test_unscheduled_pod_predicts_producer_node_pending():
    why = explain(snap(config(), GPU, producer(node_name="")), NS, POD)
    assert why.basis == "pod"
    assert why.node is None
    assert result(why) == failed("ProducerNodePending", MSG_PENDING)
    assert why.event == f"Warning ProducerNodePending SelectNodeGroup: {MSG_PENDING}"


# ---- basis: the recorded session ------------------------------------------------------------------


def test_requested_group_present_is_selected():
    why = explain(
        snap(config(), gpu_node(), GPU, FALLBACK, producer(annotation="gpu"), session_capture(requested="gpu")), NS, POD
    )
    assert why.basis == "capture"
    assert result(why)["group"] == "gpu" and result(why)["source"] == "annotation"
    assert ("annotation", "selected") in steps(why)
    assert warnings(why) == []
    assert why.drift == ()


def test_requested_group_missing_has_no_fallback():
    items = (
        config("fallback"),
        gpu_node(),
        b.group("fallback", {"role": "gpu"}),
        producer(annotation="missing"),
        session_capture(requested="missing"),
    )
    why = explain(snap(*items), NS, POD)
    assert result(why) == {
        "group": None,
        "source": None,
        "reason": "InvalidRequestedNodeGroup",
        "message": 'KernelCacheNodeGroup "missing" was not found',
    }
    assert why.event == (
        'Warning InvalidRequestedNodeGroup SelectNodeGroup: KernelCacheNodeGroup "missing" was not found'
    )
    # no fallback: neither the matching group nor the default is tried
    assert [s for s, _ in steps(why)].count("match") == 0 and ("default", "selected") not in steps(why)


def test_requested_group_is_trimmed_like_kserve():
    why = explain(snap(config(), gpu_node(), GPU, session_capture(requested="  gpu \t")), NS, POD)
    assert result(why)["group"] == "gpu" and result(why)["source"] == "annotation"


def test_producer_node_not_recorded_is_pending():
    why = explain(snap(config(), gpu_node(), GPU, session_capture(node_name="")), NS, POD)
    assert why.basis == "capture"
    assert result(why)["reason"] == "ProducerNodePending" and result(why)["message"] == MSG_PENDING
    assert why.to_dict()["node"] is None


def test_node_gone_falls_to_default():
    why = explain(snap(config("fallback"), GPU, FALLBACK, session_capture()), NS, POD)
    assert result(why)["group"] == "fallback" and result(why)["source"] == "default"
    assert ("node", "missing") in steps(why)
    assert why.node == "gpu-node" and not why.node_found
    assert all(not g["matches"] for g in why.to_dict()["groups"])
    assert why.to_dict()["groups"][1]["missingLabels"] == {"role": "gpu"}
    assert any("recorded node gpu-node no longer exists" in d for d in why.drift)
    assert ("session", "pod-gone") in steps(why)


def test_one_match_is_auto():
    why = explain(
        snap(
            config(),
            gpu_node(),
            b.node("cpu-node", {"role": "cpu"}),
            GPU,
            b.group("cpu", {"role": "cpu"}),
            FALLBACK,
            session_capture(),
            producer(),
        ),
        NS,
        POD,
    )
    assert result(why)["group"] == "gpu" and result(why)["source"] == "auto"
    assert steps(why)[-1] == ("match", "one")


def test_zero_matches_use_default():
    why = explain(snap(config("fallback"), gpu_node(), FALLBACK, session_capture(), producer()), NS, POD)
    assert result(why) == {
        "group": "fallback",
        "source": "default",
        "reason": None,
        "message": 'default KernelCacheNodeGroup "fallback" selected',
    }
    assert ("match", "none") in steps(why) and ("default", "selected") in steps(why)


def test_several_matches_are_ambiguous_without_default_fallback():
    items = (
        config("fallback"),
        gpu_node(role="gpu", zone="east"),
        b.group("gpu-a", {"role": "gpu"}),
        b.group("gpu-b", {"zone": "east"}),
        FALLBACK,
        session_capture(),
        producer(),
    )
    why = explain(snap(*items), NS, POD)
    assert result(why) == failed("AmbiguousNodeGroup", MSG_AMBIGUOUS)
    assert why.event == f"Warning AmbiguousNodeGroup SelectNodeGroup: {MSG_AMBIGUOUS}"
    assert ("default", "selected") not in steps(why)
    # the failure already says it: no extra "several groups" warning
    assert warnings(why) == []
    assert [g["matches"] for g in why.to_dict()["groups"]] == [False, True, True]


def test_default_unset_is_no_matching_node_group():
    why = explain(snap(config(None), gpu_node(), b.group("cpu", {"role": "cpu"}), session_capture()), NS, POD)
    assert result(why) == failed("NoMatchingNodeGroup", MSG_NO_MATCH)
    assert ("default", "unset") in steps(why)


def test_default_missing_is_invalid_default_node_group():
    items = (config("fallback"), gpu_node(), b.group("cpu", {"role": "cpu"}), session_capture())
    why = explain(snap(*items), NS, POD)
    assert result(why) == {
        "group": None,
        "source": None,
        "reason": "InvalidDefaultNodeGroup",
        "message": 'KernelCacheNodeGroup "fallback" was not found',
    }


def test_kserve_harness_fixture_pod_gone_generated_kernel_cache():
    snapshot = load_files([str(FIXTURES / "kserve-harness.yaml")])
    why = explain(snapshot, "team", "model-pod")
    doc = why.to_dict()
    assert doc["basis"] == "capture"
    session = {"id": "session", "podName": "model-pod", "nodeName": "gpu-node"}
    assert doc["capture"] == {"namespace": "team", "name": "model-capture", "activeSession": session}
    assert doc["result"]["group"] == "gpu" and doc["result"]["source"] == "auto"
    assert doc["kernelCache"] == {
        "name": "model-5fc2f4e1d106aaa8a0970991",
        "nodeGroup": "gpu",
        "selectionSource": "auto",
    }
    assert doc["drift"] == [
        "KernelCache team/model-5fc2f4e1d106aaa8a0970991 exists but status.kernelCacheRef is "
        "empty: KServe only links the capture to it (no selection, no event) on its next pass "
        "over that KernelCache"
    ]
    assert steps(why)[:2] == [("session", "found"), ("session", "pod-gone")]
    assert "its activeSession names pod model-pod" in why.steps[0].detail


def test_capture_by_name():
    snapshot = load_files([str(FIXTURES / "kserve-harness.yaml")])
    why = explain(snapshot, "team", capture_name="model-capture")
    assert why.pod_name == "model-pod"  # taken from the session
    assert why.to_dict()["pod"] == {"namespace": "team", "name": "model-pod"}
    assert result(why)["group"] == "gpu"
    with pytest.raises(InputError, match='KernelCacheCapture "nope" not found in namespace "team"'):
        explain(snapshot, "team", capture_name="nope")


def test_capture_without_session_and_without_pod_goes_to_default():
    capture = b.capture("hand-made", NS, status={"phase": "Pending"})
    why = explain(snap(config("fallback"), FALLBACK, capture), NS, capture_name="hand-made")
    assert why.basis == "capture" and why.pod_name is None
    assert why.to_dict()["pod"] == {"namespace": NS, "name": None}
    assert ("session", "absent") in steps(why)
    assert result(why)["group"] == "fallback" and result(why)["source"] == "default"


# ---- finding the capture --------------------------------------------------------------------------


def test_generated_capture_name_with_long_isvc_name():
    isvc = "q" * 60
    generated = "qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq-50ddcf818ce5-kcc-669889f77f"
    pod = b.pod(
        "p",
        NS,
        node_name="gpu-node",
        labels={"serving.kserve.io/inferenceservice": isvc, "pod-template-hash": "669889f77f"},
    )
    # the generated capture has no session yet, a hand-named capture does not name the pod
    items = (
        config(),
        gpu_node(),
        GPU,
        pod,
        b.capture(generated, NS, isvc=isvc, status={"phase": "Pending"}),
        session_capture(name="other", pod="someone-else"),
    )
    why = explain(snap(*items), NS, "p")
    assert why.capture is not None and why.capture.name == generated
    assert "KServe's generated name for InferenceService " + isvc in why.steps[0].detail


def test_session_search_when_generated_name_absent():
    items = (config(), gpu_node(), GPU, producer(), session_capture(name="my-capture"))
    why = explain(snap(*items), NS, POD)
    assert why.capture is not None and why.capture.name == "my-capture"
    assert why.basis == "capture"


def test_pod_gone_and_no_capture_is_an_input_error():
    with pytest.raises(
        InputError, match='pod "ghost" not found in namespace "team-a" and no KernelCacheCapture there names it'
    ):
        explain(snap(config(), session_capture()), NS, "ghost")


def test_pod_gone_with_forbidden_reads_is_incomplete():
    reads = (Read("pods", NS, "forbidden", verb="list"), Read("kernelcachecaptures", NS, "ok"))
    with pytest.raises(IncompleteError, match="cannot list pods"):
        explain(snap(config(), reads=reads), NS, "ghost")


def test_no_pod_and_no_capture_name_is_an_input_error():
    with pytest.raises(InputError):
        explain(snap(config()), NS)


def test_session_claimed_by_another_pod():
    other = producer(name="model-predictor-669889f77f-zzzzz", annotation="gpu")
    items = (
        config(),
        gpu_node(),
        GPU,
        producer(),
        other,
        session_capture(pod="model-predictor-669889f77f-zzzzz", requested="gpu"),
    )
    why = explain(snap(*items), NS, POD)
    assert result(why)["source"] == "annotation"
    assert any("claimed by pod model-predictor-669889f77f-zzzzz, not " + POD in w for w in warnings(why))
    assert why.drift == ()  # the asked-about pod is not the session's pod: no pod drift


def test_several_captures_name_the_pod_newest_wins():
    first = session_capture(name="cap-1")
    second = session_capture(name="cap-2")
    first["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    second["metadata"]["creationTimestamp"] = "2026-02-01T00:00:00Z"
    why = explain(snap(config(), gpu_node(), GPU, first, second), NS, POD)
    assert why.capture is not None and why.capture.name == "cap-2"
    assert any("several captures name pod" in w and "cap-1" in w for w in warnings(why))


# ---- the created KernelCache and drift ------------------------------------------------------------


def test_kernel_cache_by_ref_and_missing_ref():
    ref = {"namespace": NS, "name": GEN}
    kc = b.kernel_cache(GEN, NS, group_name="gpu", annotations={SOURCE: "auto"})
    items = (config(), gpu_node(), GPU, session_capture(kernel_cache_ref=ref))
    why = explain(snap(*items, kc), NS, POD)
    assert why.to_dict()["kernelCache"] == {"name": GEN, "nodeGroup": "gpu", "selectionSource": "auto"}
    assert why.drift == ()
    why = explain(snap(*items), NS, POD)
    assert why.kernel_cache is None
    assert why.drift == (
        f"KernelCache team-a/{GEN}, named in status.kernelCacheRef, no longer exists: KServe "
        "re-creates it at once (its deletion re-queues it) and runs the node-group selection again: "
        'today it selects "gpu" (source auto)',
    )
    assert "never moved" not in why.drift[0]


def test_kernel_cache_without_annotation_has_null_source():
    ref = {"namespace": NS, "name": GEN}
    items = (
        config(),
        gpu_node(),
        GPU,
        session_capture(kernel_cache_ref=ref),
        b.kernel_cache(GEN, NS, group_name="gpu"),
    )
    assert explain(snap(*items), NS, POD).to_dict()["kernelCache"]["selectionSource"] is None


def test_drift_annotation_changed_after_session():
    """The session is claimed once (newest capture_reconciler.go): a later annotation is ignored."""
    why = explain(
        snap(
            config(),
            gpu_node(),
            GPU,
            b.group("gpu-2", {"role": "gpu2"}),
            producer(annotation="gpu-2"),
            session_capture(requested="gpu"),
        ),
        NS,
        POD,
    )
    assert result(why)["group"] == "gpu"  # KServe keeps deciding from the recorded value
    assert len(why.drift) == 1
    text = why.drift[0]
    assert text.startswith(
        f'pod {POD} annotation {ANN} is now "gpu-2" but the session recorded "gpu" when the '
        "pod claimed the capture: KServe records the session once and never updates it"
    )
    assert "request it on the InferenceService's pod template before the next capture" in text
    assert "make the groups' selectors disjoint" in text
    assert (
        "kubectl -n team-a patch inferenceservice model --type=merge -p "
        f'\'{{"spec":{{"predictor":{{"annotations":{{"{ANN}":"gpu-2"}}}}}}}}\''
    ) in why.next_commands
    assert why.to_dict()["fixes"] == list(why.next_commands)
    assert [(d.field, d.recorded, d.now) for d in why.pod_drift] == [("requestedNodeGroup", "gpu", "gpu-2")]


def test_drift_annotation_added_after_session():
    why = explain(snap(config(), gpu_node(), GPU, producer(annotation="gpu"), session_capture()), NS, POD)
    assert result(why)["source"] == "auto"  # not the annotation: it came after the claim
    assert len(why.drift) == 1
    assert 'recorded ""' in why.drift[0]
    assert "never updates it" in why.drift[0]
    assert "back-fill" not in why.drift[0] and "still running" not in why.drift[0]


def test_drift_node_changed():
    why = explain(
        snap(
            config(),
            gpu_node(),
            b.node("other-node", {"role": "gpu"}),
            GPU,
            producer(node_name="other-node"),
            session_capture(),
        ),
        NS,
        POD,
    )
    assert why.node == "gpu-node"
    assert why.drift == (
        f'pod {POD} is now on node "other-node" but the session recorded node "gpu-node": '
        "KServe decides from the recorded node",
    )


def test_drift_node_not_yet_recorded():
    """An empty recorded node is never filled in: the capture stays ProducerNodePending."""
    why = explain(
        snap(config(), gpu_node(), GPU, producer(node_name="gpu-node"), session_capture(node_name="")), NS, POD
    )
    assert result(why)["reason"] == "ProducerNodePending"
    assert len(why.drift) == 1
    assert "the session recorded no node" in why.drift[0] and "KServe never fills it in" in why.drift[0]


def test_drift_kernel_cache_in_other_group_than_today():
    ref = {"namespace": NS, "name": GEN}
    kc = b.kernel_cache(GEN, NS, group_name="old-gpu", annotations={SOURCE: "auto"})
    items = (config("fallback"), gpu_node(), GPU, FALLBACK, session_capture(kernel_cache_ref=ref), kc, producer())
    why = explain(snap(*items), NS, POD)
    assert why.to_dict()["kernelCache"] == {"name": GEN, "nodeGroup": "old-gpu", "selectionSource": "auto"}
    assert why.drift == (
        f'KernelCache team-a/{GEN} is in group "old-gpu" (source auto) but KServe would choose "gpu" '
        "(source auto) today; a created KernelCache is never moved: only a new artifact digest makes a new one",
        f'KernelCache team-a/{GEN} references KernelCacheNodeGroup "old-gpu", which no longer exists '
        "(KServe marks it NodeGroupNotFound and prepares it nowhere)",
    )
    assert why.kernel_cache is not None and not why.kernel_cache.group_exists


def test_drift_kernel_cache_while_today_fails():
    ref = {"namespace": NS, "name": GEN}
    items = (
        config(),
        gpu_node(role="gpu", zone="east"),
        b.group("gpu-a", {"role": "gpu"}),
        b.group("gpu-b", {"zone": "east"}),
        session_capture(kernel_cache_ref=ref),
        b.kernel_cache(GEN, NS, group_name="gpu-a", annotations={SOURCE: "auto"}),
        producer(),
    )
    why = explain(snap(*items), NS, POD)
    assert why.drift == (
        f'KernelCache team-a/{GEN} was created in group "gpu-a", but today KServe\'s '
        f"selection fails with AmbiguousNodeGroup: {MSG_AMBIGUOUS} (a created KernelCache "
        "is never moved)",
    )


def test_drift_same_group_other_source():
    ref = {"namespace": NS, "name": GEN}
    items = (
        config("gpu"),
        b.node("gpu-node", {"role": "none"}),
        GPU,
        session_capture(kernel_cache_ref=ref),
        b.kernel_cache(GEN, NS, group_name="gpu", annotations={SOURCE: "auto"}),
    )
    why = explain(snap(*items), NS, POD)
    assert why.drift == (
        f'KernelCache team-a/{GEN} was placed in "gpu" by source auto; today the same group comes from source default',
    )


# ---- what-if --------------------------------------------------------------------------------------


def test_what_if_node():
    items = (
        config("fallback"),
        gpu_node(),
        b.node("cpu-node", {"role": "cpu"}),
        GPU,
        FALLBACK,
        session_capture(),
        producer(),
    )
    why = explain(snap(*items), NS, POD, what_if_node="cpu-node")
    assert why.basis == "what-if"
    assert why.node == "cpu-node"
    assert result(why)["group"] == "fallback" and result(why)["source"] == "default"
    assert ("session", "what-if") in steps(why)
    assert "the session recorded on capture " + CAPTURE in why.steps[1].detail
    # the recorded session is reported as it is
    assert why.to_dict()["capture"]["activeSession"]["nodeName"] == "gpu-node"
    assert why.drift == ()  # drift comes from the real decision, not the what-if


def test_what_if_group_and_clearing_it():
    items = (
        config(),
        gpu_node(role="gpu", zone="east"),
        b.group("gpu-a", {"role": "gpu"}),
        b.group("gpu-b", {"zone": "east"}),
        session_capture(requested="gpu-a"),
        producer(annotation="gpu-a"),
    )
    snapshot = snap(*items)
    assert result(explain(snapshot, NS, POD))["group"] == "gpu-a"
    why = explain(snapshot, NS, POD, what_if_group="gpu-b")
    assert why.basis == "what-if"
    assert result(why)["group"] == "gpu-b" and result(why)["source"] == "annotation"
    why = explain(snapshot, NS, POD, what_if_group="")
    assert result(why)["reason"] == "AmbiguousNodeGroup"
    why = explain(snapshot, NS, POD, what_if_group="nope")
    assert result(why)["reason"] == "InvalidRequestedNodeGroup"


def test_what_if_without_pod_or_session_starts_empty():
    capture = b.capture("c", NS, status={"phase": "Pending"})
    why = explain(snap(config(None), gpu_node(), GPU, capture), NS, capture_name="c", what_if_node="gpu-node")
    assert why.basis == "what-if" and result(why)["group"] == "gpu"
    assert steps(why) == [
        ("session", "found"),
        ("session", "incomplete"),
        ("session", "what-if"),
        ("annotation", "none"),
        ("node", "found"),
        ("match", "one"),
    ]
    assert why.steps[2].detail == ("an empty session, with nodeName gpu-node, requestedNodeGroup (none) (what-if)")


def test_what_if_predicted_from_pod():
    why = explain(snap(config(), gpu_node(), GPU, producer(node_name="")), NS, POD, what_if_node="gpu-node")
    assert result(why)["group"] == "gpu"
    (what_if,) = [s.detail for s in why.steps if s.outcome == "what-if"]
    assert what_if.startswith("the session predicted from pod " + POD)


# ---- traps ----------------------------------------------------------------------------------------


def test_trap_requested_group_without_the_producer_node():
    items = (config(), gpu_node(), GPU, b.group("cpu", {"role": "cpu", "tier": "a"}), session_capture(requested="cpu"))
    why = explain(snap(*items), NS, POD)
    assert result(why)["group"] == "cpu" and result(why)["source"] == "annotation"
    trap = [s for s in why.steps if s.outcome == "warning"]
    assert [(s.step, s.detail) for s in trap] == [
        (
            "annotation",
            'requested group "cpu" does not contain the producer node gpu-node (it lacks role=cpu, tier=a): '
            'KServe accepts the request without checking and prepares the cache on the nodes of "cpu", not where '
            "the producer ran",
        )
    ]
    # the trap follows the annotation step
    assert steps(why).index(("annotation", "warning")) == steps(why).index(("annotation", "selected")) + 1


def test_trap_node_in_several_groups_resolved_by_annotation():
    items = (
        config(),
        gpu_node(role="gpu", zone="east"),
        b.group("gpu-a", {"role": "gpu"}),
        b.group("gpu-b", {"zone": "east"}),
        session_capture(requested="gpu-b"),
    )
    why = explain(snap(*items), NS, POD)
    assert result(why)["group"] == "gpu-b"
    assert warnings(why) == [
        "node gpu-node is in several groups (gpu-a, gpu-b): a capture from it without "
        f"{ANN} fails with AmbiguousNodeGroup"
    ]


def test_trap_default_names_a_label_with_equals():
    items = (config("role=gpu"), b.node("gpu-node", {"role": "none"}), GPU, session_capture())
    why = explain(snap(*items), NS, POD)
    assert result(why) == {
        "group": None,
        "source": None,
        "reason": "InvalidDefaultNodeGroup",
        "message": 'KernelCacheNodeGroup "role=gpu" was not found',
    }
    assert warnings(why) == [
        'defaultNodeGroup "role=gpu" looks like a node label, not a KernelCacheNodeGroup '
        "name; set it to the group whose selector has that label: gpu"
    ]
    assert steps(why)[-1] == ("default", "warning")


def test_trap_default_names_a_label_key():
    items = (
        config("nvidia.com/gpu.present"),
        b.node("gpu-node", {"nvidia.com/gpu.present": "true"}),
        GPU,
        session_capture(),
    )
    why = explain(snap(*items), NS, POD)
    assert result(why)["reason"] == "InvalidDefaultNodeGroup"
    assert len(warnings(why)) == 1 and "looks like a node label" in warnings(why)[0]
    assert "kubectl get kernelcachenodegroups" in warnings(why)[0]


def test_no_trap_for_a_plain_missing_default():
    why = explain(snap(config("fallback"), gpu_node(), session_capture()), NS, POD)
    assert result(why)["reason"] == "InvalidDefaultNodeGroup"
    assert warnings(why) == []


# ---- configuration and reads ----------------------------------------------------------------------


def test_missing_config_means_no_default_and_a_warning():
    why = explain(snap(gpu_node(), b.group("cpu", {"role": "cpu"}), session_capture()), NS, POD)
    assert result(why)["reason"] == "NoMatchingNodeGroup"
    assert warnings(why) == [
        "ConfigMap kserve/inferenceservice-config not found: KServe creates no "
        "KernelCache without it; assuming no defaultNodeGroup"
    ]
    assert why.config_problem == warnings(why)[0]


def test_invalid_config_is_noted():
    why = explain(snap(b.config_map("{not json"), gpu_node(), GPU, session_capture()), NS, POD)
    assert result(why)["group"] == "gpu"
    assert len(warnings(why)) == 1
    assert warnings(why)[0].startswith(
        "kserve/inferenceservice-config key kernelcache is invalid (unable to unmarshal kernelcache:"
    )


def test_disabled_config_is_noted():
    why = explain(
        snap(b.config_map({"enabled": False, "defaultNodeGroup": "gpu"}), gpu_node(), GPU, session_capture()), NS, POD
    )
    assert warnings(why) == [
        "kserve/inferenceservice-config key kernelcache: enabled is false: KServe creates no KernelCache"
    ]


@pytest.mark.parametrize(
    ("resource", "namespace"),
    [("pods", NS), ("kernelcachecaptures", NS), ("kernelcaches", NS), ("kernelcachenodegroups", None)],
)
def test_every_read_the_answer_needs_is_required(resource, namespace):
    """Issue 12: a forbidden read the answer depends on is exit 3 naming verb and resource, never a verdict."""
    reads = (Read(resource, namespace, "forbidden"),)
    with pytest.raises(IncompleteError) as exc:
        explain(snap(config(), gpu_node(), GPU, producer(), session_capture(), reads=reads), NS, POD)
    where = f" in namespace {namespace}" if namespace else ""
    assert f"cannot list {resource}{where} (forbidden)" in str(exc.value)
    assert exc.value.exit_code == 3


def test_a_node_read_is_required_when_the_decision_looks_at_the_node():
    reads = (Read("nodes", None, "forbidden"),)
    with pytest.raises(IncompleteError, match=r"cannot list nodes \(forbidden\)"):
        explain(snap(config(), GPU, FALLBACK, session_capture(), reads=reads), NS, POD)


def test_reads_the_decision_does_not_use_are_not_required():
    """A requested group decides alone: the node is not looked at, and the ConfigMap only for its warnings."""
    reads = (Read("nodes", None, "forbidden"), Read("configmaps", "kserve", "not-in-input"))
    why = explain(snap(GPU, session_capture(requested="gpu"), reads=reads), NS, POD)
    assert result(why)["group"] == "gpu" and result(why)["source"] == "annotation"


def test_a_forbidden_config_read_is_exit_3_not_a_missing_configmap():
    """Issue 27 item 2: with configmaps forbidden the answer is not "the ConfigMap is not found"."""
    reads = (Read("configmaps", "kserve", "forbidden"),)
    with pytest.raises(IncompleteError, match=r"cannot list configmaps in namespace kserve \(forbidden\)"):
        explain(snap(GPU, session_capture(requested="gpu"), reads=reads), NS, POD)


def test_the_config_read_is_required_when_the_default_is_used():
    reads = (Read("configmaps", "kserve", "forbidden"),)
    with pytest.raises(IncompleteError, match="cannot list configmaps in namespace kserve"):
        explain(snap(b.node("gpu-node", {"role": "none"}), GPU, session_capture(), reads=reads), NS, POD)


def test_reads_missing_from_a_dump_are_not_read():
    snapshot = build([config(), GPU, session_capture()], reads=(Read("kernelcachecaptures", NS, "ok"),))
    with pytest.raises(IncompleteError, match="kernelcaches in namespace team-a were not read"):
        explain(snapshot, NS, POD)


# ---- groups ---------------------------------------------------------------------------------------


def test_groups_fit_with_missing_labels_and_untolerated_taints():
    node = b.node("gpu-node", {"role": "gpu", "zone": "west"}, taints=[b.taint("nvidia.com/gpu", "present")])
    tolerate = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    items = (
        config(),
        node,
        b.group("b-gpu", {"role": "gpu"}, tolerations=tolerate),
        b.group("a-east", {"role": "gpu", "zone": "east", "tier": "fast"}),
        session_capture(),
    )
    why = explain(snap(*items), NS, POD)
    assert why.to_dict()["groups"] == [
        {
            "name": "a-east",
            "matches": False,
            "missingLabels": {"tier": "fast", "zone": "east"},
            "untoleratedTaints": ["nvidia.com/gpu=present:NoSchedule"],
        },
        {"name": "b-gpu", "matches": True, "missingLabels": {}, "untoleratedTaints": []},
    ]
    assert dict(why.node_labels) == {"role": "gpu", "zone": "west"}
    assert why.other_label_count == 1  # kubernetes.io/hostname


# ---- the JSON contract ----------------------------------------------------------------------------


def test_to_dict_shape_is_the_contract():
    snapshot = load_files([str(FIXTURES / "annotation-drift.yaml")])
    doc = explain(snapshot, "team", "qwen-predictor-669889f77f-x7k2p").to_dict()
    assert list(doc) == [
        "kind",
        "version",
        "pod",
        "node",
        "basis",
        "capture",
        "result",
        "kernelCache",
        "drift",
        "fixes",
        "steps",
        "groups",
        "why",
        "next",
    ]
    assert doc["kind"] == "WhyGroup" and doc["version"] == 1
    assert doc["pod"] == {"namespace": "team", "name": "qwen-predictor-669889f77f-x7k2p"}
    assert doc["node"] == "gpu-node"
    assert doc["basis"] == "capture"
    assert set(doc["capture"]) == {"namespace", "name", "activeSession"}
    assert doc["capture"]["activeSession"] == {
        "id": "5a0f6c1e-9d2b-4c67-a1f3-0e8d2b7c4a11",
        "podName": "qwen-predictor-669889f77f-x7k2p",
        "nodeName": "gpu-node",
        "requestedNodeGroup": "gpu-a",
    }
    assert doc["result"] == {
        "group": "gpu-a",
        "source": "annotation",
        "reason": None,
        "message": 'requested KernelCacheNodeGroup "gpu-a" selected',
    }
    assert doc["kernelCache"] == {
        "name": "qwen-kcc-669889f77f-5fc2f4e1d106aaa8a0970991",
        "nodeGroup": "gpu-a",
        "selectionSource": "annotation",
    }
    assert len(doc["drift"]) == 1 and '"gpu-b"' in doc["drift"][0]
    assert doc["fixes"] == [
        "kubectl -n team patch inferenceservice qwen --type=merge -p "
        '\'{"spec":{"predictor":{"annotations":{"serving.kserve.io/kernelcache-nodegroup":"gpu-b"}}}}\''
    ]
    for step in doc["steps"]:
        assert set(step) == {"step", "outcome", "detail"}
        assert step["step"] in ("session", "annotation", "node", "match", "default")
    for g in doc["groups"]:
        assert list(g) == ["name", "matches", "missingLabels", "untoleratedTaints"]
    assert [g["name"] for g in doc["groups"]] == ["fallback", "gpu-a", "gpu-b"]
    assert json.loads(json.dumps(doc)) == doc  # plain JSON


def test_to_dict_nulls():
    doc = explain(snap(GPU, producer(node_name="")), NS, POD).to_dict()
    assert doc["node"] is None and doc["capture"] is None and doc["kernelCache"] is None
    assert doc["result"] == failed("ProducerNodePending", MSG_PENDING)
    assert doc["drift"] == []


def test_explain_imports_neither_rich_nor_click():
    code = (
        "import sys; import kubectl_kcache.explain.why_group; "
        "bad = [m for m in ('rich', 'click', 'kubernetes', 'yaml') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parents[3])


def test_a_colliding_capture_says_only_one_is_linked():
    other = "model-kcc-669889f77f-capture"  # the trailing -capture is dropped: the same generated name
    items = (
        config(),
        gpu_node(),
        GPU,
        producer(),
        session_capture(),
        session_capture(name=other, pod="model-other-pod"),
    )
    why = explain(snap(*items), NS, capture_name=other)
    assert why.drift[0] == (
        f"capture {other} maps to KernelCache team-a/{GEN} like capture {CAPTURE} (same first "
        "38 characters, same digest): KServe links only one capture per KernelCache name, and "
        "which one is not guaranteed"
    )


def test_a_ref_to_another_name_says_kserve_makes_the_generated_one():
    items = (
        config(),
        gpu_node(),
        GPU,
        producer(),
        b.kernel_cache("hand-made", NS, group_name="gpu"),
        session_capture(kernel_cache_ref={"namespace": NS, "name": "hand-made"}),
    )
    why = explain(snap(*items), NS, POD)
    assert why.to_dict()["kernelCache"]["name"] == "hand-made"
    assert why.drift[0] == (
        f"status.kernelCacheRef names team-a/hand-made, not the generated name team-a/{GEN}: "
        f'KServe creates team-a/{GEN} (today it selects "gpu" (source auto)) and points the '
        "capture at it"
    )


def test_a_pending_producer_needs_no_node_read():
    reads = (Read("nodes", None, "forbidden"),)
    why = explain(snap(GPU, session_capture(node_name=""), reads=reads), NS, POD)
    assert result(why)["reason"] == "ProducerNodePending"


def test_a_pod_and_another_pods_capture_are_refused():
    """Issue 14: `why-group POD --capture OTHER` must not answer for OTHER as if it were POD's."""
    other = session_capture(name="other-kcc-1", pod="someone-else")
    items = (config(), gpu_node(), GPU, producer(), session_capture(), other)
    with pytest.raises(InputError) as err:
        explain(snap(*items), NS, POD, capture_name="other-kcc-1")
    assert str(err.value) == (
        f'KernelCacheCapture "other-kcc-1" is not the capture of pod "{POD}" (its session was '
        f'claimed by pod "someone-else"; the own capture of pod "{POD}" is "{CAPTURE}"): give '
        "the pod or --capture, not both"
    )
    # the pod's own capture, by its generated name or its session, is fine
    assert explain(snap(*items), NS, POD, capture_name=CAPTURE).capture.name == CAPTURE
