"""The reconcile plan table: tabulate lays it out; on a terminal the verbs are coloured and the columns stay
where they are without colour (tabulate measures the visible text)."""

from __future__ import annotations

import io
import re

from kubectl_kcache.report.plan_table import render_plan_table

DOC = {"actions": [
    {"verb": "create", "kind": "KernelCacheNode", "namespace": None, "name": "gpu-1", "reason": "member of gpu"},
    {"verb": "delete", "kind": "KernelCacheNode", "namespace": None, "name": "cpu-17", "reason": "no group"},
    {"verb": "event", "kind": "KernelCacheCapture", "namespace": "team-a", "name": "m-kcc-1",
     "eventReason": "NodeGroupNotFound", "message": "no group"},
]}


def render(color: bool) -> str:
    out = io.StringIO()
    render_plan_table(DOC, out, color=color)
    return out.getvalue()


def test_verbs_are_coloured_on_a_terminal_and_the_columns_do_not_move():
    plain, coloured = render(False), render(True)
    assert "\x1b[" not in plain
    assert "\x1b[32mCREATE\x1b[0m" in coloured and "\x1b[31mDELETE\x1b[0m" in coloured
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == plain
    header, first = plain.splitlines()[:2]
    assert header.index("KIND") == first.index("KernelCacheNode")
    assert "2 write(s), 1 event(s) planned" in plain
