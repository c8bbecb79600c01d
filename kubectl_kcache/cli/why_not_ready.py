"""`kubectl kcache why-not-ready`: why a KernelCache is not Ready on the nodes of its group, the chain in
KServe's order; without a KernelCache, every one in scope."""

from __future__ import annotations

import re
from typing import Any

import click

from ..errors import EXIT_FINDINGS, EXIT_INCOMPLETE, EXIT_OK, InputError
from ..report.answers import WHY_NOT_READY, WHY_NOT_READY_ALL
from ..report.registry import formats
from .app import CONTEXT_SETTINGS, main
from .flags import from_file_option, kube_options, make_client, merged_flags, output_option
from .reading import keep, load_snapshot_files, source_of
from .why_common import print_explanation


def reads() -> frozenset[str]:
    """What the chain reads, as snapshot fields (its lists in snapshot/plan.py): from a file the rest is not
    decoded."""
    from ..snapshot import kinds, plan

    return frozenset(kinds.for_resource(spec.resource).field for spec in plan.WHY_NOT_READY)


@main.command("why-not-ready", context_settings=CONTEXT_SETTINGS)
@kube_options
@from_file_option
@click.argument("kernelcache", required=False)
@click.option(
    "--node",
    "nodes",
    metavar="NODE",
    multiple=True,
    help="Also trace NODE (repeatable): for a node outside the group, which selector pair fails.",
)
@output_option(
    formats(WHY_NOT_READY),
    "tree",
    "Output format: tree (the answer first), wide (every gate of every node), json, yaml.",
)
@click.option(
    "-l", "--selector", metavar="SELECTOR", default="", help="Without KERNELCACHE: only KernelCaches with these labels."
)
@click.option(
    "--group", "group", metavar="GROUP", default="", help="Without KERNELCACHE: only KernelCaches of this node group."
)
@click.pass_context
def why_not_ready(
    ctx: click.Context,
    kernelcache: str | None,
    from_files: tuple[str, ...],
    nodes: tuple[str, ...],
    output: str,
    selector: str,
    group: str,
    **kwargs: Any,
) -> int:
    """Explain why a KERNELCACHE is not Ready on the nodes of its group, in the order KServe acts: the
    cache-level gates (configuration, verification, the group, the job namespace, the prefetcher identity, the
    requeue held by running prefetch Jobs), then per member node its KernelCacheNode, the agent, the entry, the
    preparation Job and pod, the pull and the entry's state; the causes folded across nodes, each with the next
    command; the aggregate KServe computes beside the one it wrote. Reads only.

    Without KERNELCACHE (`-A`, `-n NS`, `-l SELECTOR`, `--group GROUP`): one row per KernelCache not Ready
    everywhere, with its top cause.

    Exit codes: 0 Ready on every Ready member of its group (without KERNELCACHE: every one), 1 not, 2 bad
    input, 3 a read a gate needs was forbidden or failed.
    """
    from ..explain.why_not_ready import explain, explain_all
    from ..snapshot import plan
    from ..snapshot.reads import require

    flags = merged_flags(ctx, kwargs)
    if kernelcache and (selector or group or flags.get("all_namespaces")):
        raise click.UsageError("-l, --group and -A are for every KernelCache: give them without KERNELCACHE")
    if not kernelcache and nodes:
        raise click.UsageError("--node needs a KERNELCACHE")
    if kernelcache and kernelcache.startswith(f"{_PLURAL}/"):
        kernelcache = kernelcache.split("/", 1)[1]
    all_ns = bool(flags.get("all_namespaces"))
    if from_files:
        from ..snapshot.files.load import Selection

        namespace = None if all_ns else flags.get("namespace")
        select = _one_cache(kernelcache, namespace, nodes) if kernelcache else Selection(reads(), share=True)
        snap = load_snapshot_files(from_files, select)
        if kernelcache and namespace is None:
            namespace = _offline_namespace(snap, kernelcache)
    else:
        from ..snapshot.live import collect_for_why_not_ready

        client = make_client(flags)
        namespace = None if all_ns else (flags.get("namespace") or client.namespace)
        snap = keep(collect_for_why_not_ready(client, namespace if kernelcache or not all_ns else None))
    required = (plan.KERNEL_CACHES.in_namespace(namespace), plan.NODES, plan.NODE_GROUPS, plan.CONFIGMAP)
    require(snap, "why-not-ready", required, absent_is_none=True)
    source = source_of(snap.meta, namespace)
    if kernelcache:
        assert namespace is not None
        unknown = [n for n in nodes if n not in snap.node_by_name]
        if unknown:
            raise InputError(f"--node: no node named {unknown[0]!r}")
        why = explain(snap, namespace, kernelcache, nodes)
        if not why.found:
            raise InputError(f'KernelCache "{kernelcache}" not found in namespace {namespace}')
        print_explanation(why, WHY_NOT_READY, output, source)
        return _exit(snap, why.unread, why.ready)
    fleet = explain_all(snap, namespace, selector, group)
    print_explanation(fleet, WHY_NOT_READY_ALL, output, source)
    return _exit(snap, fleet.unread, fleet.all_ready)


_PLURAL = "kernelcaches"
_NODE_NAME = re.compile(rb'"nodeName"\s*:\s*"([^"\\]+)"')


def _one_cache(name: str, namespace: str | None, extra_nodes: tuple[str, ...]) -> Any:
    """What one KernelCache's chain reads of a file, as its live reads would need: the nodes of its group (the
    others are not members: the chain never looks at them) and any node listing images (whether nodes list
    them at all is asked of every node), the KernelCacheNodes of its group's members or holding an entry of it
    (the admission note), and only the agent pods on those members and the pods of the job namespace; the rest
    is counted, not decoded. Which nodes are the group's is known only once the groups, the KernelCaches and
    the configuration are read, after the nodes in a dump: a node's line is decoded when it holds one of the
    selector's labels in its bytes (or an escape), and the members are then matched on the decoded nodes."""
    from ..kernelcache import constants as c
    from ..kernelcache.caches import effective_group
    from ..kernelcache.selectors import selector_matches
    from ..snapshot.files.load import Scan, Selection, namespace_of
    from . import why_pick

    members: dict[str, Any] = {}

    def config_groups(objects: list[tuple[str, Any]]) -> tuple[Any, list[Any]]:
        """(the configuration, the selectors of the groups of the KernelCaches of that name)."""
        by_field: dict[str, list[Any]] = {}
        for f, obj in objects:
            by_field.setdefault(f, []).append(obj)
        cfg = next(iter(why_pick.configs(objects)), None)
        default = cfg.default_node_group if cfg is not None else ""
        groups = {g.name: g for g in by_field.get("node_groups", [])}
        selectors = []
        for kc in by_field.get("kernel_caches", []):
            if kc.name == name and (namespace is None or kc.namespace == namespace):
                group = groups.get(effective_group(kc, default))
                if group is not None and group.node_selector:
                    selectors.append(group.node_selector)
        return cfg, selectors

    def scope(objects: list[tuple[str, Any]]) -> Any:
        """(member node names, the job namespace), worked out once from the decoded objects."""
        if "nodes" not in members:
            cfg, selectors = config_groups(objects)
            wanted = set(extra_nodes)
            nodes = [obj for f, obj in objects if f == "nodes"]
            for selector in selectors:
                wanted |= {n.name for n in nodes if selector_matches(selector, n.labels)}
            members["nodes"] = wanted
            members["job_ns"] = cfg.job_namespace if cfg is not None else ""
        return members["nodes"], members["job_ns"]

    def pick_nodes(objects: list[tuple[str, Any]]) -> Any:
        """Every node that may be a member (one of each selector's labels, as JSON writes it, in its bytes), the
        nodes named by --node, and those listing images."""
        needles: list[Any] = [BACKSLASH, (b'images"', re.compile(rb'images"\s*:\s*\[\s*[^\s\]]'), None), b"#image"]
        for selector in config_groups(objects)[1]:
            needles.append(min(selector.items())[1].encode("utf-8") + b'"')  # the value, as a string ends
        return Scan(frozenset(extra_nodes), tuple(needles))

    needle = f'"{namespace}/{name}"'.encode() if namespace else f'/{name}"'.encode()

    def kcn_key(item: Any) -> str:
        if isinstance(item, (bytes, bytearray, memoryview)):
            return HOLDS if needle in bytes(item) else _name(item)
        entries = (item.status.cache_status if item.status is not None else None) or {}
        return HOLDS if any(k.endswith(f"/{name}") for k in entries) else item.name

    def pod_key(item: Any) -> str:
        if isinstance(item, (bytes, bytearray, memoryview)):
            ns = namespace_of(item)
            m = _NODE_NAME.search(bytes(item))
            node = m.group(1).decode("utf-8", "replace") if m else ""
        else:
            ns, node = item.namespace, item.node_name
        return f"node/{node}" if ns == c.KSERVE_NAMESPACE else f"namespace/{ns}"

    def pick_kcns(objects: list[tuple[str, Any]]) -> Any:
        """The members' KernelCacheNodes (by name) and those holding an entry of the cache (by its key in their
        bytes), exactly as kcn_key picks them."""
        wanted = scope(objects)[0] | {HOLDS}
        return Scan(frozenset(scope(objects)[0]), (needle[1:],), keeps=lambda x: kcn_key(x) in wanted)

    def pick_pods(objects: list[tuple[str, Any]]) -> Any:
        """The agent pods on the members and the pods of the job namespace, exactly as pod_key picks them; a
        line is looked at when it names a member as its node or the job namespace (or holds an escape)."""
        nodes, job_ns = scope(objects)
        wanted = {f"node/{n}" for n in nodes} | {f"namespace/{job_ns}"}
        needles = (
            BACKSLASH,
            job_ns.encode("utf-8") + b'"',  # the namespace, as a string ends
            (b'nodeName"', re.compile(rb'nodeName"\s*:\s*"([^"\\]*)"'), frozenset(nodes)),
        )
        return Scan(frozenset(), needles, keeps=lambda x: pod_key(x) in wanted)

    return Selection(reads(), later={"nodes": pick_nodes, "kcns": pick_kcns, "pods": pick_pods})


# A Scan's needles are the bytes of a string's end (`value"`: a needle starting with a quote, the commonest byte
# of JSON, is looked for ~30x slower), and a line with an escape is looked at whatever it holds (its strings may
# be spelled otherwise)
BACKSLASH = b"\\"


HOLDS = "\x00holds-the-entry"  # the key of a KernelCacheNode with an entry of the cache (no name has a NUL)


def _name(raw: Any) -> str:
    from ..snapshot.files.load import name_of

    return str(name_of(raw))


def _exit(snap: Any, unread: tuple[str, ...], ready: bool) -> int:
    """3 when a gate's read was refused or failed live (its gate says "not read"); else 0 Ready, 1 not."""
    if unread and snap.meta.source != "file":
        return EXIT_INCOMPLETE
    return EXIT_OK if ready else EXIT_FINDINGS


def _offline_namespace(snap: Any, name: str) -> str:
    """Offline there is no kubeconfig context: the namespace holding a KernelCache of that name, if one."""
    found = sorted({k.namespace for k in snap.kernel_caches if k.name == name})
    if len(found) > 1:
        raise InputError(f"KernelCache {name!r} is in several namespaces ({', '.join(found)}): use -n")
    if not found:
        spaces = sorted({k.namespace for k in snap.kernel_caches})
        raise InputError(
            f'KernelCache "{name}" not found in the input files (namespaces with KernelCaches: '
            f"{', '.join(spaces) or 'none'})"
        )
    return found[0]
