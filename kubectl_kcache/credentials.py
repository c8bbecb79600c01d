"""What counts as a credential, and how it is hidden wherever the plugin shows a command line or a server: a page
made for sharing, the `source` of machine formats, a dump's meta, the -v log, error lines.

A credential is the value of --token, --password and --client-key, and the user information, query and fragment
of a server URL (`https://admin:pw@host` makes the password part of the address). Who is impersonated (--as,
--as-group, --as-uid) and the username are identities, not secrets: they stay, so the reader knows who asked.
"""

from __future__ import annotations

from collections.abc import Sequence

REDACTED = "REDACTED"
SECRET_FLAGS = ("--token", "--password", "--client-key")
URL_FLAGS = ("--server", "-s")


def redact_url(url: str) -> str:
    """`url` without user information, query or fragment; anything that is not a URL is returned as it is."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        scheme, sep, rest = url.partition("://")  # not a URL urllib reads, but no password may stay
        return scheme + sep + rest.rpartition("@")[2] if sep else url
    netloc = parts.netloc.rpartition("@")[2]
    if not parts.scheme or not netloc:
        return url
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def redact_argv(argv: Sequence[str]) -> list[str]:
    """A command line with the value of every credential flag replaced, in both `--flag value` and `--flag=value`
    forms; a server URL keeps its address without credentials."""
    out: list[str] = []
    hide = None  # how to show the next word: it is the value of the flag before it
    for word in argv:
        if hide is not None:
            out.append(hide(word))
            hide = None
            continue
        name, eq, value = word.partition("=")
        if name in SECRET_FLAGS:
            out.append(f"{name}={REDACTED}" if eq else word)
            hide = None if eq else (lambda _w: REDACTED)
        elif name in URL_FLAGS:
            out.append(f"{name}={redact_url(value)}" if eq else word)
            hide = None if eq else redact_url
        elif word.startswith("-s") and not word.startswith("--"):  # `-sURL`, as click takes a short flag
            out.append("-s" + redact_url(word[2:]))
        else:
            out.append(word)
    return out
