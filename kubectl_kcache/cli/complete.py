"""kubectl's plugin completion protocol: the candidates for the last word of a command line, and cobra's
directive (let the shell complete file names, or not).
"""

from __future__ import annotations

import os

import click

from .app import main
from .flags import make_client

# cobra's shell completion directives (kubectl's plugin completion protocol)
COMPLETE_FILES = 0  # ShellCompDirectiveDefault: let the shell complete file names
COMPLETE_NO_FILES = 4  # ShellCompDirectiveNoFileComp
FILE_FLAGS = (
    "-f",
    "--from-file",
    "--kubeconfig",
    "--config",
    "--manifest",
    "--file",
    "--certificate-authority",
    "--client-certificate",
    "--client-key",
    "--cache-dir",
)
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
        names = sorted(
            {
                n
                for p in cmd.params
                for n in [*getattr(p, "opts", []), *getattr(p, "secondary_opts", [])]
                if not getattr(p, "hidden", False)
            }
        )
        return [n for n in names if n.startswith(current)], COMPLETE_NO_FILES
    prev = words[-2] if len(words) >= 2 else ""
    if prev in FILE_FLAGS:
        return [], COMPLETE_FILES
    for p in cmd.params:
        kind = getattr(p, "type", None)
        if prev in getattr(p, "opts", []) and isinstance(kind, click.Choice):
            return [str(c) for c in kind.choices if str(c).startswith(current)], COMPLETE_NO_FILES
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
    from ..checks.registry import all_checks

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


def _readable_now(path: str, folders: bool = False) -> bool:
    """Whether completion may read `path`: a regular file (or, with `folders`, a folder). A FIFO, a device or
    stdin would keep the shell waiting until someone writes to it."""
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISREG(mode) or (folders and stat.S_ISDIR(mode))


def _kubeconfigs(words: list[str]) -> list[str] | None:
    """The kubeconfig files the command line would read, or None when one of them is not a regular file."""
    from ..kube.kubeconfig import kubeconfig_files

    try:
        files = kubeconfig_files(_flag(words, "--kubeconfig"), os.environ)
    except Exception:  # noqa: BLE001 - completion never fails loudly
        return None
    return files if all(_readable_now(f) for f in files) else None


def _kubeconfig_names(words: list[str], section: str, current: str) -> list[str]:
    from ..kube.kubeconfig import merge_kubeconfigs

    files = _kubeconfigs(words)
    if files is None:
        return []
    try:
        merged = merge_kubeconfigs(files)
    except Exception:  # noqa: BLE001 - completion never fails loudly
        return []
    names = {str(e.get("name")) for e in merged.get(section) or [] if isinstance(e, dict) and e.get("name")}
    return sorted(n for n in names if n.startswith(current))


def _live_candidates(command: str, words: list[str], prev: str, current: str) -> list[str]:
    """Namespaces after -n, pods for why-* commands, captures after --capture: listed live, 2 s at most."""
    kinds = {("-n", ""): "namespaces", ("--namespace", ""): "namespaces", ("--capture", "why-group"): "captures"}
    what = kinds.get((prev, "")) or kinds.get((prev, command))
    takes_value = any(
        prev in getattr(p, "opts", []) and not getattr(p, "is_flag", False)
        for p in main.commands[command].params
        if isinstance(p, click.Option)
    )
    if what is None and command in ("why-group", "why-not-cached", "why-cached") and not takes_value:
        what = "pods"
    if what is None and command == "why-not-ready" and not takes_value:
        what = "kernelcaches"
    if what is None:
        return []
    from_files = _flags(words, "-f", "--from-file")
    if from_files:  # offline: the names in the snapshot files, never the cluster
        from .completion_scripts import names_from_files

        readable = [p for p in from_files if _readable_now(p, folders=True)]
        names = names_from_files(readable, what, _flag(words, "-n", "--namespace")) if readable else []
        return [n for n in names if n.startswith(current)]
    flags = {
        key: _flag(words, *names)
        for key, names in (
            ("kubeconfig", ("--kubeconfig",)),
            ("context", ("--context",)),
            ("cluster", ("--cluster",)),
            ("user", ("--user",)),
            ("namespace", ("-n", "--namespace")),
            ("server", ("--server", "-s")),
        )
    }
    flags["request_timeout"] = LIVE_TIMEOUT
    if _kubeconfigs(words) is None:
        return []
    try:
        from ..snapshot.live import names_for_completion

        client = make_client({k: v for k, v in flags.items() if v})
        names = names_for_completion(client, what, flags.get("namespace") or client.namespace)
    except Exception:  # noqa: BLE001 - completion never fails loudly
        return []
    return sorted(n for n in names if n.startswith(current))
