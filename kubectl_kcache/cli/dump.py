"""`kubectl kcache dump`: everything the commands read, for --from-file and bug reports."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import IO, Any

import click

from ..errors import (
    EXIT_INCOMPLETE,
    EXIT_OK,
    InputError,
)
from ..text import escape
from .app import CONTEXT_SETTINGS, main
from .flags import from_file_option, kube_options, make_client, merged_flags, scope_namespace
from .reading import Progress

# ---- dump ---------------------------------------------------------------------------------------


@main.command(context_settings=CONTEXT_SETTINGS)
@from_file_option
@kube_options(namespaces="all")
@click.option("-o", "--output", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True)
@click.option("--file", "out_file", metavar="PATH", help="Write to PATH instead of stdout.")
@click.option(
    "--anonymize",
    is_flag=True,
    help="Replace node, namespace, InferenceService, pod, registry, image and model names, host names and "
    "IP addresses by tokens, the same name by the same token, so that every command gives the same answers "
    "(review it still). With -f, anonymizes a snapshot you already have.",
)
@click.pass_context
def dump(
    ctx: click.Context,
    output: str,
    out_file: str | None,
    anonymize: bool,
    from_files: tuple[str, ...],
    **kwargs: Any,
) -> int:
    """Write every object the other commands read into one snapshot file (managedFields and Secret data
    removed), for bug reports and `--from-file`. Reads only. Items are written as they arrive; JSON is
    the faster format for large clusters. With -f, the objects of the files (a dump, `kubectl get -o yaml`
    output, a folder) are written as one dump instead: `dump --anonymize -f snapshot.yaml` anonymizes one."""
    if from_files:
        return _from_files(from_files, output, out_file, anonymize)
    flags = merged_flags(ctx, kwargs)
    from ..snapshot.dump import LARGE, meta_document
    from ..snapshot.live import Scope, collect

    client = make_client(flags).bounded()
    scope = Scope(namespace=scope_namespace(flags))
    progress = Progress()
    try:
        with _output(out_file) as out:
            writer = _writer(out, output, anonymize)
            snap = collect(client, scope, progress=progress, sink=writer.item)
            writer.finish(meta_document(snap, scope.describe()))
    finally:
        progress.done()
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


def _writer(out: Any, output: str, anonymize: bool) -> Any:
    from ..snapshot.dump import DumpWriter

    if not anonymize:
        return DumpWriter(out, output)
    from ..anonymize import AnonymizingWriter

    return AnonymizingWriter(DumpWriter(out, output))


def _from_files(paths: tuple[str, ...], output: str, out_file: str | None, anonymize: bool) -> int:
    import tempfile

    import msgspec

    from ..snapshot.dump import meta_document
    from ..snapshot.files.from_files import load_files
    from ..snapshot.files.raw import raw_objects

    with tempfile.TemporaryDirectory(prefix="kcache-dump-") as tmp:
        inputs = _readable_twice(paths, tmp)
        snap = load_files(inputs)  # the input checked, and its reads, as every command reads it
        items, metas = raw_objects(inputs)
    scope = metas[0].get("scope") if len(metas) == 1 and isinstance(metas[0].get("scope"), dict) else None
    meta = meta_document(snap, scope or {"namespace": None})
    with _output(out_file) as out:
        writer = _writer(out, output, anonymize)
        for item in items:
            writer.item(msgspec.json.encode(item))
        writer.finish(meta)
    return EXIT_OK


def _readable_twice(paths: tuple[str, ...], tmp: str) -> list[str]:
    """The paths, with standard input and pipes (`<(kubectl get ...)`) copied into `tmp`: the input is read
    twice, checked by the loader, then as plain data."""
    import stat

    from ..snapshot.files.paths import read_bytes

    out = []
    for n, path in enumerate(paths):
        try:
            regular = (
                path != "-" and not stat.S_ISFIFO(os.stat(path).st_mode) and not stat.S_ISCHR(os.stat(path).st_mode)
            )
        except OSError:
            regular = True  # the loader says what is wrong with it
        if regular:
            out.append(path)
            continue
        copy = os.path.join(tmp, f"input-{n}.yaml")
        with open(copy, "wb") as fh:
            fh.write(read_bytes(path))
        out.append(copy)
    return out


@contextlib.contextmanager
def _output(out_file: str | None) -> Iterator[IO[bytes]]:
    """stdout, or a file put in place only once it is written whole."""
    from ..snapshot.dump import open_output

    try:
        out, tmp = open_output(out_file)
    except OSError as exc:
        raise InputError(f"--file {out_file}: {exc.strerror or exc}") from None
    try:
        yield out
        if tmp:
            out.close()
            os.replace(tmp, str(out_file))
            tmp = None
    except OSError as exc:
        if tmp:
            raise InputError(f"--file {out_file}: {exc.strerror or exc}") from None
        raise
    finally:
        if tmp:
            out.close()
            os.unlink(tmp)
