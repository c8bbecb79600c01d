"""Another controller, judged from what the informers hand the handlers (no request): KServe's controller
by its Deployment under any name, its Lease, its writes; another kubectl-kcache controller by its Lease."""

from __future__ import annotations

import pytest

from kubectl_kcache.objects import Deployment, Lease
from kubectl_kcache.reconcile.peers import ControllerActive, Peers
from tests import builders as b


class Clock:
    def __init__(self) -> None:
        self.now = 500.0

    def __call__(self) -> float:
        return self.now


def lease(ns: str, name: str, holder: str, renewed: str = "t1", ours: bool = False, created: str = "") -> Lease:
    md: dict = {"name": name, "namespace": ns}
    if ours:
        md["labels"] = {"app.kubernetes.io/managed-by": "kubectl-kcache"}
    if created:
        md["creationTimestamp"] = created
    spec = {"holderIdentity": holder, "leaseDurationSeconds": 15, "renewTime": renewed}
    return Lease.from_dict({"metadata": md, "spec": spec})


def deployment(ready: int, name: str = "localmodel", ns: str = "team-b") -> Deployment:
    dep = b.controller_deployment(ready=ready)
    dep["metadata"] = {
        "name": name,
        "namespace": ns,
        "labels": {"control-plane": "kserve-localmodel-controller-manager"},
    }
    return Deployment.from_dict(dep)


def test_kserve_controller_becoming_ready_is_seen_from_its_watch_event_alone():
    peers = Peers(None)
    peers.on_deployment("LISTED", None, deployment(0))
    peers.check()
    peers.on_deployment("MODIFIED", deployment(0), deployment(1))
    with pytest.raises(ControllerActive, match="Deployment team-b/localmodel has ready replicas; labelled"):
        peers.check()
    peers.on_deployment("DELETED", deployment(1), None)
    peers.check()
    Peers(None, force=True).on_deployment("ADDED", None, deployment(1))


def test_a_deployment_that_is_not_kserves_is_not_a_peer():
    other = b.controller_deployment(ready=1)
    other["metadata"] = {"name": "web", "namespace": "team-a"}
    other["spec"]["template"]["spec"]["containers"] = [{"name": "web", "image": "nginx:1.27"}]
    peers = Peers(None)
    peers.on_deployment("ADDED", None, Deployment.from_dict(other))
    peers.check()


def test_kserves_lease_counts_while_its_record_changes_within_its_duration():
    clock = Clock()
    peers = Peers(None, clock=clock)
    peers.on_lease("ADDED", None, lease("team-b", "kserve-local-model-manager-leader-lock", "lm_1", "t1"))
    with pytest.raises(ControllerActive, match="it holds Lease team-b/kserve-local-model-manager-leader-lock: lm_1"):
        peers.check()
    clock.now += 14
    peers.on_lease("MODIFIED", None, lease("team-b", "kserve-local-model-manager-leader-lock", "lm_1", "t2"))
    clock.now += 14
    with pytest.raises(ControllerActive):
        peers.check()
    clock.now += 2  # not renewed for its duration: gone
    peers.check()
    force = Peers(None, force=True, clock=clock)
    force.on_lease("ADDED", None, lease("team-b", "kserve-local-model-manager-leader-lock", "lm_1", "t3"))
    force.check()


def test_of_two_plugin_controllers_the_older_lease_writes():
    clock = Clock()
    own = ("kserve", "kubectl-kcache-reconcile")
    older = lease("kserve", "another-lease", "b_2", ours=True, created="2026-12-01T09:00:00Z")
    newer = lease("kserve", "kubectl-kcache-reconcile", "a_1", ours=True, created="2026-12-01T10:00:00Z")
    second = Peers(own, clock=clock)
    for x in (older, newer):
        second.on_lease("LISTED", None, x)
    with pytest.raises(ControllerActive, match="another kubectl-kcache controller holds Lease kserve/another-lease"):
        second.check()
    first = Peers(("kserve", "another-lease"), clock=clock)
    for x in (older, newer):
        first.on_lease("LISTED", None, x)
    first.check()
    second.on_lease("MODIFIED", older, lease("kserve", "another-lease", "", ours=True, created="2026-12-01T09:00:00Z"))
    second.check()  # released


def test_a_foreign_write_stands_back_for_five_minutes():
    clock = Clock()
    peers = Peers(None, clock=clock)
    peers.foreign._last = ("manager", "DaemonSet kserve-kernelcachenode-agent", clock.now)
    with pytest.raises(ControllerActive, match="field manager 'manager' wrote DaemonSet"):
        peers.check()
    clock.now += 301
    peers.check()
