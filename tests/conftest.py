import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.pop("NO_COLOR", None)
# the size of the terminal pytest runs in is not the tests' (pytest-xdist's workers even get COLUMNS=80 LINES=24):
# a test that wants a width sets it
for _var in ("COLUMNS", "LINES"):
    os.environ.pop(_var, None)

# CI (.ci/run) runs the property tests on the same examples every time: a landing is decided by the code, not
# by which strings Hypothesis happened to draw that day; by hand they explore anew on every run
from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


def pytest_collection_modifyitems(config, items):
    """With `-n` (./run-tests runs two workers, `--dist loadgroup`): every end-to-end test on one worker, which
    owns the one test bed they share and reset, while the other runs the rest; the tests of any other module
    stay together, so its module fixtures (a release build, a browser) are made once."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    import pytest

    for item in items:
        path = item.nodeid.split("::", 1)[0]
        item.add_marker(pytest.mark.xdist_group("testbed" if path.startswith("tests/e2e/") else path))
