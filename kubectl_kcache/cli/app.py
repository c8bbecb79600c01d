"""The click group `kubectl kcache`, its help and usage errors as kubectl prints them, and the commands that
only print (help, options, version, completion). The read and write commands are one module each.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from .. import __version__
from ..errors import EXIT_OK
from ..text import escape
from .completion_scripts import SHELLS, script
from .flags import color_params, is_connection_flag, kube_options
from .reading import dump_doc, write_out

PROG = "kubectl kcache"
ISSUES_URL = "https://github.com/kserve/kubectl-kcache/issues"
CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 110}

# ---- help and errors, as kubectl prints them ------------------------------------------------------

ALIASES = {"why-cached": "why-not-cached"}
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
    "why-not-ready": """
# Why is my cache not Ready on these nodes?
kubectl kcache why-not-ready llama-3-1-70b-instruct-kcc-84b9f6cd57-008ead7571de3f5b9fb55dd7 -n team-llm

# Every KernelCache not Ready everywhere, with its top cause
kubectl kcache why-not-ready -A

# Every gate of every node, and a node outside the group too
kubectl kcache why-not-ready my-cache -n team-llm --node gpu-17 -o wide""",
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
    "why-not-ready": "Why a KernelCache is not Ready on the nodes of its group",
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
                lines[0] = lead.ljust(len(pad)) + lines[0][len(pad) :]
            self.write("\n".join(lines) + "\n")

    def write_options(self, options: list[tuple[str, str]]) -> None:
        """Options as kubectl prints them: `-o, --output='table':` on its own line, its help under it, a blank
        line between two."""
        for i, (head, text) in enumerate(options):
            if i:
                self.write("\n")
            self.write(" " * (self.current_indent + 4) + head + ":\n")
            if text:
                self.write("\n".join(_wrap(" ".join(text.split()), self.width, " " * (self.current_indent + 8))))
                self.write("\n")


def kubectl_option(p: click.Option) -> tuple[str, str]:
    """An option's help as kubectl writes it: its names, its default in words (`=false`, `=''`, `='table'`,
    `=[]`), then what it does, with the values a choice takes."""
    names = ", ".join(sorted(p.opts, key=lambda o: (o.startswith("--"), o)))
    default = p.default
    if callable(default) or not isinstance(default, (str, int, float, bool, tuple, list)):
        default = None  # computed when run, or unset (click's sentinel)
    if p.is_flag and not isinstance(p.type, click.Choice):
        value = "true" if default else "false"
    elif p.multiple:
        value = "[" + ",".join(str(x) for x in (default if isinstance(default, (tuple, list)) else ())) + "]"
    elif isinstance(default, (int, float)) and not isinstance(default, bool):
        value = str(default)
    else:
        value = "'" + ("" if default is None else str(default)) + "'"
    text = p.help or ""
    if isinstance(p.type, click.Choice) and "One of" not in text:
        text = f"{text} One of: ({', '.join(str(c) for c in p.type.choices)})."
    return f"{names}={value}", text.strip()


def _paragraphs(text: str) -> list[str]:
    import inspect

    return [p for p in inspect.cleandoc(text).split("\n\n") if p.strip()]


def _wrap(text: str, width: int, indent: str) -> list[str]:
    """Words of `text` in lines of at most `width` characters, each line after `indent` (never cut): the
    renderers' one wrap."""
    from ..report.layout import wrap

    first, *rest = wrap(text, width, len(indent), len(indent))
    return [indent + first, *rest]


class KcacheContext(click.Context):
    formatter_class = KcacheFormatter


class KcacheCommand(click.Command):
    """A command whose help reads as kubectl's: description, examples, its own flags, usage; kubectl's
    connection flags are listed by `kubectl kcache options`."""

    context_class = KcacheContext

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.params.extend(color_params())

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        _description(self.help, formatter)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self.format_help_text(ctx, formatter)
        aliases = sorted(a for a, name in ALIASES.items() if name == self.name)
        if aliases:
            formatter.write_paragraph()
            formatter.write_text(f"Aliases: {', '.join([self.name or '', *aliases])}")
        _examples(formatter, EXAMPLES.get(self.name or "", ""))
        rows = [
            kubectl_option(p)
            for p in self.get_params(ctx)
            if isinstance(p, click.Option) and not is_connection_flag(p) and not p.hidden and p.name != "help"
        ]
        if rows:
            formatter.write_paragraph()
            formatter.write_text("Options:")
            formatter.write_options(rows)  # type: ignore[attr-defined]
        formatter.write_paragraph()
        formatter.write_text("Usage:")
        with formatter.indentation():
            formatter.write_text(f"{ctx.command_path} {' '.join(self.collect_usage_pieces(ctx))}")
        if any(is_connection_flag(p) for p in self.params):
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
        except click.UsageError as exc:  # from the command's body (BadParameter is one): name the command's help
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


def show_usage_error(exc: click.UsageError) -> None:
    """`error: ...`, then suggestions, then `See '... --help' for usage.` (exit 2), as kubectl."""
    message = exc.format_message()
    if isinstance(exc, click.NoSuchOption):
        name = exc.option_name
        message = (
            f"unknown shorthand flag: {name[1:2]!r} in {name}" if not name.startswith("--") else f"unknown flag: {name}"
        )
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


# ---- the group ----------------------------------------------------------------------------------


@click.group(cls=KcacheGroup, context_settings=CONTEXT_SETTINGS, invoke_without_command=True)
@click.version_option(
    __version__,
    "--version",
    prog_name="kubectl-kcache",
    message="%(prog)s %(version)s",
    help="Print the version and exit.",
)
@kube_options
@click.pass_context
def main(ctx: click.Context, **kwargs: Any) -> None:
    """Diagnose and operate KServe's Kernel Cache node groups. Every read command also works offline, on a
    dump or `kubectl get -o yaml` output: `--from-file snapshot.yaml`."""
    ctx.ensure_object(dict)
    ctx.obj["kube"] = {k: v for k, v in kwargs.items() if v not in (None, (), False)}
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help(), color=False)
        ctx.exit(EXIT_OK)


for _param in color_params():
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
        rows = [
            kubectl_option(p)
            for p in cmd.get_params(sub)
            if isinstance(p, click.Option) and is_connection_flag(p) and not p.hidden
        ]
    formatter = ctx.make_formatter()
    formatter.write_text("The following options can be passed to any command:")
    formatter.write_paragraph()
    formatter.write_options(rows)  # type: ignore[attr-defined]
    click.echo(formatter.getvalue().rstrip("\n"), color=False)


@main.command(context_settings=CONTEXT_SETTINGS)
@click.option("-o", "--output", type=click.Choice(["text", "json", "yaml"]), default="text", show_default=True)
@click.option("--client", is_flag=True, help="Accepted as kubectl takes it: the plugin has no server version.")
def version(output: str, client: bool) -> None:
    """Print the plugin's version, the commit it was built from and when (as json or yaml, also the Python
    and platform it runs on)."""
    from ..buildinfo import build_info

    info = build_info()
    if output == "text":
        write_out(f"kubectl-kcache {info.version}\ncommit: {info.commit} ({info.tree_state})\nbuilt: {info.date}")
        return
    import platform

    doc = {
        "clientVersion": {
            **info.to_dict(),
            "python": platform.python_version(),
            "platform": f"{platform.system().lower()}/{platform.machine().lower()}",
        }
    }
    write_out(dump_doc(doc, output))


@main.command("completion", context_settings=CONTEXT_SETTINGS)
@click.argument("shell", type=click.Choice(SHELLS))
def completion_command(shell: str) -> None:
    """Print the shell completion script for SHELL: `source <(kubectl kcache completion bash)` (or zsh;
    `| source` in fish). It completes `kubectl-kcache` and `kubectl kcache`, also on kubectl older than 1.26."""
    sys.stdout.write(script(shell))
