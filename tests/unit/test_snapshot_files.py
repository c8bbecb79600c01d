"""--from-file: snapshot.load_files on the dump format, `kind: List`, multi-document YAML, JSON, folders and
stdin; and on broken and hostile input, which must always be an InputError naming the file."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_kcache.errors import InputError
from kubectl_kcache.snapshot import kinds
from kubectl_kcache.snapshot import plan as readplan
from kubectl_kcache.snapshot.dump import DumpWriter
from kubectl_kcache.snapshot.files.from_files import load_files
from kubectl_kcache.snapshot.model import ClusterSnapshot
from kubectl_kcache.snapshot.reads import Read, covering
from tests import builders as b

ROOT = Path(__file__).resolve().parents[2]

NODE = b.node("gpu-1", {"role": "gpu"}, taints=[b.taint("nvidia.com/gpu", "present")])
GROUP = b.group("gpu", {"role": "gpu"}, [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])
KCN = b.kcn("gpu-1", {"team-a/cache": b.entry("team-a", "cache")})
KC = b.kernel_cache("cache", state="Ready")
CAPTURE = b.capture("model-kcc-1", status=b.capture_status(node_name="gpu-1"))
DS = b.agent_daemonset(tolerations=[GROUP["spec"]["tolerations"][0]], terms=[b.term({"role": "gpu"})])
CM = b.config_map({"enabled": True, "defaultNodeGroup": "gpu"})
OBJECTS = [NODE, GROUP, KCN, KC, CAPTURE, DS, CM, b.pod("model-pod", node_name="gpu-1"), b.namespace("team-a")]


def dump_doc(items: list[dict[str, Any]], reads: list[dict[str, Any]] | None = None, **meta: Any) -> dict[str, Any]:
    return {
        "kind": "KcacheSnapshot",
        "version": 1,
        "meta": {
            "cluster": "prod",
            "takenAt": "2026-11-29T10:00:00Z",
            "serverVersion": "v1.36.3",
            "reads": reads if reads is not None else [],
            **meta,
        },
        "items": items,
    }


def write(path: Path, content: Any, fmt: str = "yaml") -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, (str, bytes)):
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    elif fmt == "json":
        path.write_text(json.dumps(content))
    else:
        path.write_text(yaml.safe_dump(content, sort_keys=False))
    return str(path)


def input_error(paths: list[str]) -> str:
    with pytest.raises(InputError) as exc:
        load_files(paths)
    return str(exc.value)


def counts(snap: ClusterSnapshot) -> dict[str, int]:
    return {
        f: len(getattr(snap, f))
        for f in ("nodes", "node_groups", "kcns", "kernel_caches", "captures", "daemonsets", "configmaps", "pods")
    }


ALL_ONE = {
    "nodes": 1,
    "node_groups": 1,
    "kcns": 1,
    "kernel_caches": 1,
    "captures": 1,
    "daemonsets": 1,
    "configmaps": 1,
    "pods": 1,
}


# ---- the formats -------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_dump_format(tmp_path, fmt):
    reads = [
        {"resource": "nodes", "namespace": None, "status": "ok", "count": 1},
        {"resource": "kernelcaches", "namespace": None, "status": "forbidden", "count": 0},
        {"resource": "jobs", "namespace": "kserve-kernelcache-jobs", "status": "absent", "count": 0, "verb": "list"},
    ]
    path = write(tmp_path / f"dump.{fmt}", dump_doc(OBJECTS, reads), fmt)
    snap = load_files([path])
    assert counts(snap) == ALL_ONE
    assert snap.meta.cluster == "prod"
    assert snap.meta.taken_at == "2026-11-29T10:00:00Z"
    assert snap.meta.server_version == "v1.36.3"
    assert snap.meta.source == "file"
    assert not snap.reads_assumed
    assert snap.reads == (
        Read("nodes", None, "ok", 1),
        Read("kernelcaches", None, "forbidden", 0),
        Read("jobs", "kserve-kernelcache-jobs", "absent", 0),
    )
    assert covering(snap, readplan.KERNEL_CACHES.in_namespace(None)).status == "forbidden"
    assert covering(snap, readplan.ISVC_PODS.in_namespace(None)).status == "not-in-input"  # never read


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_dump_round_trip(tmp_path, fmt):
    """What the streaming dump writer writes loads back as the same objects and reads."""
    first = load_files([write(tmp_path / "a.yaml", dump_doc(OBJECTS))])
    path = tmp_path / f"b.{fmt}"
    with open(path, "wb") as fh:
        writer = DumpWriter(fh, fmt)
        for obj in OBJECTS:
            writer.item(json.dumps(obj).encode())
        writer.finish(
            {
                "cluster": "prod",
                "server": "https://prod:6443",
                "takenAt": "2026-11-29T10:00:00Z",
                "reads": [{"resource": "nodes", "namespace": None, "status": "ok", "count": 1}],
            }
        )
    again = load_files([str(path)])
    assert counts(again) == ALL_ONE
    assert again.nodes == first.nodes
    assert again.kernel_caches == first.kernel_caches
    assert again.meta.server == "https://prod:6443"
    assert again.reads == (Read("nodes", None, "ok", 1),)
    assert not again.reads_assumed


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_empty_dump_round_trip(tmp_path, fmt):
    path = tmp_path / f"empty.{fmt}"
    with open(path, "wb") as fh:
        DumpWriter(fh, fmt).finish({"cluster": "c", "reads": [{"resource": "nodes", "status": "forbidden"}]})
    snap = load_files([str(path)])
    assert snap.object_count() == 0
    assert covering(snap, readplan.NODES).status == "forbidden"


def _json_dump(path: Path, objects: list[dict[str, Any]]) -> bytes:
    with open(path, "wb") as fh:
        writer = DumpWriter(fh, "json")
        for obj in objects:
            writer.item(json.dumps(obj).encode())
        writer.finish({"cluster": "prod", "reads": [{"resource": "nodes", "status": "ok", "count": len(objects)}]})
    return path.read_bytes()


@pytest.mark.parametrize("cut", ["after an object", "in an object", "in the meta", "before the meta"])
def test_a_json_dump_cut_short_is_truncated_never_a_snapshot(tmp_path, cut):
    """The streaming loader refuses a dump that ends before the record of its reads, wherever it was cut, and
    says how many whole objects it holds."""
    whole = _json_dump(tmp_path / "whole.json", [b.node(f"n{i}", {"pool": "gpu"}) for i in range(3)])
    lines = whole.splitlines(keepends=True)
    if cut == "after an object":
        text, objects = b"".join(lines[:3]), 2
    elif cut == "in an object":
        text, objects = b"".join(lines[:3]) + lines[3][:20], 2
    elif cut == "in the meta":
        text, objects = whole[:-12], 3
    else:
        text, objects = b"".join(lines[:4]), 3
    path = tmp_path / "cut.json"
    path.write_bytes(text)
    with pytest.raises(InputError, match=f"the dump is truncated: it ends after {objects} objects"):
        load_files([str(path)])
    path.write_bytes(whole)
    assert len(load_files([str(path)]).nodes) == 3


def test_dump_with_sorted_keys_keeps_its_reads(tmp_path):
    nodes = [b.node(f"n{i}", {"pad": "x" * 60}) for i in range(40)]
    doc = dump_doc(nodes, [{"resource": "nodes", "namespace": None, "status": "ok", "count": 40}])
    path = tmp_path / "sorted.json"
    path.write_text(json.dumps(doc, sort_keys=True, indent=2))
    snap = load_files([str(path)])
    assert len(snap.nodes) == 40
    assert not snap.reads_assumed
    assert covering(snap, readplan.KERNEL_CACHES.in_namespace(None)).status == "not-in-input"


def test_kind_list(tmp_path):
    snap = load_files([write(tmp_path / "list.yaml", {"apiVersion": "v1", "kind": "List", "items": OBJECTS})])
    assert counts(snap) == ALL_ONE
    assert snap.reads_assumed
    assert covering(snap, readplan.NODES) == Read("nodes", None, "ok", 1)
    # kinds the list does not hold are not in the input: nothing is known about them
    assert covering(snap, readplan.PREPARATION_JOBS.in_namespace("x")).status == "not-in-input"
    assert covering(snap, readplan.WEBHOOK).status == "not-in-input"


def test_typed_lists_and_nested_lists(tmp_path):
    doc = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {"apiVersion": "v1", "kind": "NodeList", "items": [NODE, b.node("gpu-2")]},
            {"apiVersion": "serving.kserve.io/v1alpha1", "kind": "KernelCacheNodeGroupList", "items": [GROUP]},
        ],
    }
    snap = load_files([write(tmp_path / "lists.yaml", doc)])
    assert [n.name for n in snap.nodes] == ["gpu-1", "gpu-2"]
    assert [g.name for g in snap.node_groups] == ["gpu"]


def test_multi_document_yaml(tmp_path):
    text = "---\n" + "\n---\n".join(yaml.safe_dump(o) for o in OBJECTS) + "\n---\n...\n"
    snap = load_files([write(tmp_path / "multi.yaml", text)])
    assert counts(snap) == ALL_ONE
    assert snap.reads_assumed


@pytest.mark.parametrize("content", [NODE, [NODE, GROUP]])
def test_json(tmp_path, content):
    snap = load_files([write(tmp_path / "objects.json", content, "json")])
    assert [n.name for n in snap.nodes] == ["gpu-1"]


def test_json_with_a_utf8_bom_and_leading_space(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf  \n" + json.dumps(NODE).encode())
    assert [n.name for n in load_files([str(path)]).nodes] == ["gpu-1"]


def test_unknown_kinds_are_ignored_but_kept_raw(tmp_path):
    secretish = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "x", "namespace": "kserve"}}
    crd_other = {"apiVersion": "example.com/v1", "kind": "Node", "metadata": {"name": "not-a-node"}}
    snap = load_files([write(tmp_path / "x.yaml", {"kind": "List", "items": [NODE, secretish, crd_other]})])
    assert [n.name for n in snap.nodes] == ["gpu-1"]


def test_events_in_both_apis(tmp_path):
    core = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e1", "namespace": "team-a"},
        "involvedObject": {"kind": "KernelCacheCapture", "name": "c"},
        "reason": "AmbiguousNodeGroup",
        "message": "m",
    }
    new = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "e2", "namespace": "team-a"},
        "regarding": {"kind": "KernelCacheCapture", "name": "c"},
        "reason": "AmbiguousNodeGroup",
        "note": "m",
    }
    snap = load_files([write(tmp_path / "ev.yaml", {"kind": "List", "items": [core, new]})])
    assert sorted(e.meta.name for e in snap.events) == ["e1", "e2"]


def test_folder_is_walked_sorted_and_filtered(tmp_path):
    folder = tmp_path / "snap"
    write(folder / "b.yaml", b.node("n1", {"from": "b"}))
    write(folder / "a.json", b.node("n1", {"from": "a"}), "json")
    write(folder / "sub" / "c.yml", b.node("n1", {"from": "sub"}))
    write(folder / "z" / "d.yaml", b.node("n2"))
    write(folder / "README.md", "# not yaml: [")
    write(folder / "notes.txt", "{{{")
    write(folder / "data.yaml.bak", "{{{")
    snap = load_files([str(folder)])
    # a.json, b.yaml, sub/c.yml, z/d.yaml: the last definition of n1 wins
    assert snap.node_by_name["n1"].labels["from"] == "sub"
    assert sorted(snap.node_by_name) == ["n1", "n2"]


def test_several_paths_later_wins(tmp_path):
    first = write(tmp_path / "1.yaml", b.node("n1", {"v": "1"}))
    second = write(tmp_path / "2.yaml", b.node("n1", {"v": "2"}))
    assert load_files([first, second]).node_by_name["n1"].labels["v"] == "2"
    assert load_files([second, first]).node_by_name["n1"].labels["v"] == "1"


def test_duplicates_in_one_file_later_wins(tmp_path):
    doc = {"kind": "List", "items": [b.node("n1", {"v": "1"}), b.node("n1", {"v": "2"})]}
    snap = load_files([write(tmp_path / "dup.yaml", doc)])
    assert len(snap.nodes) == 1
    assert snap.nodes[0].labels["v"] == "2"


def test_same_name_in_two_namespaces_is_two_objects(tmp_path):
    doc = {"kind": "List", "items": [b.kernel_cache("cache", ns="a"), b.kernel_cache("cache", ns="b")]}
    assert sorted(load_files([write(tmp_path / "kc.yaml", doc)]).kc_by_key) == ["a/cache", "b/cache"]


def test_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(yaml.safe_dump({"kind": "List", "items": OBJECTS})))
    snap = load_files(["-"])
    assert counts(snap) == ALL_ONE
    assert snap.reads_assumed


def test_stdin_dump_keeps_its_reads(monkeypatch):
    reads = [{"resource": "nodes", "namespace": None, "status": "forbidden", "count": 0}]
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(dump_doc([GROUP], reads))))
    snap = load_files(["-"])
    assert covering(snap, readplan.NODES).status == "forbidden"


def test_dump_plus_plain_file_assumes_reads(tmp_path):
    dump = write(tmp_path / "dump.yaml", dump_doc([GROUP], [{"resource": "nodes", "status": "ok", "count": 0}]))
    plain = write(tmp_path / "node.yaml", NODE)
    snap = load_files([dump, plain])
    assert snap.reads_assumed
    assert [n.name for n in snap.nodes] == ["gpu-1"]


@pytest.mark.parametrize("text", ["", "\n---\n...\n", "[]", '{"kind": "List", "apiVersion": "v1", "items": []}'])
def test_empty_input_is_an_error(tmp_path, text):
    path = write(tmp_path / "empty.yaml", text)
    assert input_error([path]) == f"no Kubernetes objects in {path}"


# ---- errors name the file ----------------------------------------------------------------------------


def test_missing_path(tmp_path):
    missing = str(tmp_path / "nope.yaml")
    assert missing in input_error([missing])


def test_folder_without_files(tmp_path):
    (tmp_path / "empty").mkdir()
    write(tmp_path / "empty" / "notes.txt", "x")
    assert "no .yaml, .yml or .json files" in input_error([str(tmp_path / "empty")])


def test_invalid_yaml_with_line_number(tmp_path):
    path = write(tmp_path / "bad.yaml", "apiVersion: v1\nkind: Node\nmetadata:\n  name: [a\n  labels: {\n")
    msg = input_error([path])
    assert msg.startswith(path)
    assert "line " in msg


def test_invalid_json_is_reported_with_a_line_number(tmp_path):
    path = write(tmp_path / "bad.json", '{\n  "kind": "Node",\n  "metadata": {"name": "x",,}\n}\n')
    msg = input_error([path])
    assert msg.startswith(path)
    assert "line 3" in msg


@pytest.mark.parametrize("text", ["hello\n", "42\n", "- a\n- b\n", "true\n", '"string"'])
def test_scalar_documents(tmp_path, text):
    path = write(tmp_path / "scalar.yaml", text)
    assert path in input_error([path])


@pytest.mark.parametrize(
    "doc",
    [
        {"kind": "List", "items": [NODE, 1]},
        {"kind": "List", "items": [NODE, "text"]},
        {"kind": "List", "items": "nope"},
        dump_doc([NODE, 5]),
        dump_doc([NODE, [NODE]]),
    ],
)
def test_items_that_are_not_objects(tmp_path, doc):
    path = write(tmp_path / "items.yaml", doc)
    assert path in input_error([path])


@pytest.mark.parametrize(
    "doc",
    [
        {"kind": "List", "items": [{"apiVersion": "v1", "metadata": {"name": "x"}}]},
        {"kind": 5, "apiVersion": "v1"},
        {"kind": "Node", "apiVersion": ["v1"]},
    ],
)
def test_items_without_kind_or_api_version(tmp_path, doc):
    path = write(tmp_path / "kindless.yaml", doc)
    assert path in input_error([path])


def with_path(obj: dict[str, Any], path: list[Any], value: Any) -> dict[str, Any]:
    out = json.loads(json.dumps(obj))
    cur = out
    for key in path[:-1]:
        cur = cur[key]
    cur[path[-1]] = value
    return out


@pytest.mark.parametrize(
    ("obj", "path", "value", "field"),
    [
        (NODE, ["metadata", "labels"], ["role", "gpu"], "labels"),
        (NODE, ["spec", "taints"], "nvidia.com/gpu:NoSchedule", "taints"),
        (NODE, ["metadata", "name"], {"a": 1}, "name"),
        (NODE, ["spec", "unschedulable"], "maybe", "unschedulable"),
        (GROUP, ["spec", "tolerations", 0, "tolerationSeconds"], "abc", "tolerationSeconds"),
        (GROUP, ["spec", "nodeSelector"], "role=gpu", "nodeSelector"),
        (GROUP, ["spec", "nodeSelector", "role"], ["gpu"], "nodeSelector"),
        (KCN, ["status", "cacheStatus"], [1, 2], "cacheStatus"),
        (KC, ["spec", "artifact", "cachePaths"], "/root/.cache", "cachePaths"),
        (CAPTURE, ["status", "activeSession"], "s-1", "activeSession"),
        (CAPTURE, ["metadata", "generation"], "two", "generation"),
        (DS, ["spec", "template", "spec", "tolerations"], {"key": "a"}, "tolerations"),
        (CM, ["data"], ["kernelcache"], "data"),
    ],
)
def test_wrong_field_types(tmp_path, obj, path, value, field):
    file = write(tmp_path / "obj.yaml", with_path(obj, path, value))
    msg = input_error([file])
    assert msg.startswith(file)
    assert field in msg
    assert obj["kind"] in msg


def test_object_without_name(tmp_path):
    file = write(tmp_path / "noname.yaml", {"apiVersion": "v1", "kind": "Node", "metadata": {"labels": {}}})
    assert "metadata.name" in input_error([file])


def test_snapshot_version_2(tmp_path):
    doc = dump_doc([NODE])
    doc["version"] = 2
    path = write(tmp_path / "v2.yaml", doc)
    msg = input_error([path])
    assert path in msg
    assert "version 2" in msg


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda d: d.pop("items"), "items"),
        (lambda d: d.update(items={"a": NODE}), "items"),
        (lambda d: d.update(meta=["x"]), "meta"),
        (lambda d: d.pop("version"), "version"),
    ],
)
def test_malformed_snapshot(tmp_path, change, words):
    doc = dump_doc([NODE])
    change(doc)
    path = write(tmp_path / "snap.yaml", doc)
    msg = input_error([path])
    assert path in msg
    assert words in msg


@pytest.mark.parametrize("reads", [[1], "nodes", [{"resource": "nodes", "count": "many"}], [{"count": [1]}]])
def test_malformed_reads(tmp_path, reads):
    path = write(tmp_path / "snap.yaml", dump_doc([NODE], reads))
    assert "reads" in input_error([path])


def test_malformed_reads_names_the_file(tmp_path):
    path = write(tmp_path / "snap.yaml", dump_doc([NODE], [1]))
    assert path in input_error([path])


def test_infinite_read_count(tmp_path):
    path = write(
        tmp_path / "snap.yaml",
        "kind: KcacheSnapshot\nversion: 1\nmeta: {reads: [{resource: nodes, count: .inf}]}\nitems: []\n",
    )
    assert path in input_error([path])


def test_binary_garbage(tmp_path):
    path = write(tmp_path / "garbage.yaml", bytes(range(256)) * 8)
    assert path in input_error([path])


@pytest.mark.parametrize("data", [b"\x00\x01\x02kind: Node", b"\x1b[31m: red", "kind: \u0007bell".encode()])
def test_control_characters(tmp_path, data):
    path = write(tmp_path / "ctl.yaml", data)
    assert path in input_error([path])


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_utf16_and_utf32_with_a_bom(tmp_path, encoding):
    """What PowerShell's `>` writes (UTF-16 LE with a BOM)."""
    text = yaml.safe_dump(NODE)
    data = text.encode(encoding) if encoding != "utf-16-be" else b"\xfe\xff" + text.encode("utf-16-be")
    path = write(tmp_path / "utf16.yaml", data)
    assert [n.name for n in load_files([path]).nodes] == ["gpu-1"]


def test_utf16_without_a_bom_is_refused(tmp_path):
    path = write(tmp_path / "utf16.yaml", yaml.safe_dump(NODE).encode("utf-16-le"))
    assert path in input_error([path])


def test_huge_number_in_yaml(tmp_path):
    path = write(
        tmp_path / "huge.yaml", "kind: Node\napiVersion: v1\nmetadata:\n  name: n\n  generation: " + "9" * 5000
    )
    assert path in input_error([path])


def test_huge_float_in_an_integer_field(tmp_path):
    path = write(tmp_path / "huge.yaml", "kind: Node\napiVersion: v1\nmetadata:\n  name: n\n  generation: 1e999\n")
    assert path in input_error([path])


def test_huge_number_as_an_annotation_is_a_string(tmp_path):
    node = b.node("n")
    node["metadata"]["annotations"] = {"big": "9" * 5000}
    path = write(tmp_path / "huge.yaml", node)
    assert load_files([path]).nodes[0].meta.annotations["big"] == "9" * 5000


def test_a_label_value_kubernetes_would_refuse_is_refused_in_a_short_line(tmp_path):
    path = write(tmp_path / "huge.yaml", b.node("n", {"big": "9" * 5000}))
    message = input_error([path])
    assert message == (
        f'{path}: Node "n": Kubernetes would refuse this object: metadata.labels: Invalid value: '
        f'"{"9" * 60}"... (5000 characters): must be no more than 63 bytes'
    )


def test_huge_number_in_json(tmp_path):
    path = write(
        tmp_path / "huge.json",
        '{"kind":"Node","apiVersion":"v1","metadata":{"name":"n","generation":' + "9" * 5000 + "}}",
    )
    assert path in input_error([path])


@pytest.mark.parametrize(
    ("name", "text"), [("deep.json", "[" * 10000 + "]" * 10000), ("deep.yaml", "- " * 10000 + "x\n")]
)
def test_deep_nesting(tmp_path, name, text):
    path = write(tmp_path / name, text)
    assert path in input_error([path])


def test_deep_nesting_inside_an_object(tmp_path):
    text = '{"kind":"Node","apiVersion":"v1","metadata":{"name":"n","labels":' + "[" * 5000 + "]" * 5000 + "}}"
    path = write(tmp_path / "deep.json", text)
    assert path in input_error([path])


def run_loader(tmp_path: Path, text: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """load_files in a child process (a crash or a hang must not take the test run with it)."""
    path = write(tmp_path / "hostile.yaml", text)
    code = textwrap.dedent(
        f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
        from kubectl_kcache.errors import InputError
        from kubectl_kcache.snapshot.files.from_files import load_files
        try:
            load_files([{path!r}])
            print("LOADED")
        except InputError as exc:
            print("INPUT-ERROR", exc)
        """
    )
    try:
        return subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess([], -1, "", "timed out")


def test_very_deep_nesting_does_not_crash_the_process(tmp_path):
    result = run_loader(tmp_path, "[" * 100000 + "]" * 100000, timeout=60)
    assert result.returncode == 0, result.stderr[-500:]
    assert "INPUT-ERROR" in result.stdout


def bomb(levels: int, leaf: str) -> list[str]:
    lines = [f"l0: &l0 {leaf}"]
    for i in range(1, levels + 1):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]")
    return lines


def test_billion_laughs_finishes_quickly(tmp_path):
    path = write(tmp_path / "lol.yaml", "\n".join(bomb(9, '"lol"')) + "\n")
    start = time.monotonic()
    assert path in input_error([path])
    assert time.monotonic() - start < 5


def test_billion_laughs_as_a_document_list_finishes_quickly(tmp_path):
    text = "- &a [" + ", ".join(['"lol"'] * 9) + "]\n"
    text += "".join(f"- &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(8))
    path = write(tmp_path / "lol.yaml", text)
    start = time.monotonic()
    assert path in input_error([path])
    assert time.monotonic() - start < 5


def test_alias_bomb_in_labels_finishes_quickly(tmp_path):
    lines = bomb(9, '"lol"')
    text = "x:\n" + "\n".join("  " + line for line in lines) + "\nkind: Node\napiVersion: v1\nmetadata:\n"
    text += "  name: n\n  labels: {a: *l9}\n"
    path = write(tmp_path / "lol.yaml", text)
    start = time.monotonic()
    assert path in input_error([path])
    assert time.monotonic() - start < 5


def test_alias_bomb_in_items_finishes_quickly(tmp_path):
    lines = bomb(8, "{kind: Foo, apiVersion: v1}")
    text = "kind: List\napiVersion: v1\nbomb:\n" + "\n".join("  " + line for line in lines) + "\nitems: *l8\n"
    result = run_loader(tmp_path, text, timeout=5)
    assert result.returncode == 0, result.stderr[-500:]
    assert "INPUT-ERROR" in result.stdout


@pytest.mark.parametrize("text", ["&a [*a]\n", "&a {kind: List, apiVersion: v1, items: [*a]}\n"])
def test_recursive_alias(tmp_path, text):
    path = write(tmp_path / "rec.yaml", text)
    assert path in input_error([path])


def test_cache_status_keys_of_mixed_types(tmp_path):
    text = (
        "kind: KernelCacheNode\napiVersion: serving.kserve.io/v1alpha1\nmetadata: {name: n}\n"
        "status:\n  cacheStatus:\n    1: {state: Ready}\n    a/b: {state: Ready}\n"
    )
    path = write(tmp_path / "kcn.yaml", text)
    # Kubernetes' keys are strings: the integer key is refused at the map's path, in words (never msgspec's
    # "at `key` in `$...`")
    assert input_error([path]) == (
        f"{path}: KernelCacheNode n: $.status.cacheStatus: a key is an integer, expected a string"
    )


def test_unquoted_timestamp_is_accepted(tmp_path):
    text = "kind: Node\napiVersion: v1\nmetadata:\n  name: n\n  creationTimestamp: 2026-11-29T10:00:00Z\n"
    assert load_files([write(tmp_path / "ts.yaml", text)]).nodes[0].meta.created.startswith("2026-11-29")


def test_python_tags_are_refused(tmp_path):
    path = write(tmp_path / "tag.yaml", "!!python/object/apply:os.system ['echo hacked']\n")
    assert path in input_error([path])


# ---- properties: never anything but a snapshot or an InputError --------------------------------------

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
)
JSONISH = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(st.text(max_size=10), children, max_size=5),
    ),
    max_leaves=25,
)
# every (apiVersion, kind) the loader parses, plus the containers
KIND_PAIRS = st.sampled_from(
    sorted({(f"{k.group}/v1" if k.group else "v1", k.kind) for k in kinds.KINDS})
    + [("v1", "List"), ("v1", "KcacheSnapshot"), ("serving.kserve.io/v1alpha1", "KernelCacheNodeList")]
)
ITEM = st.fixed_dictionaries(
    {"metadata": st.fixed_dictionaries({"name": st.text(min_size=1, max_size=5)}, optional={"labels": JSONISH})},
    optional={"spec": JSONISH, "status": JSONISH, "data": JSONISH},
)


def check_loads_or_input_error(path: str) -> None:
    try:
        snap = load_files([path])
    except InputError as exc:
        assert str(exc)
        return
    assert isinstance(snap, ClusterSnapshot)


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(doc=JSONISH, fmt=st.sampled_from(["json", "yaml"]))
def test_arbitrary_documents(tmp_path, doc, fmt):
    check_loads_or_input_error(write(tmp_path / f"doc.{fmt}", doc, fmt))


@SETTINGS
@given(
    pair=KIND_PAIRS,
    body=st.dictionaries(
        st.sampled_from(["metadata", "spec", "status", "items", "data", "version", "meta"]), JSONISH, max_size=4
    ),
)
def test_arbitrary_objects_of_known_kinds(tmp_path, pair, body):
    api_version, kind = pair
    check_loads_or_input_error(write(tmp_path / "obj.json", {"kind": kind, "apiVersion": api_version, **body}, "json"))


@SETTINGS
@given(pair=KIND_PAIRS, item=ITEM, fmt=st.sampled_from(["json", "yaml"]))
def test_named_objects_with_arbitrary_spec_and_status(tmp_path, pair, item, fmt):
    api_version, kind = pair
    check_loads_or_input_error(write(tmp_path / f"obj.{fmt}", {"kind": kind, "apiVersion": api_version, **item}, fmt))


def paths_of(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(paths_of(v, prefix + (k,)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(paths_of(v, prefix + (i,)))
    return out


def replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = json.loads(json.dumps(value))
    cur = copy
    for key in path[:-1]:
        cur = cur[key]
    cur[path[-1]] = new
    return copy


MUTABLE = [
    NODE,
    GROUP,
    KCN,
    KC,
    CAPTURE,
    DS,
    CM,
    b.pod("p", node_name="gpu-1", waiting=("ErrImagePull", "pull failed")),
    b.controller_deployment(),
    {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "x"},
        "spec": {"template": {"spec": {"volumes": [{"name": "v", "image": {"reference": "r"}}]}}},
        "status": {"failed": 1, "conditions": [{"type": "Failed", "status": "True"}]},
    },
    {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "e", "namespace": "x"},
        "regarding": {"kind": "KernelCacheCapture", "name": "c"},
        "note": "n",
        "series": {"count": 3},
    },
    {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "w"},
        "webhooks": [{"name": "x", "clientConfig": {"service": {"name": "s"}}}],
    },
    {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "c"},
        "spec": {"group": "g", "names": {"kind": "K"}, "versions": [{"name": "v1alpha1", "served": True}]},
    },
]


@SETTINGS
@given(data=st.data(), fmt=st.sampled_from(["json", "yaml"]), wrap=st.sampled_from(["plain", "list"]))
def test_mutated_kubernetes_objects(tmp_path, data, fmt, wrap):
    obj = data.draw(st.sampled_from(MUTABLE))
    for _ in range(data.draw(st.integers(min_value=1, max_value=3))):
        path = data.draw(st.sampled_from(paths_of(obj)))
        obj = replace(obj, path, data.draw(JSONISH))
    doc = {"apiVersion": "v1", "kind": "List", "items": [obj]} if wrap == "list" else obj
    check_loads_or_input_error(write(tmp_path / f"mutated.{fmt}", doc, fmt))


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_dumps_as_written_are_read_item_by_item(tmp_path, monkeypatch, fmt):
    """A dump laid out as `dump` writes it is streamed (the file is never read whole, nor parsed as one
    document); anything else falls back to reading it whole, with the same result."""
    from kubectl_kcache.snapshot.files import load as files

    path = tmp_path / f"d.{fmt}"
    with open(path, "wb") as fh:
        writer = DumpWriter(fh, fmt)
        for obj in OBJECTS:
            writer.item(json.dumps(obj).encode())
        writer.finish({"cluster": "c", "reads": [{"resource": "nodes", "status": "ok", "count": 1}]})

    def whole(*_args: Any) -> Any:
        raise AssertionError("read whole")

    with monkeypatch.context() as m:
        m.setattr(files, "read_bytes", whole)
        streamed = load_files([str(path)])
    assert counts(streamed) == ALL_ONE and not streamed.reads_assumed
    # the same document re-laid out (sorted keys, indented) is read whole, to the same objects
    text = path.read_bytes()
    doc = json.loads(text) if fmt == "json" else yaml.safe_load(text)
    other = write(tmp_path / f"other.{fmt}", json.dumps(doc, indent=1, sort_keys=True) if fmt == "json" else doc)
    again = load_files([other])
    assert again.nodes == streamed.nodes and again.reads == streamed.reads


def test_a_streamed_dump_with_a_bad_item_names_its_path(tmp_path):
    bad = json.loads(json.dumps(NODE))
    bad["spec"]["taints"][0]["effect"] = 7
    path = tmp_path / "d.json"
    with open(path, "wb") as fh:
        writer = DumpWriter(fh, "json")
        for obj in (GROUP, bad):
            writer.item(json.dumps(obj).encode())
        writer.finish({"cluster": "c", "reads": []})
    assert input_error([str(path)]) == (
        f"{path}: Node gpu-1: $.items[1].spec.taints[0].effect: expected a string, got an integer"
    )


# ---- selective loading (why-group and why-not-cached decode only what they read) -------------------------


@pytest.mark.parametrize("fmt", ["yaml", "json"])
@pytest.mark.parametrize("dump", [True, False])
def test_a_selection_decodes_only_its_kinds_and_the_namespace_pods(tmp_path, fmt, dump):
    from kubectl_kcache.snapshot.files.load import Selection

    other_pod = b.pod("agent-x", ns="kserve", node_name="gpu-1")
    items = [*OBJECTS, other_pod]
    path = write(
        tmp_path / f"in.{fmt}", dump_doc(items) if dump else {"apiVersion": "v1", "kind": "List", "items": items}, fmt
    )
    full = load_files([path])
    some = load_files([path], Selection(frozenset({"nodes", "pods", "kernel_caches"}), {"pods": "team-a"}))
    assert counts(some) == {**{k: 0 for k in ALL_ONE}, "nodes": 1, "kernel_caches": 1, "pods": 1}
    assert [p.name for p in some.pods] == ["model-pod"] and len(full.pods) == 2
    assert some.nodes == full.nodes and some.kernel_caches == full.kernel_caches
    assert some.reads == full.reads  # what was read is the input's record, not the selection's


def test_a_selection_does_not_refuse_what_it_does_not_decode(tmp_path):
    from kubectl_kcache.snapshot.files.load import Selection

    bad = b.kcn("gpu-2")
    bad["status"] = {"cacheStatus": "not a map"}
    path = write(tmp_path / "in.yaml", dump_doc([NODE, bad]))
    assert "cacheStatus" in input_error([path])
    assert len(load_files([path], Selection(frozenset({"nodes"}))).nodes) == 1


def test_a_selection_can_read_nodes_without_their_images(tmp_path):
    from kubectl_kcache.objects import Node, NodeWithoutImages
    from kubectl_kcache.snapshot.files.load import Selection

    node = b.node("gpu-1", {"role": "gpu"})
    node["status"]["images"] = [{"names": ["registry/a@sha256:1"], "sizeBytes": 10}]
    path = write(tmp_path / "in.json", dump_doc([node]), "json")
    full = load_files([path]).nodes[0]
    slim = load_files([path], Selection(types={"nodes": NodeWithoutImages})).nodes[0]
    assert full.lists_image("registry/a@sha256:1") and full.image_count == 1
    assert isinstance(slim, Node) and not slim.lists_image("registry/a@sha256:1") and slim.image_count == 0
    assert (slim.labels, slim.taints, slim.ready) == (full.labels, full.taints, full.ready)


# ---- one walk for JSON and YAML ---------------------------------------------------------------------------

WALKED = [
    [
        {
            "apiVersion": "v1",
            "kind": "List",
            "items": [
                [NODE],
                {
                    "apiVersion": "v1",
                    "kind": "NodeList",
                    "items": [{k: v for k, v in NODE.items() if k not in ("kind", "apiVersion")}],
                },
            ],
        },
        KC,
    ],
    {"apiVersion": "v1", "kind": "NodeList", "items": "not a list"},
    [NODE, 3],
    {"apiVersion": "v1", "kind": "List", "items": [{"kind": "KcacheSnapshot", "version": 1, "items": []}]},
]


@pytest.mark.parametrize("content", WALKED, ids=["nested", "items-not-a-list", "a-number", "snapshot-inside"])
def test_json_and_yaml_input_are_walked_alike(tmp_path, content):
    """The same documents as JSON and as YAML: the same objects, or the same error at the same path."""
    outcomes = []
    for fmt in ("json", "yaml"):
        path = write(tmp_path / f"in.{fmt}", content, fmt)
        try:
            outcomes.append(counts(load_files([path])))
        except InputError as exc:
            outcomes.append(str(exc).replace(path, "FILE"))
    assert outcomes[0] == outcomes[1]
    assert (
        outcomes[0] == {**{f: 0 for f in outcomes[0]}, "nodes": 1, "kernel_caches": 1}
        if content is WALKED[0]
        else (isinstance(outcomes[0], str) and outcomes[0].startswith("FILE: $"))
    )
