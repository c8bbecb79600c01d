"""deploy/monitor/prometheusrule.yaml against a scrape of the monitor: every metric an alert selects is
exported, with the labels and label values it matches and groups by, in text prometheus_client's parser
reads; and the alerts issue 26 asks for are there."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kubectl_kcache.checks.registry import all_checks
from kubectl_kcache.monitor import metrics
from kubectl_kcache.monitor.evaluate import evaluate
from tests.alert_rules import Alert, alerts, scraped, selectors, unknown

from .test_monitor_parts import BROKEN

PREFIX = metrics.PREFIX


def scrape() -> dict[str, list[dict[str, str]]]:
    health = metrics.Health(
        ready=True,
        read_errors={"watch nodes": 1},
        last_read=1.7e9,
        evaluations=2,
        events={"Warning": 1},
        events_dropped={"duplicate": 1},
    )
    return scraped(metrics.render(evaluate(BROKEN), health))


def possible_values() -> dict[tuple[str, str], set[str]]:
    """The values a label can take although the broken example shows only some: the registry's checks and
    codes, every entry and pod state."""
    specs = all_checks()
    return {
        (PREFIX + "findings", "check"): {s.id for s in specs},
        (PREFIX + "findings", "code"): {code.id for s in specs for code in s.codes},
        (PREFIX + "cache_entries", "state"): set(metrics.ENTRY_STATES),
        (PREFIX + "cache_entries", "assigned"): {"true", "false"},
        (PREFIX + "serving_pods", "state"): set(metrics.POD_STATES),
    }


RULES = list(alerts())


@pytest.mark.parametrize("alert", RULES, ids=[r.name for r in RULES])
def test_every_alert_selects_what_the_monitor_exports(alert: Alert):
    assert alert.selectors, f"{alert.name}: no metric found in {alert.expr!r}"
    assert all(s.metric.startswith(PREFIX) for s in alert.selectors), alert.selectors
    assert unknown(alert, scrape(), possible_values()) == []


def test_the_alerts_the_issue_asks_for():
    by_name = {r.name: r for r in RULES}
    half = by_name["KernelCacheReadyOnUnderHalfOfItsGroup"]
    assert half.for_ == "15m" and "< 0.5" in half.expr
    assert {s.metric for s in half.selectors} == {PREFIX + "cache_entries"}
    cold = by_name["ServingPodsStartedColdWhileACacheIsReady"]
    assert [(s.metric, s.matchers) for s in cold.selectors] == [(PREFIX + "serving_pods", (("state", "=", "now"),))]
    agent = by_name["KernelCacheAgentMissingOnMemberNodes"]
    assert {s.metric for s in agent.selectors} == {PREFIX + "group_members", PREFIX + "group_agents_ready"}
    stuck = by_name["KernelCacheCaptureStuck"]
    assert set(stuck.selectors[0].matchers) == {("check", "=", "capture"), ("code", "=", "stuck")}
    capture = next(s for s in all_checks() if s.id == "capture")
    assert capture.code("stuck") is not None  # the check reports that code


def test_a_rule_naming_what_is_not_exported_is_caught():
    """The checker itself: a misspelt metric, a label the metric lacks, a code no check has, a grouping label."""
    sels, grouping = selectors('sum by (namespace, pod) (kcache_monitor_serving_pod{state="now"}) > 0')
    bad = Alert("Bad", "", "", sels, grouping)
    assert unknown(bad, scrape(), possible_values()) == [
        "metric kcache_monitor_serving_pod is not exported",
        "grouped by namespace, a label none of its metrics has",
        "grouped by pod, a label none of its metrics has",
    ]
    sels, grouping = selectors('sum by (pod) (kcache_monitor_findings{check="capture", code="stuk", x="y"}) > 0')
    assert unknown(replace(bad, selectors=sels, grouping=grouping), scrape(), possible_values()) == [
        'kcache_monitor_findings has no sample with code="stuk"',
        "kcache_monitor_findings has no label x",
        "grouped by pod, a label none of its metrics has",
    ]
    sels, _ = selectors(
        "time() - kcache_monitor_last_successful_read_timestamp_seconds > 600 or kcache_monitor_ready == 0"
    )
    assert [s.metric for s in sels] == [PREFIX + "last_successful_read_timestamp_seconds", PREFIX + "ready"]
