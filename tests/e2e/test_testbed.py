"""The test bed itself: a real API server that validates, authenticates, authorizes, audits, restarts,
compacts, and (with KWOK, the controller manager and the scheduler) runs DaemonSet and Job pods."""

from __future__ import annotations

import json
import threading

import pytest

from kubectl_kcache.errors import Gone, Unreachable
from kubectl_kcache.kube import resources as r
from kubectl_kcache.kube.client import Client
from kubectl_kcache.kube.kubeconfig import Overrides
from tests import builders as b

from .cluster import FAIL_LABEL

pytestmark = pytest.mark.e2e


def client(cluster, context: str = "admin", **kw) -> Client:
    return Client(Overrides(kubeconfig=cluster.kubeconfig, context=context, **kw))


def test_crd_validation_rejects_what_kserve_rejects(cluster):
    bad = cluster.kubectl("apply", "-f", "-", input=json.dumps(b.group("empty", {})), check=False)
    assert bad.returncode != 0 and "should have at least 1 properties" in bad.stderr
    tag = b.kernel_cache("tagged")
    tag["spec"]["artifact"]["imageReference"] = "registry.example.com/cache:latest"
    bad = cluster.kubectl("apply", "-f", "-", input=json.dumps(tag), check=False)
    assert bad.returncode != 0 and "imageReference" in bad.stderr
    pvc = b.kernel_cache("pvc")
    pvc["spec"]["mountType"] = "pvc"
    bad = cluster.kubectl("apply", "-f", "-", input=json.dumps(pvc), check=False)
    assert bad.returncode != 0 and "Unsupported value" in bad.stderr
    cluster.apply(b.kernel_cache("ok"))
    changed = b.kernel_cache("ok", seed="other")
    bad = cluster.kubectl("apply", "-f", "-", input=json.dumps(changed), check=False)
    assert bad.returncode != 0 and "artifact is immutable after creation" in bad.stderr


def test_status_subresource_is_separate(cluster):
    """As KServe's CRDs declare it: writes to the object leave its status alone, and writes to /status leave
    everything but the status alone (the executor and the fixtures rely on both)."""
    cluster.apply(b.kcn("gpu-sep", {"team-a/c": b.entry("team-a", "c")}))  # a status in a create is dropped
    assert not (cluster.get("kernelcachenode", "gpu-sep").get("status") or {}).get("cacheStatus")
    cluster.set_status("kernelcachenode", "gpu-sep", {"cacheStatus": {"team-a/c": b.entry("team-a", "c")}})
    cluster.kubectl(
        "patch",
        "kernelcachenode",
        "gpu-sep",
        "--type=merge",
        "-p",
        json.dumps({"metadata": {"labels": {"written": "object"}}, "status": {"cacheStatus": {"team-a/c": None}}}),
    )
    got = cluster.get("kernelcachenode", "gpu-sep")
    assert got["metadata"]["labels"] == {"written": "object"}
    assert got["status"]["cacheStatus"]["team-a/c"]["state"] == "Ready"
    cluster.kubectl(
        "patch",
        "kernelcachenode",
        "gpu-sep",
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps(
            {"metadata": {"labels": {"written": "status"}}, "status": {"cacheStatus": {"team-a/c": {"state": "Error"}}}}
        ),
    )
    got = cluster.get("kernelcachenode", "gpu-sep")
    assert got["metadata"]["labels"] == {"written": "object"}
    assert got["status"]["cacheStatus"]["team-a/c"]["state"] == "Error"


def test_user_without_rights_is_forbidden_and_audited(cluster):
    mark = cluster.audit_mark()
    denied = cluster.kubectl("get", "nodes", context="alice", check=False)
    assert denied.returncode != 0 and "forbidden" in denied.stderr
    events = cluster.audit_events(mark)
    assert any(
        e["user"]["username"] == "alice"
        and e["verb"] == "list"
        and e["objectRef"]["resource"] == "nodes"
        and e["responseStatus"]["code"] == 403
        for e in events
    )


@pytest.mark.parametrize(
    "context,user,group",
    [("token-user", "token-user", "kcache-token-group"), ("exec-user", "exec-user", "kcache-exec-group")],
)
def test_token_and_exec_plugin_users_authenticate(cluster, context, user, group):
    review = client(cluster, context).request(
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        body={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
    )
    info = review["status"]["userInfo"]
    assert info["username"] == user and group in info["groups"]


def _watch_in_thread(c: Client, rv: str) -> tuple[threading.Thread, dict]:
    out: dict = {"events": [], "error": None}

    def run() -> None:
        try:
            for ev in c.watch(r.NODE_GROUPS, rv, timeout_seconds=60):
                out["events"].append(ev)
        except Exception as exc:  # noqa: BLE001 - the test inspects it
            out["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, out


def test_apiserver_restart_is_observed_by_a_watching_client(cluster):
    c = client(cluster)
    _, rv = c.list_all(r.NODE_GROUPS)
    t, out = _watch_in_thread(c, rv)
    cluster.apply(b.group("g1", {"a": "b"}))
    cluster.wait_for("the watch event", lambda: out["events"], timeout=20)
    cluster.testbed_cmd("restart", "apiserver")
    t.join(timeout=60)
    assert not t.is_alive()
    assert isinstance(out["error"], Unreachable) or out["error"] is None
    assert [e["object"]["metadata"]["name"] for e in out["events"] if e["type"] == "ADDED"] == ["g1"]
    # the same client reconnects after the restart
    groups, _ = c.list_all(r.NODE_GROUPS)
    assert [g["metadata"]["name"] for g in groups] == ["g1"]


def test_etcd_restart_keeps_data(cluster):
    cluster.apply(b.group("kept", {"a": "b"}))
    cluster.testbed_cmd("restart", "etcd")
    assert cluster.get("kernelcachenodegroup", "kept")["metadata"]["name"] == "kept"


def test_forced_410_gone_on_watch_after_compaction(cluster):
    c = client(cluster)
    _, old_rv = c.list_all(r.NODE_GROUPS)
    for i in range(3):
        cluster.apply(b.group(f"g{i}", {"a": str(i)}))
    cluster.testbed_cmd("compact")
    with pytest.raises(Gone):
        for _ in c.watch(r.NODE_GROUPS, old_rv, timeout_seconds=10):
            pass


@pytest.mark.simulate
def test_daemonset_honours_taints_and_converges(cluster):
    cluster.apply(
        [
            b.node(
                "tainted", {"pool": "gpu"}, taints=[b.taint("nvidia.com/gpu", "present")], ready=None, simulated=True
            ),
            b.node("plain", {"pool": "gpu"}, ready=None, simulated=True),
        ]
    )
    ds = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "%s", "namespace": "kserve"},
        "spec": {
            "selector": {"matchLabels": {"app": "%s"}},
            "template": {
                "metadata": {"labels": {"app": "%s"}},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            },
        },
    }
    tolerating = json.loads(json.dumps(ds).replace("%s", "tolerating"))
    tolerating["spec"]["template"]["spec"]["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists"}]
    plain = json.loads(json.dumps(ds).replace("%s", "plain"))
    cluster.apply([tolerating, plain])

    def nodes_of(app: str) -> list[str]:
        pods = cluster.get("pods", namespace="kserve")["items"]
        return sorted(
            p["spec"].get("nodeName", "")
            for p in pods
            if p["metadata"]["labels"].get("app") == app and p["status"].get("phase") == "Running"
        )

    assert cluster.wait_for("tolerating pods", lambda: nodes_of("tolerating") == ["plain", "tainted"])
    assert cluster.wait_for("plain pods", lambda: nodes_of("plain") == ["plain"])
    assert cluster.wait_for(
        "numberReady", lambda: cluster.get("daemonset", "tolerating", "kserve")["status"].get("numberReady") == 2
    )


@pytest.mark.simulate
def test_labelled_pod_fails_pulling(cluster):
    cluster.apply(b.node("worker", ready=None, simulated=True))
    pod = b.pod("prep", ns="kserve-kernelcache-jobs", node_name="worker", labels={FAIL_LABEL: "ImagePullBackOff"})
    del pod["status"]
    cluster.apply(pod)

    def waiting() -> str:
        st = cluster.get("pod", "prep", "kserve-kernelcache-jobs")["status"].get("containerStatuses") or []
        return st[0]["state"].get("waiting", {}).get("reason", "") if st else ""

    assert cluster.wait_for("ImagePullBackOff", lambda: waiting() == "ImagePullBackOff")
