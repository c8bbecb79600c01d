"""THE Prometheus text renderer (exposition format 0.0.4) of the monitor's and the controller's metrics: a
family is its name, type, help and samples; label values come from the cluster and are escaped as the
format requires."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

CONTENT_TYPE = "text/plain; version=0.0.4"


def label_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


@dataclass
class Family:
    name: str
    kind: str  # gauge | counter
    help: str
    samples: list[tuple[dict[str, str], float]] = field(default_factory=list)

    def add(self, value: float, **labels: str) -> None:
        self.samples.append((labels, value))

    def lines(self) -> list[str]:
        out = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} {self.kind}"]
        for labels, value in self.samples:
            text = ",".join(f'{k}="{label_value(v)}"' for k, v in labels.items())
            number = repr(float(value)) if isinstance(value, float) and not value.is_integer() else str(int(value))
            out.append(f"{self.name}{{{text}}} {number}" if text else f"{self.name} {number}")
        return out


def render(families: Iterable[Family]) -> str:
    return "\n".join(line for f in families for line in f.lines()) + "\n"
