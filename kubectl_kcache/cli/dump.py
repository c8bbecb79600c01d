"""`kubectl kcache dump`: everything the commands read, for --from-file and bug reports."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from ..errors import (
    EXIT_INCOMPLETE,
    EXIT_OK,
    InputError,
)
from ..text import escape
from .app import CONTEXT_SETTINGS, main
from .flags import kube_options, make_client, merged_flags, scope_namespace
from .reading import Progress

# ---- dump ---------------------------------------------------------------------------------------


@main.command(context_settings=CONTEXT_SETTINGS)
@kube_options(namespaces="all")
@click.option("-o", "--output", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True)
@click.option("--file", "out_file", metavar="PATH", help="Write to PATH instead of stdout.")
@click.option(
    "--anonymize",
    is_flag=True,
    help="Replace node, namespace, InferenceService, pod, registry and image names by tokens, the same "
    "name by the same token, so that every command gives the same answers (review it still).",
)
@click.pass_context
def dump(ctx: click.Context, output: str, out_file: str | None, anonymize: bool, **kwargs: Any) -> int:
    """Write every object the other commands read into one snapshot file (managedFields and Secret data
    removed), for bug reports and `--from-file`. Reads only. Items are written as they arrive; JSON is
    the faster format for large clusters."""
    flags = merged_flags(ctx, kwargs)
    from ..snapshot.dump import LARGE, DumpWriter, meta_document, open_output
    from ..snapshot.live import Scope, collect

    client = make_client(flags).bounded()
    scope = Scope(namespace=scope_namespace(flags))
    try:
        out, tmp = open_output(out_file) if out_file else (sys.stdout.buffer, None)
    except OSError as exc:
        raise InputError(f"--file {out_file}: {exc.strerror or exc}") from None
    progress = Progress()
    try:
        writer: Any = DumpWriter(out, output)
        if anonymize:
            from ..anonymize import AnonymizingWriter

            writer = AnonymizingWriter(writer)
        snap = collect(client, scope, progress=progress, sink=writer.item)
        writer.finish(meta_document(snap, scope.describe()))
        if tmp:
            out.close()
            os.replace(tmp, str(out_file))
            tmp = None
    except OSError as exc:
        if tmp:
            raise InputError(f"--file {out_file}: {exc.strerror or exc}") from None
        raise
    finally:
        progress.done()
        if tmp:
            out.close()
            os.unlink(tmp)
    if output == "yaml" and writer.count > LARGE:
        sys.stderr.write(
            f"note: {writer.count} objects: for a cluster this size `-o json` writes the dump and "
            "loads it with --from-file about ten times faster\n"
        )
    unread = list(
        dict.fromkeys(
            f"list {r.resource}" + (f" in {r.namespace}" if r.namespace else "") for r in snap.reads if r.incomplete
        )
    )
    if unread:
        sys.stderr.write(
            f"warning: some reads were forbidden and are missing from the dump: {escape(', '.join(unread))}\n"
        )
        return EXIT_INCOMPLETE
    return EXIT_OK
