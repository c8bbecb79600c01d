"""why-not-cached -A on a real API server: serving pods created as KServe's pod webhook leaves them (hits with
the usage annotation and the kernel-cache-linker init container, misses without), over the cluster of
test_why_not_cached plus a generated fleet. The fleet's counts per InferenceService equal the single-pod
answers counted (one `why-not-cached POD` run per pod), live and from a dump; the scope flags narrow one list
of pods, made by label."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from tests import builders as b

from .test_why_not_cached import KC, NS, NS_B, PODS, _webhook, install, kcache, pod

pytestmark = pytest.mark.e2e

# a generated fleet: three more InferenceServices whose pods hit, miss or would be denied
FLEET_VARIANTS = {
    "hit": lambda name, isvc, case: pod(name, case, isvc=isvc, node="gpu-1", cache=KC[f"kc-{case}"]),
    "hit-cpu": lambda name, isvc, case: pod(name, case, isvc=isvc, node="cpu-1", cache=KC[f"kc-{case}"]),
    "hit-no-annotation": lambda name, isvc, case: unannotated(
        pod(name, case, isvc=isvc, node="gpu-1", cache=KC[f"kc-{case}"])
    ),
    "cold": lambda name, isvc, case: pod(name, case, isvc=isvc, node="gpu-1"),
    "footprint": lambda name, isvc, case: pod(name, case, isvc=isvc, node="gpu-2", args=["--dtype", "float16"]),
    "denied": lambda name, isvc, case: pod(name, case, isvc=isvc, container_name="vllm"),
    "unsupported": lambda name, isvc, case: pod(name, case, isvc=isvc, supported=False),
}


def unannotated(p: dict[str, Any]) -> dict[str, Any]:
    """A hit whose usage annotation is gone (removed by hand or by a tool): the linker and the volume remain."""
    del p["metadata"]["annotations"]["internal.serving.kserve.io/kernelcache-usage"]
    return p


def generated_fleet(seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for isvc, case in (("fleet-a", "a"), ("fleet-c", "c"), ("fleet-d", "d")):
        for i in range(rng.randint(3, 6)):
            kind = rng.choice(sorted(FLEET_VARIANTS))
            p = FLEET_VARIANTS[kind](f"{isvc}-{i}-{kind}", isvc, case)
            p["metadata"]["labels"]["kcache.test/fleet"] = "yes"
            out.append(p)
    return out


def install_fleet(cluster, seed: int) -> list[dict[str, Any]]:
    """The cluster of test_why_not_cached and a generated fleet, created while no webhook is configured (no
    webhook server runs: with the configuration in place the API server would refuse the pods)."""
    install(cluster)
    fleet = generated_fleet(seed)
    cluster.kubectl("delete", "mutatingwebhookconfiguration", "kernelcache.serving.kserve.io")
    cluster.create(fleet)  # as a ReplicaSet creates them: no last-applied annotation of `kubectl apply`
    cluster.apply(_webhook())
    return fleet


def counted(docs: list[dict[str, Any]]) -> dict[tuple[str, str], tuple[int, int, int, int, int]]:
    """(namespace, isvc) -> (pods, cached, cold, now, denied) from single-pod answers."""
    out: dict[tuple[str, str], list[int]] = {}
    for ns, isvc, doc in docs:
        row = out.setdefault((ns, isvc), [0, 0, 0, 0, 0])
        cached, outcome = doc["result"]["cached"], doc["result"]["now"]["outcome"]
        miss = not cached and doc["result"]["coldByDesign"] is None  # a producer is not a miss
        row[0] += 1
        row[1] += cached
        row[2] += miss
        row[3] += miss and outcome == "cached"
        row[4] += outcome == "rejected"
    return {k: tuple(v) for k, v in out.items()}  # type: ignore[misc]


def rows(doc: dict[str, Any]) -> dict[tuple[str, str], tuple[int, int, int, int, int]]:
    return {
        (r["namespace"], r["inferenceService"]): (r["pods"], r["cached"], r["cold"], r["wouldBeCachedNow"], r["denied"])
        for r in doc["inferenceServices"]
        if r["revision"] is None
    }


def test_fleet_counts_match_a_single_answer_per_pod_live_and_from_a_dump(cluster, tmp_path):
    fleet = install_fleet(cluster, seed=26)
    dump = str(tmp_path / "snap.yaml")
    assert kcache(cluster, "dump", "--file", dump).returncode == 0

    live = kcache(cluster, "why-not-cached", "-A", "-o", "json")
    offline = kcache(cluster, "why-not-cached", "-A", "-o", "json", "--from-file", dump)
    assert live.returncode == offline.returncode == 1, live.stderr + offline.stderr  # some pods are cold
    doc, offline_doc = json.loads(live.stdout), json.loads(offline.stdout)
    assert doc.pop("source")["from"] == "live" and offline_doc.pop("source")["from"] == "file"
    assert doc == offline_doc

    singles = []
    for p in PODS + fleet:
        ns, name = p["metadata"]["namespace"], p["metadata"]["name"]
        proc = kcache(cluster, "why-not-cached", name, "-n", ns, "-o", "json")
        assert proc.returncode in (0, 1), proc.stderr
        single = json.loads(proc.stdout)
        singles.append((ns, p["metadata"]["labels"]["serving.kserve.io/inferenceservice"], single))
        mine = next(x for x in doc["pods"] if (x["namespace"], x["name"]) == (ns, name))
        assert mine["cached"] == single["result"]["cached"], name
        assert mine["now"] == {k: v for k, v in single["result"]["now"].items() if k != "denial"}, name
        assert mine["next"] == single["next"], name
    assert rows(doc) == counted(singles)
    assert doc["summary"]["pods"] == len(PODS) + len(fleet)
    assert doc["summary"]["decisions"] < doc["summary"]["pods"]  # pods of one template share a decision

    table = kcache(cluster, "why-not-cached", "-A")
    assert table.returncode == 1 and "\x1b[" not in table.stdout
    head = table.stdout.splitlines()
    assert head[1].startswith(
        f"{doc['summary']['pods']} serving pods in {doc['summary']['inferenceServices']} "
        f"InferenceServices: {doc['summary']['cached']} cached at admission"
    )
    assert any(line.split()[:2] == [NS, "fleet-a"] for line in head)


def test_scope_flags_narrow_one_list_of_pods(cluster):
    fleet = install_fleet(cluster, seed=7)
    mark = cluster.audit_mark()
    proc = kcache(cluster, "why-not-cached", "-n", NS, "-l", "kcache.test/fleet=yes", "-o", "json")
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    assert {p["name"] for p in doc["pods"]} == {p["metadata"]["name"] for p in fleet}
    mine = [e for e in cluster.audit_events(mark) if e.get("userAgent", "").startswith("kubectl-kcache")]
    assert {e["verb"] for e in mine} <= {"get", "list"}
    pod_lists = [e["requestURI"] for e in mine if e["objectRef"]["resource"] == "pods"]
    assert len(pod_lists) == 1 and f"/namespaces/{NS}/pods" in pod_lists[0]
    assert "labelSelector=serving.kserve.io%2Finferenceservice%2Ckcache.test%2Ffleet%3Dyes" in pod_lists[0]

    only = json.loads(kcache(cluster, "why-not-cached", "-n", NS, "--isvc", "fleet-c", "-o", "json").stdout)
    assert {p["inferenceService"] for p in only["pods"]} == {"fleet-c"}
    other = json.loads(kcache(cluster, "why-not-cached", "-n", NS_B, "-o", "json").stdout)
    assert {p["name"] for p in other["pods"]} == {"miss-namespace-selector"}
    bad = kcache(cluster, "why-not-cached", "-A", "-l", "a=b=c")
    assert bad.returncode == 2 and bad.stderr.startswith("error: -l: cannot read label selector term")


def test_producers_are_counted_apart_live_and_from_a_dump(cluster, tmp_path):
    """The pod a capture's active session names (and a pod of a revision still being captured) started cold by
    design: the fleet counts it as `producer`, never cold or `now`, and the single answer says so and exits 0;
    only the other cold pod of the same InferenceService is a miss."""
    install(cluster)
    revision = {"pod-template-hash": "7c5d9b8f46"}
    off = {"serving.kserve.io/kernelcache-sidecar-injection": "false"}
    made = [
        pod("prod-producer", "a", isvc="prod", node="gpu-1", labels=revision, annotations=off),
        pod("prod-cold", "a", isvc="prod", node="gpu-1", labels={"pod-template-hash": "0000000000"}, annotations=off),
        pod("capt-producer", "c", isvc="capt", node="gpu-1", labels=revision, annotations=off),
        pod("capt-second", "c", isvc="capt", node="gpu-1", labels=revision, annotations=off),
    ]
    cluster.kubectl("delete", "mutatingwebhookconfiguration", "kernelcache.serving.kserve.io")
    cluster.create(made)
    cluster.apply([b.capture("prod-kcc-7c5d9b8f46", isvc="prod"), b.capture("capt-kcc-7c5d9b8f46", isvc="capt")])
    cluster.apply(_webhook())
    session = {"id": "s-1", "podName": "prod-producer", "nodeName": "gpu-1"}
    ref = {"namespace": NS, "name": "kc-a"}
    cluster.set_status(
        "kernelcachecapture",
        "prod-kcc-7c5d9b8f46",
        {"phase": "Complete", "activeSession": session, "kernelCacheRef": ref},
        NS,
    )
    cluster.set_status(
        "kernelcachecapture",
        "capt-kcc-7c5d9b8f46",
        {"phase": "Capturing", "activeSession": {**session, "podName": "capt-producer"}},
        NS,
    )
    dump = str(tmp_path / "snap.yaml")
    assert kcache(cluster, "dump", "--file", dump).returncode == 0
    live = kcache(
        cluster, "why-not-cached", "-n", NS, "-l", "serving.kserve.io/inferenceservice in (prod,capt)", "-o", "json"
    )
    offline = kcache(
        cluster,
        "why-not-cached",
        "-n",
        NS,
        "-l",
        "serving.kserve.io/inferenceservice in (prod,capt)",
        "-o",
        "json",
        "--from-file",
        dump,
    )
    doc, offline_doc = json.loads(live.stdout), json.loads(offline.stdout)
    assert live.returncode == offline.returncode == 1  # prod-cold is a miss a recreate would fix
    assert doc.pop("source") and offline_doc.pop("source") and doc == offline_doc
    reasons = {p["name"]: (p["coldByDesign"] or {}).get("reason") for p in doc["pods"]}
    assert reasons == {
        "prod-producer": "producer",
        "prod-cold": None,
        "capt-producer": "producer",
        "capt-second": "being-captured",
    }
    by_isvc = {r["inferenceService"]: r for r in doc["inferenceServices"] if r["revision"] is None}
    assert [by_isvc["prod"][k] for k in ("pods", "cold", "wouldBeCachedNow", "producer")] == [2, 1, 1, 1]
    assert [by_isvc["capt"][k] for k in ("pods", "cold", "wouldBeCachedNow", "producer")] == [2, 0, 0, 2]
    singles = []
    for p in made:
        proc = kcache(cluster, "why-not-cached", p["metadata"]["name"], "-n", NS, "-o", "json")
        single = json.loads(proc.stdout)
        assert proc.returncode == (1 if p["metadata"]["name"] == "prod-cold" else 0), proc.stdout
        singles.append((NS, p["metadata"]["labels"]["serving.kserve.io/inferenceservice"], single))
    assert rows(doc) == counted(singles)
    producer = json.loads(kcache(cluster, "why-not-cached", "prod-producer", "-n", NS, "-o", "json").stdout)
    assert producer["notes"][-1].startswith(f"This pod produced KernelCache {NS}/kc-a")
    assert "delete pod" not in (producer["next"] or "")
