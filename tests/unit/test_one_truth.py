"""One truth (issue 13): on generated snapshots, doctor, why-group and reconcile's plan give the same answer
for every capture, because each calls the one function in kernelcache/ that holds KServe's rule.

- doctor's capture, group-overlap and config findings agree with why-group's result for every capture;
- the plan creates exactly the KernelCaches doctor says are missing, and links exactly the captures doctor
  says are unlinked.
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_kcache.checks import run_doctor
from kubectl_kcache.explain import explain
from kubectl_kcache.kernelcache.capture import capture_complete
from kubectl_kcache.kernelcache.names import generated_kernel_cache_name
from kubectl_kcache.reconcile.planner import plan
from kubectl_kcache.snapshot.kinds import KINDS
from kubectl_kcache.snapshot.model import build
from kubectl_kcache.snapshot.reads import Read
from tests import builders as b

NS = "team"
LABELS = {"role": ("gpu", "cpu"), "zone": ("east", "west")}
GROUP_NAMES = ("alpha", "beta", "gamma")
NODE_NAMES = ("n1", "n2", "n3")
SIGNED_CERT = {"mode": "cert", "state": "Succeeded", "signed": True, "reason": "SigningSucceeded"}
FAILED_CERT = {"mode": "cert", "state": "Failed", "signed": False, "reason": "SignerUnavailable"}
EXAMPLES = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def labels() -> st.SearchStrategy[dict[str, str]]:
    return st.fixed_dictionaries({}, optional={k: st.sampled_from(v) for k, v in LABELS.items()})


@st.composite
def snapshots(draw: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """A cluster: nodes and groups over two labels, a configuration whose default may be a group, a missing
    group or a label, and captures whose sessions point at nodes and groups that may or may not exist, some
    with their KernelCache (right or wrong artifact), some sharing a generated name."""
    items: list[dict[str, Any]] = []
    group_names = draw(st.lists(st.sampled_from(GROUP_NAMES), unique=True, max_size=3))
    for name in group_names:
        key = draw(st.sampled_from(sorted(LABELS)))
        selector = draw(st.one_of(st.just({key: LABELS[key][0]}), labels().filter(bool)))
        items.append(b.group(name, selector))
    for name in NODE_NAMES:
        full = st.fixed_dictionaries({k: st.sampled_from(v) for k, v in LABELS.items()})
        items.append(b.node(name, draw(st.one_of(full, full, labels()))))
    default = draw(st.sampled_from(["", "alpha", "beta", "missing", "role", "role=gpu"]))
    config: dict[str, Any] = {"enabled": True, "defaultNodeGroup": default}
    if draw(st.sampled_from([False, False, True])):  # cert turned on: captures signed before are signed again
        config["artifactSecurity"] = {"mode": "cert", "cert": {"signingProfileRef": "signer"}}
    items.append(b.config_map(config))
    captures = []
    for i in range(draw(st.integers(0, 4))):
        name = draw(st.sampled_from([f"model-{i}", f"model-{i}-capture", "shared", "shared-capture"]))
        if name in captures:
            continue
        captures.append(name)
        seed = draw(st.sampled_from(["cache", "cache", "other"]))
        status = b.capture_status(
            seed=seed,
            node_name=draw(st.sampled_from(["", *NODE_NAMES, *NODE_NAMES, *NODE_NAMES, "gone"])),
            requested=draw(st.sampled_from(["", "", "", "", *GROUP_NAMES, "missing"])),
            phase=draw(st.sampled_from(["Complete", "Complete", "Complete", "Pushing"])),
            signing=draw(st.sampled_from([None, None, SIGNED_CERT, FAILED_CERT])),
        )
        kc_name = generated_kernel_cache_name(name, b.image(seed))
        linked = draw(st.booleans())
        if linked:
            status["kernelCacheRef"] = {"namespace": NS, "name": kc_name}
        capture = b.capture(name, NS, status=status)
        if draw(st.booleans()):
            capture["spec"]["signing"] = {"profileRef": {"name": "signer"}}
        items.append(capture)
        if draw(st.sampled_from(["none", "none", "same", "other"])) != "none" or linked and draw(st.booleans()):
            kc_seed = seed if draw(st.sampled_from([True, True, False])) else "different"
            kc = b.kernel_cache(kc_name, NS, group_name="alpha", seed=kc_seed)
            if draw(st.sampled_from([False, False, False, True])):  # deleted, held by a finalizer
                kc["metadata"].update({"deletionTimestamp": "2026-11-29T09:00:00Z", "finalizers": ["x/hold"]})
            items.append(kc)
    return items, captures


def snapshot_of(items: list[dict[str, Any]]) -> Any:
    """As read live: every list succeeded, so an absent object is absent from the cluster."""
    return build(items, reads=[Read(resource, None, "ok") for resource in sorted({k.plural for k in KINDS})])


CREATE = re.compile(r"KServe would create (\S+)/(\S+) for group (\S+) \(source (\w+)\)")


@EXAMPLES
@given(snapshots())
def test_doctor_and_why_group_agree_on_every_capture(drawn):
    items, captures = drawn
    snapshot = snapshot_of(items)
    report = run_doctor(snapshot)
    for name in captures:
        why = explain(snapshot, NS, capture_name=name).to_dict()
        mine = [f for f in report.findings if f.check == "capture" and f.object.name == name]
        result = why["result"]
        blocked = [f for f in mine if "KServe cannot select a node group" in f.message]
        creates = [m for f in mine for m in CREATE.finditer(f.message)]
        if blocked:  # doctor says selection fails: why-group says the same, with KServe's reason and message
            assert result["group"] is None
            assert f"{result['reason']}: {result['message']}" in blocked[0].message
        if creates:  # doctor says KServe would create it in a group: why-group selects that group
            ((_, _, group, source),) = (m.groups() for m in creates)
            assert (result["group"], result["source"]) == (group, source)
        ambiguous = result["reason"] == "AmbiguousNodeGroup"
        listed = any(
            f"blocked capture: {NS}/{name}" in f.evidence for f in report.findings if f.check == "group-overlap"
        )
        assert listed == (ambiguous and bool(blocked)), (name, why, report.findings)
    label_default = [f for f in report.findings if f.check == "config" and "looks like a node label" in f.message]
    for name in captures:
        steps = explain(snapshot, NS, capture_name=name).steps
        said = any(s.step == "default" and "looks like a node label" in s.detail for s in steps)
        assert said == bool(label_default)


@EXAMPLES
@given(snapshots())
def test_the_plan_creates_what_doctor_says_is_missing_and_links_what_it_says_is_unlinked(drawn):
    items, _ = drawn
    snapshot = snapshot_of(items)
    report = run_doctor(snapshot)
    missing = {
        (m.group(1), m.group(2), m.group(3))
        for f in report.findings
        if f.check == "capture"
        for m in CREATE.finditer(f.message)
    }
    actions = plan(snapshot).actions
    created = {(a.namespace, a.name, a.node_group) for a in actions if a.verb == "create" and a.kind == "KernelCache"}
    assert created == missing
    unlinked = {f.object.name for f in report.findings if f.check == "capture" and "is not linked" in f.message}
    linked = {a.name for a in actions if a.verb == "update-status"}
    assert unlinked <= linked  # plus the links that follow a creation
    assert linked - unlinked <= {
        a.name
        for a in actions
        if a.verb == "update-status" and any(c.verb == "create" and c.name == a.related for c in actions)
    }
    # a capture whose KernelCache is terminating is never linked, and doctor says so for exactly those
    dying = {f"{k.namespace}/{k.name}" for k in snapshot.kernel_caches if k.meta.deleting}
    assert not [a for a in actions if a.verb == "update-status" and f"{a.namespace}/{a.related}" in dying]
    said = {f.object.name for f in report.findings if f.check == "capture" and f.code == "kernel-cache-terminating"}
    to_dying = {
        cap.name
        for cap in snapshot.captures
        if cap.artifact is not None
        and capture_complete(cap)
        and f"{NS}/{generated_kernel_cache_name(cap.name, cap.artifact.image_reference)}" in dying
    }
    assert said <= to_dying
    # signing again after a change of artifactSecurity.mode: doctor says so for exactly the captures whose
    # status.signing mode differs from the one KServe records for the configured mode
    from kubectl_kcache.kernelcache.config import read_config
    from kubectl_kcache.kernelcache.security import recorded_mode

    config = read_config(snapshot.configmap("kserve", "inferenceservice-config")).config
    assert config is not None
    mode = recorded_mode(config.artifact_security.mode)
    resigned = {f.object.name for f in report.findings if f.check == "capture" and f.code == "signing-mode-changed"}
    assert resigned == {
        cap.name
        for cap in snapshot.captures
        if cap.phase == "Complete" and cap.signing is not None and cap.signing.mode != mode
    }
    events = {(a.name, a.event_reason) for a in actions if a.verb == "event"}
    errors = {
        (f.object.name, r)
        for f in report.findings
        if f.check == "capture"
        for r in re.findall(r"KServe cannot select a node group \((\w+):", f.message)
    }
    assert events == errors


def _kinds(drawn: tuple[list[dict[str, Any]], list[str]]) -> set[str]:
    from kubectl_kcache.kernelcache.capture import capture_caches
    from kubectl_kcache.kernelcache.config import read_config

    snapshot = snapshot_of(drawn[0])
    config = read_config(snapshot.configmap("kserve", "inferenceservice-config")).config
    assert config is not None
    out = set()
    for cc in capture_caches(
        snapshot.captures, snapshot.kc_by_key, snapshot.group_by_name, snapshot.node_by_name, config.default_node_group
    ):
        out.add(cc.outcome.outcome)
        if cc.decision is not None:
            out.add(cc.decision.reason or f"source:{cc.decision.source}")
    from kubectl_kcache.kernelcache.security import next_signing

    for cap in snapshot.captures:  # the signing KServe's next pass does (again), after a change of mode
        s = cap.signing
        again = next_signing(
            config.artifact_security.mode, s.mode if s else None, s.state if s else None, cap.signing_profile
        )
        if s is not None and again is not None and again.mode != s.mode:
            out.add("resign-fails" if again.fails else "resign")
    return out


BRANCHES = {
    "create",
    "link",
    "linked",
    "mismatch",
    "shadowed",
    "not-eligible",
    "terminating",
    "source:annotation",
    "source:auto",
    "source:default",
    "InvalidRequestedNodeGroup",
    "ProducerNodePending",
    "AmbiguousNodeGroup",
    "NoMatchingNodeGroup",
    "InvalidDefaultNodeGroup",
    "resign",
    "resign-fails",
}


def test_the_generator_reaches_every_outcome_and_branch():
    """The properties above are only as good as the snapshots: 500 of them (a fixed sample) reach each outcome
    and each branch of KServe's selection."""
    seen: set[str] = set()

    @settings(
        max_examples=500, derandomize=True, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
    )
    @given(snapshots())
    def sample(drawn: tuple[list[dict[str, Any]], list[str]]) -> None:
        seen.update(_kinds(drawn))

    sample()
    assert BRANCHES - seen == set()


# ---- the pod webhook, capture sidecar step included: doctor's capture-sidecar and why-not-cached agree ------

PROBES = [
    None,
    {"httpGet": {"path": "/health", "port": 8080}},
    {"httpGet": {"path": "/h", "port": "http"}},
    {"httpGet": {"path": "/h", "port": 8080, "host": "10.1.2.3"}},
    {"tcpSocket": {"port": 8080}},
    {"httpGet": {"path": "/h"}},
]


@st.composite
def sidecar_snapshots(draw: Any) -> list[dict[str, Any]]:
    """ReplicaSets of InferenceServices whose pod templates vary in what the capture sidecar step checks (the
    probe, named ports, a read-only or overlapping mount, an opt-out), with or without a registry endpoint
    and the default injection, some with a capture of their revision (terminal or not, ProducerGone), and a
    Ready KernelCache some of them match."""
    endpoint = draw(st.sampled_from(["registry.example:5000", "registry.example:5000", ""]))
    config: dict[str, Any] = {
        "enabled": True,
        "defaultNodeGroup": "gpu",
        "defaultSidecarInjection": draw(st.sampled_from([True, True, True, False])),
    }
    if endpoint:
        config["registry"] = {"endpoint": endpoint}
    kc = b.consumer_cache("qwen", ns=NS, identity=b.consumer_identity(NS, "qwen", b.VLLM_DIGEST, b.MODEL_URI))
    items = [
        b.config_map(config),
        b.group("gpu", {"pool": "gpu"}),
        b.node("gpu-1", {"pool": "gpu"}),
        kc,
        b.kcn("gpu-1", {f"{NS}/qwen": b.cache_entry(kc)}),
        b.webhook_configuration(),
        b.webhook_endpoints(),
        b.namespace(NS),
    ]
    for i in range(draw(st.integers(1, 4))):
        isvc = draw(st.sampled_from(["qwen", f"model-{i}"]))
        rs = f"{isvc}-predictor-{i}abc"
        revision = f"{i}abc"
        ctr: dict[str, Any] = {
            "name": "kserve-container",
            "image": draw(st.sampled_from([b.VLLM_DIGEST, b.VLLM_DIGEST, "vllm/vllm:latest"])),
        }
        probe = draw(st.sampled_from(PROBES))
        if probe is not None:
            ctr["readinessProbe"] = probe
        if draw(st.booleans()):
            ctr["ports"] = [{"name": "http", "containerPort": 8080}]
        mount = draw(st.sampled_from([None, None, "ro", "parent"]))
        volumes = []
        if mount:
            path = "/root/.cache/vllm" if mount == "ro" else "/root/.cache"
            ctr["volumeMounts"] = [{"name": "m", "mountPath": path, "readOnly": mount == "ro"}]
            volumes = [{"name": "m", "emptyDir": {}}]
        annotations = {
            "serving.kserve.io/kernelcache-supported": "true",
            "internal.serving.kserve.io/storage-initializer-sourceuri": b.MODEL_URI,
        }
        opt = draw(st.sampled_from([None, None, None, "false", "true"]))
        if opt is not None:
            annotations["serving.kserve.io/kernelcache-sidecar-injection"] = opt
        labels = {"serving.kserve.io/inferenceservice": isvc, "pod-template-hash": revision}
        items.append(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {"name": rs, "namespace": NS, "labels": labels},
                "spec": {
                    "replicas": draw(st.sampled_from([1, 1, 0])),
                    "template": {
                        "metadata": {"labels": labels, "annotations": annotations},
                        "spec": {"containers": [ctr], **({"volumes": volumes} if volumes else {})},
                    },
                },
            }
        )
        phase = draw(st.sampled_from([None, None, "Complete", "Capturing", "Failed-gone"]))
        if phase is not None:
            cap = b.capture(f"{isvc}-kcc-{revision}", NS, isvc=isvc)
            cap["metadata"]["labels"] = {"internal.serving.kserve.io/kernelcache-capture-generated": "true"}
            cap["status"] = (
                {"phase": "Failed", "conditions": [{"type": "Ready", "status": "False", "reason": "ProducerGone"}]}
                if phase == "Failed-gone"
                else {"phase": phase}
            )
            items.append(cap)
    return items


@EXAMPLES
@given(sidecar_snapshots())
def test_doctor_and_why_not_cached_agree_on_every_replicaset(items):
    """doctor's capture-sidecar finds exactly the ReplicaSets whose template why-not-cached --manifest says
    the webhook rejects in the sidecar step, with the same gate and KServe's message."""
    from kubectl_kcache.explain.why_not_cached import explain as why_not_cached
    from kubectl_kcache.kernelcache.admission import SIDECAR_GATES

    snapshot = snapshot_of(items)
    report = run_doctor(snapshot, only=["capture-sidecar"])
    found = {f.object.name: f for f in report.findings}
    for rs in snapshot.replica_sets:
        if rs.replicas <= 0:
            assert rs.name not in found
            continue
        now = why_not_cached(snapshot, NS, manifest=rs.template_pod()).to_dict()["result"]["now"]
        denied = now["outcome"] == "rejected" and now["blockedBy"] in SIDECAR_GATES
        assert (rs.name in found) == denied, (rs.name, now, found.get(rs.name))
        if denied:
            assert found[rs.name].code == now["blockedBy"]
            assert found[rs.name].evidence[0] == now["denial"]


def test_the_sidecar_generator_reaches_every_gate():
    """The property above is only as good as its snapshots: they reach each sidecar outcome."""
    from kubectl_kcache.explain.why_not_cached import explain as why_not_cached

    seen: set[str] = set()

    @settings(
        max_examples=300, derandomize=True, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
    )
    @given(sidecar_snapshots())
    def sample(items: list[dict[str, Any]]) -> None:
        snapshot = snapshot_of(items)
        for rs in snapshot.replica_sets:
            doc = why_not_cached(snapshot, NS, manifest=rs.template_pod()).to_dict()
            seen.add(f"{doc['result']['now']['outcome']}:{doc['result']['now']['blockedBy']}")
            sidecar = next(g for g in doc["gates"] if g["id"] == "sidecar")
            seen.add("skipped" if sidecar["detail"].startswith("skipped") else "runs")

    sample()
    wanted = {
        "rejected:readiness-probe",
        "rejected:capture-target",
        "rejected:capture-mounts",
        "cached:None",
        "skipped",
        "runs",
    }
    assert wanted - seen == set()
