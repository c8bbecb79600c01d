"""HTML pages (doctor's report, why-not-cached -A's hit rate): how the page says it was made, and where it goes.

A page is for a browser, not for the screen (popeye --save): asked for on a terminal it goes to a new file in the
current folder. Its name is predictable, so the file is created exclusively and never through a link someone
planted at that name; a folder that cannot take it is a usage error (exit 2), not a bug. A page is made for
sharing: the command line it shows carries no credential (`credentials.redact_argv`).
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from ..credentials import redact_argv
from ..errors import InputError
from ..text import command, escape

TRIES = 100  # names tried after the first is taken (`-2`, `-3`...): pages made in the same second, or planted


def run_facts(server_version: str, flags: dict[str, Any]) -> dict[str, str]:
    """How the page was made: the Kubernetes version, the kubeconfig context, the command line (its credentials
    replaced)."""
    return {
        "kubernetes": server_version,
        "context": flags.get("context") or "",
        "command": command("kubectl", "kcache", redact_argv(sys.argv[1:])),
    }


def write_page(render: Callable[[TextIO], None], kind: str, cluster: str) -> None:
    """The page on standard output; on a terminal, into a new file named after `kind` and the cluster (said on
    standard output)."""
    if not _isatty(sys.stdout):
        render(sys.stdout)
        return
    path = _new_file(kind, cluster, render)
    sys.stdout.write(f"wrote {escape(path)}\n")


def page_name(kind: str, cluster: str, stamp: str, attempt: int = 1) -> str:
    """`kcache-<kind>-<cluster>-<time>.html`: the cluster's last path part (an EKS ARN ends in its name), in
    characters safe in a file name."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", cluster.rsplit("/", 1)[-1]).strip("-.") or "cluster"
    return f"kcache-{kind}-{name[:60]}-{stamp}{f'-{attempt}' if attempt > 1 else ''}.html"


def _new_file(kind: str, cluster: str, render: Callable[[TextIO], None]) -> str:
    """Render into a file made for it (never an existing one, never through a link); its absolute path."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for attempt in range(1, TRIES + 2):
        path = page_name(kind, cluster, stamp, attempt)
        try:
            fd = os.open(path, flags, 0o644)
        except FileExistsError:  # a page of this second, or a link planted at its name: the next name
            continue
        except OSError as exc:
            raise InputError(
                f"cannot write the page {os.path.abspath(path)}: {exc.strerror or exc} (run it in a folder "
                "you can write to, or redirect it: -o html > page.html)"
            ) from None
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            render(out)
        return os.path.abspath(path)
    raise InputError(
        f"cannot write the page: {page_name(kind, cluster, stamp)} and the next {TRIES} names are taken "
        "(redirect it instead: -o html > page.html)"
    )


def _isatty(out: Any) -> bool:
    try:
        return bool(out.isatty())
    except (AttributeError, ValueError):
        return False
