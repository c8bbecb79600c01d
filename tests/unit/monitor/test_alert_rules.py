"""deploy/monitor/prometheusrule.yaml against a scrape of the monitor: every metric an alert selects is
exported, with the labels and label values it matches and groups by, in text prometheus_client's parser
reads; and the alerts issue 26 asks for are there."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from kubectl_kcache.checks.registry import all_checks
from kubectl_kcache.explain.ready_model import CACHE_GATES, NODE_GATES
from kubectl_kcache.monitor import metrics
from kubectl_kcache.monitor.evaluate import evaluate
from tests.alert_rules import Alert, alerts, scraped, selectors, unknown

from .test_monitor_parts import BROKEN

PREFIX = metrics.PREFIX
ROOT = Path(__file__).resolve().parents[3]


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
    """The values a label can take although the broken example shows only some: the gates why-not-ready
    names as a cause."""
    return {(PREFIX + "kernelcache_not_ready_cause", "cause"): set(CACHE_GATES) | set(NODE_GATES)}


RULES = list(alerts())


@pytest.mark.parametrize("alert", RULES, ids=[r.name for r in RULES])
def test_every_alert_selects_what_the_monitor_exports(alert: Alert):
    assert alert.selectors, f"{alert.name}: no metric found in {alert.expr!r}"
    assert all(s.metric.startswith(PREFIX) for s in alert.selectors), alert.selectors
    assert unknown(alert, scrape(), possible_values()) == []


def test_the_alerts_the_issue_asks_for():
    by_name = {r.name: r for r in RULES}
    assert set(by_name) == {
        "KernelCacheNotReadyOnSomeMembers",
        "ServingPodsStartedColdWhileACacheIsReady",
        "ServingPodsWouldBeDeniedByTheWebhook",
        "KernelCacheAgentMissingOnMemberNodes",
        "KernelCacheCaptureStuck",
        "KcacheMonitorBlind",
    }
    ready = by_name["KernelCacheNotReadyOnSomeMembers"]
    assert ready.for_ == "15m" and "group_left (cause)" in ready.expr
    assert {s.metric for s in ready.selectors} == {PREFIX + "kernelcache_nodes", PREFIX + "kernelcache_not_ready_cause"}
    cold = by_name["ServingPodsStartedColdWhileACacheIsReady"]
    assert [(s.metric, s.matchers) for s in cold.selectors] == [(PREFIX + "serving_pods", (("outcome", "=", "now"),))]
    agent = by_name["KernelCacheAgentMissingOnMemberNodes"]
    assert {s.metric for s in agent.selectors} == {PREFIX + "nodegroup_members", PREFIX + "nodegroup_agents_ready"}
    stuck = by_name["KernelCacheCaptureStuck"]
    assert set(stuck.selectors[0].matchers) == {("check", "=", "capture"), ("code", "=", "stuck")}
    capture = next(s for s in all_checks() if s.id == "capture")
    assert capture.code("stuck") is not None  # the check reports that code
    blind = by_name["KcacheMonitorBlind"]
    assert {s.metric for s in blind.selectors} == {
        metrics.OWN + "last_successful_read_timestamp_seconds",
        metrics.OWN + "ready",
    }


def _anchors(markdown: str) -> set[str]:
    """GitHub's anchors of a page's headings (lower case, spaces to dashes, punctuation dropped)."""
    return {
        re.sub(r"[^a-z0-9 _-]", "", m.group(1).strip().lower()).replace(" ", "-")
        for m in re.finditer(r"^#+ (.+)$", markdown, re.M)
    }


def test_every_alert_links_its_runbook_section():
    import yaml

    doc = yaml.safe_load((ROOT / "deploy" / "monitor" / "prometheusrule.yaml").read_text())
    page = (ROOT / "docs" / "monitoring.md").read_text()
    anchors = _anchors(page)
    base = "https://github.com/kserve/kubectl-kcache/blob/main/docs/monitoring.md#"
    for rule in doc["spec"]["groups"][0]["rules"]:
        url = rule["annotations"]["runbook_url"]
        assert url.startswith(base), url
        assert url.removeprefix(base) in anchors, f"{rule['alert']}: no section {url}"
        section = page.split(f"### {rule['alert']}", 1)[1].split("\n### ", 1)[0]
        assert "kubectl kcache" in section, f"{rule['alert']}: its runbook names no first command"


def test_the_metrics_table_is_what_the_monitor_exports():
    """docs/monitoring.md's table lists every metric with its labels, and nothing else."""
    page = (ROOT / "docs" / "monitoring.md").read_text()
    rows = dict(re.findall(r"^\| `(kcache_\w+)(?:\{([a-z_, ]*)\})?` \|", page, re.M))
    assert set(rows) == set(metrics.METRICS)
    for name, (_kind, labels, _help) in metrics.METRICS.items():
        assert tuple(x.strip() for x in rows[name].split(",") if x.strip()) == labels, name


def test_a_rule_naming_what_is_not_exported_is_caught():
    """The checker itself: a misspelt metric, a label the metric lacks, a code no check has, a grouping label."""
    sels, grouping = selectors('sum by (nodegroup, pod) (kcache_serving_pod{outcome="now"}) > 0')
    bad = Alert("Bad", "", "", sels, grouping)
    assert unknown(bad, scrape(), possible_values()) == [
        "metric kcache_serving_pod is not exported",
        "grouped by nodegroup, a label none of its metrics has",
        "grouped by pod, a label none of its metrics has",
    ]
    sels, grouping = selectors('sum by (pod) (kcache_finding{check="capture", code="stuk", x="y"}) > 0')
    assert unknown(replace(bad, selectors=sels, grouping=grouping), scrape(), possible_values()) == [
        'kcache_finding has no sample with code="stuk"',
        "kcache_finding has no label x",
        "grouped by pod, a label none of its metrics has",
    ]
    sels, _ = selectors(
        "time() - kcache_monitor_last_successful_read_timestamp_seconds > 600 or kcache_monitor_ready == 0"
    )
    assert [s.metric for s in sels] == [
        metrics.OWN + "last_successful_read_timestamp_seconds",
        metrics.OWN + "ready",
    ]
