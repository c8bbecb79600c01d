"""No verdict on what a dump did not read (issue 33, point 4): its recorded scope (the namespace it was
taken in, its reads, their order and last status) is what a command may judge."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kubectl_kcache.errors import EXIT_INCOMPLETE, EXIT_USAGE
from tests import builders as b
from tests.cli.test_unread_inputs import AMBIGUOUS_POD, cli, dump, namespaced_dump, write

# ---- a dump taken with -n, read with -A ----------------------------------------------------------------------

NOT_READ = (
    "error: {command} cannot answer for all namespaces: the input was dumped with -n team-llm and read "
    "kernelcaches, kernelcachecaptures, rolebindings, pods, events only in namespace team-llm (give -n "
    "team-llm, or dump with -A)\n"
)


@pytest.mark.parametrize(
    "command", [["doctor"], ["status"], ["reconcile", "--dry-run"], ["why-not-cached"], ["why-not-ready"]]
)
def test_a_dump_taken_with_n_read_with_all_namespaces_names_what_was_not_read(capsys, tmp_path, command):
    path = write(tmp_path, namespaced_dump("team-llm"))
    code, out, err = cli(capsys, *command, "-A", "-f", path)
    assert code == EXIT_INCOMPLETE and out == ""
    assert err == NOT_READ.format(command=command[0])


def test_a_dump_taken_with_n_still_answers_within_its_namespace(capsys, tmp_path):
    path = write(tmp_path, namespaced_dump("team-llm"))
    code, _, err = cli(capsys, "why-group", AMBIGUOUS_POD, "-n", "team-llm", "-f", path)
    assert code in (0, 1), err
    code, _, err = cli(capsys, "doctor", "-n", "team-llm", "-f", path)
    assert code in (0, 1), err


# ---- an empty record of reads ----------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["doctor"], ["status"], ["why-group", AMBIGUOUS_POD, "-n", "team-llm"]])
def test_a_dump_that_records_no_read_is_incomplete(capsys, tmp_path, command):
    doc = dump()
    doc["meta"]["reads"] = []
    path = write(tmp_path, doc)
    code, out, err = cli(capsys, *command, "-f", path)
    assert code == EXIT_INCOMPLETE and out == ""
    assert err == (
        f"error: {path}: the dump records no read (meta.reads is empty): nothing in it can be judged; "
        "take the dump again\n"
    )


# ---- the last status of a read wins ---------------------------------------------------------------------------


def test_a_read_that_failed_after_an_ok_one_is_not_read(capsys, tmp_path):
    doc = dump()
    doc["meta"]["reads"].append({"resource": "kernelcachenodes", "namespace": None, "status": "failed", "count": 0})
    code, out, err = cli(capsys, "doctor", "-f", write(tmp_path, doc), "-o", "json")
    checks = {c["id"]: c for c in json.loads(out)["checks"]}
    assert checks["kcn-missing"]["status"] == "skipped", checks["kcn-missing"]
    assert code == EXIT_INCOMPLETE, err
    code, _, err = cli(capsys, "reconcile", "--dry-run", "-f", write(tmp_path, doc))
    assert code == EXIT_INCOMPLETE and "cannot list kernelcachenodes (failed)" in err


def test_a_read_that_succeeded_after_a_failed_one_is_read(capsys, tmp_path):
    doc = dump()
    reads = doc["meta"]["reads"]
    kcn = next(r for r in reads if r["resource"] == "kernelcachenodes")
    reads.insert(reads.index(kcn), {"resource": "kernelcachenodes", "namespace": None, "status": "failed"})
    code, out, _ = cli(capsys, "doctor", "-f", write(tmp_path, doc), "-o", "json")
    checks = {c["id"]: c for c in json.loads(out)["checks"]}
    assert checks["kcn-missing"]["status"] == "fail"
    assert code == 1


# ---- an unreadable subfolder ---------------------------------------------------------------------------------------


def test_an_unreadable_subfolder_is_named_not_skipped(capsys, tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "nodes.yaml").write_text(json.dumps(b.node("n1")))
    (tmp_path / "b" / "kcns.yaml").write_text(json.dumps(b.kcn("n1")))
    locked = str(tmp_path / "b")
    real = os.scandir

    def scandir(path: object = ".") -> object:
        if os.fspath(path) == locked:  # type: ignore[arg-type]
            raise PermissionError(13, "Permission denied", locked)
        return real(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", scandir)  # the tests run as root, whom chmod does not stop
    code, out, err = cli(capsys, "doctor", "-f", str(tmp_path))
    assert code == EXIT_USAGE and out == ""
    assert err == f"error: {locked}: cannot read the folder: Permission denied\n"


# ---- two dumps of one cluster ---------------------------------------------------------------------------------


def two_dumps(tmp_path: Path, first: dict[str, str], second: dict[str, str]) -> tuple[str, str]:
    reads = [{"resource": "nodes", "status": "ok", "count": 1}]
    docs = [
        {"kind": "KcacheSnapshot", "version": 1, "meta": {"reads": reads, **meta}, "items": [b.node(name)]}
        for meta, name in ((first, "n1"), (second, "n2"))
    ]
    return write(tmp_path, docs[0], "a.json"), write(tmp_path, docs[1], "c.json")


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"cluster": "prod", "server": "https://prod:6443"}, {"cluster": "prod"}),
        ({"server": "https://prod:6443"}, {"cluster": "prod"}),
        ({"cluster": "prod", "server": "https://prod:6443"}, {"cluster": "admin@prod", "server": "https://prod:6443"}),
    ],
)
def test_two_dumps_of_one_cluster_are_read_together(capsys, tmp_path, first, second):
    a, c = two_dumps(tmp_path, first, second)
    code, out, err = cli(capsys, "doctor", "-f", a, "-f", c, "-o", "json", "--fail-on", "never")
    assert "different clusters" not in err
    assert code == 0, err
    assert json.loads(out)["summary"]["checks"] > 0


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"cluster": "prod", "server": "https://prod:6443"}, {"cluster": "prod", "server": "https://staging:6443"}),
        ({"cluster": "prod"}, {"cluster": "staging"}),
    ],
)
def test_two_dumps_of_two_clusters_are_refused(capsys, tmp_path, first, second):
    a, c = two_dumps(tmp_path, first, second)
    code, _, err = cli(capsys, "status", "-f", a, "-f", c)
    assert code == EXIT_USAGE and "the dumps come from different clusters" in err
