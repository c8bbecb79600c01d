"""One label selector, read the way kubectl reads it: on a real API server, `status -l` (which selects
KernelCaches itself) and `why-not-cached -A -l` (which hands the selector to the API server live, and selects
the pods itself from a dump) pick exactly the objects `kubectl get -l` picks, for equality, set-based and
existence terms alike."""

from __future__ import annotations

import json

import pytest

from .test_fleet_hit_rate import install_fleet
from .test_why_not_cached import NS, kcache

pytestmark = pytest.mark.e2e

# what operators type: kubectl's grammar, every operator, spaces where kubectl allows them
SELECTORS = [
    "tier=gold",
    "tier==gold",
    "tier!=gold",
    "tier in (gold)",
    "tier in (gold, silver)",
    "tier notin (gold)",
    "a notin (b)",
    "tier",
    "!tier",
    "!x",
    "tier,team=ml",
    "tier notin (gold,silver),!team",
]
TIERS = ["gold", "silver", "bronze", None]


def kubectl_names(cluster, resource: str, selector: str, extra: str = "") -> set[str]:
    labels = f"{selector},{extra}" if extra else selector
    out = cluster.kubectl("get", resource, "-A", "-l", labels, "-o", "json").stdout
    return {f"{item['metadata']['namespace']}/{item['metadata']['name']}" for item in json.loads(out)["items"]}


def label(cluster, kind: str, namespace: str, name: str, i: int) -> None:
    tier = TIERS[i % len(TIERS)]
    labels = [f"tier={tier}" if tier else "tier-", "team=ml" if i % 3 == 0 else "team-"]
    cluster.kubectl("label", kind, name, "-n", namespace, "--overwrite", *labels)


def status_caches(doc: dict) -> set[str]:
    return {name for g in doc["groups"] for name in g["caches"]} | {u["name"] for u in doc["unassignedCaches"]}


def test_status_and_the_fleet_view_select_what_kubectl_selects(cluster, tmp_path):
    fleet = install_fleet(cluster, seed=11)
    caches = json.loads(cluster.kubectl("get", "kernelcaches", "-A", "-o", "json").stdout)["items"]
    assert len(caches) >= len(TIERS) * 2
    for i, kc in enumerate(sorted(caches, key=lambda o: (o["metadata"]["namespace"], o["metadata"]["name"]))):
        label(cluster, "kernelcache", kc["metadata"]["namespace"], kc["metadata"]["name"], i)
    for i, pod in enumerate(sorted(p["metadata"]["name"] for p in fleet)):
        label(cluster, "pod", NS, pod, i)
    dump = tmp_path / "dump.json"
    made = kcache(cluster, "dump", "-o", "json", "--file", str(dump))
    assert made.returncode == 0, made.stderr

    selected = set()
    for selector in SELECTORS:
        caches = kubectl_names(cluster, "kernelcaches", selector)
        live = kcache(cluster, "status", "-l", selector, "-o", "json")
        assert live.returncode == 0, (selector, live.stderr)
        assert status_caches(json.loads(live.stdout)) == caches, selector
        offline = kcache(cluster, "status", "-f", str(dump), "-l", selector, "-o", "json")
        assert status_caches(json.loads(offline.stdout)) == caches, selector

        pods = kubectl_names(cluster, "pods", selector, "serving.kserve.io/inferenceservice")
        for source in ([], ["-f", str(dump)]):
            fleet_view = kcache(cluster, "why-not-cached", "-A", "-l", selector, *source, "-o", "json")
            assert fleet_view.returncode in (0, 1), (selector, fleet_view.stderr)
            chosen = {f"{p['namespace']}/{p['name']}" for p in json.loads(fleet_view.stdout)["pods"]}
            assert chosen == pods, (selector, source)
        selected.add((len(caches), len(pods)))
    assert len(selected) > 4, "the selectors pick different sets, so agreeing is not trivial"
