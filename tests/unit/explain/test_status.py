"""status: the counting rules over a small fleet (tests/unit/explain/fixtures/status-fleet.yaml), the scope,
the reads it refuses to answer without, and the `KcacheStatus` document."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from kubectl_kcache.errors import IncompleteError, InputError
from kubectl_kcache.explain.status import StatusReport, fleet_status
from kubectl_kcache.kernelcache.caches import PHASES, effective_group, entry_phase
from kubectl_kcache.objects import KernelCache
from kubectl_kcache.provenance import Provenance
from kubectl_kcache.snapshot import kinds
from kubectl_kcache.snapshot.files.from_files import load_files
from kubectl_kcache.snapshot.model import ClusterSnapshot, build
from kubectl_kcache.snapshot.reads import Read
from tests import builders as b

FLEET = Path(__file__).parent / "fixtures" / "status-fleet.yaml"


def zero(**counts: int) -> dict[str, int]:
    return {"Ready": 0, "Pending": 0, "Pulling": 0, "Error": 0, **counts}


def cell(
    nodes: int,
    state: str | None = None,
    reason: str | None = None,
    not_ready: dict[str, int] | None = None,
    **phases: int,
) -> dict[str, object]:
    """A cache's cell in `status -o json`: its phases over the group's `nodes` Ready members, the Ready members
    without an entry, the entries on NotReady members, and KServe's state (None: not the cache's group)."""
    counts = zero(**phases)
    return {
        **counts,
        "nodeCount": nodes,
        "noEntry": nodes - sum(counts.values()),
        "notReady": zero(**(not_ready or {})),
        "state": state,
        "reason": reason,
    }


# a: a-1, a-2 and the cordoned a-4 Ready (counted, as KServe counts them), a-3 NotReady; ab: a-2; b: b-1 Ready,
# b-2 without a Ready condition (NotReady). No NotReady member carries an entry here.
FLEET_GROUPS = [
    {
        "name": "a",
        "selector": {"pool": "a"},
        "members": 4,
        "notReady": 1,
        "cordoned": 1,
        "kernelCacheNodes": 4,
        "agentReady": 2,
        "podsUsing": 0,
        "caches": {
            "other/c9": cell(3, "Error", "PreparationFailed", Error=1),
            "team/c1": cell(3, "Preparing", "Preparing", Ready=1, Pending=1, Pulling=1),
            "team/c2": cell(3, "Preparing", "Preparing", Pending=1, Pulling=1),
            "team/c3": cell(3, Ready=1),
        },
    },
    {
        "name": "ab",
        "selector": {"shared": "yes"},
        "members": 1,
        "notReady": 0,
        "cordoned": 0,
        "kernelCacheNodes": 1,
        "agentReady": 0,
        "podsUsing": 0,
        "caches": {"team/c1": cell(1, Pulling=1), "team/c3": cell(1, "Ready", "CacheReady", Ready=1)},
    },
    {
        "name": "b",
        "selector": {"gpu": "l40s", "pool": "b"},
        "members": 2,
        "notReady": 1,
        "cordoned": 0,
        "kernelCacheNodes": 1,
        "agentReady": 1,
        "podsUsing": 0,
        "caches": {
            "team/c4": cell(1, "Error", "PreparationFailed", Error=1),
            "team/c5": cell(1, "Preparing", "Preparing", Pending=1),
        },
    },
]
FLEET_UNASSIGNED = [
    {"name": "team/c6", "group": "missing", "reason": "group 'missing' (from spec.nodeGroupRef) does not exist"},
    {
        "name": "team/c7",
        "group": " a",
        "reason": "group ' a' (from spec.nodeGroupRef) does not exist (the name has surrounding white space, which "
        "KServe does not trim here)",
    },
]


@pytest.fixture
def fleet() -> ClusterSnapshot:
    return load_files([str(FLEET)])


def as_dump(snapshot: ClusterSnapshot, *reads: Read) -> ClusterSnapshot:
    """The snapshot as a dump that recorded its reads: every resource ok, except those given."""
    given = {(r.resource, r.namespace) for r in reads}
    recorded = list(reads) + [Read(res, None, "ok") for res in kinds.PLURALS if not any(r == res for r, _ in given)]
    return replace(snapshot, reads=tuple(recorded), reads_assumed=False)


# ---- the KServe rules -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("state", "phase"),
    [
        ("Ready", "Ready"),
        ("Error", "Error"),
        ("Pulling", "Pulling"),
        ("Pending", "Pending"),
        ("Extracting", "Pulling"),  # legacy (PVC design): unpacking after the pull, preparation in progress
        ("", "Pending"),  # the agent's first state for a new entry
        ("Rehydrating", "Pending"),  # a state this version does not know
        ("ready", "Pending"),  # states are case-sensitive, as in KServe's Go
    ],
)
def test_entry_phase(state, phase):
    assert entry_phase(state) == phase
    assert phase in PHASES


def test_effective_group_is_the_ref_else_the_default_untrimmed():
    with_ref = KernelCache.from_dict(b.kernel_cache("x", group_name="gpu"))
    without = KernelCache.from_dict(b.kernel_cache("x", group_name=None))
    assert effective_group(with_ref, "fallback") == "gpu"
    assert effective_group(without, " fallback ") == " fallback "
    assert effective_group(without, "") == ""


# ---- counting -------------------------------------------------------------------------------------


def test_fleet_counts_are_exact(fleet):
    status = fleet_status(fleet)
    doc = status.to_dict()
    assert doc.pop("totals") == {
        "groups": 3,
        "members": 7,
        "notReady": 2,
        "cordoned": 1,
        "kernelCacheNodesMissing": 1,
        "agentsNotReady": 4,
        "kernelCaches": 8,
        "unassignedCaches": 2,
        "entriesReady": 2,
        "entriesPending": 3,
        "entriesPulling": 2,
        "entriesError": 2,
        "noEntry": 3,  # c9's a-1 and a-2, c2's a-2: Ready members of the caches' own groups without an entry
        "entriesNotReady": 0,
        "podsUsing": 0,
    }
    assert doc.pop("podsUsing") == dict.fromkeys(status.caches, 0)
    assert doc == {"groups": FLEET_GROUPS, "unassignedCaches": FLEET_UNASSIGNED}
    assert status.caches == ("other/c9", "team/c1", "team/c2", "team/c3", "team/c4", "team/c5", "team/c6", "team/c7")


def test_derived_numbers_of_a_group(fleet):
    a = fleet_status(fleet).group("a")
    assert a is not None
    assert (a.ready, a.kernel_cache_nodes_missing, a.agent_desired, a.assigned_caches) == (3, 0, 4, 3)
    assert [(c.cache, c.assigned) for c in a.caches] == [
        ("other/c9", True),
        ("team/c1", True),
        ("team/c2", True),
        ("team/c3", False),
    ]
    b_group = fleet_status(fleet).group("b")
    assert b_group is not None and b_group.kernel_cache_nodes_missing == 1


def test_an_assigned_cache_without_entries_is_listed_with_zeros(fleet):
    extra = build([b.kernel_cache("c8", "team", group_name="ab")])
    snap = replace(fleet, kernel_caches=fleet.kernel_caches + extra.kernel_caches)
    ab = fleet_status(snap).group("ab")
    assert ab is not None and ab.to_dict()["caches"]["team/c8"] == cell(1, "Preparing", "Preparing")


def test_namespace_scope_counts_only_its_caches(fleet):
    status = fleet_status(fleet, "other")
    assert status.caches == ("other/c9",)
    assert [g.to_dict()["caches"] for g in status.groups] == [
        {"other/c9": cell(3, "Error", "PreparationFailed", Error=1)},
        {},
        {},
    ]
    assert status.unassigned == ()
    # membership, KernelCacheNodes and agents are cluster-wide and do not change with the scope
    wide = [(g.members, g.kernel_cache_nodes, g.agent_ready) for g in status.groups]
    assert wide == [(4, 4, 2), (1, 1, 0), (2, 1, 1)]


def test_default_node_group_assigns_caches_without_ref(fleet):
    no_default = build([b.config_map({"enabled": True})])
    snap = replace(fleet, configmaps=no_default.configmaps)
    status = fleet_status(snap)
    b_group = status.group("b")
    assert b_group is not None and "team/c5" not in [c.cache for c in b_group.caches if c.assigned]
    c5 = next(u for u in status.unassigned if u.cache == "team/c5")
    assert (c5.group, c5.reason) == ("", "no spec.nodeGroupRef and no defaultNodeGroup is configured")
    # the entry b-1 still carries is shown, as not the cache's group
    assert [(c.cache, c.assigned) for c in b_group.caches] == [("team/c4", True), ("team/c5", False)]


def test_untrimmed_default_node_group_names_no_group(fleet):
    spaced = build([b.config_map({"enabled": True, "defaultNodeGroup": " b"})])
    status = fleet_status(replace(fleet, configmaps=spaced.configmaps))
    c5 = next(u for u in status.unassigned if u.cache == "team/c5")
    assert c5.group == " b"
    assert c5.reason == (
        "group ' b' (from defaultNodeGroup) does not exist (the name has surrounding white space, "
        "which KServe does not trim here)"
    )


def test_invalid_or_missing_configuration_gives_no_default(fleet):
    invalid = build([b.config_map("{not json")])
    status = fleet_status(replace(fleet, configmaps=invalid.configmaps))
    assert next(u for u in status.unassigned if u.cache == "team/c5").reason == (
        "no spec.nodeGroupRef and the kernelcache configuration is invalid"
    )
    status = fleet_status(as_dump(replace(fleet, configmaps=())))
    assert next(u for u in status.unassigned if u.cache == "team/c5").reason == (
        "no spec.nodeGroupRef and ConfigMap kserve/inferenceservice-config not found"
    )


def test_empty_cluster_has_no_groups():
    empty = as_dump(build([]))
    status = fleet_status(empty)
    assert {k: v for k, v in status.to_dict().items() if k != "totals"} == {
        "groups": [],
        "unassignedCaches": [],
        "podsUsing": {},
    }
    assert status.to_dict()["totals"]["groups"] == 0


def test_a_group_with_an_empty_selector_has_every_node_as_member():
    snap = as_dump(
        build(
            [
                {
                    "apiVersion": b.KSERVE,
                    "kind": "KernelCacheNodeGroup",
                    "metadata": {"name": "all"},
                    "spec": {"nodeSelector": {}},
                },
                b.node("n1"),
                b.node("n2", ready=False),
            ]
        )
    )
    (group,) = fleet_status(snap).groups
    assert (group.members, group.not_ready, group.kernel_cache_nodes) == (2, 1, 0)


# ---- reads ----------------------------------------------------------------------------------------


def test_a_forbidden_read_is_named_and_nothing_is_counted(fleet):
    snap = as_dump(fleet, Read("pods", "kserve", "forbidden"), Read("kernelcachenodes", None, "forbidden"))
    with pytest.raises(IncompleteError) as err:
        fleet_status(snap)
    assert str(err.value) == (
        "status cannot answer: cannot list kernelcachenodes (forbidden); "
        "cannot list pods in namespace kserve (forbidden)"
    )


def test_a_forbidden_read_of_other_pods_does_not_hide_the_agent_pods(fleet):
    # doctor's dump also lists producer pods in every namespace; that read being forbidden is not status's
    snap = as_dump(fleet, Read("pods", "kserve", "ok"), Read("pods", None, "forbidden"))
    assert fleet_status(snap).to_dict()["groups"] == FLEET_GROUPS


def test_kernel_caches_read_in_another_namespace_do_not_cover_the_scope(fleet):
    snap = as_dump(fleet, Read("kernelcaches", "team", "ok"))
    with pytest.raises(
        InputError if snap.meta.source == "file" else IncompleteError,
        match="kernelcaches in namespace other (are not in the input files|were not read)",
    ):
        fleet_status(snap, "other")
    assert fleet_status(snap, "team").caches[0] == "team/c1"


def test_a_resource_not_served_is_none_of_it(fleet):
    snap = as_dump(replace(fleet, kcns=()), Read("kernelcachenodes", None, "absent"))
    groups = fleet_status(snap).to_dict()["groups"]
    assert [g["kernelCacheNodes"] for g in groups] == [0, 0, 0]
    assert all(not any(c[p] for p in PHASES) for g in groups for c in g["caches"].values())
    assert all(c["noEntry"] == c["nodeCount"] for g in groups for c in g["caches"].values())


def test_the_configuration_is_needed_only_when_a_cache_lacks_a_group_ref(fleet):
    forbidden_cm = Read("configmaps", "kserve", "forbidden")
    with pytest.raises(IncompleteError, match=r"cannot list configmaps in namespace kserve \(forbidden\)"):
        fleet_status(as_dump(fleet, forbidden_cm))
    without_c5 = replace(fleet, kernel_caches=tuple(k for k in fleet.kernel_caches if k.name != "c5"))
    assert fleet_status(as_dump(without_c5, forbidden_cm)).group("b") is not None


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("Node", "nodes are not in the input files"),
        ("KernelCacheNodeGroup", "kernelcachenodegroups are not in the input files"),
        ("KernelCacheNode", "kernelcachenodes are not in the input files"),
        ("KernelCache", "kernelcaches are not in the input files"),
        ("Pod", "pods in namespace kserve are not in the input files"),
    ],
)
def test_from_plain_files_a_kind_absent_from_the_input_is_not_in_the_input(tmp_path, kind, message):
    docs = [d for d in FLEET.read_text().split("\n---\n") if f"\nkind: {kind}\n" not in f"\n{d}\n"]
    path = tmp_path / "partial.yaml"
    path.write_text("\n---\n".join(docs))
    with pytest.raises(InputError) as err:  # exit 2: the input lacks it (a forbidden read is exit 3)
        fleet_status(load_files([str(path)]))
    assert str(err.value) == f"status cannot answer: {message} (add them to the files, or read the cluster live)"


def test_from_plain_files_an_exported_empty_list_means_none(tmp_path):
    docs = [d for d in FLEET.read_text().split("\n---\n") if "\nkind: KernelCacheNode\n" not in f"\n{d}\n"]
    path = tmp_path / "no-kcns.yaml"
    path.write_text(
        "\n---\n".join(docs) + "\n---\napiVersion: serving.kserve.io/v1alpha1\nkind: KernelCacheNodeList\nitems: []\n"
    )
    groups = fleet_status(load_files([str(path)])).to_dict()["groups"]
    assert [g["kernelCacheNodes"] for g in groups] == [0, 0, 0]


def test_a_recorded_not_in_input_read_is_said_so(fleet):
    with pytest.raises(InputError, match="kernelcachenodes are not in the input files"):
        fleet_status(as_dump(fleet, Read("kernelcachenodes", None, "not-in-input")))


# ---- the document ---------------------------------------------------------------------------------


def test_document_is_design_md_kcache_status_with_provenance(fleet):
    prov = Provenance.live("https://127.0.0.1:6443", "test", "2026-11-29T10:00:00Z", None)
    doc = StatusReport(fleet_status(fleet), prov).to_dict()
    assert list(doc) == ["kind", "version", "source", "groups", "unassignedCaches", "podsUsing", "totals"]
    assert (doc["kind"], doc["version"]) == ("KcacheStatus", 1)
    assert doc["source"] == {
        "from": "live",
        "cluster": "test",
        "server": "https://127.0.0.1:6443",
        "takenAt": "2026-11-29T10:00:00Z",
        "generatedAt": prov.generated_at,
        "tool": f"kubectl-kcache {prov.tool_version}",
        "scope": {"namespace": None},
    }
    for group in doc["groups"]:
        assert list(group) == [
            "name",
            "selector",
            "members",
            "notReady",
            "cordoned",
            "kernelCacheNodes",
            "agentReady",
            "podsUsing",
            "caches",
        ]
        for counts in group["caches"].values():
            assert list(counts) == [
                "Ready",
                "Pending",
                "Pulling",
                "Error",
                "nodeCount",
                "noEntry",
                "notReady",
                "state",
                "reason",
            ]
            assert counts["nodeCount"] == group["members"] - group["notReady"]
            assert sum(counts[p] for p in PHASES) + counts["noEntry"] == counts["nodeCount"]
            assert sum(counts[p] for p in PHASES) + sum(counts["notReady"].values()) <= group["members"]


def test_provenance_of_files_names_them():
    prov = Provenance.from_files(["a.yaml", "dir/"], "", "", "team")
    assert prov.to_dict()["from"] == "file" and prov.to_dict()["files"] == ["a.yaml", "dir/"]
    assert prov.to_dict()["cluster"] == "" and prov.to_dict()["takenAt"] == ""  # the files did not say
    assert prov.to_dict()["scope"] == {"namespace": "team"}


def test_pods_using_each_cache_and_each_group_as_kserve_records_them():
    """KernelCache.status.usage (totalPodsUsing, else the list) and each member's KernelCacheNode totalPodsUsing."""
    kc = b.kernel_cache("kc", "team", "gpu")
    kc["status"] = {"state": "Ready"}
    kc["status"]["usage"] = {
        "pods": [
            {"podUID": "u1", "podRef": {"namespace": "team", "name": "p1"}, "nodeName": "gpu-1"},
            {"podUID": "u2", "podRef": {"namespace": "team", "name": "p2"}, "nodeName": "gpu-2"},
        ],
        "totalPodsUsing": 2,
    }
    listed_only = b.kernel_cache("listed", "team", "gpu")
    listed_only["status"] = {}
    listed_only["status"]["usage"] = {"pods": [{"podUID": "u3", "podRef": {"namespace": "team", "name": "p3"}}]}
    kcns = [b.kcn("gpu-1"), b.kcn("gpu-2")]
    for kcn, using in zip(kcns, (3, 1), strict=True):
        kcn.setdefault("status", {})["counts"] = {
            "cachesReady": 1,
            "cachesPreparing": 0,
            "cachesError": 0,
            "totalPodsUsing": using,
        }
    items = [
        b.config_map({"enabled": True}),
        b.group("gpu", {"pool": "gpu"}),
        b.node("gpu-1", {"pool": "gpu"}),
        b.node("gpu-2", {"pool": "gpu"}),
        *kcns,
        kc,
        listed_only,
        b.kernel_cache("unused", "team", "gpu"),
    ]
    status = fleet_status(as_dump(build(items)))
    doc = status.to_dict()
    assert doc["podsUsing"] == {"team/kc": 2, "team/listed": 1, "team/unused": 0}
    assert doc["groups"][0]["podsUsing"] == 4 and doc["totals"]["podsUsing"] == 3


# ---- Ready members, as KServe counts them (§7.2) --------------------------------------------------


def gpu_fleet(*nodes: dict, kcns: list[dict], caches: list[dict] | None = None) -> ClusterSnapshot:
    items = [b.config_map({"enabled": True}), b.group("gpu", {"pool": "gpu"}), *nodes, *kcns]
    return as_dump(build(items + (caches if caches is not None else [b.kernel_cache("kc", "team", "gpu")])))


def entries(state: str, message: str = "") -> dict[str, dict]:
    return {"team/kc": b.entry("team", "kc", state, message=message)}


def test_an_error_entry_on_a_not_ready_member_is_counted_apart_and_the_cache_is_ready():
    snap = gpu_fleet(
        b.node("n1", {"pool": "gpu"}),
        b.node("n2", {"pool": "gpu"}, unschedulable=True),  # cordoned: KServe still counts it
        b.node("n3", {"pool": "gpu"}, ready=False),
        kcns=[b.kcn("n1", entries("Ready")), b.kcn("n2", entries("Ready")), b.kcn("n3", entries("Error", "no space"))],
    )
    status = fleet_status(snap)
    (group,) = status.to_dict()["groups"]
    assert (group["members"], group["notReady"], group["cordoned"]) == (3, 1, 1)
    assert group["caches"] == {"team/kc": cell(2, "Ready", "CacheReady", not_ready={"Error": 1}, Ready=2)}
    assert status.totals()["entriesError"] == 0 and status.totals()["entriesNotReady"] == 1
    (kc_cell,) = status.groups[0].caches
    assert kc_cell.state == "Ready" and kc_cell.aggregate is not None and kc_cell.aggregate.error_nodes == ()


def test_ready_members_without_an_entry_are_no_entry_and_node_count_is_the_ready_members():
    snap = gpu_fleet(
        b.node("n1", {"pool": "gpu"}),
        b.node("n2", {"pool": "gpu"}),  # its KernelCacheNode has no entry for the cache
        b.node("n3", {"pool": "gpu"}),  # no KernelCacheNode
        b.node("n4", {"pool": "gpu"}, ready=False),  # NotReady without an entry: not counted anywhere
        kcns=[b.kcn("n1", entries("Ready")), b.kcn("n2", {}), b.kcn("n4")],
    )
    status = fleet_status(snap)
    (group,) = status.to_dict()["groups"]
    assert group["caches"]["team/kc"] == cell(3, "Preparing", "Preparing", Ready=1)
    assert group["caches"]["team/kc"]["noEntry"] == 2 and status.totals()["noEntry"] == 2
    agg = status.groups[0].caches[0].aggregate
    assert agg is not None and agg.missing_nodes == ("n2", "n3")


@pytest.mark.parametrize(
    ("nodes", "state", "reason"),
    [
        ([], "Pending", "NoMatchingNodes"),
        ([b.node("n1", {"pool": "gpu"}, ready=False)], "Pending", "NoReadyNodes"),
    ],
)
def test_a_group_without_ready_members_gives_kserves_pending_reason(nodes, state, reason):
    snap = gpu_fleet(*nodes, kcns=[b.kcn(n["metadata"]["name"], entries("Ready")) for n in nodes])
    (group,) = fleet_status(snap).to_dict()["groups"]
    not_ready = {"Ready": 1} if nodes else None
    assert group["caches"]["team/kc"] == cell(0, state, reason, not_ready=not_ready)


def test_the_cell_state_is_compute_aggregates_answer_on_the_caches_own_group_only(fleet):
    from kubectl_kcache.kernelcache.aggregate import compute_aggregate
    from kubectl_kcache.kernelcache.membership import membership_of

    status = fleet_status(fleet)
    members = membership_of(fleet).members_of_group
    by_key = {f"{kc.namespace}/{kc.name}": kc for kc in fleet.kernel_caches}
    for g in status.groups:
        for one in g.caches:
            if one.assigned:
                assert one.aggregate == compute_aggregate(by_key[one.cache], members[g.name], fleet.kcn_by_name)
            else:
                assert one.aggregate is None and one.to_dict(g.ready)["state"] is None
