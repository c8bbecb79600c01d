"""kubectl's connection flags and the plugin's common options: declared once, checked as kubectl checks them
(`--as-group` needs `--as`, a namespace must be a DNS label), merged from the group and the command, and
turned into a client; the colour mode.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable
from typing import Any

import click

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


COLOR_MODES = ("auto", "always", "never")
_color_mode = {"mode": "auto"}


def _set_color(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    if param.name == "no_color" and value:
        _color_mode["mode"] = "never"
    elif param.name == "color" and value is not None:
        _color_mode["mode"] = value
    return value


def _set_width(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    from ..report.terminal import choose_width

    choose_width(value)  # every run says it (None: the rule decides), so one process can run many commands
    return value


def color_params() -> list[click.Parameter]:
    """The options of how output for people looks, which every command takes: --color, --no-color, --width."""
    return [
        click.Option(
            ["--width"],
            type=click.IntRange(min=0),
            default=None,
            expose_value=False,
            callback=_set_width,
            is_eager=True,
            help="Lay out output for people at this many columns (0: one line per item, never wrapped). By "
            "default: $COLUMNS when exported, else the terminal's width on a terminal, else (a pipe or a file) "
            "one line per item.",
        ),
        click.Option(
            ["--color"],
            type=click.Choice(COLOR_MODES),
            default=None,
            expose_value=False,
            callback=_set_color,
            is_eager=True,
            help="Colour: auto (on a terminal, unless NO_COLOR is set), always (for less -R, k9s), never.",
        ),
        click.Option(
            ["--no-color"],
            is_flag=True,
            default=False,
            expose_value=False,
            callback=_set_color,
            is_eager=True,
            help="The same as --color=never.",
        ),
    ]


def is_connection_flag(param: click.Parameter) -> bool:
    return isinstance(param, click.Option) and param.name in KUBE_FLAGS


NAMESPACE_HELP = {
    "context": "Namespace (default: the kubeconfig context's).",
    "all": "Limit namespaced reads (KernelCaches, captures, pods, events) to this namespace; without it every "
    "namespace is read, live and from files alike.",
    "cluster": "Namespace of the kubeconfig context (the controller's reads are cluster-wide).",
}


def kube_options(func: Callable[..., Any] | None = None, *, namespaces: str = "context") -> Any:
    """kubectl's connection flags (the set kubectl passes on to plugins by convention). `namespaces` says what
    `-n` means for the command: `context` (the context's namespace by default), `all` (all by default)."""
    if func is None:
        return lambda f: kube_options(f, namespaces=namespaces)
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
        click.option(
            "--tls-server-name",
            metavar="NAME",
            help="Server name to verify the server's certificate against (default: the --server host).",
        ),
        click.option("--client-certificate", metavar="PATH", help="Path to a client certificate for TLS."),
        click.option("--client-key", metavar="PATH", help="Path to the client certificate's key."),
        click.option("--username", metavar="NAME", help="Username for basic authentication (with --password)."),
        click.option("--password", metavar="PASSWORD", help="Password for basic authentication (with --username)."),
        click.option(
            "--disable-compression",
            is_flag=True,
            default=None,
            help="Taken as kubectl takes it; the plugin never asks for compressed answers anyway.",
        ),
        click.option(
            "--cache-dir",
            metavar="PATH",
            help="Taken as kubectl takes it; the plugin keeps no discovery cache, so nothing is written.",
        ),
        click.option(
            "-v",
            "--v",
            "v",
            metavar="LEVEL",
            default=None,
            callback=_log_level,
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


def merged_flags(ctx: click.Context, kwargs: dict[str, Any]) -> dict[str, Any]:
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
        from ..apivalidation import dns_label_errors, go_quote

        errors = dns_label_errors(namespace)
        if errors:
            raise click.BadParameter(f"invalid namespace {go_quote(namespace)}: {errors[0]}", param_hint="-n")


class Seconds(click.ParamType):
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
    from ..kube.kubeconfig import Overrides

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


def make_client(flags: dict[str, Any]) -> Any:
    from ..kube.client import Client

    return Client(_overrides(flags), verbosity=int(flags.get("v") or 0))


def use_color(out: Any = None) -> bool:
    """Colour on `out`: --color=always|never decides; auto (the default) means on a terminal, unless
    NO_COLOR is set."""
    out = out or sys.stdout
    mode = _color_mode["mode"]
    if mode != "auto":
        return mode == "always"
    if os.environ.get("NO_COLOR"):
        return False
    return bool(getattr(out, "isatty", lambda: False)())


def scope_namespace(flags: dict[str, Any]) -> str | None:
    """The namespace of namespaced kinds: -n NS, or None (all namespaces) by default and with -A."""
    return None if flags.get("all_namespaces") else flags.get("namespace")


def _set_max_input_size(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Every input of this run is read up to the size given (the default unless given: one process may run
    several commands)."""
    from ..snapshot.files import limits

    ctx.call_on_close(lambda: limits.set_max_input_bytes(limits.DEFAULT_MAX_INPUT_BYTES))
    if value is None:
        limits.set_max_input_bytes(limits.DEFAULT_MAX_INPUT_BYTES)
        return value
    try:
        limits.set_max_input_bytes(limits.parse_size(value))
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not a size (a positive number of bytes, or with a unit: 500Mi, 4Gi, 2G)"
        ) from None
    return value


def from_file_option(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option(
        "--max-input-size",
        metavar="SIZE",
        default=None,
        expose_value=False,
        callback=_set_max_input_size,
        help="Read at most this much from each --from-file input and --config file (default 2Gi).",
    )(func)
    return click.option(
        "-f",
        "--from-file",
        "from_files",
        multiple=True,
        metavar="PATH",
        help="Read a snapshot (dump file, `kubectl get -o yaml` output or a folder) "
        "instead of the live cluster. Repeatable; `-` reads stdin.",
    )(func)


def output_option(choices: list[str], default: str = "table", help: str = "Output format.") -> Any:
    """`-o/--output`, one of `choices` (a kind's registered formats)."""
    return click.option("-o", "--output", type=click.Choice(choices), default=default, show_default=True, help=help)
