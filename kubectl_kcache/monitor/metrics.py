"""The monitor's metrics as Prometheus text (exposition format 0.0.4, written by prometheus_client), from the
last evaluation and the source's counters, named as kube-state-metrics names its own: the subject first
(`kcache_nodegroup_*`, `kcache_kernelcache_*`), each object's namespace and name as separate labels, every state
of a state set present (0 or 1, or a count), every known series present from the first scrape (0), and the
exporter's own health under `kcache_monitor_*`. Label values come from the cluster: prometheus_client escapes
them. docs/monitoring.md explains each metric; its table is checked against METRICS.

A KernelCache's entries are counted over its group's Ready members (cordoned ones included), as KServe counts
them (`kubectl kcache status`): the five states of `kcache_kernelcache_nodes` add up to KServe's nodeCount, and
entries on NotReady members are in none of them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from ..checks.model import STATUSES
from ..checks.registry import all_checks
from ..explain.fleet import FleetHitRate
from ..explain.status import FleetStatus, GroupStatus
from ..explain.why_not_ready import WhyNotReady, WhyNotReadyFleet
from ..runtime import metrics as prometheus
from ..runtime.metrics import Family
from .evaluate import Evaluation

PREFIX = "kcache_"
OWN = "kcache_monitor_"
ENTRY_STATES = ("Ready", "Pending", "Pulling", "Error", "none")
POD_OUTCOMES = ("cached", "cold", "now", "denied", "unprepared", "producer")
EVENT_TYPES = ("Normal", "Warning")
EVENT_DROPS = ("duplicate", "rate-limited", "failed")

# name -> (type, labels, help): the one list of what the monitor exports (docs/monitoring.md follows it)
METRICS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "kcache_build_info": ("gauge", ("version", "commit"), "Always 1: the plugin's version and git commit."),
    "kcache_finding": (
        "gauge",
        ("check", "code", "severity"),
        "Unsuppressed findings of the doctor's checks, by check, code and severity (every code, 0 when none).",
    ),
    "kcache_check_status": (
        "gauge",
        ("check", "status"),
        "1 for the status each doctor check has now (pass, fail, skipped, not-applicable), 0 for the others.",
    ),
    "kcache_nodegroup_members": ("gauge", ("nodegroup",), "Member nodes of each KernelCacheNodeGroup."),
    "kcache_nodegroup_agents_ready": (
        "gauge",
        ("nodegroup",),
        "Members of each KernelCacheNodeGroup with a Running and Ready agent pod.",
    ),
    "kcache_nodegroup_kernelcachenodes_missing": (
        "gauge",
        ("nodegroup",),
        "Members of each KernelCacheNodeGroup without their KernelCacheNode.",
    ),
    "kcache_kernelcache_nodes": (
        "gauge",
        ("namespace", "kernelcache", "nodegroup", "state", "assigned"),
        "Ready members of a node group (as KServe counts them, cordoned included) with a KernelCache's entry in "
        "each state (none: no entry); assigned: the group is the KernelCache's own.",
    ),
    "kcache_kernelcache_ready": (
        "gauge",
        ("namespace", "kernelcache"),
        "1 when the KernelCache's entry is Ready on every Ready member of its node group (and it has one).",
    ),
    "kcache_kernelcache_not_ready_cause": (
        "gauge",
        ("namespace", "kernelcache", "cause"),
        "1 for a KernelCache not Ready everywhere, with the gate that holds most of its nodes (why-not-ready).",
    ),
    "kcache_serving_pods": (
        "gauge",
        ("namespace", "inferenceservice", "outcome"),
        "Serving pods per InferenceService by outcome: cached at admission, cold, now (cold, but admission "
        "would mount a cache today), denied (admission would reject a recreate), unprepared (cached, on a node "
        "without a Ready entry), producer (cold by design: a cache's producer or a pod of a revision being "
        "captured; in neither cold nor now).",
    ),
    "kcache_monitor_ready": ("gauge", (), "1 while the monitor's /readyz answers 200."),
    "kcache_monitor_read_errors_total": ("counter", ("read",), "Failed lists and watches, by what was read."),
    "kcache_monitor_evaluations_total": ("counter", (), "Evaluations made."),
    "kcache_monitor_evaluation_duration_seconds": ("gauge", (), "How long the last evaluation took."),
    "kcache_monitor_last_evaluation_timestamp_seconds": (
        "gauge",
        (),
        "When the last evaluation was made (Unix time; 0 before the first).",
    ),
    "kcache_monitor_last_successful_read_timestamp_seconds": (
        "gauge",
        (),
        "When the data was last known current: every list and watch working (Unix time; 0 before the first).",
    ),
    "kcache_monitor_events_total": ("counter", ("type",), "Events created (with --events), by type."),
    "kcache_monitor_events_dropped_total": (
        "counter",
        ("reason",),
        "Events not sent (with --events): duplicate, rate-limited, failed.",
    ),
}


# the sample lines of the last evaluation's rows, by row: the next evaluation renders only the rows it made again
_RENDERED = prometheus.Rendered()


def _family(name: str) -> Family:
    kind, _labels, help = METRICS[name]
    return Family(name, kind, help)


@dataclass(frozen=True)
class Health:
    ready: bool
    read_errors: Mapping[str, int]  # every read the monitor makes, 0 when it has not failed
    last_read: float  # Unix time; 0 before the first
    evaluations: int
    events: Mapping[str, int] | None = None  # None without --events
    events_dropped: Mapping[str, int] = field(default_factory=dict)
    version: str = ""
    commit: str = ""


def _split(key: str) -> tuple[str, str]:
    namespace, _, name = key.partition("/")
    return namespace, name


def _findings(ev: Evaluation) -> Iterable[Family]:
    findings = _family("kcache_finding")
    counts = Counter((f.check, f.code, f.severity) for f in ev.report.findings if not f.suppressed)
    known = {(spec.id, code.id, code.severity) for spec in all_checks() for code in spec.codes}
    for check, code, severity in sorted(known | set(counts)):
        findings.add(counts[(check, code, severity)], check=check, code=code, severity=severity)
    checks = _family("kcache_check_status")
    for result in ev.report.checks:
        for status in STATUSES:
            checks.add(int(result.status == status), check=result.id, status=status)
    return findings, checks


def _groups(status: FleetStatus) -> Iterable[Family]:
    members = _family("kcache_nodegroup_members")
    agents = _family("kcache_nodegroup_agents_ready")
    missing = _family("kcache_nodegroup_kernelcachenodes_missing")
    for g in status.groups:
        members.add(g.members, nodegroup=g.name)
        agents.add(g.agent_ready, nodegroup=g.name)
        missing.add(g.kernel_cache_nodes_missing, nodegroup=g.name)
    nodes = _RENDERED.add_rows(_family("kcache_kernelcache_nodes"), status.groups, _cells)
    return members, agents, missing, nodes


def _cells(g: GroupStatus) -> Iterator[tuple[dict[str, str], float]]:
    for cell in g.caches:
        namespace, name = _split(cell.cache)
        counts = (*cell.counts.as_tuple(), cell.no_entry(g.ready))  # over the Ready members: KServe's
        assigned = "true" if cell.assigned else "false"
        for state, n in zip(ENTRY_STATES, counts, strict=True):
            yield (
                {
                    "namespace": namespace,
                    "kernelcache": name,
                    "nodegroup": g.name,
                    "state": state,
                    "assigned": assigned,
                },
                n,
            )


def _readiness(fleet: WhyNotReadyFleet) -> Iterable[Family]:
    ready = _RENDERED.add_rows(_family("kcache_kernelcache_ready"), fleet.rows, _ready)
    cause = _family("kcache_kernelcache_not_ready_cause")
    for w in fleet.rows:
        top = w.top_cause
        if top is not None:
            cause.add(1, namespace=w.namespace, kernelcache=w.name, cause=top)
    return ready, cause


def _ready(w: WhyNotReady) -> list[tuple[dict[str, str], float]]:
    return [({"namespace": w.namespace, "kernelcache": w.name}, int(w.ready))]


def _pods(fleet: FleetHitRate) -> Family:
    pods = _family("kcache_serving_pods")
    for r in fleet.rows:
        if r.revision:
            continue
        counts = (r.cached, r.cold, r.now, r.denied, r.unprepared, r.producer)
        for outcome, n in zip(POD_OUTCOMES, counts, strict=True):
            pods.add(n, namespace=r.namespace, inferenceservice=r.isvc, outcome=outcome)
    return pods


def _own(ev: Evaluation | None, health: Health) -> Iterable[Family]:
    out = [
        _family("kcache_build_info").add(1, version=health.version or "unknown", commit=health.commit or "unknown"),
        _family("kcache_monitor_ready").add(int(health.ready)),
        _family("kcache_monitor_read_errors_total").add_counts(health.read_errors, "read"),
        _family("kcache_monitor_evaluations_total").add(health.evaluations),
        _family("kcache_monitor_evaluation_duration_seconds").add(round(ev.seconds, 6) if ev is not None else 0),
        _family("kcache_monitor_last_evaluation_timestamp_seconds").add(round(ev.at, 3) if ev is not None else 0),
        _family("kcache_monitor_last_successful_read_timestamp_seconds").add(round(health.last_read, 3)),
    ]
    if health.events is not None:
        sent = _family("kcache_monitor_events_total").add_counts(
            dict.fromkeys(EVENT_TYPES, 0) | dict(health.events), "type"
        )
        dropped = _family("kcache_monitor_events_dropped_total").add_counts(
            dict.fromkeys(EVENT_DROPS, 0) | dict(health.events_dropped), "reason"
        )
        out += [sent, dropped]
    return out


def evaluation_text(ev: Evaluation) -> str:
    """The families of one evaluation (all but the monitor's own), rendered once per evaluation
    (`Evaluation.metrics_text`): tens of thousands of lines at 50,000 nodes, which every scrape would render
    again, holding the interpreter while the next evaluation waits."""
    families: list[Family] = [*_findings(ev)]
    if isinstance(ev.status, FleetStatus):
        families += _groups(ev.status)
    if isinstance(ev.readiness, WhyNotReadyFleet):
        families += _readiness(ev.readiness)
    if isinstance(ev.fleet, FleetHitRate):
        families.append(_pods(ev.fleet))
    text = prometheus.render(families)
    _RENDERED.done()
    return text


def render(ev: Evaluation | None, health: Health) -> str:
    """The scrape: the last evaluation's families (rendered when it was first scraped), then the monitor's own,
    rendered now (each family's text stands alone in the exposition format)."""
    return (ev.metrics_text if ev is not None else "") + prometheus.render(_own(ev, health))
