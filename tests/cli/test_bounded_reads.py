"""Every input is read within stated bounds (issue 33, point 3): a size cap on files, dumps and streams that
the error names with the flag that raises it; JSON Lines in linear time; YAML aliases capped by the size
they expand to; nesting depth and number lengths capped with a clear error, exit 2. Nothing here reads or
writes real gigabytes: big files are sparse, streams are generated."""

from __future__ import annotations

import io
import json
import sys
import time
from pathlib import Path

import pytest

from kubectl_kcache.errors import EXIT_USAGE
from tests import builders as b
from tests.cli.test_input_edges import HEALTHY, cli, one_error, shell


def sparse(path: Path, size: int, head: bytes = b"") -> str:
    path.write_bytes(head)
    with open(path, "r+b") as fh:
        fh.truncate(size)
    return str(path)


# ---- the size cap --------------------------------------------------------------------------------------------


def test_a_sparse_file_over_the_default_cap_is_refused_before_it_is_read(tmp_path):
    """3 GiB that take no disk: read whole they take 3 GB of memory (here capped at 1 GB: a MemoryError)."""
    path = sparse(tmp_path / "big.json", 3 << 30, b'{"apiVersion": "v1", "kind": "List", "items": [')
    started = time.monotonic()
    proc = shell(f"ulimit -v 1500000; KCACHE doctor -f {path}")
    assert time.monotonic() - started < 10
    assert proc.returncode == EXIT_USAGE, proc
    assert proc.stderr == (
        f"error: {path}: 3 GiB, more than the 2 GiB read from one input: give --max-input-size 4Gi "
        "if it is meant to be read\n"
    )


@pytest.mark.parametrize("name", ["plain.json", "plain.yaml"])
def test_a_file_over_a_lowered_cap_names_the_flag(capsys, tmp_path, name):
    path = tmp_path / name
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [b.node(f"n{i}") for i in range(3000)]}))
    code, out, err = cli(capsys, "doctor", "-f", str(path), "--max-input-size", "64Ki")
    assert code == EXIT_USAGE and out == ""
    assert one_error(err).startswith(f"error: {path}: ")
    assert "more than the 64 KiB read from one input: give --max-input-size" in err


def test_a_dump_read_line_by_line_is_capped_too(capsys, tmp_path):
    from kubectl_kcache.snapshot.dump import DumpWriter

    path = tmp_path / "dump.json"
    with open(path, "wb") as fh:
        writer = DumpWriter(fh, "json")
        for i in range(2000):
            writer.item(json.dumps(b.node(f"n{i}"), separators=(",", ":")).encode())
        writer.finish({"cluster": "c", "reads": [{"resource": "nodes", "status": "ok", "count": 2000}]})
    code, _, err = cli(capsys, "status", "-f", str(path), "--max-input-size", "100Ki")
    assert code == EXIT_USAGE
    assert "more than the 100 KiB read from one input: give --max-input-size" in one_error(err)


def test_a_file_that_grows_while_it_is_read_stops_at_the_cap(capsys, tmp_path, monkeypatch):
    """Its size when opened says little: reading stops at the cap, not at the end it never reaches."""
    import os

    from kubectl_kcache.snapshot.files import paths

    path = tmp_path / "growing.yaml"
    path.write_text("apiVersion: v1\nkind: List\nitems:\n" + "# more\n" * 200_000)
    real = os.fstat

    def small(fd: int) -> os.stat_result:
        st = real(fd)
        return os.stat_result((st.st_mode, *st[1:6], 10, *st[7:]))  # st_size as when it was opened

    monkeypatch.setattr(paths.os, "fstat", small)
    code, _, err = cli(capsys, "doctor", "-f", str(path), "--max-input-size", "1Mi")
    assert code == EXIT_USAGE
    assert "more than the 1 MiB read from one input: give --max-input-size 2Mi" in one_error(err)


def test_an_endless_text_stream_stops_at_the_cap_and_names_the_flag(monkeypatch, capsys):
    class Endless(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def readinto(self, buf):  # type: ignore[override]
            buf[:] = b"a" * len(buf)
            return len(buf)

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(Endless())))
    code, _, err = cli(capsys, "doctor", "-f", "-", "--max-input-size", "4Mi")
    assert code == EXIT_USAGE
    assert one_error(err) == (
        "error: standard input: more than the 4 MiB read from one input: give --max-input-size 8Mi "
        "if it is meant to be read"
    )


def test_the_config_file_is_capped_by_the_same_flag(capsys, tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text("suppress:\n" + "- check: nodes\n" * 10_000)
    code, _, err = cli(capsys, "doctor", "-f", HEALTHY, "--config", str(config), "--max-input-size", "64Ki")
    assert code == EXIT_USAGE
    assert "more than the 64 KiB read from one input: give --max-input-size" in one_error(err)


@pytest.mark.parametrize("value", ["0", "-1", "lots", "1Xi", ""])
def test_a_bad_cap_is_a_usage_error(capsys, value):
    code, out, err = cli(capsys, "doctor", "-f", HEALTHY, "--max-input-size", value)
    assert code == EXIT_USAGE and out == ""
    assert err.startswith("error: invalid value for '--max-input-size': ") and "is not a size" in err


# ---- linear time -----------------------------------------------------------------------------------------------


def test_json_lines_are_read_in_about_the_time_of_one_list(tmp_path):
    """JSON Lines (`jq -c '.items[]'`) took time quadratic in their number: 20,000 lines 7 s, 100,000
    over 120 s, while one List of the same objects takes half a second. Compared in one run, not timed."""
    from kubectl_kcache.snapshot.files.from_files import load_files

    nodes = [b.node(f"n{i}", {"role": "gpu"}) for i in range(30_000)]
    lines = tmp_path / "nodes.json"
    lines.write_text("".join(json.dumps(n) + "\n" for n in nodes))
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": nodes}))

    def seconds(path: Path) -> float:
        started = time.process_time()
        snap = load_files([str(path)])
        assert len(snap.nodes) == len(nodes)
        return time.process_time() - started

    as_list = min(seconds(listed) for _ in range(2))
    assert seconds(lines) < 4 * as_list + 0.5


# ---- YAML aliases, nesting, numbers ---------------------------------------------------------------------------


def test_aliases_that_widen_by_size_are_refused(capsys, tmp_path):
    """Few aliases, each of a long value: few values, but 3,000 copies of 20 KB are 60 MB written out."""
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata: {name: big, namespace: team}", "data:"]
    lines.append("  k0: &s " + "x" * 20_000)
    lines += [f"  k{i}: *s" for i in range(1, 3000)]
    path = tmp_path / "wide.yaml"
    path.write_text("\n".join(lines) + "\n")
    started = time.monotonic()
    code, out, err = cli(capsys, "doctor", "-f", str(path), "-f", HEALTHY)
    assert time.monotonic() - started < 5
    assert code == EXIT_USAGE and out == ""
    assert one_error(err) == (
        f'error: {path}: YAML aliases (the first at line 6, column 7: *"s") expand to more than '
        "1,000,000 characters: write the objects out in full, as kubectl does"
    )


def test_deep_nesting_in_a_json_streams_second_value_is_bad_input(capsys, tmp_path):
    path = tmp_path / "two.json"
    path.write_text(json.dumps(b.node("n1")) + "\n" + "[" * 100_000 + "]" * 100_000 + "\n")
    code, _, err = cli(capsys, "doctor", "-f", str(path))
    assert code == EXIT_USAGE
    assert one_error(err) == f"error: {path}: nested too deeply (more than 500 levels)"


@pytest.mark.parametrize("depth", [600, 100_000])
def test_deep_nesting_in_the_config_file_is_bad_input(capsys, tmp_path, depth):
    config = tmp_path / "config.yaml"
    config.write_text("suppress: " + "[" * depth + "]" * depth + "\n")
    code, _, err = cli(capsys, "doctor", "-f", HEALTHY, "--config", str(config))
    assert code == EXIT_USAGE
    assert one_error(err) == f"error: {config}: nested too deeply (more than 500 levels)"


DIGITS = "9" * 5000


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("n.yaml", f"apiVersion: v1\nkind: Node\nmetadata:\n  name: a\n  generation: {DIGITS}\n", "line 5, column 15"),
        ("n.json", json.dumps(b.node("a")).replace('"name": "a"', f'"name": "a", "generation": {DIGITS}'), "line 1"),
    ],
)
def test_a_number_of_thousands_of_digits_is_bad_input(capsys, tmp_path, name, text, where):
    path = tmp_path / name
    path.write_text(text)
    code, _, err = cli(capsys, "doctor", "-f", str(path))
    assert code == EXIT_USAGE
    line = one_error(err)
    assert line.startswith(f"error: {path}: ") and where in line
    assert "a number of 5,000 digits (at most 100 are read)" in line


def test_a_number_of_thousands_of_digits_in_the_config_file_is_bad_input(capsys, tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text(f"suppress:\n- check: nodes\n  reason: {DIGITS}\n")
    code, _, err = cli(capsys, "doctor", "-f", HEALTHY, "--config", str(config))
    assert code == EXIT_USAGE
    assert one_error(err) == (f"error: {config}: line 3, column 11: a number of 5,000 digits (at most 100 are read)")
