"""One object's answer does not decode every node (issue 36), counted, not timed: why-group, why-not-cached and
why-not-ready for one pod or KernelCache of bench.scale's fleet (1,200 nodes, 10 groups, 200 KernelCaches: a
KernelCacheNode and an agent pod per node) decode a handful of the nodes, KernelCacheNodes and agent pods, the
ones their decision looks at, and answer byte for byte as they do with every object of the file decoded."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bench import fixtures as fx
from bench.scale import write_dump
from kubectl_kcache.cli import why_not_ready, why_pick
from kubectl_kcache.snapshot.files import load
from tests.cli.in_process import cli

NODES, GROUPS, CACHES = 1200, 10, 200


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fleet") / "fleet.json"
    write_dump(path, NODES, "small", GROUPS, CACHES)
    return path


def _decoded(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Objects decoded into the snapshot, per field."""
    counts: Counter[str] = Counter()
    add = load._Loader._add

    def counted(self: Any, name: str, kind: Any, obj: Any, dump: bool) -> None:
        counts[kind.field] += 1
        add(self, name, kind, obj, dump)

    monkeypatch.setattr(load._Loader, "_add", counted)
    return counts


def _every_object(monkeypatch: pytest.MonkeyPatch) -> None:
    """The commands as they were before: every node, KernelCacheNode and KernelCache of their kinds decoded."""
    monkeypatch.setattr(why_pick, "with_later", lambda select, later, keys=None: select)
    monkeypatch.setattr(
        why_not_ready, "_one_cache", lambda name, namespace, nodes: load.Selection(why_not_ready.reads())
    )


def _answer(out: str) -> Any:
    doc = json.loads(out)
    doc["source"].pop("generatedAt", None)
    return doc


POD = fx.producer_pod(0, 0)["metadata"]
CACHE = fx.kernel_cache(0)[0]["metadata"]
COMMANDS = {
    "why-group": ["why-group", POD["name"], "-n", POD["namespace"]],
    "why-not-cached": ["why-not-cached", POD["name"], "-n", POD["namespace"]],
    "why-not-ready": ["why-not-ready", CACHE["name"], "-n", CACHE["namespace"]],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_one_answer_decodes_what_its_decision_reads(
    command: str, fleet: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [*COMMANDS[command], "--from-file", str(fleet), "-o", "json"]
    with monkeypatch.context() as m:
        counts = _decoded(m)
        code, out, _ = cli(capsys, *argv)
    with monkeypatch.context() as m:
        every = _decoded(m)
        _every_object(m)
        code_all, out_all, _ = cli(capsys, *argv)
    assert (code, _answer(out)) == (code_all, _answer(out_all))
    # every node was decoded before (why-not-cached: every KernelCacheNode); now those the decision reads: the
    # pod's node (why-group, why-not-cached); the members of the cache's group, NODES / GROUPS (why-not-ready)
    assert every["nodes"] == NODES or command == "why-not-cached"
    limit = {"why-group": 1, "why-not-cached": 1, "why-not-ready": NODES // GROUPS}[command]
    assert counts["nodes"] <= limit, counts
    # KernelCacheNodes: none (why-group), those with an entry of the pod's namespace (why-not-cached: each holds
    # 4 of its group's 20 caches, in 20 namespaces), the members' and those holding the cache (why-not-ready)
    assert counts["kcns"] <= {"why-group": 0, "why-not-cached": NODES // 3, "why-not-ready": NODES // GROUPS}[command]
    assert counts["pods"] <= {"why-group": 1, "why-not-cached": 1, "why-not-ready": NODES // GROUPS + 1}[command]


@pytest.fixture(scope="module")
def serving_fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests.fleets' 2,000 nodes (an agent pod each) and 100 serving pods in 10 namespaces, as `dump` writes it."""
    from kubectl_kcache.cli import run
    from tests import fleets

    folder = tmp_path_factory.mktemp("serving")
    listed = fleets.write(folder / "list.json")
    path = folder / "dump.json"
    assert run(["dump", "-f", listed, "-o", "json", "--file", str(path)]) == 0
    return path


@pytest.mark.parametrize(("which", "scope"), [("bench", ["-A"]), ("serving", ["-A"]), ("serving", ["-n", "team-3"])])
def test_fleet_view_decodes_what_its_answers_read(
    which: str,
    scope: list[str],
    fleet: Path,
    serving_fleet: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """why-not-cached -A (and -n) decodes the serving pods, their nodes and the KernelCacheNodes their admission
    reads, not the agent pods nor every node, and answers as with every object decoded."""
    path, nodes = (fleet, NODES) if which == "bench" else (serving_fleet, 2000)
    answers, decoded = [], []
    for every in (False, True):
        with monkeypatch.context() as m:
            counts = _decoded(m)
            if every:
                m.setattr(why_pick, "why_not_cached_fleet", lambda select, namespace: select)
            code, out, _ = cli(capsys, "why-not-cached", *scope, "--from-file", str(path), "-o", "json")
            answers.append((code, _answer(out), cli(capsys, "why-not-cached", *scope, "--from-file", str(path))))
        decoded.append(counts)
    assert answers[0] == answers[1]
    pods = answers[0][1]["summary"]["pods"]
    assert pods >= 1
    # twice each (two runs): the serving pods and no agent pod (-n: the namespace's pods only, as before), at most
    # a node each, KernelCacheNodes of their namespaces and footprints
    assert decoded[0]["pods"] == 2 * pods < decoded[1]["pods"] or "-n" in scope
    assert decoded[0]["nodes"] <= 2 * pods < decoded[1]["nodes"] == 2 * nodes
    # (tests.fleets: an entry of a serving pod's footprint is Ready in another namespace, so KServe takes every
    # entry of that cache: every KernelCacheNode is read)
    assert decoded[0]["kcns"] < decoded[1]["kcns"] or which == "serving"
