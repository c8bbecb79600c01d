"""kube/ and snapshot/live.py against the real API server: pagination, impersonation, forbidden reads,
exec/token users, and a dump that round-trips to the same snapshot."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kubectl_kcache.errors import Gone
from kubectl_kcache.kube import listing
from kubectl_kcache.kube import resources as r
from kubectl_kcache.kube.client import Client
from kubectl_kcache.kube.kubeconfig import Overrides
from kubectl_kcache.snapshot import kinds
from kubectl_kcache.snapshot import live as collect
from kubectl_kcache.snapshot import plan as readplan
from kubectl_kcache.snapshot.files.from_files import load_files
from kubectl_kcache.snapshot.reads import covering
from tests import builders as b

from .cluster import OWNED_LABEL

pytestmark = pytest.mark.e2e


def kcache(cluster, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kubectl_kcache", *args],
        capture_output=True,
        text=True,
        env=cluster.env,
        input=input,
        timeout=300,
    )


def test_pagination_really_pages(cluster):
    cluster.create(b.kcn(f"node-{i:04d}") for i in range(1100))
    c = Client(Overrides(kubeconfig=cluster.kubeconfig))
    mark = cluster.audit_mark()
    pages = list(listing.pages(c, r.KERNEL_CACHE_NODES, page_size=100))
    assert [len(p.items) for p in pages] == [100] * 11
    assert all(p.continue_token for p in pages[:-1]) and not pages[-1].continue_token
    names = [item["metadata"]["name"] for page in pages for item in page.items]
    assert names == sorted(names) and len(set(names)) == 1100
    assert all("managedFields" not in item["metadata"] for page in pages for item in page.items)
    lists = [
        e
        for e in cluster.audit_events(mark)
        if e["verb"] == "list" and e["objectRef"]["resource"] == "kernelcachenodes"
    ]
    assert len(lists) == 11
    assert all("limit=100" in e["requestURI"] for e in lists)
    # the same pages decoded straight into typed objects, with the list's resourceVersion returned
    kind = kinds.for_resource(r.KERNEL_CACHE_NODES)
    typed = c.list_all(r.KERNEL_CACHE_NODES, page_size=100, decode=kind.decode_page)
    assert [k.name for k in typed.items] == names
    assert typed.resource_version.isdigit()
    assert sum("continue=" in e["requestURI"] for e in lists) == 10


def test_the_next_page_is_asked_for_while_a_page_is_decoded(cluster):
    """Page k+1 is asked for before page k is decoded (the server makes it meanwhile); a caller that stops
    early leaves no half-read answer on a pooled connection; a refused continue token reaches the caller."""
    cluster.create(b.kcn(f"pipe-{i:04d}") for i in range(250))
    c = Client(Overrides(kubeconfig=cluster.kubeconfig))
    sent: list[str] = []
    request = c.request

    def counting(*args, **kwargs):
        sent.append((kwargs.get("query") or {}).get("continue") or "")
        return request(*args, **kwargs)

    c.request = counting  # type: ignore[method-assign]
    plain = listing.dict_page(r.KERNEL_CACHE_NODES)
    asked_before: list[bool] = []

    def decode(data: bytes):
        page = plain(data)
        asked_before.append(len(sent) == len(asked_before) + (2 if page.continue_token else 1))
        return page

    pages = list(listing.pages(c, r.KERNEL_CACHE_NODES, page_size=100, decode=decode))
    names = [item["metadata"]["name"] for page in pages for item in page.items]
    assert len(names) == len(set(names)) >= 250 and len(pages) >= 3
    assert asked_before == [True] * len(pages)
    assert [bool(token) for token in sent] == [False] + [True] * (len(pages) - 1)

    stopped = listing.pages(c, r.KERNEL_CACHE_NODES, page_size=100)
    assert len(next(stopped).items) == 100
    stopped.close()  # the second page's answer was on its way
    again = c.list_all(r.KERNEL_CACHE_NODES, page_size=100)
    assert sorted(i["metadata"]["name"] for i in again.items) == sorted(names)

    def expired(*args, **kwargs):
        if (kwargs.get("query") or {}).get("continue"):
            raise Gone("the continue token expired")
        return request(*args, **kwargs)

    c.request = expired  # type: ignore[method-assign]
    with pytest.raises(Gone):
        list(listing.pages(c, r.KERNEL_CACHE_NODES, page_size=100))


def _grant(cluster, name: str, resource: str, group: str, api_group: str = "") -> None:
    cluster.apply(
        [
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": {"name": name, "labels": {OWNED_LABEL: "true"}},
                "rules": [{"apiGroups": [api_group], "resources": [resource], "verbs": ["get", "list", "watch"]}],
            },
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": name, "labels": {OWNED_LABEL: "true"}},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                "subjects": [{"kind": "Group", "name": group, "apiGroup": "rbac.authorization.k8s.io"}],
            },
        ]
    )


def test_two_as_groups_both_take_effect(cluster):
    _grant(cluster, "kcache-test-nodes", "nodes", "group-one")
    _grant(cluster, "kcache-test-groups", "kernelcachenodegroups", "group-two", "serving.kserve.io")
    cluster.apply(b.group("g", {"a": "b"}))
    c = Client(
        Overrides(kubeconfig=cluster.kubeconfig, impersonate="someone", impersonate_groups=("group-one", "group-two"))
    )
    mark = cluster.audit_mark()
    nodes, _ = c.list_all(r.NODES)
    groups, _ = c.list_all(r.NODE_GROUPS)
    assert nodes == [] and [g["metadata"]["name"] for g in groups] == ["g"]
    seen = [e for e in cluster.audit_events(mark) if e.get("impersonatedUser", {}).get("username") == "someone"]
    assert seen and all(set(e["impersonatedUser"]["groups"]) >= {"group-one", "group-two"} for e in seen)
    one = Client(Overrides(kubeconfig=cluster.kubeconfig, impersonate="someone", impersonate_groups=("group-one",)))
    snap = collect.collect(one)
    assert covering(snap, readplan.NODES).status == "ok"
    assert covering(snap, readplan.NODE_GROUPS).status == "forbidden"


def test_restricted_user_reads_are_recorded_as_forbidden(cluster):
    _grant(cluster, "kcache-test-viewer-groups", "kernelcachenodegroups", "kcache-viewers", "serving.kserve.io")
    snap = collect.collect(Client(Overrides(kubeconfig=cluster.kubeconfig, context="viewer")))
    assert covering(snap, readplan.NODE_GROUPS).status == "ok"
    assert covering(snap, readplan.NODES).status == "forbidden"
    assert "cannot list resource" in covering(snap, readplan.NODES).message
    proc = kcache(cluster, "dump", "--context", "viewer")
    assert proc.returncode == 3
    assert "forbidden" in proc.stderr and "list nodes" in proc.stderr
    assert "Traceback" not in proc.stderr


def _kserve_install(cluster) -> None:
    cluster.apply(
        [
            b.config_map({"enabled": True, "defaultNodeGroup": "gpu", "jobNamespace": "kserve-kernelcache-jobs"}),
            b.agent_daemonset(terms=[b.term({"pool": "gpu"})]),
            b.controller_deployment(ready=None),
            b.group("gpu", {"pool": "gpu"}, [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]),
            b.node("gpu-1", {"pool": "gpu"}, taints=[b.taint("nvidia.com/gpu", "present")]),
            b.node("cpu-1", {"pool": "cpu"}),
            b.kcn("gpu-1"),
            b.kernel_cache("model-abc", "team-a"),
            b.capture("model-kcc-1", "team-a"),
        ]
    )
    cluster.set_status("kernelcachecapture", "model-kcc-1", b.capture_status(node_name="gpu-1"), "team-a")
    cluster.set_status(
        "kernelcachenode", "gpu-1", {"cacheStatus": {"team-a/model-abc": b.entry("team-a", "model-abc")}}
    )


def test_dump_then_from_file_equals_live(cluster, tmp_path):
    _kserve_install(cluster)
    c = Client(Overrides(kubeconfig=cluster.kubeconfig))
    live = collect.collect(c)
    proc = kcache(cluster, "dump", "--file", str(tmp_path / "snap.yaml"))
    assert proc.returncode == 0, proc.stderr
    loaded = load_files([str(tmp_path / "snap.yaml")])
    for field in (
        "nodes",
        "node_groups",
        "kcns",
        "kernel_caches",
        "captures",
        "daemonsets",
        "deployments",
        "configmaps",
        "crds",
        "pods",
        "jobs",
        "events",
    ):
        assert getattr(loaded, field) == getattr(live, field), field
    assert [(x.resource, x.namespace, x.status, x.label_selector, x.field_selector) for x in loaded.reads] == [
        (x.resource, x.namespace, x.status, x.label_selector, x.field_selector) for x in live.reads
    ]
    assert loaded.node_by_name["gpu-1"].taints[0].key == "nvidia.com/gpu"
    text = (tmp_path / "snap.yaml").read_text()
    assert "managedFields" not in text
    proc = kcache(cluster, "dump", "-o", "json")
    doc = json.loads(proc.stdout)
    assert doc["kind"] == "KcacheSnapshot" and doc["version"] == 1 and doc["meta"]["serverVersion"] == "v1.36.3"
    meta = doc["meta"]
    assert meta["server"] == c.server and meta["tool"].startswith("kubectl-kcache ")
    assert meta["takenAt"].endswith("Z") and meta["scope"] == {
        "namespace": None,
        "parts": ["nodes", "install", "preparation", "producers", "events"],
    }
    # items streamed as the API returned them: kind and apiVersion filled in, managedFields dropped
    assert all(item["kind"] and item["apiVersion"] for item in doc["items"])
    assert not any("managedFields" in item["metadata"] for item in doc["items"])
    nodes = [item for item in doc["items"] if item["kind"] == "Node"]
    assert {n["apiVersion"] for n in nodes} == {"v1"} and {n["metadata"]["name"] for n in nodes} >= {"gpu-1"}
    json_file = tmp_path / "snap.json"
    assert kcache(cluster, "dump", "-o", "json", "--file", str(json_file)).returncode == 0
    assert load_files([str(json_file)]).nodes == live.nodes
    assert not list(tmp_path.glob("*kcache-tmp*"))  # written beside, then renamed into place


def test_dump_never_writes(cluster):
    _kserve_install(cluster)
    mark = cluster.audit_mark()
    assert kcache(cluster, "dump").returncode == 0
    verbs = {e["verb"] for e in cluster.audit_events(mark) if e.get("userAgent", "").startswith("kubectl-kcache")}
    assert verbs and verbs <= {"get", "list", "watch"}, verbs


def test_unreachable_server_is_one_line_and_exit_3(cluster):
    proc = kcache(
        cluster, "dump", "--server", "https://127.0.0.1:1", "--insecure-skip-tls-verify", "--request-timeout", "3s"
    )
    assert proc.returncode == 3
    assert proc.stderr.strip().splitlines() == [
        "error: cannot reach the API server at https://127.0.0.1:1: connection refused"
    ]


def test_token_flag_and_context_flags(cluster):
    proc = kcache(cluster, "dump", "--token", "testbed-static-token-0123456789", "--context", "alice")
    # the token user has no rights: every read forbidden, named in one warning line
    assert proc.returncode == 3 and "list nodes" in proc.stderr
    mark = cluster.audit_mark()
    kcache(cluster, "dump", "--context", "exec-user")
    users = {e["user"]["username"] for e in cluster.audit_events(mark)}
    assert "exec-user" in users


def test_typed_watch_after_a_typed_list(cluster):
    """An informer's path on a real API server: a typed list, then a watch from that list's own
    resourceVersion whose lines decode into the same Structs."""
    import threading

    c = Client(Overrides(kubeconfig=cluster.kubeconfig))
    kind = kinds.for_resource(r.NODE_GROUPS)
    listed = c.list_all(r.NODE_GROUPS, decode=kind.decode_page)
    events: list = []

    def watch() -> None:
        for event in c.watch(r.NODE_GROUPS, listed.resource_version, timeout_seconds=10, decode=kind.decode_watch_line):
            if event.type != "BOOKMARK":
                events.append(event)
            if len(events) == 2:
                return

    thread = threading.Thread(target=watch)
    thread.start()
    cluster.apply([b.group("watched", {"pool": "a"})])
    cluster.apply([b.group("watched", {"pool": "b"})])
    thread.join(20)
    assert [(e.type, e.object.name) for e in events] == [("ADDED", "watched"), ("MODIFIED", "watched")]
    assert events[1].object.node_selector == {"pool": "b"}
    assert int(events[1].resource_version) > int(listed.resource_version)


def test_request_log_names_each_request_and_never_a_credential(cluster):
    token = "testbed-static-token-0123456789"
    proc = kcache(cluster, "doctor", "-o", "json", "-v", "9", "--token", token, "--context", "alice")
    log = proc.stderr
    lists = [line for line in log.splitlines() if line.startswith("GET ") and "/kernelcachenodes" in line]
    assert lists and all(" 403 in " in line and line.endswith(" milliseconds") for line in lists), log
    assert "limit=" in lists[0]
    assert "request header: User-Agent: kubectl-kcache/" in log
    assert "response body: " in log and " bytes" in log
    assert token not in log and "Authorization" not in log and "Bearer" not in log
    assert json.loads(proc.stdout)["summary"]  # the report itself is untouched on stdout
    quiet = kcache(cluster, "doctor", "-o", "json", "--token", token, "--context", "alice")
    assert "milliseconds" not in quiet.stderr


def test_an_auth_provider_user_is_served_by_the_official_client_page_by_page(cluster, tmp_path):
    """A user with an auth-provider (gcp, azure, oidc) goes through the official client, which reads its
    answers whole: a list still pages, and its pages arrive in order. A gcp provider whose access token has
    not expired sends that token as it is; the test bed's static token stands in for it."""
    _grant(cluster, "kcache-test-provider", "kernelcachenodes", "kcache-token-group", "serving.kserve.io")
    cluster.create(b.kcn(f"provider-{i:04d}") for i in range(120))
    config = json.loads(Path(cluster.kubeconfig).read_text())
    provider = {
        "name": "gcp",
        "config": {"access-token": "testbed-static-token-0123456789", "expiry": "2099-01-01T00:00:00Z"},
    }
    config["users"].append({"name": "provider-user", "user": {"auth-provider": provider}})
    config["contexts"].append({"name": "provider", "context": {"cluster": "testbed", "user": "provider-user"}})
    config["current-context"] = "provider"
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps(config))
    c = Client(Overrides(kubeconfig=str(path)))
    mark = cluster.audit_mark()
    listed = c.list_all(r.KERNEL_CACHE_NODES, page_size=50)
    names = [item["metadata"]["name"] for item in listed.items]
    assert names == sorted(names) and len(names) >= 120 and "provider-0119" in names
    lists = [  # the provider's token is the test bed's token-user (the control plane lists kinds too)
        e
        for e in cluster.audit_events(mark)
        if (e.get("objectRef") or {}).get("resource") == "kernelcachenodes" and e["user"]["username"] == "token-user"
    ]
    assert [e["verb"] for e in lists] == ["list"] * -(-len(names) // 50)
    assert sum("continue=" in e["requestURI"] for e in lists) == len(lists) - 1


def test_a_status_report_that_changes_nothing_read_leaves_the_node_held_in_place(cluster):
    """A kubelet's status report through the real API server's watch (a new lastHeartbeatTime, nothing else):
    the informer keeps the node it holds and counts no change; a change the plugin reads replaces it."""
    import threading

    from kubectl_kcache.snapshot.informer import ClientListerWatcher, Informer

    cluster.create([b.node("hb-1", {"pool": "gpu"}, ready=None)])

    def report(at: str) -> None:
        cond = {"type": "Ready", "status": "True", "reason": "KubeletReady", "lastHeartbeatTime": at}
        cond["lastTransitionTime"] = "2026-12-05T10:00:00Z"
        patch = json.dumps({"status": {"conditions": [cond]}})
        cluster.kubectl("patch", "node", "hb-1", "--subresource=status", "--type=merge", "-p", patch)

    report("2026-12-05T10:00:00Z")
    c = Client(Overrides(kubeconfig=cluster.kubeconfig))
    stop = threading.Event()
    inf = Informer(ClientListerWatcher(c, readplan.NODES), readplan.NODES, stop=stop)
    inf.start()
    try:
        assert inf.synced.wait(30)

        def held() -> object:
            return next(o for o in inf.items() if o.metadata.name == "hb-1")

        def caught_up() -> bool:
            return int(inf.resource_version) >= int(cluster.get("node", "hb-1")["metadata"]["resourceVersion"])

        before, changes = held(), inf.changes
        assert before.ready
        for minute in range(1, 4):
            report(f"2026-12-05T10:0{minute}:00Z")
            cluster.wait_for("the watch to bring the report", caught_up, timeout=30, interval=0.1)
        assert held() is before and inf.changes == changes
        assert before.metadata.resource_version != cluster.get("node", "hb-1")["metadata"]["resourceVersion"]
        cluster.kubectl("label", "node", "hb-1", "pool=cpu", "--overwrite")
        cluster.wait_for("the relabelled node", lambda: held().metadata.labels.get("pool") == "cpu", timeout=30)
        assert held() is not before and inf.changes > changes
    finally:
        stop.set()
