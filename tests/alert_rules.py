"""deploy/monitor/prometheusrule.yaml read as Prometheus would: each alert's expression, the metric names it
selects and the label matchers it puts on them, so tests can hold the rules against a real scrape of the
monitor (a rule naming a metric the monitor does not export never fires, and nothing says so)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml
from prometheus_client.parser import text_string_to_metric_families

RULES = Path(__file__).resolve().parents[1] / "deploy" / "monitor" / "prometheusrule.yaml"

# PromQL words that are not metric names (aggregations, functions are followed by "(", so only these)
KEYWORDS = {
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "and",
    "or",
    "unless",
    "bool",
    "offset",
    "sum",
    "min",
    "max",
    "avg",
    "count",
    "stddev",
    "stdvar",
    "topk",
    "bottomk",
    "quantile",
    "count_values",
    "group",
    "inf",
    "nan",
}
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
_GROUPING = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)")
_SELECTOR = re.compile(r"([A-Za-z_:][A-Za-z0-9_:]*)?\s*\{([^}]*)\}")
_MATCHER = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"')
_NAME = re.compile(r"(?<![A-Za-z0-9_:.\"])([A-Za-z_:][A-Za-z0-9_:]*)(?![A-Za-z0-9_:])")
_DURATION = re.compile(r"\[[^\]]*\]")


@dataclass(frozen=True)
class Selector:
    metric: str
    matchers: tuple[tuple[str, str, str], ...]  # (label, operator, value)


@dataclass(frozen=True)
class Alert:
    name: str
    expr: str
    for_: str
    selectors: tuple[Selector, ...]
    grouping: frozenset[str]  # label names in by (...) / on (...) clauses


def selectors(expr: str) -> tuple[tuple[Selector, ...], frozenset[str]]:
    """The vector selectors of a PromQL expression (metric name and matchers), and the labels it groups by."""
    grouping = frozenset(
        label.strip() for m in _GROUPING.finditer(expr) for label in m.group(2).split(",") if label.strip()
    )
    rest = _DURATION.sub(" ", _GROUPING.sub(" ", expr))
    found: list[Selector] = []
    for m in _SELECTOR.finditer(rest):
        found.append(Selector(m.group(1) or "", tuple(_MATCHER.findall(m.group(2)))))
    bare = _STRING.sub(" ", _SELECTOR.sub(" ", rest))
    for m in _NAME.finditer(bare):
        word = m.group(1)
        after = bare[m.end() :].lstrip()
        if word.lower() in KEYWORDS or after.startswith("("):  # an aggregation or a function
            continue
        found.append(Selector(word, ()))
    return tuple(found), grouping


def alerts(path: Path = RULES) -> Iterator[Alert]:
    doc = yaml.safe_load(path.read_text())
    assert doc["kind"] == "PrometheusRule", path
    for group in doc["spec"]["groups"]:
        for rule in group["rules"]:
            sels, grouping = selectors(rule["expr"])
            yield Alert(rule["alert"], rule["expr"], rule.get("for", ""), sels, grouping)


def scraped(text: str) -> dict[str, list[dict[str, str]]]:
    """Sample name -> the label sets of its samples, parsed by prometheus_client's own text-format parser (it
    raises on text Prometheus could not read)."""
    out: dict[str, list[dict[str, str]]] = {}
    for family in text_string_to_metric_families(text):
        if not family.samples:  # declared, with no series now (a KernelCache cause while every one is Ready)
            out.setdefault(family.name, [])
        for sample in family.samples:
            out.setdefault(sample.name, []).append(dict(sample.labels))
    return out


def unknown(
    alert: Alert, scrape: dict[str, list[dict[str, str]]], possible: dict[tuple[str, str], set[str]] | None = None
) -> list[str]:
    """What the alert's expression asks of the scrape that it does not have: a metric name, a label on that
    metric, a label value an equality matcher wants (in the scrape, or among `possible[(metric, label)]`: the
    values a label can take, such as a finding code no check reports today), a label it groups by."""
    possible = possible or {}
    problems = []
    for sel in alert.selectors:
        if sel.metric not in scrape:
            problems.append(f"metric {sel.metric} is not exported")
            continue
        samples = scrape[sel.metric]
        labels = {k for s in samples for k in s}
        for label, op, value in sel.matchers:
            if label not in labels and (sel.metric, label) not in possible:
                problems.append(f"{sel.metric} has no label {label}")
            elif op == "=" and value not in possible.get((sel.metric, label), {s.get(label) for s in samples}):
                problems.append(f'{sel.metric} has no sample with {label}="{value}"')
    exported = {k for sel in alert.selectors for s in scrape.get(sel.metric, ()) for k in s}
    exported |= {label for sel in alert.selectors for (metric, label) in possible if metric == sel.metric}
    problems += [f"grouped by {g}, a label none of its metrics has" for g in sorted(alert.grouping - exported)]
    return problems
