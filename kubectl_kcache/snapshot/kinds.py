"""The registry of kinds: for every kind the plugin reads, where it lives in the API (group, version,
plural, kind, scope: `kube/resources.py`), the Struct it decodes into (`objects/`), the ClusterSnapshot
field that holds it; and `ListSpec`, one list request. Which lists each command makes is the read plan
(`snapshot/plan.py`). The snapshot, the live collector, the file loader, the informers and the tests all look
kinds up here.

Decoding goes through the kind: `kind.decode_json(bytes)`, `kind.convert(dict)`, `kind.decode_page(bytes)`
(a `...List` page straight into typed items) and `kind.decode_watch_line(bytes)`.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .. import objects as o
from ..kube import resources as r
from ..kube.resources import Page, Resource
from ..objects import decode as d


class ListSpec(msgspec.Struct, frozen=True):
    """One list request: the resource, the namespace (None: all namespaces) and its label and field
    selectors. What was read is recorded with its spec (`reads.Read`), so whether a read covers what an
    answer needs is decided exactly (`reads.covers`). The named lists of each command are in
    `snapshot/plan.py`."""

    resource: Resource
    namespace: str | None = None
    label_selector: str = ""
    field_selector: str = ""

    @property
    def plural(self) -> str:
        return self.resource.plural

    def in_namespace(self, namespace: str | None) -> ListSpec:
        return ListSpec(self.resource, namespace, self.label_selector, self.field_selector)

    def describe(self) -> str:
        """`pods in kserve (labelSelector app=x)`: the list in words."""
        where = f" in {self.namespace}" if self.namespace else ""
        sel = ", ".join(
            f"{k} {v}" for k, v in (("labelSelector", self.label_selector), ("fieldSelector", self.field_selector)) if v
        )
        return f"{self.plural}{where}" + (f" ({sel})" if sel else "")


class Kind(msgspec.Struct, frozen=True):
    resource: Resource
    type: type[Any]
    field: str  # the ClusterSnapshot field
    # no write of ours carries its objects' resourceVersion (a precondition): an update that changes nothing
    # decoded but that (a kubelet's status report, every 5 minutes per node) can leave the object held in place
    version_unread: bool = False

    @property
    def kind(self) -> str:
        return self.resource.kind

    @property
    def group(self) -> str:
        return self.resource.group

    @property
    def plural(self) -> str:
        return self.resource.plural

    @property
    def namespaced(self) -> bool:
        return self.resource.namespaced

    @property
    def api_version(self) -> str:
        return self.resource.api_version

    def decode_json(self, data: Any) -> Any:
        """One object's JSON bytes into its Struct (msgspec.ValidationError on a bad field)."""
        return d.decode_json(data, self.type)

    def convert(self, obj: Any) -> Any:
        """One object as plain data (YAML, a dict) into its Struct."""
        return d.convert(obj, self.type)

    def decode_page(self, data: bytes) -> Page[Any]:
        """A list response's bytes into typed items and the list's resourceVersion and continue token."""
        try:
            page = d.page_decoder(self.type).decode(data)
        except d.msgspec.ValidationError as exc:
            what = _item_named(data, str(exc), self.kind)
            raise d.object_error(exc, origin=f"list {self.plural}", what=what) from None
        meta = page.metadata or d.ListMeta()
        return Page(page.items or [], meta.resource_version or "", meta.continue_ or "")

    def decode_watch_line(self, line: bytes) -> d.WatchEvent[Any]:
        try:
            return d.decode_watch_line(line, self.type)
        except d.msgspec.ValidationError as exc:
            raise d.object_error(exc, origin=f"watch {self.plural}", base="$.object") from None


def _item_named(data: bytes, message: str, kind: str) -> str:
    """'Node gpu-1 (item 3)' for the item an error points at (`$.items[3]...`), found again on error only."""
    import re

    m = re.search(r"`\$\.items\[(\d+)\]", message)
    if not m:
        return ""
    index = int(m.group(1))
    try:
        page = d.decode_json(data, d.ListPage[d.Head])
        return f"{page.items[index].describe(kind)} (item {index})" if page.items else ""
    except (d.msgspec.DecodeError, d.msgspec.ValidationError, IndexError):
        return f"item {index}"


KINDS: tuple[Kind, ...] = (
    Kind(r.NODES, o.Node, "nodes", version_unread=True),
    Kind(r.NODE_GROUPS, o.NodeGroup, "node_groups"),
    Kind(r.KERNEL_CACHE_NODES, o.KernelCacheNode, "kcns"),
    Kind(r.KERNEL_CACHES, o.KernelCache, "kernel_caches"),
    Kind(r.CAPTURES, o.Capture, "captures"),
    Kind(r.PODS, o.Pod, "pods", version_unread=True),
    Kind(r.DAEMONSETS, o.DaemonSet, "daemonsets"),
    Kind(r.DEPLOYMENTS, o.Deployment, "deployments"),
    Kind(r.REPLICASETS, o.ReplicaSet, "replica_sets"),
    Kind(r.JOBS, o.Job, "jobs"),
    Kind(r.EVENTS, o.Event, "events"),
    Kind(r.EVENTS_V1, o.Event, "events"),
    Kind(r.CONFIGMAPS, o.ConfigMap, "configmaps"),
    Kind(r.MUTATING_WEBHOOKS, o.WebhookConfiguration, "webhooks"),
    Kind(r.VALIDATING_WEBHOOKS, o.WebhookConfiguration, "validating_webhooks"),
    Kind(r.ENDPOINT_SLICES, o.EndpointSlice, "endpoint_slices"),
    Kind(r.SERVICE_ACCOUNTS, o.ServiceAccount, "service_accounts"),
    Kind(r.ROLE_BINDINGS, o.RoleBinding, "role_bindings"),
    Kind(r.ROLES, o.Role, "roles"),
    Kind(r.SECRETS, o.Secret, "secrets"),
    Kind(r.NAMESPACES, o.Namespace, "namespaces"),
    Kind(r.CRDS, o.Crd, "crds"),
    Kind(r.LEASES, o.Lease, "leases"),
)

_BY_GROUP_KIND = {(k.group, k.kind): k for k in KINDS}
_BY_RESOURCE = {(k.group, k.plural): k for k in KINDS}

# the ClusterSnapshot fields, in registry order
FIELDS: tuple[str, ...] = tuple(dict.fromkeys(k.field for k in KINDS))
# resource names (plurals) of the fields, for "not in the input" reads from files
PLURALS: tuple[str, ...] = tuple(dict.fromkeys(k.plural for k in KINDS))


def api_group(api_version: str) -> str:
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def lookup(api_version: str, kind: str) -> Kind | None:
    """The kind of an object by its apiVersion and kind; None for kinds the plugin does not read."""
    return _BY_GROUP_KIND.get((api_group(api_version), kind))


def for_resource(res: Resource) -> Kind:
    """The kind of a resource; a metadata-only resource the registry does not list as such (what a watch
    only needs to see change) has its metadata alone."""
    kind = _BY_RESOURCE.get((res.group, res.plural))
    if kind is None or res.metadata_only and not kind.resource.metadata_only:
        return Kind(res, o.PartialObject, "")
    return kind


# reconcile's informers of what it owns: the same kinds with their managedFields' writers
_WITH_WRITERS = {
    r.KERNEL_CACHE_NODES: Kind(r.KERNEL_CACHE_NODES, o.KernelCacheNodeWriters, "kcns"),
    r.DAEMONSETS: Kind(r.DAEMONSETS, o.DaemonSetWriters, "daemonsets"),
}


def with_writers(res: Resource) -> Kind:
    """The kind of `res`, decoded with the writers in its managedFields where reconcile watches for them."""
    return _WITH_WRITERS.get(res) or for_resource(res)


_OTHER_GROUPS = {"Service": ""}  # kinds findings name but the plugin does not list


def kubectl_name(kind: str, name: str) -> str:
    """`kind.group/name` as `kubectl get -o name` prints it (`node/gpu-1`, `daemonset.apps/agent`)."""
    group = next((k.group for k in KINDS if k.kind == kind), _OTHER_GROUPS.get(kind, ""))
    return f"{kind.lower()}{'.' + group if group else ''}/{name}"
