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
    monkeypatch.setattr(why_not_ready, "_one_cache", lambda name, namespace, nodes: load.Selection(why_not_ready.READS))


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
