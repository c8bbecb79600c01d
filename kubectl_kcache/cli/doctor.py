"""`kubectl kcache doctor` (the checklist) and `kubectl kcache explain CODE` (one check's catalogue entry)."""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

import click

from ..errors import (
    EXIT_FINDINGS,
    EXIT_INCOMPLETE,
    EXIT_OK,
    IncompleteError,
    InputError,
)
from ..report.registry import DOCTOR, formats
from ..text import escape
from .app import CONTEXT_SETTINGS, main
from .flags import from_file_option, kube_options, merged_flags, output_option, use_color
from .reading import read_snapshot, serving_pods
from .running import access_hint_line

# ---- doctor -------------------------------------------------------------------------------------


@main.command(context_settings=CONTEXT_SETTINGS)
@kube_options(namespaces="all")
@from_file_option
@output_option(formats(DOCTOR))
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning", "info", "never"]),
    default="error",
    show_default=True,
    help="Exit 1 when a finding at or above this severity is found.",
)
@click.option(
    "--show",
    type=click.Choice(["error", "warning", "info"]),
    default="info",
    show_default=True,
    help="Print only findings at or above this severity (the summary still counts all).",
)
@click.option(
    "--only",
    metavar="IDS",
    multiple=True,
    help="Run only these checks, or check/code kinds of finding (comma separated or repeated).",
)
@click.option(
    "--skip",
    metavar="IDS",
    multiple=True,
    help="Skip these checks, or check/code kinds of finding (comma separated or repeated).",
)
@click.option("--config", "suppress_file", metavar="PATH", help="A file of known findings to suppress.")
@click.option("--no-suppressions", is_flag=True, help="Ignore suppressions (file and annotations), e.g. in CI.")
@click.pass_context
def doctor(
    ctx: click.Context,
    from_files: tuple[str, ...],
    output: str,
    fail_on: str,
    show: str,
    only: tuple[str, ...],
    skip: tuple[str, ...],
    suppress_file: str | None,
    no_suppressions: bool,
    **kwargs: Any,
) -> int:
    """Run the Kernel Cache checklist and report findings with the next command to run.

    Reads only; never writes to the cluster. Exit codes: 0 nothing at or above --fail-on, 1 findings,
    2 bad input, 3 incomplete (unreachable, or reads forbidden), 4 internal error.
    """
    flags = merged_flags(ctx, kwargs)
    from ..checks import load_suppressions, run_doctor

    suppressions = load_suppressions(suppress_file) if suppress_file is not None and not no_suppressions else None
    ids = lambda values: tuple(x.strip() for v in values for x in v.split(",") if x.strip())  # noqa: E731
    for name, values in (("--only", only), ("--skip", skip)):
        if values and not ids(values):
            raise click.BadParameter(
                "no check id given (see `kubectl kcache doctor --help` for the ids)", param_hint=name
            )
    from ..checks.early import EarlyChecks
    from ..checks.runner import selected_checks, validate_ids

    # live: each check starts as soon as its lists have arrived (doctor at the wire)
    early = (
        None if from_files else EarlyChecks(selected_checks(validate_ids(ids(only)), validate_ids(ids(skip), "--skip")))
    )
    snap, provenance = read_snapshot(flags, from_files, on_list=early)
    report = run_doctor(
        snap,
        only=ids(only),
        skip=ids(skip),
        suppressions=suppressions,
        use_suppressions=not no_suppressions,
        early=early.results if early is not None else None,
    )
    for warning in report.warnings:
        sys.stderr.write(f"warning: {escape(warning)}\n")
    if snap.meta.clock and report.judged_time:
        sys.stderr.write(
            f"note: the input does not say when it was read (no takenAt): checks that judge time "
            f"take its newest time, {snap.meta.clock}, as now\n"
        )
    elif provenance.clock:
        provenance = dataclasses.replace(provenance, clock="")
    import msgspec

    from ..report import render_doctor, wants

    report = msgspec.structs.replace(report, provenance=provenance.to_dict())
    context: dict[str, Any] = {"provenance": provenance, "show": show}
    if "status" in wants(output):
        from ..explain.status import fleet_status

        try:
            context["status"] = fleet_status(snap, provenance.namespace)
        except (IncompleteError, InputError) as exc:  # the page says why there is no matrix; the checks
            context["status"] = str(exc)  # still report
    if "fleet" in wants(output):
        context["fleet"] = serving_pods(snap, provenance.namespace)
    if "run" in wants(output):
        from .pages import run_facts

        context["run"] = run_facts(snap.meta.server_version, flags)
    if output == "html":
        from .pages import write_page

        cluster = provenance.cluster or report.cluster
        write_page(lambda out: render_doctor(report, output, out, **context), "report", cluster)
    else:
        render_doctor(report, output, sys.stdout, color=use_color(), **context)
    from ..checks.model import SEVERITY_RANK

    # no verdict on what could not be read (3 wins over 1); a kind absent from input files is said
    # in the report, but it is not an API failure: the findings decide the exit code then
    failed = report.unreadable
    if failed:
        hint = access_hint_line(snap.reads, flags)
        sys.stderr.write(f"doctor: incomplete: {escape('; '.join(map(str, failed)))}{hint}\n")
        return EXIT_INCOMPLETE
    worst = report.worst()
    if worst is not None and fail_on != "never" and SEVERITY_RANK[worst] >= SEVERITY_RANK[fail_on]:
        return EXIT_FINDINGS
    return EXIT_OK


@main.command(context_settings=CONTEXT_SETTINGS)
@click.argument("code")
def explain(code: str) -> int:
    """What a doctor finding code means: severity, what KServe does and the fix.

    CODE is check/code as doctor prints it (error[kcn-missing/missing]), or a check id for all its codes.
    The same text as docs/checks.md. Exit 2 for an unknown code.
    """
    from ..report.doctor_common import write_text
    from ..report.doctor_explain import explain_text
    from ..report.terminal import terminal_width

    write_text(sys.stdout, explain_text(code, terminal_width(sys.stdout), color=use_color()))
    return EXIT_OK
