"""status for people (table: plain and coloured) and for machines (json, yaml), over the fixture fleet."""

from __future__ import annotations

import dataclasses
import io
import json
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from kubectl_kcache.explain.status import StatusReport, fleet_status
from kubectl_kcache.provenance import Provenance
from kubectl_kcache.report import formats, render
from kubectl_kcache.report.status_common import SEGMENTS, bar_widths
from kubectl_kcache.report.status_table import View, status_text, with_changes
from kubectl_kcache.snapshot import kinds
from kubectl_kcache.snapshot.files.from_files import load_files
from kubectl_kcache.snapshot.model import build
from kubectl_kcache.snapshot.reads import Read
from tests import builders as b

FLEET = Path(__file__).resolve().parents[1] / "explain" / "fixtures" / "status-fleet.yaml"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
PROV = Provenance(
    "live",
    server="https://127.0.0.1:6443",
    cluster="kind-gpu",
    taken_at="2026-11-29T10:00:00Z",
    generated_at="2026-11-29T10:00:01Z",
)


OK_READS = tuple(Read(resource, None, "ok") for resource in kinds.PLURALS)


@pytest.fixture
def report() -> StatusReport:
    return StatusReport(fleet_status(load_files([str(FLEET)])), PROV)


def rendered(report: StatusReport, fmt: str = "table", color: bool = False) -> str:
    out = io.StringIO()
    render("status", report, fmt, out, color=color)
    return out.getvalue()


def test_status_formats():
    assert formats("status") == ["table", "wide", "json", "yaml"]


def test_plain_table_rows_and_no_escapes(report):
    text = rendered(report)
    assert "\x1b[" not in text
    lines = text.splitlines()
    answer = (
        "3 node groups: 3 with problems; 7 nodes: 2 NotReady, 1 cordoned, 1 without a KernelCacheNode, 4 without "
        "a running agent; 8 KernelCaches: 7 not Ready"
    )
    assert lines[0] == lines[-1] == answer  # the answer first and last
    assert lines[1] == "cluster kind-gpu · https://127.0.0.1:6443 · read 2026-11-29T10:00:00Z · all namespaces"
    header = next(line for line in lines if line.startswith("GROUP"))
    assert header.split() == [
        "GROUP",
        "MEMBERS",
        "READY",
        "NOTREADY",
        "CORDONED",
        "KCN",
        "MISSING",
        "AGENTS",
        "CACHES",
        "PODS",
    ]  # the selectors are in -o wide
    rows = {line.split()[0]: line.split()[1:] for line in lines[lines.index(header) + 1 : lines.index(header) + 4]}
    assert rows == {
        "a": ["4", "3", "1", "1", "4", "0", "2/4", "3", "0"],
        "ab": ["1", "1", "0", "0", "1", "0", "0/1", "1", "0"],
        "b": ["2", "1", "1", "0", "1", "1", "1/2", "2", "0"],
    }
    cache_header = next(line for line in lines if line.startswith("KERNELCACHE"))
    assert cache_header.split() == [
        "KERNELCACHE",
        "GROUP",
        "NODES",
        "READY",
        "PENDING",
        "PULLING",
        "ERROR",
        "NO",
        "ENTRY",
        "PODS",
    ]
    start = lines.index(cache_header) + 1
    cells = [line.split() for line in lines[start : start + 9]]
    # Counted over each group's Ready members, as KServe counts them: a's are a-1, a-2 and a-4 (a-3 is NotReady,
    # a-4 cordoned still counts), b's is b-1 (b-2 has no Ready condition); a-3 and b-2 carry no entry, so
    # nothing is listed apart. Ordered by KServe's state on the cache's own group: Error (c9: Error on a-4;
    # c4: Error on b-1), then Preparing with a Ready member lacking the entry (c2: none on a-2), then Preparing
    # (c1: Ready, Extracting, Pending; c5: an entry without a state), then Ready (c3).
    assert cells == [
        ["other/c9", "a", "3", "0", "0", "0", "1", "2", "0"],
        ["team/c4", "b", "1", "0", "0", "0", "1", "0", "0"],
        ["team/c2", "a", "3", "0", "1", "1", "0", "1", "0"],
        ["team/c1", "a", "3", "1", "1", "1", "0", "0", "0"],
        ["ab*", "1", "0", "0", "1", "0", "0"],  # PODS is the cache's: on its first row only
        ["team/c5", "b", "1", "0", "1", "0", "0", "0", "0"],
        ["team/c3", "ab", "1", "1", "0", "0", "0", "0", "0"],
        ["a*", "3", "1", "0", "0", "0", "2"],
        [
            "*",
            "not",
            "the",
            "KernelCache's",
            "group:",
            "entries",
            "on",
            "members",
            "that",
            "are",
            "also",
            "in",
            "its",
            "group,",
            "or",
            "that",
            "the",
            "agent",
            "has",
            "not",
            "dropped",
            "yet",
        ],
    ]
    wide = status_text(report, color=False, width=None, view=View(wide=True)).splitlines()
    assert next(line for line in wide if line.startswith("b ")).split()[1] == "gpu=l40s,pool=b"
    problems = status_text(report, color=False, width=None, view=View(problems=True)).splitlines()
    assert not any(line.startswith("team/c3") for line in problems)
    bare = status_text(report, color=False, width=None, view=View(headers=False)).splitlines()
    assert bare[0].split()[0] == "a" and not any(line.startswith(("GROUP", "KERNELCACHE", "cluster")) for line in bare)
    assert lines[-5:-2] == [
        "KernelCaches no group prepares:",
        "  team/c6  group 'missing' (from spec.nodeGroupRef) does not exist",
        "  team/c7  group ' a' (from spec.nodeGroupRef) does not exist (the name has surrounding "
        "white space, which KServe does not trim here)",
    ]


def test_plain_table_never_wraps_long_names(report):
    long = "team/" + "x" * 240
    cells = replace(report.status.groups[0].caches[0], cache=long)
    group = replace(report.status.groups[0], caches=(cells,))
    text = rendered(replace(report, status=replace(report.status, groups=(group,))))
    assert any(line.startswith(long + "  a  ") for line in text.splitlines())


def test_colour_adds_the_heat_bar(report):
    text = rendered(report, color=True)
    assert "\x1b[" in text
    plain = ANSI.sub("", text)
    assert "HEAT" in plain
    c1 = next(line for line in plain.splitlines() if line.startswith("team/c1"))
    assert "█" * 12 in c1  # one bar per row, BAR_WIDTH characters
    # the c1 row in group a, over its 3 Ready members: 1 Ready (green), 1 Pulling (blue), 1 Pending (yellow);
    # no grey "no entry" segment (the member without an entry, a-3, is NotReady: KServe does not count it)
    raw = next(line for line in text.splitlines() if ANSI.sub("", line).startswith("team/c1"))
    assert re.search(r"\x1b\[32m█{4}\x1b\[0m\x1b\[34m█{4}\x1b\[0m\x1b\[33m█{4}\x1b\[0m(?!\x1b\[90m)", raw)
    assert "\x1b[90m█" not in raw


def test_names_from_the_cluster_are_escaped():
    snap = build([b.group("gpu\x1b[31m", {"pool": "a\u202eb"}), b.node("n1", {"pool": "a\u202eb"})], reads=OK_READS)
    text = status_text(StatusReport(fleet_status(snap), PROV), color=False, width=None, view=View(wide=True))
    assert "\x1b" not in text and "\u202e" not in text
    assert "gpu\\x1b[31m" in text and "pool=a\\u202eb" in text


def test_an_empty_cluster_says_so():
    text = status_text(StatusReport(fleet_status(build([], reads=OK_READS)), PROV), color=False, width=None)
    assert "no KernelCacheNodeGroups" in text and "no KernelCaches" in text


def test_notes_and_header_are_shown(report):
    text = status_text(
        replace(report, notes=("watch nodes: connection refused; retrying",)),
        color=False,
        width=None,
        header="watching, Ctrl-C to stop",
    )
    assert text.splitlines()[1:3] == [
        "watching, Ctrl-C to stop · cluster kind-gpu · https://127.0.0.1:6443 · read 2026-11-29T10:00:00Z · "
        "all namespaces",
        "watch nodes: connection refused; retrying",
    ]


def test_a_narrow_terminal_folds_names_not_numbers(report):
    long = "team/" + "x" * 120
    cells = replace(report.status.groups[0].caches[0], cache=long)
    group = replace(report.status.groups[0], caches=(cells,), selector={"k" * 50: "v" * 50})
    report = replace(report, status=replace(report.status, groups=(group, *report.status.groups[1:])))
    text = ANSI.sub("", status_text(report, color=True, width=100, view=View(wide=True)))
    lines = text.splitlines()
    # a name wider than its column is never cut: it is whole on a line of its own, the row follows
    assert long in lines and "k" * 50 + "=" + "v" * 50 in [line.strip() for line in lines]
    assert all(len(line) <= 100 for line in lines if long not in line and "k" * 50 not in line), text
    after = lines[lines.index(long) + 1]
    # the rest of the row, numbers whole: c9's cell, KServe's state (wide) and nodeCount (a's 3 Ready members)
    assert after.split()[:3] == ["a", "Error", "3"]
    assert any("2/4" in line for line in lines)  # numbers are never broken across lines


def test_json_and_yaml_are_the_document(report):
    doc = report.to_dict()
    assert json.loads(rendered(report, "json")) == doc
    assert yaml.safe_load(rendered(report, "yaml")) == doc


@given(
    st.lists(st.integers(min_value=0, max_value=10_000), min_size=5, max_size=5), st.integers(min_value=1, max_value=40)
)
def test_bar_widths_fill_the_bar_and_show_every_nonzero_segment(values, width):
    counts = dict(zip(SEGMENTS, values, strict=True))
    widths = bar_widths(counts, width)
    nonzero = [s for s in SEGMENTS if counts[s]]
    if not nonzero:
        assert sum(widths.values()) == 0
        return
    assert sum(widths.values()) == max(width, len(nonzero))
    assert all((widths[s] > 0) == (counts[s] > 0) for s in SEGMENTS)


def test_bar_widths_are_proportional():
    assert bar_widths({"Ready": 3, "Pulling": 1, "Pending": 0, "Error": 0, "no entry": 0}, 12) == {
        "Ready": 9,
        "Pulling": 3,
        "Pending": 0,
        "Error": 0,
        "no entry": 0,
    }
    assert bar_widths({"Ready": 999, "Pulling": 0, "Pending": 0, "Error": 1, "no entry": 0}, 12) == {
        "Ready": 11,
        "Pulling": 0,
        "Pending": 0,
        "Error": 1,
        "no entry": 0,
    }


def test_a_watch_redraw_marks_the_rows_that_changed(report):
    before = status_text(report, color=False, width=None)
    group = replace(report.status.groups[0], not_ready=2)
    after = status_text(
        replace(report, status=replace(report.status, groups=(group, *report.status.groups[1:]))),
        color=False,
        width=None,
    )
    marked = with_changes(after, before, color=False).splitlines()
    changed = [line for line in marked if line.endswith(" ~")]
    assert len(changed) == 1 and changed[0].split()[:4] == ["a", "4", "2", "2"]
    assert with_changes(before, before, color=False) == before  # nothing changed: nothing marked


def test_narrowed_to_a_group_and_to_labelled_caches(report):
    from kubectl_kcache.kernelcache.selectors import label_selector_matches, parse_label_selector
    from kubectl_kcache.report.status_common import narrowed

    only_b = narrowed(report.status, "b")
    assert [g.name for g in only_b.groups] == ["b"] and only_b.totals()["groups"] == 1
    assert set(only_b.caches) == {"team/c4", "team/c5"}
    only_c1 = narrowed(report.status, None, {"team/c1"})
    assert {cell.cache for g in only_c1.groups for cell in g.caches} == {"team/c1"}
    reqs = parse_label_selector("app=llm,tier!=t0,gpu,!legacy")  # status's -l is every command's
    assert label_selector_matches(reqs, {"app": "llm", "tier": "t1", "gpu": ""})
    assert not label_selector_matches(reqs, {"app": "llm", "tier": "t0", "gpu": ""})
    assert not label_selector_matches(reqs, {"app": "llm", "gpu": "", "legacy": "1"})
    with pytest.raises(ValueError):
        parse_label_selector("a=b,")


def test_the_watch_header_line_is_never_marked(report):
    before = status_text(report, color=False, width=None, header="watching, Ctrl-C to stop")
    later = replace(report, provenance=dataclasses.replace(PROV, taken_at="2026-11-29T10:05:00Z"))
    after = status_text(later, color=False, width=None, header="watching, Ctrl-C to stop")
    assert with_changes(after, before, color=False) == after


def test_the_answer_breaks_between_its_parts_on_a_terminal(report):
    """`200 KernelCaches: 22 not Ready` is one part: a line ends after a part's `;`, never inside it, when each
    part fits a line; a part too long for the line is broken at words."""
    whole = status_text(report, color=False, width=None).splitlines()[0]
    parts = whole.split("; ")
    assert len(parts) >= 3
    for width in range(max(len(p) for p in parts) + 1, len(whole)):
        lines = status_text(report, color=False, width=width).splitlines()
        answer = lines[: next(i for i, x in enumerate(lines) if x.startswith("cluster "))]
        assert len(answer) > 1 and all(len(x) <= width for x in answer), width
        assert [x.endswith(";") for x in answer] == [True] * (len(answer) - 1) + [False], answer
        assert " ".join(answer) == whole and lines[-len(answer) :] == answer
    narrow = status_text(report, color=False, width=40).splitlines()
    assert " ".join(narrow[: next(i for i, x in enumerate(narrow) if x.startswith("cluster "))]) == whole
