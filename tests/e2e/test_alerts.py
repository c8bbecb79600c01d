"""Every alert of deploy/monitor/prometheusrule.yaml proven on series recorded from the real monitor: the bundled
healthy example is loaded into the test bed, the monitor runs as its ServiceAccount with only its read-only role,
and a script of incidents is played (an entry goes Error on a node, a pod starts cold while its cache is Ready,
the agent DaemonSet loses a node, a capture is stuck in Pushing, the monitor's reads are forbidden), each
followed by its recovery. Every phase is scraped from /metrics; the scrapes become promtool's input series
(tests/promtool.py says how), and `promtool test rules` asserts that each alert fires within its `for` during
its incident and clears after the recovery, and that no other alert fires at any point: none on the healthy
example over a simulated hour. The same scrapes pass `promtool check metrics`."""

from __future__ import annotations

import copy
import datetime as dt
import json
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from kubectl_kcache.explain.ready_model import NODE_GATES
from tests.promtool import Expect, Phase, SampleKey, Scrape, check_metrics, parse, rules_by_name, run_rule_test

from .load_example import load, unload
from .test_monitor import monitor

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
HEALTHY = ROOT / "examples" / "healthy-cluster.yaml"
RBAC = ROOT / "deploy" / "monitor" / "rbac.yaml"
Samples = Mapping[SampleKey, float]


def value(samples: Samples, name: str, **labels: str) -> float:
    """The sum over the series of `name` whose labels include these."""
    want = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and want <= ls)


def series(samples: Samples, name: str, **labels: str) -> list[dict[str, str]]:
    want = set(labels.items())
    return [dict(ls) for (n, ls), _ in samples.items() if n == name and want <= ls]


class Recording:
    def __init__(self, port: int):
        self.port = port
        self.phases: list[Phase] = []
        self.texts: list[str] = []
        self.facts: dict[str, Any] = {}  # what the script did, for the expectations (which cache, which pod...)

    def scrape(self) -> Scrape:
        text = urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=5).read().decode()
        self.texts.append(text)
        return Scrape(time.time(), parse(text))

    @contextmanager
    def phase(self, name: str, minutes: int, settled: Callable[[Samples], bool], timeout: float = 60) -> Iterator[None]:
        """The body makes the phase's change; then the phase is scraped once the monitor shows it (`settled`),
        and again 2.5 seconds later (the monitor evaluates every second: a moment that moved is current)."""
        started = time.time()
        yield
        deadline = time.monotonic() + timeout
        first = self.scrape()
        while not settled(first.samples):
            assert time.monotonic() < deadline, f"{name}: the monitor did not show it within {timeout}s"
            time.sleep(0.3)
            first = self.scrape()
        time.sleep(2.5)
        last = self.scrape()
        assert settled(last.samples), f"{name}: it did not hold"
        self.phases.append(Phase(name, minutes, started, [first, last]))

    def start_of(self, name: str) -> int:
        """The phase's first minute in simulated time."""
        minute = 0
        for p in self.phases:
            if p.name == name:
                return minute
            minute += p.minutes
        raise KeyError(name)

    def phase_named(self, name: str) -> Phase:
        return next(p for p in self.phases if p.name == name)


def _items(items: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [i for i in items if i["kind"] == kind]


def _ready(samples: Samples) -> bool:
    return value(samples, "kcache_monitor_ready") == 1 and value(samples, "kcache_monitor_evaluations_total") > 0


def test_each_alert_fires_on_its_incident_and_clears_and_none_fires_on_a_healthy_cluster(cluster, tmp_path):
    items = load(cluster, HEALTHY)
    try:
        cluster.kubectl("apply", "-f", str(RBAC))
        with monitor(cluster, tmp_path, "--resync-period", "1") as (port, _log):
            rec = Recording(port)
            _play(cluster, rec, items)
            for text in rec.texts[:1] + rec.texts[-1:]:
                assert check_metrics(text) == "", "promtool check metrics"
    finally:
        unload(cluster, items)

    expects = _expectations(rec)
    failed = run_rule_test(rec.phases, expects, tmp_path)
    assert failed == "", failed


# ---- the script ----------------------------------------------------------------------------------------

INCIDENT = 30  # simulated minutes an incident lasts
RECOVERY = 20


def _play(cluster: Any, rec: Recording, items: list[dict[str, Any]]) -> None:
    with rec.phase("healthy", 60, _ready):
        pass
    healthy = rec.phases[-1].last.samples
    assert value(healthy, "kcache_serving_pods", outcome="now") == 0
    assert value(healthy, "kcache_serving_pods", outcome="producer") == 3  # the example's producers: not cold

    # an entry goes Error on one member of a KernelCache's own group
    kcn = next(k for k in _items(items, "KernelCacheNode") if k["status"]["cacheStatus"])
    key, entry = next(iter(kcn["status"]["cacheStatus"].items()))
    namespace, name = key.split("/")
    broken = {**entry, "state": "Error", "message": "pull failed: 401 Unauthorized"}
    rec.facts["error_cache"] = (namespace, name)

    def errors(n: int) -> Callable[[Samples], bool]:
        return lambda s: value(s, "kcache_kernelcache_nodes", namespace=namespace, kernelcache=name, state="Error") == n

    with rec.phase("entry-error", INCIDENT, errors(1)):
        cluster.set_status("kernelcachenode", kcn["metadata"]["name"], {"cacheStatus": {key: broken}})
    answer = cluster.kcache("why-not-ready", name, "-n", namespace, "-o", "json")
    rec.facts["error_cause"] = json.loads(answer.stdout)["result"]["topCause"]
    with rec.phase("entry-error-recovered", RECOVERY, errors(0)):
        cluster.set_status("kernelcachenode", kcn["metadata"]["name"], {"cacheStatus": {key: entry}})

    # a pod of a served model starts cold while its cache is Ready: the webhook was down with Ignore
    hook = _items(items, "MutatingWebhookConfiguration")[0]
    cached = next(
        p
        for p in _items(items, "Pod")
        if "internal.serving.kserve.io/kernelcache-usage" in p["metadata"].get("annotations", {})
    )
    cold = _without_cache(cached)
    pod_ns, isvc = cold["metadata"]["namespace"], cold["metadata"]["labels"]["serving.kserve.io/inferenceservice"]
    rec.facts["cold_isvc"] = (pod_ns, isvc)

    def now(n: int) -> Callable[[Samples], bool]:
        return lambda s: value(s, "kcache_serving_pods", namespace=pod_ns, inferenceservice=isvc, outcome="now") == n

    with rec.phase("cold-rollout", INCIDENT, now(1)):
        _failure_policy(cluster, hook, "Ignore")
        cluster.create([cold])
        _failure_policy(cluster, hook, "Fail")
    with rec.phase("cold-rollout-recovered", RECOVERY, now(0)):
        cluster.kubectl("delete", "pod", "-n", pod_ns, cold["metadata"]["name"], "--grace-period=0", "--force")

    # a bad edit of KServe's configuration: the pod webhook rejects every new serving pod
    config = _items(items, "ConfigMap")[0]
    isvcs = {
        (p["metadata"]["namespace"], p["metadata"]["labels"]["serving.kserve.io/inferenceservice"])
        for p in _items(items, "Pod")
        if "serving.kserve.io/inferenceservice" in p["metadata"].get("labels", {})
    }

    def denied(every: bool) -> Callable[[Samples], bool]:
        def check(s: Samples) -> bool:
            counts = [
                value(s, "kcache_serving_pods", namespace=ns, inferenceservice=isvc, outcome="denied")
                for ns, isvc in isvcs
            ]
            return all(counts) if every else not any(counts)

        return check

    bad = {"data": {"kernelcache": config["data"]["kernelcache"].rstrip()[:-1]}}  # a JSON object cut short
    with rec.phase("config-broken", INCIDENT, denied(True)):
        cluster.kubectl("patch", "configmap", "-n", "kserve", config["metadata"]["name"], "-p", json.dumps(bad))
    with rec.phase("config-broken-recovered", RECOVERY, denied(False)):
        good = {"data": {"kernelcache": config["data"]["kernelcache"]}}
        cluster.kubectl("patch", "configmap", "-n", "kserve", config["metadata"]["name"], "-p", json.dumps(good))
    rec.facts["denied_isvcs"] = isvcs

    # the agent DaemonSet loses a member node (an affinity that excludes it)
    ds = _items(items, "DaemonSet")[0]
    group = _items(items, "KernelCacheNodeGroup")[0]["metadata"]["name"]
    lost = kcn["metadata"]["name"]
    rec.facts["agent_group"] = group

    def missing(n: int) -> Callable[[Samples], bool]:
        return lambda s: (
            value(s, "kcache_nodegroup_members", nodegroup=group)
            - value(s, "kcache_nodegroup_agents_ready", nodegroup=group)
            == n
        )

    with rec.phase("agent-lost", INCIDENT, missing(1)):
        _exclude_node(cluster, ds, lost)
    with rec.phase("agent-lost-recovered", RECOVERY, missing(0), timeout=120):
        _exclude_node(cluster, ds, None)

    # a capture stuck in Pushing for two hours
    capture = _items(items, "KernelCacheCapture")[0]
    meta = capture["metadata"]
    stuck = dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=2)
    pushing = {
        "phase": "Pushing",
        "conditions": [
            {
                "type": "Ready",
                "status": "False",
                "reason": "Pushing",
                "message": "pushing the artifact",
                "lastTransitionTime": stuck.strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
        ],
    }

    def stuck_findings(n: int) -> Callable[[Samples], bool]:
        return lambda s: value(s, "kcache_finding", check="capture", code="stuck") == n

    validator = _items(items, "ValidatingWebhookConfiguration")[0]  # KServe's capture status webhook: not here
    with rec.phase("capture-stuck", INCIDENT, stuck_findings(1)):
        _failure_policy(cluster, validator, "Ignore")
        cluster.set_status("kernelcachecapture", meta["name"], pushing, meta["namespace"])
    with rec.phase("capture-stuck-recovered", RECOVERY, stuck_findings(0)):
        restore = {k: capture["status"].get(k) for k in pushing}
        cluster.set_status("kernelcachecapture", meta["name"], restore, meta["namespace"])
        _failure_policy(cluster, validator, validator["webhooks"][0]["failurePolicy"])

    # the monitor's reads are forbidden: its role unbound, and its watches cut (an API server restart)
    bindings = [d for d in _rbac_docs() if d["kind"] == "ClusterRoleBinding"]
    with rec.phase("blind", INCIDENT, lambda s: value(s, "kcache_monitor_ready") == 0, timeout=120):
        for b in bindings:
            cluster.kubectl("delete", "clusterrolebinding", b["metadata"]["name"])
        cluster.testbed_cmd("restart", "apiserver")
    with rec.phase("blind-recovered", RECOVERY, _ready, timeout=180):
        cluster.kubectl("apply", "-f", str(RBAC))


def _without_cache(pod: dict[str, Any]) -> dict[str, Any]:
    """A copy of a cached serving pod as it is created when KServe's webhook is not called: no cache usage
    annotation, no kernel cache volumes, mounts or linker init container."""
    cold = copy.deepcopy(pod)
    meta = cold["metadata"]
    meta["name"] = meta["name"][:-5] + "cold0"
    meta["annotations"].pop("internal.serving.kserve.io/kernelcache-usage")
    for key in ("uid", "resourceVersion", "creationTimestamp", "ownerReferences", "generation", "managedFields"):
        meta.pop(key, None)
    cold.pop("status", None)
    spec = cold["spec"]
    spec["volumes"] = [v for v in spec["volumes"] if not v["name"].startswith("kernel-cache-")]
    spec["initContainers"] = [c for c in spec.get("initContainers", []) if not c["name"].startswith("kernel-cache-")]
    for ctr in spec.get("containers", []) + spec.get("initContainers", []):
        mounts = [x for x in ctr.get("volumeMounts", []) if not x["name"].startswith("kernel-cache-")]
        ctr["volumeMounts"] = mounts
    return cold


def _failure_policy(cluster: Any, hook: dict[str, Any], policy: str) -> None:
    patch = [
        {"op": "replace", "path": f"/webhooks/{i}/failurePolicy", "value": policy} for i in range(len(hook["webhooks"]))
    ]
    cluster.kubectl("patch", hook["kind"].lower(), hook["metadata"]["name"], "--type=json", "-p", json.dumps(patch))


def _exclude_node(cluster: Any, ds: dict[str, Any], node: str | None) -> None:
    """The DaemonSet's affinity as the example has it, with `node` excluded from every term (None: as it was)."""
    affinity = copy.deepcopy(ds["spec"]["template"]["spec"]["affinity"])
    if node is not None:
        for term in affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]:
            term["matchExpressions"].append({"key": "kubernetes.io/hostname", "operator": "NotIn", "values": [node]})
    patch = [{"op": "replace", "path": "/spec/template/spec/affinity", "value": affinity}]
    cluster.kubectl(
        "patch",
        "daemonset",
        "-n",
        ds["metadata"]["namespace"],
        ds["metadata"]["name"],
        "--type=json",
        "-p",
        json.dumps(patch),
    )


def _rbac_docs() -> list[dict[str, Any]]:
    import yaml

    return [d for d in yaml.safe_load_all(RBAC.read_text()) if d]


# ---- what promtool must see ------------------------------------------------------------------------------


def _expectations(rec: Recording) -> list[Expect]:
    """At each checked minute, every alert: firing with these labels, or not firing."""
    rules = rules_by_name()
    firing: dict[int, dict[str, Any]] = {}
    checked: set[int] = set(range(0, 61, 5))  # the healthy hour: nothing fires

    def incident(phase: str, alert: str, labels: Any, value_: float | None = None) -> None:
        """`labels` and `value_` of the one alert, or (labels, value) of each when several fire."""
        alerts = ((labels, value_),) if isinstance(labels, dict) else labels
        for_ = int(rules[alert]["for"].removesuffix("m"))
        start = rec.start_of(phase)
        end = start + rec.phase_named(phase).minutes
        checked.update({start + for_ - 1, end + 2})  # not yet; cleared after the recovery
        for minute in (start + for_ + 1, end - 1):
            firing.setdefault(minute, {})[alert] = alerts
            checked.add(minute)

    entry = rec.phase_named("entry-error").last.samples
    namespace, name = rec.facts["error_cache"]
    causes = series(entry, "kcache_kernelcache_not_ready_cause", namespace=namespace, kernelcache=name)
    # the cause is the one why-not-ready gives for that cache (an Error entry whose Job is gone: `job`)
    assert [c["cause"] for c in causes] == [rec.facts["error_cause"]], causes
    assert rec.facts["error_cause"] in NODE_GATES
    (row,) = series(
        entry, "kcache_kernelcache_nodes", namespace=namespace, kernelcache=name, state="Error", assigned="true"
    )
    labels = {
        "namespace": namespace,
        "kernelcache": name,
        "nodegroup": row["nodegroup"],
        "cause": rec.facts["error_cause"],
    }
    incident("entry-error", "KernelCacheNotReadyOnSomeMembers", labels, 1)

    pod_ns, isvc = rec.facts["cold_isvc"]
    incident(
        "cold-rollout", "ServingPodsStartedColdWhileACacheIsReady", {"namespace": pod_ns, "inferenceservice": isvc}, 1
    )
    incident("agent-lost", "KernelCacheAgentMissingOnMemberNodes", {"nodegroup": rec.facts["agent_group"]}, 1)
    broken = rec.phase_named("config-broken").last.samples
    denials = tuple(
        (
            {"namespace": ns, "inferenceservice": isvc},
            value(broken, "kcache_serving_pods", namespace=ns, inferenceservice=isvc, outcome="denied"),
        )
        for ns, isvc in sorted(rec.facts["denied_isvcs"])
    )
    incident("config-broken", "ServingPodsWouldBeDeniedByTheWebhook", denials)
    incident("capture-stuck", "KernelCacheCaptureStuck", {}, 1)
    incident("blind", "KcacheMonitorBlind", {}, 0)
    proven = {alert for alerts in firing.values() for alert in alerts}
    assert proven == set(rules), f"alerts without an incident in the script: {sorted(set(rules) - proven)}"

    return [
        Expect(minute, alert, firing.get(minute, {}).get(alert, ())) for minute in sorted(checked) for alert in rules
    ]
