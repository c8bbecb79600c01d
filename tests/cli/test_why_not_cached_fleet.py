"""why-not-cached without a pod, through the CLI over the examples and a small fleet: the table, -o wide,
json and yaml, the scope flags, the exit codes and the flags that need a pod (or none)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests import builders as b
from tests.layout_checks import pasted
from tests.unit.explain.test_why_not_cached import CREATED, EARLY, cluster

from .test_why_not_cached import cli, write

ROOT = Path(__file__).resolve().parents[2]
BROKEN = str(ROOT / "examples" / "broken-cluster.yaml")


def test_the_broken_example_per_inferenceservice(capsys):
    code, out, err = cli(capsys, "why-not-cached", "-A", "--from-file", BROKEN)
    assert code == 1 and err == ""
    lines = out.splitlines()
    assert lines[1] == (
        "5 serving pods in 5 InferenceServices: 0 cached at admission (0%), 1 cold, 4 producers (cold by design, "
        "not in the hit rate): 1 would be cached now (recreate it); 5 pod templates decided"
    )
    assert lines[3].split() == [
        "NAMESPACE",
        "INFERENCESERVICE",
        "PODS",
        "CACHED",
        "COLD",
        "NOW",
        "DENIED",
        "PRODUCER",
        "TOP",
        "GATE",
        "NEXT",
    ]
    row = next(x for x in lines if x.split()[1:2] == ["mistral-7b-instruct-v0-3"])
    assert row.split()[:8] == ["team-llm", "mistral-7b-instruct-v0-3", "1", "0", "1", "1", "0", "0"]
    # the other four pods are the producers of their caches (their capture's active session names them)
    producers = [x.split() for x in lines[4:] if x.split()[1] != "mistral-7b-instruct-v0-3"]
    assert sorted(x[1] for x in producers) == [
        "gemma-2-9b-it",
        "llama-3-1-70b-instruct",
        "llama-3-1-8b-instruct",
        "qwen2-5-vl-7b-instruct",
    ]
    assert all(x[2:8] == ["1", "0", "0", "0", "0", "1"] for x in producers)
    assert row.endswith("kubectl -n team-llm rollout restart deployment/mistral-7b-instruct-v0-3-predictor")
    code, wide, _ = cli(capsys, "why-not-cached", "-A", "--from-file", BROKEN, "-o", "wide")
    assert code == 1 and "mistral-7b-instruct-v0-3-predictor-5c8d7b6f49-8zhfd" in wide
    assert "kubectl -n team-llm delete pod mistral-7b-instruct-v0-3-predictor-5c8d7b6f49-8zhfd" in wide


def test_json_and_yaml_with_every_pod_and_the_scope(capsys):
    code, out, _ = cli(capsys, "why-not-cached", "-n", "team-llm", "--from-file", BROKEN, "-o", "json")
    doc = json.loads(out)
    assert code == 1 and list(doc)[:3] == ["kind", "version", "source"]
    assert doc["kind"] == "WhyNotCachedFleet" and doc["scope"]["namespace"] == "team-llm"
    assert {p["namespace"] for p in doc["pods"]} == {"team-llm"} and doc["summary"]["pods"] == 3
    code, out, _ = cli(
        capsys, "why-not-cached", "-A", "--isvc", "qwen2-5-vl-7b-instruct", "--from-file", BROKEN, "-o", "yaml"
    )
    doc = yaml.safe_load(out)
    assert [p["inferenceService"] for p in doc["pods"]] == ["qwen2-5-vl-7b-instruct"]


def test_every_pod_cached_exits_0(capsys, tmp_path):
    kc = b.consumer_cache("qwen", ready_at=EARLY)
    pods = [
        b.consumer("hit-1", node="gpu-1", created=CREATED, cache=kc),
        b.consumer("hit-2", node="gpu-1", created=CREATED, cache=kc, isvc="other"),
    ]
    snap = write(tmp_path / "snap.json", cluster(pods, kc=kc))
    code, out, _ = cli(capsys, "why-not-cached", "--from-file", snap)
    assert code == 0 and "\x1b" not in out
    assert "2 serving pods in 2 InferenceServices: 2 cached at admission (100%), 0 cold;" in out


def test_flags_that_need_or_exclude_a_pod(capsys):
    code, _, err = cli(capsys, "why-not-cached", "some-pod", "-A", "--from-file", BROKEN)
    assert code == 2 and "give them without POD" in err
    code, _, err = cli(capsys, "why-not-cached", "-A", "-l", "tier in (a", "--from-file", BROKEN)
    assert code == 2 and err.startswith("error: -l: cannot read label selector term 'tier in (a'")


# ---- on a terminal ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("wide", [False, True], ids=["rows", "wide"])
def test_at_every_width_names_whole_and_each_next_command_pastes_whole(wide):
    from .test_readable_output import ANSI, WIDTHS, _env, assert_readable, in_pty, piped

    args = ["why-not-cached", "-A", "-f", BROKEN, *(["-o", "wide"] if wide else [])]
    doc = json.loads(piped([*args[:4], "-o", "json"]).stdout)
    nexts = {r["next"] for r in doc["inferenceServices"] if r["next"]}
    nexts |= {p["next"] for p in doc["pods"] if p["next"]} if wide else set()
    names = {
        "names": [r["inferenceService"] for r in doc["inferenceServices"]]
        + ([p["name"] for p in doc["pods"]] + [p["node"] for p in doc["pods"]] if wide else [])
    }
    longer = {f"next: {n}" for n in nexts}  # a line longer than the terminal: only a command, whole
    for columns in WIDTHS:
        code, text = in_pty(args, columns)
        assert code == 1 and "\x1b[" in text
        lines = assert_readable(text, columns, names, longer)
        # each command whole: ending its row when the table fits, else under the row, pasting as one line
        for n in nexts:
            assert any(x.endswith("  " + n) or x == f"    next: {n}" for x in pasted(lines)), (n, text)
        plain = in_pty([*args, "--no-color"], columns)[1]
        assert plain == ANSI.sub("", text)  # colour never changes the layout
    assert len(in_pty(args, 80)[1].splitlines()) > len(in_pty(args, 200)[1].splitlines())
    rows = piped(args, env=_env()).stdout.splitlines()  # no terminal: one whole line per row
    for r in doc["inferenceServices"]:
        assert any(
            x.split()[:2] == [r["namespace"], r["inferenceService"]] and x.endswith(r["next"] or "-") for x in rows
        )


HEALTHY = str(ROOT / "examples" / "healthy-cluster.yaml")


def test_the_healthy_example_exits_0_its_cold_pods_are_producers(capsys):
    code, out, err = cli(capsys, "why-not-cached", "-A", "--from-file", HEALTHY)
    assert code == 0 and err == ""
    assert out.splitlines()[1] == (
        "5 serving pods in 3 InferenceServices: 2 cached at admission (100%), 0 cold, 3 producers (cold by design, "
        "not in the hit rate); 3 pod templates decided"
    )
    code, out, _ = cli(capsys, "why-not-cached", "-A", "--from-file", HEALTHY, "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["summary"]["producer"] == 3 and doc["summary"]["wouldBeCachedNow"] == 0
    producers = [p for p in doc["pods"] if p["coldByDesign"]]
    assert len(producers) == 3 and all(p["coldByDesign"]["reason"] == "producer" for p in producers)
    for p in producers:  # the single answer: a producer says so first, exits 0, never "delete pod"
        code, one, _ = cli(capsys, "why-not-cached", p["name"], "-n", p["namespace"], "--from-file", HEALTHY)
        assert code == 0 and "cold by design: producer of " in one.splitlines()[0]
        assert one.splitlines()[1].startswith("Why: This pod produced KernelCache ") and "delete pod" not in one


def test_the_broken_examples_producers_are_not_cold(capsys):
    code, out, _ = cli(capsys, "why-not-cached", "-A", "--from-file", BROKEN, "-o", "json")
    doc = json.loads(out)
    assert code == 1  # the mistral pod is a miss
    assert (doc["summary"]["cold"], doc["summary"]["producer"]) == (1, 4)
    assert {p["name"] for p in doc["pods"] if p["coldByDesign"]} == {
        "gemma-2-9b-it-predictor-7c9f5d8b6b-lsg8h",
        "llama-3-1-70b-instruct-predictor-84b9f6cd57-xvmk9",
        "llama-3-1-8b-instruct-predictor-7d9c6b5f48-nhngp",
        "qwen2-5-vl-7b-instruct-predictor-6f9d8c7b45-9q5fr",
    }
