"""deploy/rbac.yaml grants reconcile's reads exactly as the read plan makes them: every list its informers
watch (plan.RECONCILE, plan.RECONCILE_ACCESS) is allowed to list and watch, in its namespace and by name
where the list is by name, and no rule grants a list or watch that no plan list makes; every write the
executor and leader election make is granted, and no other verb is."""

from __future__ import annotations

from pathlib import Path

import yaml

from kubectl_kcache.kernelcache import constants as c
from kubectl_kcache.reconcile import actions as a
from kubectl_kcache.reconcile.executor import write_cause
from kubectl_kcache.snapshot import plan
from kubectl_kcache.snapshot.kinds import ListSpec

ROOT = Path(__file__).resolve().parents[3]
READS = ("list", "watch")


def rules() -> list[tuple[str | None, dict]]:
    """(namespace or None for the ClusterRole, rule) of the controller's roles."""
    out = []
    for doc in yaml.safe_load_all((ROOT / "deploy" / "rbac.yaml").read_text()):
        if doc and doc["kind"] in ("ClusterRole", "Role"):
            ns = doc["metadata"].get("namespace") if doc["kind"] == "Role" else None
            out += [(ns, rule) for rule in doc["rules"]]
    return out


def grants(ns: str | None, rule: dict, spec: ListSpec, verb: str) -> bool:
    res = spec.resource
    if verb not in rule["verbs"] or res.group not in rule["apiGroups"] or res.plural not in rule["resources"]:
        return False
    if ns is not None and spec.namespace != ns:
        return False
    names = rule.get("resourceNames")
    return not names or spec.field_selector in {plan.by_name(n) for n in names}


def test_every_list_reconcile_watches_is_granted_list_and_watch():
    for spec in plan.RECONCILE + plan.RECONCILE_ACCESS:
        for verb in READS:
            assert any(grants(ns, rule, spec, verb) for ns, rule in rules()), f"{verb} {spec.describe()}"


def test_no_list_or_watch_is_granted_that_no_plan_list_makes():
    for ns, rule in rules():
        for verb in set(rule["verbs"]) & set(READS):
            for group in rule["apiGroups"]:
                for plural in rule["resources"]:
                    used = [
                        s
                        for s in plan.RECONCILE + plan.RECONCILE_ACCESS
                        if (s.resource.group, s.resource.plural) == (group, plural) and grants(ns, rule, s, verb)
                    ]
                    assert used, f"{verb} {plural} ({ns or 'cluster-wide'}) is granted but no plan list needs it"


# Every other request reconcile makes: the writes of each action the planner makes (executor.write_cause names
# them as RBAC does), the reads after a 409/404 and before a status update or an event's series, the series'
# patch, and leader election's Lease in its namespace.
ACTIONS = [
    (a.CREATE, c.KIND_NODE),
    (a.DELETE, c.KIND_NODE),
    (a.PATCH, "DaemonSet"),
    (a.CREATE, c.KIND_CACHE),
    (a.UPDATE_STATUS, c.KIND_CAPTURE),
    (a.EVENT, "Event"),
]
OTHER_REQUESTS = {
    ("get", "kernelcachenodes"),  # the object after a 409/404 (executor._overtaken)
    ("get", "daemonsets"),
    ("get", "kernelcaches"),  # and a capture's KernelCache before its kernelCacheRef
    ("get", "kernelcachecaptures"),  # read before its status update, with its resourceVersion
    ("get", "events"),  # an event series already sent
    ("patch", "events"),  # its count, as a series
    ("get", "leases"),
    ("create", "leases"),
    ("update", "leases"),
}


def requests() -> set[tuple[str, str]]:
    return {tuple(write_cause(verb, kind).split(" ", 1)) for verb, kind in ACTIONS} | OTHER_REQUESTS  # type: ignore[misc]


def test_every_write_reconcile_makes_is_granted_and_nothing_more():
    granted = {
        (verb, plural)
        for _, rule in rules()
        for verb in rule["verbs"]
        if verb not in READS
        for plural in rule["resources"]
    }
    assert requests() <= granted, requests() - granted
    assert granted == requests(), granted - requests()
