"""Doctor reports built by hand: clean, and one with every status, severity and a suppressed finding."""

from __future__ import annotations

import pytest

from kubectl_kcache.checks.model import CheckResult, DoctorReport, Finding, ObjectRef

TITLES = {
    "crds": "Kernel Cache CRDs are served",
    "config": "The kernelcache configuration is valid",
    "group-taints": "Member nodes' taints are tolerated",
    "nodes": "Member nodes can prepare caches",
    "registry-pull": "Preparation Jobs pull their images",
    "capture": "Captures become KernelCaches",
    "cache-status": "KernelCaches are ready",
}

LONG_HINT = (
    "kubectl patch kernelcachenodegroup gpu-workers --type=merge -p "
    '\'{"spec":{"tolerations":[{"key":"nvidia.com/gpu","operator":"Exists",'
    '"effect":"NoSchedule"},{"key":"dedicated","operator":"Equal","value":"ml",'
    '"effect":"NoSchedule"}]}}\''
)

TAINT_ERROR = Finding(
    check="group-taints",
    severity="error",
    object=ObjectRef("Node", "gpu-1"),
    group="gpu-workers",
    message="taint nvidia.com/gpu=present:NoSchedule is not tolerated by the preparation Job pods of group gpu-workers",
    hint=LONG_HINT,
    evidence=("taints: nvidia.com/gpu=present:NoSchedule", "group tolerations: []"),
)
TAINT_WARNING = Finding(
    check="group-taints",
    severity="warning",
    object=ObjectRef("Node", "gpu-2"),
    group="gpu-workers",
    message="taint spot=true:PreferNoSchedule may keep preparation pods off the node",
    hint="kubectl describe node gpu-2",
)
NODE_ERROR = Finding(
    check="nodes",
    severity="error",
    object=ObjectRef("Node", "gpu-3"),
    group="gpu-workers",
    message="node is cordoned: preparation Jobs cannot schedule on it",
    hint="kubectl uncordon gpu-3",
)
CACHE_INFO = Finding(
    check="cache-status",
    severity="info",
    object=ObjectRef("KernelCache", "llama-kc", "models"),
    group="gpu-workers",
    message="selector a|b matched: state Pending, 2 of 3 nodes ready",
    hint="kubectl get kernelcache -n models llama-kc -o yaml | less",
)
SUPPRESSED = Finding(
    check="cache-status",
    severity="error",
    object=ObjectRef("KernelCache", "old-kc", "models"),
    group="cpu",
    message="node entry cpu-9 is in Error",
    hint="kubectl delete kernelcache -n models old-kc",
    suppressed=True,
)

CHECKS = (
    CheckResult("crds", "pass"),
    CheckResult("config", "pass"),
    CheckResult("group-taints", "fail"),
    CheckResult("nodes", "fail"),
    CheckResult("registry-pull", "skipped", "forbidden: list pods in kserve", ("forbidden: list pods in kserve",)),
    CheckResult("capture", "not-applicable", "no KernelCacheCaptures"),
    CheckResult("cache-status", "fail"),
)


def make_problem_report() -> DoctorReport:
    return DoctorReport(
        checks=CHECKS,
        findings=(TAINT_ERROR, TAINT_WARNING, NODE_ERROR, CACHE_INFO, SUPPRESSED),
        object_count=42,
        cluster="kind-gpu",
        source="live",
        titles=dict(TITLES),
    )


def make_clean_report() -> DoctorReport:
    checks = tuple(CheckResult(c.id, "pass") for c in CHECKS[:4]) + (
        CheckResult("capture", "not-applicable", "no KernelCacheCaptures"),
    )
    return DoctorReport(checks=checks, findings=(), object_count=17, cluster="kind-gpu", titles=dict(TITLES))


@pytest.fixture
def problem_report() -> DoctorReport:
    return make_problem_report()


@pytest.fixture
def clean_report() -> DoctorReport:
    return make_clean_report()


@pytest.fixture
def skipped_only_report() -> DoctorReport:
    forbidden = "forbidden: list pods in kserve"
    checks = (CheckResult("crds", "pass"), CheckResult("registry-pull", "skipped", forbidden, (forbidden,)))
    return DoctorReport(checks=checks, findings=(), object_count=3, titles=dict(TITLES))


@pytest.fixture
def suppressed_only_report() -> DoctorReport:
    checks = (CheckResult("crds", "pass"), CheckResult("cache-status", "pass"))
    return DoctorReport(checks=checks, findings=(SUPPRESSED,), object_count=5, titles=dict(TITLES))
