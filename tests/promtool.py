"""Prometheus' own tools on the monitor's output: `promtool check metrics` on a scrape, and `promtool test rules`
on series recorded from the real monitor.

A recording is a list of phases (healthy, an incident, the recovery...). Each phase was held on the test bed
for a few seconds and scraped at least twice after the monitor had settled; in the promtool test it lasts
`minutes` (one sample a minute), so an alert's `for` is tested in simulated time. A series absent from a
phase's last scrape is absent from that phase (a stale marker first, as Prometheus writes when a target stops
exporting it). A `*_timestamp_seconds` gauge is a moment, not a level: a moment that moved between the phase's
scrapes (the monitor kept reading) moves with simulated time at the age it had; one that did not move is the
same moment for the whole phase, placed in simulated time where the recording was then, so `time() - ...`
grows as it did."""

from __future__ import annotations

import functools
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "deploy" / "monitor" / "prometheusrule.yaml"
BUILD = ROOT / "tests" / "testbed" / "build-promtool"

SampleKey = tuple[str, frozenset[tuple[str, str]]]


@functools.cache
def promtool() -> Path:
    """The promtool binary, built from the Go module proxy and cached (tests/testbed/build-promtool)."""
    out = subprocess.run([str(BUILD)], stdout=subprocess.PIPE, text=True, timeout=1800)
    assert out.returncode == 0, f"building promtool failed (exit {out.returncode})"
    return Path(out.stdout.strip().splitlines()[-1])


def parse(text: str) -> dict[SampleKey, float]:
    """A scrape's samples, read by prometheus_client's own parser."""
    from prometheus_client.parser import text_string_to_metric_families

    return {
        (s.name, frozenset(s.labels.items())): float(s.value)
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def check_metrics(text: str) -> str:
    """`promtool check metrics` on a scrape: its complaints ("" when none)."""
    proc = subprocess.run([str(promtool()), "check", "metrics"], input=text, capture_output=True, text=True)
    return (proc.stdout + proc.stderr).strip() if proc.returncode != 0 or proc.stdout.strip() else ""


@dataclass(frozen=True)
class Scrape:
    at: float  # Unix time it was taken
    samples: Mapping[SampleKey, float]


@dataclass
class Phase:
    name: str
    minutes: int
    started: float  # Unix time the phase's change was made
    scrapes: list[Scrape] = field(default_factory=list)

    @property
    def last(self) -> Scrape:
        return self.scrapes[-1]


def _number(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def _sim_of(moment: float, phases: list[Phase]) -> float:
    """Where a real moment falls in simulated seconds."""
    start = 0.0
    placed = start - (phases[0].started - moment)
    for p in phases:
        if p.started <= moment:
            placed = start + min(moment - p.started, p.minutes * 60)
        start += p.minutes * 60
    return placed


def input_series(phases: list[Phase]) -> list[dict[str, str]]:
    keys = sorted({k for p in phases for k in p.last.samples}, key=lambda k: (k[0], sorted(k[1])))
    out = []
    for name, labels in keys:
        parts = []
        start = 0.0
        present_before = False
        for p in phases:
            n = p.minutes
            v = p.last.samples.get((name, labels))
            if v is None:
                parts.append(("stale " + (f"_x{n - 1}" if n > 1 else "")).strip() if present_before else f"_x{n}")
                present_before = False
            elif name.endswith("_timestamp_seconds") and v > 0:
                first = p.scrapes[0].samples.get((name, labels), 0.0)
                if v > first:  # kept current: the same age all along
                    parts.append(f"{_number(start - (p.last.at - v))}+60x{n - 1}")
                else:
                    parts.append(f"{_number(_sim_of(v, phases))}x{n - 1}")
                present_before = True
            else:
                parts.append(f"{_number(v)}x{n - 1}")
                present_before = True
            start += n * 60
        selector = ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(labels))
        out.append({"series": f"{name}{{{selector}}}", "values": " ".join(parts)})
    return out


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def rule_groups(path: Path = RULES) -> dict[str, Any]:
    """The PrometheusRule's groups as a Prometheus rule file."""
    doc = yaml.safe_load(path.read_text())
    return {"groups": doc["spec"]["groups"]}


def rules_by_name(path: Path = RULES) -> dict[str, dict[str, Any]]:
    return {r["alert"]: r for g in rule_groups(path)["groups"] for r in g["rules"] if "alert" in r}


def expanded_annotations(rule: Mapping[str, Any], labels: Mapping[str, str], value: float) -> dict[str, str]:
    """The rule's annotations as Prometheus expands them for an alert with these labels and value (the two
    template forms the rules use: `{{ $labels.NAME }}` and `{{ $value }}`)."""
    import re

    def expand(text: str) -> str:
        text = re.sub(r"\{\{\s*\$labels\.(\w+)\s*\}\}", lambda m: labels[m.group(1)], text)
        text = re.sub(r"\{\{\s*\$value\s*\}\}", _number(value), text)
        assert "{{" not in text, f"a template form this expansion does not know: {text}"
        return text

    return {k: expand(v) for k, v in rule.get("annotations", {}).items()}


@dataclass(frozen=True)
class Expect:
    minute: int
    alert: str
    firing: tuple[tuple[Mapping[str, str], float], ...] = ()  # (labels of the expression, value) per alert


def rule_test(phases: list[Phase], expects: Iterable[Expect], path: Path = RULES) -> dict[str, Any]:
    """A promtool unit-test file (the rule file beside it is `rules.yaml`)."""
    rules = rules_by_name(path)
    tests = []
    for e in expects:
        rule = rules[e.alert]
        alerts = []
        for labels, value in e.firing:
            full = {**labels, **rule.get("labels", {})}
            alerts.append({"exp_labels": full, "exp_annotations": expanded_annotations(rule, full, value)})
        tests.append({"eval_time": f"{e.minute}m", "alertname": e.alert, "exp_alerts": alerts})
    return {
        "rule_files": ["rules.yaml"],
        "evaluation_interval": "1m",
        "tests": [{"interval": "1m", "input_series": input_series(phases), "alert_rule_test": tests}],
    }


def run_rule_test(phases: list[Phase], expects: Iterable[Expect], folder: Path, path: Path = RULES) -> str:
    """Write the rule file and the test, run `promtool test rules`; its output when it fails ("" when it
    passes)."""
    (folder / "rules.yaml").write_text(yaml.safe_dump(rule_groups(path), sort_keys=False))
    (folder / "test.yaml").write_text(yaml.safe_dump(rule_test(phases, expects, path), sort_keys=False, width=1000))
    proc = subprocess.run(
        [str(promtool()), "test", "rules", "test.yaml"], cwd=folder, capture_output=True, text=True, timeout=300
    )
    return "" if proc.returncode == 0 else (proc.stdout + proc.stderr)
