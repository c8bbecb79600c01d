"""Renderers: one function per output format, picked from a registry (see registry.py).

Importing this package registers the doctor formats; it imports neither rich nor yaml (the renderers
do, lazily, when they run).
"""

from __future__ import annotations

from . import doctor_json, doctor_junit, doctor_markdown, doctor_sarif, doctor_table  # noqa: F401  (register)
from .registry import formats, get_renderer, render, render_doctor, renderer

__all__ = ["formats", "get_renderer", "render", "render_doctor", "renderer"]
