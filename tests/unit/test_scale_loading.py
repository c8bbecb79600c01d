"""Loading large inputs cheaply without changing what is loaded: equal parts kept once (sharing.py), items of a
dump whose kind is read from their first bytes, and why-not-cached's nodes decoded only when its pod names them
(files.Selection.later)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from kubectl_kcache.errors import InputError
from kubectl_kcache.objects import Pod, Toleration
from kubectl_kcache.sharing import share, sharing
from kubectl_kcache.snapshot.dump import DumpWriter
from kubectl_kcache.snapshot.files.from_files import load_files
from kubectl_kcache.snapshot.files.load import Selection
from kubectl_kcache.snapshot.model import build
from tests import builders as b

TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
NODES = [b.node(f"gpu-{i}", {"role": "gpu"}, taints=[b.taint("nvidia.com/gpu", "present")]) for i in range(3)]
AGENTS = [b.pod(f"agent-{i}", ns="kserve", node_name=f"gpu-{i}", labels={"app": "agent"}) for i in range(3)]
for _pod in AGENTS:
    _pod["spec"]["tolerations"] = [dict(TOLERATION)]
KCNS = [b.kcn(f"gpu-{i}", {"team-a/cache": b.entry("team-a", "cache")}) for i in range(3)]
MODEL = b.pod("model-pod", node_name="gpu-1")
ITEMS = [
    *NODES,
    b.group("gpu", {"role": "gpu"}, [TOLERATION]),
    *KCNS,
    b.kernel_cache("cache", state="Ready"),
    *AGENTS,
    MODEL,
    b.config_map({"enabled": True, "defaultNodeGroup": "gpu"}),
    b.namespace("team-a"),
]


def streamed_dump(path: Path, items: list[dict[str, Any]], kind_first: bool = False) -> str:
    """A dump as `dump -o json` writes it (one item per line); `kind_first`: each item's kind before its
    apiVersion (not how dump writes them: the head is then decoded)."""
    with open(path, "wb") as fh:
        writer = DumpWriter(fh, "json")
        for obj in items:
            head = (
                {"kind": obj["kind"], "apiVersion": obj["apiVersion"]}
                if kind_first
                else {"apiVersion": obj["apiVersion"], "kind": obj["kind"]}
            )
            writer.item(msgspec.json.encode({**head, **obj}))
        writer.finish({"cluster": "c", "reads": []})
    return str(path)


def test_equal_parts_are_kept_once_while_a_snapshot_is_read(tmp_path):
    snap = load_files([streamed_dump(tmp_path / "d.json", ITEMS)])
    agents = [p for p in snap.pods if p.namespace == "kserve"]
    assert len(agents) == 3 and agents[0].tolerations is agents[1].tolerations is agents[2].tolerations
    entries = [k.status.cache_status["team-a/cache"] for k in snap.kcns]
    assert entries[0].footprints is entries[1].footprints and entries[0].image_reference is entries[2].image_reference
    built = build(ITEMS)  # decoded without the table: the same objects, field for field
    assert snap.pods == built.pods and snap.kcns == built.kcns and snap.nodes == built.nodes
    assert built.pods[0].tolerations is not built.pods[1].tolerations


def test_a_fleet_views_selection_keeps_equal_parts_once_and_one_objects_does_not(tmp_path):
    """why-not-ready -A selects what it reads but holds every member's KernelCacheNode: it shares (at 50,000
    nodes 1,064 -> 522 MB); a one-object answer holds few objects and skips the table's lookups."""
    path = streamed_dump(tmp_path / "d.json", ITEMS)
    for share_, kept_once in ((True, True), (False, False)):
        snap = load_files([path], Selection(frozenset({"kcns", "pods"}), share=share_))
        entries = [k.status.cache_status["team-a/cache"] for k in snap.kcns]
        assert (entries[0].footprints is entries[1].footprints) is kept_once
        assert snap.kcns == build(ITEMS).kcns and not snap.nodes


def test_sharing_keeps_only_equal_immutable_values():
    first = (msgspec.convert(TOLERATION, Toleration),)
    same = (msgspec.convert(TOLERATION, Toleration),)
    other = (msgspec.convert({**TOLERATION, "effect": "NoExecute"}, Toleration),)
    assert share(same) is same  # outside sharing(): nothing is kept
    with sharing():
        assert share(first) is first and share(same) is first and share(other) is other
        unhashable = ({"a": 1, "b": 2},)
        assert share(unhashable) is unhashable
        # an equal one, by its encoding (agent pods' containers and volumes); in another order, its own
        assert share(({"a": 1, "b": 2},)) is unhashable and share([{"a": 1, "b": 2}]) is not unhashable
        reordered = ({"b": 2, "a": 1},)
        assert share(reordered) is reordered
    assert share(same) is same


def test_agent_pods_containers_and_volumes_are_kept_once(tmp_path):
    items = [b.pod(f"agent-{i}", ns="kserve", node_name=f"gpu-{i}", labels={"app": "agent"}) for i in range(2)]
    for pod in items:
        pod["spec"]["volumes"] = [{"name": "cache", "hostPath": {"path": "/var/lib/kc", "type": "DirectoryOrCreate"}}]
        pod["spec"]["containers"] = [
            {
                "name": "manager",
                "image": "agent:v1",
                "env": [{"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "x"}}}],
            }
        ]
    one, two = load_files([streamed_dump(tmp_path / "d.json", items)]).pods
    assert one.spec.containers is two.spec.containers and one.spec.volumes is two.spec.volumes
    assert one.node_name != two.node_name and (one, two) == tuple(build(items).pods)


@pytest.mark.parametrize("kind_first", [False, True])
def test_a_dump_reads_the_same_whichever_order_its_items_name_their_kind(tmp_path, kind_first):
    path = streamed_dump(tmp_path / "d.json", ITEMS, kind_first)
    plain = tmp_path / "l.json"
    plain.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": ITEMS}))
    snap, other = load_files([path]), load_files([str(plain)])
    assert snap.nodes == other.nodes and snap.pods == other.pods and snap.kcns == other.kcns
    assert len(snap.pods) == 4 and len(snap.node_groups) == 1


def _pod_nodes(objects: list[tuple[str, Any]]) -> set[str]:
    return {o.node_name for f, o in objects if f == "pods" and isinstance(o, Pod) and o.name == "model-pod"}


@pytest.mark.parametrize("layout", ["streamed", "yaml-dump", "list"])
def test_held_back_nodes_are_decoded_only_when_named(tmp_path, layout):
    if layout == "streamed":
        path = streamed_dump(tmp_path / "d.json", ITEMS)
    elif layout == "yaml-dump":
        path = str(tmp_path / "d.yaml")
        Path(path).write_text(
            yaml.safe_dump(
                {"kind": "KcacheSnapshot", "version": 1, "items": ITEMS, "meta": {"cluster": "c", "reads": []}},
                sort_keys=False,
            )
        )
    else:
        path = str(tmp_path / "l.yaml")
        Path(path).write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": ITEMS}))
    fields = frozenset({"nodes", "pods"})
    some = load_files([path], Selection(fields, later={"nodes": _pod_nodes}))
    full = load_files([path], Selection(fields))
    assert [n.name for n in some.nodes] == ["gpu-1"]  # the model pod's node, nothing else
    assert some.node_by_name["gpu-1"] == full.node_by_name["gpu-1"] and some.pods == full.pods
    assert some.reads == full.reads  # the nodes were read (3 of them), only not decoded


def test_a_held_back_node_that_is_malformed_is_refused_when_named(tmp_path):
    bad = json.loads(json.dumps(NODES[1]))
    bad["spec"]["taints"][0]["effect"] = 7
    path = streamed_dump(tmp_path / "d.json", [NODES[0], bad, MODEL])
    with pytest.raises(InputError, match="gpu-1.*effect"):
        load_files([path], Selection(frozenset({"nodes", "pods"}), later={"nodes": _pod_nodes}))
    other = [n for n in NODES if n["metadata"]["name"] != "gpu-1"]  # not named: not decoded, not refused
    path = streamed_dump(tmp_path / "e.json", [*other, bad, {**MODEL, "spec": {**MODEL["spec"], "nodeName": "gpu-0"}}])
    assert [
        n.name for n in load_files([path], Selection(frozenset({"nodes", "pods"}), later={"nodes": _pod_nodes})).nodes
    ] == ["gpu-0"]


@pytest.mark.parametrize("chunk", [7, 64, 1 << 20])
def test_a_streamed_dump_reads_the_same_whatever_the_chunk_its_lines_are_cut_from(tmp_path, monkeypatch, chunk):
    from kubectl_kcache.snapshot.files import load as files

    path = streamed_dump(tmp_path / "d.json", ITEMS)
    expected = load_files([path])
    monkeypatch.setattr(files, "LINES_CHUNK", chunk)
    got = load_files([path])
    assert got == expected and len(got.nodes) == 3
    Path(path).write_bytes(Path(path).read_bytes().rstrip())  # no end of line after the meta
    assert load_files([path]) == expected
    Path(path).write_bytes(Path(path).read_bytes() + b"\n{}")  # something after the meta: read whole, and refused
    with pytest.raises(InputError):
        load_files([path])
