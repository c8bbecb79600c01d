"""`kubectl kcache monitor`: the checklist kept current, served as metrics and a report."""

from __future__ import annotations

from typing import Any

import click

from .app import CONTEXT_SETTINGS, main
from .flags import kube_options, make_client, merged_flags, scope_namespace

# ---- monitor ------------------------------------------------------------------------------------


@main.command(context_settings=CONTEXT_SETTINGS)
@kube_options(namespaces="all")
@click.option("--port", type=int, default=8080, show_default=True, help="Serve /metrics, /report, /healthz, /readyz.")
@click.option("--address", default="0.0.0.0", show_default=True, help="The address to listen on.")
@click.option(
    "--resync-period",
    type=float,
    default=60.0,
    show_default=True,
    help="Seconds between evaluations when nothing changes.",
)
@click.option(
    "--events",
    is_flag=True,
    help="Record an Event on the object when a finding appears or clears (the only writes; needs `create events`).",
)
@click.pass_context
def monitor(ctx: click.Context, port: int, address: str, resync_period: float, events: bool, **kwargs: Any) -> int:
    """Watch the cluster read-only and serve what the doctor, status and why-not-cached -A would say, kept
    current: Prometheus metrics on /metrics, the doctor's HTML page on /report, /healthz and /readyz.

    Needs only the doctor's read-only role (get, list, watch) and no Lease; runs until SIGTERM/SIGINT.
    """
    flags = merged_flags(ctx, kwargs)
    if not 0 <= port <= 65535:
        raise click.BadParameter("must be 0 to 65535", param_hint="--port")
    if resync_period <= 0:
        raise click.BadParameter("must be more than 0", param_hint="--resync-period")
    from ..monitor.run import MonitorOptions, run_monitor

    return run_monitor(
        make_client(flags),
        MonitorOptions(
            port=port, address=address, resync=resync_period, events=events, namespace=scope_namespace(flags)
        ),
    )
