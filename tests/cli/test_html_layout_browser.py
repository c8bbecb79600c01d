"""The HTML pages on a phone and on a desktop, laid out by headless Chromium: `doctor -o html` and
`why-not-cached -A -o html` of both examples, each in a frame 390 px wide (a phone; Chromium's headless
window is never narrower than 500 px, a frame is) and one 1280 px wide. On the phone nothing is wider than the
screen (no sideways scrolling of the page or of anything in it), table rows are cards and a card shows its
numbers before the selector; on the desktop the tables are tables.

The measuring script is the test's, in the outer page: the pages themselves keep their one print helper."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .test_doctor_html_browser import BROKEN, ROOT, browse

pytestmark = pytest.mark.browser

PHONE, DESKTOP = 390, 1280
HEALTHY = "examples/healthy-cluster.yaml"

MEASURE = """
function measure(frame) {
  var w = frame.contentWindow, doc = w.document, root = doc.documentElement, over = [];
  doc.querySelectorAll('body *').forEach(function (el) {
    var r = el.getBoundingClientRect();
    if (r.width && r.right > w.innerWidth + 0.5) over.push(el.tagName + '.' + el.className + ' ' + Math.round(r.right));
  });
  var rows = Array.prototype.map.call(doc.querySelectorAll('table.cards tbody tr'), function (tr) {
    return w.getComputedStyle(tr).display;
  });
  var order = Array.prototype.map.call(doc.querySelectorAll('table.groups tbody tr'), function (tr) {
    var num = tr.querySelector('td.num'), sel = tr.querySelector('td[data-label=selector]');
    return num.getBoundingClientRect().top < sel.getBoundingClientRect().top;
  });
  return {innerWidth: w.innerWidth, scrollWidth: root.scrollWidth, over: over.slice(0, 20), overCount: over.length,
          rows: rows, thead: doc.querySelector('table.cards thead') ?
            w.getComputedStyle(doc.querySelector('table.cards thead')).display : null,
          numbersFirst: order};
}
var frames = document.querySelectorAll('iframe'), left = frames.length, out = {};
frames.forEach(function (f) {
  f.addEventListener('load', function () {
    out[f.width] = measure(f);
    if (--left === 0) document.getElementById('out').textContent = JSON.stringify(out);
  });
});
"""


def outer(page: Path) -> str:
    frames = "".join(
        f'<iframe width="{w}" height="900" src="{page.name}" style="border:0;display:block"></iframe>'
        for w in (PHONE, DESKTOP)
    )
    body = f'{frames}<pre id="out"></pre><script>{MEASURE}</script>'
    return f'<!DOCTYPE html><html><body style="margin:0">{body}</body></html>'


def make(tmp_path: Path, name: str, example: str, *args: str) -> Path:
    run = subprocess.run(
        [sys.executable, "-m", "kubectl_kcache", *args, "--from-file", example, "-o", "html"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert run.returncode in (0, 1) and run.stdout.startswith("<!DOCTYPE html>"), run.stderr
    page = tmp_path / f"{name}.html"
    page.write_text(run.stdout, encoding="utf-8")
    return page


def measured(tmp_path: Path, page: Path) -> dict[str, dict]:
    harness = tmp_path / f"measure-{page.name}"
    harness.write_text(outer(page), encoding="utf-8")
    run = browse(tmp_path, harness, "--dump-dom", "--allow-file-access-from-files", "--window-size=1400,1000")
    assert run.returncode == 0, run.stderr[-2000:]
    start = run.stdout.index('<pre id="out">') + len('<pre id="out">')
    text = run.stdout[start : run.stdout.index("</pre>", start)]
    assert text, "the frames did not load"
    return json.loads(text)


@pytest.mark.parametrize("example", [BROKEN, HEALTHY], ids=["broken", "healthy"])
@pytest.mark.parametrize(
    ("name", "args", "tables"),
    [("doctor", ("doctor",), 3), ("fleet", ("why-not-cached", "-A"), 1)],
    ids=["doctor", "fleet"],
)
def test_on_a_phone_cards_and_nothing_wider_than_the_screen_on_a_desktop_tables(tmp_path, name, args, tables, example):
    got = measured(tmp_path, make(tmp_path, name, example, *args))
    phone, desktop = got[str(PHONE)], got[str(DESKTOP)]
    assert phone["innerWidth"] == PHONE and desktop["innerWidth"] == DESKTOP
    assert phone["scrollWidth"] <= phone["innerWidth"], phone
    assert phone["overCount"] == 0, phone["over"]  # nor inside a box that scrolls sideways
    assert phone["rows"] and set(phone["rows"]) == {"flex"} and phone["thead"] == "none"
    assert set(desktop["rows"]) == {"table-row"} and desktop["thead"] == "table-header-group"
    assert len(phone["rows"]) == len(desktop["rows"]) >= tables
    if name == "doctor":
        assert phone["numbersFirst"] and all(phone["numbersFirst"]), "a group's counts come before its selector"
        assert not any(desktop["numbersFirst"])  # the table's columns: selector, then the counts
