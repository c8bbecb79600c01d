"""doctor's display options and `explain` (issue 20): `--show` hides findings below a severity but the summary
counts them, `--only`/`--skip` take `check/code`, `kubectl kcache explain CODE` says what a code means, and
`-o html` to a terminal writes a file instead of filling the screen."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.cli.test_doctor_terminal import BROKEN, in_pty

ROOT = Path(__file__).resolve().parents[2]
HEADLINE = re.compile(r"^(error|warning|info)\[([a-z0-9-]+)/([a-z0-9-]+)\]: ", re.M)


def kcache(*args: str, columns: str = "100") -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": columns, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "kubectl_kcache", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def shown(text: str) -> list[tuple[str, str]]:
    return [(m.group(1), f"{m.group(2)}/{m.group(3)}") for m in HEADLINE.finditer(text)]


def test_show_error_prints_errors_only_and_the_summary_still_counts_everything():
    everything = kcache("doctor", "-f", BROKEN)
    errors = kcache("doctor", "-f", BROKEN, "--show", "error")
    assert errors.returncode == everything.returncode == 1
    assert {sev for sev, _ in shown(errors.stdout)} == {"error"}
    assert len(shown(errors.stdout)) == 15
    lines = errors.stdout.splitlines()
    assert lines[0] == lines[-1] == "15 errors, 9 warnings, 1 info in 20 checks"
    assert "not shown: 9 warnings, 1 info (--show error)" in lines
    warnings = kcache("doctor", "-f", BROKEN, "--show", "warning")
    assert {sev for sev, _ in shown(warnings.stdout)} == {"error", "warning"}
    assert "not shown: 1 info (--show warning)" in warnings.stdout.splitlines()


def test_show_changes_what_is_printed_not_the_exit_code():
    proc = kcache("doctor", "-f", BROKEN, "--only", "nodes", "--show", "error")
    assert proc.returncode == 0  # warnings and an info: below the default --fail-on
    assert shown(proc.stdout) == []
    assert proc.stdout.splitlines()[0] == "2 warnings, 1 info in 1 check"
    bad = kcache("doctor", "-f", BROKEN, "--show", "fatal")
    assert bad.returncode == 2 and "fatal" in bad.stderr


def test_only_and_skip_take_check_slash_code():
    only = kcache("doctor", "-f", BROKEN, "--only", "agent/rollout,nodes/cordoned")
    assert [code for _, code in shown(only.stdout)] == ["nodes/cordoned", "agent/rollout"]  # in check order
    doc = json.loads(kcache("doctor", "-f", BROKEN, "--only", "agent/rollout", "-o", "json").stdout)
    assert [c["id"] for c in doc["checks"]] == ["agent"] and {f["code"] for f in doc["findings"]} == {"rollout"}
    skip = json.loads(
        kcache(
            "doctor", "-f", BROKEN, "--only", "agent", "--skip", "agent/pod-failed,agent/no-pod", "-o", "json"
        ).stdout
    )
    assert {f["code"] for f in skip["findings"]} == {"placement-stale", "rollout"}
    whole = json.loads(kcache("doctor", "-f", BROKEN, "--only", "agent,agent/rollout", "-o", "json").stdout)
    assert len({f["code"] for f in whole["findings"]}) == 4, "a bare check id keeps all of its codes"


def test_an_unknown_code_is_a_usage_error_naming_the_valid_ones():
    proc = kcache("doctor", "-f", BROKEN, "--only", "agent/bogus")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip() == (
        "error: --only: unknown finding code 'agent/bogus'; the codes of agent: "
        "agent/missing, agent/placement-stale, agent/rollout, agent/no-pod, "
        "agent/pod-failed, agent/pass-failing"
    )
    proc = kcache("doctor", "-f", BROKEN, "--skip", "nope/x")
    assert proc.returncode == 2 and "--skip: unknown check id 'nope/x'" in proc.stderr


def test_explain_a_code():
    proc = kcache("explain", "kcn-missing/missing", columns="80")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "error[kcn-missing/missing]: a member node without a KernelCacheNode"
    assert "check kcn-missing: every member node has a KernelCacheNode" in lines
    text = " ".join(proc.stdout.split())
    assert "KServe's node reconciler creates a KernelCacheNode, named exactly after the node" in text
    assert "See docs/checks.md#kcn-missing/missing" in text
    assert "  kubectl kcache doctor --only kcn-missing/missing" in lines
    assert all(len(line) <= 80 for line in lines)


def test_explain_a_check_lists_its_codes():
    proc = kcache("explain", "agent")
    assert proc.returncode == 0
    for code in ("missing", "placement-stale", "rollout", "no-pod", "pod-failed"):
        assert f"  agent/{code}: " in proc.stdout


def test_explain_an_unknown_code_exits_2_with_one_clear_line():
    for code, expected in (
        ("kcn-missing/nope", "explain: unknown code 'kcn-missing/nope'; the codes of kcn-missing: kcn-missing/missing"),
        ("frobnicate", "explain: unknown code 'frobnicate': a code is check/code, e.g. kcn-missing/missing"),
    ):
        proc = kcache("explain", code)
        assert proc.returncode == 2 and proc.stdout == ""
        assert len(proc.stderr.strip().splitlines()) == 1 and expected in proc.stderr, proc.stderr


def test_html_to_a_terminal_is_written_to_a_file(tmp_path):
    """As popeye's --save: a page on the screen helps nobody."""
    code, text = in_pty(["doctor", "-f", str(ROOT / BROKEN), "-o", "html"], 100, cwd=tmp_path)
    assert code == 1
    (page,) = tmp_path.glob("kcache-report-*.html")
    assert re.fullmatch(r"kcache-report-gpu-staging-\d{8}-\d{6}\.html", page.name)
    assert text.strip() == f"wrote {page}"
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "15 errors, 9 warnings, 1 info in 20 checks" in html
    assert "\x1b[" not in html
