"""`kubectl kcache dump --anonymize` against the real API server: the anonymized dump of a cluster gives the
doctor's, status's, why-group's and why-not-cached's answers of the plain dump, with the names replaced."""

from __future__ import annotations

import json
import re

import pytest

from kubectl_kcache.anonymize import Anonymizer
from tests import builders as b

pytestmark = pytest.mark.e2e
NS = "team-b"  # a namespace the test bed empties before each test
ISVC = "qwen7b-chat"  # a name no message of the plugin holds as a word: the comparison maps names in answers
CAPTURE = f"{ISVC}-kcc-7d9f8c6b5"  # KServe's generated name for that ISVC, pod-template-hash 7d9f8c6b5
POD = f"{ISVC}-predictor-7d9f8c6b5-abcde"


def install(cluster) -> None:
    """A producer that ran on a node of no group (why-group falls back to the default), its capture, a
    group with a node and its KernelCacheNode, the agent."""
    producer = b.pod(
        POD,
        NS,
        node_name="cpu-1",
        labels={"serving.kserve.io/inferenceservice": ISVC, "pod-template-hash": "7d9f8c6b5"},
    )
    del producer["status"]
    cluster.apply(
        [
            b.config_map({"enabled": True, "defaultNodeGroup": "gpu"}),
            b.group("gpu", {"pool": "gpu"}),
            b.node("gpu-1", {"pool": "gpu"}),
            b.node("cpu-1", {}),
            b.kcn("gpu-1"),
            b.agent_daemonset(terms=[b.term({"pool": "gpu"})]),
            b.controller_deployment(ready=None),
            producer,
            b.capture(CAPTURE, NS, isvc=ISVC),
        ]
    )
    status = b.capture_status(pod=POD, node_name="cpu-1")
    status["conditions"][0]["observedGeneration"] = cluster.get("kernelcachecapture", CAPTURE, NS)["metadata"][
        "generation"
    ]
    cluster.set_status("kernelcachecapture", CAPTURE, status, NS)


CUT_HASH = re.compile(r"sha256:[0-9a-f]{12}\.\.\.")


def test_an_anonymized_dump_gives_the_same_answers(cluster, tmp_path):
    install(cluster)
    plain, anonymized = tmp_path / "plain.json", tmp_path / "anonymized.json"
    for path, extra in ((plain, []), (anonymized, ["--anonymize"])):
        proc = cluster.kcache("dump", "-o", "json", "--file", str(path), *extra)
        assert proc.returncode == 0, proc.stderr
    text = anonymized.read_text()
    for name in (NS, ISVC, "gpu-1", "cpu-1", cluster.server):
        assert name not in text, name
    anon = Anonymizer(json.loads(plain.read_text())["items"])
    for args, anon_args in (
        (["doctor"], ["doctor"]),
        (["status"], ["status"]),
        (["why-group", POD, "-n", NS], ["why-group", anon.replace(POD), "-n", anon.replace(NS)]),
        (
            ["why-group", "--capture", CAPTURE, "-n", NS],
            ["why-group", "--capture", anon.replace(CAPTURE), "-n", anon.replace(NS)],
        ),
        (["why-not-cached", POD, "-n", NS], ["why-not-cached", anon.replace(POD), "-n", anon.replace(NS)]),
    ):
        one = cluster.kcache(*args, "-o", "json", "--from-file", str(plain))
        two = cluster.kcache(*anon_args, "-o", "json", "--from-file", str(anonymized))
        assert one.returncode == two.returncode, (args, one.stderr, two.stderr)
        doc1, doc2 = json.loads(anon.replace(one.stdout)), json.loads(two.stdout)
        doc1.pop("source"), doc2.pop("source")
        assert json.loads(CUT_HASH.sub("~", json.dumps(doc1))) == json.loads(CUT_HASH.sub("~", json.dumps(doc2))), args
