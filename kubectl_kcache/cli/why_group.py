"""`kubectl kcache why-group`: which node group a producer's captured cache goes to, and why."""

from __future__ import annotations

from typing import Any

import click

from ..errors import (
    EXIT_FINDINGS,
    EXIT_OK,
)
from ..report.answers import WHY_GROUP
from ..report.registry import formats
from .app import CONTEXT_SETTINGS, main
from .flags import from_file_option, kube_options, make_client, merged_flags, output_option
from .reading import keep, load_snapshot_files, source_of
from .why_common import default_namespace_offline, print_explanation, why_selection

# ---- why-group ----------------------------------------------------------------------------------


@main.command("why-group", context_settings=CONTEXT_SETTINGS)
@kube_options
@from_file_option
@click.argument("pod", required=False)
@click.option("--capture", "capture_name", metavar="NAME", help="Start from this KernelCacheCapture instead of a pod.")
@click.option("--node", "what_if_node", metavar="NODE", help="What if the producer ran on NODE?")
@click.option("--group", "what_if_group", metavar="GROUP", help="What if the pod requested GROUP?")
@output_option(
    formats(WHY_GROUP), "tree", "Output format: tree (the answer first), wide (with all the evidence), json, yaml."
)
@click.pass_context
def why_group(
    ctx: click.Context,
    pod: str | None,
    from_files: tuple[str, ...],
    capture_name: str | None,
    what_if_node: str | None,
    what_if_group: str | None,
    output: str,
    **kwargs: Any,
) -> int:
    """Explain which KernelCacheNodeGroup a producer POD's captured cache goes (or went) to, step by step,
    exactly as KServe's controller decides it. Reads only."""
    flags = merged_flags(ctx, kwargs)
    if not pod and not capture_name:
        raise click.UsageError("give a POD or --capture NAME")
    from ..explain.why_group import explain

    if from_files:
        from . import why_pick

        select = why_pick.why_group(why_selection("why-group", flags.get("namespace")), what_if_node)
        snap = load_snapshot_files(from_files, select)
        namespace = flags.get("namespace") or default_namespace_offline(snap, pod, capture_name)
    else:
        from ..snapshot.live import collect_for_why_group

        client = make_client(flags).bounded()
        namespace = flags.get("namespace") or client.namespace
        snap = keep(collect_for_why_group(client, namespace, pod, capture_name, what_if_node))
    why = explain(
        snap, namespace, pod_name=pod, capture_name=capture_name, what_if_node=what_if_node, what_if_group=what_if_group
    )

    print_explanation(why, WHY_GROUP, output, source_of(snap.meta, namespace))
    return EXIT_OK if why.decision.ok else EXIT_FINDINGS
