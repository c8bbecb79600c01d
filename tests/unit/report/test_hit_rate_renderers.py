"""The fleet's hit rate for people: the terminal table (rows whole, revisions only when they differ), and the
doctor page's "Serving pods" section (escaped, or why it is not shown)."""

from __future__ import annotations

from pathlib import Path

from kubectl_kcache.checks import run_doctor
from kubectl_kcache.explain.fleet import Row, hit_rate
from kubectl_kcache.report.doctor_html import page, serving_pods_section
from kubectl_kcache.report.hit_rate_table import hit_rate_text, worst_first
from kubectl_kcache.snapshot.files.from_files import load_files
from kubectl_kcache.snapshot.model import provenance

ROOT = Path(__file__).resolve().parents[3]
BROKEN = load_files([str(ROOT / "examples" / "broken-cluster.yaml")])


def test_table_rows_are_whole_lines_with_the_next_command_last():
    fleet = hit_rate(BROKEN)
    text = hit_rate_text(fleet, provenance(BROKEN.meta), color=False, width=None)
    lines = text.splitlines()
    assert "REVISION" not in lines[3]
    for row in fleet.rows:
        line = next(x for x in lines if x.split()[1:2] == [row.isvc])
        assert line.endswith(row.next_command)
    coloured = hit_rate_text(fleet, provenance(BROKEN.meta), color=True, width=60)
    assert "\x1b[1m" in coloured and all(len(x) <= 60 for x in coloured.splitlines()[:2] if "\x1b" not in x)


def row(
    isvc: str, revision: str = "", pods: int = 4, cached: int = 4, now: int = 0, denied: int = 0, unprepared: int = 0
) -> Row:
    return Row(
        pods=pods,
        cached=cached,
        cold=pods - cached,
        now=now,
        denied=denied,
        unprepared=unprepared,
        namespace="team-a",
        isvc=isvc,
        revision=revision,
        gate="",
        gate_count=0,
        next_command="",
        sample="",
    )


def test_rows_that_need_something_done_come_first_with_their_revisions():
    rows = [
        row("a-all-cached"),
        row("b-cold", cached=2),
        row("c-now", cached=1, now=3),
        row("c-now", "rs-1", pods=1, cached=1),
        row("c-now", "rs-2", pods=3, cached=0, now=3),
        row("d-denied", cached=3, denied=1),
        row("e-pulled-cold", unprepared=2),
        row("f-all-cached"),
    ]
    assert [(r.isvc, r.revision) for r in worst_first(rows)] == [
        ("d-denied", ""),
        ("c-now", ""),
        ("c-now", "rs-1"),
        ("c-now", "rs-2"),
        ("b-cold", ""),
        ("e-pulled-cold", ""),
        ("a-all-cached", ""),
        ("f-all-cached", ""),
    ]
    text = hit_rate_text(hit_rate(BROKEN), provenance(BROKEN.meta), color=False, width=None).splitlines()
    order = [x.split()[1] for x in text[4:]]
    assert order[0] == "mistral-7b-instruct-v0-3"  # a recreate would cache it; the others are producers


def test_the_doctor_page_has_a_serving_pods_section():
    fleet = hit_rate(BROKEN)
    html = page(run_doctor(BROKEN), None, provenance(BROKEN.meta), fleet=fleet)
    section = html[html.index('<section id="serving">') :]
    section = section[: section.index("</section>")]
    assert "<h2>Serving pods</h2>" in section and "5 serving pods in 5 InferenceServices" in section
    assert section.count("<tr>") == 1 + len(fleet.rows)
    assert "rollout restart deployment/mistral-7b-instruct-v0-3-predictor" in section
    # a revision captured without a KernelCache is sent to its capture's node-group decision
    assert "kubectl kcache why-group --capture llama-3-1-8b-instruct-kcc-7d9c6b5f48 -n team-llm" in section
    # a command's quotes are escaped on the page (a finding's patch command: the JSON it sends)
    assert "-p &#x27;[{&quot;op&quot;:&quot;add&quot;," in html and "-p '[{" not in html
    assert serving_pods_section("cannot list pods (forbidden)") == (
        '<section id="serving"><h2>Serving pods</h2><p class="warning-text">Not shown: cannot list pods '
        "(forbidden)</p></section>"
    )
    assert serving_pods_section(None) == ""


def test_the_hit_rate_page_is_the_doctor_pages_header_and_section_with_every_value_escaped():
    import dataclasses
    import io

    import msgspec

    from kubectl_kcache.explain.fleet import FleetHitRate, Totals
    from kubectl_kcache.report import render
    from kubectl_kcache.report.hit_rate_page import page as fleet_page

    evil = '"><script>alert(1)</script>'
    rows = (
        msgspec.structs.replace(row(f"isvc{evil}", revision=f"rev{evil}"), namespace=f"ns{evil}", next_command=evil),
    )
    fleet = FleetHitRate(rows, (), Totals(pods=4, cached=4), 1, selector=f"tier={evil}", isvc=f"isvc{evil}")
    source = dataclasses.replace(provenance(BROKEN.meta), cluster=f"c{evil}")
    html = fleet_page(fleet, source, {"command": f"kubectl kcache why-not-cached -A -l {evil}"})
    assert "<script>alert" not in html and html.count("<script>") == 1  # the doctor page's print helper
    assert "&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "all namespaces, pods with labels tier=&quot;&gt;" in html  # -l and --isvc in the scope
    assert "<h1>Kernel Cache hit rate</h1>" in html and '<section id="serving">' in html
    assert 'id="findings"' not in html and 'id="fleet"' not in html  # the hit rate alone
    doctor = page(run_doctor(BROKEN), None, provenance(BROKEN.meta), fleet=hit_rate(BROKEN))
    section = serving_pods_section(hit_rate(BROKEN))
    assert section in doctor and section in fleet_page(hit_rate(BROKEN), provenance(BROKEN.meta))
    out = io.StringIO()
    render("hit-rate", hit_rate(BROKEN), "html", out, source=provenance(BROKEN.meta))
    assert out.getvalue().startswith("<!DOCTYPE html>")


def test_a_line_that_fits_or_is_piped_is_printed_as_it_is():
    """Wrapping never rewrites data: a cluster name with two spaces keeps them when its line is not broken."""
    import msgspec

    meta = msgspec.structs.replace(BROKEN.meta, cluster="team  cluster")
    for width in (None, 200):
        text = hit_rate_text(hit_rate(BROKEN), provenance(meta), color=False, width=width)
        assert "cluster team  cluster" in text.splitlines()[0], width
