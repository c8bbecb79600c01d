"""kubectl's plugin completion protocol: the candidates for the last word of a command line, and cobra's
directive (let the shell complete file names, or not).
"""

from __future__ import annotations

import os

import click

from .app import ALIASES, SUMMARIES, main
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


DESCRIPTION_WIDTH = 60  # a description is one line beside the candidate (zsh and fish show it, cobra style)


def complete_words(words: list[str]) -> list[str]:
    """Candidates for the last word, for kubectl's plugin completion."""
    return completion(words)[0]


def completion(words: list[str]) -> tuple[list[str], int]:
    """Candidates for the last word and cobra's directive (see `described`)."""
    candidates, directive = described(words)
    return [word for word, _ in candidates], directive


def _short(text: str | None) -> str:
    """The first sentence of a help text, on one line and at most DESCRIPTION_WIDTH characters (cut at a
    space, never in a word)."""
    line = " ".join((text or "").split())
    sentence = line.split(". ")[0].split(": ")[0].rstrip(".")
    if len(sentence) <= DESCRIPTION_WIDTH:
        return sentence
    return sentence[: sentence.rfind(" ", 0, DESCRIPTION_WIDTH - 1)].rstrip(",;:") + "…"


def described(words: list[str]) -> tuple[list[tuple[str, str]], int]:
    """Candidates for the last word, each with a short description ("" when none: a name is its own
    description), and cobra's directive: commands, flags, choices, check ids and codes, kubeconfig
    contexts, clusters and users, files for file flags, and (live, with a short timeout) namespaces, pods
    and captures."""
    current = words[-1] if words else ""
    if len(words) <= 1:
        return [
            (
                name,
                f"alias of {ALIASES[name]}"
                if name in ALIASES
                else _short(SUMMARIES.get(name) or cmd.get_short_help_str(limit=1000)),
            )
            for name, cmd in sorted(main.commands.items())
            if name.startswith(current) and not cmd.hidden
        ], COMPLETE_NO_FILES
    cmd = main.commands.get(words[0])
    if cmd is None:
        return [], COMPLETE_NO_FILES
    if current.startswith("-"):  # `-` lists the short flags too, `--` only the long ones
        flags = {
            n: _short(getattr(p, "help", ""))
            for p in cmd.params
            for n in [*getattr(p, "opts", []), *getattr(p, "secondary_opts", [])]
            if not getattr(p, "hidden", False)
        }
        return [(n, flags[n]) for n in sorted(flags) if n.startswith(current)], COMPLETE_NO_FILES
    prev = words[-2] if len(words) >= 2 else ""
    if prev in ("--only", "--skip") or (cmd.name == "explain" and not current.startswith("-")):
        titles = _check_titles()
        words_, directive = _values(words)
        return [(w, titles.get(w.rpartition(",")[2], "")) for w in words_], directive
    words_, directive = _values(words)
    return [(w, "") for w in words_], directive


def _check_titles() -> dict[str, str]:
    """Check ids and `check/code`s with what they are about."""
    from ..checks.registry import all_checks

    titles = {}
    for spec in all_checks():
        titles[spec.id] = _short(spec.title)
        for code in spec.codes:
            titles[f"{spec.id}/{code.id}"] = _short(f"{code.severity}: {code.summary}")
    return titles


def _values(words: list[str]) -> tuple[list[str], int]:
    """Candidates for a value (not a command or a flag): files, choices, check ids, kubeconfig names, live
    names."""
    current = words[-1]
    cmd = main.commands[words[0]]
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
    values = _flags(words, *names)
    return values[-1] if values else None


def _flags(words: list[str], *names: str) -> list[str]:
    """Every value of a repeatable flag among `words` (the word being completed aside), in order."""
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
