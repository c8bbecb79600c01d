"""THE Prometheus text of the long-running commands' /metrics (the monitor's and reconcile's), written by
prometheus_client (which escapes the label values; they come from the cluster). A family is its name, type,
help and samples; no prometheus_client state is kept between scrapes: each scrape renders the families it is
given."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


@dataclass
class Family:
    name: str
    kind: str  # gauge | counter (a counter's name ends in _total)
    help: str
    samples: list[tuple[dict[str, str], float]] = field(default_factory=list)

    def add(self, value: float, **labels: str) -> Family:
        self.samples.append((labels, value))
        return self

    def add_counts(self, counts: Mapping[Any, float], *labels: str) -> Family:
        """One sample per key of `counts`, in key order: a key is the value of the one label, or a tuple of
        the values of `labels`."""
        for key, value in sorted(counts.items()):
            values = key if isinstance(key, tuple) else (key,)
            self.add(value, **dict(zip(labels, values, strict=True)))
        return self

    def metric(self) -> Any:
        """The family as prometheus_client exposes it; every sample of a family has the same labels."""
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        keys = list(self.samples[0][0]) if self.samples else []
        made = (GaugeMetricFamily if self.kind == "gauge" else CounterMetricFamily)(self.name, self.help, labels=keys)
        for labels, value in self.samples:
            made.add_metric([labels[k] for k in keys], value)
        return made


class _Collected:
    def __init__(self, families: Iterable[Family]):
        self.families = list(families)

    def collect(self) -> Iterator[Any]:
        return (f.metric() for f in self.families)


def render(families: Iterable[Family]) -> str:
    from prometheus_client import CollectorRegistry, generate_latest

    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Collected(families))  # type: ignore[arg-type]
    return generate_latest(registry).decode()
