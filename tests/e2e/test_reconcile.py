"""`kubectl kcache reconcile` against the real API server: membership, placement, captured caches,
events, restarts, 410 Gone, leader election, and the shipped RBAC."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kubectl_kcache.kernelcache.names import generated_kernel_cache_name
from tests import builders as b

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
GPU_TOL = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def start(cluster, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "kubectl_kcache", "reconcile", "--resync-period", "5", *args],
        env=cluster.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def stop(proc: subprocess.Popen) -> tuple[int, str]:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    return proc.returncode, err


def install(cluster, groups=(), nodes=(), extra=()) -> None:
    cluster.apply([b.config_map({"enabled": True}), b.agent_daemonset(), *groups, *nodes, *extra])


def kcn_names(cluster) -> list[str]:
    return sorted(x["metadata"]["name"] for x in cluster.get("kernelcachenodes")["items"])


def writes_by(cluster, mark: int) -> list[dict]:
    """Writes made by kubectl-kcache (the test bed's other components use the same admin user)."""
    return [
        e
        for e in cluster.audit_events(mark)
        if e.get("userAgent", "").startswith("kubectl-kcache") and e["verb"] in ("create", "update", "patch", "delete")
    ]


def test_dry_run_plans_and_writes_nothing(cluster):
    install(cluster, [b.group("gpu", {"pool": "gpu"})], [b.node("gpu-1", {"pool": "gpu"})])
    mark = cluster.audit_mark()
    proc = cluster.kcache("reconcile", "--dry-run", "-o", "json")
    assert proc.returncode == 1, proc.stderr  # writes are planned
    plan = json.loads(proc.stdout)
    assert plan["kind"] == "ReconcilePlan"
    assert {(a["verb"], a["kind"], a["name"]) for a in plan["actions"]} == {
        ("patch", "DaemonSet", "kserve-kernelcachenode-agent"),
        ("create", "KernelCacheNode", "gpu-1"),
    }
    assert writes_by(cluster, mark) == []


def test_once_converges_and_a_second_pass_writes_nothing(cluster):
    install(
        cluster,
        [b.group("h100", {"gpu": "h100"}, [GPU_TOL]), b.group("l40s", {"gpu": "l40s"})],
        [b.node("a", {"gpu": "h100"}), b.node("b", {"gpu": "l40s"}), b.node("cpu", {})],
        [b.kcn("stale")],
    )
    proc = cluster.kcache("reconcile", "--once")
    assert proc.returncode == 0, proc.stderr
    assert kcn_names(cluster) == ["a", "b"]
    spec = cluster.get("daemonset", "kserve-kernelcachenode-agent", "kserve")["spec"]["template"]["spec"]
    assert "nodeSelector" not in spec
    assert spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] == [
        b.term({"gpu": "h100"}),
        b.term({"gpu": "l40s"}),
    ]
    assert spec["tolerations"] == [GPU_TOL]
    mark = cluster.audit_mark()
    proc = cluster.kcache("reconcile", "--once", "-o", "json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["actions"] == []
    assert writes_by(cluster, mark) == []


def test_daemonset_already_in_kserve_shape_is_never_patched(cluster):
    groups = [b.group("h100", {"gpu": "h100"}, [GPU_TOL])]
    ds = b.agent_daemonset(tolerations=[GPU_TOL], terms=[b.term({"gpu": "h100"})])
    cluster.apply([b.config_map({"enabled": True}), ds, *groups, b.node("a", {"gpu": "h100"})])
    mark = cluster.audit_mark()
    assert cluster.kcache("reconcile", "--once").returncode == 0
    assert not [e for e in writes_by(cluster, mark) if e["objectRef"]["resource"] == "daemonsets"]


def test_disabled_feature_plans_nothing(cluster):
    cluster.apply(
        [b.config_map({"enabled": False}), b.agent_daemonset(), b.group("g", {"a": "b"}), b.node("n", {"a": "b"})]
    )
    proc = cluster.kcache("reconcile", "--dry-run", "-o", "json")
    assert json.loads(proc.stdout)["actions"] == [] and "disabled" in proc.stderr


def _complete_capture(cluster, name: str, node: str, requested: str = "", seed: str = "cache") -> dict:
    cluster.apply(b.capture(name, "team-a"))
    gen = cluster.get("kernelcachecapture", name, "team-a")["metadata"]["generation"]
    status = b.capture_status(seed=seed, node_name=node, requested=requested, generation=gen)
    cluster.set_status("kernelcachecapture", name, status, "team-a")
    return status


def test_completed_capture_becomes_a_kernel_cache(cluster):
    install(cluster, [b.group("gpu", {"pool": "gpu"})], [b.node("gpu-1", {"pool": "gpu"})])
    _complete_capture(cluster, "model-kcc-abc", "gpu-1")
    assert cluster.kcache("reconcile", "--once").returncode == 0
    name = generated_kernel_cache_name("model-kcc-abc", b.image("cache"))
    kc = cluster.get("kernelcache", name, "team-a")
    assert kc["spec"]["nodeGroupRef"] == {"name": "gpu"}
    assert kc["spec"]["mountType"] == "oci"
    assert kc["metadata"]["annotations"]["internal.serving.kserve.io/kernelcache-nodegroup-selection-source"] == "auto"
    capture = cluster.get("kernelcachecapture", "model-kcc-abc", "team-a")
    assert kc["spec"]["artifact"] == capture["status"]["artifact"]
    assert capture["status"]["kernelCacheRef"] == {"namespace": "team-a", "name": name}
    assert len(cluster.get("kernelcaches", namespace="team-a")["items"]) == 1


def test_ambiguous_capture_gets_the_warning_event_and_nothing_else(cluster):
    install(
        cluster,
        [b.group("gpu-a", {"pool": "gpu"}), b.group("gpu-b", {"zone": "east"})],
        [b.node("gpu-node", {"pool": "gpu", "zone": "east"})],
        [b.kcn("gpu-node")],
    )
    cluster.apply(b.agent_daemonset(terms=[b.term({"pool": "gpu"}), b.term({"zone": "east"})]))
    _complete_capture(cluster, "model-kcc-1", "gpu-node")
    mark = cluster.audit_mark()
    assert cluster.kcache("reconcile", "--once").returncode == 0
    writes = writes_by(cluster, mark)
    assert [(e["verb"], e["objectRef"]["resource"]) for e in writes] == [("create", "events")]
    events = cluster.get("events.events.k8s.io", namespace="team-a")["items"]
    assert len(events) == 1
    ev = events[0]
    assert ev["type"] == "Warning" and ev["reason"] == "AmbiguousNodeGroup" and ev["action"] == "SelectNodeGroup"
    assert ev["note"] == (
        "producer node gpu-node matches multiple node groups: gpu-a, gpu-b; set serving.kserve.io/kernelcache-nodegroup"
    )
    assert ev["reportingController"] == "kubectl-kcache"
    assert ev["regarding"]["name"] == "model-kcc-1" and ev["regarding"]["kind"] == "KernelCacheCapture"
    assert cluster.get("kernelcaches", namespace="team-a")["items"] == []
    # another process (a new leader) evaluating the same state does not repeat the event
    assert cluster.kcache("reconcile", "--once").returncode == 0
    events = cluster.get("events.events.k8s.io", namespace="team-a")["items"]
    assert len(events) == 1 and "series" not in events[0]
    # an evaluation on changed inputs with the same outcome folds into the same Event's series
    cluster.apply(b.group("unrelated", {"zone": "west"}))
    assert cluster.kcache("reconcile", "--once").returncode == 0
    events = cluster.get("events.events.k8s.io", namespace="team-a")["items"]
    assert len(events) == 1 and events[0]["series"]["count"] == 2


def test_refuses_to_write_while_kserve_controller_is_active(cluster):
    install(cluster, [b.group("gpu", {"pool": "gpu"})], [b.node("gpu-1", {"pool": "gpu"})])
    # a real controller Deployment whose pod runs (on a KWOK node) and becomes Ready
    cluster.apply([b.node("control", ready=None, simulated=True), b.controller_deployment(ready=None)])
    cluster.wait_for(
        "the controller to be ready",
        lambda: (
            (
                cluster.get("deployment", "kserve-localmodel-controller-manager", "kserve")["status"].get(
                    "readyReplicas"
                )
                or 0
            )
            == 1
        ),
    )
    mark = cluster.audit_mark()
    proc = cluster.kcache("reconcile", "--once")
    assert proc.returncode == 3 and "KServe's controller is active" in proc.stderr and "--force" in proc.stderr
    assert writes_by(cluster, mark) == []
    assert cluster.kcache("reconcile", "--once", "--force").returncode == 0
    assert kcn_names(cluster) == ["gpu-1"]


def test_loop_follows_label_changes_within_seconds(cluster):
    install(cluster, [b.group("gpu", {"pool": "gpu"})], [b.node("n1", {"pool": "gpu"}), b.node("n2", {})])
    proc = start(cluster)
    try:
        cluster.wait_for("n1's KernelCacheNode", lambda: kcn_names(cluster) == ["n1"], timeout=20)
        cluster.kubectl("label", "node", "n2", "pool=gpu")
        cluster.wait_for("n2's KernelCacheNode", lambda: kcn_names(cluster) == ["n1", "n2"], timeout=10)
        cluster.kubectl("label", "node", "n1", "pool-")
        cluster.wait_for("n1's removal", lambda: kcn_names(cluster) == ["n2"], timeout=10)
        cluster.apply(b.group("other", {"zone": "x"}))
        cluster.wait_for(
            "the re-patched placement",
            lambda: (
                len(
                    cluster.get("daemonset", "kserve-kernelcachenode-agent", "kserve")["spec"]["template"]["spec"][
                        "affinity"
                    ]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
                )
                == 2
            ),
            timeout=10,
        )
        cluster.kubectl("delete", "kernelcachenodegroup", "other")
        cluster.wait_for(
            "the placement without the group",
            lambda: (
                len(
                    cluster.get("daemonset", "kserve-kernelcachenode-agent", "kserve")["spec"]["template"]["spec"][
                        "affinity"
                    ]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
                )
                == 1
            ),
            timeout=10,
        )
    finally:
        code, err = stop(proc)
    assert code == 0, err


def test_loop_survives_restarts_and_410(cluster):
    install(cluster, [b.group("gpu", {"pool": "gpu"})], [b.node("n1", {"pool": "gpu"})])
    proc = start(cluster)
    try:
        cluster.wait_for("n1", lambda: kcn_names(cluster) == ["n1"], timeout=20)
        cluster.testbed_cmd("restart", "apiserver")
        cluster.apply(b.node("n2", {"pool": "gpu"}))
        cluster.wait_for("n2 after an API server restart", lambda: kcn_names(cluster) == ["n1", "n2"], timeout=40)
        cluster.testbed_cmd("restart", "etcd")
        cluster.apply(b.node("n3", {"pool": "gpu"}))
        cluster.wait_for("n3 after an etcd restart", lambda: kcn_names(cluster) == ["n1", "n2", "n3"], timeout=40)
        # make the informers' resourceVersions too old, then force their watches to reconnect
        for i in range(3):
            cluster.apply(b.group(f"noise-{i}", {"noise": str(i)}))
        cluster.testbed_cmd("compact")
        cluster.testbed_cmd("restart", "apiserver")
        cluster.apply(b.node("n4", {"pool": "gpu"}))
        cluster.wait_for("n4 after a forced 410", lambda: kcn_names(cluster) == ["n1", "n2", "n3", "n4"], timeout=40)
        time.sleep(1)
    finally:
        code, err = stop(proc)
    assert code == 0, err
    assert kcn_names(cluster) == ["n1", "n2", "n3", "n4"]  # no duplicates, nothing lost


def test_leader_election_takes_over_from_a_paused_leader(cluster):
    install(cluster, [b.group("gpu", {"pool": "gpu"})], [b.node("n1", {"pool": "gpu"})])
    opts = ("--leader-elect", "--lease-duration", "4", "--renew-deadline", "3")
    first = start(cluster, *opts)
    cluster.wait_for("the first leader's work", lambda: kcn_names(cluster) == ["n1"], timeout=20)
    lease = cluster.get("lease", "kubectl-kcache-reconcile", "kserve")
    first_holder = lease["spec"]["holderIdentity"]
    assert str(first.pid) in first_holder
    assert lease["spec"]["renewTime"].endswith("Z") and len(lease["spec"]["renewTime"].split(".")[1]) == 7
    second = start(cluster, *opts)
    try:
        time.sleep(2)
        first.send_signal(signal.SIGSTOP)
        cluster.wait_for(
            "the second instance to take the lease",
            lambda: (
                str(second.pid)
                in (cluster.get("lease", "kubectl-kcache-reconcile", "kserve")["spec"].get("holderIdentity") or "")
            ),
            timeout=30,
        )
        cluster.apply(b.node("n2", {"pool": "gpu"}))
        cluster.wait_for("the new leader's work", lambda: kcn_names(cluster) == ["n1", "n2"], timeout=20)
        mark = cluster.audit_mark()
        cluster.apply(b.node("n3", {"pool": "gpu"}))
        first.send_signal(signal.SIGCONT)
        cluster.wait_for("n3", lambda: kcn_names(cluster) == ["n1", "n2", "n3"], timeout=20)
        time.sleep(3)
        # every write after the old leader resumed came from the new leader's process: the old leader made none
        creates = [e for e in writes_by(cluster, mark) if e["objectRef"]["resource"] == "kernelcachenodes"]
        assert len(creates) == 1  # a create by the old leader would show as a second (409) request
        # the old leader notices it lost the lease and stops
        _, first_err = first.communicate(timeout=30)
        assert first.returncode == 3 and ("lost leadership" in first_err or "not writing" in first_err)
    finally:
        first.send_signal(signal.SIGCONT)
        stop(first)
        code, err = stop(second)
    assert code == 0, err
    lease = cluster.get("lease", "kubectl-kcache-reconcile", "kserve")
    assert not lease["spec"].get("holderIdentity")  # released on shutdown


def test_shipped_rbac_is_sufficient_and_no_more(cluster):
    cluster.kubectl("apply", "-f", str(ROOT / "deploy" / "rbac.yaml"))
    sa = "system:serviceaccount:kserve:kubectl-kcache-reconcile"
    imp = ("--as", sa, "--as-group", "system:serviceaccounts", "--as-group", "system:serviceaccounts:kserve")
    install(
        cluster,
        [b.group("gpu-a", {"pool": "gpu"}), b.group("gpu-b", {"zone": "east"})],
        [b.node("n1", {"pool": "gpu"}), b.node("n2", {"pool": "gpu", "zone": "east"})],
        [b.kcn("gone")],
    )
    _complete_capture(cluster, "model-kcc-ok", "n1")
    _complete_capture(cluster, "model-kcc-amb", "n2", seed="other")
    mark = cluster.audit_mark()
    proc = cluster.kcache("reconcile", "--once", "--leader-elect", *imp)
    assert proc.returncode == 0, proc.stderr
    denied = [e for e in cluster.audit_events(mark) if e["responseStatus"]["code"] == 403]
    assert denied == []
    assert kcn_names(cluster) == ["n1", "n2"]
    assert cluster.get("kernelcachecapture", "model-kcc-ok", "team-a")["status"].get("kernelCacheRef")

    def can(verb: str, resource: str, ns: str | None = None) -> bool:
        args = ["auth", "can-i", verb, resource, "--as", sa] + (["-n", ns] if ns else [])
        return cluster.kubectl(*args, check=False).stdout.strip() == "yes"

    assert can("create", "kernelcachenodes") and can("create", "kernelcaches", "team-a")
    for verb, resource, ns in [
        ("delete", "kernelcaches", "team-a"),
        ("update", "kernelcaches", "team-a"),
        ("update", "kernelcachenodes/status", None),
        ("delete", "kernelcachecaptures", "team-a"),
        ("patch", "daemonsets/other", "kserve"),
        ("list", "secrets", "kserve"),
        ("update", "kernelcachenodegroups", None),
        ("delete", "nodes", None),
    ]:
        assert not can(verb, resource, ns), (verb, resource)


def test_sigint_is_interrupt_and_leaves_no_lease(cluster):
    install(cluster, [b.group("gpu", {"pool": "gpu"})], [b.node("n1", {"pool": "gpu"})])
    proc = start(cluster, "--leader-elect")
    cluster.wait_for("work", lambda: kcn_names(cluster) == ["n1"], timeout=20)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "Traceback" not in err
    assert not cluster.get("lease", "kubectl-kcache-reconcile", "kserve")["spec"].get("holderIdentity")


def test_metrics_endpoint(cluster):
    install(cluster, [b.group("gpu", {"pool": "gpu"})], [b.node("n1", {"pool": "gpu"})])
    import socket
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = start(cluster, "--health-port", str(port))
    try:
        cluster.wait_for("work", lambda: kcn_names(cluster) == ["n1"], timeout=20)
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
        created = [
            line
            for line in body.splitlines()
            if line.startswith("kcache_actions_total{") and 'verb="create"' in line and 'kind="KernelCacheNode"' in line
        ]
        assert [float(line.rsplit(" ", 1)[1]) for line in created] == [1.0]
        assert urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5).read() == b"ok\n"
    finally:
        stop(proc)
