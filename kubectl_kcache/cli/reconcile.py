"""`kubectl kcache reconcile`: what KServe's controller should be doing, planned (`--dry-run`) or done."""

from __future__ import annotations

import sys
from typing import Any

import click

from ..errors import (
    EXIT_FINDINGS,
    EXIT_OK,
)
from ..report.answers import PLAN
from ..report.registry import formats
from ..text import escape
from .app import CONTEXT_SETTINGS, main
from .flags import Seconds, from_file_option, kube_options, make_client, merged_flags, output_option, use_color
from .reading import keep, load_snapshot_files, source_of

# ---- reconcile ----------------------------------------------------------------------------------


@main.command(context_settings=CONTEXT_SETTINGS)
@kube_options(namespaces="cluster")
@from_file_option
@click.option(
    "--dry-run",
    type=click.Choice(["none", "client", "server"]),
    is_flag=False,
    flag_value="client",
    default="none",
    help="As kubectl's: client (or --dry-run alone) prints the plan and writes nothing; none writes. The "
    "plan is computed here from what was read; server (the API server validating each write) is not offered.",
)
@click.option("--once", is_flag=True, help="One pass, then exit.")
@output_option(formats(PLAN), help="Output format; `name`: the objects written, as `kubectl get -o name`.")
@click.option("--force", is_flag=True, help="Write even while KServe's own controller is active.")
@click.option("--leader-elect", is_flag=True, help="Take a coordination.k8s.io Lease before writing.")
@click.option("--leader-elect-name", default="kubectl-kcache-reconcile", show_default=True)
@click.option("--leader-elect-namespace", default="kserve", show_default=True)
@click.option("--lease-duration", type=Seconds(), default=15.0, show_default=True, help="Seconds.")
@click.option("--renew-deadline", type=Seconds(), default=10.0, show_default=True, help="Seconds.")
@click.option("--resync-period", type=Seconds(), default=300.0, show_default=True, help="Seconds between full passes.")
@click.option(
    "--health-port",
    type=click.IntRange(0, 65535),
    default=0,
    help="Serve /healthz, /readyz and /metrics on this port (0: off).",
)
@click.pass_context
def reconcile(
    ctx: click.Context,
    from_files: tuple[str, ...],
    dry_run: str,
    once: bool,
    output: str,
    force: bool,
    leader_elect: bool,
    leader_elect_name: str,
    leader_elect_namespace: str,
    lease_duration: float,
    renew_deadline: float,
    resync_period: float,
    health_port: int,
    **kwargs: Any,
) -> int:
    """Do the node-group duties of KServe's controller: KernelCacheNode membership, agent placement, and
    captured cache -> KernelCache with node-group selection and its events.

    With --dry-run print the plan (works on --from-file) and exit 1 when it plans writes (as `kubectl diff`;
    events alone do not count), 0 when the cluster is as KServe would make it; with --once make one pass;
    otherwise run as a controller until SIGTERM/SIGINT.
    """
    flags = merged_flags(ctx, kwargs)
    if renew_deadline >= lease_duration:
        raise click.BadParameter("must be shorter than --lease-duration", param_hint="--renew-deadline")
    from ..reconcile.planner import checked_plan

    if dry_run == "server":
        raise click.BadParameter(
            "server-side dry run is not offered: --dry-run=client prints the plan (what would be written)",
            param_hint="--dry-run",
        )
    if dry_run == "client":
        if from_files:
            snap = load_snapshot_files(from_files)
        else:
            from ..snapshot.live import collect_for_reconcile
            from ..snapshot.plan import RECONCILE_PLAN

            snap = keep(collect_for_reconcile(make_client(flags).bounded(), RECONCILE_PLAN))
        result = checked_plan(snap)
        for note in result.notes:
            sys.stderr.write(f"note: {escape(note)}\n")
        _render_plan(result.actions, output, source_of(snap.meta, None))
        return EXIT_FINDINGS if result.writes else EXIT_OK  # as `kubectl diff`: 1 when writes are planned
    if from_files:
        raise click.UsageError("--from-file works only with --dry-run=client (a file cannot be written to)")
    from ..reconcile.loop import LoopOptions, run_loop

    client = make_client(flags)
    opts = LoopOptions(
        once=once,
        force=force,
        leader_elect=leader_elect,
        lease_name=leader_elect_name,
        lease_namespace=leader_elect_namespace,
        lease_duration=lease_duration,
        renew_deadline=renew_deadline,
        resync_period=resync_period,
        health_port=health_port,
    )

    def report(actions: Any) -> None:
        from ..snapshot.model import SnapshotMeta

        meta = SnapshotMeta(
            cluster=client.resolved.cluster_name or client.server, server=client.server, taken_at=_now(), source="live"
        )
        _render_plan(actions, output, source_of(meta, None))

    return run_loop(client, opts, report=report if once else None)


def _now() -> str:
    import datetime as dt

    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _render_plan(actions: Any, output: str, source: Any) -> None:
    from ..reconcile.actions import plan_document
    from ..report import render
    from ..report.terminal import terminal_width

    doc = plan_document(actions)
    render(PLAN, doc, output, sys.stdout, color=use_color(), width=terminal_width(sys.stdout), source=source)
