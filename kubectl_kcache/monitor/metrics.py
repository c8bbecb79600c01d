"""The monitor's metrics as Prometheus text (exposition format 0.0.4, written by prometheus_client), from the
last evaluation and the source's counters. Label values come from the cluster: prometheus_client escapes them.
A KernelCache's entries are counted over its group's Ready members (cordoned ones included), as KServe counts
them (`kubectl kcache status`): the five states of `cache_entries` add up to KServe's nodeCount, and entries on
NotReady members are in none of them.

    kcache_monitor_findings{check,code,severity}                  unsuppressed findings
    kcache_monitor_checks{check,status}                           1 per check, by status (pass, fail, skipped...)
    kcache_monitor_group_members{group}                           member nodes
    kcache_monitor_group_agents_ready{group}                      members with a Running, Ready agent pod
    kcache_monitor_group_kernelcachenodes_missing{group}          members without their KernelCacheNode
    kcache_monitor_cache_entries{kernelcache,group,state,assigned}  Ready members with the entry Ready|Pending|
                                                                  Pulling|Error, or none; assigned: its own group
    kcache_monitor_serving_pods{namespace,inferenceservice,state} pods cached|cold|now|denied|unprepared|producer
                                                                  (producer: cold by design, in neither cold nor now)
    kcache_monitor_read_errors_total{read}                        failed lists and watches
    kcache_monitor_evaluation_seconds                             the last evaluation's duration
    kcache_monitor_evaluations_total
    kcache_monitor_last_evaluation_timestamp_seconds
    kcache_monitor_last_successful_read_timestamp_seconds         when the data was last known current
    kcache_monitor_ready                                          1 while /readyz answers 200
    kcache_monitor_events_total{type}, kcache_monitor_events_dropped_total{reason}   with --events
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .. import prometheus
from ..explain.fleet import FleetHitRate
from ..explain.status import FleetStatus
from ..prometheus import Family
from .evaluate import Evaluation

PREFIX = "kcache_monitor_"
ENTRY_STATES = ("Ready", "Pending", "Pulling", "Error", "none")
POD_STATES = ("cached", "cold", "now", "denied", "unprepared", "producer")


def _family(name: str, kind: str, help: str) -> Family:
    return Family(PREFIX + name, kind, help)


@dataclass(frozen=True)
class Health:
    ready: bool
    read_errors: Mapping[str, int]
    last_read: float  # Unix time; 0 before the first
    evaluations: int
    events: Mapping[str, int] = field(default_factory=dict)
    events_dropped: Mapping[str, int] = field(default_factory=dict)


def _findings(ev: Evaluation) -> Iterable[Family]:
    findings = _family(
        "findings", "gauge", "Unsuppressed findings of the doctor's checks, by check, code and severity."
    )
    counts = Counter((f.check, f.code, f.severity) for f in ev.report.findings if not f.suppressed)
    for (check, code, severity), n in sorted(counts.items()):
        findings.add(n, check=check, code=code, severity=severity)
    checks = _family("checks", "gauge", "The doctor's checks by status (1 for the status each check has).")
    for result in ev.report.checks:
        checks.add(1, check=result.id, status=result.status)
    return findings, checks


def _groups(status: FleetStatus) -> Iterable[Family]:
    members = _family("group_members", "gauge", "Member nodes of each KernelCacheNodeGroup.")
    agents = _family("group_agents_ready", "gauge", "Members with a Running and Ready agent pod.")
    missing = _family("group_kernelcachenodes_missing", "gauge", "Members without their KernelCacheNode.")
    entries = _family(
        "cache_entries",
        "gauge",
        "Ready members of a group (as KServe counts them, cordoned included) with a KernelCache's entry in "
        "each state (none: no entry); assigned: the group is the KernelCache's own.",
    )
    for g in status.groups:
        members.add(g.members, group=g.name)
        agents.add(g.agent_ready, group=g.name)
        missing.add(g.kernel_cache_nodes_missing, group=g.name)
        for cell in g.caches:
            counts = (*cell.counts.as_tuple(), cell.no_entry(g.ready))  # over the Ready members: KServe's
            for state, n in zip(ENTRY_STATES, counts, strict=True):
                entries.add(
                    n, kernelcache=cell.cache, group=g.name, state=state, assigned="true" if cell.assigned else "false"
                )
    return members, agents, missing, entries


def _pods(fleet: FleetHitRate) -> Family:
    pods = _family(
        "serving_pods",
        "gauge",
        "Serving pods per InferenceService: cached at admission, cold, now (cold "
        "but admission would mount a cache today), denied (admission would reject a recreate), "
        "unprepared (cached, but on a node without a Ready entry), producer (cold by design: a cache's "
        "producer or a pod of a revision being captured; not cold, not now).",
    )
    for r in fleet.rows:
        if r.revision:
            continue
        for state, n in zip(POD_STATES, (r.cached, r.cold, r.now, r.denied, r.unprepared, r.producer), strict=True):
            pods.add(n, namespace=r.namespace, inferenceservice=r.isvc, state=state)
    return pods


def render(ev: Evaluation | None, health: Health) -> str:
    families: list[Family] = []
    if ev is not None:
        families += _findings(ev)
        if isinstance(ev.status, FleetStatus):
            families += _groups(ev.status)
        if isinstance(ev.fleet, FleetHitRate):
            families.append(_pods(ev.fleet))
    errors = _family("read_errors_total", "counter", "Failed lists and watches, by what was read.")
    for what, n in sorted(health.read_errors.items()):
        errors.add(n, read=what)
    families.append(errors)
    seconds = _family("evaluation_seconds", "gauge", "How long the last evaluation took.")
    stamp = _family("last_evaluation_timestamp_seconds", "gauge", "When the last evaluation was made (Unix time).")
    if ev is not None:
        seconds.add(round(ev.seconds, 6))
        stamp.add(round(ev.at, 3))
    families += [seconds, stamp]
    total = _family("evaluations_total", "counter", "Evaluations made.")
    total.add(health.evaluations)
    last_read = _family(
        "last_successful_read_timestamp_seconds",
        "gauge",
        "When the data was last known current: every list and watch working (Unix time).",
    )
    if health.last_read:
        last_read.add(round(health.last_read, 3))
    ready = _family("ready", "gauge", "1 while /readyz answers 200.")
    ready.add(int(health.ready))
    families += [total, last_read, ready]
    if health.events or health.events_dropped:
        sent = _family("events_total", "counter", "Events created, by type.")
        for kind, n in sorted(health.events.items()):
            sent.add(n, type=kind)
        dropped = _family("events_dropped_total", "counter", "Events not sent: duplicate, rate-limited, failed.")
        for reason, n in sorted(health.events_dropped.items()):
            dropped.add(n, reason=reason)
        families += [sent, dropped]
    return prometheus.render(families)
