"""The monitor's evaluation after any sequence of changes is a fresh evaluation's (issue 36 point 3): over bench.scale's
fleet kept in a LiveSnapshot's stores, random watch events (nodes relabelled, tainted, NotReady, cordoned, given
another kubelet, deleted, created; KernelCacheNode entries changing state, KernelCacheNodes deleted; groups given
another selector or toleration; agent pods gone or Pending; the agent DaemonSet's tolerations changed) are applied
one by one, and after each the evaluation of the kept-current snapshot (every index, finding and metric text the
last one offers reused where it holds) exports exactly what an evaluation of the same objects from scratch does:
the doctor's report, every metric and the why-not-ready rows. Real code throughout, no API mocked."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench import fixtures as fx
from bench.scale import items, write_dump
from kubectl_kcache.kernelcache.aggregate import entry_index_of
from kubectl_kcache.kernelcache.membership import member_objects, membership_of
from kubectl_kcache.monitor.evaluate import Evaluation, evaluate
from kubectl_kcache.sharing import changed, lasting
from kubectl_kcache.snapshot.files.from_files import load_files
from kubectl_kcache.snapshot.follow import LiveSnapshot
from kubectl_kcache.snapshot.model import parse_item
from tests.unit.monitor.test_evaluation_shape import _live

NODES, GROUPS, CACHES = 40, 4, 12
POOL = "kcache.bench/pool"
NOT_PRESENT = "OCI artifact is not present in Node.status.images"


class _Event(msgspec.Struct):
    type: str
    object: Any
    resource_version: str = ""


class Fleet:
    """The fleet's objects as the API gives them, changed as watch events change them, and the LiveSnapshot
    whose stores hold them."""

    def __init__(self, tmp: Path):
        path = tmp / "fleet.json"
        if not path.exists():
            write_dump(path, NODES, "small", GROUPS, CACHES)
        self.live: LiveSnapshot = _live(load_files([str(path)]))
        self.docs: dict[tuple[str, str], dict[str, Any]] = {}
        for doc in items(NODES, "small", GROUPS, CACHES):
            self.docs.setdefault((doc["kind"], doc["metadata"]["name"]), copy.deepcopy(doc))
        self.created = 0
        for i in range(3):  # taints the groups and the agent do not tolerate yet (changes tolerate them)
            self.change("taint", i, i)

    def names(self, kind: str) -> list[str]:
        return sorted(name for k, name in self.docs if k == kind)

    def send(self, kind: str, name: str, event: str = "MODIFIED") -> None:
        doc = self.docs[(kind, name)] if event != "DELETED" else self.docs.pop((kind, name))
        parsed = parse_item(doc)
        assert parsed is not None
        field, obj = parsed
        inf = next(x for x in self.live.informers if x.kind.field == field)
        inf._apply(_Event(event, obj))

    def change(self, what: str, i: int, k: int) -> None:
        """One watch event: `what` to the i-th object of its kind (`k` picks a variant)."""
        nodes, kcns, groups = self.names("Node"), self.names("KernelCacheNode"), self.names("KernelCacheNodeGroup")
        pods = self.names("Pod")
        if what == "create-node":
            self.created += 1
            doc = fx.small_node(NODES + self.created, GROUPS)
            self.docs[("Node", doc["metadata"]["name"])] = doc
            self.send("Node", doc["metadata"]["name"], "ADDED")
            return
        if what.endswith("node") or what in ("relabel", "taint", "not-ready", "cordon", "kubelet", "suppress"):
            if not nodes:
                return
            name = nodes[i % len(nodes)]
            doc = self.docs[("Node", name)]
            if what == "delete-node":
                self.send("Node", name, "DELETED")
                return
            if what == "relabel":  # into another group, or out of every group
                doc["metadata"]["labels"][POOL] = f"pool-{k % (GROUPS + 1):02d}"
            elif what == "taint":
                effect = ("NoSchedule", "PreferNoSchedule", "NoExecute")[k % 3]
                doc["spec"].setdefault("taints", []).append({"key": f"test/t{k % 2}", "effect": effect})
            elif what == "not-ready":
                ready = next(c for c in doc["status"]["conditions"] if c["type"] == "Ready")
                ready["status"] = "True" if ready["status"] != "True" else ("False", "Unknown")[k % 2]
            elif what == "suppress":  # the doctor told to keep quiet about this node (or no longer)
                annotations = doc["metadata"].setdefault("annotations", {})
                if annotations.pop("kcache.kserve.io/suppress", None) is None:
                    annotations["kcache.kserve.io/suppress"] = ("group-taints", "nodes", "*")[k % 3]
            elif what == "cordon":
                doc["spec"]["unschedulable"] = not doc["spec"].get("unschedulable", False)
            else:
                version = ("v1.30.2", "v1.33.1", "v1.36.3")[k % 3]
                doc["status"].setdefault("nodeInfo", {})["kubeletVersion"] = version
            self.send("Node", name)
        elif what in ("kcn-state", "delete-kcn"):
            if not kcns:
                return
            name = kcns[i % len(kcns)]
            if what == "delete-kcn":
                self.send("KernelCacheNode", name, "DELETED")
                return
            entries = self.docs[("KernelCacheNode", name)]["status"]["cacheStatus"]
            if entries:
                entry = entries[sorted(entries)[k % len(entries)]]
                entry["state"] = ("Ready", "Pending", "Error", "Pulling")[k % 4]
                entry["message"] = {"Ready": "", "Pending": NOT_PRESENT}.get(entry["state"], "401 Unauthorized")
            self.send("KernelCacheNode", name)
        elif what in ("group-selector", "group-tolerate"):
            name = groups[i % len(groups)]
            spec = self.docs[("KernelCacheNodeGroup", name)]["spec"]
            if what == "group-selector":
                spec["nodeSelector"] = {POOL: f"pool-{k % (GROUPS + 1):02d}"}
            else:
                spec["tolerations"] = [*spec.get("tolerations", []), {"key": f"test/t{k % 2}", "operator": "Exists"}]
            self.send("KernelCacheNodeGroup", name)
        elif what in ("agent-pod-gone", "agent-pod-pending"):
            agents = [p for p in pods if p.startswith("kserve-kernelcachenode-agent")]
            if not agents:
                return
            name = agents[i % len(agents)]
            if what == "agent-pod-gone":
                self.send("Pod", name, "DELETED")
                return
            self.docs[("Pod", name)]["status"]["phase"] = "Pending"
            self.send("Pod", name)
        elif what == "agent-tolerations":
            ds = self.docs[("DaemonSet", "kserve-kernelcachenode-agent")]
            tolerations = ds["spec"]["template"]["spec"]["tolerations"]
            toleration = {"key": f"test/t{k % 2}", "operator": "Exists"}
            if toleration in tolerations:
                tolerations.remove(toleration)
            else:
                tolerations.append(toleration)
            self.send("DaemonSet", "kserve-kernelcachenode-agent")


CHANGES = (
    "relabel",
    "taint",
    "not-ready",
    "cordon",
    "kubelet",
    "suppress",
    "delete-node",
    "create-node",
    "kcn-state",
    "delete-kcn",
    "group-selector",
    "group-tolerate",
    "agent-pod-gone",
    "agent-pod-pending",
    "agent-tolerations",
)


def exported(ev: Evaluation) -> tuple[Any, ...]:
    """What an evaluation exports, but for its time and duration (and the report's source, which has the time)."""
    report = {k: v for k, v in ev.report.to_dict().items() if k != "source"}
    return report, ev.metrics_text, ev.readiness, ev.status, ev.fleet


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    changes=st.lists(
        st.tuples(st.sampled_from(CHANGES), st.integers(0, NODES * 2), st.integers(0, 11), st.booleans()),
        min_size=1,
        max_size=8,
    )
)
def test_after_any_changes_the_monitor_exports_what_a_fresh_evaluation_does(
    tmp_path_factory: Any, changes: list[tuple[str, int, int, bool]]
) -> None:
    # as in the monitor: the parts of every object decoded share one table for the process's life (an event's
    # object shares with the first lists' ones: reuse told by identity meets equal parts), pruned as it grows
    with lasting(floor=64) as table:
        _agree(Fleet(tmp_path_factory.getbasetemp()), changes)
    assert table.prunings


def _agree(fleet: Fleet, changes: list[tuple[str, int, int, bool]]) -> None:
    evaluate(fleet.live.snapshot()).metrics_text  # noqa: B018 - the first evaluation's text, offered to the next
    for what, i, k, skipped in [*changes, ("none", 0, 0, False)]:
        fleet.change(what, i, k)
        kept = fleet.live.snapshot()
        if skipped:  # a snapshot made and not evaluated (its evaluation failed): the next one is
            continue
        fresh = dataclasses.replace(kept)  # the same objects, nothing carried over
        assert exported(evaluate(kept)) == exported(evaluate(fresh)), (what, i, k)
        # (the indexes updated from the last one's, or made again)
        assert membership_of(kept) == membership_of(fresh)
        assert entry_index_of(kept).by_cache == entry_index_of(fresh).by_cache
        assert all(member_objects(kept, g.name) == member_objects(fresh, g.name) for g in kept.node_groups)


def test_the_changes_are_seen() -> None:
    """(The changes above change what is exported: a test of agreement between two evaluations that both
    missed every change would pass.)"""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        fleet = Fleet(Path(tmp))
        before = exported(evaluate(fleet.live.snapshot()))
        for what in ("taint", "not-ready", "delete-kcn", "agent-pod-gone", "kubelet"):
            fleet.change(what, 3, 0)
            after = exported(evaluate(fleet.live.snapshot()))
            assert after[0] != before[0], what  # each one a finding more or less
            before = after


@given(
    before=st.lists(st.integers(0, 30), unique=True, max_size=20),
    edits=st.lists(st.tuples(st.sampled_from(["replace", "delete", "add"]), st.integers(0, 40)), max_size=6),
)
def test_changed_tells_what_went_and_came_by_identity(before: list[int], edits: list[tuple[str, int]]) -> None:
    was = [[n] for n in before]  # distinct objects
    now = list(was)
    for edit, i in edits:
        if edit == "replace" and now:
            now[i % len(now)] = list(now[i % len(now)])  # an equal object, not the same one
        elif edit == "delete" and now:
            del now[i % len(now)]
        elif edit == "add":
            now.insert(i % (len(now) + 1), [100 + i])
    gone, came = changed(was, now)
    assert {id(x) for x in gone} == {id(x) for x in was} - {id(x) for x in now}
    assert {id(x) for x in came} == {id(x) for x in now} - {id(x) for x in was}
