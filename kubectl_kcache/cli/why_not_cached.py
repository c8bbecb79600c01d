"""`kubectl kcache why-not-cached`: why a serving pod (or a manifest not created yet) got no KernelCache, and
the hit rate of many pods.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from ..errors import (
    EXIT_FINDINGS,
    EXIT_OK,
    InputError,
)
from ..report.answers import HIT_RATE, WHY_NOT_CACHED
from ..report.registry import formats
from .app import CONTEXT_SETTINGS, main
from .flags import from_file_option, kube_options, make_client, merged_flags, output_option, use_color
from .reading import keep, load_snapshot_files, source_of
from .why_common import (
    default_namespace_offline,
    pod_in_namespace,
    pods_nodes,
    print_explanation,
    why_selection,
)

# ---- why-not-cached -----------------------------------------------------------------------------

# one pod's formats, then those only the fleet has (html)
OUTPUTS = [*formats(WHY_NOT_CACHED), *(f for f in formats(HIT_RATE) if f not in formats(WHY_NOT_CACHED))]


@main.command("why-not-cached", context_settings=CONTEXT_SETTINGS)
@kube_options
@from_file_option
@click.argument("pod", required=False)
@click.option(
    "--manifest",
    "manifest",
    metavar="FILE",
    help="What if: a Pod, a Deployment/ReplicaSet pod template, or an InferenceService (with its "
    "ServingRuntime) not created yet; `-` reads stdin.",
)
@output_option(
    OUTPUTS,
    "tree",
    "Output format: tree (the answer first; without POD the table of InferenceServices), wide (with "
    "all the evidence; without POD every pod), json, yaml, html (without POD: one page to share; to a "
    "terminal it is written to a file).",
)
@click.option(
    "-l",
    "--selector",
    metavar="SELECTOR",
    default="",
    help="Without POD: only serving pods with these labels (kubectl's syntax).",
)
@click.option("--isvc", metavar="NAME", default="", help="Without POD: only the pods of this InferenceService.")
@click.pass_context
def why_not_cached(
    ctx: click.Context,
    pod: str | None,
    from_files: tuple[str, ...],
    manifest: str | None,
    output: str,
    selector: str,
    isvc: str,
    **kwargs: Any,
) -> int:
    """Explain whether a serving POD got a KernelCache from KServe's pod webhook, and why (not): every
    gate, the footprints, each candidate KernelCache with the first check that rejected it, what KServe
    would do today, and the next command. Also `why-cached`. Reads only.

    Without POD (`-A`, `-n NS`, `-l SELECTOR`, `--isvc NAME`): the same answer for every serving pod in
    scope, counted per InferenceService: pods, cached at admission, cold, would be cached now, would be
    denied, the top blocking gate and the next command.

    Exit codes: 0 the pod got a cache (with --manifest: would get one; without POD: every pod did), 1 it
    did not, 2 bad input, 3 a read it needs was forbidden or failed.
    """
    flags = merged_flags(ctx, kwargs)
    if not pod and not manifest:
        return _fleet_hit_rate(flags, from_files, output, selector, isvc)
    if selector or isvc or flags.get("all_namespaces"):
        raise click.UsageError("-l, --isvc and -A are for the whole fleet: give them without POD")
    if output not in formats(WHY_NOT_CACHED):
        raise click.UsageError(f"-o {output} is for the whole fleet: give it without POD")
    if bool(pod) == bool(manifest):
        raise click.UsageError("give a POD or --manifest FILE (not both)")
    if manifest == "-" and "-" in from_files:
        raise click.UsageError("--manifest - and --from-file - cannot both read stdin")
    from ..explain.why_not_cached import explain

    manifest_pod, note, manifest_ns = _manifest_pod(manifest) if manifest else (None, "", None)
    if from_files:
        from . import why_pick

        select = why_selection(
            "why-not-cached",
            flags.get("namespace") or manifest_ns,
            pods_nodes(pod, flags.get("namespace")) if pod else None,
        )
        select = why_pick.why_not_cached(select, pod, flags.get("namespace"), manifest_pod)
        snap = load_snapshot_files(from_files, select)
        namespace = (
            flags.get("namespace") or manifest_ns or (default_namespace_offline(snap, pod, None) if pod else "default")
        )
    else:
        from ..snapshot.live import collect_for_why_not_cached

        client = make_client(flags).bounded()
        namespace = flags.get("namespace") or manifest_ns or client.namespace
        snap = keep(collect_for_why_not_cached(client, namespace, pod))
    if manifest_pod is not None:
        manifest_pod = pod_in_namespace(manifest_pod, namespace)
    why = explain(snap, namespace, pod_name=pod, manifest=manifest_pod, source_note=note)

    print_explanation(why, WHY_NOT_CACHED, output, source_of(snap.meta, namespace))
    return EXIT_OK if why.exit_cached else EXIT_FINDINGS


main.add_command(why_not_cached, name="why-cached")


def _fleet_hit_rate(flags: dict[str, Any], from_files: tuple[str, ...], output: str, selector: str, isvc: str) -> int:
    """why-not-cached without POD: every serving pod in scope (-A: all namespaces; else -n, the context's
    namespace live, every namespace of the input offline)."""
    from ..explain.fleet import check_selector, hit_rate
    from ..kernelcache.constants import LABEL_ISVC
    from ..snapshot.model import provenance

    namespace = None if flags.get("all_namespaces") else flags.get("namespace")
    if from_files:  # decoding only what the answers read: the serving pods, their nodes without their images and
        # the KernelCacheNodes their admission reads; no agent pods' Jobs
        from .why_pick import why_not_cached_fleet

        snap = load_snapshot_files(
            from_files, why_not_cached_fleet(why_selection("why-not-cached", namespace), namespace)
        )
    else:
        from ..snapshot.live import collect_for_fleet

        client = make_client(flags)
        if not flags.get("all_namespaces"):
            namespace = namespace or client.namespace
        labels = ",".join(x for x in (f"{LABEL_ISVC}={isvc}" if isvc else "", selector) if x)
        check_selector(selector)  # a bad -l is exit 2 before any read
        snap = keep(collect_for_fleet(client, namespace, labels))
    fleet = hit_rate(snap, namespace, selector, isvc)
    from ..explain.fleet_scope import check_scope

    check_scope(snap, namespace, isvc, fleet.totals.pods)
    source = provenance(snap.meta, namespace)
    from ..report import render

    if output == "html":
        from .pages import run_facts, write_page

        facts = run_facts(snap.meta.server_version, flags)
        write_page(
            lambda out: render(HIT_RATE, fleet, output, out, source=source, run=facts), "hit-rate", source.cluster
        )
    else:
        from ..report.terminal import terminal_width

        render(HIT_RATE, fleet, output, sys.stdout, color=use_color(), source=source, width=terminal_width(sys.stdout))
    return EXIT_OK if fleet.clean else EXIT_FINDINGS


def _manifest_pod(path: str) -> tuple[Any, str, str | None]:
    """(the Pod the manifest stands for, how it was obtained, its namespace if it names one)."""
    from ..kernelcache.render import pod_from_manifest
    from ..objects import Pod
    from ..snapshot.files.load import read_documents

    docs = read_documents(path)
    pod, note = pod_from_manifest(docs, path if path != "-" else "stdin")
    try:
        parsed = Pod.from_dict(pod)
    except InputError as exc:
        raise InputError(f"--manifest {path}: {exc}") from None
    return parsed, note, parsed.meta.namespace
