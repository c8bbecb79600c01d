"""Secrets are read by metadata only: the list asks for PartialObjectMetadataList, and whatever comes back
(a server that ignores the Accept header, a user's own export) keeps no value: no data, no stringData, no
annotations (`kubectl apply`'s last-applied-configuration holds the values)."""

from __future__ import annotations

import json

from kubectl_kcache import objects as o
from kubectl_kcache.kube import listing
from kubectl_kcache.kube import resources as r

VALUE = "do-not-print-me"
APPLIED = json.dumps({"apiVersion": "v1", "kind": "Secret", "stringData": {"access.json": VALUE}})


def secret_item(kind: str = "Secret", api: str = "v1") -> dict:
    return {
        "kind": kind,
        "apiVersion": api,
        "type": "Opaque",
        "data": {"access.json": "ZG8tbm90"},
        "stringData": {"access.json": VALUE},
        "metadata": {
            "name": "kernel-cache-reporter-x",
            "namespace": "team",
            "labels": {"a": "b"},
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": APPLIED},
            "ownerReferences": [{"kind": "KernelCacheCapture", "name": "x", "uid": "u", "controller": True}],
        },
    }


def test_secrets_are_the_one_metadata_only_resource():
    assert r.SECRETS.metadata_only and not r.PODS.metadata_only
    assert "as=PartialObjectMetadataList" in listing.METADATA_ONLY


def test_a_page_of_secrets_keeps_no_value():
    page = {
        "kind": "PartialObjectMetadataList",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {},
        "items": [secret_item("PartialObjectMetadata", "meta.k8s.io/v1")],
    }
    [item] = listing.dict_page(r.SECRETS)(json.dumps(page).encode()).items
    assert (item["kind"], item["apiVersion"]) == ("Secret", "v1")
    assert VALUE not in json.dumps(item) and "data" not in item and "annotations" not in item["metadata"]
    assert item["metadata"]["labels"] == {"a": "b"}


def test_a_dumped_secret_keeps_no_value():
    raw = listing.raw_item(json.dumps(secret_item("PartialObjectMetadata", "meta.k8s.io/v1")).encode(), r.SECRETS)
    doc = json.loads(raw)
    assert (doc["kind"], doc["apiVersion"]) == ("Secret", "v1")
    assert VALUE not in raw.decode() and "ZG8tbm90" not in raw.decode()
    assert doc["metadata"]["ownerReferences"][0]["uid"] == "u"


def test_a_secret_from_a_file_keeps_no_annotation():
    secret = o.Secret.from_dict(secret_item())
    assert secret.meta.annotations == {} and secret.meta.labels == {"a": "b"}
    assert VALUE not in repr(secret)


def test_a_watch_of_secrets_asks_for_metadata_and_keeps_no_value():
    from kubectl_kcache.kube import watching

    assert "as=PartialObjectMetadata;" in listing.METADATA_ONLY_WATCH
    line = json.dumps({"type": "ADDED", "object": secret_item("PartialObjectMetadata", "meta.k8s.io/v1")}).encode()
    event = watching.dict_event(r.SECRETS)(line)
    assert (event["object"]["kind"], event["object"]["apiVersion"]) == ("Secret", "v1")
    assert VALUE not in json.dumps(event) and "annotations" not in event["object"]["metadata"]
