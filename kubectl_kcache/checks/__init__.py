"""The doctor's checklist: one module per check, registered with a stable id (see registry.py).

Importing this package registers every check; `run_doctor` runs them over a snapshot.
"""

from . import (  # noqa: F401 - imported for their @check registration, in report order
    agent,
    cache_status,
    capture,
    capture_identity,
    capture_webhook,
    config,
    consumer_pull,
    control_plane,
    crds,
    group_overlap,
    group_selector,
    group_taints,
    kcn_missing,
    kcn_orphaned,
    node_images,
    nodes,
    registry_pull,
    sidecar,
    verification,
    webhook,
)
from .registry import all_checks, check_ids, get_check
from .runner import run_doctor
from .suppress import Suppression, load_suppressions

__all__ = ["all_checks", "check_ids", "get_check", "run_doctor", "Suppression", "load_suppressions"]
