"""ClusterSnapshot: plain data for everything the commands read, built from the API (collect.py) or files.

The snapshot file format (`kubectl kcache dump`) is
    {"kind": "KcacheSnapshot", "version": 1, "meta": {...}, "items": [...]}
`--from-file` also takes a `kind: List` and plain (multi-)documents, YAML or JSON, or a folder of them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from . import objects as o
from .errors import InputError

SNAPSHOT_KIND = "KcacheSnapshot"
SNAPSHOT_VERSION = 1


@dataclass(frozen=True)
class Read:
    """What happened when one kind was read: ok, forbidden (403) or absent (404: resource not served)."""

    resource: str
    namespace: str | None
    status: str
    count: int = 0
    verb: str = "list"
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "resource": self.resource,
            "namespace": self.namespace,
            "status": self.status,
            "count": self.count,
        }
        if self.verb != "list":
            out["verb"] = self.verb
        if self.message:
            out["message"] = self.message
        return out

    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> Read:
        return Read(
            resource=str(d.get("resource", "")),
            namespace=d.get("namespace"),
            status=str(d.get("status", "ok")),
            count=int(d.get("count") or 0),
            verb=str(d.get("verb", "list")),
            message=str(d.get("message", "")),
        )


# (API group, kind) -> (snapshot field, parser, resource name used in reads)
KINDS: dict[tuple[str, str], tuple[str, Callable[[Mapping[str, Any]], Any], str]] = {
    ("", "Node"): ("nodes", o.Node.from_dict, "nodes"),
    ("serving.kserve.io", "KernelCacheNodeGroup"): ("node_groups", o.NodeGroup.from_dict, "kernelcachenodegroups"),
    ("serving.kserve.io", "KernelCacheNode"): ("kcns", o.KernelCacheNode.from_dict, "kernelcachenodes"),
    ("serving.kserve.io", "KernelCache"): ("kernel_caches", o.KernelCache.from_dict, "kernelcaches"),
    ("serving.kserve.io", "KernelCacheCapture"): ("captures", o.Capture.from_dict, "kernelcachecaptures"),
    ("", "Pod"): ("pods", o.Pod.from_dict, "pods"),
    ("apps", "DaemonSet"): ("daemonsets", o.DaemonSet.from_dict, "daemonsets"),
    ("apps", "Deployment"): ("deployments", o.Deployment.from_dict, "deployments"),
    ("batch", "Job"): ("jobs", o.Job.from_dict, "jobs"),
    ("", "Event"): ("events", o.Event.from_dict, "events"),
    ("events.k8s.io", "Event"): ("events", o.Event.from_dict, "events"),
    ("", "ConfigMap"): ("configmaps", o.ConfigMap.from_dict, "configmaps"),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): (
        "webhooks",
        o.WebhookConfiguration.from_dict,
        "mutatingwebhookconfigurations",
    ),
    ("discovery.k8s.io", "EndpointSlice"): ("endpoint_slices", o.EndpointSlice.from_dict, "endpointslices"),
    ("", "ServiceAccount"): ("service_accounts", o.ServiceAccount.from_dict, "serviceaccounts"),
    ("rbac.authorization.k8s.io", "RoleBinding"): ("role_bindings", o.RoleBinding.from_dict, "rolebindings"),
    ("", "Namespace"): ("namespaces", o.Namespace.from_dict, "namespaces"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): ("crds", o.Crd.from_dict, "customresourcedefinitions"),
}


def api_group(api_version: str) -> str:
    return api_version.rpartition("/")[0] if "/" in api_version else ""


@dataclass(frozen=True)
class SnapshotMeta:
    cluster: str = ""
    taken_at: str = ""
    server_version: str = ""
    source: str = "live"


@dataclass(frozen=True)
class ClusterSnapshot:
    meta: SnapshotMeta = SnapshotMeta()
    reads: tuple[Read, ...] = ()
    nodes: tuple[o.Node, ...] = ()
    node_groups: tuple[o.NodeGroup, ...] = ()
    kcns: tuple[o.KernelCacheNode, ...] = ()
    kernel_caches: tuple[o.KernelCache, ...] = ()
    captures: tuple[o.Capture, ...] = ()
    pods: tuple[o.Pod, ...] = ()
    daemonsets: tuple[o.DaemonSet, ...] = ()
    deployments: tuple[o.Deployment, ...] = ()
    jobs: tuple[o.Job, ...] = ()
    events: tuple[o.Event, ...] = ()
    configmaps: tuple[o.ConfigMap, ...] = ()
    webhooks: tuple[o.WebhookConfiguration, ...] = ()
    endpoint_slices: tuple[o.EndpointSlice, ...] = ()
    service_accounts: tuple[o.ServiceAccount, ...] = ()
    role_bindings: tuple[o.RoleBinding, ...] = ()
    namespaces: tuple[o.Namespace, ...] = ()
    crds: tuple[o.Crd, ...] = ()
    # True when every read is assumed ok (files without a record of reads)
    reads_assumed: bool = False
    raw_items: tuple[Mapping[str, Any], ...] = field(default=(), compare=False, repr=False)

    # ---- reads ----------------------------------------------------------------------------------
    def read_status(self, resource: str, namespace: str | None = None) -> Read | None:
        """The worst outcome of the reads of `resource` (in `namespace` when given): forbidden beats absent
        beats ok; None if never read."""
        found = [r for r in self.reads if r.resource == resource
                 and (namespace is None or r.namespace in (namespace, None))]
        if not found:
            if self.reads_assumed:
                return Read(resource, None, "ok")
            return None
        for status in ("forbidden", "absent"):
            for r in found:
                if r.status == status:
                    return r
        return found[0]

    # ---- indices --------------------------------------------------------------------------------
    @cached_property
    def node_by_name(self) -> dict[str, o.Node]:
        return {n.name: n for n in self.nodes}

    @cached_property
    def group_by_name(self) -> dict[str, o.NodeGroup]:
        return {g.name: g for g in self.node_groups}

    @cached_property
    def kcn_by_name(self) -> dict[str, o.KernelCacheNode]:
        return {k.name: k for k in self.kcns}

    @cached_property
    def kc_by_key(self) -> dict[str, o.KernelCache]:
        return {f"{k.namespace}/{k.name}": k for k in self.kernel_caches}

    def configmap(self, namespace: str, name: str) -> o.ConfigMap | None:
        return next((c for c in self.configmaps if c.meta.namespace == namespace and c.meta.name == name), None)

    def daemonset(self, namespace: str, name: str) -> o.DaemonSet | None:
        return next((d for d in self.daemonsets if d.meta.namespace == namespace and d.meta.name == name), None)

    def deployment(self, namespace: str, name: str) -> o.Deployment | None:
        return next((d for d in self.deployments if d.meta.namespace == namespace and d.meta.name == name), None)

    def namespace_exists(self, name: str) -> bool:
        return any(n.meta.name == name for n in self.namespaces)

    def pods_labelled(self, namespace: str | None, key: str, value: str | None = None) -> list[o.Pod]:
        return [
            p
            for p in self.pods
            if (namespace is None or p.namespace == namespace)
            and key in p.meta.labels
            and (value is None or p.meta.labels[key] == value)
        ]

    def object_count(self) -> int:
        return sum(len(getattr(self, f)) for f in {v[0] for v in KINDS.values()})


# ---- building from items ------------------------------------------------------------------------


def parse_item(item: Any, origin: str = "", index: int = 0) -> tuple[str, Any] | None:
    """(snapshot field, parsed object) of an API object; None for kinds the plugin does not read. A malformed
    object is an InputError naming where it came from."""
    if not isinstance(item, Mapping):
        raise InputError(f"{origin or 'input'}: item {index} is not an object")
    kind = item.get("kind")
    api_version = item.get("apiVersion", "")
    if not isinstance(kind, str) or not isinstance(api_version, str):
        raise InputError(f"{origin or 'input'}: item {index} has no kind/apiVersion")
    entry = KINDS.get((api_group(api_version), kind))
    if entry is None:
        return None
    name, parse, _ = entry
    try:
        return name, parse(item)
    except InputError as exc:
        raise InputError(f"{origin or 'input'}: {kind} (item {index}): {exc}") from None


def assemble(parsed: Iterable[tuple[str, Any]], *, meta: SnapshotMeta = SnapshotMeta(), reads: Iterable[Read] = (),
             reads_assumed: bool = False, raw_items: Iterable[Mapping[str, Any]] = ()) -> ClusterSnapshot:
    """A snapshot from parsed objects: per field, the last object of a namespace/name wins, sorted by it."""
    fields: dict[str, dict[tuple[str, str], Any]] = {v[0]: {} for v in KINDS.values()}
    for name, obj in parsed:
        fields[name][(obj.meta.namespace or "", obj.meta.name)] = obj
    values = {name: tuple(v[k] for k in sorted(v)) for name, v in fields.items()}
    return ClusterSnapshot(meta=meta, reads=tuple(reads), reads_assumed=reads_assumed, raw_items=tuple(raw_items),
                           **values)


def build(
    items: Iterable[Mapping[str, Any]],
    *,
    meta: SnapshotMeta = SnapshotMeta(),
    reads: Iterable[Read] = (),
    reads_assumed: bool = False,
    keep_raw: bool = False,
    origin: str = "",
) -> ClusterSnapshot:
    """A snapshot from API objects; objects of kinds the plugin does not read are ignored."""
    parsed: list[tuple[str, Any]] = []
    raw: list[Mapping[str, Any]] = []
    for index, item in enumerate(items):
        entry = parse_item(item, origin, index)
        if entry is None:
            continue
        parsed.append(entry)
        if keep_raw:
            raw.append(item)
    return assemble(parsed, meta=meta, reads=reads, reads_assumed=reads_assumed, raw_items=raw)


# ---- files --------------------------------------------------------------------------------------

FILE_SUFFIXES = (".yaml", ".yml", ".json")


def _files(paths: Iterable[str]) -> Iterator[str]:
    for path in paths:
        if path == "-":
            yield path
        elif os.path.isdir(path):
            for root, dirs, names in os.walk(path):
                dirs.sort()
                for n in sorted(names):
                    if n.endswith(FILE_SUFFIXES):
                        yield os.path.join(root, n)
        elif os.path.exists(path):
            yield path
        else:
            raise InputError(f"{path}: no such file or folder")


MAX_NESTING = 500
_BRACKETS = None


def _too_deep(text: str) -> bool:
    """Flow-style nesting deeper than MAX_NESTING (PyYAML's C parser can crash on tens of thousands of
    levels). Brackets inside quoted strings are counted too: a false alarm needs hundreds of them."""
    import re

    global _BRACKETS
    if _BRACKETS is None:
        _BRACKETS = re.compile(r"[\[\]{}]")
    depth = 0
    for m in _BRACKETS.finditer(text):
        depth += 1 if m.group() in "[{" else -1
        if depth > MAX_NESTING:
            return True
    return False


def _yaml_loader() -> Any:
    """A safe loader that keeps timestamps as strings, as kubectl (sigs.k8s.io/yaml) does."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):  # type: ignore[valid-type,misc]
        pass

    Loader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in base.yaml_implicit_resolvers.items()
    }
    return Loader


def _documents(path: str) -> list[Any]:
    import sys

    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read: {exc}") from None
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            return [json.loads(text)]
        except RecursionError:
            raise InputError(f"{path}: nested too deeply (more than {MAX_NESTING} levels)") from None
        except ValueError:
            pass  # JSON is YAML too; let the YAML parser give the error with a line number
    if _too_deep(text):
        raise InputError(f"{path}: nested too deeply (more than {MAX_NESTING} levels)")
    import yaml

    try:
        return [d for d in yaml.load_all(text, Loader=_yaml_loader()) if d is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"{path}: not valid YAML or JSON{where}: {problem}") from None
    except (RecursionError, MemoryError, ValueError, TypeError, OverflowError) as exc:
        raise InputError(f"{path}: not valid YAML or JSON: {type(exc).__name__}") from None


def _flatten(doc: Any, path: str, out: list[Mapping[str, Any]], meta_out: list[Mapping[str, Any]]) -> bool:
    """Collect the objects of a document; lists and `kind: *List` are walked without recursion, and a
    container met twice (a YAML alias: a bomb, or a cycle) is an error. Returns whether a snapshot document
    was seen."""
    seen: set[int] = set()
    stack: list[Any] = [doc]
    saw_snapshot = False
    while stack:
        node = stack.pop()
        if isinstance(node, (list, dict)):
            if id(node) in seen:
                raise InputError(f"{path}: a YAML alias repeats objects (or refers to itself); "
                                 "aliases are not expanded in object lists")
            seen.add(id(node))
        if isinstance(node, list):
            stack.extend(reversed(node))
            continue
        if not isinstance(node, Mapping):
            raise InputError(f"{path}: expected Kubernetes objects, found a {type(node).__name__}")
        kind = node.get("kind")
        if kind == SNAPSHOT_KIND:
            version = node.get("version")
            if version != SNAPSHOT_VERSION:
                raise InputError(f"{path}: snapshot version {version!r} is not supported (expected {SNAPSHOT_VERSION})")
            items = node.get("items")
            if not isinstance(items, list):
                raise InputError(f"{path}: snapshot has no items list")
            meta = node.get("meta") or {}
            if not isinstance(meta, Mapping):
                raise InputError(f"{path}: snapshot meta must be an object")
            meta_out.append({**meta, "_file": path})
            saw_snapshot = True
            for item in items:
                if not isinstance(item, Mapping):
                    raise InputError(f"{path}: snapshot item is a {type(item).__name__}, not an object")
                if id(item) in seen:
                    raise InputError(f"{path}: a YAML alias repeats objects; aliases are not expanded in items")
                seen.add(id(item))
                out.append(item)
        elif isinstance(kind, str) and kind.endswith("List") and "items" in node:
            items = node.get("items")
            if not isinstance(items, list):
                raise InputError(f"{path}: {kind} has no items list")
            stack.extend(reversed(items))
        else:
            out.append(node)
    return saw_snapshot


def read_documents(path: str) -> list[Mapping[str, Any]]:
    """The objects of one YAML or JSON file (`-`: stdin), lists walked: for manifests, not snapshots."""
    if path != "-" and not os.path.isfile(path):
        raise InputError(f"{path}: no such file")
    items: list[Mapping[str, Any]] = []
    for doc in _documents(path):
        _flatten(doc, path, items, [])
    return items


def load_files(paths: Iterable[str]) -> ClusterSnapshot:
    """A snapshot from files: the dump format, `kind: List`, or plain documents; folders are walked."""
    items: list[Mapping[str, Any]] = []
    metas: list[Mapping[str, Any]] = []
    names = list(_files(paths))
    if not names:
        raise InputError("--from-file: no .yaml, .yml or .json files found")
    all_snapshots = True
    for path in names:
        start = len(items)
        saw = False
        for doc in _documents(path):
            saw = _flatten(doc, path, items, metas) or saw
        all_snapshots = all_snapshots and saw
        # validate per file so that errors name the file
        build(items[start:], origin=path)
    reads: list[Read] = []
    meta = SnapshotMeta(source="file")
    for m in metas:
        try:
            reads.extend(Read.from_dict(r) for r in (m.get("reads") or []))
        except (TypeError, ValueError, AttributeError, OverflowError):
            raise InputError(f"{m.get('_file')}: snapshot meta.reads is malformed") from None
        meta = SnapshotMeta(cluster=str(m.get("cluster", "")), taken_at=str(m.get("takenAt", "")),
                            server_version=str(m.get("serverVersion", "")), source="file")
    return build(items, meta=meta, reads=reads, reads_assumed=not (metas and all_snapshots), keep_raw=True)


def to_document(snapshot: ClusterSnapshot) -> dict[str, Any]:
    """The dump file: the raw items (already stripped of managedFields and Secret data) plus the reads."""
    return {
        "kind": SNAPSHOT_KIND,
        "version": SNAPSHOT_VERSION,
        "meta": {
            "cluster": snapshot.meta.cluster,
            "takenAt": snapshot.meta.taken_at,
            "serverVersion": snapshot.meta.server_version,
            "reads": [r.to_dict() for r in snapshot.reads],
        },
        "items": list(snapshot.raw_items),
    }
