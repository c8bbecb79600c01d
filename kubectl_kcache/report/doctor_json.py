"""`json` and `yaml`: exactly `DoctorReport.to_dict()`, the `doctor -o json` contract of the user guide."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from ..documents import json_text, takes_unicode, yaml_text
from .registry import renderer

if TYPE_CHECKING:
    from ..checks.model import DoctorReport


@renderer("json", order=10)
def render_json(report: DoctorReport, out: TextIO, *, color: bool = False) -> None:
    out.write(json_text(report.to_dict()))
    out.write("\n")


@renderer("yaml", order=11)
def render_yaml(report: DoctorReport, out: TextIO, *, color: bool = False) -> None:
    out.write(yaml_text(report.to_dict(), unicode=takes_unicode(out)))
