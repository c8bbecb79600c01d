"""`doctor -o html`: one self-contained page (nothing loaded from anywhere), every value escaped, findings by
check with codes, objects, evidence and hints, one cause on many objects as one entry with a collapsible
list, and the fleet's status as a heatmap. (tests/cli/test_doctor_html_browser.py renders it in Chromium.)"""

from __future__ import annotations

import io
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from kubectl_kcache.checks.model import CheckResult, DoctorReport, Finding, ObjectRef
from kubectl_kcache.explain.status import fleet_status
from kubectl_kcache.provenance import Provenance
from kubectl_kcache.report import formats, render_doctor, wants
from kubectl_kcache.report.doctor_html import CATALOGUE_URL
from kubectl_kcache.snapshot.files.from_files import load_files

FLEET = Path(__file__).resolve().parents[1] / "explain" / "fixtures" / "status-fleet.yaml"
PROV = Provenance(
    "live",
    server="https://10.0.0.1:6443",
    cluster="prod-eu",
    taken_at="2026-11-29T10:00:00Z",
    generated_at="2026-11-29T10:00:05Z",
    namespace=None,
)


class Page(HTMLParser):
    """The parsed page: tags met, text per element id/class of interest, attributes of every tag."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.script = 0
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self.script += 1

    def handle_data(self, data):
        self.text.append(data)

    @property
    def all_text(self) -> str:
        return "".join(self.text)


def html_of(report: DoctorReport, **context) -> str:
    out = io.StringIO()
    render_doctor(report, "html", out, **context)
    return out.getvalue()


def test_html_is_a_registered_doctor_format_that_wants_the_status():
    assert "html" in formats()
    assert wants("html") == ("status", "provenance", "run", "fleet")
    assert wants("json") == ()


def test_the_page_loads_nothing(problem_report):
    text = html_of(problem_report, provenance=PROV, status=fleet_status(load_files([str(FLEET)])))
    page = Page(text)
    assert text.startswith("<!DOCTYPE html>")
    csp = next(a["content"] for t, a in page.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert "default-src 'none'" in csp
    for tag, attrs in page.tags:
        assert tag not in ("link", "img", "iframe", "object", "embed"), tag
        assert "src" not in attrs, (tag, attrs)
        href = attrs.get("href") or ""
        # in-page anchors, and links to the catalogue (followed on a click, never loaded)
        assert href == "" or href.startswith(("#", CATALOGUE_URL + "#")), href
    assert "@import" not in text and "url(" not in text
    assert page.script == 1  # the one inline script: open every list before printing


def test_header_names_source_time_version_and_scope(problem_report):
    text = Page(html_of(problem_report, provenance=PROV)).all_text
    for fact in (
        "prod-eu",
        "https://10.0.0.1:6443",
        "2026-11-29T10:00:00Z",
        "2026-11-29T10:00:05Z",
        "all namespaces",
        f"kubectl-kcache {PROV.tool_version}",
    ):
        assert fact in text, fact
    files = Provenance("files", files=("dump.yaml",), namespace="team-a", generated_at="x")
    text = Page(html_of(problem_report, provenance=files)).all_text
    assert "dump.yaml" in text and "namespace team-a" in text and "not recorded" in text


def test_findings_by_check_with_code_object_evidence_and_hint(problem_report):
    text = html_of(problem_report, provenance=PROV)
    page = Page(text)
    body = page.all_text
    assert "2 errors, 1 warning, 1 info in 7 checks (1 skipped, 1 incomplete, 1 suppressed)" in body
    for f in problem_report.findings:
        assert f.message in body and f.hint in body
        assert "/".join(x for x in (f.object.kind, f.object.namespace, f.object.name) if x) in body
        for ev in f.evidence:
            assert ev in body
    sections = [a.get("id") for t, a in page.tags if t == "section" and (a.get("id") or "").startswith("check-")]
    assert sections == ["check-group-taints", "check-nodes", "check-cache-status"]
    # the suppressed finding is listed apart, collapsed
    assert text.index('id="suppressed"') > text.index('id="check-cache-status"')
    assert "Suppressed findings (1)" in body


def test_every_value_is_escaped():
    evil = '"><script>alert(1)</script><img src=x onerror=alert(2)>'
    finding = Finding(
        check="nodes",
        severity="error",
        object=ObjectRef("Node", f"n1{evil}\x1b[31m"),
        message=f"node {evil} is cordoned",
        hint=f"kubectl uncordon '{evil}'",
        group=f"g{evil}",
        evidence=(f"label {evil}",),
        code="cordoned",
    )
    report = DoctorReport(
        checks=(CheckResult("nodes", "fail"),),
        findings=(finding,),
        cluster=f"c{evil}",
        titles={"nodes": f"title {evil}"},
    )
    text = html_of(report, provenance=PROV, status=f"reason {evil}")
    page = Page(text)
    assert page.script == 1
    assert "<img" not in text and "alert(1)</script>" not in text
    assert not [a for _, a in page.tags if "onerror" in a]
    body = page.all_text
    assert f"node {evil} is cordoned" in body  # shown as text, exactly
    assert "\x1b" not in text and "n1" + evil + "\\x1b[31m" in body


def test_one_cause_on_many_objects_is_one_entry_with_a_collapsible_list():
    findings = tuple(
        Finding(
            check="group-taints",
            severity="error",
            object=ObjectRef("Node", f"gpu-{i:02d}"),
            group="gpu",
            message=f"taint x on gpu-{i:02d}",
            hint="kubectl patch kernelcachenodegroup gpu ...",
            code="blocks-jobs",
            cause="taint x=y:NoSchedule is not tolerated",
            lister="kubectl get nodes -l pool=gpu",
            evidence=(f"untolerated taint on gpu-{i:02d}",),
        )
        for i in range(12)
    )
    report = DoctorReport(checks=(CheckResult("group-taints", "fail"),), findings=findings)
    text = html_of(report)
    page = Page(text)
    articles = [a for t, a in page.tags if t == "article"]
    assert len(articles) == 1 and "grouped" in (articles[0]["class"] or "")
    body = page.all_text
    assert "12 Nodes" in body and "gpu-00, gpu-01, gpu-02, … (+9)" in body
    assert "kubectl get nodes -l pool=gpu" in body and "kubectl patch kernelcachenodegroup gpu ..." in body
    details = text[text.index("<details") : text.index("</details>")]
    assert details.count("<li><code>Node/") == 12
    assert "kubectl patch" not in details  # the shared next command is said once, above
    for i in range(12):  # every object, its message and evidence, in the list
        assert f"Node/gpu-{i:02d}" in details and f"untolerated taint on gpu-{i:02d}" in details


def test_the_fleet_heatmap():
    status = fleet_status(load_files([str(FLEET)]))
    report = DoctorReport(checks=(CheckResult("crds", "pass"),), findings=())
    text = html_of(report, status=status, provenance=PROV)
    heat = text[text.index('<table class="heat cards">') :]
    heat = heat[: heat.index("</table>")]
    rows = re.findall(r'<tr class="[^"]*"><th scope=row><code class="kc">(.*?)</code></th>(.*?)</tr>', heat)
    rows = [(re.sub(r"<[^>]+>", "", name), tds) for name, tds in rows]
    assert [name for name, _ in rows][0] == "other/c9", "worst first: an Error entry"
    ready = [int(re.search(r"<b>(\d+)/", tds).group(1)) for _, tds in rows[1:]]
    assert ready == sorted(ready), "then the fewest members Ready"
    assert sorted(name for name, _ in rows) == ["other/c9", "team/c1", "team/c2", "team/c3", "team/c4", "team/c5"]
    cells = {name: re.findall(r'<td class="([^"]+)"[^>]*title="([^"]*)"', tds) for name, tds in rows}
    # over each group's Ready members, as KServe counts them: a's are a-1, a-2 and a-4 (a-3 is NotReady and
    # has no entry: no "no entry" share for it), ab's is a-2
    why_c1 = "Node by node: kubectl kcache why-not-ready c1 -n team"
    assert cells["team/c1"] == [
        ("cell", f"a: 1 Ready, 1 Pulling, 1 Pending of 3 Ready members; KServe: Preparing. {why_c1}"),
        ("cell other", f"ab: 1 Pulling of 1 Ready member. {why_c1}"),  # not its group: no state of KServe's
    ]
    assert cells["other/c9"] == [
        (
            "cell has-error",
            "a: 1 Error, 2 no entry of 3 Ready members; KServe: Error. Node by node: "
            "kubectl kcache why-not-ready c9 -n other",
        )
    ]
    assert '<td class="empty">' in dict(rows)["other/c9"]  # no cell in ab or b
    # the bar divides by the Ready members: c1's three phases fill it, no blank share for a-3
    c1_bar = re.findall(r'style="width:([\d.]+)%"', dict(rows)["team/c1"].split("</td>")[0])
    assert c1_bar == ["33.3", "33.3", "33.3"]
    # every cell links to its KernelCache's line below the map, which says KServe's state and the command
    links = re.findall(r'<a class="why" href="#(why-\d+)">', dict(rows)["team/c1"])
    assert len(links) == 2 and len(set(links)) == 1
    line = re.search(rf'<li id="{links[0]}">(.*?)</li>', text).group(1)
    assert re.sub(r"<[^>]+>", "", line) == (
        "team/c1 Preparing on group a (Preparing): 1 of 3 Ready members Ready, 1 Pulling, 1 Pending. "
        "Node by node: kubectl kcache why-not-ready c1 -n team"
    )
    assert text.count('<li id="why-') == 6
    assert "KernelCaches no group prepares" in text and "team/c6" in text
    groups = Page(text).all_text
    assert "No findings." in groups


def test_the_heatmap_counts_ready_members_and_escapes_its_links():
    from kubectl_kcache.explain.status import CacheCell, FleetStatus, GroupStatus, PhaseCounts
    from kubectl_kcache.kernelcache.aggregate import Aggregate, Counts

    evil = '"><script>alert(1)<\\script><img src=x onerror=alert(2)>'  # a namespace has no slash
    cache = f"ns{evil}/kc{evil}\x1b[31m"
    agg = Aggregate("Preparing", "Preparing", f"msg {evil}", Counts(2, 1, 1, 0))
    # 4 members, 2 NotReady (one with an Error entry KServe does not count): 1 Ready and 1 Pending of 2
    cell = CacheCell(cache, PhaseCounts(ready=1, pending=1), True, 2, PhaseCounts(error=1), agg)
    group = GroupStatus(f"g{evil}", {"pool": "a"}, 4, 2, 0, 4, 4, (cell,))
    text = html_of(DoctorReport(checks=(), findings=()), status=FleetStatus((group,), caches=(cache,)))
    page = Page(text)
    assert page.script == 1 and "<img" not in text and "<script>alert" not in text and "\x1b" not in text
    assert not [a for _, a in page.tags if "onerror" in a]
    td = next(a for t, a in page.tags if t == "td" and "cell" in (a.get("class") or ""))
    assert "has-error" not in td["class"]  # the Error on a NotReady member is not the cache's
    # the bar is over the 2 Ready members: no blank share for the NotReady ones
    assert re.findall(r'class="seg (\w+)" style="width:([\d.]+)%"', text) == [("ready", "50.0"), ("pending", "50.0")]
    assert td["title"] == (
        f"g{evil}: 1 Ready, 1 Pending of 2 Ready members (1 on NotReady members, not counted); KServe: Preparing. "
        "Node by node: no command (the name is not one Kubernetes accepts)"
    )
    assert "why-not-ready" not in td["title"]  # a value that is not a name is never put into a command
    link = next(a for t, a in page.tags if t == "a" and "why" in (a.get("class") or ""))
    assert link["href"] == "#why-0" and any(t == "li" and a.get("id") == "why-0" for t, a in page.tags)
    assert "1 entry on NotReady members, not counted by KServe" in page.all_text


def test_no_status_says_why(problem_report):
    text = html_of(problem_report, status="status cannot answer: cannot list pods in namespace kserve (forbidden)")
    assert "Not shown: status cannot answer: cannot list pods in namespace kserve (forbidden)" in text
    assert 'class="heat"' not in html_of(problem_report)


@pytest.mark.parametrize("report_name", ["clean_report", "skipped_only_report", "suppressed_only_report"])
def test_other_reports_render(report_name, request):
    report = request.getfixturevalue(report_name)
    text = html_of(report)
    assert text.rstrip().endswith("</html>")
    assert Page(text).script == 1


def test_with_many_groups_the_heatmap_has_one_row_per_cell():
    from kubectl_kcache.explain.status import CacheCell, FleetStatus, GroupStatus, PhaseCounts

    groups = tuple(
        GroupStatus(
            f"pool-{i:02d}",
            {"pool": str(i)},
            10,
            0,
            0,
            10,
            10,
            (CacheCell(f"team/c{i:02d}", PhaseCounts(ready=i), True),),
        )
        for i in range(10)
    )
    status = FleetStatus(groups, caches=tuple(f"team/c{i:02d}" for i in range(10)))
    text = html_of(DoctorReport(checks=(), findings=()), status=status)
    heat = text[text.index('<table class="heat cards">') :]
    heat = heat[: heat.index("</table>")]
    assert heat.count("<th scope=row>") == 10  # not a 10 x 10 matrix
    names = re.findall(
        r'<th scope=row><code class="kc"><span class="nw">team/</span><wbr><span class="nw">c(\d+)<', heat
    )
    assert names == [f"{i:02d}" for i in range(10)], "worst first: c00 has no member Ready"
    assert '<td class="empty">' not in heat
    assert "<td class=grp>pool-03</td>" in heat and 'data-label="pool-03"' in heat  # on a phone the cell names it
    assert 'title="pool-03: 3 Ready, 7 no entry of 10 Ready members. Node by node: ' in heat


def test_errors_lead_the_page_and_codes_link_to_the_catalogue():
    warning = Finding(
        "group-selector",
        "warning",
        ObjectRef("KernelCacheNodeGroup", "h200"),
        "matches no node",
        "kubectl get nodes",
        code="no-match",
    )
    error = Finding(
        "kcn-missing",
        "error",
        ObjectRef("Node", "n1"),
        "no KernelCacheNode",
        "kubectl kcache reconcile",
        code="missing",
    )
    report = DoctorReport(
        checks=(CheckResult("group-selector", "fail"), CheckResult("kcn-missing", "fail")), findings=(warning, error)
    )
    text = html_of(report)
    findings = text[text.index('<section id="findings">') :]
    assert findings.index("kcn-missing/missing") < findings.index("group-selector/no-match")
    chips = text[text.index('class="chips"') :]
    assert chips.index("kcn-missing") < chips.index("group-selector")
    assert f'href="{CATALOGUE_URL}#kcn-missing/missing"' in text


def test_the_header_says_kubernetes_version_context_and_command(problem_report):
    out = io.StringIO()
    render_doctor(
        problem_report,
        "html",
        out,
        provenance=PROV,
        run={"kubernetes": "v1.33.2", "context": "prod-eu-admin", "command": "kubectl kcache doctor -o html"},
    )
    text = Page(out.getvalue()).all_text
    assert "v1.33.2" in text and "prod-eu-admin" in text and "kubectl kcache doctor -o html" in text
    assert "Kubernetes" in Page(html_of(problem_report, provenance=PROV)).all_text  # said even when unknown


def test_an_incomplete_run_leads_with_no_verdict(skipped_only_report):
    text = html_of(skipped_only_report)
    summary = text[text.index('<section id="summary">') :]
    verdict = re.search(r'<p class="verdict ([a-z]+)">([^<]*)</p>', summary)
    assert verdict.group(1) == "incomplete"
    assert verdict.group(2).startswith("incomplete: no verdict. 1 check could not read: forbidden: list pods in kserve")


def test_heatmap_filters_need_no_script():
    status = fleet_status(load_files([str(FLEET)]))
    text = html_of(DoctorReport(checks=(CheckResult("crds", "pass"),), findings=()), status=status)
    assert text.count("<script>") == 1  # still only the print helper
    assert 'id="hf-ns-0"' in text and 'id="hf-g-0"' in text
    assert "#hf-ns-0:checked~.scroll tr.hrow:not(.ns-0){display:none}" in text
    rows = re.findall(r'<tr class="hrow ([^"]*)"><th scope=row><code class="kc">(.*?)</code>', text)
    rows = [(classes, re.sub(r"<[^>]+>", "", name)) for classes, name in rows]
    namespaces = sorted({name.split("/")[0] for _, name in rows})
    for classes, name in rows:
        assert f"ns-{namespaces.index(name.split('/')[0])}" in classes.split()
