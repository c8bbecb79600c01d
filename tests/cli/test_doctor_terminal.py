"""doctor's human output as people get it (issue 20): in a pseudo-terminal of 80, 120 and 200 columns, and
piped with no terminal at all, on both examples and on a generated fleet of 2,000 nodes.

On a terminal: no line wider than the terminal but a next command (`help:`), no identifier of the JSON report
cut across lines, errors before warnings, a few rows per finding. With no terminal: one finding per line, so
that `doctor | grep NAME` finds every name it shows.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import select
import shlex
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from tests import builders as b
from tests import fleets
from tests.layout_checks import fits

ROOT = Path(__file__).resolve().parents[2]
BROKEN = str(ROOT / "examples" / "broken-cluster.yaml")
HEALTHY = str(ROOT / "examples" / "healthy-cluster.yaml")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
HEADLINE = re.compile(r"^(error|warning|info)\[([a-z0-9-]+(?:/[a-z0-9-]+)?)\]: ")
HELP = "  help: "
STDERR_NOTE = "note: the input does not say when it was read"
RANK = {"error": 3, "warning": 2, "info": 1}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR", "KUBECONFIG")}
    return {**env, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color"}


def in_pty(args: list[str], columns: int, rows: int = 50, cwd: Path = ROOT) -> tuple[int, str]:
    """Run `kubectl kcache ARGS` with stdin, stdout and stderr on a new pty of the given size (its
    controlling terminal); the output as the terminal received it, without the pty's \\r."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubectl_kcache", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=cwd,
        env=_env(),
        start_new_session=True,
    )
    os.close(slave)
    chunks = []
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError as exc:  # EIO: the other side closed
                if exc.errno != errno.EIO:
                    raise
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
    code = proc.wait(timeout=60)
    return code, b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


def piped(args: list[str]) -> tuple[int, str]:
    """Run with stdout a pipe and no terminal anywhere (a new session, stdin from /dev/null, no $COLUMNS)."""
    proc = subprocess.run(
        [sys.executable, "-m", "kubectl_kcache", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=_env(),
        start_new_session=True,
        timeout=300,
    )
    return proc.returncode, proc.stdout


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> str:
    """2,000 member nodes in 4 groups, with problems of every shape: a taint on every node of one group (one
    cause, many objects), NotReady and cordoned nodes, missing and orphaned KernelCacheNodes, Error entries."""

    def name(i: int) -> str:
        return f"ip-10-{i // 250}-{i % 250}-{i % 7}.us-west-2.compute.internal"

    groups = [
        b.group(f"pool-{p}", {"kserve.example.com/kernel-cache": "enabled", "example.com/pool": p}) for p in "abcd"
    ]
    nodes = []
    for i in range(2000):
        pool = "abcd"[i % 4]
        taints = [b.taint("dedicated", "training")] if pool == "d" else None
        nodes.append(
            b.node(
                name(i),
                {"kserve.example.com/kernel-cache": "enabled", "example.com/pool": pool},
                taints=taints,
                ready=not (i % 4 == 0 and i < 28),
                unschedulable=i in (1, 5, 9),
            )
        )
    kc = b.kernel_cache("llama-3-1-70b-instruct-kcc-84b9f6cd57-008ead7571de3f5b9fb55dd7", "team-llm", "pool-b")
    message = (
        'Back-off pulling image "harbor.ml.example.com/team-llm/kernel-cache@sha256:'
        + "a" * 64
        + '": '
        + "failed to resolve reference: unexpected status 401 Unauthorized " * 8
    )
    kcns = []
    for i in range(2000):
        if i in (2, 6, 10, 14, 18):
            continue  # member nodes without a KernelCacheNode
        entries = (
            {"e": b.entry("team-llm", kc["metadata"]["name"], "Error", message=message)} if i in (3, 7, 11) else None
        )
        kcns.append(b.kcn(name(i), entries))
    kcns += [b.kcn(f"ip-10-9-9-{i}.us-west-2.compute.internal") for i in range(4)]  # orphaned
    items = [b.config_map({"enabled": True}), *groups, *nodes, *kcns, kc]
    path = tmp_path_factory.mktemp("fleet") / "fleet.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return str(path)


def identifiers(doc: dict) -> set[str]:
    """Names, namespaces, groups, and from messages and hints every token that reads as a name, label,
    selector, image or path (it holds `=`, `/`, `.` or `:` and no space)."""
    out: set[str] = set()
    for f in doc["findings"]:
        obj = f["object"]
        out.update(x for x in (obj["name"], obj["namespace"], f["group"]) if x)
        for text in (f["message"], *f.get("evidence", ())):
            for token in text.split():
                token = token.strip(",;()\"'`").rstrip(".:")
                if len(token) > 3 and re.search(r"[=/.:]", token):
                    out.add(token)
    return out


def cut_identifiers(lines: list[str], names: set[str]) -> list[str]:
    """Identifiers whose start ends a line and whose rest starts the next (after its indent and label)."""
    by_prefix: dict[str, list[str]] = {}
    for n in names:
        for k in range(1, len(n)):
            by_prefix.setdefault(n[:k], []).append(n)
    cut = []
    for a, b_ in zip(lines, lines[1:], strict=False):
        if not a.strip() or not b_.strip():
            continue
        last = a.split()[-1]
        first = re.sub(r"^(note:|-->|=|help:)\s*", "", b_.strip()).split()[0] if b_.strip() else ""
        for k in range(1, len(last) + 1):
            for n in by_prefix.get(last[-k:], ()):
                if first.startswith(n[k:]):
                    cut.append(f"{n}: {a!r} / {b_!r}")
    return cut


def finding_blocks(lines: list[str]) -> list[list[str]]:
    """Each finding's rows: its headline and every row up to a blank one (a name too long for an indented row
    starts at column 0, still inside the finding)."""
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in lines:
        if HEADLINE.match(line):
            current = [line]
            blocks.append(current)
        elif current is not None and line.strip() and not re.match(r"^(passed|not applicable|skipped|\[\d+\]) ", line):
            current.append(line)
        else:
            current = None
    return blocks


def check_terminal_output(text: str, columns: int, doc: dict) -> list[list[str]]:
    lines = ANSI.sub("", text).splitlines()
    # wider than the terminal only as one word too long for any line (never cut: the terminal folds it), a
    # next command's word included: commands break between their words with a line continuation
    too_wide = [line for line in lines if len(line) > columns and not fits(line, columns)]
    assert not too_wide, too_wide
    pasted = "\n".join(lines).replace(" \\\n", " ")
    for line in pasted.splitlines():  # a command broken over lines pastes as one the shell reads
        if line.startswith(HELP):
            assert shlex.split(line.removeprefix(HELP)), line
    if len(finding_blocks(lines)) == len(doc["findings"]):  # none grouped: each its own command, whole
        for cmd in (f["hint"] for f in doc["findings"] if f.get("hint")):
            assert " ".join(cmd.split()) in " ".join(pasted.split()), cmd
    assert not cut_identifiers(lines, identifiers(doc))
    words = {w for f in doc["findings"] for text in (f["message"], *f.get("evidence", ())) for w in text.split()}
    for last in re.findall(r"(\S+)\s+\.\.\. \(\d+ characters\)", "\n".join(lines)):
        assert last in words, f"free text is cut between words only, never in a name: {last!r}"
    severities = [RANK[HEADLINE.match(line).group(1)] for line in lines if HEADLINE.match(line)]
    assert severities == sorted(severities, reverse=True), "errors before warnings before infos"
    if doc["findings"]:
        summary = lines[0]
        assert summary == lines[-1] and re.match(r"^\d+ errors?|^\d+ warnings?|^incomplete", summary), lines[:2]
    for line in lines:
        if line.startswith(HELP):  # the next command is copyable: nothing after it, never dim
            assert line == line.rstrip() and "\x1b[2m" not in text.split(line.strip())[0][-20:]
    return finding_blocks(lines)


def json_doc(path: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "kubectl_kcache", "doctor", "-f", path, "-o", "json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=_env(),
        timeout=300,
    )
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def docs(fleet) -> dict[str, dict]:
    return {path: json_doc(path) for path in (BROKEN, HEALTHY, fleet)}


@pytest.mark.parametrize("columns", [80, 120, 200])
@pytest.mark.parametrize("which", ["broken", "healthy", "fleet"])
def test_doctor_in_a_terminal(which, columns, fleet, docs):
    path = {"broken": BROKEN, "healthy": HEALTHY, "fleet": fleet}[which]
    code, text = in_pty(["doctor", "-f", path], columns)
    doc = docs[path]
    assert code == (1 if doc["summary"]["errors"] else 0), text
    blocks = check_terminal_output(text, columns, doc)
    if which == "healthy":
        (line,) = ANSI.sub("", text).splitlines()
        assert re.fullmatch(rf"no problems found in {doc['summary']['checks']} checks over \d+ objects", line)
        return
    assert blocks
    rows = [len(block) for block in blocks]
    if which == "broken":
        assert len(blocks) == len(doc["findings"])  # no cause there hits enough objects to be grouped
    if columns == 80 and which == "broken":  # ~16 rows per finding (issue 20), 8.0 then 7.1 (issue 34), 5.96 now
        assert max(rows) <= 12 and sum(rows) / len(rows) <= 6.0, rows
        # the summary's lists of passed and not applicable checks grow with the catalogue, not the findings
        assert len(ANSI.sub("", text).splitlines()) <= 9 * len(doc["findings"]), "with the summary and notes"
    if which == "fleet":
        plain = ANSI.sub("", text)
        assert len(plain.splitlines()) < 120, "2,000 nodes' problems on a few screens: one cause is one entry"
        assert "500 Nodes" in plain


@pytest.mark.parametrize("which", ["broken", "healthy", "fleet"])
def test_doctor_piped_with_no_terminal_is_one_finding_per_line(which, fleet, docs):
    path = {"broken": BROKEN, "healthy": HEALTHY, "fleet": fleet}[which]
    code, text = piped(["doctor", "-f", path])
    doc = docs[path]
    assert code == (1 if doc["summary"]["errors"] else 0)
    lines = text.splitlines()
    assert "\x1b" not in text
    assert not [line for line in lines if line.startswith(("  ", "    "))], "nothing is wrapped"
    heads = [line for line in lines if HEADLINE.match(line)]
    severities = [RANK[HEADLINE.match(line).group(1)] for line in heads]
    assert severities == sorted(severities, reverse=True)
    shown = " ".join(heads)
    for f in doc["findings"]:  # `doctor | grep NAME` finds the finding of every object it names, with its command
        name = f["object"]["name"]
        if name in shown:
            line = next(line for line in heads if name in line)
            assert HELP.strip() in line or not f["hint"]
    if which == "broken":
        assert len(heads) == len(doc["findings"])
        for f in doc["findings"]:
            assert any(f["object"]["name"] in line and f["hint"].splitlines()[0] in line for line in heads), f
        for needle in (
            "NVIDIA-H200",
            "kserve.example.com/kernel-cache=enabled,nvidia.com/gpu.product=NVIDIA-H200",
            "dedicated=training:NoSchedule",
            "ip-10-0-1-19.ec2.internal",
        ):
            assert any(needle in line for line in heads), needle


def test_a_pty_of_unknown_size_is_laid_out_as_having_no_terminal():
    """0x0 (a pty nobody sized) is no width: the output is the unwrapped one, not a 40-column layout."""
    code, text = in_pty(["doctor", "-f", BROKEN, "--fail-on", "never"], 0, 0)
    assert code == 0
    _, plain = piped(["doctor", "-f", BROKEN, "--fail-on", "never"])
    assert ANSI.sub("", text).splitlines() == plain.splitlines()


def test_piped_output_is_one_line_per_finding_even_from_a_terminal_and_width_asks_for_blocks():
    """`doctor | less` from a terminal (stdout a pipe, stderr and stdin the terminal): a pipe is not a
    terminal, so one line per finding, as into a file; `--width 100` asks for the blocks at 100 columns."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    try:
        runs = [
            subprocess.run(
                [sys.executable, "-m", "kubectl_kcache", "doctor", "-f", BROKEN, "--fail-on", "never", *extra],
                stdin=slave,
                stderr=slave,
                stdout=subprocess.PIPE,
                text=True,
                cwd=ROOT,
                env=_env(),
                timeout=120,
            )
            for extra in ([], ["--width", "100"], ["--color=always"])
        ]
    finally:
        os.close(slave)
        os.close(master)
    plain, blocks, colored = (r.stdout for r in runs)
    _, into_file = piped(["doctor", "-f", BROKEN, "--fail-on", "never"])
    assert plain == into_file and "\x1b" not in plain
    assert ANSI.sub("", colored) == plain, "colour never changes the width"
    lines = blocks.splitlines()
    assert all(fits(line, 100) for line in lines)
    assert any(line.startswith("    ") for line in lines), "wrapped at the width asked for"


@pytest.fixture(scope="module")
def problem_fleet(tmp_path_factory) -> str:
    """Issue 34's fleet (tests/fleets.py): 50 groups, 30 NotReady nodes in 30 groups, 20 cordoned, 10 without
    a KernelCacheNode, 22 entries in Error with the same 401."""
    return fleets.write(tmp_path_factory.mktemp("problems") / "fleet.json")


@pytest.mark.parametrize("columns", [80, 120])
def test_one_cause_across_the_fleet_is_one_block(problem_fleet, columns):
    doc = json_doc(problem_fleet)
    causes = {(f["check"], f["code"]) for f in doc["findings"]}
    assert len(doc["findings"]) == 82 and len(causes) == 4
    code, text = in_pty(["doctor", "-f", problem_fleet], columns)
    assert code == 1
    # stderr shares the pty: its one-line note (a plain List says not when it was read) is not the report
    text = "".join(line for line in text.splitlines(keepends=True) if not line.startswith(STDERR_NOTE))
    blocks = check_terminal_output(text, columns, doc)
    assert len(blocks) == len(causes), blocks  # 82 blocks before (the fold key held the node group)
    plain = ANSI.sub("", text)
    assert "30 Nodes in 30 groups: " in plain and "(+27)" in plain and "-o wide lists all" in plain
    pasted = "\n".join(plain.splitlines()).replace(" \\\n", " ")
    # one command for the 10 groups whose members miss their KernelCacheNode
    groups = " ".join(sorted({f["group"] for f in doc["findings"] if f["code"] == "missing"}))
    assert f"kubectl annotate kernelcachenodegroup {groups} kcache.kserve.io/touched-at=" in " ".join(pasted.split())
    if columns == 120:
        assert len(plain.splitlines()) <= 50, "the fleet's problems on one screen"


def test_one_cause_across_the_fleet_piped_keeps_its_code_on_its_line(problem_fleet):
    code, text = piped(["doctor", "-f", problem_fleet])
    heads = [line for line in text.splitlines() if HEADLINE.match(line)]
    assert len(heads) == 4
    for f in json_doc(problem_fleet)["findings"][:3]:  # the sample's names are on their finding's line
        assert any(f["object"]["name"] in line and f"[{f['check']}/{f['code']}]" in line for line in heads)
    wide = piped(["doctor", "-f", problem_fleet, "-o", "wide"])[1]
    assert len([line for line in wide.splitlines() if HEADLINE.match(line)]) == 82, "-o wide lists all"
