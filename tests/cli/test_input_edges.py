"""Input at the edges, as a hostile tester or an ordinary user feeds it: closed streams, endless devices,
appended JSON, macOS archive debris, YAML aliases, values Kubernetes would refuse, a mistyped namespace,
plain exports judged against their own clock. Each case ends with the documented exit code and one clear
line, never a traceback."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_kcache.errors import EXIT_OK, EXIT_USAGE
from tests import builders as b
from tests.cli.in_process import cli

ROOT = Path(__file__).resolve().parents[2]
HEALTHY = str(ROOT / "examples" / "healthy-cluster.yaml")


def one_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: "), err
    return lines[0]


def shell(script: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    command = f"{sys.executable} -m kubectl_kcache"
    return subprocess.run(
        ["bash", "-c", script.replace("KCACHE", command)], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


def write(path: Path, items: list[dict[str, Any]] | str) -> str:
    path.write_text(items if isinstance(items, str) else yaml.safe_dump_all(items))
    return str(path)


# ---- 15: the exit code does not depend on stderr --------------------------------------------------------


def test_exit_code_is_the_same_with_stderr_closed(tmp_path):
    a = tmp_path / "a.json"
    c = tmp_path / "c.json"
    a.write_text(json.dumps(b.node("n1") | {"metadata": {"name": "n1", "uid": "1"}}))
    c.write_text(json.dumps(b.node("n1") | {"metadata": {"name": "n1", "uid": "2"}}))
    args = f"doctor -f {a} -f {c} --fail-on never"
    open_err = shell(f"KCACHE {args} >/dev/null")
    assert open_err.returncode == EXIT_OK and "warning: " in open_err.stderr  # a warning is written
    closed = shell(f"KCACHE {args} >/dev/null 2>&-")
    assert closed.returncode == EXIT_OK, closed
    bad = shell("KCACHE doctor -f /nonexistent >/dev/null 2>&-")
    assert bad.returncode == EXIT_USAGE


# ---- 4: nothing the plugin reads ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}},
        {"apiVersion": "v1", "kind": "NodeList", "items": None},
    ],
)
@pytest.mark.parametrize("command", ["doctor", "status", "reconcile"])
def test_input_without_any_kind_the_plugin_reads_is_refused(capsys, tmp_path, content, command):
    path = tmp_path / "other.json"
    path.write_text(json.dumps(content))
    argv = [command, "-f", str(path)] + (["--dry-run"] if command == "reconcile" else [])
    code, out, err = cli(capsys, *argv)
    assert code == EXIT_USAGE and out == ""
    assert one_error(err) == (
        f"error: no objects of the kinds kubectl-kcache reads in {path} (found: "
        f"{content['kind']}; see `kubectl kcache dump` for what it reads)"
    )


# ---- 11: YAML aliases ----------------------------------------------------------------------------------------

BOMB = """apiVersion: apps/v1
kind: DaemonSet
metadata: {name: kserve-kernelcachenode-agent, namespace: kserve}
spec:
  template:
    spec:
      affinity:
        a: &a [x, x, x, x, x, x, x, x, x, x]
        b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
        c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
        d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
        e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
        f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
        g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]
        h: [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]
"""


@pytest.mark.parametrize("command", [["doctor"], ["reconcile", "--dry-run"], ["status"]])
def test_a_yaml_alias_bomb_is_refused_at_once(capsys, tmp_path, command):
    path = write(tmp_path / "bomb.yaml", BOMB)
    started = time.monotonic()
    code, out, err = cli(capsys, *command, "-f", path)
    assert time.monotonic() - started < 5
    assert code == EXIT_USAGE and out == ""
    assert one_error(err) == (
        f'error: {path}: YAML aliases (the first at line 9, column 16: *"a") expand to more '
        "than 100,000 values: write the objects out in full, as kubectl does"
    )


def test_a_file_of_aliased_taints_is_refused_quickly(capsys, tmp_path):
    taint = "{key: " + "k" * 40 + ", value: " + "v" * 40 + ", effect: NoSchedule}"
    lines = ["apiVersion: v1", "kind: Node", "metadata: {name: n1}", "spec:", "  taints:", f"  - &t {taint}"]
    lines += ["  - *t"] * 200_000
    path = write(tmp_path / "taints.yaml", "\n".join(lines) + "\n")
    started = time.monotonic()
    code, _, err = cli(capsys, "doctor", "-f", path)
    assert time.monotonic() - started < 15
    assert code == EXIT_USAGE and 'YAML aliases (the first at line 7, column 5: *"t")' in one_error(err)


def test_a_self_referencing_alias_is_refused(capsys, tmp_path):
    path = write(tmp_path / "loop.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec: &s {x: *s}\n")
    code, _, err = cli(capsys, "doctor", "-f", path)
    assert code == EXIT_USAGE and "YAML aliases" in one_error(err)


def test_a_few_shared_values_as_pyyaml_writes_them_are_read(capsys, tmp_path):
    """PyYAML writes an alias for a value shared in memory: that multiplies nothing and is read."""
    taints = [b.taint("gpu")]
    nodes = [b.node("n1", taints=taints), b.node("n2", taints=taints)]
    text = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": nodes})
    assert "*id001" in text
    code, _, err = cli(capsys, "doctor", "-f", write(tmp_path / "n.yaml", text), "--fail-on", "never")
    assert code == EXIT_OK, err


def test_a_star_inside_a_plain_value_is_not_an_alias(capsys, tmp_path):
    node = b.node("n1")
    node["metadata"]["annotations"] = {"note": "a *b c", "glob": "*.txt"}
    code, _, err = cli(capsys, "doctor", "-f", write(tmp_path / "n.yaml", [node]), "--fail-on", "never")
    assert code == EXIT_OK, err


def test_the_examples_hold_no_alias():
    for name in ("healthy-cluster.yaml", "broken-cluster.yaml"):
        text = (ROOT / "examples" / name).read_text()
        assert not any(isinstance(e, yaml.AliasEvent) for e in yaml.parse(text)), name


# ---- 12: endless and binary input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "script, shown",
    [
        ("KCACHE doctor -f /dev/zero", "/dev/zero"),
        ("KCACHE doctor -f /dev/stdin < /dev/zero", "/dev/stdin"),
        ("KCACHE doctor -f /dev/urandom", "/dev/urandom"),
        ("KCACHE doctor -f - < /dev/zero", "standard input"),
        ("cat /dev/zero | KCACHE status -f -", "standard input"),
        (f"KCACHE doctor -f {HEALTHY} --config /dev/zero", "cannot read suppressions: /dev/zero"),
        ("KCACHE why-not-cached --manifest /dev/zero -f " + HEALTHY, "/dev/zero"),
    ],
)
def test_endless_devices_end_quickly_in_one_line(script, shown):
    started = time.monotonic()
    proc = shell(script, timeout=20)
    assert time.monotonic() - started < 10
    assert proc.returncode == EXIT_USAGE, proc
    assert proc.stderr == f"error: {shown}: not text (it holds NUL bytes): give a YAML or JSON file\n"


def test_config_in_utf16_is_read_as_from_file_reads_it(capsys, tmp_path):
    path = tmp_path / "config.yaml"
    path.write_bytes("suppress:\n- check: crds\n".encode("utf-16"))
    code, out, err = cli(capsys, "doctor", "-f", HEALTHY, "--config", str(path), "-o", "json")
    assert code == EXIT_OK, err


@pytest.mark.parametrize("flag", ["-f", "--config"])
def test_an_empty_path_is_named_as_such(capsys, flag):
    argv = ["doctor", "-f", HEALTHY, "--config", ""] if flag == "--config" else ["doctor", "-f", ""]
    code, _, err = cli(capsys, *argv)
    assert code == EXIT_USAGE
    assert "an empty path" in one_error(err)


# ---- 18: appended JSON and JSON Lines -------------------------------------------------------------------------


def test_two_appended_kubectl_outputs_and_json_lines_are_read_in_turn(capsys, tmp_path):
    groups = {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "KernelCacheNodeGroupList",
        "items": [b.group("gpu", {"role": "gpu"})],
    }
    nodes = {"apiVersion": "v1", "kind": "NodeList", "items": [b.node("n1", {"role": "gpu"}), b.node("n2")]}
    appended = tmp_path / "appended.json"
    appended.write_text(json.dumps(groups, indent=4) + "\n" + json.dumps(nodes, indent=4) + "\n")  # `>>`
    lines = tmp_path / "kcns.json"
    lines.write_text("".join(json.dumps(x) + "\n" for x in (b.kcn("n1"), b.kcn("n2"))))  # jq -c '.items[]'
    code, out, err = cli(capsys, "doctor", "-f", str(appended), "-f", str(lines), "-o", "json")
    reads = {r["resource"]: r for r in json.loads(out)["source"].get("reads", [])} if out else {}
    assert code in (0, 1), err
    report = json.loads(out)
    kcn_missing = next(c for c in report["checks"] if c["id"] == "kcn-orphaned")
    assert kcn_missing["status"] != "skipped", kcn_missing  # KernelCacheNodes were read from the JSON Lines
    assert any(f["object"]["name"] == "n2" for f in report["findings"] if f["check"] == "kcn-orphaned"), reads


def test_a_bad_value_among_appended_ones_is_named_by_its_line(capsys, tmp_path):
    path = tmp_path / "x.json"
    path.write_text(json.dumps(b.node("n1")) + "\n" + '{"apiVersion": "v1", "kind": "Node", "metadata": 5}\n')
    code, _, err = cli(capsys, "doctor", "-f", str(path))
    assert code == EXIT_USAGE
    assert f"{path}" in one_error(err) and "line 2" in err and "metadata" in err


def test_a_snapshot_followed_by_more_json_is_refused(capsys, tmp_path):
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"kind": "KcacheSnapshot", "version": 1, "items": []}) + json.dumps(b.node("n")))
    code, _, err = cli(capsys, "doctor", "-f", str(path))
    assert code == EXIT_USAGE and "a KcacheSnapshot must be the only document of its file" in one_error(err)


# ---- 19: macOS archive debris -----------------------------------------------------------------------------------


def test_macos_metadata_files_are_skipped_with_a_warning(capsys, tmp_path):
    folder = tmp_path / "snap"
    (folder / "__MACOSX").mkdir(parents=True)
    (folder / "cluster.yaml").write_text(Path(HEALTHY).read_text())
    (folder / "._cluster.yaml").write_bytes(b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        ")
    (folder / "__MACOSX" / "._cluster.yaml").write_bytes(b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        ")
    code, out, err = cli(capsys, "doctor", "-f", str(folder))
    assert code == EXIT_OK, err
    assert err == (
        f"warning: skipped 2 macOS metadata files (._* and __MACOSX/, written when an archive is made or "
        f"opened on macOS): {folder}/._cluster.yaml, {folder}/__MACOSX/._cluster.yaml\n"
    )
    assert "no problems found" in out


# ---- small things --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "doc, words",
    [
        ({"kind": "KcacheSnapshot", "version": True, "items": []}, "snapshot version true is not supported"),
        ({"kind": "KcacheSnapshot", "items": []}, "snapshot version missing is not supported"),
        ({"kind": "KcacheSnapshot", "version": "1", "items": []}, 'snapshot version "1" is not supported'),
    ],
)
def test_snapshot_versions_are_named_in_json_words(capsys, tmp_path, doc, words):
    for fmt in ("json", "yaml"):
        path = tmp_path / f"s.{fmt}"
        path.write_text(json.dumps(doc) if fmt == "json" else yaml.safe_dump(doc))
        code, _, err = cli(capsys, "doctor", "-f", str(path))
        assert code == EXIT_USAGE and words in one_error(err), err


@pytest.mark.parametrize("value, words", [("x", "found a string"), (3, "found a number"), (True, "found a boolean")])
def test_found_types_are_named_in_json_words(capsys, tmp_path, value, words):
    path = write(tmp_path / "x.yaml", yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [value]}))
    code, _, err = cli(capsys, "doctor", "-f", path)
    assert code == EXIT_USAGE and words in one_error(err)
    assert not re.search(r"\ba (str|int|bool)\b", err), err


# ---- 14: a TTL past year 9999 ----------------------------------------------------------------------------------

CHECKS = ROOT / "tests" / "unit" / "checks"


@pytest.mark.parametrize("job_ttl, config_ttl", [(10**15, None), (None, 10**18)])
def test_a_failed_jobs_ttl_past_year_9999_is_said_in_words(capsys, tmp_path, job_ttl, config_ttl):
    docs = [d for d in yaml.safe_load_all((CHECKS / "registry-pull" / "failed-job.yaml").read_text()) if d]
    for d in docs:
        if d["kind"] == "Job":
            if job_ttl is None:
                d["spec"].pop("ttlSecondsAfterFinished", None)
            else:
                d["spec"]["ttlSecondsAfterFinished"] = job_ttl
    if config_ttl is not None:
        config = {"enabled": True, "defaultNodeGroup": "gpu", "jobTTLSecondsAfterFinished": config_ttl}
        docs.append(b.config_map(config))
    path = write(tmp_path / "job.yaml", docs)
    code, out, err = cli(
        capsys, "doctor", "-f", str(CHECKS / "base"), "-f", path, "--only", "registry-pull", "-o", "json"
    )
    assert code == 1, err
    [job] = [f for f in json.loads(out)["findings"] if f["object"]["kind"] == "Job"]
    assert f"(ttlSecondsAfterFinished {job_ttl or config_ttl}s, due after the year 9999)" in job["message"]


# ---- 3: a plain export is judged against its own time ------------------------------------------------------


def pushing_capture(since: str, pod_created: str) -> list[dict[str, Any]]:
    status = b.capture_status(pod="model-pod", node_name="n1", phase="Pushing")
    status["conditions"][0].update(status="False", reason="Pushing", lastTransitionTime=since)
    capture = b.capture("model-kcc-669889f77f", status=status)
    pod = b.pod("model-pod", node_name="n1", labels={"serving.kserve.io/inferenceservice": "model"})
    pod["metadata"]["creationTimestamp"] = pod_created
    return [
        b.config_map({"enabled": True, "defaultNodeGroup": "gpu"}),
        b.node("n1", {"role": "gpu"}),
        b.group("gpu", {"role": "gpu"}),
        capture,
        pod,
        {"apiVersion": b.KSERVE, "kind": "KernelCacheList", "items": []},
    ]


def test_a_plain_export_is_judged_at_its_newest_time_not_today(capsys, tmp_path):
    """Exported five minutes into Pushing (the newest time in it is the pod's creation, five minutes later):
    not stuck, whatever today's date."""
    path = write(tmp_path / "export.yaml", pushing_capture("2026-06-18T09:00:00Z", "2026-06-18T09:05:00Z"))
    code, out, err = cli(capsys, "doctor", "-f", path, "--only", "capture", "-o", "json")
    report = json.loads(out)
    assert [c["status"] for c in report["checks"]] == ["pass"], report["checks"]
    assert report["source"]["judgedAt"] == {
        "time": "2026-06-18T09:05:00Z",
        "from": "the newest time in the input (it has no takenAt)",
    }
    assert (
        "note: the input does not say when it was read (no takenAt): checks that judge time take its newest "
        "time, 2026-06-18T09:05:00Z, as now"
    ) in err


def test_a_plain_export_two_hours_into_pushing_is_stuck(capsys, tmp_path):
    path = write(tmp_path / "export.yaml", pushing_capture("2026-06-18T09:00:00Z", "2026-06-18T11:00:00Z"))
    code, out, _ = cli(capsys, "doctor", "-f", path, "--only", "capture", "-o", "json")
    assert [f["code"] for f in json.loads(out)["findings"]] == ["stuck"]


def test_a_dump_with_takenat_is_judged_at_takenat_and_says_nothing_more(capsys, tmp_path):
    items = pushing_capture("2026-06-18T09:00:00Z", "2026-06-18T09:05:00Z")
    from kubectl_kcache.snapshot import kinds

    reads = [{"resource": plural, "namespace": None, "status": "ok", "count": 0} for plural in kinds.PLURALS]
    doc = {
        "kind": "KcacheSnapshot",
        "version": 1,
        "items": [x for x in items if not x["kind"].endswith("List")],
        "meta": {"takenAt": "2026-06-18T12:00:00Z", "reads": reads},
    }
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(doc))
    code, out, err = cli(capsys, "doctor", "-f", str(path), "--only", "capture", "-o", "json")
    report = json.loads(out)
    assert [f["code"] for f in report["findings"]] == ["stuck"] and "judgedAt" not in report["source"]
    assert "note: the input does not say" not in err


# ---- small things: flags ------------------------------------------------------------------------------------


def test_only_of_nothing_and_skip_of_everything_are_usage_errors(capsys):
    from kubectl_kcache.checks.registry import check_ids

    code, _, err = cli(capsys, "doctor", "-f", HEALTHY, "--only", "")
    assert code == EXIT_USAGE and "no check id given" in err
    code, out, err = cli(capsys, "doctor", "-f", HEALTHY, "--skip", ",".join(check_ids()))
    assert code == EXIT_USAGE and out == ""
    assert one_error(err) == "error: --skip names every check: nothing would run (a report of no check is no answer)"


@pytest.mark.parametrize(
    "argv, words",
    [
        (["doctor", "-f", HEALTHY, "--request-timeout", "1x"], "invalid value for --request-timeout: invalid duration"),
        (["doctor", "-f", HEALTHY, "--request-timeout", "-5"], "invalid value for --request-timeout: invalid duration"),
        (["status", "-f", HEALTHY, "--as-group", "admins"], "invalid value for --as-group: requires --as"),
        (
            ["reconcile", "--dry-run", "-f", HEALTHY, "--lease-duration", "nan"],
            "nan is not a positive number of seconds",
        ),
        (["reconcile", "--dry-run", "-f", HEALTHY, "--resync-period", "-1"], "-1 is not a positive number of seconds"),
        (["reconcile", "--dry-run", "-f", HEALTHY, "--health-port", "99999"], "99999 is not in the range 0<=x<=65535"),
        (
            ["doctor", "-f", HEALTHY, "-n", "Team_A"],
            'invalid value for -n: invalid namespace "Team_A": a lowercase RFC 1123 label must consist of',
        ),
    ],
)
def test_bad_flags_are_usage_errors_offline_too(capsys, argv, words):
    code, out, err = cli(capsys, *argv)
    assert code == EXIT_USAGE and out == ""
    assert words in err, err


# ---- 5: a mistyped -n ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["doctor", "status"])
def test_a_namespace_not_in_the_input_is_warned_about_as_kubectl_does(capsys, command):
    code, out, err = cli(capsys, command, "-f", HEALTHY, "-n", "tema")
    assert err == "warning: No resources found in tema namespace.\n"
    code, out, err = cli(capsys, command, "-f", HEALTHY, "-n", "team-llm")
    assert "No resources found" not in err


def test_without_namespaces_in_the_input_an_object_in_it_is_enough(capsys, tmp_path):
    items = [b.node("n1", {"role": "gpu"}), b.group("gpu", {"role": "gpu"}), b.consumer_cache("qwen", ns="team-a")]
    path = write(tmp_path / "x.yaml", items)
    _, _, err = cli(capsys, "doctor", "-f", path, "-n", "team-a")
    assert "No resources found" not in err
    _, _, err = cli(capsys, "doctor", "-f", path, "-n", "team-b")
    assert err == "warning: No resources found in team-b namespace.\n"


def test_unknown_ids_in_a_suppression_annotation_are_warned_about(capsys, tmp_path):
    node = b.node("n1", {"role": "gpu"})
    node["metadata"]["annotations"] = {"kcache.kserve.io/suppress": "nodes, nodez, agent/no-such-code"}
    path = write(tmp_path / "x.yaml", [node, b.group("gpu", {"role": "gpu"})])
    code, _, err = cli(capsys, "doctor", "-f", path, "--fail-on", "never")
    assert code == EXIT_OK
    assert (
        "warning: Node n1: annotation kcache.kserve.io/suppress names agent/no-such-code, nodez, which no check "
        "has (it suppresses nothing for them; give check ids or check/code)\n"
    ) in err
    _, _, err = cli(capsys, "doctor", "-f", path, "--no-suppressions", "--fail-on", "never")
    assert "kcache.kserve.io/suppress" not in err


def test_a_dump_meta_of_the_wrong_type_is_said_in_json_words(capsys, tmp_path):
    path = tmp_path / "d.json"
    path.write_text(
        json.dumps(
            {"kind": "KcacheSnapshot", "version": 1, "items": [b.node("n1")], "meta": {"cluster": {"name": "x"}}}
        )
    )
    code, _, err = cli(capsys, "doctor", "-f", str(path))
    assert code == EXIT_USAGE
    assert one_error(err) == f"error: {path}: snapshot meta.cluster must be a string, found an object"


def test_a_missing_config_file_is_said_without_errno(capsys, tmp_path):
    code, _, err = cli(capsys, "doctor", "-f", HEALTHY, "--config", str(tmp_path / "nope.yaml"))
    assert code == EXIT_USAGE
    assert one_error(err) == f"error: cannot read suppressions: {tmp_path / 'nope.yaml'}: no such file or folder"


def test_a_selector_key_holding_equals_and_comma_is_not_shown_as_two_labels(capsys, tmp_path):
    items = [b.node("n1", {"role": "gpu"}), b.group("odd", {"a=b,c": "d"})]
    code, out, _ = cli(
        capsys, "doctor", "-f", write(tmp_path / "x.yaml", items), "--only", "group-selector", "-o", "json"
    )
    [finding] = json.loads(out)["findings"]
    assert 'nodeSelector "a=b,c"=d' in finding["message"], finding
    assert finding["hint"] == "kubectl get kernelcachenodegroup odd -o yaml"
