"""What every read command shares: the snapshot from --from-file or listed live (with progress on a
terminal), where an answer came from, and writing an answer (JSON or YAML) to standard output.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterable
from typing import Any

from ..text import escape
from .flags import make_client, scope_namespace

KEPT: list[Any] = []  # what keep() holds; running.run empties it unless the process ends right after


def keep(snap: Any) -> Any:
    """`snap`, held until the command line is done. A one-shot command's snapshot is garbage only when the
    process ends; freed when the command returns, its objects go one by one (~30 ms at 10,000
    KernelCacheNodes), while the console entry ends the process without freeing anything (`__main__.main`)."""
    KEPT.append(snap)
    return snap


class Progress:
    """Progress on stderr, only on a terminal and only once a scan has taken more than a second."""

    def __init__(self) -> None:
        import time

        self.start = time.monotonic()
        self.enabled = sys.stderr.isatty()
        self.shown = False

    def __call__(self, message: str) -> None:
        import time

        if self.enabled and time.monotonic() - self.start > 1.0:
            sys.stderr.write(f"\r\x1b[K{message}...")
            sys.stderr.flush()
            self.shown = True

    def done(self) -> None:
        if self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def load_snapshot_files(from_files: Iterable[str], select: Any = None) -> Any:
    """A snapshot from --from-file (with `select`, a files.Selection: only what one command reads); what the
    loader skipped or doubts goes to stderr."""
    from ..snapshot.files import scope
    from ..snapshot.files.from_files import load_files

    # The cyclic GC is off while the files are read (the objects decoded hold no cycles, and each collection
    # would walk all of them again: a fifth of the load at 130,000 nodes); then the snapshot, which is garbage
    # only when the command ends, is put out of its sight (running.run gives it back), so that what the command
    # makes next does not have a million objects walked again (1 s of the doctor's report at 130,000 nodes)
    enabled = gc.isenabled()
    gc.disable()
    try:
        snap = load_files(from_files, select)
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
    for warning in snap.warnings:
        sys.stderr.write(f"warning: {escape(str(warning))}\n")
    scope.check_recorded(snap)
    command, everywhere, asked = _command_scope()
    scope.check_namespace_scope(snap, command, everywhere, asked)
    return keep(snap)


def _command_scope() -> tuple[str, bool, str | None]:
    """The running command's name, whether it was given -A, and the namespace it was given with -n (on it or
    before it), however it reads its flags."""
    import click

    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return "kubectl kcache", False, None
    given = (ctx.find_root().obj or {}).get("kube", {}) if isinstance(ctx.find_root().obj, dict) else {}
    everywhere = bool(ctx.params.get("all_namespaces") or given.get("all_namespaces"))
    return str(ctx.info_name or ""), everywhere, ctx.params.get("namespace") or given.get("namespace")


def read_snapshot(
    flags: dict[str, Any],
    from_files: Iterable[str],
    scope: Any = None,
    lists: list[Any] | None = None,
    client: Any = None,
    on_list: Any = None,
) -> tuple[Any, Any]:
    """The snapshot (from files, or listed live in `scope`) and where it came from (a Provenance);
    -n scopes both the same way."""
    from ..snapshot.model import provenance

    namespace = scope_namespace(flags)
    from_files = list(from_files)
    if from_files:
        loaded = load_snapshot_files(from_files)
        if loaded.meta.namespace and namespace is None and not flags.get("all_namespaces"):
            # a dump taken with -n answers within its namespace, and says so (the header, `source`)
            namespace = loaded.meta.namespace
            sys.stderr.write(
                f"note: the input was dumped with -n {escape(namespace)}: answering for namespace "
                f"{escape(namespace)} only\n"
            )
        if scope is None and namespace is None:
            snap = loaded  # (Scope.apply scopes a namespace only: the live reader and the API client not imported)
        else:
            import msgspec

            from ..snapshot.live import Scope

            scope = msgspec.structs.replace(scope, namespace=namespace) if scope else Scope(namespace=namespace)
            snap = scope.apply(loaded)
    else:
        from ..snapshot.live import Scope, collect

        scope = scope or Scope(namespace=namespace)
        client = client or make_client(flags).bounded()
        progress = Progress()
        try:
            snap = keep(collect(client, scope, progress=progress, lists=lists, on_list=on_list))
        finally:
            progress.done()
    if namespace is not None and not _namespace_seen(snap, namespace):
        sys.stderr.write(f"warning: No resources found in {escape(namespace)} namespace.\n")  # kubectl's words
    return snap, provenance(snap.meta, namespace)


def _namespace_seen(snap: Any, namespace: str) -> bool:
    """Whether `namespace` exists as far as the snapshot can tell: among its Namespaces when they were read,
    else as the namespace of some object read (a mistyped -n finds neither)."""
    from ..snapshot.plan import NAMESPACES
    from ..snapshot.reads import NOT_IN_INPUT, NOT_READ, covering

    read = covering(snap, NAMESPACES)
    if read.ok and snap.namespaces:
        return snap.namespace_exists(namespace)
    if not read.ok and read.status not in (NOT_IN_INPUT, NOT_READ):
        return True  # forbidden or failed: no claim either way
    from ..snapshot import kinds

    return any(
        (getattr(obj.metadata, "namespace", None) or "") == namespace for f in kinds.FIELDS for obj in getattr(snap, f)
    )


def serving_pods(snap: Any, namespace: str | None) -> Any:
    """The serving pods' hit rate (status's section, the doctor page's), or why it cannot be shown (the command
    still answers)."""
    from ..errors import IncompleteError, InputError
    from ..explain.fleet import hit_rate

    try:
        return hit_rate(snap, namespace)
    except (IncompleteError, InputError) as exc:
        return str(exc)


def source_of(meta: Any, namespace: str | None) -> Any:
    """The `source` of a machine-readable answer (a Provenance), from its snapshot's meta."""
    from ..snapshot.model import provenance

    return provenance(meta, namespace)


def write_out(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def dump_doc(doc: Any, fmt: str) -> str:
    """`doc` as `-o json` or `-o yaml` print it (stdout's encoding decides whether non-ASCII is escaped)."""
    import json

    from ..documents import takes_unicode, yaml_text

    if fmt == "json":
        return json.dumps(doc, indent=2, sort_keys=False)
    return yaml_text(doc, unicode=takes_unicode(sys.stdout))
