"""The command line without a cluster: help, version, usage errors and their exit codes, --request-timeout
parsing, lazy imports, and one-line errors for bad kubeconfigs and unreachable API servers."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import click
import pytest
import yaml

from kubectl_kcache import __version__, cli
from kubectl_kcache.cli import app, flags, run
from kubectl_kcache.cli.complete import complete_words
from kubectl_kcache.cli.flags import parse_duration
from kubectl_kcache.errors import EXIT_INCOMPLETE, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ("doctor", "why-group", "reconcile", "dump", "version")


@pytest.fixture(autouse=True)
def _no_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No kubeconfig, service account or proxy from the machine running the tests."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    for var in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(var, raising=False)


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    assert "Traceback" not in text
    return lines[0]


# ---- help and version --------------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help(capsys, flag):
    assert run([flag]) == EXIT_OK
    out = capsys.readouterr().out
    assert out.startswith("Diagnose and operate KServe's Kernel Cache node groups.")
    commands = out[out.index("Commands:") : out.index("Usage:")].splitlines()[1:]
    listed = {line.split()[0]: line for line in commands if line.startswith("  ") and line.strip()}
    for command in COMMANDS:
        assert command in listed
    assert "why-cached" not in listed  # an alias, shown as one
    assert listed["why-not-cached"].endswith("(alias: why-cached)")
    assert all(len(line) <= 80 and "..." not in line for line in commands)  # a whole summary on one line
    assert "Usage:\n  kubectl kcache [command] [flags]" in out
    assert 'Use "kubectl kcache options" for a list of kubectl\'s connection flags' in " ".join(out.split())


def test_bare_command_prints_help_and_exits_0(capsys):
    assert run([]) == EXIT_OK
    assert "Commands:" in capsys.readouterr().out


@pytest.mark.parametrize("command", COMMANDS)
def test_subcommand_help(capsys, command):
    assert run([command, "--help"]) == EXIT_OK
    out = capsys.readouterr().out
    assert not out.startswith(("Usage", " "))  # the description first, as kubectl
    sections = [line for line in out.splitlines() if line.endswith(":") and not line.startswith(" ")]
    assert sections[:3] == (
        ["Examples:", "Options:", "Usage:"] if command != "version" else ["Examples:", "Options:", "Usage:"]
    )
    assert f"\n  kubectl kcache {command} " in out[out.index("Usage:") :]
    options = out[out.index("Options:") : out.index("Usage:")]
    assert "--color" in options and "--no-color" in options
    assert "--kubeconfig" not in options and "--token" not in options  # kubectl's flags: `kubectl kcache options`


HEALTHY = Path(__file__).resolve().parents[2] / "examples" / "healthy-cluster.yaml"
KUBECTL_OPTION = re.compile(r"^    (-[A-Za-z], )?--[a-z][a-z0-9-]*=(true|false|'[^']*'|\[[^\]]*\]|-?[0-9.]+):$")


@pytest.mark.parametrize("command", [*COMMANDS, "options"])
def test_option_lines_are_shaped_as_kubectls(capsys, command):
    """`-o, --output='table':` on its own line, the default in words, what it does on the lines under it (with
    the values a choice takes): never click's `-o, --output [table|wide]`, `[default: x]` or `INTEGER`."""
    assert run([command, "--help"] if command != "options" else [command]) == EXIT_OK
    out = capsys.readouterr().out
    block = out[out.index("Options:") : out.index("Usage:")] if command != "options" else out
    heads = [line for line in block.splitlines() if line.startswith("    -")]
    assert heads, command
    for line in heads:
        assert KUBECTL_OPTION.match(line), line
    for bad in ("[default:", "INTEGER", "FLOAT", "TEXT", "[table|"):
        assert bad not in block, (command, bad)
    helps = [line for line in block.splitlines() if line.startswith("        ")]
    assert helps and all(len(line) <= 110 for line in helps)
    if command == "status":
        assert "    -o, --output='table':\n        Output format. One of: (table, wide, json, yaml).\n" in block
        assert "    -w, --watch=false:\n" in block


@pytest.mark.parametrize("value", ["", "=client"])
def test_reconcile_takes_kubectls_dry_run(capsys, value, tmp_path):
    assert run(["reconcile", f"--dry-run{value}", "-f", str(HEALTHY)]) == EXIT_OK
    assert "nothing to do" in capsys.readouterr().out  # the plan of a cluster as KServe would make it
    assert run(["reconcile", "--dry-run=server", "-f", str(HEALTHY)]) == EXIT_USAGE
    assert "--dry-run=client prints the plan" in capsys.readouterr().err
    assert run(["reconcile", "--dry-run=none", "-f", str(HEALTHY)]) == EXIT_USAGE


def test_help_command_is_the_command_help(capsys):
    assert run(["help", "status"]) == EXIT_OK
    via_help = capsys.readouterr().out
    assert run(["status", "--help"]) == EXIT_OK
    assert capsys.readouterr().out == via_help
    assert run(["help", "stauts"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith('error: unknown command "stauts" for "kubectl kcache"\n')
    assert "Did you mean this?\n\tstatus\n" in err


def test_options_lists_the_connection_flags(capsys):
    assert run(["options"]) == EXIT_OK
    out = capsys.readouterr().out
    for flag in ("--kubeconfig", "--context", "--namespace", "--as", "--request-timeout", "--token", "--server"):
        assert flag in out


def test_version_names_the_commit_and_build_date(capsys):
    """From a checkout (this one): git's HEAD, its date, and whether files differ from it."""
    import subprocess

    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    for argv in (["version"], ["version", "--client"]):
        assert run(argv) == EXIT_OK
        lines = capsys.readouterr().out.splitlines()
        assert lines[0] == f"kubectl-kcache {__version__}"
        assert re.fullmatch(rf"commit: {head} \((clean|dirty)\)", lines[1]), lines
        assert re.fullmatch(r"built: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", lines[2]), lines


def test_build_info_of_a_build_comes_from_its_generated_module(tmp_path, monkeypatch):
    """What a release archive and a pip install carry (krew-manifest/build.py, setup.py) wins over git."""
    import sys

    from kubectl_kcache import buildinfo

    info = buildinfo.BuildInfo(__version__, "a" * 40, "clean", "2026-11-30T12:00:00Z")
    (tmp_path / "kubectl_kcache").mkdir()
    (tmp_path / "kubectl_kcache" / "_build.py").write_text(buildinfo.module_text(info))
    monkeypatch.setattr(
        sys.modules["kubectl_kcache"],
        "__path__",
        [*sys.modules["kubectl_kcache"].__path__, str(tmp_path / "kubectl_kcache")],
    )
    monkeypatch.delitem(sys.modules, "kubectl_kcache._build", raising=False)
    assert buildinfo.build_info() == info
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    assert buildinfo.from_git(buildinfo.Path(buildinfo.__file__).parent.parent, "9").date == "1970-01-01T00:00:00Z"


def test_version_flag(capsys):
    assert run(["--version"]) == EXIT_OK
    assert capsys.readouterr().out.splitlines()[0] == f"kubectl-kcache {__version__}"


# ---- usage errors ------------------------------------------------------------------------------------


def test_unknown_command(capsys):
    assert run(["doctr"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err == (
        'error: unknown command "doctr" for "kubectl kcache"\n\nDid you mean this?\n\tdoctor\n\n'
        "See 'kubectl kcache --help' for usage.\n"
    )
    assert run(["frobnicate"]) == EXIT_USAGE
    assert capsys.readouterr().err == (
        'error: unknown command "frobnicate" for "kubectl kcache"\nSee \'kubectl kcache --help\' for usage.\n'
    )


def test_unknown_flag_as_kubectl(capsys):
    assert run(["doctor", "--foo"]) == EXIT_USAGE
    assert capsys.readouterr().err == "error: unknown flag: --foo\nSee 'kubectl kcache doctor --help' for usage.\n"


def test_a_usage_error_of_a_command_names_its_help(capsys):
    assert run(["why-group"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith("error: give a POD or --capture NAME\n")
    assert err.endswith("See 'kubectl kcache why-group --help' for usage.\n")


@pytest.mark.parametrize(
    "argv, mode",
    [
        (["--color=always"], True),
        (["--color", "never"], False),
        (["--no-color"], False),
        ([], False),
    ],
)
def test_color_flags_on_every_command(monkeypatch, argv, mode):
    monkeypatch.setattr(flags, "_color_mode", {"mode": "auto"})
    seen = []
    monkeypatch.setattr(
        "kubectl_kcache.kube.client.Client",
        lambda *_a, **_k: (
            seen.append(flags.use_color()),
            (_ for _ in ()).throw(click.UsageError("no cluster in this test")),
        )[1],
    )
    assert run(["status", *argv]) == EXIT_USAGE  # not a terminal: auto is no colour
    assert seen == [mode]


def test_color_always_beats_no_color_env_and_never_beats_a_terminal(monkeypatch):
    monkeypatch.setattr(flags, "_color_mode", {"mode": "always"})
    monkeypatch.setenv("NO_COLOR", "1")
    assert flags.use_color() is True
    monkeypatch.setattr(flags, "_color_mode", {"mode": "auto"})
    assert flags.use_color() is False


def test_unknown_option(capsys):
    assert run(["doctor", "--bogus"]) == EXIT_USAGE
    assert "--bogus" in capsys.readouterr().err


def test_bad_choice(capsys):
    assert run(["doctor", "-o", "xml"]) == EXIT_USAGE
    assert "xml" in capsys.readouterr().err


def test_why_group_needs_a_pod_or_a_capture(capsys):
    assert run(["why-group"]) == EXIT_USAGE
    assert "give a POD or --capture NAME" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["--request-timeout", "abc", "dump"],
        ["dump", "--request-timeout", "5x"],
        ["dump", "--request-timeout", "1m30"],
        ["why-group", "pod", "--request-timeout", "soon"],
    ],
)
def test_bad_request_timeout(capsys, argv):
    assert run(argv) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "--request-timeout" in err
    assert "invalid duration" in err


@pytest.mark.parametrize("argv", [["-v=6"], ["-v6"], ["--v=6"], ["-v", "6"], ["--v", "6"]])
def test_log_level_as_kubectl_users_type_it(monkeypatch, argv):
    seen = []

    def client(_overrides, verbosity=0):
        seen.append(verbosity)
        raise click.UsageError("no cluster in this test")

    monkeypatch.setattr("kubectl_kcache.kube.client.Client", client)
    assert run(["doctor", *argv]) == EXIT_USAGE
    assert seen == [6]


@pytest.mark.parametrize("level", ["=x", "11", "-1", "six"])
def test_a_bad_log_level_is_a_usage_error(capsys, level):
    assert run(["doctor", f"--v={level}"]) == EXIT_USAGE
    assert "is not a log level from 0 to 10" in capsys.readouterr().err


def test_reconcile_from_file_needs_dry_run(capsys, tmp_path):
    path = tmp_path / "snap.yaml"
    path.write_text("kind: List\napiVersion: v1\nitems: []\n")
    assert run(["reconcile", "--from-file", str(path)]) == EXIT_USAGE
    assert "--from-file works only with --dry-run" in capsys.readouterr().err


def test_reconcile_renew_deadline_shorter_than_lease(capsys):
    assert run(["reconcile", "--dry-run", "--lease-duration", "10", "--renew-deadline", "10"]) == EXIT_USAGE
    assert "--renew-deadline" in capsys.readouterr().err


# ---- parse_duration ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30s", 30.0),
        ("1m30s", 90.0),
        ("500ms", 0.5),
        ("0", 0.0),
        ("2", 2.0),
        ("1h2m3s", 3723.0),
        ("1.5s", 1.5),
        ("2m", 120.0),
        ("1h", 3600.0),
        (" 10s ", 10.0),
        ("100us", 100e-6),
        (None, None),
    ],
)
def test_parse_duration(text, seconds):
    if seconds is None:
        assert parse_duration(text) is None
    else:
        assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["abc", "", "5x", "1m30", "s", "ms", "-5s", "1d", "1 s", "10S"])
def test_parse_duration_rejects(text):
    with pytest.raises(click.BadParameter):
        parse_duration(text)


@pytest.mark.parametrize("text", ["nan", "inf", "-1"])
def test_parse_duration_rejects_what_kubectl_rejects(text):
    with pytest.raises(click.BadParameter):
        parse_duration(text)


# ---- lazy imports ------------------------------------------------------------------------------------


def child(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize("argv", [["--help"], ["doctor", "--help"], ["why-group", "--help"], ["version"]])
def test_help_imports_no_heavy_module(argv):
    result = child(
        f"""
        import sys
        from kubectl_kcache.cli import run
        rc = run({argv!r})
        heavy = {{'kubernetes', 'rich', 'yaml', 'urllib3', 'msgspec'}}
        heavy = sorted({{m.split('.')[0] for m in sys.modules}} & heavy)
        print('HEAVY', heavy, 'RC', rc)
        """
    )
    assert result.returncode == 0, result.stderr
    assert "HEAVY [] RC 0" in result.stdout


def test_help_import_time_lists_no_heavy_module():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "kubectl_kcache", "--help"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0
    assert "kubectl kcache [command] [flags]" in result.stdout
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in result.stderr.splitlines() if "|" in line}
    assert "click" in imported
    assert not imported & {"kubernetes", "rich", "yaml", "msgspec"}


# ---- one-line errors ---------------------------------------------------------------------------------


def test_dump_with_missing_kubeconfig(capsys):
    assert run(["dump", "--kubeconfig", "/nonexistent"]) == EXIT_USAGE
    captured = capsys.readouterr()
    assert one_line(captured.err) == "error: --kubeconfig /nonexistent: no such file"
    assert captured.out == ""


def test_kubeconfig_flag_before_the_command(capsys):
    assert run(["--kubeconfig", "/nonexistent", "dump"]) == EXIT_USAGE
    assert "/nonexistent" in one_line(capsys.readouterr().err)


def test_no_kubeconfig_at_all(capsys):
    assert run(["dump"]) == EXIT_USAGE
    assert "no kubeconfig found" in one_line(capsys.readouterr().err)


def test_malformed_kubeconfig(capsys, tmp_path):
    path = tmp_path / "config"
    path.write_text("clusters: [\n  - {name: c\n")
    assert run(["dump", "--kubeconfig", str(path)]) == EXIT_USAGE
    assert str(path) in one_line(capsys.readouterr().err)


def write_kubeconfig(tmp_path: Path, server: str) -> str:
    path = tmp_path / "kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    return str(path)


def test_unknown_context_flag(capsys, tmp_path):
    path = write_kubeconfig(tmp_path, "https://127.0.0.1:1")
    assert run(["dump", "--kubeconfig", path, "--context", "nope"]) == EXIT_USAGE
    assert 'context "nope" not found' in one_line(capsys.readouterr().err)


def test_unreachable_api_server(capsys, tmp_path):
    path = write_kubeconfig(tmp_path, "https://127.0.0.1:1")
    assert run(["dump", "--kubeconfig", path, "--request-timeout", "5s"]) == EXIT_INCOMPLETE
    captured = capsys.readouterr()
    line = one_line(captured.err)
    assert line.startswith("error: cannot reach the API server at https://127.0.0.1:1")
    assert "connection refused" in line
    assert captured.out == ""


def test_unreachable_api_server_in_a_real_process(tmp_path):
    path = write_kubeconfig(tmp_path, "https://127.0.0.1:1")
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower() and k != "KUBECONFIG"}
    result = subprocess.run(
        [sys.executable, "-m", "kubectl_kcache", "dump", "--kubeconfig", path, "--request-timeout", "5s"],
        cwd=ROOT,
        env={**env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == EXIT_INCOMPLETE
    assert "cannot reach the API server" in one_line(result.stderr)


def test_internal_error_is_one_line_with_exit_4(capsys, monkeypatch):
    def boom(*_args, **_kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("kubectl_kcache.kube.client.Client", boom)
    assert run(["dump"]) == EXIT_INTERNAL
    line = one_line(capsys.readouterr().err)
    assert line.startswith("internal error: RuntimeError: boom (at ")
    assert "please report it" in line


def test_interrupt_exits_130(capsys, monkeypatch):
    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("kubectl_kcache.kube.client.Client", interrupted)
    assert run(["dump"]) == EXIT_INTERRUPTED
    assert one_line(capsys.readouterr().err) == "interrupted"


# ---- completion --------------------------------------------------------------------------------------


def test_complete_commands():
    assert complete_words([""]) == sorted(
        [
            "completion",
            "doctor",
            "dump",
            "explain",
            "help",
            "monitor",
            "options",
            "reconcile",
            "status",
            "version",
            "why-cached",
            "why-group",
            "why-not-cached",
            "why-not-ready",
        ]
    )
    assert complete_words(["d"]) == ["doctor", "dump"]
    assert complete_words(["nope", ""]) == []


def test_complete_options_and_choices():
    assert complete_words(["doctor", "--fail"]) == ["--fail-on"]
    assert complete_words(["doctor", "-o", "j"]) == ["json", "junit"]
    assert complete_words(["doctor", "--fail-on", ""]) == ["error", "warning", "info", "never"]


def test_run_from_a_thread(capsys):
    import threading

    result: dict[str, object] = {}

    def target() -> None:
        try:
            result["rc"] = run(["version"])
        except Exception as exc:  # noqa: BLE001 - the test reports it
            result["exc"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    assert result == {"rc": EXIT_OK}


def test_version_as_json(capsys):
    assert run(["version", "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    from kubectl_kcache import __version__

    assert doc["clientVersion"]["version"] == __version__ and doc["clientVersion"]["gitVersion"] == f"v{__version__}"
    assert doc["clientVersion"]["python"].count(".") == 2 and "/" in doc["clientVersion"]["platform"]


def test_complete_files_for_file_flags():
    from kubectl_kcache.cli import completion
    from kubectl_kcache.cli.complete import COMPLETE_FILES

    for flag in ("--from-file", "-f", "--kubeconfig", "--config"):
        assert completion(["doctor", flag, ""]) == ([], COMPLETE_FILES), flag
    assert completion(["why-not-cached", "--manifest", "po"]) == ([], COMPLETE_FILES)


def test_complete_check_ids_one_after_another():
    assert complete_words(["doctor", "--only", "group-"]) == ["group-selector", "group-overlap", "group-taints"]
    assert complete_words(["doctor", "--skip", "crds,con"]) == [
        "crds,config",
        "crds,control-plane",
        "crds,consumer-pull",
    ]
    assert complete_words(["doctor", "--only", "agent/r"]) == ["agent/rollout"]
    assert complete_words(["doctor", "--skip", "crds,nodes/c"]) == ["crds,nodes/cordoned"]


def test_complete_explain_codes():
    assert complete_words(["explain", "kcn-m"]) == ["kcn-missing"]
    assert complete_words(["explain", "kcn-missing/"]) == ["kcn-missing/missing"]


def test_complete_contexts_clusters_and_users_from_the_kubeconfig(tmp_path, monkeypatch):
    config = tmp_path / "config"
    config.write_text(
        "apiVersion: v1\nkind: Config\ncontexts:\n- {name: prod, context: {cluster: c1, user: u1}}\n"
        "- {name: staging, context: {cluster: c2, user: u1}}\nclusters:\n"
        "- {name: c1, cluster: {server: 'https://127.0.0.1:1'}}\n"
        "- {name: c2, cluster: {server: 'https://127.0.0.1:2'}}\nusers:\n- {name: u1, user: {}}\n"
    )
    monkeypatch.setenv("KUBECONFIG", str(config))
    assert complete_words(["doctor", "--context", ""]) == ["prod", "staging"]
    assert complete_words(["doctor", "--context", "st"]) == ["staging"]
    assert complete_words(["doctor", "--cluster", ""]) == ["c1", "c2"]
    assert complete_words(["doctor", "--kubeconfig", str(config), "--user", ""]) == ["u1"]


def test_live_completion_gives_nothing_quickly_when_the_cluster_is_unreachable(tmp_path, monkeypatch):
    import time

    config = tmp_path / "config"
    config.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: x\ncontexts:\n"
        "- {name: x, context: {cluster: c, user: u}}\n"
        "clusters:\n- {name: c, cluster: {server: 'https://127.0.0.1:1'}}\n"
        "users:\n- {name: u, user: {}}\n"
    )
    monkeypatch.setenv("KUBECONFIG", str(config))
    start = time.monotonic()
    assert complete_words(["why-group", ""]) == []
    assert complete_words(["doctor", "-n", ""]) == []
    assert time.monotonic() - start < 10


def test_unknown_shorthand_flag_as_kubectl(capsys):
    assert run(["status", "-x"]) == EXIT_USAGE
    assert capsys.readouterr().err == (
        "error: unknown shorthand flag: 'x' in -x\nSee 'kubectl kcache status --help' for usage.\n"
    )


def test_help_is_fast():
    """`kubectl kcache --help` is what people type first: under 0.15 s of CPU (the best of five runs; CPU
    time, not wall time, so that a busy machine does not fail it)."""
    import resource

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    best = 1.0
    for _ in range(5):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            [sys.executable, "-m", "kubectl_kcache", "--help"], cwd=ROOT, env=env, capture_output=True, check=True
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        best = min(best, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    assert best < 0.15, f"--help took {best:.3f} s of CPU"


def test_a_flag_without_its_value_as_kubectl(capsys):
    assert run(["why-group", "-o"]) == EXIT_USAGE
    assert capsys.readouterr().err == (
        "error: flag needs an argument: -o\nSee 'kubectl kcache why-group --help' for usage.\n"
    )


def test_every_example_in_help_parses():
    """The Examples sections are commands people paste: each names a real command and only flags it takes."""
    from kubectl_kcache.checks.registry import check_ids

    for name, text in app.EXAMPLES.items():
        for line in (x.strip() for x in text.splitlines()):
            if not line.startswith("kubectl kcache "):
                continue
            words = line.split(" > ")[0].split()[2:]
            cmd = cli.main.commands[words[0]] if words else cli.main
            known = {o for p in cmd.params for o in getattr(p, "opts", [])}
            for word in words[1:]:
                if word.startswith("-"):
                    assert word.split("=")[0] in known, f"{name}: {line}: {word}"
            if "--only" in words:
                assert set(words[words.index("--only") + 1].split(",")) <= set(check_ids()), line


def test_a_socket_closed_under_a_command_is_an_error_not_a_kill():
    """SIGPIPE stays ignored: writing to a connection the API server closed (a restart under `reconcile`)
    raises EPIPE for the client to report and retry, instead of killing the process (exit -13)."""
    import signal
    import socket

    assert run(["version"]) == 0
    assert signal.getsignal(signal.SIGPIPE) == signal.SIG_IGN
    ours, theirs = socket.socketpair()
    theirs.close()
    with pytest.raises(BrokenPipeError):
        for _ in range(100):
            ours.send(b"x" * 65536)
    ours.close()
