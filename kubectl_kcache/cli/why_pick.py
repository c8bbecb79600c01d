"""Which objects of a file one why-* answer decodes (issue 36: one object's answer at 130,000 nodes does not
pay for every node): the Selection.later pickers of why-group and why-not-cached. Each picks, once the rest of
the input is read, at least every object its decision looks at (more is harmless: the answer is the same as
with every object decoded), the rest is counted, not decoded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from ..kernelcache import constants as c
from ..kernelcache.admission.candidates import identity_gates
from ..kernelcache.admission.reach import pre_admission
from ..kernelcache.config import default_group_problem, read_config
from ..snapshot.files.load import Scan, namespace_of

Objects = list[tuple[str, Any]]  # (snapshot field, object) as the loader read them
_MAX_NEEDLES = 40  # a Scan's needles each search every byte held: past this many, decoding every object pays


def with_later(select: Any, later: dict[str, Callable[[Objects], Any]], keys: dict[str, Any] | None = None) -> Any:
    """`select` (a files.Selection) with more Selection.later pickers (and the keys they pick by)."""
    return msgspec.structs.replace(
        select, later={**select.later, **later}, later_keys={**select.later_keys, **(keys or {})}
    )


class _Every:
    """Every name: a picker's answer when its decision reads every object of the kind."""

    def __contains__(self, name: object) -> bool:
        return True


class _Asked:
    """Node label keys that hold nothing, noting whether the decision asked."""

    asked = False

    def __contains__(self, key: object) -> bool:
        self.asked = True
        return False


def configs(objects: Objects) -> list[Any]:
    """Every KServe configuration read (KServe's one ConfigMap; the answer takes the first)."""
    return [
        read_config(o).config
        for f, o in objects
        if f == "configmaps" and (o.meta.namespace, o.meta.name) == (c.KSERVE_NAMESPACE, c.CONFIGMAP_NAME)
    ]


# ---- why-group -------------------------------------------------------------------------------------------


def group_nodes(what_if_node: str | None) -> Callable[[Objects], Any]:
    """The nodes why-group's decision looks at (live, it reads them by name): the pods' nodes, the nodes of the
    captures' sessions, the what-if node. Every node when its warnings ask whether some node carries a label key
    named as defaultNodeGroup (explain.why_group's default-label trap, for a default that names no group and
    holds none of `=/:`): the same function is asked here, with label keys that note the question."""

    def pick(objects: Objects) -> Any:
        groups = [o.name for f, o in objects if f == "node_groups"]
        for config in configs(objects):
            asked = _Asked()
            default_group_problem(config.default_node_group if config is not None else "", groups, asked)
            if asked.asked:
                return _Every()
        names = {what_if_node} if what_if_node else set()
        for f, o in objects:
            if f == "pods":
                names.add(o.node_name)
            elif f == "captures" and o.active_session is not None:
                names.add(o.active_session.node_name)
        return names

    return pick


def kc_namespace(item: Any) -> str:
    """The namespace of a KernelCache, from a dump's line or decoded (a Selection.later key)."""
    if isinstance(item, (bytes, bytearray, memoryview)):
        return str(namespace_of(item) or "")
    return str(item.namespace or "")


def captures_kcs(objects: Objects) -> set[str]:
    """The namespaces of the KernelCaches why-group looks up (by key, explain.why_group._created_cache): the
    captures' own, and those their kernelCacheRefs name."""
    out: set[str] = set()
    for f, o in objects:
        if f == "captures":
            out.add(o.namespace or "")
            ref = o.kernel_cache_ref
            if ref is not None:
                out.add(ref.namespace or "")
    return out


def why_group(select: Any, what_if_node: str | None) -> Any:
    """why-group's selection: only the nodes and KernelCaches its decision looks at."""
    return with_later(
        select, {"nodes": group_nodes(what_if_node), "kernel_caches": captures_kcs}, {"kernel_caches": kc_namespace}
    )


# ---- why-not-cached --------------------------------------------------------------------------------------


def cached_kcns(pod: str | None, namespace: str | None, manifest: Any) -> Callable[[Objects], Any]:
    """The KernelCacheNodes one pod's admission reads (kernelcache/admission/candidates._scoped, the usage and
    placement of explain.why_not_cached): those with an entry of the pod's namespace (its key `NS/...` or its
    kernelCacheRef's namespace in their bytes), those with an entry of the pod's compatibility footprint (in
    their bytes), and by name the pod's node and the nodes using a KernelCache; a line with an escape is taken
    whatever it holds. When an entry of the footprint is Ready in another namespace, KServe's answer takes
    every entry of that cache, on any node: then every KernelCacheNode is decoded."""

    def pick(objects: Objects) -> Any:
        pods = [
            o for f, o in objects if f == "pods" and o.name == pod and (namespace is None or o.namespace == namespace)
        ]
        spaces = {namespace or o.namespace or "" for o in pods} | ({namespace} if namespace else set())
        if manifest is not None:
            spaces.add(namespace or manifest.meta.namespace or "default")
            pods.append(manifest)
        return _kcns_scan(objects, [(p, ns) for p in pods for ns in spaces], spaces)

    return pick


def _kcns_scan(objects: Objects, decided: list[tuple[Any, str]], spaces: set[str]) -> Any:
    """The Scan of the KernelCacheNodes the admission of each (pod, namespace it is decided in) reads, its
    usage and placement (`cached_kcns`); `spaces`: the namespaces of the decisions."""
    pods = [p for p, _ in decided]
    footprints: set[str] = set()
    for p, ns in decided:
        ident = identity_gates(pre_admission(p), ns)[2]
        if ident is not None and ident.compatibility_footprint:
            footprints.add(ident.compatibility_footprint)
    names = {p.node_name for p in pods if p.node_name}
    # the users of the KernelCache the pod records (any annotation value naming it) or would get (its namespace's)
    named = {v for p in pods for v in p.meta.annotations.values()}
    for f, o in objects:
        if f == "kernel_caches" and (o.namespace in spaces or f"{o.namespace}/{o.name}" in named):
            names |= {u.node_name for u in o.usage_pods if u.node_name}
    # (the end of a string, never its opening quote: a needle starting with the commonest byte of JSON is
    # looked for ~30x slower; a line with an escape: whatever it holds)
    needles: list[Any] = [b"\\"]
    for ns in sorted(s for s in spaces if s):
        needles += [ns.encode("utf-8") + b"/", ns.encode("utf-8") + b'"']  # an entry's key, a kernelCacheRef
    needles += [fp.encode("utf-8") for fp in sorted(footprints)]

    def enough(kcns: list[Any]) -> bool:
        for kcn in kcns:
            cache = kcn.status.cache_status if kcn.status is not None else None
            for key, e in (cache or {}).items():
                ref = e.ref_under(key)
                if (
                    ref.name
                    and ref.namespace not in spaces
                    and e.state == c.ENTRY_READY
                    and e.footprints is not None
                    and e.footprints.compatibility in footprints
                ):
                    return False
        return True

    if len(needles) > _MAX_NEEDLES:
        return _Every()
    return Scan(frozenset(n for n in names if isinstance(n, str)), tuple(needles), enough)


def why_not_cached(select: Any, pod: str | None, namespace: str | None, manifest: Any) -> Any:
    """why-not-cached's selection for one pod: only the KernelCacheNodes its admission reads."""
    return with_later(select, {"kcns": cached_kcns(pod, namespace, manifest)})


# ---- why-not-cached -A -------------------------------------------------------------------------------------


def _serving(objects: Objects, namespace: str | None) -> list[Any]:
    """The serving pods (the InferenceService label) among the pods read, in `namespace` when given."""
    return [
        o
        for f, o in objects
        if f == "pods" and c.LABEL_ISVC in o.meta.labels and (namespace is None or o.namespace == namespace)
    ]


def serving_pods(objects: Objects) -> Any:
    """The pods the fleet view reads: those whose line holds the InferenceService label's key (the end of the
    string; a line with an escape whatever it holds); the fleet keeps the labelled ones (agent pods, 1 in 3 of
    a dump's lines at 130,000 nodes, are not decoded)."""
    return Scan(frozenset(), (b"\\", c.LABEL_ISVC.encode("utf-8") + b'"'))


def serving_nodes(namespace: str | None) -> Callable[[Objects], Any]:
    """The nodes the fleet view reads: the serving pods' (each pod's answer reads its node by name)."""
    return lambda objects: {p.node_name for p in _serving(objects, namespace)}


def fleet_kcns(namespace: str | None) -> Callable[[Objects], Any]:
    """The KernelCacheNodes the fleet view reads: those each serving pod's answer reads (`cached_kcns`, the
    pod decided in its own namespace, as explain.fleet.hit_rate decides it)."""

    def pick(objects: Objects) -> Any:
        pods = _serving(objects, namespace)
        return _kcns_scan(objects, [(p, p.namespace) for p in pods], {p.namespace for p in pods})

    return pick


def why_not_cached_fleet(select: Any, namespace: str | None) -> Any:
    """why-not-cached -A's selection (or -n NS): only the serving pods, their nodes and the KernelCacheNodes
    their answers read (in this order: each picker is told the objects picked before it)."""
    later = {"pods": serving_pods, "nodes": serving_nodes(namespace), "kcns": fleet_kcns(namespace)}
    return msgspec.structs.replace(select, later={**later, **select.later}, later_keys=dict(select.later_keys))
