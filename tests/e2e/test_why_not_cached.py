"""why-not-cached on a real API server: serving pods created as KServe's pod webhook leaves them (a hit:
usage annotation, image volume, linker init container; a miss: none of these), their KernelCaches and
KernelCacheNodes (status through the status subresource), nodes, namespaces and the webhook configuration.
Each case is explained live and from a `dump` of the same cluster, identically; a read-only user without a
needed read gets exit 3 naming it; the command reads only what it needs."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from typing import Any

import pytest

from tests import builders as b

from .cluster import OWNED_LABEL

pytestmark = pytest.mark.e2e

NS, NS_B = "team-a", "team-b"
CONFIG = {
    "enabled": True,
    "defaultNodeGroup": "gpu",
    "artifactSecurity": {
        "mode": "cert",
        "cert": {
            "signingProfileRef": "kernelcache-signer",
            "trustBundle": "kserve/kernelcache-root-ca",
            "subjectRegexp": "spiffe://kserve/kernelcache-signer",
        },
    },
}
VERIFIED = {"mode": "cert", "state": "Succeeded", "verified": True, "reason": "VerificationSucceeded"}
EARLY = "2026-11-29T08:00:00Z"


def kcache(cluster, *args: str, context: str | None = None) -> subprocess.CompletedProcess:
    extra = ["--context", context] if context else []
    return subprocess.run(
        [sys.executable, "-m", "kubectl_kcache", *args, *extra],
        capture_output=True,
        text=True,
        env=cluster.env,
        timeout=120,
    )


def model(case: str) -> str:
    return f"hf://org/case-{case}"


def identity(case: str, ns: str = NS, **pod: Any) -> dict[str, Any]:
    return b.consumer_identity(
        ns, "qwen", pod.get("image", b.VLLM_DIGEST), model(case), pod.get("command"), pod.get("args"), pod.get("env")
    )


def cache(name: str, case: str, ns: str = NS, **kw: Any) -> dict[str, Any]:
    kc = b.consumer_cache(name, ns=ns, identity=kw.pop("identity", None) or identity(case, ns), **kw)
    kc["metadata"]["labels"] = {"kcache.test/case": case}
    return kc


def pod(name: str, case: str, ns: str = NS, **kw: Any) -> dict[str, Any]:
    kw.setdefault("model", model(case))
    p = b.consumer(name, ns=ns, status=False, **kw)
    p["spec"]["terminationGracePeriodSeconds"] = 0
    return p


# ---- the cluster ------------------------------------------------------------------------------------------

KC = {  # name -> KernelCache
    "kc-a": cache("kc-a", "a"),
    "kc-b": cache("kc-b", "b", identity=b.consumer_identity(NS, "other", b.VLLM_TAG, model("b"))),
    "kc-c": cache("kc-c", "c"),
    "kc-d": cache("kc-d", "d"),
    "kc-k": cache("kc-k", "k"),
    "kc-l": cache("kc-l", "l"),
    "kc-m": cache("kc-m", "m", cache_paths=[{"containerName": "kserve-container", "ociPath": "io.vllm.cache"}]),
    "kc-n": cache("kc-n", "n", cache_paths=[{"ociPath": "custom/cache"}]),
    "kc-o": cache("kc-o", "o", ns=NS_B, identity=identity("o")),
    "kc-p": cache("kc-p", "p"),
    "kc-s": cache("kc-s", "s", cache_paths=[{"containerName": "kserve-container"}]),
}
GONE = cache("kc-q", "q")  # has entries, but the KernelCache was deleted

PODS = [
    pod("hit-workload", "a", node="gpu-1", cache=KC["kc-a"]),
    pod("hit-compat", "b", image=b.VLLM_TAG, node="gpu-2", cache=KC["kc-b"]),
    pod("hit-outside-group", "c", node="cpu-1", cache=KC["kc-c"]),
    pod("miss-ready-later", "d", node="gpu-1"),
    pod("miss-unsupported", "a", supported=False),
    pod("miss-no-model", "a", model=None),
    pod("miss-latest", "a", image="registry.example.com/vllm/vllm-openai:latest"),
    pod("miss-no-runtime-container", "a", container_name="vllm"),
    pod("miss-sidecar-annotation", "a", annotations={"serving.kserve.io/kernelcache-sidecar-injection": "maybe"}),
    pod("miss-footprint", "a", args=["--dtype", "float16"]),
    pod("miss-entry-stale", "k"),
    pod("miss-verification", "l"),
    pod(
        "miss-container-path",
        "m",
        env=[{"name": "VLLM_CACHE_ROOT", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
    ),
    pod("miss-oci-path", "n"),
    pod("miss-wrong-namespace", "o"),
    pod("miss-no-ready-entry", "p"),
    pod("miss-kc-deleted", "q"),
    pod("miss-injection", "s", env=[{"name": "VLLM_CACHE_ROOT", "value": "cache"}]),
    pod("miss-namespace-selector", "a", ns=NS_B),
]

# pod -> (namespace, cached, now.kernelCache, now.match, now.blockedBy, now.outcome)
EXPECTED = {
    "hit-workload": (NS, True, "team-a/kc-a", "Workload", None, "cached"),
    "hit-compat": (NS, True, "team-a/kc-b", "Compatibility", None, "cached"),
    "hit-outside-group": (NS, True, "team-a/kc-c", "Workload", None, "cached"),
    "miss-ready-later": (NS, False, "team-a/kc-d", "Workload", None, "cached"),
    "miss-unsupported": (NS, False, None, None, "kernelcache-supported", "not-cached"),
    "miss-no-model": (NS, False, None, None, "model-source", "not-cached"),
    "miss-latest": (NS, False, None, None, "runtime-image", "not-cached"),
    "miss-no-runtime-container": (NS, False, None, None, "runtime-container", "rejected"),
    "miss-sidecar-annotation": (NS, False, None, None, "sidecar-annotation", "rejected"),
    "miss-footprint": (NS, False, None, None, "footprint", "not-cached"),
    "miss-entry-stale": (NS, False, None, None, "entry-matches-spec", "not-cached"),
    "miss-verification": (NS, False, None, None, "verification", "not-cached"),
    "miss-container-path": (NS, False, None, None, "container-path", "not-cached"),
    "miss-oci-path": (NS, False, None, None, "oci-path", "not-cached"),
    "miss-wrong-namespace": (NS, False, None, None, "namespace", "not-cached"),
    "miss-no-ready-entry": (NS, False, None, None, "entry-ready", "not-cached"),
    "miss-kc-deleted": (NS, False, None, None, "kernelcache-exists", "not-cached"),
    "miss-injection": (NS, False, None, None, "injection", "rejected"),
    "miss-namespace-selector": (NS_B, False, None, None, "namespace-selector", "not-called"),
}


def _kc_status(kc: dict[str, Any], at: str = EARLY, verification: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "state": "Ready",
        "verification": verification or VERIFIED,
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "CacheReady",
                "message": "cache is ready on all selected nodes",
                "lastTransitionTime": at,
            }
        ],
    }


def install(cluster) -> str:
    """The cluster above; returns the time the late cache became Ready (after its pod was created)."""
    cluster.kubectl("label", "namespace", NS_B, "control-plane=tenant", "--overwrite")
    cluster.kubectl("label", "namespace", NS, "control-plane-")
    cluster.apply(
        [
            b.config_map(CONFIG),
            b.group("gpu", {"pool": "gpu"}),
            b.node("gpu-1", {"pool": "gpu"}),
            b.node("gpu-2", {"pool": "gpu"}),
            b.node("cpu-1", {"pool": "cpu"}),
            b.kcn("gpu-1"),
            b.kcn("gpu-2"),
            *KC.values(),
            *PODS,
        ]
    )
    created = cluster.get("pod", "miss-ready-later", NS)["metadata"]["creationTimestamp"]
    late = (dt.datetime.fromisoformat(created.replace("Z", "+00:00")) + dt.timedelta(minutes=5)).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )
    for name, kc in KC.items():
        ns = kc["metadata"]["namespace"]
        ver = (
            {"mode": "cert", "state": "Failed", "verified": False, "reason": "VerifiedDigestMismatch"}
            if name == "kc-l"
            else None
        )
        cluster.set_status("kernelcache", name, _kc_status(kc, late if name == "kc-d" else EARLY, ver), ns)
    entries_1 = {
        f"{kc['metadata']['namespace']}/{n}": b.cache_entry(kc, last_update=late if n == "kc-d" else EARLY)
        for n, kc in KC.items()
        if n not in ("kc-b", "kc-p", "kc-k")
    }
    entries_1["team-a/kc-k"] = b.cache_entry(KC["kc-k"], last_update=EARLY, imageReference=b.image("older"))
    entries_1["team-a/kc-p"] = b.cache_entry(KC["kc-p"], state="Pulling", last_update=EARLY)
    entries_1["team-a/kc-q"] = b.cache_entry(GONE, last_update=EARLY)
    cluster.set_status("kernelcachenode", "gpu-1", {"cacheStatus": entries_1})
    cluster.set_status("kernelcachenode", "gpu-2", {"cacheStatus": {"team-a/kc-b": b.cache_entry(KC["kc-b"])}})
    cluster.apply(_webhook())  # last: it would call the (absent) webhook server for new pods
    return late


def _webhook() -> list[dict[str, Any]]:
    """KServe's pod webhook as a healthy install has it: its configuration, and a ready endpoint behind its
    Service (the test bed runs no webhook server; why-not-cached judges whether the API server can call it)."""
    webhook = b.webhook_configuration()
    webhook["metadata"]["labels"][OWNED_LABEL] = "true"  # the test bed's reset deletes it
    return [b.webhook_endpoints(), webhook]


def explain_both(cluster, dump: str, name: str, ns: str) -> dict[str, Any]:
    live = kcache(cluster, "why-not-cached", name, "-n", ns, "-o", "json")
    offline = kcache(cluster, "why-not-cached", name, "-n", ns, "-o", "json", "--from-file", dump)
    assert live.returncode in (0, 1), live.stderr
    assert offline.returncode == live.returncode, offline.stderr
    doc = json.loads(live.stdout)
    offline_doc = json.loads(offline.stdout)
    assert doc.pop("source")["from"] == "live" and offline_doc.pop("source")["from"] == "file"
    assert doc == offline_doc, name
    result = doc["result"]
    # exit 0: a cache at admission, or cold by design (a producer); 1 also when a replacement would be denied
    negative = not (result["cached"] or result["coldByDesign"]) or result["now"]["outcome"] == "rejected"
    assert live.returncode == (1 if negative else 0)
    return doc


def test_every_case_live_and_from_a_dump(cluster, tmp_path):
    late = install(cluster)
    dump = str(tmp_path / "snap.yaml")
    proc = kcache(cluster, "dump", "--file", dump)
    assert proc.returncode == 0, proc.stderr
    docs = {}
    for name, (ns, cached, kc, match, blocked, outcome) in EXPECTED.items():
        doc = explain_both(cluster, dump, name, ns)
        now = doc["result"]["now"]
        assert (doc["result"]["cached"], now["kernelCache"], now["match"], now["blockedBy"], now["outcome"]) == (
            cached,
            kc,
            match,
            blocked,
            outcome,
        ), name
        docs[name] = doc
    assert len(docs) >= 12

    hit = docs["hit-workload"]
    assert hit["result"]["kernelCache"] == "team-a/kc-a"
    assert hit["result"]["placement"] == {
        "node": "gpu-1",
        "group": "gpu",
        "nodeInGroup": True,
        "entryOnNode": "Ready",
        "preparedOnNode": True,
    }
    cold = docs["hit-outside-group"]
    assert cold["result"]["placement"]["nodeInGroup"] is False
    assert any(
        n.startswith("KServe adds no node affinity: the pod runs on node cpu-1, outside group gpu")
        for n in cold["notes"]
    )
    later = docs["miss-ready-later"]
    assert any(
        f"its Ready entries were last updated at {late}" in n and "Recreate the pod" in n for n in later["notes"]
    )
    assert later["next"] == "kubectl -n team-a delete pod miss-ready-later"
    stale = next(c for c in docs["miss-entry-stale"]["candidates"] if c["kernelCache"] == "team-a/kc-k")
    assert stale["detail"].startswith(
        f"entry on gpu-1 is Ready but its imageReference is "
        f"@sha256:{b.image('older').split(':')[-1][:12]}..., the KernelCache says "
        f"@sha256:{KC['kc-k']['spec']['artifact']['imageReference'].split(':')[-1][:12]}"
    )
    wrong = docs["miss-wrong-namespace"]["candidates"]
    assert [(c["kernelCache"], c["rejectedBy"]) for c in wrong if c["rejectedBy"] == "namespace"] == [
        ("team-b/kc-o", "namespace")
    ]
    assert docs["miss-injection"]["result"]["now"]["denial"].endswith('invalid cache containerPath "cache"')
    verification = next(c for c in docs["miss-verification"]["candidates"] if c["kernelCache"] == "team-a/kc-l")
    assert 'artifactSecurity.mode is "cert"; status.verification is mode cert, state Failed' in verification["detail"]

    tree = kcache(cluster, "why-not-cached", "miss-ready-later", "-n", NS)
    assert tree.returncode == 1 and "\x1b[" not in tree.stdout
    assert "The cache became Ready after the pod was created" in " ".join(tree.stdout.split())


def test_feature_switches_and_the_webhook_itself(cluster, tmp_path):
    install(cluster)
    cluster.apply(b.config_map({**CONFIG, "enabled": False}))
    dump = str(tmp_path / "off.yaml")
    assert kcache(cluster, "dump", "--file", dump).returncode == 0
    doc = explain_both(cluster, dump, "hit-workload", NS)
    assert doc["result"]["cached"] is True and doc["result"]["now"]["blockedBy"] == "enabled"
    cluster.apply(b.config_map(CONFIG))
    cluster.kubectl("delete", "mutatingwebhookconfiguration", "kernelcache.serving.kserve.io")
    dump = str(tmp_path / "no-webhook.yaml")
    assert kcache(cluster, "dump", "--file", dump).returncode == 0
    doc = explain_both(cluster, dump, "miss-ready-later", NS)
    assert (doc["result"]["now"]["blockedBy"], doc["result"]["now"]["outcome"]) == ("webhook-installed", "not-called")


def test_mount_type_with_the_crd_variant_that_allows_pvc(cluster, tmp_path):
    """KServe's API PR #6221 variant of the CRD accepts mountType pvc; the webhook only mounts oci."""
    crd = "kernelcaches.serving.kserve.io"
    path = "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/mountType/enum"
    cluster.kubectl("label", "namespace", NS, "control-plane-")
    cluster.kubectl(
        "patch", "crd", crd, "--type=json", "-p", json.dumps([{"op": "replace", "path": path, "value": ["pvc", "oci"]}])
    )
    try:
        cluster.wait_for("the CRD variant", lambda: "pvc" in json.dumps(cluster.get("crd", crd)["spec"]))
        kc = cache("kc-t", "t", mount_type="pvc")
        cluster.apply(
            [
                b.config_map(CONFIG),
                b.group("gpu", {"pool": "gpu"}),
                b.node("gpu-1", {"pool": "gpu"}),
                b.kcn("gpu-1"),
                b.namespace(NS),
                pod("miss-mount-type", "t", node="gpu-1"),
            ]
        )
        cluster.wait_for(
            "the KernelCache with mountType pvc",
            lambda: cluster.kubectl("apply", "-f", "-", input=json.dumps(kc), check=False).returncode == 0,
        )
        cluster.set_status("kernelcache", "kc-t", _kc_status(kc), NS)
        cluster.set_status("kernelcachenode", "gpu-1", {"cacheStatus": {"team-a/kc-t": b.cache_entry(kc)}})
        cluster.apply(_webhook())
        dump = str(tmp_path / "pvc.yaml")
        assert kcache(cluster, "dump", "--file", dump).returncode == 0
        doc = explain_both(cluster, dump, "miss-mount-type", NS)
        assert doc["result"]["now"]["blockedBy"] == "mount-type"
        assert doc["candidates"][0]["detail"] == 'spec.mountType is "pvc": the webhook only mounts oci caches'
    finally:
        cluster.kubectl("delete", "kernelcaches", "--all", "-A", check=False)
        cluster.kubectl(
            "patch", "crd", crd, "--type=json", "-p", json.dumps([{"op": "replace", "path": path, "value": ["oci"]}])
        )


def test_read_only_user_without_a_needed_read_and_reads_made(cluster):
    install(cluster)
    rules = [
        {
            "apiGroups": [""],
            "resources": ["pods", "configmaps", "namespaces", "nodes"],
            "verbs": ["get", "list", "watch"],
        },
        {
            "apiGroups": ["serving.kserve.io"],
            "resources": ["kernelcaches", "kernelcachenodegroups"],
            "verbs": ["get", "list", "watch"],
        },
    ]
    cluster.apply(
        [
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": {"name": "kcache-test-consumer-reader", "labels": {OWNED_LABEL: "true"}},
                "rules": rules,
            },
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": "kcache-test-consumer-reader", "labels": {OWNED_LABEL: "true"}},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": "kcache-test-consumer-reader",
                },
                "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}],
            },
        ]
    )
    proc = kcache(cluster, "why-not-cached", "hit-workload", "-n", NS, context="alice")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "cannot list kernelcachenodes (forbidden)" in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout == ""

    mark = cluster.audit_mark()
    assert kcache(cluster, "why-not-cached", "hit-workload", "-n", NS).returncode == 0
    mine = [e for e in cluster.audit_events(mark) if e.get("userAgent", "").startswith("kubectl-kcache")]
    assert {e["verb"] for e in mine} <= {"get", "list"}
    by_resource = {}
    for e in mine:
        by_resource.setdefault(e["objectRef"]["resource"], []).append(e["requestURI"])
    assert len(by_resource["nodes"]) == 1 and "fieldSelector=metadata.name%3Dgpu-1" in by_resource["nodes"][0]
    assert all("fieldSelector=metadata.name" in u for u in by_resource["pods"] + by_resource["namespaces"])
    assert len(mine) <= 10


# ---- the capture sidecar step (the last gates of admission) ------------------------------------------------

PROBE = {"readinessProbe": {"httpGet": {"path": "/health", "port": 8080}}}
REVISION = {"pod-template-hash": "669889f77f"}
SIDECAR_CONFIG = {**CONFIG, "registry": {"endpoint": "registry.example:5000"}}
SIDECAR_PODS = {  # pod -> (kwargs of pod(), now.blockedBy, now.outcome, denial ending)
    "sc-cached-no-probe": (
        {"case": "a", "node": "gpu-1", "cache": KC["kc-a"]},
        "readiness-probe",
        "rejected",
        'container "kserve-container" requires an HTTP readinessProbe for MCV capture',
    ),
    "sc-latest-named-port": (
        {
            "case": "a",
            "image": "registry.example.com/vllm/vllm-openai:latest",
            "container": {"readinessProbe": {"httpGet": {"path": "/health", "port": "http"}}},
        },
        "readiness-probe",
        "rejected",
        'container "kserve-container" readinessProbe references unknown named port "http"',
    ),
    "sc-host": (
        {
            "case": "a",
            "container": {"readinessProbe": {"httpGet": {"path": "/health", "port": 8080, "host": "10.0.0.9"}}},
        },
        "readiness-probe",
        "rejected",
        'readinessProbe host: must be localhost or a loopback address, got "10.0.0.9"',
    ),
    "sc-read-only": (
        {
            "case": "a",
            "container": {
                **PROBE,
                "volumeMounts": [{"name": "models", "mountPath": "/root/.cache/vllm", "readOnly": True}],
            },
            "volumes": [{"name": "models", "emptyDir": {}}],
        },
        "capture-mounts",
        "rejected",
        'capture path "/root/.cache/vllm" is read-only',
    ),
    "sc-opt-out": (
        {"case": "a", "annotations": {"serving.kserve.io/kernelcache-sidecar-injection": "false"}},
        "footprint",
        "not-cached",
        None,
    ),
    "sc-ok": ({"case": "a", "node": "gpu-1", "cache": KC["kc-a"], "container": PROBE}, None, "cached", None),
}


def test_capture_sidecar_gates_live_and_from_a_dump(cluster, tmp_path):
    """The webhook's capture sidecar step after the cache: a pod of a ReplicaSet (pod-template-hash) without an
    HTTP readinessProbe on loopback, or with a read-only capture path, is rejected, a matched cache and a
    :latest image included; a terminal capture of the revision skips the step, a generated ProducerGone one
    does not; the pod annotation turns it off."""
    install(cluster)
    cluster.apply(b.config_map(SIDECAR_CONFIG))
    pods = []
    for name, (kw, *_rest) in SIDECAR_PODS.items():
        kw = dict(kw)
        case = kw.pop("case")
        kw["labels"] = {**REVISION, **kw.get("labels", {})}
        kw["isvc"] = name  # one capture per InferenceService and revision
        if name in ("sc-opt-out", "sc-read-only"):  # no cache: the cache step would refuse the mount first
            kw["args"] = ["--dtype", "float16"]
        pods.append(pod(name, case, **kw))
    terminal, retry = "sc-terminal", "sc-retry"
    for name in (terminal, retry):
        pods.append(pod(name, "a", isvc=name, labels=REVISION))
    gone = b.capture(f"{retry}-kcc-669889f77f", isvc=retry)
    gone["metadata"]["labels"] = {"internal.serving.kserve.io/kernelcache-capture-generated": "true"}
    cluster.kubectl("delete", "mutatingwebhookconfiguration", "kernelcache.serving.kserve.io")
    cluster.apply([*pods, b.capture(f"{terminal}-kcc-669889f77f", isvc=terminal), gone])
    cluster.apply(_webhook())
    cluster.set_status("kernelcachecapture", f"{terminal}-kcc-669889f77f", {"phase": "Complete"}, NS)
    cluster.set_status(
        "kernelcachecapture",
        f"{retry}-kcc-669889f77f",
        {
            "phase": "Failed",
            "conditions": [
                {
                    "type": "Ready",
                    "status": "False",
                    "reason": "ProducerGone",
                    "message": "capture producer Pod no longer exists",
                    "lastTransitionTime": EARLY,
                }
            ],
        },
        NS,
    )
    dump = str(tmp_path / "sidecar.yaml")
    assert kcache(cluster, "dump", "--file", dump).returncode == 0
    for name, (_kw, blocked, outcome, denial) in SIDECAR_PODS.items():
        # each pod is its own InferenceService: the cache (of qwen) matches by compatibility at most
        doc = explain_both(cluster, dump, name, NS)
        now = doc["result"]["now"]
        gates = {g["id"]: g for g in doc["gates"]}
        if name in ("sc-cached-no-probe", "sc-ok"):
            assert gates["injection"]["passed"] is True, name
        assert (now["outcome"], now["blockedBy"]) == (outcome, blocked), name
        if outcome == "rejected":
            assert now["denial"].startswith(
                'admission webhook "kernelcache.kserve-webhook-server.pod-mutator" denied the request: '
            ) and now["denial"].endswith(denial), name
            assert now["kernelCache"] is None, name
        else:
            assert now["denial"] is None, name
    opt_out = explain_both(cluster, dump, "sc-opt-out", NS)
    assert {g["id"]: g for g in opt_out["gates"]}["sidecar"]["detail"].startswith(
        'skipped: annotation serving.kserve.io/kernelcache-sidecar-injection: "false"'
    )
    skipped = explain_both(cluster, dump, terminal, NS)
    assert {g["id"]: g for g in skipped["gates"]}["sidecar"]["detail"] == (
        f"skipped: capture {terminal}-kcc-669889f77f is Complete: a terminal capture gets no new sidecar"
    )
    assert skipped["result"]["now"]["outcome"] != "rejected"
    retried = explain_both(cluster, dump, retry, NS)
    assert retried["result"]["now"]["outcome"] == "rejected"
    assert retried["result"]["now"]["blockedBy"] == "readiness-probe"
