"""Entry points: `kubectl-kcache` (run by kubectl as `kubectl kcache`) and `kubectl_complete-kcache`."""

import contextlib
import sys
from typing import NoReturn

if sys.version_info < (3, 10):  # noqa: UP036 - the one line older interpreters must be able to print
    sys.stderr.write("kubectl-kcache needs Python 3.10 or newer (this is %d.%d)\n" % sys.version_info[:2])  # noqa: UP031
    sys.exit(2)


def main() -> None:
    if sys.argv[1:2] == ["__complete"]:  # what the scripts of `kubectl kcache completion SHELL` run
        return complete(sys.argv[2:])
    import gc

    # the modules' objects live until the process ends: collections while they are made only walk them again
    # (~5 ms of every command's start)
    gc.disable()
    try:
        from .cli import run
    except KeyboardInterrupt:  # Ctrl-C while the modules load: the same exit as later, never a traceback
        _interrupted()
    finally:
        gc.enable()
    code = run(sys.argv[1:], exiting=True)
    # The end without the interpreter's teardown, which would free every object one by one and collect: 40-70 ms
    # after an answer over 10,000 KernelCacheNodes, a twentieth of the command. What the program registered to
    # run at exit still runs (the krew zipapp removes the folder it unpacked into), the output is flushed, and
    # the threads still running are daemons.
    import atexit
    import os

    with contextlib.suppress(Exception):
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def complete(words: list[str] | None = None) -> None:
    """kubectl's plugin completion hook: kubectl calls `kubectl_complete-kcache <words...>`; the shell
    scripts call `kubectl-kcache __complete <words...>`. Candidates are escaped: a name from a kubeconfig or
    a file is data, and the shell prints it. A candidate with a description is `word<TAB>description`, as
    cobra writes them (zsh and fish show the description; bash and kubectl's own completion drop it)."""
    try:
        from .cli import described
        from .text import escape

        candidates, directive = described(sys.argv[1:] if words is None else words)
        lines = [escape(word) + (f"\t{escape(text)}" if text else "") for word, text in candidates]
    except KeyboardInterrupt:
        _interrupted()
    try:
        for line in lines:
            print(line)
        print(f":{directive}", flush=True)  # cobra's ShellCompDirective: 0 lets the shell complete files, 4 not
    except BrokenPipeError:  # the reader stopped (`| head`): nothing more to say, and no traceback
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _interrupted() -> NoReturn:
    with contextlib.suppress(OSError, ValueError, AttributeError):
        sys.stderr.write("interrupted\n")
    sys.exit(130)


if __name__ == "__main__":
    main()
