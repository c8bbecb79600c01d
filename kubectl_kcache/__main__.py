"""Entry points: `kubectl-kcache` (run by kubectl as `kubectl kcache`) and `kubectl_complete-kcache`."""

import sys

if sys.version_info < (3, 10):  # noqa: UP036 - the one line older interpreters must be able to print
    sys.stderr.write("kubectl-kcache needs Python 3.10 or newer (this is %d.%d)\n" % sys.version_info[:2])  # noqa: UP031
    sys.exit(2)


def main() -> None:
    from .cli import run

    sys.exit(run(sys.argv[1:]))


def complete() -> None:
    """kubectl's plugin completion hook: kubectl calls `kubectl_complete-kcache <words...>`."""
    from .cli import completion

    words, directive = completion(sys.argv[1:])
    for word in words:
        print(word)
    print(f":{directive}")  # cobra's ShellCompDirective: 0 lets the shell complete files, 4 does not


if __name__ == "__main__":
    main()
