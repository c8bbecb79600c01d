"""Every check over arbitrary mixes of the fixtures' objects: no crash, and reports that keep their promises."""

from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_kcache.checks import run_doctor
from kubectl_kcache.checks.model import SEVERITIES, STATUSES
from kubectl_kcache.snapshot.model import SnapshotMeta, build

from .conftest import HERE, TAKEN_AT

ITEMS = [
    doc
    for path in sorted(Path(HERE).rglob("*.yaml"))
    if path.parent.name != "runner"
    for doc in yaml.safe_load_all(path.read_text())
    if doc
]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(range(len(ITEMS))), max_size=40))
def test_any_mix_of_objects(picks):
    snap = build([ITEMS[i] for i in picks], meta=SnapshotMeta(taken_at=TAKEN_AT), reads_assumed=True)
    report = run_doctor(snap)
    statuses = {c.id: c.status for c in report.checks}
    assert set(statuses.values()) <= set(STATUSES)
    for f in report.findings:
        assert f.severity in SEVERITIES
        assert statuses[f.check] in ("pass", "fail")
        assert f.object.kind and f.object.name and f.message
        if f.severity != "info":
            assert f.hint, f"{f.check}: no hint for {f.message}"
            assert statuses[f.check] == "fail"
    for check_id, status in statuses.items():
        if status == "fail":
            assert any(f.check == check_id and f.severity != "info" for f in report.findings)
