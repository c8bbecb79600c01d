"""The fence the API server enforces (deploy/fence.yaml), and leadership edges, on the real API server,
judged from its audit log and the objects (never from response codes alone: a 504 can be committed).

- the policy admits a write of the controller's ServiceAccount only from the pod that holds the Lease now:
  another pod, a released or deleted Lease, or a token without a pod are refused; other users are untouched;
- a leader frozen mid-batch under CPU load and resumed after a takeover gets nothing admitted, even when a
  write leaves the process after its own check (an executor with no in-process guard stands for that case);
- the Lease deleted under a leader: the leader stops writing at once, and no candidate takes it before the
  old holder's lease duration has passed;
- a write verb RBAC refuses is said once per cause and on /readyz, not once per object, and not sent again
  but for one probe on a growing interval, at once when the RBAC objects change;
- a fence that refuses the controller because its identity does not name its pod is said once, with the
  identity it expects and how to pass it; the controller stands back and only probes.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubectl_kcache.kube.client import Client
from kubectl_kcache.kube.kubeconfig import Overrides
from kubectl_kcache.reconcile import actions as a
from kubectl_kcache.reconcile.executor import Executor, Fenced
from tests import builders as b

from .test_reconcile_faults import (
    LEADER_FLAGS,
    LEASE,
    MUTATING,
    AuditTail,
    Replica,
    big_group,
    cpu_load,
    freeze_mid_batch,
    kcn_names,
    lease_expiry,
    received,
    take_over,
)

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SA = "kubectl-kcache-reconcile"
SA_USER = f"system:serviceaccount:kserve:{SA}"
POLICY = "kubectl-kcache-reconcile-fence"
WINDOW = 20  # seconds refused requests are counted over, after the first pass


# ---- helpers -----------------------------------------------------------------------------------------
def pod_token(cluster, pod: str) -> str:
    """A pod of the controller's ServiceAccount and a token bound to it, as the kubelet projects one."""
    cluster.kubectl(
        "create",
        "-n",
        "kserve",
        "-f",
        "-",
        input=json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": pod, "namespace": "kserve"},
                "spec": {
                    "serviceAccountName": SA,
                    "schedulerName": "kcache-e2e-none",
                    "containers": [{"name": "reconcile", "image": "kubectl-kcache:e2e"}],
                },
            }
        ),
    )
    uid = cluster.get("pod", pod, "kserve")["metadata"]["uid"]
    return cluster.kubectl(
        "create",
        "token",
        SA,
        "-n",
        "kserve",
        "--duration",
        "1h",
        "--bound-object-kind",
        "Pod",
        "--bound-object-name",
        pod,
        "--bound-object-uid",
        uid,
    ).stdout.strip()


def token_kubeconfig(cluster, tmp_path: Path, pod: str) -> Path:
    view = json.loads(cluster.kubectl("config", "view", "--raw", "--minify", "-o", "json").stdout)
    path = tmp_path / f"kubeconfig-{pod}"
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": pod,
                "clusters": [{"name": "testbed", "cluster": view["clusters"][0]["cluster"]}],
                "users": [{"name": pod, "user": {"token": pod_token(cluster, pod)}}],
                "contexts": [{"name": pod, "context": {"cluster": "testbed", "user": pod}}],
            }
        )
    )
    return path


def as_pod(cluster, kubeconfig: Path, *args: str, input: str | None = None):
    return cluster.kubectl(f"--kubeconfig={kubeconfig}", *args, input=input, check=False)


def create_kcn(cluster, kubeconfig: Path, name: str):
    return as_pod(cluster, kubeconfig, "create", "-f", "-", input=json.dumps(b.kcn(name)))


def set_holder(cluster, holder: str) -> None:
    lease = cluster.get(*LEASE, check=False)
    if lease is None:
        cluster.apply(
            {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": LEASE[1], "namespace": LEASE[2]},
                "spec": {"holderIdentity": holder, "leaseDurationSeconds": 15},
            }
        )
    else:
        cluster.kubectl(
            "patch",
            "lease",
            LEASE[1],
            "-n",
            LEASE[2],
            "--type=merge",
            "-p",
            json.dumps({"spec": {"holderIdentity": holder}}),
        )


@contextlib.contextmanager
def fence(cluster) -> Iterator[None]:
    """The controller's RBAC and the fence, enforcing. Afterwards the binding only audits: it is never
    deleted, because a Kubernetes bug (kubernetes#133827) leaves the API server validating against a stale
    Lease once no binding names Lease as a parameter kind; only an API server restart recovers from that."""
    cluster.kubectl("apply", "-f", str(ROOT / "deploy" / "rbac.yaml"))
    cluster.kubectl("apply", "-f", str(ROOT / "deploy" / "fence.yaml"))
    try:
        yield
    finally:
        cluster.kubectl(
            "patch",
            "validatingadmissionpolicybinding",
            POLICY,
            "--type=merge",
            "-p",
            '{"spec": {"validationActions": ["Audit"]}}',
        )
        cluster.wait_for(
            "the fence to stop denying",
            lambda: (
                cluster.kubectl(
                    "create",
                    "--dry-run=server",
                    "--as",
                    SA_USER,
                    "-f",
                    "-",
                    input=json.dumps(b.kcn("probe")),
                    check=False,
                ).returncode
                == 0
            ),
            timeout=30,
        )


def wait_enforced(cluster, kubeconfig: Path) -> None:
    """A new policy or binding takes a moment to reach the API server's admission chain."""
    cluster.wait_for(
        "the fence to refuse a pod that does not hold the Lease",
        lambda: refused_by_fence(probe(cluster, kubeconfig)),
        timeout=30,
    )


def probe(cluster, kubeconfig: Path):
    """A server-side dry run of a create: admitted or refused as the write would be, nothing stored."""
    return as_pod(cluster, kubeconfig, "create", "--dry-run=server", "-f", "-", input=json.dumps(b.kcn("probe")))


def refused_by_fence(proc) -> bool:
    return proc.returncode != 0 and POLICY in proc.stderr


# ---- 1. the policy -----------------------------------------------------------------------------------
def test_the_api_server_admits_the_controllers_writes_only_from_the_pod_holding_the_lease(cluster, tmp_path):
    with fence(cluster):
        pod_a, pod_b = token_kubeconfig(cluster, tmp_path, "fence-a"), token_kubeconfig(cluster, tmp_path, "fence-b")
        set_holder(cluster, "fence-a_17_0a1b2c3d")
        wait_enforced(cluster, pod_b)

        assert create_kcn(cluster, pod_a, "by-a").returncode == 0
        refused = as_pod(cluster, pod_b, "delete", "kernelcachenode", "by-a")
        assert refused_by_fence(refused) and "Forbidden" in refused.stderr
        assert (
            "pod fence-b does not hold Lease kserve/kubectl-kcache-reconcile (holder: fence-a_17_0a1b2c3d)"
            in refused.stderr
        )
        assert "by-a" in kcn_names(cluster)

        # a holder whose name only starts like the pod's is another pod
        set_holder(cluster, "fence-ab_17_0a1b2c3d")
        cluster.wait_for("the new holder to reach admission", lambda: refused_by_fence(probe(cluster, pod_a)))
        # released: nobody writes
        set_holder(cluster, "")
        cluster.wait_for("the release to reach admission", lambda: "(holder: none)" in probe(cluster, pod_a).stderr)
        # deleted: the policy admits (it could not tell the controller from anyone else), and the candidates'
        # rule keeps a second leader out until the old holder's duration has passed (test 3)
        cluster.kubectl("delete", "lease", LEASE[1], "-n", LEASE[2])
        cluster.wait_for("the deletion to reach admission", lambda: probe(cluster, pod_b).returncode == 0)
        # the controller's identity without a pod (impersonated, or a long-lived token): refused
        set_holder(cluster, "fence-a_17_0a1b2c3d")
        cluster.wait_for("the holder to reach admission", lambda: probe(cluster, pod_a).returncode == 0)
        assert create_kcn(cluster, pod_a, "by-a-again").returncode == 0
        bare = cluster.kubectl("create", "--as", SA_USER, "-f", "-", input=json.dumps(b.kcn("bare")), check=False)
        assert refused_by_fence(bare) and "carries no pod identity" in bare.stderr
        # everyone else is not the controller: untouched (KServe's controller, people)
        cluster.apply(b.kcn("by-admin"))
        set_holder(cluster, "")
        cluster.wait_for("the release to reach admission", lambda: refused_by_fence(probe(cluster, pod_a)))
        cluster.apply(b.kcn("by-admin-2"))
        assert kcn_names(cluster) == {"by-a", "by-a-again", "by-admin", "by-admin-2"}


# ---- 2. a frozen leader, resumed after a takeover ----------------------------------------------------
def test_a_frozen_leader_resumed_after_takeover_gets_no_write_admitted(cluster, tmp_path):
    members = big_group(cluster)
    with fence(cluster):
        kc = {p: token_kubeconfig(cluster, tmp_path, p) for p in ("fence-a", "fence-b")}
        old = Replica(
            cluster, tmp_path, "first", *LEADER_FLAGS, env={"KUBECONFIG": str(kc["fence-a"]), "POD_NAME": "fence-a"}
        )
        new: Replica | None = None
        try:
            cluster.wait_for("fence-a to lead", lambda: old.holds(cluster), timeout=30)
            cluster.wait_for("fence-a to be ready", old.ready, timeout=30)
            new = Replica(
                cluster,
                tmp_path,
                "second",
                *LEADER_FLAGS,
                env={"KUBECONFIG": str(kc["fence-b"]), "POD_NAME": "fence-b"},
            )
            cluster.wait_for("fence-b to stand by, ready", new.ready, timeout=30)
            mark = cluster.audit_mark()
            with cpu_load():
                freeze_mid_batch(cluster, old, lambda: old.proc.send_signal(signal.SIGSTOP))
                expiry = lease_expiry(cluster, old)
                acquired = take_over(cluster, new, members)

            # a write that left the frozen process after its own check passed: the API server refuses it
            leaked = Client(Overrides(kubeconfig=str(kc["fence-a"])))
            leaked.user_agent = f"kubectl-kcache/e2e reconcile/{old.identity_prefix}leaked"
            victims = sorted(members)[:40]
            kcns = {x["metadata"]["name"]: x for x in cluster.get("kernelcachenodes")["items"]}
            uids_before = {n: x["metadata"]["uid"] for n, x in kcns.items()}
            deletes = [
                a.Action(
                    a.DELETE,
                    "KernelCacheNode",
                    v,
                    "e2e: a leaked delete",
                    uid=kcns[v]["metadata"]["uid"],
                    resource_version=kcns[v]["metadata"]["resourceVersion"],
                )
                for v in victims
            ]
            with pytest.raises(Fenced, match="does not hold Lease kserve/kubectl-kcache-reconcile"):
                Executor(leaked, guard=None).apply(deletes)

            old.proc.send_signal(signal.SIGCONT)
            old.proc.wait(30)
            assert old.proc.returncode == 3 and "lost leadership" in old.log() and "Traceback" not in old.log()
            time.sleep(2)
            writes = [
                e
                for e in cluster.audit_events(mark)
                if old.mine(e) and e["verb"] in MUTATING and e["objectRef"]["resource"] != "leases"
            ]
            after = [e for e in writes if received(e) >= acquired]
            assert after, "the leaked writes reached the API server"
            # counted as made unless the fence refused it (403), whatever else it said: a 504 can be committed
            admitted = [
                (e["verb"], e["objectRef"].get("name"), e["responseStatus"]["code"])
                for e in after
                if e["responseStatus"]["code"] != 403
            ]
            assert admitted == [], f"writes of the old leader admitted after {new.identity_prefix} took over"
            assert len(after) <= 8 + 1  # the leaked executor stopped at its first refusal (8 writers in flight)
            assert kcn_names(cluster) == members and new.holds(cluster) and new.ready()
            # and from the objects: not one was deleted (and recreated by the new leader under another uid)
            uids_after = {x["metadata"]["name"]: x["metadata"]["uid"] for x in cluster.get("kernelcachenodes")["items"]}
            assert uids_after == uids_before
            assert acquired >= expiry
        finally:
            old.stop()
            if new is not None:
                assert new.stop() == 0, new.log()


# ---- 3. the Lease deleted under a leader -------------------------------------------------------------
# "At once" is the next renewal (every 2 s), not the renew deadline: with LEADER_FLAGS' 4 s deadline a loaded
# machine (the leader deleting 8 at a time, another test beside it) can delay one renewal past it, and the
# deadline then stops the leader first (CI saw it). A 9 s deadline keeps the two far apart.
SLOW_DEADLINE_FLAGS = ("--leader-elect", "--lease-duration", "12", "--renew-deadline", "9")


def test_a_lease_deleted_under_its_leader_stops_it_at_once_and_no_one_takes_it_early(cluster, tmp_path):
    members = big_group(cluster)
    old = Replica(cluster, tmp_path, "first", *SLOW_DEADLINE_FLAGS)
    new: Replica | None = None
    try:
        cluster.wait_for("the first replica to lead", lambda: old.holds(cluster), timeout=30)
        new = Replica(cluster, tmp_path, "second", *SLOW_DEADLINE_FLAGS)
        cluster.wait_for("the second replica to stand by, ready", new.ready, timeout=30)
        duration = int(cluster.get(*LEASE)["spec"]["leaseDurationSeconds"])
        tail = AuditTail(cluster)
        cluster.kubectl("delete", "kernelcachenodegroup", "gpu", "--wait=false")
        cluster.wait_for(
            "the leader to start deleting",
            lambda: any(old.mine(e) and e["verb"] == "delete" for e in tail.new()),
            timeout=30,
            interval=0.01,
        )
        cluster.kubectl("delete", "lease", LEASE[1], "-n", LEASE[2])
        deleted_at = dt.datetime.now(dt.timezone.utc)
        old.proc.wait(30)
        assert old.proc.returncode == 3 and "was deleted" in old.log(), old.log()
        cluster.apply(b.group("gpu", {"pool": "gpu"}))
        cluster.wait_for("the other replica to take the lease", lambda: new.holds(cluster), timeout=40)
        cluster.wait_for("the new leader to converge", lambda: kcn_names(cluster) == members, timeout=90, interval=1)
        events = cluster.audit_events(0)
        created = min(
            received(e)
            for e in events
            if new.mine(e) and e["verb"] == "create" and e["objectRef"]["resource"] == "leases"
        )
        last_old = max(received(e) for e in events if old.mine(e) and e["verb"] in MUTATING)
        assert last_old < created, "the old leader wrote after another replica held the Lease"
        assert (created - deleted_at).total_seconds() >= duration - 1  # waited out the old holder's duration
    finally:
        old.stop()
        if new is not None:
            assert new.stop() == 0, new.log()


# ---- 4. a write verb RBAC refuses ---------------------------------------------------------------------
def _forbid_creating_kcns(cluster) -> None:
    role = cluster.get("clusterrole", SA)
    for rule in role["rules"]:
        if rule.get("resources") == ["kernelcachenodes"]:
            rule["verbs"] = ["get", "list", "watch", "delete"]
    role["metadata"] = {"name": SA}
    cluster.apply(role)


def test_a_write_rbac_refuses_is_said_once_and_makes_the_controller_not_ready(cluster, tmp_path):
    cluster.kubectl("apply", "-f", str(ROOT / "deploy" / "rbac.yaml"))
    _forbid_creating_kcns(cluster)
    cluster.apply(
        [
            b.config_map({"enabled": True}),
            b.group("gpu", {"pool": "gpu"}),
            b.agent_daemonset(terms=[b.term({"pool": "gpu"})]),
        ]
    )
    cluster.create([b.node(f"gpu-{i:03d}", {"pool": "gpu"}, ready=None) for i in range(200)])
    ctl = Replica(cluster, tmp_path, "forbidden", "--as", SA_USER, "--resync-period", "1")
    try:

        def refused() -> Any:
            code, body = ctl.http("/readyz")
            return code == 503 and "create kernelcachenodes refused" in body and body

        body = cluster.wait_for("/readyz to say it cannot write", refused, timeout=30)
        assert "forbidden" in body and "(rbac" in body
        mark = cluster.audit_mark()
        # counted from here by when the API server received them: the first pass's other writers in flight
        # when /readyz turned can still reach the audit log after the mark
        since = dt.datetime.now(dt.timezone.utc)
        time.sleep(WINDOW)  # a pass every second, 200 creates planned in each
        creates = [
            e
            for e in cluster.audit_events(mark)
            if ctl.mine(e)
            and e["verb"] == "create"
            and e["objectRef"]["resource"] == "kernelcachenodes"
            and received(e) >= since
        ]
        print(f"measured: {len(creates)} refused creates in {WINDOW} s after the first pass")
        assert creates and all(e["responseStatus"]["code"] == 403 for e in creates)
        assert len(creates) <= 4, f"{len(creates)} refused creates in {WINDOW} s"  # probes after 5, 15, 35 s
        lines = [x for x in ctl.log().splitlines() if "kernelcachenodes" in x and "create" in x]
        assert len(lines) == 1, lines  # once
        assert "gpu-0" not in "\n".join(lines)  # one cause, not one line per object
        metric = [x for x in ctl.http("/metrics")[1].splitlines() if x.startswith("kcache_reconcile_refused{")]
        assert 'kcache_reconcile_refused{reason="rbac",resource="kernelcachenodes",verb="create"} 1.0' in metric
        # access back: the ClusterRole's change is seen at once (the next probe would be 20-40 s away)
        cluster.kubectl("apply", "-f", str(ROOT / "deploy" / "rbac.yaml"))
        cluster.wait_for("the KernelCacheNodes", lambda: len(kcn_names(cluster)) == 200, timeout=10, interval=0.5)
        cluster.wait_for("ready again", ctl.ready, timeout=30)
        assert "admitted again" in ctl.log()
    finally:
        ctl.stop()


# ---- 5. the fence misconfigured -----------------------------------------------------------------------
def test_a_fence_that_refuses_every_write_is_said_once_with_the_identity_it_expects(cluster, tmp_path):
    cluster.apply([b.config_map({"enabled": True}), b.group("gpu", {"pool": "gpu"}), b.agent_daemonset()])
    cluster.create([b.node(f"gpu-{i:03d}", {"pool": "gpu"}, ready=None) for i in range(300)])
    with fence(cluster):
        kc = token_kubeconfig(cluster, tmp_path, "fence-a")
        set_holder(cluster, "nobody_1_0")  # the policy has the Lease before the controller takes it
        wait_enforced(cluster, kc)
        # run from pod fence-a's token, but without POD_NAME: its identity starts with the host's name
        ctl = Replica(cluster, tmp_path, "unnamed", *LEADER_FLAGS, env={"KUBECONFIG": str(kc), "POD_NAME": ""})
        try:
            said = "the API server's fence (deploy/fence.yaml) refuses every write of this replica"
            cluster.wait_for("the controller to say what the fence expects", lambda: said in ctl.log(), timeout=60)
            assert "expects the Lease holder to start with fence-a_" in ctl.log() and "POD_NAME" in ctl.log()
            mark = cluster.audit_mark()
            time.sleep(WINDOW)
            writes = [
                e
                for e in cluster.audit_events(mark)
                if ctl.mine(e) and e["verb"] in MUTATING and e["objectRef"]["resource"] != "leases"
            ]
            print(f"measured: {len(writes)} writes refused by the fence in {WINDOW} s after it was said")
            assert len(writes) <= 4, f"{len(writes)} refused writes in {WINDOW} s"
            assert all(e["responseStatus"]["code"] == 403 for e in writes)
            assert ctl.log().count(said) == 1
            code, body = ctl.http("/readyz")
            assert code == 503 and "every write refused (fence" in body
            assert ctl.proc.poll() is None  # it stands back, leading, and probes; it does not exit
        finally:
            ctl.stop()
