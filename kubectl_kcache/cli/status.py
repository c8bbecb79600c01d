"""`kubectl kcache status`: node groups and KernelCaches at a glance, once or kept current (`-w`)."""

from __future__ import annotations

import sys
from typing import Any

import click

from ..errors import (
    EXIT_OK,
    InputError,
)
from ..report.registry import formats
from ..report.status_table import STATUS, View, for_stream, status_text, with_changes
from ..text import escape
from .app import CONTEXT_SETTINGS, main
from .flags import (
    from_file_option,
    kube_options,
    make_client,
    merged_flags,
    output_option,
    scope_namespace,
    use_color,
)
from .reading import read_snapshot, serving_pods

# ---- status -------------------------------------------------------------------------------------


@main.command(context_settings=CONTEXT_SETTINGS)
@kube_options
@from_file_option
@output_option(formats(STATUS))
@click.option(
    "-w",
    "--watch",
    is_flag=True,
    help="Keep the output current from watches until Ctrl-C; rows that changed since the last screen are marked.",
)
@click.option("--group", "group", metavar="NAME", help="Only this node group (its row and its caches' rows).")
@click.option(
    "-l",
    "--selector",
    "selector",
    metavar="SELECTOR",
    help="Only KernelCaches with these labels, as kubectl's -l (k=v, k!=v, k, !k, k in (a,b), k notin (a,b)).",
)
@click.option(
    "--problems",
    is_flag=True,
    help="Only unhealthy rows: groups with members NotReady or missing their "
    "KernelCacheNode or agent; caches with an Error, a missing or a preparing entry.",
)
@click.option("--no-headers", is_flag=True, help="No column titles and no header line (as kubectl get).")
@click.pass_context
def status(
    ctx: click.Context,
    from_files: tuple[str, ...],
    output: str,
    watch: bool,
    group: str | None,
    selector: str | None,
    problems: bool,
    no_headers: bool,
    **kwargs: Any,
) -> int:
    """The fleet at a glance: per node group its members (Ready, NotReady, cordoned), KernelCacheNodes,
    agent pods and caches; per KernelCache and group, how many member nodes have its entry Ready,
    Pending, Pulling or Error.

    Reads only (the lists doctor makes, fewer of them). -n limits KernelCaches to a namespace. With -w
    the output is kept current from watches, like `kubectl get -w`. Exit codes: 0 shown, 2 bad input,
    3 incomplete (unreachable, or a read or watch forbidden), 130 interrupted.
    """
    flags = merged_flags(ctx, kwargs)
    if watch and from_files:
        raise click.UsageError("--watch needs a live cluster: files do not change")
    color = use_color() and output in ("table", "wide")
    from ..explain.fleet import check_selector

    requirements = check_selector(selector) if selector is not None else None  # a bad -l: exit 2 before reading
    shape = {"group": group, "selector": requirements, "problems": problems, "headers": not no_headers}
    if not watch:
        snap, provenance = read_snapshot(flags, from_files, _status_scope(flags))
        _show_status(snap, provenance, output, sys.stdout, color=color, shape=shape)
        return EXIT_OK
    return _watch_status(flags, output, color, shape)


def _status_scope(flags: dict[str, Any]) -> Any:
    from ..snapshot.live import Scope

    return Scope(
        namespace=scope_namespace(flags),
        install=False,
        agent_pods=True,
        captures=False,
        preparation=False,
        producers=True,
        events=False,
    )  # producers: the serving pods' hit rate


def _show_status(
    snap: Any,
    provenance: Any,
    output: str,
    out: Any,
    *,
    color: bool,
    notes: tuple[str, ...] = (),
    header: str = "",
    shape: dict[str, Any] | None = None,
    previous: str | None = None,
    watch: dict[str, Any] | None = None,
) -> str:
    """Render the status of `snap` (narrowed to `shape`'s group and labels); returns the text written (table
    only: for redrawing). With `previous` (a watch's last screen), rows that changed are marked; `watch` is
    the watch's state, for the machine formats."""
    from ..explain.status import StatusReport, fleet_status
    from ..kernelcache.selectors import label_selector_matches
    from ..report import render
    from ..report.status_common import narrowed, problems_only, totals_line

    shape = shape or {}
    fleet = fleet_status(snap, provenance.namespace)
    if shape.get("group") is not None and fleet.group(shape["group"]) is None:
        raise InputError(
            f"node group {escape(shape['group'])!r} not found "
            f"(groups: {', '.join(escape(g.name) for g in fleet.groups) or 'none'})"
        )
    caches = None
    if shape.get("selector") is not None:
        caches = {
            f"{kc.namespace}/{kc.name}"
            for kc in snap.kernel_caches
            if label_selector_matches(shape["selector"], kc.meta.labels)
        }
    if shape.get("group") is not None or caches is not None:
        fleet = narrowed(fleet, shape.get("group"), caches)
    serving = serving_pods(snap, provenance.namespace)
    totals = totals_line(fleet, serving)  # the answer counts every row, those --problems leaves out too
    if shape.get("problems"):  # every format shows the same rows
        fleet = problems_only(fleet)
    report = StatusReport(fleet, provenance, notes, watch, serving=serving)
    if output not in ("table", "wide"):
        render(STATUS, report, output, out)
        return ""
    from ..report.doctor_common import write_text
    from ..report.terminal import terminal_width

    view = View(wide=output == "wide", problems=bool(shape.get("problems")), headers=shape.get("headers", True))
    width = terminal_width(out)
    if previous is not None and width is not None:
        width -= 2  # room for the change mark
    text = status_text(report, color=color, width=width, header=header, view=view, totals=totals)
    shown = with_changes(text, previous, color) if previous is not None else text
    write_text(out, for_stream(shown, out))
    return text


def _watch_status(flags: dict[str, Any], output: str, color: bool, shape: dict[str, Any]) -> int:
    """List once, then watch from the lists' resourceVersions and re-render on change (coalesced)."""
    from ..runtime import memory

    with memory.long_lived():
        return _watch(flags, output, color, shape)


def _watch(flags: dict[str, Any], output: str, color: bool, shape: dict[str, Any]) -> int:
    import dataclasses
    import shutil
    import signal

    from ..provenance import now_rfc3339
    from ..snapshot.follow import LiveSnapshot

    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # started in the background of a shell: Ctrl-C
        signal.signal(signal.SIGINT, signal.default_int_handler)  # must still stop a watch, as in kubectl
    client = make_client(flags)
    lists: list[Any] = []
    snap, provenance = read_snapshot(flags, (), _status_scope(flags), lists=lists, client=client)
    out = sys.stdout
    tty = bool(getattr(out, "isatty", lambda: False)())
    header = "watching, Ctrl-C to stop"
    # a list refused now stays refused on the screen; a refused watch ends it (exit 3): no counts shown as live
    # that cannot be kept live
    live = LiveSnapshot(client, snap, [made for made in lists if made.resource_version], forbidden_is_fatal=True)
    shown = _show_status(
        snap, provenance, output, out, color=color, header=header, shape=shape, watch=live.watch_state()
    )
    out.flush()
    live.start()
    try:
        while True:
            if not live.wait():
                continue
            taken = now_rfc3339()
            current = dataclasses.replace(provenance, taken_at=taken, generated_at=taken)
            if output in ("table", "wide") and tty:
                size = shutil.get_terminal_size((80, 24))
                height, rows = _screen_rows(shown, size.columns), size.lines
                # Back to the first line of the last screen and clear below; a screen taller than the
                # terminal scrolled out of reach: clear the whole terminal instead.
                out.write(f"\x1b[{height}F\x1b[J" if 0 < height < rows else "\x1b[H\x1b[2J")
            elif output in ("table", "wide"):
                out.write("\n")
            elif output == "yaml":
                out.write("---\n")
            shown = _show_status(
                live.snapshot(taken),
                current,
                output,
                out,
                color=color,
                header=header,
                notes=tuple(live.problems()),
                shape=shape,
                previous=shown,
                watch=live.watch_state(),
            )
            out.flush()
    finally:
        live.stop()


def _screen_rows(text: str, columns: int) -> int:
    """The terminal rows `text` takes: a line longer than the terminal wraps onto the next row."""
    import re

    visible = (len(re.sub(r"\x1b\[[0-9;]*m", "", line)) for line in text.splitlines())
    return sum(max(1, -(-n // max(columns, 1))) for n in visible)
