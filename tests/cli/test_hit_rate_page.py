"""`why-not-cached -A -o html`: the fleet's hit rate as one self-contained page (nothing fetched, the doctor
page's one print helper the only script), one row per InferenceService with its producers beside the hit rate,
every value escaped, the exit code of the text view, and `-o html` to a terminal written to a file as the
doctor's page is. (tests/cli/test_html_layout_browser.py lays it out in Chromium.)"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from tests import builders as b
from tests.unit.explain.test_why_not_cached import CREATED, cluster

from .test_why_not_cached import cli

ROOT = Path(__file__).resolve().parents[2]
BROKEN = str(ROOT / "examples" / "broken-cluster.yaml")
HEALTHY = str(ROOT / "examples" / "healthy-cluster.yaml")
EVIL = '"><script>alert(1)</script><img src=x onerror=alert(2)>'


class Page(HTMLParser):
    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self.text: list[str] = []
        self._in_script = False
        self.rows: list[list[tuple[str, dict[str, str | None], str]]] = []  # serving rows: (tag, attrs, text)
        self._cell: list[object] | None = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        self._in_script = tag == "script"
        if tag == "tr":
            self.rows.append([])
        if tag in ("td", "th") and self.rows:
            self._cell = [tag, attrs, ""]

    def handle_endtag(self, tag):
        self._in_script = False
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append(tuple(self._cell))  # type: ignore[arg-type]
            self._cell = None

    def handle_data(self, data):
        if self._in_script:
            self.scripts.append(data)
        self.text.append(data)
        if self._cell is not None:
            self._cell[2] += data  # type: ignore[operator]

    @property
    def all_text(self) -> str:
        return "".join(self.text)


def assert_self_contained(text: str, page: Page) -> None:
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    csp = next(a["content"] for t, a in page.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert "default-src 'none'" in csp
    for tag, attrs in page.tags:
        assert tag not in ("link", "img", "iframe", "object", "embed", "base"), tag
        assert "src" not in attrs, (tag, attrs)
        assert not [k for k in attrs if k.startswith("on")], (tag, attrs)
        assert (attrs.get("href") or "#").startswith("#"), attrs
    assert not re.search(r"(?i)https?://|@import|url\(", text.replace(csp, ""))
    from kubectl_kcache.report.doctor_html import SCRIPT

    assert page.scripts == [SCRIPT]  # the doctor page's print helper, inline, and nothing else


def serving_rows(page: Page) -> dict[tuple[str, str], dict[str, str]]:
    """Each InferenceService row of the page: (namespace, name) -> the text of its cells by label."""
    out = {}
    for row in page.rows:
        if not row or row[0][1].get("class") != "ns":
            continue
        ns, isvc = row[0][2], row[1][2]
        out[(ns, isvc)] = {str(a.get("data-label")): t.strip() for _, a, t in row[2:]}
    return out


@pytest.mark.parametrize(("example", "exit_code"), [(BROKEN, 1), (HEALTHY, 0)], ids=["broken", "healthy"])
def test_the_page_of_an_example(capsys, example, exit_code):
    code, text, err = cli(capsys, "why-not-cached", "-A", "--from-file", example, "-o", "html")
    assert (code, err) == (exit_code, "")
    page = Page(text)
    assert_self_contained(text, page)
    _, doc, _ = cli(capsys, "why-not-cached", "-A", "--from-file", example, "-o", "json")
    doc = json.loads(doc)
    rows = serving_rows(page)
    isvcs = [r for r in doc["inferenceServices"] if not r["revision"]]
    assert sorted(rows) == sorted((r["namespace"], r["inferenceService"]) for r in isvcs)
    for r in isvcs:
        cells = rows[(r["namespace"], r["inferenceService"])]
        assert cells["pods"] == str(r["pods"]) and cells["cached"] == str(r["cached"])
        assert cells["producers (cold by design)"] == str(r["producer"])  # beside the hit rate, not in it
        eligible = r["pods"] - r["producer"]
        assert cells["hit rate"] == (f"{round(100 * r['cached'] / eligible)}%" if eligible else "-")
    body = page.all_text
    producers = doc["summary"]["producer"]
    assert f"{producers} producers (cold by design, not in the hit rate)" in body
    assert "examples/" in body and "all namespaces" in body and "why-not-cached -A" in body


def test_names_from_the_input_are_escaped(capsys, tmp_path):
    """Names Kubernetes validates cannot carry markup, but what a file says of itself can: the cluster a dump
    records, and the path of the file."""
    kc = b.consumer_cache("qwen")
    pods = [b.consumer("hit", node="gpu-1", created=CREATED, cache=kc), b.consumer("miss", node="gpu-1")]
    meta = {**yaml.safe_load(Path(HEALTHY).read_text())["meta"], "cluster": f"prod{EVIL}"}  # its reads: all ok
    dump = {"kind": "KcacheSnapshot", "version": 1, "meta": meta, "items": cluster(pods, kc=kc)}
    path = tmp_path / "<b>snap<img src=x>.json"  # a file name has no slash
    path.write_text(json.dumps(dump))
    code, text, _ = cli(capsys, "why-not-cached", "-A", "--from-file", str(path), "-o", "html")
    page = Page(text)
    assert code == 1 and page.scripts and "<script>alert" not in text and "<img" not in text and "<b>" not in text
    assert_self_contained(text, page)
    assert f"prod{EVIL}" in page.all_text and "<b>snap<img src=x>.json" in page.all_text  # shown, as text
    assert ("team-a", "qwen") in serving_rows(page)


def test_html_is_for_the_fleet(capsys):
    code, _, err = cli(capsys, "why-not-cached", "some-pod", "-n", "team-llm", "--from-file", BROKEN, "-o", "html")
    assert code == 2 and "-o html is for the whole fleet: give it without POD" in err


def test_to_a_terminal_the_page_is_written_to_a_file(tmp_path):
    from .test_doctor_options import in_pty

    code, text = in_pty(["why-not-cached", "-A", "-f", BROKEN, "-o", "html"], 100, cwd=tmp_path)
    (page,) = tmp_path.glob("kcache-hit-rate-*.html")
    assert code == 1 and re.fullmatch(r"kcache-hit-rate-gpu-staging-\d{8}-\d{6}\.html", page.name)
    assert text.strip() == f"wrote {page}"
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "5 serving pods in 5 InferenceServices" in html
    assert "\x1b[" not in html
