"""The test bed for end-to-end tests: one real control plane per session (with KWOK, the controller
manager and the scheduler), reset to a known state before each test."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from .cluster import Cluster

TESTBED = Path(__file__).resolve().parent.parent / "testbed" / "testbed"


@pytest.fixture(scope="session")
def testbed() -> Cluster:
    given = os.environ.get("KCACHE_TESTBED_DIR")
    d = Path(given) if given else Path(tempfile.mkdtemp(prefix="kcache-testbed-"))
    proc = subprocess.run(
        [str(TESTBED), "up", "--dir", str(d), "--simulate"], capture_output=True, text=True, timeout=3600
    )
    if proc.returncode != 0:
        pytest.fail(f"the test bed did not come up (e2e tests never skip):\n{proc.stderr[-4000:]}", pytrace=False)
    state = json.loads((d / "state.json").read_text())
    yield Cluster(d, state)
    if not given and not os.environ.get("KCACHE_TESTBED_KEEP"):
        subprocess.run([str(TESTBED), "down", "--dir", str(d)], capture_output=True, timeout=120)
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def cluster(testbed: Cluster) -> Cluster:
    """The test bed, reset: cluster-scoped objects are shared, so namespaces isolate nothing."""
    testbed.reset()
    return testbed
