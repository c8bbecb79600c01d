"""Where KServe's KernelCache pass stops before status (§7.2 order, §6.1b): a terminating KernelCache is not
reconciled at all (no link: the planner must not plan one either), an artifact mismatch and an empty group
selector fail the pass before status, and running prefetch Jobs with the managed RoleBinding requeue it."""

from __future__ import annotations

import copy
from typing import Any

from kubectl_kcache import objects as o
from kubectl_kcache.checks import run_doctor
from kubectl_kcache.kernelcache import cache_pass as cp
from kubectl_kcache.kernelcache.capture import TERMINATING, cache_outcomes
from kubectl_kcache.reconcile.planner import plan
from kubectl_kcache.snapshot.model import build
from tests import builders as b

from .test_cache_outcomes import NS, cache, capture

KC_NAME = "model-5fc2f4e1d106aaa8a0970991"


def terminating(kc: o.KernelCache, finalizers: tuple[str, ...] = ("example.com/hold",)) -> dict[str, Any]:
    obj = b.kernel_cache(kc.name, NS, "gpu")
    obj["spec"]["artifact"] = copy.deepcopy(dict(kc.artifact.raw))
    obj["metadata"].update({"deletionTimestamp": "2026-11-29T09:00:00Z", "finalizers": list(finalizers)})
    return obj


def test_a_terminating_kernel_cache_is_not_linked():
    """Step 1: KServe returns right after the Get; the capture is not linked (whatever the ref says)."""
    cap = capture("model-capture")
    kc = o.KernelCache.from_dict(terminating(cache(KC_NAME, cap)))
    got = cache_outcomes([cap], {f"{NS}/{KC_NAME}": kc})[(NS, "model-capture")]
    assert got.outcome == TERMINATING
    assert got.reason.startswith(
        f"KernelCache {NS}/{KC_NAME} is terminating (deletionTimestamp "
        "2026-11-29T09:00:00Z), held by finalizer(s) example.com/hold: KServe's reconciler "
        "returns right after reading it, so no link"
    )
    assert "the pod webhook still mounts it" in got.reason
    assert got.reason.endswith(
        "once it is gone KServe re-creates it from capture model-capture (node-group selection runs again)"
    )


def test_the_planner_plans_no_link_to_a_dying_kernel_cache():
    cap_obj = b.capture("model-capture", ns=NS, status=b.capture_status())
    art = o.Capture.from_dict(cap_obj).artifact
    kc_obj = terminating(
        o.KernelCache.from_dict(
            {
                **b.kernel_cache(KC_NAME, NS, "gpu"),
                "spec": {**b.kernel_cache(KC_NAME, NS, "gpu")["spec"], "artifact": dict(art.raw)},
            }
        )
    )
    from kubectl_kcache.kernelcache.names import generated_kernel_cache_name

    name = generated_kernel_cache_name("model-capture", art.image_reference)
    kc_obj["metadata"]["name"] = name
    items = [
        b.config_map({"enabled": True, "defaultNodeGroup": "gpu"}),
        b.group("gpu", {"pool": "gpu"}),
        b.node("gpu-1", {"pool": "gpu"}),
        cap_obj,
        kc_obj,
    ]
    p = plan(build(items, reads_assumed=True))
    assert not [x for x in p.actions if x.kind == "KernelCacheCapture"]
    assert any(n.startswith(f"KernelCache {NS}/{name} is terminating") for n in p.notes)
    # the same cache, not terminating: a link is planned
    del kc_obj["metadata"]["deletionTimestamp"]
    p = plan(build(items, reads_assumed=True))
    assert [x.related for x in p.actions if x.kind == "KernelCacheCapture"] == [name]


def _doctor(items: list[dict[str, Any]]):
    report = run_doctor(build(items, reads_assumed=True), only=["cache-status"])
    return list(report.findings)


def base(*extra: dict[str, Any], config: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    return [
        b.config_map(config or {"enabled": True, "defaultNodeGroup": "gpu"}),
        b.group("gpu", {"pool": "gpu"}),
        b.node("gpu-1", {"pool": "gpu"}),
        b.namespace("kserve-kernelcache-jobs"),
        *extra,
    ]


def test_cache_status_says_terminating_and_does_not_judge_the_frozen_status():
    kc = b.kernel_cache("kc", NS, "gpu", state="Error", reason="StorageError", message="old")
    kc["metadata"].update({"deletionTimestamp": "2026-11-29T09:00:00Z", "finalizers": ["example.com/hold"]})
    found = _doctor(base(kc))
    assert [f.code for f in found] == ["terminating"]
    f = found[0]
    assert f.severity == "warning" and "stops at step 1 (terminating)" in f.message
    assert "held by finalizer(s) example.com/hold" in f.message and "Error/StorageError" in f.message
    assert f.evidence == ("finalizer example.com/hold",)
    assert f.hint == "kubectl -n team get kernelcache kc -o 'jsonpath={.metadata.finalizers}'"


def test_cache_status_names_a_frozen_pass_after_an_artifact_mismatch():
    cap = b.capture("model-capture", ns=NS, status=b.capture_status())
    art = o.Capture.from_dict(cap).artifact
    from kubectl_kcache.kernelcache.names import generated_kernel_cache_name

    name = generated_kernel_cache_name("model-capture", art.image_reference)
    kc = b.kernel_cache(name, NS, "gpu", seed="other", state="Error", reason="StorageError", message="old")
    found = _doctor(base(cap, kc))
    assert [f.code for f in found] == ["pass-stopped"]
    assert "step 2 (link)" in found[0].message and "artifact does not match" in found[0].message


def test_cache_status_names_the_prefetch_requeue():
    kc = b.kernel_cache("kc", NS, "gpu", state="Pending", reason="NoReadyNodes", message="matching nodes are not ready")
    rb = b.prefetcher_binding(NS, ("kernel-cache-prefetcher-sa", "kserve-kernelcache-jobs"), role="puller")
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "kc-kc-gpu-1-0123456789abcdef",
            "namespace": "kserve-kernelcache-jobs",
            "labels": {
                "serving.kserve.io/kernel-cache-name": "kc",
                "serving.kserve.io/kernel-cache-namespace": NS,
                "serving.kserve.io/kernel-cache-node": "gpu-1",
            },
        },
        "spec": {},
        "status": {"active": 1},
    }
    found = _doctor(base(kc, rb, job))
    lag = next(f for f in found if f.code == "status-lagging")
    assert lag.severity == "info" and "step 10 (prefetch-requeue)" in lag.message
    assert "KServe requeues the pass every minute" in lag.message
    assert "stale-status" not in [f.code for f in found]  # a lagging status is not called stale
    done = copy.deepcopy(job)
    done["status"] = {"conditions": [{"type": "Complete", "status": "True"}]}
    assert "status-lagging" not in [f.code for f in _doctor(base(kc, rb, done))]


def test_an_empty_selector_group_stops_the_pass():
    kc = o.KernelCache.from_dict(b.kernel_cache("kc", NS, "gpu"))
    group = o.NodeGroup.from_dict({**b.group("gpu", {"pool": "gpu"}), "spec": {"nodeSelector": {}}})
    stop = cp.pass_stop(
        kc, outcomes=(), config_ok=True, group=group, role_bindings=(), jobs=(), job_namespace="kserve-kernelcache-jobs"
    )
    assert stop is not None and (stop.step, stop.name) == (8, "node-group")
    assert "kernelcache node group requires a non-empty nodeSelector" in stop.text
    assert (
        cp.pass_stop(kc, outcomes=(), config_ok=False, group=group, role_bindings=(), jobs=(), job_namespace="x")
        is None
    )  # ConfigError is written first
