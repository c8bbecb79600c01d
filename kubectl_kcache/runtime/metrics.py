"""THE Prometheus text of the long-running commands' /metrics (the monitor's and reconcile's), written by
prometheus_client (which escapes the label values; they come from the cluster). A family is its name, type,
help and samples; no prometheus_client state is kept between scrapes: each scrape renders the families it is
given, some of whose sample lines may have been rendered before (`Rendered`: each sample line stands alone)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, TypeVar

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
Sample = tuple[dict[str, str], float]  # labels, value
_R = TypeVar("_R")


@dataclass
class Family:
    name: str
    kind: str  # gauge | counter (a counter's name ends in _total)
    help: str
    # each a sample, or sample lines rendered before (`sample_lines`, kept by `Rendered`)
    samples: list[Sample | str] = field(default_factory=list)

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

    def metric(self, samples: Iterable[tuple[dict[str, str], float]] = ()) -> Any:
        """The family with these samples as prometheus_client exposes it; every sample of a family has the same
        labels."""
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        samples = list(samples)
        keys = list(samples[0][0]) if samples else []
        made = (GaugeMetricFamily if self.kind == "gauge" else CounterMetricFamily)(self.name, self.help, labels=keys)
        for labels, value in samples:
            made.add_metric([labels[k] for k in keys], value)
        return made

    def text(self) -> str:
        """The family in the exposition format: its HELP and TYPE, then its samples in order (each sample line
        stands alone, so lines rendered before read as those rendered now)."""
        out = [_rendered([self.metric()])]
        fresh: list[tuple[dict[str, str], float]] = []
        for sample in [*self.samples, ""]:
            if isinstance(sample, str):
                if fresh:
                    out.append(sample_lines(self, fresh))
                    fresh = []
                out.append(sample)
            else:
                fresh.append(sample)
        return "".join(out)


def sample_lines(family: Family, samples: Iterable[tuple[dict[str, str], float]]) -> str:
    """The lines of these samples of `family`, as prometheus_client writes them (without HELP and TYPE)."""
    text = _rendered([family.metric(samples)])
    return text.split("\n", 2)[2]  # after the family's two comment lines


class Rendered:
    """The sample lines rendered for rows of the last evaluation (a node group's counts, a KernelCache's
    readiness), by the row object: a row the next evaluation reuses (the very same object) is not rendered
    again. Only the last render's are kept."""

    def __init__(self) -> None:
        self._last: dict[tuple[str, int], tuple[object, str]] = {}
        self._now: dict[tuple[str, int], tuple[object, str]] = {}

    def add_rows(self, family: Family, rows: Iterable[_R], samples: Callable[[_R], Iterable[Sample]]) -> Family:
        """The samples of each row added to `family`, in order: the lines kept for a row of the last render, the
        others rendered now (in one pass: each sample is one line)."""
        texts: list[str] = []
        missed: list[tuple[int, _R, list[Sample]]] = []
        for row in rows:
            key = (family.name, id(row))
            hit = self._last.get(key)
            if hit is not None and hit[0] is row:
                self._now[key] = hit
                texts.append(hit[1])
            else:
                missed.append((len(texts), row, list(samples(row))))
                texts.append("")
        if missed:
            lines = iter(sample_lines(family, [s for _, _, mine in missed for s in mine]).split("\n"))
            for at, made, mine in missed:
                texts[at] = "".join(f"{line}\n" for line in islice(lines, len(mine)))
                self._now[(family.name, id(made))] = (made, texts[at])
        family.samples += texts
        return family

    def done(self) -> None:
        """The render is over: what it rendered is what the next one may reuse."""
        self._last, self._now = self._now, {}


class _Collected:
    def __init__(self, metrics: Iterable[Any]):
        self.metrics = list(metrics)

    def collect(self) -> Iterator[Any]:
        return iter(self.metrics)


def _rendered(metrics: Iterable[Any]) -> str:
    from prometheus_client import generate_latest

    return generate_latest(_Collected(metrics)).decode()  # type: ignore[arg-type]


def render(families: Iterable[Family]) -> str:
    return "".join(f.text() for f in families)
