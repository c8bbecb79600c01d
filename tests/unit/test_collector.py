"""The collector against a fake lister (its list_all is the whole surface it uses): lists recorded in the
plan's order whatever order they arrive in, the lists that wait for the configuration started as soon as it
arrives, forbidden and absent lists recorded as such with nothing kept, the snapshot of only the lists done
so far, and an object the decoder rejects named by its list and item. The API interaction itself is tested
against the real API server in tests/e2e."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from kubectl_kcache.errors import Forbidden, InputError, NotFound
from kubectl_kcache.kube.listing import ListResult
from kubectl_kcache.snapshot import model as snap
from kubectl_kcache.snapshot import plan
from kubectl_kcache.snapshot.live import Collector
from tests import builders as b


class FakeLister:
    """Answers each resource's list with its objects after a delay, or raises what it is told to; records
    when each list was asked for and answered."""

    def __init__(
        self,
        objects: dict[str, list[dict[str, Any]]],
        delays: dict[str, float] | None = None,
        refuse: dict[str, Exception] | None = None,
    ):
        self.objects, self.delays, self.refuse = objects, delays or {}, refuse or {}
        self.lock = threading.Lock()
        self.events: list[tuple[str, str]] = []  # ("asked" | "answered", resource)

    def _event(self, what: str, resource: str) -> None:
        with self.lock:
            self.events.append((what, resource))

    def list_all(
        self,
        res: Any,
        namespace: str | None = None,
        *,
        decode: Any = None,
        label_selector: str = "",
        field_selector: str = "",
        **_: Any,
    ) -> ListResult:
        self._event("asked", res.plural)
        time.sleep(self.delays.get(res.plural, 0.0))
        try:
            if res.plural in self.refuse:
                raise self.refuse[res.plural]
            body = {"kind": "List", "metadata": {"resourceVersion": "42"}, "items": self.objects.get(res.plural, [])}
            page = decode(json.dumps(body).encode())
            return ListResult(page.items, page.resource_version)
        finally:
            self._event("answered", res.plural)


def meta() -> snap.SnapshotMeta:
    return snap.SnapshotMeta(cluster="test", taken_at="2026-12-01T00:00:00Z", source="live")


OBJECTS = {
    "nodes": [b.node("gpu-1", {"pool": "gpu"}), b.node("gpu-2", {"pool": "gpu"})],
    "kernelcachenodegroups": [b.group("gpu", {"pool": "gpu"})],
    "configmaps": [b.config_map({"enabled": True})],
    "kernelcachenodes": [b.kcn("gpu-1")],
}
FIRST = [plan.NODES, plan.NODE_GROUPS, plan.CONFIGMAP]


def test_lists_are_recorded_in_the_plans_order_and_the_waiting_ones_start_when_the_config_arrives():
    lister = FakeLister(OBJECTS, delays={"nodes": 1.0})
    col = Collector(lister)  # type: ignore[arg-type]
    seen: list[frozenset[Any]] = []
    col.read_pipelined(FIRST, plan.CONFIGMAP, lambda cms: [plan.KERNEL_CACHE_NODES] if cms else [], on_list=seen.append)
    assert [r.resource for r in col.reads] == ["nodes", "kernelcachenodegroups", "configmaps", "kernelcachenodes"]
    assert all(r.status == "ok" for r in col.reads)
    # the KernelCacheNodes were asked for before the slow node list was answered: not after every first list
    assert lister.events.index(("asked", "kernelcachenodes")) < lister.events.index(("answered", "nodes"))
    # told after each arrival (lists answered together are told at once), each time of more lists
    assert all(a < b for a, b in zip(seen, seen[1:], strict=False)) and seen[-1] == frozenset(
        [*FIRST, plan.KERNEL_CACHE_NODES]
    )
    assert plan.NODES not in seen[-2]  # the slow list came last
    snapshot = col.snapshot(meta())
    assert sorted(n.metadata.name for n in snapshot.nodes) == ["gpu-1", "gpu-2"]
    assert [k.metadata.name for k in snapshot.kcns] == ["gpu-1"]


def test_the_snapshot_of_the_lists_done_so_far_holds_only_those():
    lister = FakeLister(OBJECTS, delays={"nodes": 1.0})
    col = Collector(lister)  # type: ignore[arg-type]
    early: list[snap.ClusterSnapshot] = []

    def on_list(done: frozenset[Any]) -> None:
        if plan.NODES not in done and plan.NODE_GROUPS in done and not early:
            early.append(col.snapshot_of(done, meta()))

    col.read_pipelined(FIRST, plan.CONFIGMAP, lambda cms: [], on_list=on_list)
    assert early, "the node list was the slowest: a snapshot without it was taken"
    assert early[0].nodes == ()
    assert [g.metadata.name for g in early[0].node_groups] == ["gpu"]
    assert "nodes" not in {r.resource for r in early[0].reads}


@pytest.mark.parametrize(
    ("refusal", "status"),
    [(Forbidden("nodes is forbidden", 403), "forbidden"), (NotFound("the server could not find it", 404), "absent")],
)
def test_a_refused_list_is_recorded_with_its_status_and_message_and_nothing_kept(refusal, status):
    lister = FakeLister(OBJECTS, refuse={"nodes": refusal})
    col = Collector(lister)  # type: ignore[arg-type]
    col.read_pipelined(FIRST, plan.CONFIGMAP, lambda cms: [])
    nodes = next(r for r in col.reads if r.resource == "nodes")
    assert (nodes.status, nodes.count, nodes.message) == (status, 0, str(refusal))
    assert {r.resource: r.status for r in col.reads if r.resource != "nodes"} == {
        "kernelcachenodegroups": "ok",
        "configmaps": "ok",
    }
    assert list(col.snapshot(meta()).nodes) == []
    # nothing to watch from: a kept-current snapshot lists a refused list itself once it is allowed
    made = {m.spec.resource.plural: m.resource_version for m in col.lists}
    assert made.get("nodes", "") == ""
    assert ("nodes" in made) == (status == "forbidden")


def test_an_object_the_decoder_rejects_is_named_by_its_list_and_item():
    bad = b.node("gpu-3", {"pool": "gpu"})
    bad["spec"] = {"taints": "not a list"}
    lister = FakeLister({**OBJECTS, "nodes": [OBJECTS["nodes"][0], bad]})
    col = Collector(lister)  # type: ignore[arg-type]
    with pytest.raises(InputError) as err:
        col.read_many(FIRST)
    assert "nodes" in str(err.value) and "gpu-3" in str(err.value) and "taints" in str(err.value)
