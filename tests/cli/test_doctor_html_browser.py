"""`doctor -o html` in a real browser: headless Chromium (Debian's `chromium`, installed by run-tests) renders
the report of the bundled broken example, the rendered DOM holds every finding's check/code and object, the
console stays empty (no JavaScript error, no load refused by the page's Content-Security-Policy), and a
screenshot is taken (the one docs/user-guide.md shows: KCACHE_UPDATE_SCREENSHOT=1 writes it to
docs/doctor-html.png; pngquant makes it small when installed).

Never skipped: without Chromium the test fails and says how to install it."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BROKEN = "examples/broken-cluster.yaml"  # relative to ROOT: the path the page (and the screenshot) shows
DOCS_SHOT = ROOT / "docs" / "doctor-html.png"
WINDOW = (1280, 1800)

pytestmark = pytest.mark.browser


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail("Chromium is not installed: `apt-get install -y chromium` (run-tests installs it)", pytrace=False)
    return found


def browse(tmp_path: Path, page: Path, *mode: str) -> subprocess.CompletedProcess:
    """One headless Chromium run with a new, empty profile and nothing that talks to the network."""
    profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
    profile.mkdir()
    cmd = [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--disable-extensions",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        "--enable-logging=stderr",
        "--v=0",
        *mode,
        page.as_uri(),
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def console(stderr: str) -> list[str]:
    """The page's console messages (Chromium logs them as INFO:CONSOLE lines)."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


class Text(HTMLParser):
    def __init__(self, markup: str):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.feed(markup)

    def handle_data(self, data):
        self.parts.append(data)

    @property
    def text(self) -> str:
        return "".join(self.parts)


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("html")
    run = [sys.executable, "-m", "kubectl_kcache", "doctor", "--from-file", BROKEN]
    page = subprocess.run([*run, "-o", "html"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert page.returncode == 1, page.stderr  # findings
    path = out / "report.html"
    path.write_text(page.stdout, encoding="utf-8")
    doc = json.loads(subprocess.run([*run, "-o", "json"], capture_output=True, text=True, cwd=ROOT, timeout=120).stdout)
    return path, doc


def test_rendered_dom_has_every_finding_and_the_console_is_clean(report, tmp_path):
    path, doc = report
    run = browse(tmp_path, path, "--dump-dom")
    assert run.returncode == 0, run.stderr[-2000:]
    dom = run.stdout
    assert dom.lstrip().startswith("<!DOCTYPE html>") or dom.lstrip().startswith("<html")
    text = Text(dom).text
    assert doc["findings"], "the broken example has findings"
    for f in doc["findings"]:
        obj = f["object"]
        path_text = "/".join(x for x in (obj["kind"], obj["namespace"], obj["name"]) if x)
        assert f"{f['check']}/{f['code']}" in text, f
        assert path_text in text or obj["name"] in text, f
    # the fleet's heatmap and groups came through the browser too
    assert 'class="heat cards"' in dom and "llm-serving" in text
    # how the page was made, and errors first with codes linked to the catalogue
    assert "v1.36.3" in text and "kubectl kcache doctor --from-file examples/broken-cluster.yaml -o html" in text
    findings = dom[dom.index('id="findings"') :]
    assert findings.index('class="sev error"') < findings.index('class="sev warning"')
    assert 'href="https://github.com/kserve/kubectl-kcache/blob/main/docs/checks.md#kcn-missing/missing"' in dom
    assert console(run.stderr) == [], console(run.stderr)


def test_screenshot(report, tmp_path):
    path, _ = report
    shot = tmp_path / "doctor-html.png"
    run = browse(tmp_path, path, f"--screenshot={shot}", f"--window-size={WINDOW[0]},{WINDOW[1]}")
    assert run.returncode == 0, run.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == WINDOW
    assert len(data) > 50_000  # a rendered page, not a blank one
    assert console(run.stderr) == [], console(run.stderr)
    import os

    if os.environ.get("KCACHE_UPDATE_SCREENSHOT"):
        if shutil.which("pngquant"):
            subprocess.run(
                ["pngquant", "--force", "--quality=60-85", "--output", str(DOCS_SHOT), str(shot)], check=True
            )
        else:
            shutil.copyfile(shot, DOCS_SHOT)
