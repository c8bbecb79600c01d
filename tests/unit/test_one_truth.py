"""One truth (issue 13): on generated snapshots, doctor, why-group and reconcile's plan give the same answer
for every capture, because each calls the one function in kernelcache/ that holds KServe's rule.

- doctor's capture, group-overlap and config findings agree with why-group's result for every capture;
- the plan creates exactly the KernelCaches doctor says are missing, and links exactly the captures doctor
  says are unlinked.
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_kcache.checks import run_doctor
from kubectl_kcache.explain import explain
from kubectl_kcache.kernelcache.names import generated_kernel_cache_name
from kubectl_kcache.kinds import KINDS
from kubectl_kcache.reconcile.planner import plan
from kubectl_kcache.snapshot import Read, build
from tests import builders as b

NS = "team"
LABELS = {"role": ("gpu", "cpu"), "zone": ("east", "west")}
GROUP_NAMES = ("alpha", "beta", "gamma")
NODE_NAMES = ("n1", "n2", "n3")
EXAMPLES = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def labels() -> st.SearchStrategy[dict[str, str]]:
    return st.fixed_dictionaries({}, optional={k: st.sampled_from(v) for k, v in LABELS.items()})


@st.composite
def snapshots(draw: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """A cluster: nodes and groups over two labels, a configuration whose default may be a group, a missing
    group or a label, and captures whose sessions point at nodes and groups that may or may not exist, some
    with their KernelCache (right or wrong artifact), some sharing a generated name."""
    items: list[dict[str, Any]] = []
    group_names = draw(st.lists(st.sampled_from(GROUP_NAMES), unique=True, max_size=3))
    for name in group_names:
        key = draw(st.sampled_from(sorted(LABELS)))
        selector = draw(st.one_of(st.just({key: LABELS[key][0]}), labels().filter(bool)))
        items.append(b.group(name, selector))
    for name in NODE_NAMES:
        full = st.fixed_dictionaries({k: st.sampled_from(v) for k, v in LABELS.items()})
        items.append(b.node(name, draw(st.one_of(full, full, labels()))))
    default = draw(st.sampled_from(["", "alpha", "beta", "missing", "role", "role=gpu"]))
    items.append(b.config_map({"enabled": True, "defaultNodeGroup": default}))
    captures = []
    for i in range(draw(st.integers(0, 4))):
        name = draw(st.sampled_from([f"model-{i}", f"model-{i}-capture", "shared", "shared-capture"]))
        if name in captures:
            continue
        captures.append(name)
        seed = draw(st.sampled_from(["cache", "cache", "other"]))
        status = b.capture_status(
            seed=seed,
            node_name=draw(st.sampled_from(["", *NODE_NAMES, *NODE_NAMES, *NODE_NAMES, "gone"])),
            requested=draw(st.sampled_from(["", "", "", "", *GROUP_NAMES, "missing"])),
            phase=draw(st.sampled_from(["Complete", "Complete", "Complete", "Pushing"])))
        kc_name = generated_kernel_cache_name(name, b.image(seed))
        linked = draw(st.booleans())
        if linked:
            status["kernelCacheRef"] = {"namespace": NS, "name": kc_name}
        items.append(b.capture(name, NS, status=status))
        if draw(st.sampled_from(["none", "none", "same", "other"])) != "none" or linked and draw(st.booleans()):
            kc_seed = seed if draw(st.sampled_from([True, True, False])) else "different"
            items.append(b.kernel_cache(kc_name, NS, group_name="alpha", seed=kc_seed))
    return items, captures


def snapshot_of(items: list[dict[str, Any]]) -> Any:
    """As read live: every list succeeded, so an absent object is absent from the cluster."""
    return build(items, reads=[Read(resource, None, "ok") for resource in sorted({k.plural for k in KINDS})])


CREATE = re.compile(r"KServe would create (\S+)/(\S+) for group (\S+) \(source (\w+)\)")


@EXAMPLES
@given(snapshots())
def test_doctor_and_why_group_agree_on_every_capture(drawn):
    items, captures = drawn
    snapshot = snapshot_of(items)
    report = run_doctor(snapshot)
    for name in captures:
        why = explain(snapshot, NS, capture_name=name).to_dict()
        mine = [f for f in report.findings if f.check == "capture" and f.object.name == name]
        result = why["result"]
        blocked = [f for f in mine if "KServe cannot select a node group" in f.message]
        creates = [m for f in mine for m in CREATE.finditer(f.message)]
        if blocked:  # doctor says selection fails: why-group says the same, with KServe's reason and message
            assert result["group"] is None
            assert f"{result['reason']}: {result['message']}" in blocked[0].message
        if creates:  # doctor says KServe would create it in a group: why-group selects that group
            (_, _, group, source), = (m.groups() for m in creates)
            assert (result["group"], result["source"]) == (group, source)
        ambiguous = result["reason"] == "AmbiguousNodeGroup"
        listed = any(f"blocked capture: {NS}/{name}" in f.evidence for f in report.findings
                     if f.check == "group-overlap")
        assert listed == (ambiguous and bool(blocked)), (name, why, report.findings)
    label_default = [f for f in report.findings if f.check == "config" and "looks like a node label" in f.message]
    for name in captures:
        steps = explain(snapshot, NS, capture_name=name).steps
        said = any(s.step == "default" and "looks like a node label" in s.detail for s in steps)
        assert said == bool(label_default)


@EXAMPLES
@given(snapshots())
def test_the_plan_creates_what_doctor_says_is_missing_and_links_what_it_says_is_unlinked(drawn):
    items, _ = drawn
    snapshot = snapshot_of(items)
    report = run_doctor(snapshot)
    missing = {(m.group(1), m.group(2), m.group(3)) for f in report.findings if f.check == "capture"
               for m in CREATE.finditer(f.message)}
    actions = plan(snapshot).actions
    created = {(a.namespace, a.name, a.node_group) for a in actions if a.verb == "create" and a.kind == "KernelCache"}
    assert created == missing
    unlinked = {f.object.name for f in report.findings if f.check == "capture" and "is not linked" in f.message}
    linked = {a.name for a in actions if a.verb == "update-status"}
    assert unlinked <= linked  # plus the links that follow a creation
    assert linked - unlinked <= {a.name for a in actions if a.verb == "update-status"
                                 and any(c.verb == "create" and c.name == a.related for c in actions)}
    events = {(a.name, a.event_reason) for a in actions if a.verb == "event"}
    errors = {(f.object.name, r) for f in report.findings if f.check == "capture"
              for r in re.findall(r"KServe cannot select a node group: (\w+):", f.message)}
    assert events == errors


def _kinds(drawn: tuple[list[dict[str, Any]], list[str]]) -> set[str]:
    from kubectl_kcache.kernelcache.capture import capture_caches
    from kubectl_kcache.kernelcache.config import read_config

    snapshot = snapshot_of(drawn[0])
    config = read_config(snapshot.configmap("kserve", "inferenceservice-config")).config
    assert config is not None
    out = set()
    for cc in capture_caches(snapshot.captures, snapshot.kc_by_key, snapshot.group_by_name, snapshot.node_by_name,
                             config.default_node_group):
        out.add(cc.outcome.outcome)
        if cc.decision is not None:
            out.add(cc.decision.reason or f"source:{cc.decision.source}")
    return out


BRANCHES = {"create", "link", "linked", "mismatch", "shadowed", "not-eligible", "source:annotation", "source:auto",
            "source:default", "InvalidRequestedNodeGroup", "ProducerNodePending", "AmbiguousNodeGroup",
            "NoMatchingNodeGroup", "InvalidDefaultNodeGroup"}


def test_the_generator_reaches_every_outcome_and_branch():
    """The properties above are only as good as the snapshots: 500 of them (a fixed sample) reach each outcome
    and each branch of KServe's selection."""
    seen: set[str] = set()

    @settings(max_examples=500, derandomize=True, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(snapshots())
    def sample(drawn: tuple[list[dict[str, Any]], list[str]]) -> None:
        seen.update(_kinds(drawn))

    sample()
    assert BRANCHES - seen == set()
