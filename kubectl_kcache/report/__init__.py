"""Renderers: one function per output format, picked from a registry (see registry.py).

Importing this package registers the formats of every answer (doctor, status, why-group, why-not-cached and its
hit rate, reconcile's plan); it imports neither rich nor yaml (the renderers
do, lazily, when they run).
"""

from __future__ import annotations

# Each module registers its formats when imported.
from . import answers as answers
from . import doctor_html as doctor_html
from . import doctor_junit as doctor_junit
from . import doctor_markdown as doctor_markdown
from . import doctor_name as doctor_name
from . import doctor_sarif as doctor_sarif
from . import doctor_table as doctor_table
from . import hit_rate_page as hit_rate_page
from . import status_table as status_table
from .registry import formats, get_renderer, render, render_doctor, renderer, wants

__all__ = ["formats", "get_renderer", "render", "render_doctor", "renderer", "wants"]
