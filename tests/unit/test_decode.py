"""The one decode path (objects/decode.py) and the registry of kinds (snapshot/kinds.py): list pages and
watch lines into the same typed objects as files, errors with the JSON path and the object, and a registry
that covers every snapshot field and every resource the collector reads."""

from __future__ import annotations

import dataclasses
import json

import msgspec
import pytest

from kubectl_kcache import objects as o
from kubectl_kcache.errors import ApiError, Gone, InputError
from kubectl_kcache.kube import resources as r
from kubectl_kcache.kube.listing import raw_item
from kubectl_kcache.kube.watching import _raise_error_event
from kubectl_kcache.objects import decode as d
from kubectl_kcache.snapshot import kinds
from kubectl_kcache.snapshot.model import ClusterSnapshot
from tests import builders as b

NODES = kinds.for_resource(r.NODES)


def page(items: list[dict], rv: str = "42", cont: str = "") -> bytes:
    """A NodeList as the API server sends it: items without kind and apiVersion."""
    stripped = [{k: v for k, v in i.items() if k not in ("kind", "apiVersion")} for i in items]
    md = {"resourceVersion": rv, **({"continue": cont} if cont else {})}
    return json.dumps({"kind": "NodeList", "apiVersion": "v1", "metadata": md, "items": stripped}).encode()


def test_a_page_decodes_into_typed_items_with_its_metadata():
    got = NODES.decode_page(page([b.node("a", {"x": "1"}), b.node("b")], rv="7", cont="tok"))
    assert [n.name for n in got.items] == ["a", "b"]
    assert isinstance(got.items[0], o.Node) and got.items[0].labels["x"] == "1" and got.items[0].ready is True
    assert (got.resource_version, got.continue_token) == ("7", "tok")


def test_an_empty_page_and_null_items():
    assert NODES.decode_page(b'{"kind":"NodeList","metadata":{"resourceVersion":"1"},"items":null}').items == []
    assert NODES.decode_page(b'{"kind":"NodeList"}').resource_version == ""


def test_a_bad_item_in_a_page_names_the_object_and_the_path():
    bad = b.node("gpu-7", taints=[b.taint("x")])
    bad["spec"]["taints"][0]["effect"] = ["NoSchedule"]
    with pytest.raises(InputError) as exc:
        NODES.decode_page(page([b.node("a"), b.node("b"), b.node("c"), bad]))
    assert str(exc.value) == (
        "list nodes: Node gpu-7 (item 3): $.items[3].spec.taints[0].effect: expected a string, got a list"
    )


def test_the_same_object_from_a_page_a_file_and_plain_data_is_equal():
    node = b.node("gpu-1", {"role": "gpu"}, taints=[b.taint("nvidia.com/gpu", "present")])
    from_page = NODES.decode_page(page([node])).items[0]
    assert from_page == NODES.decode_json(json.dumps(node).encode()) == NODES.convert(node) == o.Node.from_dict(node)


def line(event_type: str, obj: dict) -> bytes:
    return json.dumps({"type": event_type, "object": obj}).encode()


def test_watch_lines_decode_into_the_same_types():
    node = b.node("gpu-1")
    node["metadata"]["resourceVersion"] = "99"
    event = NODES.decode_watch_line(line("MODIFIED", node))
    assert event.type == "MODIFIED" and isinstance(event.object, o.Node) and event.object.name == "gpu-1"
    assert event.resource_version == "99"
    mark = NODES.decode_watch_line(line("BOOKMARK", {"kind": "Node", "metadata": {"resourceVersion": "123"}}))
    assert (mark.type, mark.object, mark.resource_version) == ("BOOKMARK", None, "123")


def test_watch_error_events():
    gone = NODES.decode_watch_line(line("ERROR", {"kind": "Status", "code": 410, "message": "too old"}))
    with pytest.raises(Gone, match="too old"):
        _raise_error_event(gone)
    other = NODES.decode_watch_line(line("ERROR", {"kind": "Status", "code": 500, "message": "boom"}))
    with pytest.raises(ApiError, match="boom"):
        _raise_error_event(other)


def test_a_bad_watch_object_names_the_path():
    node = b.node("gpu-1")
    node["spec"] = {"unschedulable": "perhaps"}
    with pytest.raises(InputError, match=r"watch nodes: \$\.object\.spec\.unschedulable: expected a boolean"):
        NODES.decode_watch_line(line("ADDED", node))


def test_head_describes_an_item_without_decoding_it():
    head = d.decode_json(json.dumps(b.kernel_cache("kc", ns="team-a")).encode(), d.Head)
    assert head.describe() == "KernelCache team-a/kc"
    assert d.convert({"kind": 5}, d.Head).describe() == "object"


def test_raw_item_for_a_dump():
    """kind and apiVersion first (filled in when the list's items lack them), managedFields dropped, the
    rest copied unchanged."""
    node = {
        "metadata": {"name": "n", "managedFields": [{"manager": "kubelet"}], "labels": {"a": "b"}},
        "status": {"images": [{"names": ["x"], "sizeBytes": 1}]},
    }
    out = json.loads(raw_item(msgspec.Raw(json.dumps(node).encode()), r.NODES))
    assert list(out) == ["apiVersion", "kind", "metadata", "status"]
    assert out == {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n", "labels": {"a": "b"}},
        "status": node["status"],
    }
    secret = {"kind": "Secret", "apiVersion": "v1", "metadata": {"name": "s"}, "data": {"k": "djE="}}
    assert "data" not in json.loads(raw_item(msgspec.Raw(json.dumps(secret).encode()), r.CONFIGMAPS))


# ---- Kubernetes' quirks ---------------------------------------------------------------------------


def test_null_means_absent_at_every_level():
    obj = {
        "metadata": {"name": "n", "labels": None, "namespace": None, "ownerReferences": None},
        "spec": {
            "taints": [{"key": "k", "value": None, "effect": "NoSchedule", "timeAdded": None}],
            "unschedulable": None,
        },
        "status": {"conditions": [{"type": "Ready", "status": "True", "reason": None}], "nodeInfo": None},
    }
    n = NODES.decode_json(json.dumps(obj).encode())
    assert n.labels == {} and n.meta.namespace is None and n.meta.owners == ()
    assert n.taints == (o.Taint("k", "NoSchedule", ""),) and n.unschedulable is False
    assert n.ready is True and n.ready_reason == "" and n.kubelet_version == ""


def test_int_or_string_and_boolean_strings():
    g = kinds.lookup("serving.kserve.io/v1alpha1", "KernelCacheNodeGroup").convert(
        b.group("g", {"a": "b"}, [{"key": "k", "operator": "Exists", "tolerationSeconds": "300"}])
    )
    assert g.tolerations[0].toleration_seconds == 300
    node = b.node("n")
    node["spec"]["unschedulable"] = "true"
    assert NODES.convert(node).unschedulable is True


def test_numbers_in_string_maps_are_their_text():
    node = b.node("n", {"gpu.count": 8, "ratio": 1.5, "big": 1e20})  # YAML without quotes
    assert NODES.convert(node).labels | {} == {
        "kubernetes.io/hostname": "n",
        "gpu.count": "8",
        "ratio": "1.5",
        "big": "1e+20",
    }
    node = b.node("n", {"flag": True})
    with pytest.raises(msgspec.ValidationError, match="got `bool`"):
        NODES.convert(node)


def test_unknown_fields_are_skipped_and_never_built():
    node = b.node("n")
    node["status"]["images"] = [{"names": [f"img-{i}"], "sizeBytes": i} for i in range(50)]
    node["metadata"]["managedFields"] = [{"manager": "kubelet", "fieldsV1": {"f:status": {}}}]
    n = NODES.convert(node)
    assert n.image_count == 50
    assert n.status is not None and n.status.images is None  # counted, then dropped
    assert "managedFields" not in msgspec.json.encode(n).decode()


# ---- the registry ---------------------------------------------------------------------------------


def test_every_snapshot_field_has_a_kind_and_every_kind_a_field():
    snapshot_fields = {
        f.name
        for f in dataclasses.fields(ClusterSnapshot)
        if f.name not in ("meta", "reads", "reads_assumed", "warnings")
    }
    assert snapshot_fields == set(kinds.FIELDS)
    for k in kinds.KINDS:
        assert issubclass(k.type, o._Object)
        assert k.type in o.OBJECT_TYPES


def test_every_resource_read_is_registered_once():
    read = [v for v in vars(r).values() if isinstance(v, r.Resource) and v is not r.LEASES]
    for res in read:
        assert kinds.for_resource(res).resource == res
    assert len({(k.group, k.kind) for k in kinds.KINDS}) == len(kinds.KINDS)


def test_lookup_by_api_version_and_kind():
    assert kinds.lookup("v1", "Event").field == kinds.lookup("events.k8s.io/v1", "Event").field == "events"
    assert kinds.lookup("example.com/v1", "Node") is None  # another group's Node is not a node
    assert kinds.lookup("v1", "Service") is None
    assert kinds.lookup("serving.kserve.io/v1beta1", "KernelCache").type is o.KernelCache  # any version
