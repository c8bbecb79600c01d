"""Preconditions pinned from the snapshot the plan saw, and what our own writes do to an informer's store."""

from __future__ import annotations

import threading

from kubectl_kcache.reconcile import actions as a
from kubectl_kcache.reconcile.executor import pin_preconditions
from kubectl_kcache.reconcile.planner import plan
from kubectl_kcache.snapshot import plan as readplan
from kubectl_kcache.snapshot.informer import Informer
from kubectl_kcache.snapshot.model import build
from tests import builders as b


def with_meta(obj: dict, uid: str, rv: str) -> dict:
    obj["metadata"].update(uid=uid, resourceVersion=rv)
    return obj


def test_deletes_and_the_placement_patch_carry_what_the_plan_saw():
    snapshot = build(
        [
            b.config_map({"enabled": True}),
            b.group("gpu", {"pool": "gpu"}),
            with_meta(b.agent_daemonset(), "ds-uid", "70"),
            b.node("n1", {"pool": "gpu"}),
            with_meta(b.kcn("gone"), "kcn-uid", "42"),
        ]
    )
    pinned = {(x.verb, x.kind, x.name): x for x in pin_preconditions(plan(snapshot).writes, snapshot)}
    delete = pinned[(a.DELETE, "KernelCacheNode", "gone")]
    assert (delete.uid, delete.resource_version) == ("kcn-uid", "42")
    assert pinned[(a.PATCH, "DaemonSet", "kserve-kernelcachenode-agent")].resource_version == "70"
    create = pinned[(a.CREATE, "KernelCacheNode", "n1")]
    assert (create.uid, create.resource_version) == ("", "")
    # what the printed plan shows does not change
    assert a.plan_document(pinned.values()) == a.plan_document(plan(snapshot).writes)


def test_preconditions_already_set_are_kept():
    snapshot = build([with_meta(b.kcn("gone"), "now-uid", "99")])
    act = a.Action(a.DELETE, "KernelCacheNode", "gone", "node is gone", uid="seen-uid", resource_version="42")
    assert pin_preconditions([act], snapshot)[0].resource_version == "42"
    assert pin_preconditions([act], snapshot)[0].uid == "seen-uid"


def informer() -> Informer:
    return Informer(None, readplan.KERNEL_CACHE_NODES, stop=threading.Event())  # type: ignore[arg-type]


def kcn(name: str, uid: str, rv: str) -> dict:
    return with_meta(b.kcn(name), uid, rv)


def test_a_write_result_enters_the_store_unless_the_watch_brought_something_newer():
    inf = informer()
    inf.written(kcn("a", "u1", "10"))
    assert [x.meta.resource_version for x in inf.items()] == ["10"]
    inf.written(kcn("a", "u1", "12"))
    inf.written(kcn("a", "u1", "11"))  # an older answer arriving late
    assert [x.meta.resource_version for x in inf.items()] == ["12"]


def test_a_delete_removes_only_the_object_it_deleted():
    inf = informer()
    inf.written(kcn("a", "u2", "20"))  # recreated under the same name since
    inf.removed("", "a", "u1")
    assert len(inf.items()) == 1
    inf.removed("", "a", "u2")
    assert inf.items() == []
    inf.removed("", "a", "")  # found gone (404): nothing to remove, no error
