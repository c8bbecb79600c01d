"""`kubectl kcache why-not-ready`: why a KernelCache is not Ready on the nodes of its group, the chain in
KServe's order; without a KernelCache, every one in scope."""

from __future__ import annotations

import sys
from typing import Any

import click

from ..errors import EXIT_FINDINGS, EXIT_INCOMPLETE, EXIT_OK
from ..report.answers import WHY_NOT_READY, WHY_NOT_READY_ALL
from ..report.registry import formats
from .app import CONTEXT_SETTINGS, main
from .flags import from_file_option, kube_options, make_client, merged_flags, use_color
from .reading import load_snapshot_files, source_of

# what the chain reads, as snapshot fields: from a file the rest is not decoded
READS = frozenset(
    {
        "nodes",
        "node_groups",
        "kcns",
        "kernel_caches",
        "captures",
        "configmaps",
        "daemonsets",
        "deployments",
        "pods",
        "events",
        "namespaces",
        "jobs",
        "service_accounts",
        "role_bindings",
    }
)


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
@click.option(
    "-o",
    "--output",
    type=click.Choice(formats(WHY_NOT_READY)),
    default="tree",
    show_default=True,
    help="Output format: tree (the answer first), wide (every gate of every node), json, yaml.",
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

        snap = load_snapshot_files(from_files, Selection(READS))
        namespace = None if all_ns else flags.get("namespace")
        if kernelcache and namespace is None:
            namespace = _offline_namespace(snap, kernelcache)
    else:
        from ..snapshot.live import collect_for_why_not_ready

        client = make_client(flags)
        namespace = None if all_ns else (flags.get("namespace") or client.namespace)
        snap = collect_for_why_not_ready(client, namespace if kernelcache or not all_ns else None)
    required = (plan.KERNEL_CACHES.in_namespace(namespace), plan.NODES, plan.NODE_GROUPS, plan.CONFIGMAP)
    require(snap, "why-not-ready", required, absent_is_none=True)
    source = source_of(snap.meta, namespace)
    if kernelcache:
        assert namespace is not None
        why = explain(snap, namespace, kernelcache, nodes)
        if not why.found:
            from ..errors import InputError

            raise InputError(f'KernelCache "{kernelcache}" not found in namespace {namespace}')
        _print(WHY_NOT_READY, why, output, source)
        return _exit(snap, why.unread, why.ready)
    fleet = explain_all(snap, namespace, selector, group)
    _print(WHY_NOT_READY_ALL, fleet, output, source)
    return _exit(snap, fleet.unread, fleet.all_ready)


_PLURAL = "kernelcaches"


def _exit(snap: Any, unread: tuple[str, ...], ready: bool) -> int:
    """3 when a gate's read was refused or failed live (its gate says "not read"); else 0 Ready, 1 not."""
    if unread and snap.meta.source != "file":
        return EXIT_INCOMPLETE
    return EXIT_OK if ready else EXIT_FINDINGS


def _print(kind: str, report: Any, output: str, source: Any) -> None:
    from ..report import render
    from ..report.terminal import terminal_width

    render(kind, report, output, sys.stdout, color=use_color(), width=terminal_width(sys.stdout), source=source)


def _offline_namespace(snap: Any, name: str) -> str:
    """Offline there is no kubeconfig context: the namespace holding a KernelCache of that name, if one."""
    from ..errors import InputError

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
