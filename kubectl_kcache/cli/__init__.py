"""The command line: kubectl's flag set, the commands, output selection and exit codes.

Errors are turned into one line and an exit code in `run` and nowhere else. Heavy modules (kubernetes,
rich, yaml) are imported inside the commands so that `--help` stays fast.

Importing the package registers every command on the group `main` (`app.py`); `running.run` maps the outcome.
"""

from . import doctor, dump, monitor, reconcile, status, why_group, why_not_cached, why_not_ready  # noqa: F401 - registers the commands
from .app import main as main
from .complete import completion as completion
from .complete import described as described
from .running import run as run
