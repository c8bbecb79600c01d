"""docs/doctor-80.png and docs/doctor-120.png: `kubectl kcache doctor` on the broken example as a terminal of
80 and 120 columns shows it (colours included), rendered by headless Chromium; docs/fleet-doctor-120.png,
docs/fleet-status-problems-120.png and docs/fleet-doctor-piped.png: the doctor and `status --problems` on
tests/fleets.py's 2,000 nodes (one block per cause; the answer line first), and the doctor piped into `cut`.

    python3 -m tests.terminal_screenshot        # needs tmux and chromium

Each run is a real tmux pane of that size (no $COLUMNS: the plugin asks the terminal); `capture-pane -e`
keeps the colours, which become an HTML page of the pane's first rows, which Chromium screenshots.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMAND = "kubectl kcache doctor --from-file examples/broken-cluster.yaml"
FLEET = "fleet-dump.json"  # tests/fleets.py's fleet as a dump, in the pane's working directory
# (name, command, columns, window width in pixels)
SHOTS = (
    ("doctor-80", COMMAND, 80, 760),
    ("doctor-120", COMMAND, 120, 1120),
    ("fleet-doctor-120", f"kubectl kcache doctor --from-file {FLEET}", 120, 1120),
    ("fleet-status-problems-120", f"kubectl kcache status --from-file {FLEET} --problems", 120, 1120),
    ("fleet-doctor-piped", f"kubectl kcache doctor --from-file {FLEET} | cut -c1-118", 120, 1120),
)
ROWS = 56
COLOURS = {
    30: "#3b4252",
    31: "#ff6b6b",
    32: "#7fd47f",
    33: "#f0c060",
    34: "#6cb6ff",
    35: "#d38aea",
    36: "#5fd7d7",
    37: "#e5e9f0",
    90: "#7a8394",
    91: "#ff8787",
    92: "#a3e89b",
    93: "#ffd77a",
    94: "#8cc8ff",
    95: "#e2a6f5",
    96: "#87e5e5",
    97: "#ffffff",
}
SGR = re.compile(r"\x1b\[([0-9;]*)m")


def capture(columns: int, command: str = COMMAND, cwd: Path = ROOT) -> str:
    """The pane's whole history, with its escape codes, after the command ran in it (in `cwd`)."""
    session = f"kcache-shot-{os.getpid()}-{columns}"
    bin_dir = str(Path(sys.executable).parent)
    env = f"env -u COLUMNS -u NO_COLOR TERM=xterm-256color PATH={bin_dir}:{os.environ.get('PATH', '')}"
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", session, "-x", str(columns), "-y", "50", f"{env} bash --norc --noprofile"],
        check=True,
    )
    try:
        time.sleep(0.5)
        subprocess.run(["tmux", "send-keys", "-t", session, f"cd {cwd} && PS1='$ ' && clear", "Enter"], check=True)
        time.sleep(0.5)
        subprocess.run(["tmux", "send-keys", "-t", session, command, "Enter"], check=True)
        for _ in range(60):  # until the prompt is back
            time.sleep(1)
            shown = subprocess.run(
                ["tmux", "capture-pane", "-t", session, "-p"], check=True, capture_output=True, text=True
            ).stdout.rstrip()
            if shown.endswith("\n$"):
                break
        return subprocess.run(
            ["tmux", "capture-pane", "-t", session, "-p", "-e", "-S", "-", "-E", "-"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)


def to_html(text: str, columns: int) -> str:
    # tmux writes a style once, where it starts, and never again at the start of the lines it goes on into (a
    # bold answer line wrapped at the pane's width, a bold name that starts a row): the style carries over
    style: dict[str, object] = {}

    def line_html(line: str) -> str:
        nonlocal style
        out: list[str] = []
        pos = 0

        def span(part: str) -> str:
            css = [f"color:{style['fg']}"] if "fg" in style else []
            css += ["font-weight:700"] if style.get("bold") else []
            css += ["opacity:.6"] if style.get("dim") else []
            part = html.escape(part)
            return f'<span style="{";".join(css)}">{part}</span>' if css and part else part

        for m in SGR.finditer(line):
            out.append(span(line[pos : m.start()]))
            pos = m.end()
            for code in [int(c) for c in m.group(1).split(";") if c] or [0]:
                if code == 0:
                    style = {}
                elif code == 1:
                    style["bold"] = True
                elif code == 2:
                    style["dim"] = True
                elif code == 22:  # tmux ends bold and dim with 22, a colour with 39, not with 0
                    style.pop("bold", None)
                    style.pop("dim", None)
                elif code == 39:
                    style.pop("fg", None)
                elif code in COLOURS:
                    style["fg"] = COLOURS[code]
        out.append(span(line[pos:]))
        return "".join(out)

    body = "\n".join(line_html(line) for line in text.splitlines()[:ROWS])
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><style>body{margin:0;background:#1e222a}"
        "pre{margin:0;padding:14px 16px;font:15px/1.35 'DejaVu Sans Mono',monospace;color:#d8dee9;"
        f"width:{columns}ch;white-space:pre}}</style></head><body><pre>{body}</pre></body></html>"
    )


def main() -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not (browser and shutil.which("tmux")):
        sys.exit("needs tmux and chromium (apt-get install -y tmux chromium)")
    from tests import fleets

    with tempfile.TemporaryDirectory() as tmp:
        listed = fleets.write(Path(tmp) / "fleet.json")
        # as a dump, which says when it was read (a plain List gets a note on stderr)
        dump = [sys.executable, "-m", "kubectl_kcache", "dump", "-f", listed, "-o", "json"]
        (Path(tmp) / FLEET).write_text(subprocess.run(dump, check=True, capture_output=True, text=True).stdout)
        for name, command, columns, width in SHOTS:
            page = Path(tmp) / f"{name}.html"
            cwd = ROOT if FLEET not in command else Path(tmp)
            page.write_text(to_html(capture(columns, command, cwd), columns), encoding="utf-8")
            shot = ROOT / "docs" / f"{name}.png"
            subprocess.run(
                [
                    browser,
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--hide-scrollbars",
                    "--no-first-run",
                    f"--screenshot={shot}",
                    f"--window-size={width},1170",
                    page.as_uri(),
                ],
                check=True,
                capture_output=True,
                timeout=120,
            )
            print(f"wrote {shot.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
