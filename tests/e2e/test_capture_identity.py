"""The capture's identities on the real API server: a capture in Pushing whose reporter Secret is missing is
found live and from a dump alike; Secrets are listed and watched by metadata only, so the API server sends no
data, and no value reaches the dump or the screen (annotations, where `kubectl apply` copies them, are
dropped on receipt)."""

from __future__ import annotations

import base64
import json

import pytest

from kubectl_kcache.kernelcache import constants as c
from kubectl_kcache.kernelcache.names import reporter_name
from kubectl_kcache.kube import listing, watching
from kubectl_kcache.kube import resources as r
from kubectl_kcache.kube.client import Client
from kubectl_kcache.kube.kubeconfig import Overrides
from tests import builders as b

from .cluster import OWNED_LABEL
from .test_doctor import doctor, findings, healthy_install

pytestmark = pytest.mark.e2e

NS = "team-a"
CAP = "qwen-kcc-669889f77f"
POD = "qwen-predictor-669889f77f-abcde"
SECRET_VALUE = "do-not-print-me"


def owned_by(obj: dict, owner: dict) -> dict:
    md = owner["metadata"]
    obj["metadata"]["ownerReferences"] = [
        {
            "apiVersion": owner["apiVersion"],
            "kind": owner["kind"],
            "name": md["name"],
            "uid": md["uid"],
            "controller": True,
        }
    ]
    obj["metadata"].setdefault("labels", {})[OWNED_LABEL] = "true"
    return obj


def test_a_capture_pushing_without_its_reporter_secret(cluster, tmp_path):
    healthy_install(cluster)
    cluster.apply(
        [
            b.capture(CAP, NS, isvc="qwen"),
            b.pod(
                POD,
                NS,
                labels={c.LABEL_ISVC: "qwen", c.LABEL_POD_TEMPLATE_HASH: "669889f77f"},
                annotations={c.ANNOTATION_REPORTER_SECRET: reporter_name(CAP)},
            ),
        ]
    )
    cap = cluster.get("kernelcachecapture", CAP, NS)
    cluster.set_status("kernelcachecapture", CAP, b.capture_status(pod=POD, phase="Pushing"), NS)
    name = reporter_name(CAP)
    rbac = "rbac.authorization.k8s.io/v1"
    cluster.apply(
        [
            {
                "apiVersion": rbac,
                "kind": "RoleBinding",
                "metadata": {"name": c.TOKEN_REQUESTER, "namespace": NS, "labels": {c.TOKEN_REQUESTER_LABEL: "true"}},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": c.TOKEN_REQUESTER},
                "subjects": [
                    {"kind": "ServiceAccount", "name": "kserve-localmodel-controller-manager", "namespace": "kserve"}
                ],
            },
            owned_by(
                {
                    "apiVersion": "v1",
                    "kind": "ServiceAccount",
                    "automountServiceAccountToken": False,
                    "metadata": {"name": name, "namespace": NS, "labels": {c.REPORTER_LABEL: "true"}},
                },
                cap,
            ),
            owned_by(
                {
                    "apiVersion": rbac,
                    "kind": "Role",
                    "rules": [],
                    "metadata": {"name": name, "namespace": NS, "labels": {c.REPORTER_LABEL: "true"}},
                },
                cap,
            ),
            owned_by(
                {
                    "apiVersion": rbac,
                    "kind": "RoleBinding",
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
                    "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": NS}],
                    "metadata": {"name": name, "namespace": NS, "labels": {c.REPORTER_LABEL: "true"}},
                },
                cap,
            ),
            # another capture's reporter Secret, with a value: listed (its label), but only by metadata
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "type": "Opaque",
                "stringData": {"access.json": SECRET_VALUE},
                "metadata": {
                    "name": reporter_name("other-kcc-1"),
                    "namespace": NS,
                    "labels": {c.REPORTER_LABEL: "true", OWNED_LABEL: "true"},
                },
            },
        ]
    )
    code, doc = doctor(cluster, tmp_path, "--only", "capture-identity")
    assert code == 0  # a warning: doctor fails on errors by default
    [f] = findings(doc, "capture-identity")
    assert (f["code"], f["severity"], f["object"]) == (
        "missing",
        "warning",
        {"kind": "KernelCacheCapture", "name": CAP, "namespace": NS},
    )
    assert f["message"].startswith(
        f"capture {NS}/{CAP} (Pushing): Secret {name} is missing: the mcv sidecar of pod {POD}"
    )
    assert f["evidence"][0].startswith(
        f"Secret {NS}/{name}, the reporter's token, mounted into the mcv sidecar, is missing"
    )
    # no value anywhere: not in the answer, not in the dump
    dump = (tmp_path / "snap.yaml").read_text()
    encoded = base64.b64encode(SECRET_VALUE.encode()).decode()
    assert reporter_name("other-kcc-1") in dump
    assert SECRET_VALUE not in dump and encoded not in dump and SECRET_VALUE not in json.dumps(doc)
    # the API server itself sent none: the list asks for PartialObjectMetadataList
    client = Client(Overrides(kubeconfig=cluster.kubeconfig))
    raw: list[bytes] = []

    def keep(data: bytes) -> r.Page:
        raw.append(data)
        return listing.dict_page(r.SECRETS)(data)

    [page] = list(listing.pages(client, r.SECRETS, NS, label_selector=f"{c.REPORTER_LABEL}=true", decode=keep))
    assert b"PartialObjectMetadataList" in raw[0] and encoded.encode() not in raw[0] and b'"data"' not in raw[0]
    assert [(x["kind"], x["metadata"]["name"]) for x in page.items] == [("Secret", reporter_name("other-kcc-1"))]
    # a watch of them (the monitor's) asks for metadata too: the event of a new Secret carries no value
    listed = listing.list_all(client, r.SECRETS, NS, label_selector=f"{c.REPORTER_LABEL}=true")
    cluster.apply(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "Opaque",
            "stringData": {"access.json": SECRET_VALUE},
            "metadata": {
                "name": "kernel-cache-reporter-late",
                "namespace": NS,
                "labels": {c.REPORTER_LABEL: "true", OWNED_LABEL: "true"},
            },
        }
    )
    lines: list[bytes] = []

    def keep_line(line: bytes) -> dict:
        lines.append(line)
        return watching.dict_event(r.SECRETS)(line)

    events = watching.watch(
        client,
        r.SECRETS,
        listed.resource_version,
        NS,
        timeout_seconds=2,
        label_selector=f"{c.REPORTER_LABEL}=true",
        decode=keep_line,
    )
    added = next(e for e in events if e["type"] == "ADDED")
    assert added["object"]["metadata"]["name"] == "kernel-cache-reporter-late"
    assert b"PartialObjectMetadata" in lines[0] and encoded.encode() not in lines[0] and b'"data"' not in lines[0]
    # and the table says it too
    table = cluster.kcache("doctor", "--only", "capture-identity", "--fail-on", "warning")
    assert table.returncode == 1 and name in table.stdout and SECRET_VALUE not in table.stdout


def test_a_capture_signed_before_cert_mode_is_signed_again_and_fails(cluster, tmp_path):
    """artifactSecurity.mode turned to cert: a Complete capture skipped under none is signed again on KServe's
    next pass, and without spec.signing.profileRef (KServe sets it only on captures it creates in cert mode)
    that fails with SigningProfileNotFound; live and from a dump alike."""
    healthy_install(cluster)
    cert = {
        "mode": "cert",
        "cert": {
            "signingProfileRef": "kernelcache-signer",
            "trustBundle": "kserve/kernelcache-root-ca",
            "subjectRegexp": "spiffe://kserve/kernelcache-signer",
        },
    }
    cluster.apply(b.config_map({"enabled": True, "defaultNodeGroup": "gpu", "artifactSecurity": cert}))
    cluster.apply(b.capture(CAP, NS, isvc="qwen"))
    gen = cluster.get("kernelcachecapture", CAP, NS)["metadata"]["generation"]
    cluster.set_status(
        "kernelcachecapture",
        CAP,
        b.capture_status(
            generation=gen,
            signing={"mode": "none", "state": "Skipped", "signed": False, "reason": "SigningNotConfigured"},
        ),
        NS,
    )
    code, doc = doctor(cluster, tmp_path, "--only", "capture")
    assert code == 1
    [f] = [x for x in findings(doc, "capture") if x["code"] == "signing-mode-changed"]
    assert f["severity"] == "error"
    assert f["message"].startswith(
        f"capture {NS}/{CAP} was signed under mode none (state Skipped), "
        "artifactSecurity.mode is now cert: KServe signs it again under mode cert"
    )
    assert "SigningProfileNotFound: spec.signing.profileRef.name is required for cert signing" in f["message"]
