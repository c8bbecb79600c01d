"""One read rule (`reads.covering`, `reads.require`) for every command.

On each example dump with exactly one recorded list forbidden, every command names only that list, and
doctor, status, why-group, why-not-cached and reconcile's plan agree on what is usable: each refuses (or,
for the doctor, reports itself incomplete) exactly when a list it needs is covered by nothing but the
forbidden read. A hypothesis test does the same over random read sets, and the covering rule itself is
checked on selectors."""

from __future__ import annotations

import dataclasses
from functools import cache
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_kcache.checks import all_checks, run_doctor
from kubectl_kcache.errors import IncompleteError, InputError
from kubectl_kcache.explain import why_group, why_not_cached
from kubectl_kcache.explain.status import fleet_status
from kubectl_kcache.kernelcache import constants as c
from kubectl_kcache.kube import resources as r
from kubectl_kcache.reconcile.planner import checked_plan
from kubectl_kcache.snapshot import plan as readplan
from kubectl_kcache.snapshot.files.from_files import load_files
from kubectl_kcache.snapshot.kinds import ListSpec
from kubectl_kcache.snapshot.model import ClusterSnapshot
from kubectl_kcache.snapshot.reads import NotInInput, Read, Unread, Unreadable, covering, covers

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE_NAMES = ("healthy-cluster.yaml", "broken-cluster.yaml")


@cache
def example(name: str) -> ClusterSnapshot:
    return load_files([str(EXAMPLES / name)])


def with_reads(snapshot: ClusterSnapshot, reads: list[Read]) -> ClusterSnapshot:
    return dataclasses.replace(snapshot, reads=tuple(reads))


# ---- what each command says ------------------------------------------------------------------------------


def refusal(func: Any, *args: Any, **kw: Any) -> tuple[Unread, ...] | None:
    """The lists a command names when it refuses (None when it answers)."""
    try:
        func(*args, **kw)
    except (Unreadable, NotInInput) as exc:
        return exc.unread
    return None


def doctor_unread(snapshot: ClusterSnapshot) -> tuple[Unread, ...]:
    report = run_doctor(snapshot)
    return tuple(u for check in report.checks for u in check.missing)


def explanations(base: ClusterSnapshot) -> list[tuple[str, Any, dict[str, Any]]]:
    """why-group for every capture, why-not-cached for every serving pod of the full example."""
    out: list[tuple[str, Any, dict[str, Any]]] = []
    for cap in base.captures:
        out.append(("why-group", why_group.explain, {"namespace": cap.namespace, "capture_name": cap.name}))
    for pod in base.pods:
        if c.LABEL_ISVC in pod.meta.labels and pod.namespace not in (c.KSERVE_NAMESPACE,):
            out.append(("why-not-cached", why_not_cached.explain, {"namespace": pod.namespace, "pod_name": pod.name}))
    return out


def commands(base: ClusterSnapshot, snapshot: ClusterSnapshot) -> dict[str, tuple[Unread, ...] | None]:
    said: dict[str, tuple[Unread, ...] | None] = {
        "status": refusal(fleet_status, snapshot, None),
        "plan": refusal(checked_plan, snapshot),
    }
    for name, func, kw in explanations(base):
        key = f"{name} {kw['namespace']}/{kw.get('capture_name') or kw.get('pod_name')}"
        try:
            said[key] = refusal(func, snapshot, **kw)
        except InputError as exc:  # a pod or capture not found is an answer, not a refusal on reads
            assert "not found" in str(exc) or "no " in str(exc), exc
            said[key] = None
    return said


def status_needs(snapshot: ClusterSnapshot) -> list[ListSpec]:
    needs = [s for s in readplan.STATUS if s != readplan.CONFIGMAP]
    needs = [readplan.resolve(s) for s in needs]
    if any(not kc.node_group for kc in snapshot.kernel_caches):
        needs.append(readplan.CONFIGMAP)
    return needs


def depends(snapshot: ClusterSnapshot, needs: list[ListSpec], absent_is_none: bool = False) -> bool:
    bad = [covering(snapshot, s) for s in needs]
    return any(not x.ok and not (absent_is_none and x.status == "absent") for x in bad)


# ---- every single-forbidden variant of both examples ---------------------------------------------------------


def single_forbidden() -> list[tuple[str, int]]:
    return [(name, i) for name in EXAMPLE_NAMES for i in range(len(example(name).reads))]


@pytest.mark.parametrize(("name", "index"), single_forbidden())
def test_one_forbidden_list_is_the_only_list_any_command_names(name: str, index: int):
    base = example(name)
    forbidden = msgspec.structs.replace(base.reads[index], status="forbidden", count=0)
    reads = list(base.reads)
    reads[index] = forbidden
    snapshot = with_reads(base, reads)

    named = doctor_unread(snapshot)
    assert all(u.read == forbidden for u in named), [str(u) for u in named if u.read != forbidden]
    said = commands(base, snapshot)
    for command, unread in said.items():
        assert unread is None or all(u.read == forbidden for u in unread), (command, [str(u) for u in unread])

    # they agree on what is usable: each refuses exactly when a list it needs is covered only by the forbidden read
    assert (said["status"] is not None) == depends(snapshot, status_needs(snapshot), absent_is_none=True)
    assert (said["plan"] is not None) == depends(snapshot, list(readplan.RECONCILE_PLAN))
    doctor_needs = [
        readplan.resolve(s, None, "kserve-kernelcache-jobs")
        for check in all_checks()
        for read in check.reads
        for s in read.lists
    ]
    assert bool(named) == depends(snapshot, doctor_needs)
    # a read no command needs is not named by any; the doctor reads everything the others do
    if not named:
        assert all(v is None for v in said.values())


def test_only_the_serving_pods_list_forbidden_leaves_the_agent_pods_usable():
    """Issue 23: doctor named the agent pods in kserve (read fine) and status counted them; now both see
    that the forbidden list is the serving pods of every namespace, and only that."""
    base = example("healthy-cluster.yaml")
    reads = [
        msgspec.structs.replace(x, status="forbidden", count=0)
        if (x.resource, x.namespace, x.label_selector) == ("pods", None, c.LABEL_ISVC)
        else x
        for x in base.reads
    ]
    snapshot = with_reads(base, reads)
    report = run_doctor(snapshot)
    unread = sorted({str(u) for check in report.checks for u in check.missing})
    assert unread == ["forbidden: list pods"]
    assert {x.id for x in report.checks if x.missing} == {"consumer-pull", "webhook", "capture-identity", "capture"}
    assert fleet_status(snapshot, None).groups  # counts the agent pods: their own list was read


# ---- the doctor, status, why-* and the plan refuse together on the same partial input ------------------------

STATUSES = st.sampled_from(["ok", "ok", "ok", "forbidden", "failed", "not-in-input", "absent"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(EXAMPLE_NAMES), st.data())
def test_random_read_sets_every_command_names_exactly_the_unusable_lists(name: str, data: st.DataObject):
    base = example(name)
    statuses = data.draw(st.lists(STATUSES, min_size=len(base.reads), max_size=len(base.reads)))
    reads = [
        msgspec.structs.replace(x, status=s, count=x.count if s == "ok" else 0)
        for x, s in zip(base.reads, statuses, strict=True)
    ]
    snapshot = with_reads(base, reads)
    for unread in [doctor_unread(snapshot), *(v for v in commands(base, snapshot).values() if v)]:
        for u in unread:
            assert not covering(snapshot, u.spec).ok, str(u)  # never names a list that was read
            assert u.read in reads or u.read.status in ("not-in-input", "not-read"), str(u)
    said = commands(base, snapshot)
    assert (said["status"] is not None) == depends(snapshot, status_needs(snapshot), absent_is_none=True)
    assert (said["plan"] is not None) == depends(snapshot, list(readplan.RECONCILE_PLAN))
    # exit 3 when the cluster refused a list, 2 when only the files lack it
    for unread in (said["status"], said["plan"]):
        if unread:
            codes = {u.exit_code for u in unread}
            assert codes <= {2, 3}


@pytest.mark.parametrize("status", ["failed", "forbidden", "not-in-input"])
def test_a_read_not_ok_is_never_taken_as_read(status: str):
    """Issue 22 item 6: `failed` (or any status but ok) is not read, for doctor, status and the plan alike."""
    base = example("broken-cluster.yaml")
    reads = [
        msgspec.structs.replace(x, status=status, count=0, message="etcd timeout") if x.resource == "nodes" else x
        for x in base.reads
    ]
    snapshot = with_reads(base, reads)
    error = IncompleteError if status != "not-in-input" else InputError
    with pytest.raises(error, match="nodes"):
        fleet_status(snapshot, None)
    with pytest.raises(error, match="reconcile cannot answer: .*nodes"):
        checked_plan(snapshot)
    report = run_doctor(snapshot)
    assert ("kcn-missing", "skipped") in {(x.id, x.status) for x in report.checks}
    assert bool(report.unreadable) == (status != "not-in-input")


# ---- the covering rule ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("read", "spec", "expected"),
    [
        (Read("pods", None, "ok"), ListSpec(r.PODS, "kserve", "a=b"), True),  # all pods cover any pods
        (Read("pods", None, "ok", label_selector="x"), ListSpec(r.PODS, "kserve", "a=b"), False),
        (Read("pods", "kserve", "ok", label_selector="a=b"), ListSpec(r.PODS, "kserve", "a=b,c"), True),
        (Read("pods", "kserve", "ok", label_selector="a=b"), ListSpec(r.PODS, None, "a=b"), False),
        (Read("pods", "team", "ok"), ListSpec(r.PODS, "kserve"), False),
        (
            Read("nodes", None, "ok", field_selector="metadata.name=a"),
            ListSpec(r.NODES, field_selector="metadata.name=b"),
            False,
        ),
        (Read("nodes", None, "ok"), ListSpec(r.NODES, field_selector="metadata.name=b"), True),
        (Read("pods", None, "ok", label_selector="k in (a,b)"), ListSpec(r.PODS, None, "k in (a, b),z"), True),
    ],
)
def test_covers_is_exact(read: Read, spec: ListSpec, expected: bool):
    assert covers(read, spec) is expected


def test_an_ok_read_of_a_superset_wins_over_a_forbidden_narrower_one():
    snap = ClusterSnapshot(reads=(Read("pods", "kserve", "forbidden", label_selector="a=b"), Read("pods", None, "ok")))
    assert covering(snap, ListSpec(r.PODS, "kserve", "a=b")).ok


def test_an_old_dump_without_selectors_covers_what_it_named():
    snap = ClusterSnapshot(reads=(Read("pods", "kserve", "ok"), Read("pods", None, "forbidden")))
    assert covering(snap, readplan.AGENT_PODS).ok
    assert covering(snap, readplan.ISVC_PODS.in_namespace(None)).status == "forbidden"


# ---- plain exports that lack kinds: every command refuses (exit 2) exactly when it needs one of them -----------


@cache
def broken_items() -> list[dict[str, Any]]:
    import yaml

    return list(yaml.load((EXAMPLES / "broken-cluster.yaml").read_text(), Loader=yaml.CSafeLoader)["items"])


KINDS_IN_BROKEN = sorted({x["kind"] for x in broken_items()})


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sets(st.sampled_from(KINDS_IN_BROKEN), min_size=1, max_size=4))
def test_plain_exports_lacking_kinds_refuse_together(dropped: set[str]):
    import json
    import tempfile

    items = [x for x in broken_items() if x["kind"] not in dropped]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "export.json"
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
        snapshot = load_files([str(path)])
    base = example("broken-cluster.yaml")
    said = commands(base, snapshot)
    assert (said["status"] is not None) == depends(snapshot, status_needs(snapshot), absent_is_none=True)
    assert (said["plan"] is not None) == depends(snapshot, list(readplan.RECONCILE_PLAN))
    for unread in said.values():
        for u in unread or ():
            assert u.exit_code == 2 and u.read.status == "not-in-input", str(u)  # the files lack it: exit 2
    report = run_doctor(snapshot)
    doctor_needs = [
        readplan.resolve(s, None, "kserve-kernelcache-jobs")
        for check in all_checks()
        for read in check.reads
        for s in read.lists
    ]
    assert report.unreadable == ()  # nothing was refused by a cluster
    assert (report.summary()["incomplete"] > 0) == depends(snapshot, doctor_needs)
