"""`json` and `yaml`: exactly `DoctorReport.to_dict()`, the `doctor -o json` contract of the user guide."""

from __future__ import annotations

import codecs
import json
from typing import TYPE_CHECKING, TextIO

from .registry import renderer

if TYPE_CHECKING:
    from ..checks.model import DoctorReport


@renderer("json", order=10)
def render_json(report: DoctorReport, out: TextIO, *, color: bool = False) -> None:
    json.dump(report.to_dict(), out, indent=2)
    out.write("\n")


@renderer("yaml", order=11)
def render_yaml(report: DoctorReport, out: TextIO, *, color: bool = False) -> None:
    import yaml

    # Long strings stay on one line (hints are commands to copy); non-ASCII is escaped unless `out` is UTF.
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml when present: 5x faster, same document
    yaml.dump(report.to_dict(), out, Dumper=dumper, sort_keys=False, default_flow_style=False, width=1 << 30,
              allow_unicode=_is_utf(out))


def _is_utf(out: TextIO) -> bool:
    encoding = getattr(out, "encoding", None)
    if not encoding:
        return True
    try:
        return codecs.lookup(encoding).name.startswith("utf")
    except LookupError:
        return False
