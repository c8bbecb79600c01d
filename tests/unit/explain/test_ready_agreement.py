"""One rule, three answers: on generated clusters, why-not-ready's per-node verdicts, status's counts and the
doctor's cache-status findings say the same about which members of a KernelCache's group hold it back, as
KServe counts them (Ready members only, cordoned included; a missing entry is preparing)."""

from __future__ import annotations

from dataclasses import replace

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_kcache.checks import run_doctor
from kubectl_kcache.explain.status import fleet_status
from kubectl_kcache.explain.why_not_ready import explain
from kubectl_kcache.snapshot.model import build
from tests import builders as b

NS, KC = "team-a", "llama"
STATES = (None, "Pending", "Pulling", "Ready", "Error")

member = st.fixed_dictionaries(
    {
        "ready": st.booleans(),
        "cordoned": st.booleans(),
        "kcn": st.booleans(),
        "entry": st.sampled_from(STATES),
    }
)


def snapshot_of(members: list[dict]) -> object:
    kc = b.kernel_cache(KC, NS, "gpu", state="Preparing")
    kc["metadata"]["creationTimestamp"] = "2026-11-01T00:00:00Z"  # long discovered
    items = [
        b.config_map({"enabled": True}),
        b.group("gpu", {"pool": "gpu"}),
        b.namespace("kserve-kernelcache-jobs"),
        kc,
    ]
    for i, m in enumerate(members):
        name = f"n{i}"
        items.append(b.node(name, {"pool": "gpu"}, ready=m["ready"], unschedulable=m["cordoned"]))
        items.append(b.pod(f"agent-{name}", "kserve", name, labels={"control-plane": "kserve-kernelcachenode-agent"}))
        if m["kcn"]:
            items.append(b.kcn(name, {f"{NS}/{KC}": b.entry(NS, KC, m["entry"])} if m["entry"] else {}))
    snap = build(items, reads_assumed=True)
    return replace(snap, meta=msgspec.structs.replace(snap.meta, taken_at="2026-12-01T00:00:00Z"))


@settings(max_examples=150, deadline=None)
@given(st.lists(member, min_size=1, max_size=6))
def test_why_not_ready_status_and_doctor_agree(members):
    snap = snapshot_of(members)
    counted = {f"n{i}": m for i, m in enumerate(members) if m["ready"]}
    entry = {n: (m["entry"] if m["kcn"] else None) for n, m in counted.items()}

    why = explain(snap, NS, KC)
    held = {n.name for n in why.nodes if n.counted and n.blocked_by is not None}
    assert {n.name for n in why.nodes if n.counted} == set(counted)
    assert held == {n for n, state in entry.items() if state != "Ready"}

    status = fleet_status(snap)
    cell = next(c for g in status.groups if g.name == "gpu" for c in g.caches if c.cache == f"{NS}/{KC}")
    assert cell.node_count == len(counted)
    assert cell.counts.ready == sum(1 for s in entry.values() if s == "Ready")
    assert cell.counts.error == sum(1 for s in entry.values() if s == "Error")
    assert cell.counts.pending + cell.counts.pulling == sum(1 for s in entry.values() if s in ("Pending", "Pulling"))
    assert cell.node_count - cell.counts.total == sum(1 for s in entry.values() if s is None)
    assert (cell.aggregate is not None and cell.aggregate.state == "Ready") == why.ready

    report = run_doctor(snap, only=["cache-status"])
    nodes = {"entry-error": {f.object.name for f in report.findings if f.code == "entry-error"}}
    # entry-missing is one finding per KernelCache, its nodes in the evidence
    missing = [f.evidence[0] for f in report.findings if f.code == "entry-missing"]
    nodes["entry-missing"] = set(missing[0].split(": ", 1)[1].split(", ")) if missing else set()
    assert nodes["entry-error"] == {n for n, s in entry.items() if s == "Error"}
    # entry-missing: a KernelCacheNode without the entry (no KernelCacheNode is kcn-missing's)
    assert nodes["entry-missing"] == {n for n, m in counted.items() if m["kcn"] and m["entry"] is None}
    assert nodes["entry-missing"] == {n.name for n in why.nodes if n.blocked_by == "entry"}
