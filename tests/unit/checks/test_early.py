"""Doctor at the wire (checks/early.py): a check run as soon as its lists have arrived, on the snapshot of just
those lists, gives the result it gives on the whole snapshot, so the report is the same whichever list arrives
last. Checked on every check's fixtures, with each big list (nodes, KernelCacheNodes, pods, ...) arriving last."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kubectl_kcache.checks import run_doctor
from kubectl_kcache.checks.common import facts, forget
from kubectl_kcache.checks.early import EarlyChecks
from kubectl_kcache.snapshot import kinds
from kubectl_kcache.snapshot import plan as readplan
from kubectl_kcache.snapshot.model import ClusterSnapshot

from .conftest import HERE, load

FIXTURES = sorted(
    (p.parent.name, p.name) for p in HERE.glob("*/*.yaml") if p.parent.name != "base" and p.name != "suppressions.yaml"
)  # rules, not objects
# the lists that arrive last on a large cluster, one at a time; and the job namespace's, which wait for the config
LAST = ("nodes", "kernelcachenodes", "pods", "kernelcaches", "kernelcachecaptures", "events", "jobs")


def arrived(snapshot: ClusterSnapshot, missing: str) -> tuple[frozenset, ClusterSnapshot]:
    """The plan's lists that have arrived when every one but those of resource `missing` is done, and the
    snapshot of only those (its objects and its reads)."""
    job_ns = facts(snapshot).config.job_namespace
    forget()
    done = frozenset(readplan.resolve(s, None, job_ns) for s in readplan.DOCTOR if s.plural != missing)
    field = kinds.for_resource(next(s.resource for s in readplan.DOCTOR if s.plural == missing)).field
    partial = replace(snapshot, reads=tuple(r for r in snapshot.reads if r.resource != missing), **{field: ()})
    return done, partial


@pytest.mark.parametrize("missing", LAST)
@pytest.mark.parametrize(("check_id", "fixture"), FIXTURES)
def test_checks_run_early_give_the_same_report(check_id, fixture, missing):
    full = load(check_id, fixture)
    expected = run_doctor(full)
    done, partial = arrived(full, missing)
    early = EarlyChecks()
    early(done, lambda: partial)
    ran = set(early.results)
    assert ran  # the config and the small lists are in: some checks ran before the last list
    for spec in early.specs:  # none that reads the missing list
        if spec.id in ran:
            assert all(lst.plural != missing for r in spec.reads for lst in r.lists), spec.id
    report = run_doctor(full, early=early.results)
    assert report.to_dict() == expected.to_dict()


def test_nothing_runs_before_the_configuration():
    full = load()
    job_ns = facts(full).config.job_namespace
    forget()
    done = frozenset(readplan.resolve(s, None, job_ns) for s in readplan.DOCTOR if s != readplan.CONFIGMAP)
    early = EarlyChecks()
    early(done, lambda: full)
    assert early.results == {}  # every check asks whether the feature is on first


def test_a_check_with_its_lists_done_runs_once():
    full = load()
    done, partial = arrived(full, "nodes")
    early = EarlyChecks()
    made = []
    early(done, lambda: made.append(1) or partial)
    first = dict(early.results)
    early(done, lambda: made.append(1) or partial)  # the next list arrives: nothing new can run
    assert early.results == first and len(made) == 1  # the snapshot of the lists done: made once (the job
    # namespace and the checks that could run), not again when no check can run
