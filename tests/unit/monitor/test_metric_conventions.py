"""The monitor's metrics follow Prometheus' and kube-state-metrics' conventions, on the bundled examples: promtool
finds nothing to say, every state of a state set is present, every known series starts at 0, an object's
namespace and name are separate labels, and the exporter's own health is under kcache_monitor_*."""

from __future__ import annotations

from collections import defaultdict

import pytest

from kubectl_kcache.checks.model import STATUSES
from kubectl_kcache.checks.registry import all_checks
from kubectl_kcache.monitor import metrics
from kubectl_kcache.monitor.evaluate import evaluate
from kubectl_kcache.snapshot.files.from_files import load_files
from tests.promtool import check_metrics, parse

from .test_monitor_parts import ROOT

EXAMPLES = {name: load_files([str(ROOT / "examples" / f"{name}-cluster.yaml")]) for name in ("broken", "healthy")}


def scrape(name: str, events: dict[str, int] | None = None) -> str:
    health = metrics.Health(
        ready=True, read_errors={"list": 0, "watch nodes": 0}, last_read=0, evaluations=1, events=events
    )
    return metrics.render(evaluate(EXAMPLES[name]), health)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_promtool_finds_nothing_to_say(name):
    assert check_metrics(scrape(name, events={})) == ""


def _by_rest(samples, name: str, label: str) -> dict[frozenset, set[str]]:
    """For each series of `name` without `label`: the values `label` takes."""
    out: dict[frozenset, set[str]] = defaultdict(set)
    for (n, labels), _ in samples.items():
        if n == name:
            d = dict(labels)
            out[frozenset((k, v) for k, v in d.items() if k != label)].add(d[label])
    return out


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_every_state_of_each_state_set_is_present(name):
    samples = parse(scrape(name))
    sets = {
        ("kcache_check_status", "status"): set(STATUSES),
        ("kcache_kernelcache_nodes", "state"): set(metrics.ENTRY_STATES),
        ("kcache_serving_pods", "outcome"): set(metrics.POD_OUTCOMES),
    }
    for (metric, label), states in sets.items():
        rows = _by_rest(samples, metric, label)
        assert rows, metric
        assert all(found == states for found in rows.values()), metric
    for rest, found in _by_rest(samples, "kcache_check_status", "status").items():
        ones = [s for s in found if samples[("kcache_check_status", rest | {("status", s)})] == 1]
        assert len(ones) == 1, rest  # exactly one status is 1


def test_known_series_start_at_zero():
    samples = parse(scrape("healthy", events={}))
    codes = {(s.id, code.id, code.severity) for s in all_checks() for code in s.codes}
    found = {
        (d["check"], d["code"], d["severity"])
        for (n, labels), _ in samples.items()
        if n == "kcache_finding"
        for d in [dict(labels)]
    }
    assert found >= codes  # every code, 0 when none
    for kind in metrics.EVENT_TYPES:
        assert samples[("kcache_monitor_events_total", frozenset({("type", kind)}))] == 0
    for reason in metrics.EVENT_DROPS:
        assert samples[("kcache_monitor_events_dropped_total", frozenset({("reason", reason)}))] == 0
    assert samples[("kcache_monitor_read_errors_total", frozenset({("read", "watch nodes")}))] == 0
    assert samples[("kcache_monitor_last_successful_read_timestamp_seconds", frozenset())] == 0


def test_names_say_their_subject_and_the_exporter_keeps_to_its_own():
    for name, (_kind, labels, _help) in metrics.METRICS.items():
        assert name.startswith("kcache_"), name
        if "kernelcache" in labels:
            assert "namespace" in labels, name  # `sum by (namespace)` works
        subject = name.split("_")[1]
        assert subject in {"build", "finding", "check", "nodegroup", "kernelcache", "serving", "monitor"}, name
    samples = parse(scrape("broken"))
    kernelcaches = {dict(labels)["kernelcache"] for n, labels in samples if n == "kcache_kernelcache_nodes"}
    assert kernelcaches and not any("/" in k for k in kernelcaches)  # the name alone, beside its namespace
    (info,) = [dict(labels) for n, labels in samples if n == "kcache_build_info"]
    assert set(info) == {"version", "commit"}
