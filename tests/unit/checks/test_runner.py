"""The runner: statuses from reads and the feature, only/skip, suppressions, order; over a dump file too."""

import json

import pytest
import yaml

from kubectl_kcache.checks import check_ids, load_suppressions, run_doctor
from kubectl_kcache.errors import InputError
from kubectl_kcache.snapshot.files.from_files import load_files

from .conftest import BASE, BASE_FILES, HERE, doctor, load, one, with_reads

IDS = [
    "crds",
    "config",
    "control-plane",
    "webhook",
    "capture-webhook",
    "group-selector",
    "group-overlap",
    "group-taints",
    "nodes",
    "kcn-missing",
    "kcn-orphaned",
    "agent",
    "registry-pull",
    "cache-status",
    "verification",
    "node-images",
    "capture",
    "capture-identity",
    "consumer-pull",
    "capture-sidecar",
]
FEATURE_CHECKS = IDS[3:]


def status(report):
    return {c.id: (c.status, c.reason) for c in report.checks}


def test_report_order_and_ids(base):
    assert check_ids() == IDS
    report = run_doctor(base)
    assert [c.id for c in report.checks] == IDS
    assert all(c.status == "pass" for c in report.checks if c.id not in ("consumer-pull", "capture-identity"))
    # the base cluster has no InferenceService ReplicaSets: nothing to replay
    assert status(report)["consumer-pull"] == ("not-applicable", "no serving pod has a KernelCache mounted")
    # its one capture is Complete: KServe keeps no identities for it
    assert status(report)["capture-identity"] == ("not-applicable", "no capture in progress with its producer pod")
    assert report.summary() == {
        "errors": 0,
        "warnings": 0,
        "infos": 0,
        "skipped": 0,
        "incomplete": 0,
        "suppressed": 0,
        "checks": 20,
    }
    assert report.titles["agent"].startswith("agent DaemonSet")


def test_dump_with_forbidden_and_absent_reads(base, tmp_path):
    """A `kubectl kcache dump` taken with a narrow Role: KernelCacheNodes forbidden, captures not served."""
    reads = [
        {"resource": r, "namespace": ns, "status": "ok", "count": 1}
        for r, ns in (
            ("nodes", None),
            ("kernelcachenodegroups", None),
            ("kernelcaches", None),
            ("configmaps", "kserve"),
            ("daemonsets", "kserve"),
            ("pods", "kserve"),
            ("deployments", "kserve"),
            ("mutatingwebhookconfigurations", None),
            ("endpointslices", "kserve"),
            ("customresourcedefinitions", None),
            ("namespaces", None),
            ("jobs", "kserve-kernelcache-jobs"),
            ("pods", "kserve-kernelcache-jobs"),
            ("events", None),
        )
    ]
    reads += [
        {"resource": "kernelcachenodes", "namespace": None, "status": "forbidden", "count": 0},
        {"resource": "kernelcachecaptures", "namespace": None, "status": "absent", "count": 0},
        {"resource": "serviceaccounts", "namespace": "kserve-kernelcache-jobs", "status": "forbidden", "count": 0},
    ]
    items = [
        x
        for name in BASE_FILES
        for doc in yaml.safe_load_all((BASE / f"{name}.yaml").read_text())
        for x in (doc.get("items", [doc]) if doc else [])
        if x["kind"] not in ("KernelCacheNode", "KernelCacheCapture")
    ]
    doc = {
        "kind": "KcacheSnapshot",
        "version": 1,
        "meta": {"cluster": "gpu-prod", "takenAt": "2026-11-29T10:00:00Z", "serverVersion": "v1.35.2", "reads": reads},
        "items": items,
    }
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(doc))
    report = run_doctor(load_files([str(path)]))
    s = status(report)
    assert s["kcn-missing"] == ("skipped", "forbidden: list kernelcachenodes")
    assert s["kcn-orphaned"] == ("skipped", "forbidden: list kernelcachenodes")
    assert s["capture"] == ("skipped", "kernelcachecaptures is not served (CRD not installed)")
    assert s["cache-status"][0] == "pass"
    assert s["cache-status"][1].startswith("partial: forbidden: list kernelcachenodes (per-node entries not checked)")
    assert s["registry-pull"][0] == "pass"
    assert "forbidden: list serviceaccounts in kserve-kernelcache-jobs" in s["registry-pull"][1]
    assert s["node-images"] == ("skipped", "forbidden: list kernelcachenodes")
    # the dump recorded pods in kserve and in the job namespace only: the serving pods were never listed
    assert s["consumer-pull"] == ("skipped", "not in the input: list pods")
    assert s["capture-sidecar"][0] == "skipped"  # a dump from before ReplicaSets were read
    assert s["capture-webhook"][0] == "skipped"
    assert s["capture-identity"] == ("skipped", "kernelcachecaptures is not served (CRD not installed)")
    assert report.summary()["skipped"] == 8
    assert report.cluster == "gpu-prod"


def test_disabled_feature_is_said_once():
    report = run_doctor(load("config", "disabled.yaml"))
    s = status(report)
    for cid in FEATURE_CHECKS:
        assert s[cid] == (
            "not-applicable",
            "the kernel cache feature is disabled (kernelcache.enabled is false; see check config)",
        )
    assert [f.check for f in report.findings] == ["config"]
    assert "disabled" in report.findings[0].message


def test_invalid_config_makes_feature_checks_not_applicable():
    report = run_doctor(load("config", "invalid.yaml"))
    assert status(report)["kcn-missing"][0] == "not-applicable"
    assert "missing or invalid" in status(report)["kcn-missing"][1]
    assert [f.check for f in report.findings] == ["config"]


def test_unreadable_config_assumes_enabled_with_defaults(base):
    report = run_doctor(with_reads(base, ("configmaps", "kserve", "forbidden")))
    s = status(report)
    assert s["config"] == ("skipped", "forbidden: list configmaps in kserve")
    assert s["kcn-missing"][0] == "pass"
    assumed = "assumed enabled with KServe's default settings (forbidden: list configmaps in kserve)"
    assert assumed in s["kcn-missing"][1]


def test_only_and_skip(base):
    assert [c.id for c in doctor(base, "agent", "crds").checks] == ["crds", "agent"]
    report = run_doctor(base, skip=["capture", "crds"])
    assert [c.id for c in report.checks] == [i for i in IDS if i not in ("capture", "crds")]


@pytest.mark.parametrize("kw", [{"only": ["agent", "gpu"]}, {"skip": ["kcn"]}])
def test_unknown_ids_are_input_errors_listing_valid_ids(base, kw):
    with pytest.raises(InputError) as err:
        run_doctor(base, **kw)
    assert "unknown check id" in str(err.value)
    assert ", ".join(IDS) in str(err.value)


def test_control_plane_findings_come_first():
    snap = load("control-plane", "controller-not-ready.yaml", "../nodes/unhealthy.yaml", "../crds/other-versions.yaml")
    checks = [f.check for f in run_doctor(snap).findings]
    assert checks[0] == "control-plane"
    assert checks.index("crds") > checks.index("control-plane")
    assert checks == ["control-plane"] + [c for c in checks if c != "control-plane"]


def test_suppression_by_file():
    snap = load("runner", "mixed.yaml")
    rules = load_suppressions(str(HERE / "runner" / "suppressions.yaml"))
    report = run_doctor(snap, only=["group-taints", "nodes"], suppressions=rules)
    taints = [f for f in report.findings if f.check == "group-taints"]
    assert {f.object.name: f.suppressed for f in taints} == {"gpu-2": True, "l40s-1": False}
    gpu2 = next(f for f in taints if f.object.name == "gpu-2")
    assert gpu2.suppressed_by == (
        "suppressed by file: gpu nodes are dedicated to inference; preparation runs on the l40s group"
    )
    assert gpu2.to_dict()["suppressed"] is True
    old_kubelet = one([f for f in report.findings if f.check == "nodes"], name="l40s-1")
    assert old_kubelet.suppressed
    assert status(report)["group-taints"][0] == "fail"
    assert report.summary()["suppressed"] == 3


def test_suppression_by_annotation_and_no_suppressions():
    snap = load("runner", "annotated-node.yaml")
    report = run_doctor(snap, only=["group-taints", "nodes"])
    assert report.findings and all(f.suppressed for f in report.findings)
    assert {f.check for f in report.findings} == {"group-taints", "nodes"}
    assert status(report)["group-taints"] == ("pass", "1 finding suppressed")
    assert report.worst() is None
    loud = run_doctor(
        snap,
        only=["group-taints", "nodes"],
        use_suppressions=False,
        suppressions=load_suppressions(str(HERE / "runner" / "suppressions.yaml")),
    )
    assert not any(f.suppressed for f in loud.findings)
    assert status(loud)["group-taints"][0] == "fail"


@pytest.mark.parametrize(
    "text, error",
    [
        ("suppress: {check: nodes}", "'suppress' must be a list"),
        ("suppress:\n  - object: {kind: Node}", "'check' is required"),
        ("suppress:\n  - check: taints", "unknown check 'taints'; valid ids: crds, config"),
        ("suppress:\n  - check: nodes\n    objects: {}", "unknown key 'objects'"),
        ("suppress:\n  - check: nodes\n    object: {name: [a]}", "object.name must be a string"),
        ("supress: []", "unknown key 'supress'"),
        ("suppress: [\n", "not valid YAML or JSON (line"),
        ("- check: nodes", "expected an object with a 'suppress' list"),
    ],
)
def test_malformed_suppressions(tmp_path, text, error):
    path = tmp_path / "kcache.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        load_suppressions(str(path))
    assert error in str(err.value)
    assert str(path) in str(err.value)


def test_suppressions_as_json(tmp_path):
    path = tmp_path / "kcache.json"
    path.write_text(
        json.dumps(
            {"suppress": [{"check": "nodes", "object": {"kind": "Node", "name": "gpu-?"}, "reason": "maintenance"}]}
        )
    )
    (rule,) = load_suppressions(str(path))
    assert (rule.check, rule.kind, rule.name, rule.reason) == ("nodes", "Node", "gpu-?", "maintenance")


def test_missing_suppressions_file(tmp_path):
    with pytest.raises(InputError, match="cannot read suppressions"):
        load_suppressions(str(tmp_path / "nope.yaml"))


def _soft_and_hard_taints():
    """gpu-1 carries a PreferNoSchedule taint (a warning) and a NoSchedule one (an error), both untolerated."""
    from kubectl_kcache.snapshot.model import build
    from tests import builders as b

    node = b.node(
        "gpu-1",
        {"nvidia.com/gpu.product": "NVIDIA-H100"},
        taints=[b.taint("spot", "true", "PreferNoSchedule"), b.taint("maint", "x", "NoSchedule")],
    )
    items = [b.config_map({"enabled": True}), b.group("h100", {"nvidia.com/gpu.product": "NVIDIA-H100"}), node]
    return build(items, reads_assumed=True)


def test_a_code_hides_one_kind_of_finding_and_not_another_on_the_same_object(tmp_path):
    path = tmp_path / "kcache.yaml"
    path.write_text(
        "suppress:\n  - check: group-taints\n    code: prefer-no-schedule\n"
        "    object: {kind: Node, name: gpu-1}\n    reason: spot nodes on purpose\n"
    )
    report = run_doctor(_soft_and_hard_taints(), only=["group-taints"], suppressions=load_suppressions(str(path)))
    by_code = {f.code: f.suppressed for f in report.findings}
    assert by_code == {"prefer-no-schedule": True, "blocks-jobs": False}
    assert report.worst() == "error"


def test_an_annotation_can_name_check_and_code():
    snap = _soft_and_hard_taints()
    node = snap.nodes[0]
    from dataclasses import replace

    from msgspec.structs import replace as struct_replace

    meta = struct_replace(node.meta, annotations={"kcache.kserve.io/suppress": "group-taints/prefer-no-schedule"})
    snap = replace(snap, nodes=(struct_replace(node, metadata=meta),))
    report = run_doctor(snap, only=["group-taints"])
    assert {f.code: f.suppressed for f in report.findings} == {"prefer-no-schedule": True, "blocks-jobs": False}


def test_an_unknown_code_is_refused_with_the_checks_codes(tmp_path):
    path = tmp_path / "kcache.yaml"
    path.write_text("suppress:\n  - check: nodes\n    code: sleepy\n")
    with pytest.raises(InputError, match="check nodes has no code 'sleepy'; its codes: not-ready, cordoned"):
        load_suppressions(str(path))


def test_every_finding_carries_a_declared_code():
    """The runner refuses an undeclared code (a bug); every code is documented in docs/checks.md."""
    from kubectl_kcache.checks.registry import all_checks

    report = run_doctor(load("runner", "mixed.yaml"))
    assert report.findings and all(f.code for f in report.findings)
    docs = (HERE.parents[2] / "docs" / "checks.md").read_text()
    for spec in all_checks():
        assert spec.codes, f"{spec.id} declares no codes"
        for code in spec.codes:
            assert f"`{spec.id}/{code.id}`" in docs


def test_only_and_skip_naming_one_check_is_a_usage_error(base):
    with pytest.raises(InputError, match="--only and --skip both name nodes"):
        run_doctor(base, only=["nodes", "crds"], skip=["nodes"])
