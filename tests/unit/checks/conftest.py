"""Fixtures for the doctor's checks: a healthy base cluster (tests/unit/checks/base/) plus per-check YAML
under tests/unit/checks/<id>/, loaded as `--from-file` would load them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import msgspec
import pytest

from kubectl_kcache.checks import run_doctor
from kubectl_kcache.checks.model import CheckResult, DoctorReport, Finding
from kubectl_kcache.snapshot import kinds
from kubectl_kcache.snapshot.files.from_files import load_files
from kubectl_kcache.snapshot.model import ClusterSnapshot
from kubectl_kcache.snapshot.reads import Read

HERE = Path(__file__).resolve().parent
BASE = HERE / "base"
BASE_FILES = ("install", "nodes", "groups", "agent", "caches")
TAKEN_AT = "2026-11-29T10:00:00Z"


def load(
    check_id: str | None = None, *files: str, without: Iterable[str] = (), taken_at: str = TAKEN_AT, plain: bool = False
) -> ClusterSnapshot:
    """The base cluster (less the base files in `without`) plus fixture files of `check_id`; later
    objects replace earlier ones of the same kind, namespace and name. The fixtures stand for a whole
    cluster: every read is recorded ok (a kind without objects has none), unless `plain`, where the reads
    are what plain files give (a kind absent from the files is not in the input)."""
    skip = set(without)
    paths = [str(BASE / f"{b}.yaml") for b in BASE_FILES if b not in skip]
    paths += [str(HERE / (check_id or "") / f) for f in files]
    snap = load_files(paths)
    snap = replace(snap, meta=msgspec.structs.replace(snap.meta, taken_at=taken_at))
    return snap if plain else with_reads(snap)


def drop(snapshot: ClusterSnapshot, kind: str, name: str, namespace: str | None = None) -> ClusterSnapshot:
    """The snapshot without one object."""
    field = next(k.field for k in kinds.KINDS if k.kind == kind)
    kept = tuple(
        x for x in getattr(snapshot, field) if not (x.meta.name == name and (x.meta.namespace or None) == namespace)
    )
    assert len(kept) < len(getattr(snapshot, field)), f"{kind} {namespace}/{name} not in the snapshot"
    return replace(snapshot, **{field: kept})


def with_reads(snapshot: ClusterSnapshot, *reads: tuple[str, str | None, str]) -> ClusterSnapshot:
    """The snapshot as a dump whose reads are recorded: every resource ok except those given as
    (resource, namespace, status)."""
    given = {(r, ns): status for r, ns, status in reads}
    recorded = [Read(r, ns, s) for (r, ns), s in given.items()]
    for resource in kinds.PLURALS:
        if not any(r == resource for r, _ in given):
            recorded.append(Read(resource, None, "ok"))
    return replace(snapshot, reads=tuple(recorded), reads_assumed=False)


def doctor(snapshot: ClusterSnapshot, *ids: str, **kw) -> DoctorReport:
    return run_doctor(snapshot, only=ids, **kw)


def run_check(check_id: str, snapshot: ClusterSnapshot) -> tuple[CheckResult, list[Finding]]:
    report = run_doctor(snapshot, only=[check_id])
    assert [c.id for c in report.checks] == [check_id]
    return report.checks[0], list(report.findings)


def one(findings: list[Finding], **match: object) -> Finding:
    """The single finding whose attributes (and object.kind/name via kind=, name=) equal `match`."""

    def ok(f: Finding) -> bool:
        for k, v in match.items():
            have = getattr(f.object, k) if k in ("kind", "name", "namespace") else getattr(f, k)
            if have != v:
                return False
        return True

    found = [f for f in findings if ok(f)]
    assert len(found) == 1, f"expected one finding matching {match}, got {len(found)}: {findings}"
    return found[0]


@pytest.fixture
def base() -> ClusterSnapshot:
    return load()


# the hint that triggers KServe's node pass for group h100 (checks/common.py touch_group_hint)
TOUCH_H100 = 'kubectl annotate kernelcachenodegroup h100 kcache.kserve.io/touched-at="$(date +%s)" --overwrite'
