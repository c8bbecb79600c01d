"""Build a ClusterSnapshot from the live API: each kind listed once, paginated; singletons by field
selector (friendly to RBAC resourceNames); pods only by label where the agent and preparation Jobs run.

A 403 on a list records the read as forbidden, a 404 (resource not served) as absent; the commands
decide what that means for them.

Each page is parsed into the slim objects as it arrives and its raw JSON dropped (a 30 KB GPU node
keeps ~1 KB), so that memory follows the slim objects plus one page, not every raw object; the raw
objects are kept only for `dump` (keep_raw).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import snapshot as snap
from .errors import Forbidden, NotFound
from .kernelcache import constants as c
from .kernelcache.config import read_config
from .kube import resources as r
from .kube.client import Client


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


@dataclass(frozen=True)
class Listed:
    """One list that was made, and the resourceVersion it was read at: where a watch of it starts."""

    resource: r.Resource
    namespace: str | None
    label_selector: str
    field_selector: str
    resource_version: str
    keys: frozenset[tuple[str, str, str]] = frozenset()  # (snapshot field, namespace, name) of what it returned


class Collector:
    """Lists kinds into parsed snapshot objects (the last read of an object wins, as in snapshot.build)."""

    def __init__(self, client: Client, progress: Callable[[str], None] | None = None, keep_raw: bool = False):
        self.client = client
        self.objects: dict[tuple[str, str, str], Any] = {}  # (snapshot field, namespace, name) -> object
        self.raw: dict[tuple[str, str, str, str], dict[str, Any]] = {}  # only with keep_raw
        self.keep_raw = keep_raw
        self.reads: list[snap.Read] = []
        self.lists: list[Listed] = []  # the lists that succeeded, with their resourceVersions
        self.seen = 0
        self.progress = progress or (lambda _msg: None)

    def _parse(self, item: dict[str, Any]) -> tuple[str, Any, dict[str, Any] | None] | None:
        self.seen += 1
        entry = snap.parse_item(item, "the API", self.seen - 1)
        if entry is None:
            return None
        return entry[0], entry[1], item if self.keep_raw else None

    def read(
        self,
        res: r.Resource,
        namespace: str | None = None,
        *,
        label_selector: str = "",
        field_selector: str = "",
        record_as: str | None = None,
    ) -> list[Any]:
        """The parsed objects of one list (also added to the snapshot being built)."""
        name = record_as or res.plural
        self.progress(f"listing {name}")
        try:
            got, version = self.client.list_all(
                res, namespace, label_selector=label_selector, field_selector=field_selector, convert=self._parse
            )
        except Forbidden as exc:
            self.reads.append(snap.Read(name, namespace, "forbidden", 0, message=str(exc)))
            return []
        except NotFound as exc:
            self.reads.append(snap.Read(name, namespace, "absent", 0, message=str(exc)))
            return []
        self.reads.append(snap.Read(name, namespace, "ok", len(got)))
        out = []
        keys = set()
        for entry in got:
            if entry is None:
                continue
            field, parsed, raw = entry
            key = (field, parsed.meta.namespace or "", parsed.meta.name)
            keys.add(key)
            self.objects[key] = parsed
            if raw is not None:
                md = raw.get("metadata") or {}
                self.raw[(raw.get("apiVersion", ""), raw.get("kind", ""), md.get("namespace", ""),
                          md.get("name", ""))] = raw
            out.append(parsed)
        self.lists.append(Listed(res, namespace, label_selector, field_selector, version, frozenset(keys)))
        return out

    def snapshot(self, meta: snap.SnapshotMeta) -> snap.ClusterSnapshot:
        return snap.assemble(((key[0], obj) for key, obj in self.objects.items()), meta=meta, reads=self.reads,
                             raw_items=self.raw.values())


def _by_name(name: str) -> str:
    return f"metadata.name={name}"


def collect(
    client: Client, scope: Scope = Scope(), progress: Callable[[str], None] | None = None, keep_raw: bool = False,
    lists: list[Listed] | None = None,
) -> snap.ClusterSnapshot:
    """The snapshot of `scope`; `lists`, when given, receives each list made (to watch from, see watch.py)."""
    col = Collector(client, progress, keep_raw=keep_raw)
    ns = scope.namespace
    if scope.nodes:
        col.read(r.NODES)
    col.read(r.NODE_GROUPS)
    col.read(r.KERNEL_CACHE_NODES)
    col.read(r.KERNEL_CACHES, ns)
    if scope.captures:
        col.read(r.CAPTURES, ns)
    cms = col.read(r.CONFIGMAPS, c.KSERVE_NAMESPACE, field_selector=_by_name(c.CONFIGMAP_NAME))
    config = read_config(cms[0] if cms else None).config
    job_ns = config.job_namespace if config else None
    if scope.install or scope.preparation:
        # all of them: the job namespace, and the labels the pod webhook's namespaceSelector reads
        col.read(r.NAMESPACES)
    if scope.install:
        col.read(r.DAEMONSETS, c.KSERVE_NAMESPACE, field_selector=_by_name(c.AGENT_DAEMONSET))
    if scope.install or scope.agent_pods:
        col.read(r.PODS, c.KSERVE_NAMESPACE, label_selector="=".join(c.AGENT_POD_LABEL), record_as="pods")
    if scope.install:
        col.read(r.DEPLOYMENTS, c.KSERVE_NAMESPACE, field_selector=_by_name(c.CONTROLLER_DEPLOYMENT))
        col.read(r.MUTATING_WEBHOOKS, field_selector=_by_name(c.WEBHOOK_CONFIGURATION))
        col.read(
            r.ENDPOINT_SLICES, c.KSERVE_NAMESPACE, label_selector=f"kubernetes.io/service-name={c.WEBHOOK_SERVICE}"
        )
        _read_crds(col)
    if scope.preparation and job_ns:
        col.read(r.JOBS, job_ns, label_selector=c.LABEL_JOB_CACHE_NAME)
        col.read(r.PODS, job_ns, label_selector=c.LABEL_JOB_CACHE_NAME, record_as="pods")
        for sa in c.PREFETCHER_SERVICE_ACCOUNTS:
            col.read(r.SERVICE_ACCOUNTS, job_ns, field_selector=_by_name(sa))
        for rb in c.PREFETCHER_ROLE_BINDINGS:
            col.read(r.ROLE_BINDINGS, ns, field_selector=_by_name(rb))
    if scope.producers:
        # InferenceService pods (by label): producers for captures and why-group, consumers for why-not-cached
        col.read(r.PODS, ns, label_selector=c.LABEL_ISVC, record_as="pods")
    if scope.events:
        col.read(r.EVENTS, ns, field_selector=f"involvedObject.kind={c.KIND_CAPTURE},type=Warning")
        col.read(r.EVENTS, ns, field_selector="involvedObject.kind=ReplicaSet,reason=FailedCreate")
    meta = snap.SnapshotMeta(
        cluster=client.resolved.cluster_name or client.server,
        taken_at=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        server_version=client.server_version(),
        source="live",
    )
    if lists is not None:
        lists.extend(col.lists)
    return col.snapshot(meta)


def _read_crds(col: Collector) -> None:
    for kind in (c.KIND_NODE_GROUP, c.KIND_NODE, c.KIND_CACHE, c.KIND_CAPTURE):
        col.read(r.CRDS, field_selector=_by_name(c.CRD_NAMES[kind]))


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
    meta = snap.SnapshotMeta(cluster=client.resolved.cluster_name or client.server, source="live")
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
    meta = snap.SnapshotMeta(cluster=client.resolved.cluster_name or client.server, source="live")
    return col.snapshot(meta)
