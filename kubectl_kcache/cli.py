"""The command line: kubectl's flag set, the commands, output selection and exit codes.

Errors are turned into one line and an exit code here and nowhere else. Heavy modules (kubernetes,
rich, yaml) are imported inside the commands so that `--help` stays fast.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any

import click

from . import __version__
from .errors import (
    EXIT_FINDINGS,
    EXIT_INCOMPLETE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    IncompleteError,
    InputError,
    KcacheError,
)
from .text import command, escape

PROG = "kubectl kcache"
ISSUES_URL = "https://github.com/kserve/kubectl-kcache/issues"
CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 110}

KUBE_FLAGS = (
    "kubeconfig",
    "context",
    "cluster",
    "user",
    "namespace",
    "all_namespaces",
    "as_user",
    "as_group",
    "request_timeout",
    "insecure_skip_tls_verify",
    "certificate_authority",
    "token",
    "server",
    "v",
    "as_uid",
    "tls_server_name",
    "client_certificate",
    "client_key",
    "username",
    "password",
    "disable_compression",
    "cache_dir",
)


# ---- help and errors, as kubectl prints them ------------------------------------------------------

ALIASES = {"why-cached": "why-not-cached"}
COLOR_MODES = ("auto", "always", "never")
_color_mode = {"mode": "auto"}
OPTIONS_HINT = f'Use "{PROG} options" for a list of kubectl\'s connection flags (applies to all commands).'

EXAMPLES = {
    "doctor": """
# The whole checklist against the current kubeconfig context
kubectl kcache doctor

# Offline, on a dump; only the node-group checks; fail CI on warnings too
kubectl kcache doctor -f snapshot.yaml --only group-selector,group-overlap,group-taints --fail-on warning

# Every finding in full, or as JSON, SARIF or an HTML page
kubectl kcache doctor -o wide
kubectl kcache doctor -o html > report.html""",
    "status": """
# Node groups and KernelCaches at a glance, problems first
kubectl kcache status

# Only unhealthy rows of one group; kept current until Ctrl-C
kubectl kcache status --group h100 --problems -w

# KernelCaches with a label, in one namespace, as JSON with totals
kubectl kcache status -n team-llm -l app=llm -o json""",
    "why-group": """
# Which node group a producer pod's captured cache goes to
kubectl kcache why-group llama-predictor-7d9c6b5f48-nhngp -n team-llm

# From a capture, and what if the producer had run on another node
kubectl kcache why-group --capture llama-kcc-7d9c6b5f48 -n team-llm --node gpu-17

# Every step and the session too
kubectl kcache why-group llama-predictor-7d9c6b5f48-nhngp -n team-llm -o wide""",
    "why-not-cached": """
# My serving pod started cold: why?
kubectl kcache why-not-cached mistral-predictor-5c8d7b6f49-8zhfd -n team-llm

# Would a pod not created yet get a cache?
kubectl kcache why-not-cached --manifest isvc.yaml -n team-llm

# Every gate, the footprints and every candidate
kubectl kcache why-not-cached mistral-predictor-5c8d7b6f49-8zhfd -n team-llm -o wide""",
    "reconcile": """
# What KServe's controller should be doing, on a dump (exit 1 when writes are planned)
kubectl kcache reconcile --dry-run -f snapshot.yaml

# One pass against the cluster
kubectl kcache reconcile --once

# Run as a controller with leader election
kubectl kcache reconcile --leader-elect --health-port 8080""",
    "dump": """
# Everything the commands read, for --from-file and bug reports
kubectl kcache dump > snapshot.yaml

# Faster for large clusters
kubectl kcache dump -o json --file snapshot.json""",
    "": """
# The whole checklist, with evidence and the next command
kubectl kcache doctor

# My serving pod started cold: why?
kubectl kcache why-not-cached POD -n NAMESPACE

# Everything the commands read, for offline use
kubectl kcache dump > snapshot.yaml""",
    "version": """
kubectl kcache version
kubectl kcache version -o json""",
}


# The root help's one line per command (cobra's Short): whole on an 80-column terminal.
SUMMARIES = {
    "doctor": "The Kernel Cache checklist: findings and the next command",
    "status": "Node groups, their nodes, agents and caches at a glance",
    "why-group": "Which node group a producer pod's cache goes to, and why",
    "why-not-cached": "Why a serving pod got a cache, or not",
    "reconcile": "What KServe's controller should be doing (or do it)",
    "dump": "Write everything the commands read into one snapshot file",
    "explain": "What a finding's code means, what KServe does and the fix",
    "version": "Print the plugin's version",
    "options": "Print kubectl's connection flags, which every command takes",
    "help": "Help about any command",
}


class KcacheUsageError(click.UsageError):
    """A usage error with kubectl's suggestions (`Did you mean this?`)."""

    def __init__(self, message: str, ctx: click.Context | None = None, suggestions: tuple[str, ...] = ()):
        super().__init__(message, ctx)
        self.suggestions = suggestions


def _set_color(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    if param.name == "no_color" and value:
        _color_mode["mode"] = "never"
    elif param.name == "color" and value is not None:
        _color_mode["mode"] = value
    return value


def _color_params() -> list[click.Parameter]:
    return [
        click.Option(["--color"], type=click.Choice(COLOR_MODES), default=None, expose_value=False,
                     callback=_set_color, is_eager=True,
                     help="Colour: auto (on a terminal, unless NO_COLOR is set), always (for less -R, k9s), never."),
        click.Option(["--no-color"], is_flag=True, default=False, expose_value=False, callback=_set_color,
                     is_eager=True, help="The same as --color=never."),
    ]


def _is_connection_flag(param: click.Parameter) -> bool:
    return isinstance(param, click.Option) and param.name in KUBE_FLAGS


class KcacheFormatter(click.HelpFormatter):
    """click's help formatter at the terminal's full width (80 when unknown), wrapping at spaces only: a
    flag, a path or a command name is never broken at a hyphen."""

    def __init__(self, indent_increment: int = 2, width: int | None = None, max_width: int | None = None) -> None:
        import shutil

        super().__init__(indent_increment, width or min(shutil.get_terminal_size((80, 24)).columns, 110), max_width)

    def write_text(self, text: str) -> None:
        for para in _paragraphs(text):
            if para.startswith("\b\n"):
                self.write("".join(f"{' ' * self.current_indent}{line}\n" for line in para[2:].splitlines()))
            else:
                self.write("\n".join(_wrap(" ".join(para.split()), self.width, " " * self.current_indent)) + "\n")
            self.write("\n")
        if text:
            self.buffer.pop()

    def write_dl(self, rows: Any, col_max: int = 30, col_spacing: int = 2) -> None:
        rows = list(rows)
        first = min(max((len(r[0]) for r in rows), default=0), col_max)
        for term, definition in rows:
            lead = " " * self.current_indent + term
            if len(term) > first:
                self.write(lead + "\n")
                lead = ""
            pad = " " * (self.current_indent + first + col_spacing)
            lines = _wrap(" ".join(definition.split()), self.width, pad)
            if lead:
                lines[0] = lead.ljust(len(pad)) + lines[0][len(pad):]
            self.write("\n".join(lines) + "\n")


def _paragraphs(text: str) -> list[str]:
    import inspect

    return [p for p in inspect.cleandoc(text).split("\n\n") if p.strip()]


def _wrap(text: str, width: int, indent: str) -> list[str]:
    """Words of `text` in lines of at most `width` characters, each line after `indent` (never cut)."""
    lines, line = [], indent
    for word in text.split(" "):
        if line.strip() and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = indent + word
        else:
            line = line + (" " if line.strip() else "") + word
    lines.append(line)
    return lines


class KcacheContext(click.Context):
    formatter_class = KcacheFormatter


class KcacheCommand(click.Command):
    """A command whose help reads as kubectl's: description, examples, its own flags, usage; kubectl's
    connection flags are listed by `kubectl kcache options`."""

    context_class = KcacheContext

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.params.extend(_color_params())

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        _description(self.help, formatter)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self.format_help_text(ctx, formatter)
        aliases = sorted(a for a, name in ALIASES.items() if name == self.name)
        if aliases:
            formatter.write_paragraph()
            formatter.write_text(f"Aliases: {', '.join([self.name or '', *aliases])}")
        _examples(formatter, EXAMPLES.get(self.name or "", ""))
        rows = [r for p in self.get_params(ctx) if isinstance(p, click.Option) and not _is_connection_flag(p)
                and (r := p.get_help_record(ctx))]
        if rows:
            with formatter.section("Options"):
                formatter.write_dl(rows)
        formatter.write_paragraph()
        formatter.write_text("Usage:")
        with formatter.indentation():
            formatter.write_text(f"{ctx.command_path} {' '.join(self.collect_usage_pieces(ctx))}")
        if any(_is_connection_flag(p) for p in self.params):
            formatter.write_paragraph()
            formatter.write_text(OPTIONS_HINT)

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage(ctx.command_path, " ".join(self.collect_usage_pieces(ctx)), prefix="Usage:\n  ")

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:  # the parser's errors come without the command: name its help
            if exc.ctx is None:
                exc.ctx = ctx
            raise

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:  # raised by the command's body: say which command's help to read
            if exc.ctx is None:
                exc.ctx = ctx
            raise
        except click.BadParameter as exc:
            if exc.ctx is None:
                exc.ctx = ctx
            raise


def _description(text: str | None, formatter: click.HelpFormatter) -> None:
    """The docstring as kubectl prints a command's description: not indented, wrapped at the width."""
    import inspect

    if text:
        formatter.write_text(inspect.cleandoc(text))


def _examples(formatter: click.HelpFormatter, text: str) -> None:
    if not text.strip():
        return
    formatter.write_paragraph()
    formatter.write_text("Examples:")
    with formatter.indentation():
        for line in text.strip("\n").splitlines():
            formatter.write(f"{' ' * formatter.current_indent}{line}\n" if line else "\n")


class KcacheGroup(click.Group):
    """The root: commands with their full one-line summary (aliases as aliases), unknown commands with
    suggestions, bare `kubectl kcache` prints help."""

    command_class = KcacheCommand
    context_class = KcacheContext

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        _description(self.help, formatter)
        _examples(formatter, EXAMPLES[""])
        with formatter.section("Commands"):
            rows = []
            for name in self.list_commands(ctx):
                cmd = self.commands[name]
                if name in ALIASES or cmd.hidden:
                    continue
                summary = SUMMARIES.get(name) or cmd.get_short_help_str(limit=1000)
                aliases = sorted(a for a, n in ALIASES.items() if n == name)
                if aliases:
                    summary += f" (alias: {', '.join(aliases)})"
                rows.append((name, summary))
            formatter.write_dl(rows)
        formatter.write_paragraph()
        formatter.write_text("Usage:")
        with formatter.indentation():
            formatter.write_text(f"{ctx.command_path} [command] [flags]")
        formatter.write_paragraph()
        formatter.write_text(f'Use "{ctx.command_path} <command> --help" for more information about a command.')
        formatter.write_text(OPTIONS_HINT)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        name = args[0]
        if self.get_command(ctx, name) is None and not ctx.resilient_parsing:
            raise KcacheUsageError(f'unknown command "{name}" for "{ctx.command_path}"', ctx, _suggest(name, self))
        return super().resolve_command(ctx, args)


def _suggest(name: str, group: click.Group) -> tuple[str, ...]:
    """Commands close to a mistyped one, as cobra suggests them: by prefix, then by edit distance."""
    import difflib

    names = [n for n, cmd in group.commands.items() if not cmd.hidden]
    close = [n for n in names if n.startswith(name) or name.startswith(n)] if len(name) > 1 else []
    close += difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    return tuple(dict.fromkeys(close))


def _show_usage_error(exc: click.UsageError) -> None:
    """`error: ...`, then suggestions, then `See '... --help' for usage.` (exit 2), as kubectl."""
    message = exc.format_message()
    if isinstance(exc, click.NoSuchOption):
        name = exc.option_name
        message = (f"unknown shorthand flag: {name[1:2]!r} in {name}" if not name.startswith("--")
                   else f"unknown flag: {name}")
    elif isinstance(exc, click.BadOptionUsage) and message.endswith("requires an argument."):
        message = f"flag needs an argument: {exc.option_name}"  # as cobra says it
    elif message.startswith("No such option: "):
        message = f"unknown flag: {message.removeprefix('No such option: ')}"
    elif message[:1].isupper() and not message[1:2].isupper():
        message = message[0].lower() + message[1:]
    lines = [f"error: {escape(message)}"]
    suggestions = getattr(exc, "suggestions", ())
    if suggestions:
        lines += ["", "Did you mean this?", *(f"\t{escape(s)}" for s in suggestions), ""]
    path = exc.ctx.command_path if exc.ctx is not None else PROG
    if path.endswith(" help"):
        path = path.removesuffix(" help")
    lines += [f"See '{path} --help' for usage."]
    sys.stderr.write("\n".join(lines) + "\n")


NAMESPACE_HELP = {
    "context": "Namespace (default: the kubeconfig context's).",
    "all": "Limit namespaced reads (KernelCaches, captures, pods, events) to this namespace; without it every "
           "namespace is read, live and from files alike.",
    "cluster": "Namespace of the kubeconfig context (the controller's reads are cluster-wide).",
}


def _kube_options(func: Callable[..., Any] | None = None, *, namespaces: str = "context") -> Any:
    """kubectl's connection flags (the set kubectl passes on to plugins by convention). `namespaces` says what
    `-n` means for the command: `context` (the context's namespace by default), `all` (all by default)."""
    if func is None:
        return lambda f: _kube_options(f, namespaces=namespaces)
    opts = [
        click.option(
            "--kubeconfig", metavar="PATH", help="Path to the kubeconfig file (default: $KUBECONFIG, ~/.kube/config)."
        ),
        click.option("--context", metavar="NAME", help="The kubeconfig context to use."),
        click.option("--cluster", metavar="NAME", help="The kubeconfig cluster to use."),
        click.option("--user", metavar="NAME", help="The kubeconfig user to use."),
        click.option("-n", "--namespace", metavar="NS", help=NAMESPACE_HELP[namespaces]),
        click.option("-A", "--all-namespaces", is_flag=True, default=None, help="All namespaces."),
        click.option("--as", "as_user", metavar="USER", help="Username to impersonate."),
        click.option(
            "--as-group", "as_group", metavar="GROUP", multiple=True, help="Group to impersonate (repeatable)."
        ),
        click.option(
            "--request-timeout",
            metavar="DURATION",
            help="Timeout of each request, e.g. 10s, 1m; 0 means none (default 30s).",
        ),
        click.option(
            "--insecure-skip-tls-verify",
            is_flag=True,
            default=None,
            help="Do not verify the server's certificate (insecure).",
        ),
        click.option("--certificate-authority", metavar="PATH", help="Path to a CA bundle for the server."),
        click.option("--token", metavar="TOKEN", help="Bearer token for the API server."),
        click.option("--server", "-s", "server", metavar="URL", help="The API server address."),
        click.option("--as-uid", "as_uid", metavar="UID", help="UID to impersonate (with --as)."),
        click.option("--tls-server-name", metavar="NAME",
                     help="Server name to verify the server's certificate against (default: the --server host)."),
        click.option("--client-certificate", metavar="PATH", help="Path to a client certificate for TLS."),
        click.option("--client-key", metavar="PATH", help="Path to the client certificate's key."),
        click.option("--username", metavar="NAME", help="Username for basic authentication (with --password)."),
        click.option("--password", metavar="PASSWORD", help="Password for basic authentication (with --username)."),
        click.option("--disable-compression", is_flag=True, default=None,
                     help="Taken as kubectl takes it; the plugin never asks for compressed answers anyway."),
        click.option("--cache-dir", metavar="PATH",
                     help="Taken as kubectl takes it; the plugin keeps no discovery cache, so nothing is written."),
        click.option(
            "-v", "--v", "v", metavar="LEVEL", default=None, callback=_log_level,
            help="Log level for API requests on stderr: 6 each request, its status and time; 8 adds headers; "
                 "9 the size of each answer. Credentials are never logged.",
        ),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


def _log_level(ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    """kubectl's -v: `-v 6`, `-v6`, `--v=6` and the `-v=6` kubectl users type."""
    if value is None:
        return None
    text = value.removeprefix("=")
    if not text.isdigit() or int(text) > 10:
        raise click.BadParameter(f"{value!r} is not a log level from 0 to 10", ctx=ctx, param=param)
    return int(text)


def parse_duration(text: str | None) -> float | None:
    """kubectl's --request-timeout: a plain number of seconds or a Go duration (1h2m3s, 500ms), parsed by
    durationpy; the units Go's time.ParseDuration lacks (d, w) and negative values are refused as kubectl
    refuses them."""
    if text is None:
        return None
    text = text.strip()
    bad = click.BadParameter(f"invalid duration {text!r} (examples: 30s, 1m, 0)", param_hint="--request-timeout")
    try:
        value = float(text)
    except ValueError:
        import re

        import durationpy

        if not text or re.search(r"[^0-9.hmsuµn+-]", text):
            raise bad from None
        try:
            value = durationpy.from_str(text).total_seconds()
        except (durationpy.DurationError, ValueError, OverflowError):
            raise bad from None
    if not math.isfinite(value) or value < 0:
        raise bad
    return value


def _merged_flags(ctx: click.Context, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Flags given before the subcommand (on the group) apply unless the command repeats them."""
    merged = dict((ctx.find_root().obj or {}).get("kube", {}))
    for key in KUBE_FLAGS:
        value = kwargs.pop(key, None)
        if value not in (None, (), False):
            merged[key] = value
    _check_kube_flags(merged)
    return merged


def _check_kube_flags(flags: dict[str, Any]) -> None:
    """kubectl's flags are checked whether or not the command goes on to read the cluster: a mistyped one is
    a usage error offline too, not silently ignored."""
    parse_duration(flags.get("request_timeout"))
    if flags.get("as_group") and not flags.get("as_user"):
        raise click.BadParameter("requires --as (kubectl's rule)", param_hint="--as-group")
    namespace = flags.get("namespace")
    if namespace:
        from .apivalidation import dns_label_errors, go_quote

        errors = dns_label_errors(namespace)
        if errors:
            raise click.BadParameter(f"invalid namespace {go_quote(namespace)}: {errors[0]}", param_hint="-n")


class _Seconds(click.ParamType):
    """A positive, finite number of seconds (`nan`, `inf`, 0 and negative numbers are refused)."""

    name = "seconds"

    def convert(self, value: Any, param: Any, ctx: Any) -> float:
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(seconds) or seconds <= 0:
            self.fail(f"{value} is not a positive number of seconds", param, ctx)
        return seconds


def _overrides(flags: dict[str, Any]) -> Any:
    from .kube.kubeconfig import Overrides

    return Overrides(
        kubeconfig=flags.get("kubeconfig"),
        context=flags.get("context"),
        cluster=flags.get("cluster"),
        user=flags.get("user"),
        namespace=flags.get("namespace"),
        server=flags.get("server"),
        certificate_authority=flags.get("certificate_authority"),
        insecure_skip_tls_verify=bool(flags.get("insecure_skip_tls_verify")),
        token=flags.get("token"),
        impersonate=flags.get("as_user"),
        impersonate_groups=tuple(flags.get("as_group") or ()),
        impersonate_uid=flags.get("as_uid"),
        request_timeout=parse_duration(flags.get("request_timeout")),
        tls_server_name=flags.get("tls_server_name"),
        client_certificate=flags.get("client_certificate"),
        client_key=flags.get("client_key"),
        username=flags.get("username"),
        password=flags.get("password"),
    )


def _client(flags: dict[str, Any]) -> Any:
    from .kube.client import Client

    return Client(_overrides(flags), verbosity=int(flags.get("v") or 0))


def _color(out: Any = None) -> bool:
    """Colour on `out`: --color=always|never decides; auto (the default) means on a terminal, unless
    NO_COLOR is set."""
    out = out or sys.stdout
    mode = _color_mode["mode"]
    if mode != "auto":
        return mode == "always"
    if os.environ.get("NO_COLOR"):
        return False
    return bool(getattr(out, "isatty", lambda: False)())


class _Progress:
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


def _scope_namespace(flags: dict[str, Any]) -> str | None:
    """The namespace of namespaced kinds: -n NS, or None (all namespaces) by default and with -A."""
    return None if flags.get("all_namespaces") else flags.get("namespace")


def _load_files(from_files: Iterable[str], select: Any = None) -> Any:
    """A snapshot from --from-file (with `select`, a files.Selection: only what one command reads); what the
    loader skipped or doubts goes to stderr."""
    from .snapshot import load_files

    snap = load_files(from_files, select)
    for warning in snap.warnings:
        sys.stderr.write(f"warning: {escape(str(warning))}\n")
    return snap


def _read(flags: dict[str, Any], from_files: Iterable[str], scope: Any = None, lists: list[Any] | None = None,
          client: Any = None, on_list: Any = None) -> tuple[Any, Any]:
    """The snapshot (from files, or listed live in `scope`) and where it came from (a Provenance);
    -n scopes both the same way."""
    from .collect import Scope, collect
    from .snapshot import provenance

    namespace = _scope_namespace(flags)
    from_files = list(from_files)
    if from_files:
        loaded = _load_files(from_files)
        if loaded.meta.namespace and namespace is None and not flags.get("all_namespaces"):
            # a dump taken with -n answers within its namespace, and says so (the header, `source`)
            namespace = loaded.meta.namespace
            sys.stderr.write(f"note: the input was dumped with -n {escape(namespace)}: answering for namespace "
                             f"{escape(namespace)} only\n")
        scope = dataclasses.replace(scope, namespace=namespace) if scope else Scope(namespace=namespace)
        snap = scope.apply(loaded)
    else:
        scope = scope or Scope(namespace=namespace)
        client = client or _client(flags).bounded()
        progress = _Progress()
        try:
            snap = collect(client, scope, progress=progress, lists=lists, on_list=on_list)
        finally:
            progress.done()
    if namespace is not None and not _namespace_seen(snap, namespace):
        sys.stderr.write(f"warning: No resources found in {escape(namespace)} namespace.\n")  # kubectl's words
    return snap, provenance(snap.meta, namespace)


def _namespace_seen(snap: Any, namespace: str) -> bool:
    """Whether `namespace` exists as far as the snapshot can tell: among its Namespaces when they were read,
    else as the namespace of some object read (a mistyped -n finds neither)."""
    from .readplan import NAMESPACES
    from .snapshot import NOT_IN_INPUT, NOT_READ, covering

    read = covering(snap, NAMESPACES)
    if read.ok and snap.namespaces:
        return snap.namespace_exists(namespace)
    if not read.ok and read.status not in (NOT_IN_INPUT, NOT_READ):
        return True  # forbidden or failed: no claim either way
    from . import kinds

    return any((getattr(obj.metadata, "namespace", None) or "") == namespace
               for f in kinds.FIELDS for obj in getattr(snap, f))


def with_source(doc: dict[str, Any], source: Any) -> dict[str, Any]:
    from .provenance import with_source as add

    return add(doc, source)


def plain_width() -> int:
    from .report.doctor_common import plain_width as width

    return width()


def _source(meta: Any, namespace: str | None) -> Any:
    """The `source` of a machine-readable answer (a Provenance), from its snapshot's meta."""
    from .snapshot import provenance

    return provenance(meta, namespace)


def _from_file_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "-f",
        "--from-file",
        "from_files",
        multiple=True,
        metavar="PATH",
        help="Read a snapshot (dump file, `kubectl get -o yaml` output or a folder) "
        "instead of the live cluster. Repeatable; `-` reads stdin.",
    )(func)


def _write(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def _dump_doc(doc: Any, fmt: str) -> str:
    import json

    if fmt == "json":
        return json.dumps(doc, indent=2, sort_keys=False)
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml: ~10x faster on large dumps
    text = yaml.dump(doc, Dumper=dumper, sort_keys=False, default_flow_style=False, allow_unicode=True)
    if escape(text, keep_newlines=True) != text:  # a bidi or invisible character from the cluster: YAML's
        text = yaml.dump(doc, Dumper=dumper, sort_keys=False, default_flow_style=False, allow_unicode=False)
    return text  # own escapes (\u202e) keep it readable as YAML and harmless on a terminal


# ---- the group ----------------------------------------------------------------------------------


@click.group(cls=KcacheGroup, context_settings=CONTEXT_SETTINGS, invoke_without_command=True)
@click.version_option(__version__, "--version", prog_name="kubectl-kcache", message="%(prog)s %(version)s",
                      help="Print the version and exit.")
@_kube_options
@click.pass_context
def main(ctx: click.Context, **kwargs: Any) -> None:
    """Diagnose and operate KServe's Kernel Cache node groups. Every read command also works offline, on a
    dump or `kubectl get -o yaml` output: `--from-file snapshot.yaml`."""
    ctx.ensure_object(dict)
    ctx.obj["kube"] = {k: v for k, v in kwargs.items() if v not in (None, (), False)}
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help(), color=False)
        ctx.exit(EXIT_OK)


for _param in _color_params():
    main.params.append(_param)


@main.command("help", context_settings=CONTEXT_SETTINGS)
@click.argument("command", required=False)
@click.pass_context
def help_(ctx: click.Context, command: str | None) -> None:
    """Help about any command: `kubectl kcache help COMMAND` is `kubectl kcache COMMAND --help`."""
    root = ctx.find_root()
    if not command:
        click.echo(root.get_help(), color=False)
        return
    cmd = main.get_command(root, command)
    if cmd is None:
        raise KcacheUsageError(f'unknown command "{command}" for "{root.command_path}"', ctx, _suggest(command, main))
    with KcacheContext(cmd, info_name=command, parent=root) as sub:
        click.echo(cmd.get_help(sub), color=False)


@main.command(context_settings=CONTEXT_SETTINGS)
@click.pass_context
def options(ctx: click.Context) -> None:
    """Print kubectl's connection flags, which every command takes (as `kubectl options`)."""
    cmd = main.commands["status"]
    with KcacheContext(cmd, info_name="status", parent=ctx.find_root()) as sub:
        rows = [r for p in cmd.get_params(sub) if _is_connection_flag(p) and (r := p.get_help_record(sub))]
    formatter = ctx.make_formatter()
    formatter.write_text("The following options can be passed to any command:")
    formatter.write_paragraph()
    with formatter.indentation():
        formatter.write_dl(rows)
    click.echo(formatter.getvalue().rstrip("\n"), color=False)


@main.command(context_settings=CONTEXT_SETTINGS)
@click.option("-o", "--output", type=click.Choice(["text", "json", "yaml"]), default="text", show_default=True)
@click.option("--client", is_flag=True, help="Accepted as kubectl takes it: the plugin has no server version.")
def version(output: str, client: bool) -> None:
    """Print the plugin's version, the commit it was built from and when (as json or yaml, also the Python
    and platform it runs on)."""
    from .buildinfo import build_info

    info = build_info()
    if output == "text":
        _write(f"kubectl-kcache {info.version}\ncommit: {info.commit} ({info.tree_state})\nbuilt: {info.date}")
        return
    import platform

    doc = {"clientVersion": {**info.to_dict(), "python": platform.python_version(),
                             "platform": f"{platform.system().lower()}/{platform.machine().lower()}"}}
    _write(_dump_doc(doc, output))


@main.command("completion", context_settings=CONTEXT_SETTINGS)
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish", "powershell"]))
def completion_command(shell: str) -> None:
    """Print the shell completion script for SHELL: `source <(kubectl kcache completion bash)` (or zsh;
    `| source` in fish). It completes `kubectl-kcache` and `kubectl kcache`, also on kubectl older than 1.26."""
    from .completion import script

    sys.stdout.write(script(shell))


# ---- doctor -------------------------------------------------------------------------------------

DOCTOR_FORMATS = ("table", "wide", "json", "yaml", "junit", "sarif", "markdown", "html", "name")


@main.command(context_settings=CONTEXT_SETTINGS)
@_kube_options(namespaces="all")
@_from_file_option
@click.option(
    "-o", "--output", type=click.Choice(DOCTOR_FORMATS), default="table", show_default=True, help="Output format."
)
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
@click.option("--only", metavar="IDS", multiple=True,
              help="Run only these checks, or check/code kinds of finding (comma separated or repeated).")
@click.option("--skip", metavar="IDS", multiple=True,
              help="Skip these checks, or check/code kinds of finding (comma separated or repeated).")
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
    flags = _merged_flags(ctx, kwargs)
    from .checks import load_suppressions, run_doctor

    use = suppress_file is not None and not no_suppressions
    suppressions = load_suppressions(suppress_file) if use else None
    ids = lambda values: tuple(x.strip() for v in values for x in v.split(",") if x.strip())  # noqa: E731
    for name, values in (("--only", only), ("--skip", skip)):
        if values and not ids(values):
            raise click.BadParameter("no check id given (see `kubectl kcache doctor --help` for the ids)",
                                     param_hint=name)
    from .checks.early import EarlyChecks
    from .checks.runner import selected_checks, validate_ids

    # live: each check starts as soon as its lists have arrived (doctor at the wire)
    early = None if from_files else EarlyChecks(selected_checks(validate_ids(ids(only)), validate_ids(ids(skip),
                                                                                                      "--skip")))
    snap, provenance = _read(flags, from_files, on_list=early)
    report = run_doctor(
        snap, only=ids(only), skip=ids(skip), suppressions=suppressions, use_suppressions=not no_suppressions,
        early=early.results if early is not None else None,
    )
    for warning in report.warnings:
        sys.stderr.write(f"warning: {escape(warning)}\n")
    if snap.meta.clock and report.judged_time:
        sys.stderr.write(f"note: the input does not say when it was read (no takenAt): checks that judge time "
                         f"take its newest time, {snap.meta.clock}, as now\n")
    elif provenance.clock:
        provenance = dataclasses.replace(provenance, clock="")
    from .report import render_doctor, wants

    report = dataclasses.replace(report, provenance=provenance.to_dict())
    context: dict[str, Any] = {"provenance": provenance, "show": show}
    if "status" in wants(output):
        from .explain.status import fleet_status

        try:
            context["status"] = fleet_status(snap, provenance.namespace)
        except (IncompleteError, InputError) as exc:  # the page says why there is no matrix; the checks
            context["status"] = str(exc)  # still report
    if "fleet" in wants(output):
        from .explain.fleet import hit_rate

        try:
            context["fleet"] = hit_rate(snap, provenance.namespace)
        except (IncompleteError, InputError) as exc:
            context["fleet"] = str(exc)
    if "run" in wants(output):
        context["run"] = {"kubernetes": snap.meta.server_version, "context": flags.get("context") or "",
                          "command": command("kubectl", "kcache", sys.argv[1:])}
    if output == "html" and _isatty(sys.stdout):  # a page is for a browser, not for the screen (popeye --save)
        path = _report_path(provenance.cluster or report.cluster)
        with open(path, "w", encoding="utf-8") as page:
            render_doctor(report, output, page, **context)
        sys.stdout.write(f"wrote {escape(os.path.abspath(path))}\n")
    else:
        render_doctor(report, output, sys.stdout, color=_color(), **context)
    from .checks.model import SEVERITY_RANK

    # no verdict on what could not be read (3 wins over 1); a kind absent from input files is said
    # in the report, but it is not an API failure: the findings decide the exit code then
    failed = report.unreadable
    if failed:
        hint = _access_hint(snap.reads, flags)
        sys.stderr.write(f"doctor: incomplete: {escape('; '.join(map(str, failed)))}{hint}\n")
        return EXIT_INCOMPLETE
    worst = report.worst()
    if worst is not None and fail_on != "never" and SEVERITY_RANK[worst] >= SEVERITY_RANK[fail_on]:
        return EXIT_FINDINGS
    return EXIT_OK


def _isatty(out: Any) -> bool:
    try:
        return bool(out.isatty())
    except (AttributeError, ValueError):
        return False


def _report_path(cluster: str) -> str:
    """`kcache-report-<cluster>-<time>.html` in the current directory: the cluster's last path part (an EKS ARN
    ends in its name), in characters safe in a file name."""
    import re
    import time

    name = re.sub(r"[^A-Za-z0-9._-]+", "-", cluster.rsplit("/", 1)[-1]).strip("-.") or "cluster"
    return f"kcache-report-{name[:60]}-{time.strftime('%Y%m%d-%H%M%S')}.html"


@main.command(context_settings=CONTEXT_SETTINGS)
@click.argument("code")
def explain(code: str) -> int:
    """What a doctor finding code means: severity, what KServe does and the fix.

    CODE is check/code as doctor prints it (error[kcn-missing/missing]), or a check id for all its codes.
    The same text as docs/checks.md. Exit 2 for an unknown code.
    """
    from .report.doctor_common import write_text
    from .report.doctor_explain import explain_text
    from .report.layout import terminal_width

    write_text(sys.stdout, explain_text(code, terminal_width(sys.stdout), color=_color()))
    return EXIT_OK


# ---- status -------------------------------------------------------------------------------------

STATUS_FORMATS = ("table", "wide", "json", "yaml")


@main.command(context_settings=CONTEXT_SETTINGS)
@_kube_options
@_from_file_option
@click.option(
    "-o", "--output", type=click.Choice(STATUS_FORMATS), default="table", show_default=True, help="Output format."
)
@click.option("-w", "--watch", is_flag=True, help="Keep the output current from watches until Ctrl-C; rows that "
              "changed since the last screen are marked.")
@click.option("--group", "group", metavar="NAME", help="Only this node group (its row and its caches' rows).")
@click.option("-l", "--selector", "selector", metavar="SELECTOR",
              help="Only KernelCaches with these labels (k=v, k!=v, k, !k; comma separated), as kubectl's -l.")
@click.option("--problems", is_flag=True, help="Only unhealthy rows: groups with members NotReady or missing their "
              "KernelCacheNode or agent; caches with an Error, a missing or a preparing entry.")
@click.option("--no-headers", is_flag=True, help="No column titles and no header line (as kubectl get).")
@click.pass_context
def status(ctx: click.Context, from_files: tuple[str, ...], output: str, watch: bool, group: str | None,
           selector: str | None, problems: bool, no_headers: bool, **kwargs: Any) -> int:
    """The fleet at a glance: per node group its members (Ready, NotReady, cordoned), KernelCacheNodes,
    agent pods and caches; per KernelCache and group, how many member nodes have its entry Ready,
    Pending, Pulling or Error.

    Reads only (the lists doctor makes, fewer of them). -n limits KernelCaches to a namespace. With -w
    the output is kept current from watches, like `kubectl get -w`. Exit codes: 0 shown, 2 bad input,
    3 incomplete (unreachable, or a read or watch forbidden), 130 interrupted.
    """
    flags = _merged_flags(ctx, kwargs)
    if watch and from_files:
        raise click.UsageError("--watch needs a live cluster: files do not change")
    color = _color() and output in ("table", "wide")
    from .report.status_common import parse_selector

    try:
        requirements = parse_selector(selector) if selector is not None else None
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="-l/--selector") from None
    shape = {"group": group, "selector": requirements, "problems": problems, "headers": not no_headers}
    if not watch:
        snap, provenance = _read(flags, from_files, _status_scope(flags))
        _show_status(snap, provenance, output, sys.stdout, color=color, shape=shape)
        return EXIT_OK
    return _watch_status(flags, output, color, shape)


def _status_scope(flags: dict[str, Any]) -> Any:
    from .collect import Scope

    return Scope(namespace=_scope_namespace(flags), install=False, agent_pods=True, captures=False,
                 preparation=False, producers=True, events=False)  # producers: the serving pods' hit rate


def _show_status(snap: Any, provenance: Any, output: str, out: Any, *, color: bool, notes: tuple[str, ...] = (),
                 header: str = "", shape: dict[str, Any] | None = None, previous: str | None = None,
                 watch: dict[str, Any] | None = None) -> str:
    """Render the status of `snap` (narrowed to `shape`'s group and labels); returns the text written (table
    only: for redrawing). With `previous` (a watch's last screen), rows that changed are marked; `watch` is
    the watch's state, for the machine formats."""
    from .explain.status import StatusReport, fleet_status
    from .report import render
    from .report.status_common import narrowed, selector_selects

    shape = shape or {}
    fleet = fleet_status(snap, provenance.namespace)
    if shape.get("group") is not None and fleet.group(shape["group"]) is None:
        raise InputError(f"node group {escape(shape['group'])!r} not found "
                         f"(groups: {', '.join(escape(g.name) for g in fleet.groups) or 'none'})")
    caches = None
    if shape.get("selector") is not None:
        caches = {f"{kc.namespace}/{kc.name}" for kc in snap.kernel_caches
                  if selector_selects(shape["selector"], kc.meta.labels)}
    if shape.get("group") is not None or caches is not None:
        fleet = narrowed(fleet, shape.get("group"), caches)
    report = StatusReport(fleet, provenance, notes, watch, serving=_serving_pods(snap, provenance.namespace))
    if output not in ("table", "wide"):
        render("status", report, output, out)
        return ""
    from .report.doctor_common import write_text
    from .report.status_table import View, for_stream, status_text, with_changes
    from .report.terminal import terminal_width

    view = View(wide=output == "wide", problems=bool(shape.get("problems")), headers=shape.get("headers", True))
    width = terminal_width(out)
    if previous is not None and width is not None:
        width -= 2  # room for the change mark
    text = status_text(report, color=color, width=width, header=header, view=view)
    shown = with_changes(text, previous, color) if previous is not None else text
    write_text(out, for_stream(shown, out))
    return text


def _serving_pods(snap: Any, namespace: str | None) -> Any:
    """status's serving pods section: the fleet's hit rate, or why it cannot be shown (status still answers)."""
    from .explain.fleet import hit_rate

    try:
        return hit_rate(snap, namespace)
    except (IncompleteError, InputError) as exc:
        return str(exc)


def _watch_status(flags: dict[str, Any], output: str, color: bool, shape: dict[str, Any]) -> int:
    """List once, then watch from the lists' resourceVersions and re-render on change (coalesced)."""
    import dataclasses
    import shutil
    import signal

    from .provenance import now_rfc3339
    from .watch import LiveSnapshot

    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # started in the background of a shell: Ctrl-C
        signal.signal(signal.SIGINT, signal.default_int_handler)  # must still stop a watch, as in kubectl
    client = _client(flags)
    lists: list[Any] = []
    snap, provenance = _read(flags, (), _status_scope(flags), lists=lists, client=client)
    out = sys.stdout
    tty = bool(getattr(out, "isatty", lambda: False)())
    header = "watching, Ctrl-C to stop"
    live = LiveSnapshot(client, snap, lists)
    shown = _show_status(snap, provenance, output, out, color=color, header=header, shape=shape,
                         watch=live.watch_state())
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
            shown = _show_status(live.snapshot(taken), current, output, out, color=color, header=header,
                                 notes=tuple(live.problems()), shape=shape, previous=shown,
                                 watch=live.watch_state())
            out.flush()
    finally:
        live.stop()


def _screen_rows(text: str, columns: int) -> int:
    """The terminal rows `text` takes: a line longer than the terminal wraps onto the next row."""
    import re

    visible = (len(re.sub(r"\x1b\[[0-9;]*m", "", line)) for line in text.splitlines())
    return sum(max(1, -(-n // max(columns, 1))) for n in visible)


# ---- why-group ----------------------------------------------------------------------------------

WHY_FORMATS = ("tree", "wide", "json", "yaml")


@main.command("why-group", context_settings=CONTEXT_SETTINGS)
@_kube_options
@_from_file_option
@click.argument("pod", required=False)
@click.option("--capture", "capture_name", metavar="NAME", help="Start from this KernelCacheCapture instead of a pod.")
@click.option("--node", "what_if_node", metavar="NODE", help="What if the producer ran on NODE?")
@click.option("--group", "what_if_group", metavar="GROUP", help="What if the pod requested GROUP?")
@click.option("-o", "--output", type=click.Choice(WHY_FORMATS), default="tree", show_default=True,
              help="Output format: tree (the answer first), wide (with all the evidence), json, yaml.")
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
    flags = _merged_flags(ctx, kwargs)
    if not pod and not capture_name:
        raise click.UsageError("give a POD or --capture NAME")
    from .explain.why_group import explain

    if from_files:
        snap = _load_files(from_files, _why_selection(WHY_GROUP_READS, flags.get("namespace")))
        namespace = flags.get("namespace") or _default_namespace_offline(snap, pod, capture_name)
    else:
        from .collect import collect_for_why_group

        client = _client(flags).bounded()
        namespace = flags.get("namespace") or client.namespace
        snap = collect_for_why_group(client, namespace, pod, capture_name, what_if_node)
    why = explain(
        snap, namespace, pod_name=pod, capture_name=capture_name, what_if_node=what_if_node, what_if_group=what_if_group
    )
    from .report.why_group_tree import render

    _explanation(why, render, output, _source(snap.meta, namespace))
    return EXIT_OK if why.decision.ok else EXIT_FINDINGS


# What the why-* commands read live (collect.collect_for_why_*), as snapshot fields: from a file the rest
# is not decoded.
WHY_GROUP_READS = frozenset({"captures", "pods", "kernel_caches", "node_groups", "configmaps", "nodes"})
WHY_NOT_CACHED_READS = frozenset({"pods", "kcns", "kernel_caches", "configmaps", "webhooks", "namespaces",
                                  "node_groups", "nodes", "captures"})


def _why_selection(fields: frozenset[str], namespace: str | None, nodes: Any = None) -> Any:
    """Only `fields`, and only the pods of `namespace` when it is known (the pod asked about is there); nodes
    without their image lists (only the doctor reads them); with `nodes` (objects -> node names), only the
    nodes it names, as the live reads get them by name."""
    from .files import Selection
    from .objects import NodeWithoutImages

    return Selection(fields, {"pods": namespace} if namespace else {}, {"nodes": NodeWithoutImages},
                     {"nodes": nodes} if nodes is not None else {})


def _pods_nodes(pod: str, namespace: str | None) -> Callable[[list[tuple[str, Any]]], set[str]]:
    """The nodes of the pods named `pod` (in `namespace` when given): what why-not-cached reads live."""
    return lambda objects: {o.node_name for f, o in objects
                            if f == "pods" and o.name == pod and (namespace is None or o.namespace == namespace)}


def _explanation(why: Any, render: Callable[..., None], output: str, source: Any) -> None:
    """A why-* answer: the answer first for people (`wide`: with all the evidence), or its document with
    where it came from."""
    if output not in ("tree", "wide"):
        _write(_dump_doc(with_source(why.to_dict(), source), output))
        return
    from .report.terminal import terminal_width

    render(why, sys.stdout, color=_color(), width=terminal_width(sys.stdout), wide=output == "wide")


# ---- why-not-cached -----------------------------------------------------------------------------


@main.command("why-not-cached", context_settings=CONTEXT_SETTINGS)
@_kube_options
@_from_file_option
@click.argument("pod", required=False)
@click.option("--manifest", "manifest", metavar="FILE",
              help="What if: a Pod, a Deployment/ReplicaSet pod template, or an InferenceService (with its "
                   "ServingRuntime) not created yet; `-` reads stdin.")
@click.option("-o", "--output", type=click.Choice(WHY_FORMATS), default="tree", show_default=True,
              help="Output format: tree (the answer first; without POD the table of InferenceServices), wide (with "
                   "all the evidence; without POD every pod), json, yaml.")
@click.option("-l", "--selector", metavar="SELECTOR", default="",
              help="Without POD: only serving pods with these labels (kubectl's syntax).")
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
    flags = _merged_flags(ctx, kwargs)
    if not pod and not manifest:
        return _fleet_hit_rate(flags, from_files, output, selector, isvc)
    if selector or isvc or flags.get("all_namespaces"):
        raise click.UsageError("-l, --isvc and -A are for the whole fleet: give them without POD")
    if bool(pod) == bool(manifest):
        raise click.UsageError("give a POD or --manifest FILE (not both)")
    if manifest == "-" and "-" in from_files:
        raise click.UsageError("--manifest - and --from-file - cannot both read stdin")
    from .explain.why_not_cached import explain

    manifest_pod, note, manifest_ns = _manifest_pod(manifest) if manifest else (None, "", None)
    if from_files:
        snap = _load_files(from_files, _why_selection(WHY_NOT_CACHED_READS, flags.get("namespace") or manifest_ns,
                                                      _pods_nodes(pod, flags.get("namespace")) if pod else None))
        namespace = flags.get("namespace") or manifest_ns or (
            _default_namespace_offline(snap, pod, None) if pod else "default")
    else:
        from .collect import collect_for_why_not_cached

        client = _client(flags).bounded()
        namespace = flags.get("namespace") or manifest_ns or client.namespace
        snap = collect_for_why_not_cached(client, namespace, pod)
    if manifest_pod is not None:
        manifest_pod = _in_namespace(manifest_pod, namespace)
    why = explain(snap, namespace, pod_name=pod, manifest=manifest_pod, source_note=note)
    from .report.why_not_cached_tree import render

    _explanation(why, render, output, _source(snap.meta, namespace))
    return EXIT_OK if why.exit_cached else EXIT_FINDINGS


main.add_command(why_not_cached, name="why-cached")


def _fleet_hit_rate(flags: dict[str, Any], from_files: tuple[str, ...], output: str, selector: str, isvc: str) -> int:
    """why-not-cached without POD: every serving pod in scope (-A: all namespaces; else -n, the context's
    namespace live, every namespace of the input offline)."""
    from .explain.fleet import check_selector, hit_rate
    from .kernelcache.constants import LABEL_ISVC
    from .snapshot import provenance

    namespace = None if flags.get("all_namespaces") else flags.get("namespace")
    if from_files:
        snap = _load_files(from_files)
    else:
        from .collect import collect_for_fleet

        client = _client(flags)
        if not flags.get("all_namespaces"):
            namespace = namespace or client.namespace
        labels = ",".join(x for x in (f"{LABEL_ISVC}={isvc}" if isvc else "", selector) if x)
        check_selector(selector)  # a bad -l is exit 2 before any read
        snap = collect_for_fleet(client, namespace, labels)
    fleet = hit_rate(snap, namespace, selector, isvc)
    source = provenance(snap.meta, namespace)
    if output in ("json", "yaml"):
        _write(_dump_doc(with_source(fleet.to_dict(), source), output))
    else:
        from .report.doctor_table import output_width
        from .report.hit_rate_table import render_hit_rate

        color = _color()
        tty = bool(getattr(sys.stdout, "isatty", lambda: False)())
        render_hit_rate(fleet, source, sys.stdout, color=color,
                        width=output_width(sys.stdout, color) if (color or tty) else None, wide=output == "wide")
    return EXIT_OK if fleet.all_cached else EXIT_FINDINGS


def _manifest_pod(path: str) -> tuple[Any, str, str | None]:
    """(the Pod the manifest stands for, how it was obtained, its namespace if it names one)."""
    from .files import read_documents
    from .kernelcache.render import pod_from_manifest
    from .objects import Pod

    docs = read_documents(path)
    pod, note = pod_from_manifest(docs, path if path != "-" else "stdin")
    try:
        parsed = Pod.from_dict(pod)
    except InputError as exc:
        raise InputError(f"--manifest {path}: {exc}") from None
    return parsed, note, parsed.meta.namespace


def _in_namespace(pod: Any, namespace: str) -> Any:
    """The manifest's pod in the namespace it is evaluated in (the API server sets it at creation)."""
    from msgspec.structs import replace

    return replace(pod, metadata=replace(pod.meta, namespace=namespace))


def _default_namespace_offline(snap: Any, pod: str | None, capture: str | None) -> str:
    """Offline there is no kubeconfig context: use the namespace where the pod or capture is, if unique."""
    names = {p.namespace for p in snap.pods if p.name == pod} if pod else set()
    if not names and pod:
        names = {
            c.namespace for c in snap.captures if c.active_session is not None and c.active_session.pod_name == pod
        }
    if capture:
        names |= {c.namespace for c in snap.captures if c.name == capture}
    if len(names) > 1:
        raise InputError(f"found in several namespaces ({', '.join(sorted(names))}): use -n")
    if not names and snap.pods:
        what = f'pod "{pod}"' if pod else f'KernelCacheCapture "{capture}"'
        searched = sorted({p.namespace for p in snap.pods} | {c.namespace for c in snap.captures})
        raise InputError(f"{what} not found in the input files (searched namespaces: {', '.join(searched)})")
    return next(iter(names), "default")


# ---- monitor ------------------------------------------------------------------------------------


@main.command(context_settings=CONTEXT_SETTINGS)
@_kube_options(namespaces="all")
@click.option("--port", type=int, default=8080, show_default=True, help="Serve /metrics, /report, /healthz, /readyz.")
@click.option("--address", default="0.0.0.0", show_default=True, help="The address to listen on.")
@click.option("--resync-period", type=float, default=60.0, show_default=True,
              help="Seconds between evaluations when nothing changes.")
@click.option("--events", is_flag=True, help="Record an Event on the object when a finding appears or clears "
                                              "(the only writes; needs `create events`).")
@click.pass_context
def monitor(ctx: click.Context, port: int, address: str, resync_period: float, events: bool, **kwargs: Any) -> int:
    """Watch the cluster read-only and serve what the doctor, status and why-not-cached -A would say, kept
    current: Prometheus metrics on /metrics, the doctor's HTML page on /report, /healthz and /readyz.

    Needs only the doctor's read-only role (get, list, watch) and no Lease; runs until SIGTERM/SIGINT.
    """
    flags = _merged_flags(ctx, kwargs)
    if not 0 <= port <= 65535:
        raise click.BadParameter("must be 0 to 65535", param_hint="--port")
    if resync_period <= 0:
        raise click.BadParameter("must be more than 0", param_hint="--resync-period")
    from .monitor.run import MonitorOptions, run_monitor

    return run_monitor(_client(flags), MonitorOptions(port=port, address=address, resync=resync_period,
                                                      events=events, namespace=_scope_namespace(flags)))


# ---- reconcile ----------------------------------------------------------------------------------


@main.command(context_settings=CONTEXT_SETTINGS)
@_kube_options(namespaces="cluster")
@_from_file_option
@click.option("--dry-run", is_flag=True, help="Print the plan; write nothing.")
@click.option("--once", is_flag=True, help="One pass, then exit.")
@click.option("-o", "--output", type=click.Choice(["table", "json", "yaml", "name"]), default="table",
              show_default=True, help="Output format; `name`: the objects written, as `kubectl get -o name`.")
@click.option("--force", is_flag=True, help="Write even while KServe's own controller is active.")
@click.option("--leader-elect", is_flag=True, help="Take a coordination.k8s.io Lease before writing.")
@click.option("--leader-elect-name", default="kubectl-kcache-reconcile", show_default=True)
@click.option("--leader-elect-namespace", default="kserve", show_default=True)
@click.option("--lease-duration", type=_Seconds(), default=15.0, show_default=True, help="Seconds.")
@click.option("--renew-deadline", type=_Seconds(), default=10.0, show_default=True, help="Seconds.")
@click.option("--resync-period", type=_Seconds(), default=300.0, show_default=True,
              help="Seconds between full passes.")
@click.option("--health-port", type=click.IntRange(0, 65535), default=0,
              help="Serve /healthz, /readyz and /metrics on this port (0: off).")
@click.pass_context
def reconcile(
    ctx: click.Context,
    from_files: tuple[str, ...],
    dry_run: bool,
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
    flags = _merged_flags(ctx, kwargs)
    if renew_deadline >= lease_duration:
        raise click.BadParameter("must be shorter than --lease-duration", param_hint="--renew-deadline")
    from .reconcile.planner import checked_plan

    if dry_run:
        if from_files:
            snap = _load_files(from_files)
        else:
            from .reconcile.loop import collect_for_reconcile

            snap = collect_for_reconcile(_client(flags).bounded())
        result = checked_plan(snap)
        for note in result.notes:
            sys.stderr.write(f"note: {escape(note)}\n")
        _render_plan(result.actions, output, _source(snap.meta, None))
        return EXIT_FINDINGS if result.writes else EXIT_OK  # as `kubectl diff`: 1 when writes are planned
    if from_files:
        raise click.UsageError("--from-file works only with --dry-run (a file cannot be written to)")
    from .reconcile.loop import LoopOptions, run_loop

    client = _client(flags)
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
        from .snapshot import SnapshotMeta

        meta = SnapshotMeta(cluster=client.resolved.cluster_name or client.server, server=client.server,
                            taken_at=_now(), source="live")
        _render_plan(actions, output, _source(meta, None))

    return run_loop(client, opts, report=report if once else None)


def _now() -> str:
    import datetime as dt

    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _render_plan(actions: Any, output: str, source: dict[str, Any]) -> None:
    from .reconcile.actions import plan_document

    doc = with_source(plan_document(actions), source)
    if output == "table":
        from .report.plan_table import render_plan_table
        from .report.terminal import terminal_width

        render_plan_table(doc, sys.stdout, color=_color(), width=terminal_width(sys.stdout))
    elif output == "name":
        from .report.doctor_name import render_plan_names

        render_plan_names(doc, sys.stdout)
    else:
        _write(_dump_doc(doc, output))


# ---- dump ---------------------------------------------------------------------------------------


@main.command(context_settings=CONTEXT_SETTINGS)
@_kube_options(namespaces="all")
@click.option("-o", "--output", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True)
@click.option("--file", "out_file", metavar="PATH", help="Write to PATH instead of stdout.")
@click.option("--anonymize", is_flag=True,
              help="Replace node, namespace, InferenceService, pod, registry and image names by tokens, the same "
                   "name by the same token, so that every command gives the same answers (review it still).")
@click.pass_context
def dump(ctx: click.Context, output: str, out_file: str | None, anonymize: bool, **kwargs: Any) -> int:
    """Write every object the other commands read into one snapshot file (managedFields and Secret data
    removed), for bug reports and `--from-file`. Reads only. Items are written as they arrive; JSON is
    the faster format for large clusters."""
    flags = _merged_flags(ctx, kwargs)
    from .collect import Scope, collect
    from .dumpfile import LARGE, DumpWriter, meta_document, open_output

    client = _client(flags).bounded()
    scope = Scope(namespace=_scope_namespace(flags))
    try:
        out, tmp = open_output(out_file) if out_file else (sys.stdout.buffer, None)
    except OSError as exc:
        raise InputError(f"--file {out_file}: {exc.strerror or exc}") from None
    progress = _Progress()
    try:
        writer: Any = DumpWriter(out, output)
        if anonymize:
            from .anonymize import AnonymizingWriter

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
        sys.stderr.write(f"note: {writer.count} objects: for a cluster this size `-o json` writes the dump and "
                         "loads it with --from-file about ten times faster\n")
    unread = list(dict.fromkeys(f"list {r.resource}" + (f" in {r.namespace}" if r.namespace else "")
                                for r in snap.reads if r.incomplete))
    if unread:
        sys.stderr.write("warning: some reads were forbidden and are missing from the dump: "
                         f"{escape(', '.join(unread))}\n")
        return EXIT_INCOMPLETE
    return EXIT_OK


# ---- running ------------------------------------------------------------------------------------


class _ClosedOutput:
    """Standard output when the process was started with it closed (`>&-`): writing fails as writing to a
    closed descriptor does, and run() reports it in one line."""

    closed = False

    def write(self, _text: Any) -> int:
        import errno

        raise OSError(errno.EBADF, "standard output is closed")

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        import errno

        raise OSError(errno.EBADF, "standard output is closed")

    @property
    def buffer(self) -> _ClosedOutput:
        return self


class _Discarded(_ClosedOutput):
    """Standard error when the process was started with it closed (`2>&-`): warnings and errors go nowhere,
    and the exit code stays the one the outcome gives (a failed write must not turn it into 1)."""

    def write(self, text: Any) -> int:
        return len(text)


_OUTPUT_ERRORS = ("EPIPE", "ENOSPC", "EBADF", "EIO", "EFBIG", "EDQUOT")


def _output_failed(exc: OSError) -> int:
    """The output could not be written: a closed pipe (`| head`) ends quietly, as it ends kubectl; a full
    disk or a closed stdout is one line."""
    import errno

    try:  # nothing more can go out; do not let the interpreter's final flush complain
        sys.stdout = _ClosedOutput()  # type: ignore[assignment]
    except Exception:  # noqa: BLE001
        pass
    if exc.errno == errno.EPIPE:
        return EXIT_OK
    try:
        sys.stderr.write(f"error: cannot write the output: {exc.strerror or exc}\n")
    except (OSError, ValueError, AttributeError):
        pass
    return EXIT_USAGE


def _is_output_error(exc: BaseException) -> bool:
    import errno

    return isinstance(exc, OSError) and exc.errno in {getattr(errno, n, -1) for n in _OUTPUT_ERRORS}


def run(argv: list[str]) -> int:
    """Run the CLI; every outcome becomes an exit code here."""
    import signal

    if hasattr(signal, "SIGPIPE") and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends us quietly, as it ends kubectl
    if sys.stdout is None:
        sys.stdout = _ClosedOutput()  # type: ignore[assignment]
    if sys.stderr is None or _closed_descriptor(sys.stderr):
        sys.stderr = _Discarded()  # type: ignore[assignment]
    try:
        code = _run(argv)
        sys.stdout.flush()
    except OSError as exc:
        if _is_output_error(exc):
            return _output_failed(exc)
        raise
    return code


def _closed_descriptor(stream: Any) -> bool:
    try:
        os.fstat(stream.fileno())
    except (ValueError, AttributeError):  # an in-memory stream (io.UnsupportedOperation is one) or a closed one
        return False
    except OSError:
        return True
    return False


def _run(argv: list[str]) -> int:
    try:
        result = main.main(args=argv, prog_name=PROG, standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code or 0)
    except click.UsageError as exc:
        _show_usage_error(exc)
        return EXIT_USAGE
    except click.ClickException as exc:
        sys.stderr.write(f"error: {escape(exc.format_message())}\n")
        return EXIT_USAGE
    except click.exceptions.Abort:
        sys.stderr.write("interrupted\n")
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return EXIT_INTERRUPTED
    except InputError as exc:
        sys.stderr.write(f"error: {escape(str(exc))}\n")
        return EXIT_USAGE
    except IncompleteError as exc:
        impersonated = any(a == "--as" or a.startswith("--as=") for a in argv)
        sys.stderr.write(f"error: {escape(str(exc))}{escape(_access_hint(exc, {'as_user': impersonated}))}\n")
        return EXIT_INCOMPLETE
    except KcacheError as exc:
        sys.stderr.write(f"error: {escape(str(exc))}\n")
        return exc.exit_code
    except BrokenPipeError as exc:
        return _output_failed(exc)
    except OSError as exc:
        if _is_output_error(exc):
            return _output_failed(exc)
        return _internal_error(exc)
    except Exception as exc:  # noqa: BLE001 - a bug: say so, say where, never a raw traceback
        return _internal_error(exc)
    return int(result or 0)


def _access_hint(refused: Any, flags: dict[str, Any]) -> str:
    """The end of an exit-3 error line when reads were refused: who, the role to bind, `kubectl auth can-i`.
    `refused`: a snapshot's reads, or an IncompleteError (its refused reads, or itself when a 403)."""
    from .errors import Forbidden
    from .report.access_hint import Refused, access_hint, from_reads

    if isinstance(refused, Forbidden):
        found = [Refused(refused.verb or "get", refused.resource, None, str(refused))]
    else:
        found = from_reads(refused.refused if isinstance(refused, IncompleteError) else refused)
    hint = access_hint(found, bool(flags.get("as_user")))
    return f". {hint}" if hint else ""


def _internal_error(exc: BaseException) -> int:
    """A bug: say so, say where, never a raw traceback (unless KCACHE_DEBUG=1)."""
    import traceback

    frame = traceback.extract_tb(exc.__traceback__)[-1]
    where = f"{os.path.basename(frame.filename)}:{frame.lineno}"
    sys.stderr.write(
        f"internal error: {type(exc).__name__}: {escape(str(exc))} (at {where}). This is a bug in "
        f"kubectl-kcache {__version__}; please report it at {ISSUES_URL} "
        "(set KCACHE_DEBUG=1 for the traceback).\n"
    )
    if os.environ.get("KCACHE_DEBUG"):
        traceback.print_exception(type(exc), exc, exc.__traceback__)
    return EXIT_INTERNAL


# cobra's shell completion directives (kubectl's plugin completion protocol)
COMPLETE_FILES = 0  # ShellCompDirectiveDefault: let the shell complete file names
COMPLETE_NO_FILES = 4  # ShellCompDirectiveNoFileComp
FILE_FLAGS = ("-f", "--from-file", "--kubeconfig", "--config", "--manifest", "--file", "--certificate-authority",
              "--client-certificate", "--client-key", "--cache-dir")
KUBECONFIG_SECTIONS = {"--context": "contexts", "--cluster": "clusters", "--user": "users"}
LIVE_TIMEOUT = "2s"  # completion lists live objects, but never keeps the shell waiting long


def complete_words(words: list[str]) -> list[str]:
    """Candidates for the last word, for kubectl's plugin completion."""
    return completion(words)[0]


def completion(words: list[str]) -> tuple[list[str], int]:
    """Candidates for the last word and cobra's directive: commands, flags, choices, check ids, kubeconfig
    contexts, clusters and users, files for file flags, and (live, with a short timeout) namespaces, pods and
    captures."""
    current = words[-1] if words else ""
    commands = sorted(main.commands)
    if len(words) <= 1:
        return [c for c in commands if c.startswith(current)], COMPLETE_NO_FILES
    cmd = main.commands.get(words[0])
    if cmd is None:
        return [], COMPLETE_NO_FILES
    if current.startswith("-"):  # `-` lists the short flags too, `--` only the long ones
        names = sorted({n for p in cmd.params for n in [*getattr(p, "opts", []), *getattr(p, "secondary_opts", [])]
                        if not getattr(p, "hidden", False)})
        return [n for n in names if n.startswith(current)], COMPLETE_NO_FILES
    prev = words[-2] if len(words) >= 2 else ""
    if prev in FILE_FLAGS:
        return [], COMPLETE_FILES
    for p in cmd.params:
        if prev in getattr(p, "opts", []) and isinstance(getattr(p, "type", None), click.Choice):
            return [c for c in p.type.choices if c.startswith(current)], COMPLETE_NO_FILES
    if prev in ("--only", "--skip"):
        done, _, part = current.rpartition(",")
        head = f"{done}," if done else ""
        taken = set(done.split(","))
        return [head + i for i in _check_words(part) if i.startswith(part) and i not in taken], COMPLETE_NO_FILES
    if cmd.name == "explain" and not current.startswith("-"):
        return [i for i in _check_words(current) if i.startswith(current)], COMPLETE_NO_FILES
    if prev in KUBECONFIG_SECTIONS:
        return _kubeconfig_names(words, KUBECONFIG_SECTIONS[prev], current), COMPLETE_NO_FILES
    live = _live_candidates(cmd.name or "", words, prev, current)
    return live, COMPLETE_NO_FILES


def _check_words(part: str) -> list[str]:
    """Check ids, or once `part` has a `/`, that check's `check/code`s."""
    from .checks.registry import all_checks

    if "/" in part:
        return [f"{s.id}/{c.id}" for s in all_checks() for c in s.codes]
    return [s.id for s in all_checks()]


def _flag(words: list[str], *names: str) -> str | None:
    """The value of the last `--flag value` or `--flag=value` among `words` (the word being completed aside)."""
    value = None
    for i, word in enumerate(words[:-1]):
        for name in names:
            if word == name and i + 1 < len(words) - 1:
                value = words[i + 1]
            elif word.startswith(name + "="):
                value = word.split("=", 1)[1]
    return value


def _flags(words: list[str], *names: str) -> list[str]:
    """Every value of a repeatable flag among `words` (the word being completed aside)."""
    values = []
    for i, word in enumerate(words[:-1]):
        for name in names:
            if word == name and i + 1 < len(words) - 1:
                values.append(words[i + 1])
            elif word.startswith(name + "="):
                values.append(word.split("=", 1)[1])
    return values


def _kubeconfig_names(words: list[str], section: str, current: str) -> list[str]:
    from .kube.kubeconfig import kubeconfig_files, merge_kubeconfigs

    try:
        merged = merge_kubeconfigs(kubeconfig_files(_flag(words, "--kubeconfig"), os.environ))
    except Exception:  # noqa: BLE001 - completion never fails loudly
        return []
    names = {str(e.get("name")) for e in merged.get(section) or [] if isinstance(e, dict) and e.get("name")}
    return sorted(n for n in names if n.startswith(current))


def _live_candidates(command: str, words: list[str], prev: str, current: str) -> list[str]:
    """Namespaces after -n, pods for why-* commands, captures after --capture: listed live, 2 s at most."""
    kinds = {("-n", ""): "namespaces", ("--namespace", ""): "namespaces", ("--capture", "why-group"): "captures"}
    what = kinds.get((prev, "")) or kinds.get((prev, command))
    takes_value = any(prev in getattr(p, "opts", []) and not getattr(p, "is_flag", False)
                      for p in main.commands[command].params if isinstance(p, click.Option))
    if what is None and command in ("why-group", "why-not-cached", "why-cached") and not takes_value:
        what = "pods"
    if what is None:
        return []
    from_files = _flags(words, "-f", "--from-file")
    if from_files:  # offline: the names in the snapshot files, never the cluster
        from .completion import names_from_files

        names = names_from_files(from_files, what, _flag(words, "-n", "--namespace"))
        return [n for n in names if n.startswith(current)]
    flags = {key: _flag(words, *names) for key, names in (
        ("kubeconfig", ("--kubeconfig",)), ("context", ("--context",)), ("cluster", ("--cluster",)),
        ("user", ("--user",)), ("namespace", ("-n", "--namespace")), ("server", ("--server", "-s")))}
    flags["request_timeout"] = LIVE_TIMEOUT
    try:
        from .collect import names_for_completion

        client = _client({k: v for k, v in flags.items() if v})
        names = names_for_completion(client, what, flags.get("namespace") or client.namespace)
    except Exception:  # noqa: BLE001 - completion never fails loudly
        return []
    return sorted(n for n in names if n.startswith(current))
