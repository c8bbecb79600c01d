"""What people read, in a real pseudo-terminal (issue 20): why-group, why-not-cached, status and reconcile's
plan at 80, 120 and 200 columns and piped, on both examples and a 2,000-node fleet. No line is longer than
the terminal except a command; no identifier of the JSON document is cut across lines; the why-* next command
is whole within the first 15 rows; status fits 80 columns; colour never changes the layout. Also the
escaping of hostile values (issue 22 item 9) and a non-UTF-8 stdout (item 16)."""

from __future__ import annotations

import fcntl
import json
import os
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from tests import builders as b
from tests import fleets
from tests.layout_checks import fits, pasted

ROOT = Path(__file__).resolve().parents[2]
BROKEN = "examples/broken-cluster.yaml"
HEALTHY = "examples/healthy-cluster.yaml"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
GUIDES = re.compile(r"^[\s│├└─|`]*(?:[├└|`]-- |[├└]── )?")
WIDTHS = (80, 120, 200)

WHY = [
    ("why-not-cached", BROKEN, ["mistral-7b-instruct-v0-3-predictor-5c8d7b6f49-8zhfd", "-n", "team-llm"]),
    ("why-not-cached", BROKEN, ["llama-3-1-70b-instruct-predictor-84b9f6cd57-xvmk9", "-n", "team-llm"]),
    ("why-not-cached", BROKEN, ["qwen2-5-vl-7b-instruct-predictor-6f9d8c7b45-9q5fr", "-n", "team-vision"]),
    ("why-not-cached", HEALTHY, ["llama-3-1-8b-instruct-predictor-7c5d9b8f46-9sscc", "-n", "team-llm"]),
    ("why-group", BROKEN, ["llama-3-1-8b-instruct-predictor-7d9c6b5f48-nhngp", "-n", "team-llm"]),
    ("why-group", BROKEN, ["--capture", "phi-4-mini-instruct-kcc-5f6d8c9b7b", "-n", "team-chat"]),
    ("why-group", BROKEN, ["--capture", "qwen2-5-vl-7b-instruct-kcc-6f9d8c7b45", "-n", "team-vision"]),
    ("why-group", HEALTHY, ["--capture", "mistral-small-24b-instruct-kcc-6b7f4d9c58", "-n", "team-chat"]),
]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS", "LINES")}
    return {**env, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8", **extra}


def in_pty(args: list[str], columns: int, *, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run the plugin with its stdout on a pseudo-terminal of `columns` columns; (exit code, what it showed)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubectl_kcache", *args],
        stdout=slave,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        cwd=ROOT,
        env=env or _env(),
        start_new_session=True,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    code = proc.wait(timeout=120)
    assert proc.stderr is not None
    proc.stderr.close()
    return code, b"".join(chunks).decode().replace("\r\n", "\n")


def piped(
    args: list[str], *, columns: int | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """stdout a pipe; with `columns`, the controlling terminal is a pty of that size (`... | less`), else
    there is no terminal at all (cron, CI)."""
    if columns is None:
        return subprocess.run(
            [sys.executable, "-m", "kubectl_kcache", *args],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=env or _env(),
            start_new_session=True,
            timeout=120,
        )
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))

    def controlling_terminal() -> None:
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

    try:
        return subprocess.run(
            [sys.executable, "-m", "kubectl_kcache", *args],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=env or _env(),
            start_new_session=True,
            preexec_fn=controlling_terminal,
            pass_fds=(slave,),
            timeout=120,
        )
    finally:
        os.close(slave)
        os.close(master)


def identifiers(doc: object) -> set[str]:
    """Names, labels, images and paths of a JSON document: strings without spaces, and `key=value` pairs."""
    out: set[str] = set()
    if isinstance(doc, dict):
        for key, value in doc.items():
            if isinstance(value, str) and key not in ("message", "detail", "reason", "why", "next"):
                out.add(f"{key}={value}")
            out |= identifiers(value)
    elif isinstance(doc, list):
        for value in doc:
            out |= identifiers(value)
    elif isinstance(doc, str) and " " not in doc and 6 <= len(doc) <= 300:
        out.add(doc)
    return out


def assert_readable(text: str, columns: int | None, doc: object, commands: set[str]) -> list[str]:
    lines = ANSI.sub("", text).splitlines()
    for line in lines:
        if columns is not None:
            assert fits(line, columns), f"longer than {columns}: {line!r}"
    bodies = [GUIDES.sub("", line).strip() for line in lines]
    joined = "".join(bodies)
    for ident in identifiers(doc):
        if ident in joined:
            assert any(ident in line for line in lines), f"{ident!r} is cut across lines"
    return lines


def json_doc(command: str, path: str, args: list[str]) -> dict:
    proc = piped([command, *args, "-f", path, "-o", "json"])
    return json.loads(proc.stdout)


@pytest.mark.parametrize("command, path, args", WHY, ids=[f"{c}-{a[-3]}" for c, _, a in WHY])
def test_why_answers_first_at_every_width(command, path, args):
    doc = json_doc(command, path, args)
    commands = {doc["next"]} if doc.get("next") else set()
    commands |= {line.split(": ", 1)[-1] for line in doc.get("drift", []) if "kubectl " in line}
    commands |= {c for c in re.findall(r"kubectl [^\n]+", "\n".join(doc.get("notes") or []))}
    layouts = {}
    for columns in WIDTHS:
        code, text = in_pty([command, *args, "-f", path], columns)
        assert code in (0, 1), text
        lines = assert_readable(text, columns, doc, commands | _printed_commands(text))
        assert "\x1b[" in text  # a terminal: colour
        if doc.get("next"):
            at = lines.index("Next:")
            # on the first screen, and a paste of its lines runs it whole
            assert at < 15 and pasted(lines[at + 1 :])[0] == "  " + doc["next"], text
        assert any(line.startswith("Why: ") for line in lines[1:6]), text  # right after the verdict
        plain = in_pty([command, *args, "-f", path, "--no-color"], columns)[1]
        assert "\x1b[" not in plain and plain == ANSI.sub("", text)  # colour never changes the layout
        nocolor = in_pty([command, *args, "-f", path], columns, env=_env(NO_COLOR="1"))[1]
        assert nocolor == plain  # NO_COLOR does not narrow anything
        layouts[columns] = lines
    assert len(layouts[200]) <= len(layouts[80])
    # piped with no terminal: nothing wrapped at all
    proc = piped([command, *args, "-f", path])
    assert "\x1b[" not in proc.stdout
    lines = assert_readable(proc.stdout, None, doc, commands)
    if doc.get("why"):
        assert "Why: " + doc["why"] in lines
    # piped to a pager from an 80-column terminal: a pipe is no terminal, so the same lines as with none;
    # --width 80 asks for the terminal's layout
    proc = piped([command, *args, "-f", path], columns=80)
    assert proc.stdout == piped([command, *args, "-f", path]).stdout
    proc = piped([command, *args, "-f", path, "--width", "80"], columns=80)
    assert_readable(proc.stdout, 80, doc, commands | _printed_commands(proc.stdout))
    assert proc.stdout == in_pty([command, *args, "-f", path, "--no-color"], 80)[1]


def _printed_commands(text: str) -> set[str]:
    """Commands the answer prints on their own line (after `Next:` and the like)."""
    return {line.strip() for line in ANSI.sub("", text).splitlines() if line.startswith("  kubectl ")}


def test_why_exit_codes_agree_on_a_negative_verdict():
    assert (
        piped(
            ["why-group", "llama-3-1-8b-instruct-predictor-7d9c6b5f48-nhngp", "-n", "team-llm", "-f", BROKEN]
        ).returncode
        == 1
    )  # no group
    assert (
        piped(
            ["why-group", "--capture", "qwen2-5-vl-7b-instruct-kcc-6f9d8c7b45", "-n", "team-vision", "-f", BROKEN]
        ).returncode
        == 0
    )
    assert (
        piped(
            ["why-not-cached", "mistral-7b-instruct-v0-3-predictor-5c8d7b6f49-8zhfd", "-n", "team-llm", "-f", BROKEN]
        ).returncode
        == 1
    )  # a miss
    assert (
        piped(
            ["why-not-cached", "llama-3-1-70b-instruct-predictor-84b9f6cd57-xvmk9", "-n", "team-llm", "-f", BROKEN]
        ).returncode
        == 0
    )  # not cached


def test_ambiguous_node_group_gets_a_next_command_that_parses():
    doc = json_doc("why-group", BROKEN, ["llama-3-1-8b-instruct-predictor-7d9c6b5f48-nhngp", "-n", "team-llm"])
    assert doc["result"]["reason"] == "AmbiguousNodeGroup"
    assert doc["next"].startswith("kubectl -n team-llm patch inferenceservice --type=merge -p ")
    assert subprocess.run(["bash", "-n", "-c", doc["next"]]).returncode == 0
    words = subprocess.run(
        ["bash", "-c", f"printf '%s\\n' {doc['next'].removeprefix('kubectl ')}"], capture_output=True, text=True
    ).stdout.splitlines()
    body = json.loads(words[words.index("-p") + 1])
    assert body == {"spec": {"predictor": {"annotations": {"serving.kserve.io/kernelcache-nodegroup": "h100"}}}}
    assert words[-2:] == ["--", "llama-3-1-8b-instruct"]


def test_wide_adds_the_evidence():
    args = ["why-not-cached", "mistral-7b-instruct-v0-3-predictor-5c8d7b6f49-8zhfd", "-n", "team-llm", "-f", BROKEN]
    short = piped(args).stdout
    wide = piped([*args, "-o", "wide"]).stdout
    assert "Gates (in KServe's order" not in short and "-o wide adds all 21 gates" in short
    assert "Gates (in KServe's order" in wide and "factors (10)" in wide and "The webhook adds" in wide
    assert wide.index("Next:") < wide.index("Gates")


# ---- status ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> str:
    """2,000 nodes in 20 groups, 400 KernelCaches with labels, entries in every phase, some problems."""
    items: list[dict] = [b.config_map({"enabled": True, "defaultNodeGroup": "pool-00"})]
    items += [b.group(f"pool-{g:02d}", {"pool": f"pool-{g:02d}"}) for g in range(20)]
    caches = []
    for j in range(400):
        kc = b.kernel_cache(
            f"model-{j:03d}-kcc-{j * 7919 % 100000:05d}-{b.digest(str(j))[7:31]}",
            ns=f"team-{j % 8}",
            group_name=f"pool-{j % 20:02d}",
            seed=f"s{j}",
            state="Ready",
        )
        kc["metadata"]["labels"] = {"app": "llm" if j % 2 else "vision", "tier": f"t{j % 3}"}
        caches.append(kc)
    items += caches
    states = ["Ready", "Ready", "Ready", "Pending", "Pulling", "Error"]
    for i in range(2000):
        name = f"gpu-{i:05d}.compute.internal"
        items.append(b.node(name, {"pool": f"pool-{i % 20:02d}"}, ready=i % 97 != 0, unschedulable=i % 211 == 0))
        if i % 301 == 0:
            continue  # no KernelCacheNode
        mine = [kc for j, kc in enumerate(caches) if j % 20 == i % 20][:6]
        entries = {
            f"e{k}": b.entry(
                kc["metadata"]["namespace"],
                kc["metadata"]["name"],
                states[(i + k) % len(states)],
                seed=f"s{caches.index(kc)}",
            )
            for k, kc in enumerate(mine)
        }
        items.append(b.kcn(name, entries))
        if i % 13:
            items.append(
                b.pod(
                    f"kserve-kernelcachenode-agent-{i:05d}",
                    ns="kserve",
                    node_name=name,
                    labels={"control-plane": "kserve-kernelcachenode-agent"},
                )
            )
    path = tmp_path_factory.mktemp("fleet") / "fleet.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return str(path)


STATUS_INPUTS = [BROKEN, HEALTHY, "fleet"]


@pytest.mark.parametrize("source", STATUS_INPUTS)
def test_status_fits_every_terminal_and_pipes_one_line_per_row(source, request):
    path = request.getfixturevalue("fleet") if source == "fleet" else source
    doc = json.loads(piped(["status", "-f", path, "-o", "json"]).stdout)
    names = [g["name"] for g in doc["groups"]]
    for columns in WIDTHS:
        code, text = in_pty(["status", "-f", path], columns)
        assert code == 0
        lines = assert_readable(text, columns, {"names": names}, set())
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
        ]  # never split
        kc_header = next((line for line in lines if line.startswith("KERNELCACHE")), None)
        if kc_header is not None:
            assert "NO ENTRY" in kc_header
    proc = piped(["status", "-f", path])
    rows = proc.stdout.splitlines()
    groups = [line for line in rows if line.split() and line.split()[0] in names]
    assert len(groups) == len(names)  # one line per group, nothing wrapped
    assert all(len(line.split()) == 10 for line in groups)


def test_status_at_80_columns_on_the_fleet_folds_names_whole(fleet):
    code, text = in_pty(["status", "-f", fleet, "--no-color"], 80)
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines)
    first = next(i for i, line in enumerate(lines) if line.startswith("KERNELCACHE"))
    # problems first: a row with an Error entry before any all-Ready row
    rows = [line.split() for line in lines[first + 1 :] if line.startswith(" ") and line.split()[-5:]]
    errors = [int(r[-2]) if len(r) >= 7 else 0 for r in rows]
    assert errors[0] > 0


def test_status_filters(fleet):
    doc = json.loads(piped(["status", "-f", fleet, "-o", "json", "--group", "pool-03"]).stdout)
    assert [g["name"] for g in doc["groups"]] == ["pool-03"]
    assert doc["totals"]["members"] == 100 and doc["totals"]["groups"] == 1
    labelled = json.loads(piped(["status", "-f", fleet, "-o", "json", "-l", "app=llm,tier!=t0"]).stdout)
    kept = {k for g in labelled["groups"] for k in g["caches"]}
    assert kept and all(int(k.split("model-")[1][:3]) % 2 == 1 and int(k.split("model-")[1][:3]) % 3 != 0 for k in kept)
    problems = piped(["status", "-f", fleet, "--problems", "--no-headers"]).stdout.splitlines()
    assert problems and not any(line.startswith(("GROUP", "KERNELCACHE", "cluster")) for line in problems)
    unknown = piped(["status", "-f", fleet, "--group", "nope"])
    assert unknown.returncode == 2 and unknown.stderr.startswith("error: node group 'nope' not found")
    bad = piped(["status", "-f", fleet, "-l", "a=b,"])
    assert bad.returncode == 2 and "selector" in bad.stderr
    wide = piped(["status", "-f", BROKEN, "-o", "wide"]).stdout
    assert "SELECTOR" in wide and "kserve.example.com/kernel-cache=enabled,nvidia.com/gpu.product=NVIDIA-H200" in wide


def test_status_problems_come_first_on_the_broken_example():
    lines = piped(["status", "-f", BROKEN]).stdout.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("KERNELCACHE"))
    assert lines[first + 1].startswith("team-llm/llama-3-1-70b-instruct-kcc-")  # its entries are in Error


@pytest.fixture(scope="module")
def problem_fleet(tmp_path_factory) -> str:
    """Issue 34's fleet (tests/fleets.py): 50 groups, 2,000 nodes, 200 KernelCaches, 100 serving pods."""
    return fleets.write(tmp_path_factory.mktemp("problems") / "fleet.json")


ANSWER = (
    "50 node groups: 32 with problems; 2,000 nodes: 30 NotReady, 20 cordoned, 10 without a KernelCacheNode; "
    "200 KernelCaches: 40 not Ready; serving pods: 61% cached"
)


@pytest.mark.parametrize("columns", WIDTHS)
def test_status_answers_first_and_last(problem_fleet, columns):
    doc = json.loads(piped(["status", "-f", problem_fleet, "-o", "json"]).stdout)
    names = {"names": [g["name"] for g in doc["groups"]]}
    for args in ([], ["--problems"], ["-o", "wide"]):
        code, text = in_pty(["status", "-f", problem_fleet, *args], columns)
        assert code == 0
        lines = assert_readable(text, columns, names, set())
        head = lines[: lines.index(next(line for line in lines if line.startswith("from ")))]
        assert " ".join(head) == ANSWER, "the totals on row 1, counted over every row, --problems too"
        assert " ".join(lines[-len(head) :]) == ANSWER and lines[-len(head) - 1] == ""
        groups = [line.split()[0] for line in lines if line.startswith("pool-")]
        problems = [g["name"] for g in doc["groups"] if g["notReady"] or g["members"] != g["kernelCacheNodes"]]
        assert groups[: len(problems)] == sorted(problems), "problems first"
        if args == ["--problems"]:
            assert sorted(groups) == sorted(problems)
            if columns >= 120:
                assert len(lines) <= 100, "two screens"
        if args == ["-o", "wide"]:
            assert sum(line.startswith("  selector: ") for line in lines) == 50
    piped_lines = piped(["status", "-f", problem_fleet, "--problems"]).stdout.splitlines()
    assert piped_lines[0] == piped_lines[-1] == ANSWER  # piped: one line, as a row
    cold = [line for line in piped_lines if line.startswith("team-")]
    assert cold and all(line.split()[3] != line.split()[2] for line in cold[-8:]), (
        "only InferenceServices with cold pods"
    )


def test_status_wide_fits_80_columns_on_the_broken_example():
    code, text = in_pty(["status", "-f", BROKEN, "-o", "wide"], 80)
    lines = ANSI.sub("", text).splitlines()
    assert all(fits(line, 80) for line in lines), [line for line in lines if not fits(line, 80)]
    at = lines.index(next(line for line in lines if line.startswith("h200 ")))
    assert lines[at + 1 : at + 3] == [
        "  selector:",
        "    kserve.example.com/kernel-cache=enabled,nvidia.com/gpu.product=NVIDIA-H200",
    ]


# ---- reconcile ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [BROKEN, HEALTHY])
def test_reconcile_plan_fits_the_terminal(path):
    doc = json.loads(piped(["reconcile", "--dry-run", "-f", path, "-o", "json"]).stdout)
    for columns in WIDTHS:
        code, text = in_pty(["reconcile", "--dry-run", "-f", path], columns)
        assert code == (1 if any(a["verb"] != "event" for a in doc["actions"]) else 0)
        assert_readable(text, columns, doc["actions"], set())
        if path == BROKEN:
            assert "\x1b[1;31mDELETE\x1b[0m" in text and "\x1b[31m    - tolerations" in text
    proc = piped(["reconcile", "--dry-run", "-f", path])
    assert "\x1b[" not in proc.stdout
    if path == BROKEN:  # piped: one line per action, its reason last
        delete = next(line for line in proc.stdout.splitlines() if line.startswith("DELETE"))
        assert delete.split()[:3] == ["DELETE", "KernelCacheNode", "ip-10-0-1-19.ec2.internal"]
        assert delete.endswith("node is gone")


def test_color_always_for_a_pager():
    proc = piped(["status", "-f", BROKEN, "--color=always"])
    assert "\x1b[" in proc.stdout
    proc = piped(
        [
            "why-group",
            "llama-3-1-8b-instruct-predictor-7d9c6b5f48-nhngp",
            "-n",
            "team-llm",
            "-f",
            BROKEN,
            "--color",
            "always",
        ]
    )
    assert "\x1b[" in proc.stdout


# ---- hostile values and encodings --------------------------------------------------------------------

HOSTILE = "x\x1b]0;owned\x07\x1b[2J\u202eevil"


@pytest.fixture
def hostile(tmp_path) -> str:
    node = "gpu-1"
    items = [
        b.config_map({"enabled": True, "defaultNodeGroup": "gpu"}),
        b.group("gpu", {"role": "gpu"}),
        b.node(node, {"role": "gpu"}),
        b.kcn(node),
    ]
    capture = b.capture("model-kcc-669889f77f", ns="team")
    capture["status"] = {
        "activeSession": {
            "id": HOSTILE,
            "podName": "pod-1" + HOSTILE,
            "nodeName": HOSTILE,
            "requestedNodeGroup": HOSTILE,
        }
    }  # free text: not validated
    items += [
        capture,
        {"apiVersion": "v1", "kind": "PodList", "items": []},
        {"apiVersion": "serving.kserve.io/v1alpha1", "kind": "KernelCacheList", "items": []},
    ]
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return str(path)


@pytest.mark.parametrize("no_color", ["", "1"])
def test_why_group_escapes_every_cluster_value(hostile, no_color):
    env = _env(NO_COLOR=no_color) if no_color else _env()
    args = ["why-group", "--capture", "model-kcc-669889f77f", "-n", "team", "-f", hostile]
    for output in ("tree", "wide"):
        code, text = in_pty([*args, "-o", output], 100, env=env)
        visible = ANSI.sub("", text)
        assert "\x1b" not in visible and "\x07" not in visible and "\u202e" not in visible, visible
        assert "\\x1b]0;owned\\x07\\x1b[2J\\u202eevil" in visible
    yaml_out = piped([*args, "-o", "yaml"]).stdout
    assert "\u202e" not in yaml_out and "\x1b" not in yaml_out
    import yaml

    assert yaml.safe_load(yaml_out)["node"] == HOSTILE  # still the value, in YAML's own escapes


def test_errors_and_warnings_on_stderr_are_escaped(tmp_path):
    bad = tmp_path / "bad\x1b[2J\u202e.yaml"
    bad.write_text("kind: List\nitems: [1, 2]\n")
    proc = piped(["status", "-f", str(bad)])
    assert proc.returncode == 2
    assert "\x1b" not in proc.stderr and "\u202e" not in proc.stderr and proc.stderr.startswith("error: ")
    proc = piped(["doctr\x1b[2J"])
    assert "\x1b" not in proc.stderr and 'unknown command "doctr\\x1b[2J"' in proc.stderr


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
@pytest.mark.parametrize("command, path, args", WHY[:1] + WHY[4:5], ids=["why-not-cached", "why-group"])
def test_why_on_a_stdout_that_is_not_utf8(command, path, args, encoding):
    for output in ("tree", "wide"):
        proc = piped([command, *args, "-f", path, "-o", output], env=_env(PYTHONIOENCODING=encoding))
        assert proc.returncode in (0, 1), proc.stderr
        assert "Traceback" not in proc.stderr and proc.stderr == ""
        assert "Next:" in proc.stdout and ("|-- " in proc.stdout or "`-- " in proc.stdout)


def test_a_pty_that_reports_no_size_is_not_a_40_column_terminal():
    args = ["why-not-cached", "mistral-7b-instruct-v0-3-predictor-5c8d7b6f49-8zhfd", "-n", "team-llm", "-f", BROKEN]
    code, text = in_pty(args, 0)  # 0x0: the size is unknown, so nothing is wrapped (as with no terminal)
    assert code == 1
    assert ANSI.sub("", text) == piped(args).stdout
    code, text = in_pty(["status", "-f", BROKEN, "--no-color"], 0)
    assert text == piped(["status", "-f", BROKEN]).stdout


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_status_and_plan_on_a_stdout_that_is_not_utf8(encoding):
    status = piped(["status", "-f", BROKEN], env=_env(PYTHONIOENCODING=encoding))
    assert status.returncode == 0 and status.stderr == ""
    assert " - from examples/broken-cluster.yaml - " in status.stdout and "?" not in status.stdout
    plan = piped(["reconcile", "--dry-run", "-f", BROKEN], env=_env(PYTHONIOENCODING=encoding))
    assert plan.returncode == 1 and plan.stderr == "" and "DELETE" in plan.stdout


def test_a_file_is_never_wrapped_even_from_a_terminal(tmp_path):
    """`> file` from an interactive shell: the file is read anywhere, so nothing is laid out for the terminal."""
    out = tmp_path / "out.txt"
    args = ["why-not-cached", "mistral-7b-instruct-v0-3-predictor-5c8d7b6f49-8zhfd", "-n", "team-llm", "-f", BROKEN]
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 80, 0, 0))

    def controlling_terminal() -> None:
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

    with out.open("w") as f:
        subprocess.run(
            [sys.executable, "-m", "kubectl_kcache", *args],
            stdout=f,
            stderr=subprocess.PIPE,
            cwd=ROOT,
            env=_env(),
            start_new_session=True,
            preexec_fn=controlling_terminal,
            pass_fds=(slave,),
            timeout=120,
        )
    os.close(slave)
    os.close(master)
    assert out.read_text() == piped(args).stdout
