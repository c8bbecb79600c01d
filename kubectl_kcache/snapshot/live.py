"""Build a ClusterSnapshot from the live API by making the read plan's lists (`snapshot/plan.py`): each kind
listed once, paginated; singletons by field selector (friendly to RBAC resourceNames); pods only by label
where the agent and preparation Jobs run.

Every list is recorded with its spec (`reads.Read`): a 403 as forbidden, a 404 (resource not served)
as absent; the commands decide what that means for them (`reads.require`).

Each page's bytes are decoded straight into the kind's Struct (`snapshot/kinds.py`): the fields the commands do
not read are never built, and memory follows the slim objects plus one page. For `dump`, a `sink` gets
each item's JSON (managedFields dropped, kind and apiVersion filled in) as its page arrives, and the
collector keeps only the few objects its own decisions need.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from ..errors import Forbidden, NotFound
from ..kernelcache import constants as c
from ..kernelcache.config import read_config
from ..kube import resources as r
from ..kube.client import Client
from ..kube.listing import ListResult, raw_item
from ..kube.resources import Page
from ..objects import decode as d
from ..sharing import sharing
from . import kinds, plan, reads
from . import model as snap
from .kinds import ListSpec
from .reads import ListMade

# called with each item's JSON (bytes) as its page arrives, and the kind it belongs to
Sink = Callable[[bytes, kinds.Kind], None]
# called after each list arrives: the lists done so far, and a function making the snapshot of only those
OnList = Callable[[frozenset[ListSpec], Callable[[], "snap.ClusterSnapshot"]], None]
PARALLEL = 4  # lists in flight at once (doctor); the big ones (nodes, KernelCacheNodes, pods) overlap


class Scope(msgspec.Struct, frozen=True):
    """What to read: the namespace of KernelCaches and captures (None: all), and which parts."""

    namespace: str | None = None
    nodes: bool = True
    install: bool = True  # KServe's singletons, agent pods, webhook, CRDs
    agent_pods: bool = True  # the agent's pods (also without `install`)
    captures: bool = True
    preparation: bool = True  # Jobs and pods in the job namespace, prefetcher identities
    producers: bool = True  # producer pods of captures
    events: bool = True

    def wants(self, part: str) -> bool:
        """Whether the lists of `part` (readplan.DOCTOR_FIRST, DOCTOR_THEN) are made in this scope."""
        if part == "core":
            return True
        if part == "agent_pods":
            return self.agent_pods or self.install
        if part == "namespaces":
            return self.install or self.preparation
        if part == "capture_list":  # the captures themselves: who produced which cache (kernelcache.cold_start)
            return self.captures or self.producers
        return bool(getattr(self, part))

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
        snapshot = dataclasses.replace(snapshot, meta=msgspec.structs.replace(snapshot.meta, namespace=ns))

        def mine(obj: Any) -> bool:
            return (obj.meta.namespace or "") == ns

        return dataclasses.replace(
            snapshot,
            kernel_caches=tuple(x for x in snapshot.kernel_caches if mine(x)),
            captures=tuple(x for x in snapshot.captures if mine(x)),
            events=tuple(x for x in snapshot.events if mine(x)),
            role_bindings=tuple(x for x in snapshot.role_bindings if mine(x)),
            roles=tuple(x for x in snapshot.roles if mine(x)),
            secrets=tuple(x for x in snapshot.secrets if mine(x)),
            pods=tuple(p for p in snapshot.pods if mine(p) or c.LABEL_ISVC not in p.meta.labels),
        )


class Collector:
    """Lists kinds into typed snapshot objects (the last read of an object wins, as in snapshot.assemble)."""

    def __init__(self, client: Client, progress: Callable[[str], None] | None = None, sink: Sink | None = None):
        self.client = client
        self.objects: dict[tuple[str, str, str], Any] = {}  # (snapshot field, namespace, name) -> object
        self.reads: list[reads.Read] = []
        self.lists: list[ListMade] = []  # the lists made, with their resourceVersions ("" when refused)
        self.sink = sink
        self.progress = progress or (lambda _msg: None)
        # read_pipelined: the lists in the order they are recorded, and what each returned as it arrived
        self._order: list[ListSpec] = []
        self._arrived: dict[ListSpec, ListResult | Forbidden | NotFound] = {}

    def _decoder(self, kind: kinds.Kind) -> Callable[[bytes], Page[Any]]:
        if self.sink is None:
            return kind.decode_page
        sink = self.sink

        typed = kind.resource == r.CONFIGMAPS  # the only objects collect itself needs (the job namespace)

        def decode(data: bytes) -> Page[Any]:
            """Each item to the sink as it is; nothing kept but a count (and the ConfigMap). A dump is for
            bug reports: an object the commands could not decode is written all the same."""
            page = d.page_decoder(d.msgspec.Raw).decode(data)
            meta = page.metadata or d.ListMeta()
            items: list[Any] = []
            for index, item in enumerate(page.items or ()):
                sink(raw_item(item, kind.resource), kind)
                if not typed:
                    items.append(None)
                    continue
                try:
                    items.append(kind.decode_json(item))
                except d.msgspec.ValidationError as exc:
                    what = d.decode_json(item, d.Head).describe(kind.kind)
                    raise d.object_error(
                        exc, origin=f"list {kind.plural}", what=f"{what} (item {index})", base=f"$.items[{index}]"
                    ) from None
            return Page(items, meta.resource_version or "", meta.continue_ or "")

        return decode

    def _list(self, spec: ListSpec) -> ListResult | Forbidden | NotFound:
        kind = kinds.for_resource(spec.resource)
        try:
            return self.client.list_all(
                spec.resource,
                spec.namespace,
                label_selector=spec.label_selector,
                field_selector=spec.field_selector,
                decode=self._decoder(kind),
            )
        except (Forbidden, NotFound) as exc:
            return exc

    def _record(self, spec: ListSpec, listing: ListResult | Forbidden | NotFound, keep: bool) -> list[Any]:
        res = spec.resource
        if isinstance(listing, (Forbidden, NotFound)):
            status = reads.FORBIDDEN if isinstance(listing, Forbidden) else reads.ABSENT
            self.reads.append(reads.Read.of(spec, status, message=str(listing)))
            if keep and status == reads.FORBIDDEN:  # a kept-current snapshot may list it once it is allowed
                self.lists.append(ListMade(spec, ""))
            return []
        got = listing.items
        self.reads.append(reads.Read.of(spec, reads.OK, len(got)))
        if keep:
            field = kinds.for_resource(res).field
            keys = set()
            for obj in got:
                key = (field, obj.metadata.namespace or "", obj.metadata.name)
                keys.add(key)
                self.objects[key] = obj
            self.lists.append(ListMade(spec, listing.resource_version, frozenset(keys)))
        return got

    def read(self, spec: ListSpec, keep: bool = True) -> list[Any]:
        """The typed objects of one list (kept for the snapshot unless `keep` is False)."""
        self.progress(f"listing {spec.plural}")
        return self._record(spec, self._list(spec), keep)

    def read_many(self, specs: list[ListSpec], keep: bool = True) -> list[list[Any]]:
        """Several lists at once (up to PARALLEL requests in flight: the API server works on one while
        the previous one is decoded), recorded in the order given. With a sink (dump) one at a time, so
        that items reach it in order."""
        if self.sink is not None or len(specs) < 2:
            return [self.read(s, keep=keep) for s in specs]
        from concurrent.futures import ThreadPoolExecutor

        self.progress(f"listing {', '.join(dict.fromkeys(s.resource.plural for s in specs))}")
        with ThreadPoolExecutor(min(PARALLEL, len(specs)), thread_name_prefix="list") as pool:
            results = list(pool.map(self._list, specs))
        return [self._record(spec, got, keep) for spec, got in zip(specs, results, strict=True)]

    def read_pipelined(
        self,
        first: list[ListSpec],
        config: ListSpec,
        then_of: Callable[[list[Any]], list[ListSpec]],
        on_list: Callable[[frozenset[ListSpec]], None] | None = None,
    ) -> None:
        """The lists of `first`, PARALLEL at a time, and those `then_of` names from the items of `config` (one
        of `first`) as soon as that list is done, not after every list of `first`; recorded in the order
        given (first, then the others), whatever order they arrive in. `on_list` is told after each one."""
        from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

        self.progress(f"listing {', '.join(dict.fromkeys(s.resource.plural for s in first))}")
        order = self._order = list(first)
        self._arrived = {}
        with ThreadPoolExecutor(PARALLEL, thread_name_prefix="list") as pool:
            pending = {pool.submit(self._list, spec): spec for spec in first}
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    spec = pending.pop(future)
                    self._arrived[spec] = future.result()
                    if spec == config:
                        got = self._arrived[spec]
                        later = [x for x in then_of(got.items if isinstance(got, ListResult) else []) if x not in order]
                        order.extend(later)
                        pending.update({pool.submit(self._list, x): x for x in later})
                if on_list is not None:
                    on_list(frozenset(self._arrived))
        for spec in order:
            self._record(spec, self._arrived[spec], keep=True)

    def snapshot_of(self, done: frozenset[ListSpec], meta: snap.SnapshotMeta) -> snap.ClusterSnapshot:
        """The snapshot of only the lists in `done` (arrived during `read_pipelined`), as if nothing else had
        been read: what a check whose reads are all among them sees of the final snapshot."""
        part = Collector(self.client)
        for spec in self._order:
            if spec in done:
                part._record(spec, self._arrived[spec], keep=True)
        return part.snapshot(meta)

    def snapshot(self, meta: snap.SnapshotMeta) -> snap.ClusterSnapshot:
        return snap.assemble(((key[0], obj) for key, obj in self.objects.items()), meta=meta, reads=self.reads)


def taken_at() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def collect(
    client: Client,
    scope: Scope = Scope(),
    progress: Callable[[str], None] | None = None,
    sink: Sink | None = None,
    lists: list[ListMade] | None = None,
    on_list: OnList | None = None,
) -> snap.ClusterSnapshot:
    """The snapshot doctor reads. With a `sink` (dump), every item goes to the sink as it arrives and the
    snapshot keeps only its reads: memory stays at one page whatever the cluster's size. `lists`, when given,
    receives each list made, with its resourceVersion (where `snapshot/follow.py` starts watching; "" when
    it was refused).

    Without a sink the lists run PARALLEL at a time, and those that wait for the configuration (the job
    namespace's) start as soon as the ConfigMap is read, not after the node list. `on_list`, when given, is
    called in the calling thread after each list arrives, with the lists done so far and a function that
    makes the snapshot of just those (doctor starts the checks whose reads are complete: `checks.early`)."""
    with sharing():
        return _collect(client, scope, progress, sink, lists, on_list)


def _collect(
    client: Client,
    scope: Scope,
    progress: Callable[[str], None] | None,
    sink: Sink | None,
    lists: list[ListMade] | None,
    on_list: OnList | None = None,
) -> snap.ClusterSnapshot:
    col = Collector(client, progress, sink=sink)
    keep = sink is None
    ns = scope.namespace
    first = [plan.resolve(spec, ns) for part, spec in plan.DOCTOR_FIRST if scope.wants(part)]

    def then_of(cms: list[Any]) -> list[ListSpec]:
        """The lists that wait for the configuration (the job namespace's)."""
        config = read_config(cms[0] if cms else None).config
        job_ns = config.job_namespace if config else None
        return [
            plan.resolve(spec, ns, job_ns)
            for part, spec in plan.DOCTOR_THEN
            if scope.wants(part) and (spec.namespace != plan.JOB_NAMESPACE or job_ns)
        ]

    def meta(server_version: str = "") -> snap.SnapshotMeta:
        return snap.SnapshotMeta(
            cluster=client.resolved.cluster_name or client.server,
            taken_at=taken_at(),
            server_version=server_version,
            source="live",
            server=client.server,
            namespace=ns,
        )

    if sink is not None:  # dump: one list at a time, items in order
        got = col.read_many(first, keep=keep)
        col.read_many(then_of(got[first.index(plan.CONFIGMAP)]), keep=keep)
    else:  # the snapshots of the lists done so far: what the early checks read (the version is asked once, below)
        col.read_pipelined(
            first,
            plan.CONFIGMAP,
            then_of,
            on_list=None if on_list is None else (lambda done: on_list(done, lambda: col.snapshot_of(done, meta()))),
        )
    final = meta(client.server_version())
    if lists is not None:
        lists.extend(col.lists)
    return col.snapshot(final)


def collect_for_why_group(
    client: Client, namespace: str, pod: str | None, capture: str | None, what_if_node: str | None = None
) -> snap.ClusterSnapshot:
    """Only what why-group needs: the pod, the namespace's captures and KernelCaches, the groups, the
    config, and the nodes the decision looks at (no full node list)."""
    col = Collector(client)
    captures = col.read(plan.CAPTURES.in_namespace(namespace))
    if not pod and capture:  # the pod that claimed the named capture's session (for drift, or to say it is gone)
        session = next((x.active_session for x in captures if x.name == capture), None)
        pod = session.pod_name if session is not None else None
    pods = col.read(plan.pod(namespace, pod)) if pod else []
    nodes = {what_if_node} if what_if_node else set()
    for p in pods:
        nodes.add(p.node_name)
    for cap in captures:
        if (not capture or cap.name == capture) and cap.active_session is not None:
            nodes.add(cap.active_session.node_name)
    made = {plan.CAPTURES.in_namespace(namespace)} | ({plan.pod(namespace, pod)} if pod else set())
    for spec in plan.why_group(namespace, pod, sorted(n for n in nodes if n)):
        if spec not in made:
            col.read(spec)
    meta = snap.SnapshotMeta(
        cluster=client.resolved.cluster_name or client.server, source="live", server=client.server, taken_at=taken_at()
    )
    return col.snapshot(meta)


def collect_for_why_not_cached(client: Client, namespace: str, pod: str | None) -> snap.ClusterSnapshot:
    """Only what why-not-cached needs: the pod (by name), every KernelCacheNode (KServe lists them all), the
    namespace's KernelCaches and the namespace itself, the config, the pod webhook's configuration, the
    groups, and the pod's node (no full node list)."""
    col = Collector(client)
    lists = list(plan.why_not_cached(namespace, None))  # together: the KernelCacheNodes are the slow one
    if pod:  # the pod's node once the pod has arrived; the other lists do not wait for the pod

        def its_node(pods: list[Any]) -> list[ListSpec]:
            return [plan.node(n) for n in sorted({p.node_name for p in pods if p.node_name})]

        first = plan.pod(namespace, pod)
        col.read_pipelined([first, *lists], first, its_node)
    else:
        col.read_many(lists)
    meta = snap.SnapshotMeta(
        cluster=client.resolved.cluster_name or client.server, source="live", server=client.server, taken_at=taken_at()
    )
    return col.snapshot(meta)


def collect_for_why_not_ready(client: Client, namespace: str | None) -> snap.ClusterSnapshot:
    """What why-not-ready reads (`plan.WHY_NOT_READY`): the KernelCaches and captures of `namespace` (None: all
    namespaces), the cluster-wide lists, then the job namespace's once the configuration names it."""
    col = Collector(client)

    def then_of(cms: list[Any]) -> list[ListSpec]:
        config = read_config(cms[0] if cms else None).config
        job_ns = config.job_namespace if config else None
        return [
            plan.resolve(spec, namespace, job_ns)
            for spec in plan.WHY_NOT_READY_THEN
            if spec.namespace != plan.JOB_NAMESPACE or job_ns
        ]

    first = [plan.resolve(spec, namespace) for spec in plan.WHY_NOT_READY_FIRST]
    col.read_pipelined(first, plan.CONFIGMAP, then_of)
    meta = snap.SnapshotMeta(
        cluster=client.resolved.cluster_name or client.server,
        source="live",
        server=client.server,
        taken_at=taken_at(),
        namespace=namespace,
    )
    return col.snapshot(meta)


def collect_for_reconcile(client: Client, specs: Iterable[ListSpec] = plan.RECONCILE) -> snap.ClusterSnapshot:
    """One list of every kind reconcile reads (--once; --dry-run reads only what the plan needs), decoded page
    by page; a list that is forbidden or not served is recorded as such, and the planner refuses to plan
    from it."""
    col = Collector(client)
    for spec in specs:
        col.read(spec)
    return col.snapshot(
        snap.SnapshotMeta(
            cluster=client.resolved.cluster_name or client.server,
            source="live",
            server=client.server,
            taken_at=taken_at(),
        )
    )


FLEET_NODE_GETS = 50  # up to this many distinct nodes, each is read by name; more: one list of all nodes


def collect_for_fleet(client: Client, namespace: str | None, selector: str = "") -> snap.ClusterSnapshot:
    """What `why-not-cached -A` needs: the serving pods in scope (one list, by label), every KernelCacheNode,
    the KernelCaches, captures (their active sessions name the producers) and namespaces in scope, the config,
    the pod webhook's configuration, the groups, and the nodes the pods run on."""
    col = Collector(client)
    labels = ",".join(x for x in (c.LABEL_ISVC, selector) if x)
    specs = [
        ListSpec(r.PODS, namespace, label_selector=labels),
        plan.KERNEL_CACHE_NODES,
        plan.KERNEL_CACHES.in_namespace(namespace),
        plan.CAPTURES.in_namespace(namespace),
        plan.CONFIGMAP,
        plan.WEBHOOK,
        plan.WEBHOOK_ENDPOINTS,
        plan.namespace(namespace) if namespace else plan.NAMESPACES,
        plan.NODE_GROUPS,
    ]
    pods = col.read_many(specs)[0]
    nodes = sorted({p.node_name for p in pods if p.node_name})
    if len(nodes) > FLEET_NODE_GETS:
        col.read(plan.NODES)
    else:
        col.read_many([plan.node(name) for name in nodes])
    meta = snap.SnapshotMeta(
        cluster=client.resolved.cluster_name or client.server, source="live", server=client.server, taken_at=taken_at()
    )
    return col.snapshot(meta)


def names_for_completion(client: Client, what: str, namespace: str) -> list[str]:
    """Names for shell completion: namespaces, pods of InferenceServices in `namespace`, or its captures."""
    if what == "namespaces":
        res, ns, selector = r.NAMESPACES, None, ""
    elif what == "pods":
        res, ns, selector = r.PODS, namespace, c.LABEL_ISVC
    elif what == "kernelcaches":
        res, ns, selector = r.KERNEL_CACHES, namespace, ""
    else:
        res, ns, selector = r.CAPTURES, namespace, ""
    items, _ = client.list_all(
        res, ns, label_selector=selector, convert=lambda o: (o.get("metadata") or {}).get("name", "")
    )
    return [n for n in items if n]
