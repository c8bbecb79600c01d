"""The identities KServe's capture controller makes for a capture in progress (§5.3; capture_controller.go,
registry_reconciler.go, pkg/kernelcache/reporter, registryauth), and the capture-identity check over them."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from kubectl_kcache.checks import run_doctor
from kubectl_kcache.kernelcache import constants as c
from kubectl_kcache.kernelcache.names import pusher_name, reporter_name
from kubectl_kcache.snapshot.model import build
from tests import builders as b

NS = "team"
CAP = "qwen-kcc-669889f77f"
POD = "qwen-predictor-669889f77f-abcde"
CAP_UID = "cap-uid"
POD_UID = "pod-uid"
ACCESS = "mcv-registry-qwen-abc12"
SAT = {
    "type": "serviceAccountToken",
    "tokenTTLSeconds": 600,
    "pushRoleRef": {"kind": "ClusterRole", "name": "push"},
    "pullRoleRef": {"kind": "ClusterRole", "name": "pull"},
}


def h12(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:12]


def owned(
    kind: str,
    name: str,
    label: str,
    owner_kind: str = "KernelCacheCapture",
    owner: str = CAP,
    uid: str = CAP_UID,
    **extra: Any,
) -> dict[str, Any]:
    api = "rbac.authorization.k8s.io/v1" if kind in ("Role", "RoleBinding") else "v1"
    obj = {
        "apiVersion": api,
        "kind": kind,
        "metadata": {
            "name": name,
            "namespace": NS,
            "labels": {label: "true"},
            "ownerReferences": [{"kind": owner_kind, "name": owner, "uid": uid, "controller": True}],
        },
    }
    obj.update(extra)
    return obj


def token_requester(label: bool = True, role: str = c.TOKEN_REQUESTER) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {
            "name": c.TOKEN_REQUESTER,
            "namespace": NS,
            "labels": {c.TOKEN_REQUESTER_LABEL: "true"} if label else {},
        },
        "roleRef": {"kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "ServiceAccount", "namespace": "kserve", "name": "kserve-localmodel-controller-manager"}],
    }


def reporter_objects() -> list[dict[str, Any]]:
    name = reporter_name(CAP)
    return [
        owned("ServiceAccount", name, c.REPORTER_LABEL, automountServiceAccountToken=False),
        owned("Role", name, c.REPORTER_LABEL),
        owned(
            "RoleBinding",
            name,
            c.REPORTER_LABEL,
            roleRef={"kind": "Role", "name": name},
            subjects=[{"kind": "ServiceAccount", "namespace": NS, "name": name}],
        ),
        owned("Secret", name, c.REPORTER_LABEL, type="Opaque"),
    ]


def pusher_objects() -> list[dict[str, Any]]:
    name = pusher_name(CAP)
    return [
        owned("ServiceAccount", name, c.REGISTRY_LABEL, automountServiceAccountToken=False),
        owned(
            "RoleBinding",
            name,
            c.REGISTRY_LABEL,
            roleRef={"kind": "ClusterRole", "name": "push"},
            subjects=[{"kind": "ServiceAccount", "namespace": NS, "name": name}],
        ),
        owned("Secret", ACCESS, c.REGISTRY_LABEL, owner_kind="Pod", owner=POD, uid=POD_UID, type="Opaque"),
    ]


def cluster(
    *,
    phase: str = "Pushing",
    auth: dict[str, Any] | None = None,
    drop: tuple[tuple[str, str], ...] = (),
    extra: tuple[dict[str, Any], ...] = (),
    annotations: dict[str, str] | None = None,
    token: dict[str, Any] | None = None,
    sessions: bool = True,
) -> list[dict[str, Any]]:
    status = b.capture_status(pod=POD, phase=phase) if sessions else {"phase": phase}
    cap = b.capture(CAP, NS, isvc="qwen", status=status)
    cap["metadata"]["uid"] = CAP_UID
    pod = b.pod(
        POD,
        NS,
        labels={c.LABEL_ISVC: "qwen", c.LABEL_POD_TEMPLATE_HASH: "669889f77f"},
        annotations=annotations
        if annotations is not None
        else {c.ANNOTATION_REPORTER_SECRET: reporter_name(CAP), c.ANNOTATION_ACCESS_SECRET: ACCESS},
    )
    pod["metadata"]["uid"] = POD_UID
    config = {"enabled": True, "defaultNodeGroup": "gpu"}
    if auth is not None:
        config["registry"] = {"endpoint": "registry.example.com:5000", "auth": auth}
    objects = [token if token is not None else token_requester(), *reporter_objects(), *pusher_objects()]
    objects = [o for o in objects if (o["kind"], o["metadata"]["name"]) not in drop]
    return [
        b.config_map(config),
        b.group("gpu", {"pool": "gpu"}),
        b.node("gpu-1", {"pool": "gpu"}),
        cap,
        pod,
        *objects,
        *extra,
    ]


def identity(items: list[dict[str, Any]]):
    report = run_doctor(build(items, reads_assumed=True), only=["capture-identity"])
    [result] = report.checks
    return result, list(report.findings)


def test_reporter_and_pusher_names_are_kserves_scoped_names():
    """scopedName of reporter/credentials.go@30750567 and registryauth/provider.go: prefix, the capture name cut
    to fit 63, `-`, 12 hex of sha256(capture name)."""
    assert reporter_name(CAP) == f"kernel-cache-reporter-{CAP}-{h12(CAP)}"
    assert pusher_name(CAP) == f"kernel-cache-pusher-{CAP}-{h12(CAP)}"
    long = "m" * 50 + "-kcc-1"
    assert len(reporter_name(long)) == 63 and reporter_name(long).endswith("-" + h12(long))
    assert len(pusher_name(long)) == 63 and pusher_name(long).startswith("kernel-cache-pusher-mmm")


def test_every_piece_present_passes_with_either_auth_type():
    for auth in (None, SAT):
        result, findings = identity(cluster(auth=auth))
        assert (result.status, findings) == ("pass", [])


@pytest.mark.parametrize("phase", ["Complete", "Failed", "Unchanged"])
def test_a_terminal_capture_needs_none(phase):
    """KServe deletes them once the capture is terminal."""
    result, findings = identity(cluster(phase=phase, drop=(("RoleBinding", c.TOKEN_REQUESTER),)))
    assert result.status == "not-applicable" and findings == []


def test_no_producer_pod_needs_none():
    items = [x for x in cluster() if x["kind"] != "Pod"]
    result, _ = identity(items)
    assert (result.status, result.reason) == ("not-applicable", "no capture in progress with its producer pod")


def test_a_missing_reporter_secret_is_named_and_the_stuck_push_says_so():
    name = reporter_name(CAP)
    items = cluster(drop=(("Secret", name),))
    _, [f] = identity(items)
    assert (f.severity, f.code, f.object.kind, f.object.name) == ("warning", "missing", "KernelCacheCapture", CAP)
    assert f.message == (
        f"capture {NS}/{CAP} (Pushing): Secret {name} is missing: the mcv sidecar of pod {POD} cannot report the "
        "capture's progress"
    )
    assert f.evidence[0].startswith(
        f"Secret {NS}/{name}, the reporter's token, mounted into the mcv sidecar, is missing"
    )
    assert f.evidence[0].endswith(
        f"none of that name carries label {c.REPORTER_LABEL}=true: KServe's controller "
        "has not made it, or one without the label blocks it (KServe's error then: reserved "
        f"Secret {NS}/{name} already exists and is not managed by kernelcache)"
    )
    assert f.hint == "kubectl -n kserve logs deployment/kserve-localmodel-controller-manager"
    # capture's stuck-in-Pushing finding names the same piece rather than a list of things to look at
    items[3]["status"]["conditions"][0]["lastTransitionTime"] = "2026-11-29T06:00:00Z"
    snap = build(items, reads_assumed=True)
    [stuck] = [x for x in run_doctor(snap, only=["capture"]).findings if x.code == "stuck"]
    assert f"a piece of the capture's identity is wrong: Secret {name} is missing (capture-identity" in stuck.message


def test_without_the_token_requester_binding():
    _, [f] = identity(cluster(drop=(("RoleBinding", c.TOKEN_REQUESTER),)))
    assert f"RoleBinding {c.TOKEN_REQUESTER} is missing: the mcv sidecar" in f.message
    assert f.evidence[0].startswith(
        f"RoleBinding {NS}/{c.TOKEN_REQUESTER}, the controller's right to request the reporter's token, is missing"
    )


def test_a_token_requester_binding_kserve_does_not_manage_is_a_conflict():
    _, [f] = identity(cluster(token=token_requester(label=False)))
    assert (f.severity, f.code) == ("error", "conflict")
    assert (
        f"KServe's error: reserved RoleBinding {NS}/{c.TOKEN_REQUESTER} conflicts with a KernelCache-managed identity"
    ) in f.evidence[0]


def test_a_reporter_role_of_another_capture_is_a_conflict():
    name = reporter_name(CAP)
    other = owned("Role", name, c.REPORTER_LABEL, uid="another-uid")
    _, [f] = identity(cluster(drop=(("Role", name),), extra=(other,)))
    assert (f.severity, f.code) == ("error", "conflict")
    assert f"Role {name} is not controlled by KernelCacheCapture {CAP}: the mcv sidecar" in f.message
    assert f.evidence[0].startswith(
        f"Role {NS}/{name}, the reporter's right to update the capture's status, is not controlled by "
        f"KernelCacheCapture {CAP}"
    )
    assert f.evidence[0].endswith(f"KServe's error: reserved Role {NS}/{name} has a different owner")


def test_the_pod_must_name_the_reporter_secret():
    _, [f] = identity(cluster(annotations={c.ANNOTATION_ACCESS_SECRET: ACCESS}))
    assert (
        f"Pod {POD} annotation {c.ANNOTATION_REPORTER_SECRET} names (nothing), not {reporter_name(CAP)}: " in f.message
    )
    assert f.evidence[0].startswith(
        f"Pod {NS}/{POD}, annotation {c.ANNOTATION_REPORTER_SECRET}, names (nothing), not {reporter_name(CAP)}"
    )
    assert f.evidence[0].endswith("KServe's error: capture Pod has no reporter access Secret reference")


def test_service_account_token_needs_the_pusher_and_the_registry_access_secret():
    pusher = pusher_name(CAP)
    _, [f] = identity(cluster(auth=SAT, drop=(("RoleBinding", pusher), ("Secret", ACCESS))))
    assert f.message.startswith(f"capture {NS}/{CAP} (Pushing): RoleBinding {pusher} is missing: ")
    assert f"the mcv sidecar of pod {POD} cannot push the artifact" in f.message and "(1 more below)" in f.message
    assert f.evidence[0].startswith(
        f"RoleBinding {NS}/{pusher}, registry.auth.pushRoleRef bound to the pusher, is missing"
    )
    assert [e.split(", ")[0] for e in f.evidence] == [f"RoleBinding {NS}/{pusher}", f"Secret {NS}/{ACCESS}"]


def test_auth_none_needs_no_pusher():
    pusher = pusher_name(CAP)
    result, findings = identity(cluster(drop=(("ServiceAccount", pusher), ("RoleBinding", pusher), ("Secret", ACCESS))))
    assert (result.status, findings) == ("pass", [])


def test_plain_files_without_secrets_do_not_make_them_missing():
    """From files that hold no Secret at all, a Secret's absence is not in the input, not a finding."""
    items = [x for x in cluster() if x["kind"] != "Secret"]
    result, findings = identity(items)
    assert (result.status, findings) == ("pass", [])


def test_a_forbidden_secret_list_leaves_the_rest_checked():
    from tests.unit.checks.conftest import with_reads

    name = reporter_name(CAP)
    snap = with_reads(build(cluster(drop=(("Secret", name), ("Role", name)))), ("secrets", None, "forbidden"))
    report = run_doctor(snap, only=["capture-identity"])
    [result] = report.checks
    [f] = report.findings
    assert "the reporter and registry access Secrets are not checked" in result.reason
    assert [e.split(", ")[0] for e in f.evidence] == [f"Role {NS}/{name}"]


def test_an_unlabelled_object_of_the_reporters_name_is_not_kserves():
    """From files that hold every ServiceAccount, one of the reporter's name without KServe's label is seen."""
    name = reporter_name(CAP)
    bare = owned("ServiceAccount", name, "other")
    _, [f] = identity(cluster(drop=(("ServiceAccount", name),), extra=(bare,)))
    assert (f.severity, f.code) == ("error", "conflict")
    assert f"ServiceAccount {name} is not KServe's (no label {c.REPORTER_LABEL}=true): " in f.message
    assert f.evidence[0].startswith(
        f"ServiceAccount {NS}/{name}, the reporter's identity, is not KServe's (no label {c.REPORTER_LABEL}=true)"
    )
    assert f.evidence[0].endswith(
        f"reserved ServiceAccount {NS}/{name} already exists and is not managed by kernelcache"
    )
