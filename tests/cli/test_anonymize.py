"""`dump --anonymize` on the bundled broken cluster (its dump, anonymized as `dump --anonymize` writes it):
every read command gives the same answer on the anonymized copy, once the original's answer has its names
replaced by the same tokens; no node, namespace, InferenceService, pod, registry or image name is left;
label keys and KServe's own names are kept."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kubectl_kcache.anonymize import Anonymizer, anonymize

ROOT = Path(__file__).resolve().parents[2]
BROKEN = ROOT / "examples" / "broken-cluster.yaml"
CUT_HASH = re.compile(r"sha256:[0-9a-f]{12}\.\.\.")  # a footprint cut for people: not mapped back, not compared


@pytest.fixture(scope="module")
def dumps(tmp_path_factory: pytest.TempPathFactory):
    doc = yaml.safe_load(BROKEN.read_text())
    items, meta = anonymize(doc["items"], doc["meta"])
    out = tmp_path_factory.mktemp("anon") / "anonymized.json"
    out.write_text(json.dumps({"kind": doc["kind"], "version": doc["version"], "meta": meta, "items": items}))
    return doc, Anonymizer(doc["items"]), out


def answer(*args: str) -> tuple[int, dict | None, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "kubectl_kcache", *args, "-o", "json"], capture_output=True, text=True, timeout=120
    )
    doc = json.loads(proc.stdout) if proc.stdout.strip() else None
    if doc:
        doc.pop("source", None)
    return proc.returncode, doc, proc.stderr


def same_answer(anon: Anonymizer, original: list[str], anonymized: list[str], copy: Path) -> None:
    code1, doc1, err1 = answer(*original, "--from-file", str(BROKEN))
    code2, doc2, err2 = answer(*anonymized, "--from-file", str(copy))
    assert code1 == code2, (original, err1, err2)
    assert doc1 is not None, (original, err1)
    mapped = json.loads(anon.replace(json.dumps(doc1)))
    expected, got = CUT_HASH.sub("~", json.dumps(mapped)), CUT_HASH.sub("~", json.dumps(doc2))
    assert json.loads(expected) == json.loads(got), original


def isvc_pods(doc: dict) -> list[tuple[str, str]]:
    return [
        (i["metadata"]["namespace"], i["metadata"]["name"])
        for i in doc["items"]
        if i["kind"] == "Pod" and "serving.kserve.io/inferenceservice" in (i["metadata"].get("labels") or {})
    ]


def test_doctor_and_status_answer_the_same(dumps):
    doc, anon, copy = dumps
    same_answer(anon, ["doctor"], ["doctor"], copy)
    same_answer(anon, ["status"], ["status"], copy)


def test_why_not_cached_and_why_group_answer_the_same_for_every_pod_and_capture(dumps):
    doc, anon, copy = dumps
    pods = isvc_pods(doc)
    assert len(pods) >= 4
    for ns, pod in pods:
        for command in ("why-not-cached", "why-group"):
            same_answer(anon, [command, pod, "-n", ns], [command, anon.replace(pod), "-n", anon.replace(ns)], copy)
    captures = [
        (i["metadata"]["namespace"], i["metadata"]["name"]) for i in doc["items"] if i["kind"] == "KernelCacheCapture"
    ]
    assert captures
    for ns, capture in captures:
        same_answer(
            anon,
            ["why-group", "--capture", capture, "-n", ns],
            ["why-group", "--capture", anon.replace(capture), "-n", anon.replace(ns)],
            copy,
        )


def test_no_name_is_left_and_each_has_one_token(dumps):
    doc, anon, copy = dumps
    text = copy.read_text()
    nodes = {i["metadata"]["name"] for i in doc["items"] if i["kind"] in ("Node", "KernelCacheNode")}
    namespaces = {ns for ns, _ in isvc_pods(doc)}
    pods = {p for _, p in isvc_pods(doc)}
    hosts = {"harbor.ml.example.com"}
    for name in nodes | namespaces | pods | hosts | {"arn:aws:eks:us-west-2:210987654321:cluster/gpu-staging"}:
        assert name not in text, name
    tokens = {anon.replace(n) for n in nodes}
    assert len(tokens) == len(nodes) and all(t.startswith("anon-node-") for t in tokens)
    anonymized = json.loads(text)
    by_name = {i["metadata"]["name"]: i for i in anonymized["items"] if i["kind"] == "Node"}
    assert set(by_name) <= tokens
    scheduled = {i["spec"].get("nodeName") for i in anonymized["items"] if i["kind"] == "Pod"} - {None}
    assert scheduled <= tokens, "pods name the nodes by their tokens"
    kcns = {i["metadata"]["name"] for i in anonymized["items"] if i["kind"] == "KernelCacheNode"}
    nodes_with_kcn = {i["metadata"]["name"] for i in doc["items"] if i["kind"] == "Node"} & {
        i["metadata"]["name"] for i in doc["items"] if i["kind"] == "KernelCacheNode"
    }
    assert nodes_with_kcn and {anon.replace(n) for n in nodes_with_kcn} <= kcns & set(by_name), (
        "a KernelCacheNode keeps its node's name"
    )


def test_label_keys_and_kserve_names_are_kept(dumps):
    doc, anon, copy = dumps
    anonymized = json.loads(copy.read_text())
    keys = lambda d: sorted(k for i in d["items"] for k in (i["metadata"].get("labels") or {}))  # noqa: E731
    assert keys(anonymized) == keys(doc)
    names = {(i["kind"], i["metadata"].get("namespace"), i["metadata"]["name"]) for i in anonymized["items"]}
    assert ("ConfigMap", "kserve", "inferenceservice-config") in names
    assert ("DaemonSet", "kserve", "kserve-kernelcachenode-agent") in names
    groups = {i["metadata"]["name"] for i in doc["items"] if i["kind"] == "KernelCacheNodeGroup"}
    assert groups == {i["metadata"]["name"] for i in anonymized["items"] if i["kind"] == "KernelCacheNodeGroup"}
    assert "kserve/kserve-kernelcachenode-agent:v0.17.0" in copy.read_text()
    assert anonymized["meta"]["cluster"] == "anonymized"


def test_a_captures_reporter_and_pusher_names_are_derived_again():
    """kernel-cache-reporter-<capture>-<hash> and kernel-cache-pusher-<capture>-<hash> hold the capture's name: they
    are made again from its token, as KServe would have named them, so capture-identity finds them."""
    from kubectl_kcache.kernelcache.names import pusher_name, reporter_name

    cap = "qwen-kcc-669889f77f"
    items = [
        {
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "KernelCacheCapture",
            "metadata": {"name": cap, "namespace": "team-x"},
            "spec": {"sourceRef": {"kind": "InferenceService", "name": "qwen"}},
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "qwen-predictor-669889f77f-abcde",
                "namespace": "team-x",
                "labels": {"serving.kserve.io/inferenceservice": "qwen", "pod-template-hash": "669889f77f"},
            },
        },
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": reporter_name(cap), "namespace": "team-x"}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": pusher_name(cap), "namespace": "team-x"}},
    ]
    out, _ = anonymize(items, {"cluster": "c", "server": "https://s"})
    new_cap = out[0]["metadata"]["name"]
    assert new_cap != cap and "qwen" not in json.dumps(out)
    assert out[2]["metadata"]["name"] == reporter_name(new_cap)
    assert out[3]["metadata"]["name"] == pusher_name(new_cap)
