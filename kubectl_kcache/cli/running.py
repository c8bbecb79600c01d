"""Running a command line: click's outcome mapped to the documented exit codes (0 ok, 1 findings, 2 usage or
bad input, 3 incomplete, 4 internal, 130 Ctrl-C), output that cannot be written, and one clear line for
every error (never a traceback).
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from typing import Any

import click

from .. import __version__
from ..errors import (
    EXIT_INCOMPLETE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    IncompleteError,
    InputError,
    KcacheError,
)
from ..text import escape
from .app import ISSUES_URL, PROG, main, show_usage_error
from .reading import KEPT

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


class _Tolerant:
    """Standard error that may fail (`2>/dev/full`, a closed pipe): a warning or an error line that cannot be
    written is dropped, so that the answer on standard output still comes and the exit code stays the
    outcome's."""

    def __init__(self, stream: Any):
        self._stream = stream

    def write(self, text: Any) -> int:
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError):
            pass
        return len(text)

    def flush(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


_OUTPUT_ERRORS = ("EPIPE", "ENOSPC", "EBADF", "EIO", "EFBIG", "EDQUOT")


def _output_failed(exc: OSError) -> int:
    """The output could not be written: a closed pipe (`| head`) ends quietly, as it ends kubectl; a full
    disk or a closed stdout is one line."""
    import errno

    # nothing more can go out; do not let the interpreter's final flush complain
    sys.stdout = _ClosedOutput()  # type: ignore[assignment]
    if exc.errno == errno.EPIPE:
        return EXIT_OK
    with contextlib.suppress(OSError, ValueError, AttributeError):
        sys.stderr.write(f"error: cannot write the output: {exc.strerror or exc}\n")
    return EXIT_USAGE


def _is_output_error(exc: BaseException) -> bool:
    import errno

    return isinstance(exc, OSError) and exc.errno in {getattr(errno, n, -1) for n in _OUTPUT_ERRORS}


def run(argv: list[str], exiting: bool = False) -> int:
    """Run the CLI; every outcome becomes an exit code here. `exiting`: the process ends right after (the
    console entry), so what the command kept (`reading.keep`) is left for the end of the process to free."""
    # SIGPIPE stays ignored (Python's default): `| head` ends us quietly through EPIPE on stdout
    # (`_output_failed`), while a socket the API server closed mid-request stays an error the client reports;
    # SIGPIPE's default action killed `reconcile` when the API server restarted under it.
    if sys.stdout is None:
        sys.stdout = _ClosedOutput()  # type: ignore[assignment]
    if sys.stderr is None or _closed_descriptor(sys.stderr):
        sys.stderr = _Discarded()  # type: ignore[assignment]
    stderr = sys.stderr
    if not isinstance(stderr, (_Discarded, _Tolerant)):
        sys.stderr = _Tolerant(stderr)  # type: ignore[assignment]
    try:
        code = _run(argv)
        sys.stdout.flush()
    except OSError as exc:
        if _is_output_error(exc):
            return _output_failed(exc)
        raise
    finally:
        if isinstance(sys.stderr, _Tolerant):
            sys.stderr = stderr
        if not exiting:  # (tests run many commands in one process)
            gc.unfreeze()  # what reading.load_snapshot_files froze, collectable again
            KEPT.clear()
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
        show_usage_error(exc)
        return EXIT_USAGE
    except click.ClickException as exc:
        sys.stderr.write(f"error: {escape(exc.format_message())}\n")
        return EXIT_USAGE
    except (click.exceptions.Abort, KeyboardInterrupt):
        sys.stderr.write("interrupted\n")
        return EXIT_INTERRUPTED
    except InputError as exc:
        sys.stderr.write(f"error: {escape(str(exc))}\n")
        return EXIT_USAGE
    except IncompleteError as exc:
        impersonated = any(a == "--as" or a.startswith("--as=") for a in argv)
        sys.stderr.write(f"error: {escape(str(exc))}{escape(access_hint_line(exc, {'as_user': impersonated}))}\n")
        return EXIT_INCOMPLETE
    except KcacheError as exc:
        sys.stderr.write(f"error: {escape(str(exc))}\n")
        return exc.exit_code
    except BrokenPipeError as exc:
        return _output_failed(exc)
    except SystemExit:  # click's answer to EPIPE on stdout (`| head`); the commands themselves never exit
        import errno

        return _output_failed(BrokenPipeError(errno.EPIPE, "the reader of the output went away"))
    except OSError as exc:
        if _is_output_error(exc):
            return _output_failed(exc)
        return _internal_error(exc)
    except Exception as exc:  # noqa: BLE001 - a bug: say so, say where, never a raw traceback
        return _internal_error(exc)
    return int(result or 0)


def access_hint_line(refused: Any, flags: dict[str, Any]) -> str:
    """The end of an exit-3 error line when reads were refused: who, the role to bind, `kubectl auth can-i`.
    `refused`: a snapshot's reads, or an IncompleteError (its refused reads, or itself when a 403)."""
    from ..errors import Forbidden
    from ..report.access_hint import Refused, access_hint, from_reads

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
