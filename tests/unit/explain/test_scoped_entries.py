"""One pod's decision indexes only the entries it can use (its namespace's KernelCaches, and another
namespace's with a Ready entry of its compatibility footprint): over generated KernelCacheNodes, the decision
and the whole answer are those made with every entry indexed."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_kcache.explain.why_not_cached import admission_inputs, explained, find_pod
from kubectl_kcache.kernelcache import admission as a
from kubectl_kcache.kernelcache.config import read_config
from kubectl_kcache.snapshot.model import build
from tests import builders as b

from .test_fleet import VARIANTS, crowded
from .test_why_not_cached import CASES, EARLY, NS, cluster

OTHER = "team-b"
# KernelCaches the generated entries stand for: the standard consumer's cache and its twins in both
# namespaces, one of another footprint
CACHES = {
    (NS, "qwen"): b.consumer_cache("qwen", ready_at=EARLY),
    (NS, "qwen-twin"): b.consumer_cache("qwen-twin", ready_at=EARLY),
    (OTHER, "qwen"): b.consumer_cache("qwen", ns=OTHER, ready_at=EARLY),
    (OTHER, "other"): b.consumer_cache(
        "other", ns=OTHER, identity={"footprints": b.footprints("other")}, ready_at=EARLY
    ),
}


@st.composite
def entry(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """(the cacheStatus key, the entry): a key that says another namespace than its kernelCacheRef, or no
    kernelCacheRef at all, are among them."""
    (ns, name), kc = draw(st.sampled_from(sorted(CACHES.items())))
    e = b.cache_entry(kc, state=draw(st.sampled_from(["Ready", "Ready", "Pulling", "Error"])), last_update=EARLY)
    if draw(st.booleans()):
        e["footprints"] = b.footprints(draw(st.sampled_from(["cache", "other", "x"])))
    key = f"{ns}/{name}"
    shape = draw(st.sampled_from(["ref", "ref", "no-ref", "key-elsewhere"]))
    if shape == "no-ref":
        del e["kernelCacheRef"]
    elif shape == "key-elsewhere":
        key = f"{draw(st.sampled_from([NS, OTHER]))}/{name}-k"
    return key, e


def _both(items: list[dict[str, Any]], pod_name: str) -> tuple[Any, Any]:
    """(the decision as why-not-cached makes it, the same with every entry indexed), and their answers."""
    snap = build(items, reads_assumed=True)
    pod = find_pod(snap, NS, pod_name)
    config = read_config(snap.configmap("kserve", "inferenceservice-config"))
    scoped = a.decide(admission_inputs(snap, NS, pod, config))
    full = a.decide(admission_inputs(snap, NS, pod, config, entries=a.index_entries(snap.kcns)))
    answers = (explained(snap, pod, scoped, config).to_dict(), explained(snap, pod, full, config).to_dict())
    return (scoped, full), answers


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.lists(entry(), max_size=4), min_size=1, max_size=5),
    st.sampled_from(sorted(VARIANTS)),
)
def test_one_pods_decision_over_its_scope_is_the_decision_over_every_entry(nodes, variant):
    kcns = [b.kcn(f"node-{i}", dict(entries)) for i, entries in enumerate(nodes)]
    pod = VARIANTS[variant]("pod")
    items = [*cluster([pod], drop=("kcn",)), *(kc for kc in CACHES.values()), b.namespace(OTHER), *kcns]
    (scoped, full), (mine, theirs) = _both(items, "pod")
    assert scoped == full
    assert mine == theirs


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_the_crowded_fleet_answers_the_same(variant):
    (scoped, full), (mine, theirs) = _both([*cluster([VARIANTS[variant]("pod")]), *crowded()], "pod")
    assert scoped == full and mine == theirs


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_every_gate_case_answers_the_same(case):
    kwargs = dict(case[1])
    pods = kwargs.pop("pods", None)
    (scoped, full), (mine, theirs) = _both(cluster(pods, **kwargs), "pod")
    assert scoped == full and mine == theirs
