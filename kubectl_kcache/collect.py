"""Build a ClusterSnapshot from the live API: each kind listed once, paginated; singletons by field
selector (friendly to RBAC resourceNames); pods only by label where the agent and preparation Jobs run.

A 403 on a list records the read as forbidden, a 404 (resource not served) as absent; the commands
decide what that means for them.

Each page's bytes are decoded straight into the kind's Struct (`kinds.py`): the fields the commands do
not read are never built, and memory follows the slim objects plus one page. For `dump`, a `sink` gets
each item's JSON (managedFields dropped, kind and apiVersion filled in) as its page arrives, and the
collector keeps only the few objects its own decisions need.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import kinds
from . import snapshot as snap
from .errors import Forbidden, NotFound
from .kernelcache import constants as c
from .kernelcache.config import read_config
from .kube import resources as r
from .kube.client import Client
from .kube.listing import Listed as Listing
from .kube.listing import raw_item
from .kube.resources import Page

# called with each item's JSON (bytes) as its page arrives, and the kind it belongs to
Sink = Callable[[bytes, kinds.Kind], None]
PARALLEL = 4  # lists in flight at once (doctor); the big ones (nodes, KernelCacheNodes, pods) overlap


@dataclass(frozen=True)
class Scope:
    """What to read: the namespace of KernelCaches and captures (None: all), and which parts."""

    namespace: str | None = None
    nodes: bool = True
    install: bool = True  # KServe's singletons, agent pods, webhook, CRDs
    agent_pods: bool = True  # the agent's pods (also without `install`)
    captures: bool = True
    preparation: bool = True  # Jobs and pods in the job namespace, prefetcher identities
    producers: bool = True  # producer pods of captures
    events: bool = True

    def describe(self) -> dict[str, Any]:
        """The scope as recorded in a dump's meta."""
        parts = [p for p in ("nodes", "install", "preparation", "producers", "events") if getattr(self, p)]
        return {"namespace": self.namespace, "parts": parts}

    def apply(self, snapshot: snap.ClusterSnapshot) -> snap.ClusterSnapshot:
        """The same namespace scope on a snapshot from files as the live reads have: KernelCaches, captures,
        InferenceService pods, events and prefetcher RoleBindings of other namespaces are left out."""
        if self.namespace is None:
            return snapshot
        ns = self.namespace

        def mine(obj: Any) -> bool:
            return (obj.meta.namespace or "") == ns

        return dataclasses.replace(
            snapshot,
            kernel_caches=tuple(x for x in snapshot.kernel_caches if mine(x)),
            captures=tuple(x for x in snapshot.captures if mine(x)),
            events=tuple(x for x in snapshot.events if mine(x)),
            role_bindings=tuple(x for x in snapshot.role_bindings if mine(x)),
            pods=tuple(p for p in snapshot.pods if mine(p) or c.LABEL_ISVC not in p.meta.labels),
        )


@dataclass(frozen=True)
class ListSpec:
    """One list to make."""

    resource: r.Resource
    namespace: str | None = None
    label_selector: str = ""
    field_selector: str = ""


@dataclass(frozen=True)
class Listed:
    """One list that was made, and the resourceVersion it was read at: where a watch of it starts."""

    spec: ListSpec
    resource_version: str
    keys: frozenset[tuple[str, str, str]] = frozenset()  # (snapshot field, namespace, name) of what it returned


class Collector:
    """Lists kinds into typed snapshot objects (the last read of an object wins, as in snapshot.assemble)."""

    def __init__(self, client: Client, progress: Callable[[str], None] | None = None, sink: Sink | None = None):
        self.client = client
        self.objects: dict[tuple[str, str, str], Any] = {}  # (snapshot field, namespace, name) -> object
        self.reads: list[snap.Read] = []
        self.lists: list[Listed] = []  # the lists that succeeded, with their resourceVersions
        self.sink = sink
        self.progress = progress or (lambda _msg: None)

    def _decoder(self, kind: kinds.Kind) -> Callable[[bytes], Page[Any]]:
        if self.sink is None:
            return kind.decode_page
        sink = self.sink

        typed = kind.resource == r.CONFIGMAPS  # the only objects collect itself needs (the job namespace)

        def decode(data: bytes) -> Page[Any]:
            """Each item to the sink as it is; nothing kept but a count (and the ConfigMap). A dump is for
            bug reports: an object the commands could not decode is written all the same."""
            page = kinds.d.page_decoder(kinds.d.msgspec.Raw).decode(data)
            meta = page.metadata or kinds.d.ListMeta()
            items: list[Any] = []
            for index, item in enumerate(page.items or ()):
                sink(raw_item(item, kind.resource), kind)
                if not typed:
                    items.append(None)
                    continue
                try:
                    items.append(kind.decode_json(item))
                except kinds.d.msgspec.ValidationError as exc:
                    what = kinds.d.decode_json(item, kinds.d.Head).describe(kind.kind)
                    raise kinds.d.object_error(exc, origin=f"list {kind.plural}", what=f"{what} (item {index})",
                                               base=f"$.items[{index}]") from None
            return Page(items, meta.resource_version or "", meta.continue_ or "")

        return decode

    def _list(self, spec: ListSpec) -> Listing | Forbidden | NotFound:
        kind = kinds.for_resource(spec.resource)
        try:
            return self.client.list_all(spec.resource, spec.namespace, label_selector=spec.label_selector,
                                        field_selector=spec.field_selector, decode=self._decoder(kind))
        except (Forbidden, NotFound) as exc:
            return exc

    def _record(self, spec: ListSpec, listing: Listing | Forbidden | NotFound, keep: bool) -> list[Any]:
        res, namespace = spec.resource, spec.namespace
        if isinstance(listing, (Forbidden, NotFound)):
            status = "forbidden" if isinstance(listing, Forbidden) else "absent"
            self.reads.append(snap.Read(res.plural, namespace, status, 0, message=str(listing)))
            return []
        got = listing.items
        self.reads.append(snap.Read(res.plural, namespace, "ok", len(got)))
        if keep:
            field = kinds.for_resource(res).field
            keys = set()
            for obj in got:
                key = (field, obj.metadata.namespace or "", obj.metadata.name)
                keys.add(key)
                self.objects[key] = obj
            self.lists.append(Listed(spec, listing.resource_version, frozenset(keys)))
        return got

    def read(
        self,
        res: r.Resource,
        namespace: str | None = None,
        *,
        label_selector: str = "",
        field_selector: str = "",
        keep: bool = True,
    ) -> list[Any]:
        """The typed objects of one list (kept for the snapshot unless `keep` is False)."""
        spec = ListSpec(res, namespace, label_selector, field_selector)
        self.progress(f"listing {res.plural}")
        return self._record(spec, self._list(spec), keep)

    def read_many(self, specs: list[ListSpec], keep: bool = True) -> list[list[Any]]:
        """Several lists at once (up to PARALLEL requests in flight: the API server works on one while
        the previous one is decoded), recorded in the order given. With a sink (dump) one at a time, so
        that items reach it in order."""
        if self.sink is not None or len(specs) < 2:
            return [self.read(s.resource, s.namespace, label_selector=s.label_selector,
                              field_selector=s.field_selector, keep=keep) for s in specs]
        from concurrent.futures import ThreadPoolExecutor

        self.progress(f"listing {', '.join(dict.fromkeys(s.resource.plural for s in specs))}")
        with ThreadPoolExecutor(min(PARALLEL, len(specs)), thread_name_prefix="list") as pool:
            results = list(pool.map(self._list, specs))
        return [self._record(spec, got, keep) for spec, got in zip(specs, results, strict=True)]

    def snapshot(self, meta: snap.SnapshotMeta) -> snap.ClusterSnapshot:
        return snap.assemble(((key[0], obj) for key, obj in self.objects.items()), meta=meta, reads=self.reads)


def _by_name(name: str) -> str:
    return f"metadata.name={name}"


def taken_at() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def collect(
    client: Client, scope: Scope = Scope(), progress: Callable[[str], None] | None = None, sink: Sink | None = None,
    lists: list[Listed] | None = None,
) -> snap.ClusterSnapshot:
    """The snapshot doctor reads. With a `sink` (dump), every item goes to the sink as it arrives and the
    snapshot keeps only its reads: memory stays at one page whatever the cluster's size. `lists`, when given,
    receives each list made, with its resourceVersion (where `watch.py` starts watching)."""
    col = Collector(client, progress, sink=sink)
    keep = sink is None
    ns = scope.namespace
    first = [ListSpec(r.NODES)] if scope.nodes else []
    first += [ListSpec(r.NODE_GROUPS), ListSpec(r.KERNEL_CACHE_NODES), ListSpec(r.KERNEL_CACHES, ns)]
    if scope.captures:
        first.append(ListSpec(r.CAPTURES, ns))
    config_at = len(first)
    first.append(ListSpec(r.CONFIGMAPS, c.KSERVE_NAMESPACE, field_selector=_by_name(c.CONFIGMAP_NAME)))
    if scope.agent_pods and not scope.install:
        first.append(ListSpec(r.PODS, c.KSERVE_NAMESPACE, label_selector="=".join(c.AGENT_POD_LABEL)))
    if scope.install:
        first += [
            ListSpec(r.DAEMONSETS, c.KSERVE_NAMESPACE, field_selector=_by_name(c.AGENT_DAEMONSET)),
            ListSpec(r.PODS, c.KSERVE_NAMESPACE, label_selector="=".join(c.AGENT_POD_LABEL)),
            ListSpec(r.DEPLOYMENTS, c.KSERVE_NAMESPACE, field_selector=_by_name(c.CONTROLLER_DEPLOYMENT)),
            ListSpec(r.MUTATING_WEBHOOKS, field_selector=_by_name(c.WEBHOOK_CONFIGURATION)),
            ListSpec(r.ENDPOINT_SLICES, c.KSERVE_NAMESPACE,
                     label_selector=f"kubernetes.io/service-name={c.WEBHOOK_SERVICE}"),
            *(ListSpec(r.CRDS, field_selector=_by_name(c.CRD_NAMES[kind]))
              for kind in (c.KIND_NODE_GROUP, c.KIND_NODE, c.KIND_CACHE, c.KIND_CAPTURE)),
        ]
    got = col.read_many(first, keep=keep)
    cms = got[config_at]
    config = read_config(cms[0] if cms else None).config
    job_ns = config.job_namespace if config else None
    then: list[ListSpec] = []
    if scope.install or scope.preparation:
        # all of them: the job namespace, and the labels the pod webhook's namespaceSelector reads
        then.append(ListSpec(r.NAMESPACES))
    if scope.preparation and job_ns:
        then += [ListSpec(r.JOBS, job_ns, label_selector=c.LABEL_JOB_CACHE_NAME),
                 ListSpec(r.PODS, job_ns, label_selector=c.LABEL_JOB_CACHE_NAME),
                 *(ListSpec(r.SERVICE_ACCOUNTS, job_ns, field_selector=_by_name(sa))
                   for sa in c.PREFETCHER_SERVICE_ACCOUNTS),
                 *(ListSpec(r.ROLE_BINDINGS, ns, field_selector=_by_name(rb)) for rb in c.PREFETCHER_ROLE_BINDINGS)]
    if scope.producers:
        # InferenceService pods (by label): producers for captures and why-group, consumers for why-not-cached
        then.append(ListSpec(r.PODS, ns, label_selector=c.LABEL_ISVC))
    if scope.events:
        then += [ListSpec(r.EVENTS, ns, field_selector=f"involvedObject.kind={c.KIND_CAPTURE},type=Warning"),
                 ListSpec(r.EVENTS, ns, field_selector="involvedObject.kind=ReplicaSet,reason=FailedCreate")]
    col.read_many(then, keep=keep)
    meta = snap.SnapshotMeta(
        cluster=client.resolved.cluster_name or client.server,
        taken_at=taken_at(),
        server_version=client.server_version(),
        source="live",
        server=client.server,
    )
    if lists is not None:
        lists.extend(col.lists)
    return col.snapshot(meta)


def collect_for_why_group(
    client: Client, namespace: str, pod: str | None, capture: str | None, what_if_node: str | None = None
) -> snap.ClusterSnapshot:
    """Only what why-group needs: the pod, the namespace's captures and KernelCaches, the groups, the
    config, and the nodes the decision looks at (no full node list)."""
    col = Collector(client)
    captures = col.read(r.CAPTURES, namespace)
    if not pod and capture:  # the pod that claimed the named capture's session (for drift, or to say it is gone)
        session = next((x.active_session for x in captures if x.name == capture), None)
        pod = session.pod_name if session is not None else None
    pods = col.read(r.PODS, namespace, field_selector=_by_name(pod)) if pod else []
    col.read(r.KERNEL_CACHES, namespace)
    col.read(r.NODE_GROUPS)
    col.read(r.CONFIGMAPS, c.KSERVE_NAMESPACE, field_selector=_by_name(c.CONFIGMAP_NAME))
    nodes = {what_if_node} if what_if_node else set()
    for p in pods:
        nodes.add(p.node_name)
    for cap in captures:
        if (not capture or cap.name == capture) and cap.active_session is not None:
            nodes.add(cap.active_session.node_name)
    for name in sorted(n for n in nodes if n):
        col.read(r.NODES, field_selector=_by_name(name))
    meta = snap.SnapshotMeta(cluster=client.resolved.cluster_name or client.server, source="live",
                             server=client.server, taken_at=taken_at())
    return col.snapshot(meta)


def collect_for_why_not_cached(client: Client, namespace: str, pod: str | None) -> snap.ClusterSnapshot:
    """Only what why-not-cached needs: the pod (by name), every KernelCacheNode (KServe lists them all), the
    namespace's KernelCaches and the namespace itself, the config, the pod webhook's configuration, the
    groups, and the pod's node (no full node list)."""
    col = Collector(client)
    pods = col.read(r.PODS, namespace, field_selector=_by_name(pod)) if pod else []
    col.read(r.KERNEL_CACHE_NODES)
    col.read(r.KERNEL_CACHES, namespace)
    col.read(r.CONFIGMAPS, c.KSERVE_NAMESPACE, field_selector=_by_name(c.CONFIGMAP_NAME))
    col.read(r.MUTATING_WEBHOOKS, field_selector=_by_name(c.WEBHOOK_CONFIGURATION))
    col.read(r.NAMESPACES, field_selector=_by_name(namespace))
    col.read(r.NODE_GROUPS)
    for name in sorted({p.node_name for p in pods if p.node_name}):
        col.read(r.NODES, field_selector=_by_name(name))
    meta = snap.SnapshotMeta(cluster=client.resolved.cluster_name or client.server, source="live",
                             server=client.server, taken_at=taken_at())
    return col.snapshot(meta)


FLEET_NODE_GETS = 50  # up to this many distinct nodes, each is read by name; more: one list of all nodes


def collect_for_fleet(client: Client, namespace: str | None, selector: str = "") -> snap.ClusterSnapshot:
    """What `why-not-cached -A` needs: the serving pods in scope (one list, by label), every KernelCacheNode,
    the KernelCaches and namespaces in scope, the config, the pod webhook's configuration, the groups, and the
    nodes the pods run on."""
    col = Collector(client)
    labels = ",".join(x for x in (c.LABEL_ISVC, selector) if x)
    specs = [ListSpec(r.PODS, namespace, label_selector=labels), ListSpec(r.KERNEL_CACHE_NODES),
             ListSpec(r.KERNEL_CACHES, namespace),
             ListSpec(r.CONFIGMAPS, c.KSERVE_NAMESPACE, field_selector=_by_name(c.CONFIGMAP_NAME)),
             ListSpec(r.MUTATING_WEBHOOKS, field_selector=_by_name(c.WEBHOOK_CONFIGURATION)),
             ListSpec(r.NAMESPACES, field_selector=_by_name(namespace) if namespace else ""),
             ListSpec(r.NODE_GROUPS)]
    pods = col.read_many(specs)[0]
    nodes = sorted({p.node_name for p in pods if p.node_name})
    if len(nodes) > FLEET_NODE_GETS:
        col.read(r.NODES)
    else:
        col.read_many([ListSpec(r.NODES, field_selector=_by_name(name)) for name in nodes])
    meta = snap.SnapshotMeta(cluster=client.resolved.cluster_name or client.server, source="live",
                             server=client.server, taken_at=taken_at())
    return col.snapshot(meta)


def names_for_completion(client: Client, what: str, namespace: str) -> list[str]:
    """Names for shell completion: namespaces, pods of InferenceServices in `namespace`, or its captures."""
    if what == "namespaces":
        res, ns, selector = r.NAMESPACES, None, ""
    elif what == "pods":
        res, ns, selector = r.PODS, namespace, c.LABEL_ISVC
    else:
        res, ns, selector = r.CAPTURES, namespace, ""
    items, _ = client.list_all(res, ns, label_selector=selector,
                               convert=lambda o: (o.get("metadata") or {}).get("name", ""))
    return [n for n in items if n]
