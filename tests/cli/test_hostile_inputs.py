"""Hostile and unusual input, as a demanding user or a tester feeds it: every case ends with the documented exit
code, one line on stderr when it is an error, no traceback, no "internal error", and no control character
in anything printed (names from files are data).

Cases that need a real process (closed or full standard streams, FIFOs) run the command in a child
process; the others call the CLI in-process."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_kcache.cli import run
from kubectl_kcache.errors import EXIT_OK, EXIT_USAGE
from tests import builders as b

ROOT = Path(__file__).resolve().parents[2]
HEALTHY = str(ROOT / "examples" / "healthy-cluster.yaml")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x9b]")


def clean(text: str) -> None:
    assert not CONTROL.search(text), repr(text[:300])
    assert "Traceback" not in text and "internal error" not in text, text[-500:]


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = run(list(argv))
    out, err = capsys.readouterr()
    clean(out)
    clean(err)
    return code, out, err


def one_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    return lines[0]


def shell(script: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    """A shell line with KCACHE standing for the command (its output checked for control characters)."""
    command = f"{sys.executable} -m kubectl_kcache"
    proc = subprocess.run(
        ["bash", "-c", script.replace("KCACHE", command)], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )
    clean(proc.stdout)
    clean(proc.stderr)
    return proc


def write(path: Path, content: Any) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content)
    else:
        path.write_text(yaml.safe_dump(content, sort_keys=False))
    return str(path)


def doctor_json(capsys: pytest.CaptureFixture[str], *paths: str) -> tuple[int, dict[str, Any], str]:
    args = ["doctor", "-o", "json"]
    for p in paths:
        args += ["--from-file", p]
    code, out, err = cli(capsys, *args)
    return code, json.loads(out), err


def statuses(report: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {c["id"]: (c["status"], c.get("reason", "")) for c in report["checks"]}


# ---- standard streams ----------------------------------------------------------------------------


def test_from_stdin_when_stdin_is_closed():
    proc = shell("KCACHE doctor --from-file - <&-")
    assert proc.returncode == EXIT_USAGE
    assert proc.stderr == "error: --from-file -: standard input is closed\n"


def test_from_stdin_when_stdin_is_empty():
    proc = shell("KCACHE doctor --from-file - </dev/null")
    assert proc.returncode == EXIT_USAGE
    assert proc.stderr == "error: no Kubernetes objects in standard input\n"


def test_from_stdin_works():
    proc = shell(f"KCACHE doctor -o json --from-file - < {HEALTHY}")
    assert proc.returncode == EXIT_OK, proc.stderr
    assert json.loads(proc.stdout)["kind"] == "DoctorReport"


def test_output_into_a_closed_pipe_ends_quietly():
    proc = shell(f'KCACHE doctor -o json --from-file {HEALTHY} | head -c 10; echo " ${{PIPESTATUS[0]}}"')
    assert proc.stderr == ""
    status = int(proc.stdout.split()[-1])
    assert status in (0, 141)  # ends as kubectl does: quietly, or by SIGPIPE


def test_output_to_a_full_disk_is_one_line():
    proc = shell(f"KCACHE doctor -o json --from-file {HEALTHY} > /dev/full")
    assert proc.returncode == EXIT_USAGE
    assert proc.stderr == "error: cannot write the output: No space left on device\n"


def test_output_when_stdout_is_closed_is_one_line():
    proc = shell(f"KCACHE doctor -o json --from-file {HEALTHY} >&-")
    assert proc.returncode == EXIT_USAGE
    assert proc.stderr == "error: cannot write the output: standard output is closed\n"


def test_version_into_a_closed_stdout():
    proc = shell("KCACHE version >&-")
    assert proc.returncode == EXIT_USAGE
    assert "standard output is closed" in proc.stderr


# ---- files that are not files --------------------------------------------------------------------


def test_fifo_in_a_folder_is_skipped_with_a_warning(tmp_path):
    folder = tmp_path / "export"
    write(folder / "nodes.yaml", b.node("gpu-1"))
    os.mkfifo(folder / "pipe.yaml")
    proc = shell(f"KCACHE doctor -o json --from-file {folder}", timeout=30)
    assert proc.returncode in (0, 1), proc.stderr
    assert proc.stderr == f"warning: skipped {folder}/pipe.yaml: not a regular file (a FIFO)\n"
    assert json.loads(proc.stdout)["kind"] == "DoctorReport"


def test_a_named_fifo_is_read_like_process_substitution(tmp_path):
    proc = shell(f"KCACHE doctor -o json --from-file <(cat {HEALTHY})")
    assert proc.returncode == EXIT_OK, proc.stderr
    assert json.loads(proc.stdout)["kind"] == "DoctorReport"


def test_symlink_loop_is_named_as_such(capsys, tmp_path):
    loop = tmp_path / "loop.yaml"
    loop.symlink_to(loop)
    code, _, err = cli(capsys, "doctor", "--from-file", str(loop))
    assert code == EXIT_USAGE
    assert one_error(err) == f"error: {loop}: a symbolic link loop (the link points back to itself)"


def test_broken_symlink_is_named_as_such(capsys, tmp_path):
    link = tmp_path / "gone.yaml"
    link.symlink_to(tmp_path / "nowhere.yaml")
    code, _, err = cli(capsys, "doctor", "--from-file", str(link))
    assert code == EXIT_USAGE
    assert one_error(err) == f"error: {link}: a broken symbolic link (its target does not exist)"


def test_missing_file(capsys, tmp_path):
    code, _, err = cli(capsys, "doctor", "--from-file", str(tmp_path / "nope.yaml"))
    assert code == EXIT_USAGE
    assert one_error(err) == f"error: {tmp_path / 'nope.yaml'}: no such file or folder"


def test_kubeconfig_of_binary_garbage(capsys, tmp_path):
    path = write(tmp_path / "kubeconfig", bytes(range(256)))
    code, _, err = cli(capsys, "doctor", "--kubeconfig", path)
    assert code == EXIT_USAGE
    assert one_error(err).startswith(f"error: kubeconfig {path}: not")


# ---- encodings and shapes ------------------------------------------------------------------------


def test_utf16_with_a_bom_as_powershell_writes_it(capsys, tmp_path):
    text = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [b.node("gpu-1"), b.group("g", {"a": "b"})]})
    path = write(tmp_path / "ps.yaml", b"\xff\xfe" + text.encode("utf-16-le"))
    code, report, _ = doctor_json(capsys, path)
    assert code in (0, 1)
    assert report["kind"] == "DoctorReport"


def test_raw_list_items_take_kind_and_api_version_from_the_list(capsys, tmp_path):
    """`kubectl get --raw /api/v1/nodes`: a NodeList whose items carry neither kind nor apiVersion."""
    items = [{k: v for k, v in b.node(f"gpu-{i}").items() if k not in ("kind", "apiVersion")} for i in range(3)]
    raw = {"kind": "NodeList", "apiVersion": "v1", "metadata": {"resourceVersion": "1"}, "items": items}
    groups = {
        "kind": "KernelCacheNodeGroupList",
        "apiVersion": "serving.kserve.io/v1alpha1",
        "items": [{"metadata": {"name": "g"}, "spec": {"nodeSelector": {"kubernetes.io/hostname": "gpu-1"}}}],
    }
    from kubectl_kcache.snapshot.files.from_files import load_files

    snap = load_files(
        [write(tmp_path / "nodes.json", json.dumps(raw)), write(tmp_path / "groups.json", json.dumps(groups))]
    )
    assert [n.name for n in snap.nodes] == ["gpu-0", "gpu-1", "gpu-2"]
    assert [g.name for g in snap.node_groups] == ["g"]
    from kubectl_kcache.snapshot import plan as readplan
    from kubectl_kcache.snapshot.reads import covering

    assert covering(snap, readplan.NODES).count == 3


@pytest.mark.parametrize(
    ("obj", "words"),
    [
        ({"apiVersion": "v1", "metadata": {"name": "x"}}, "$: an object without kind"),
        ({"kind": "Node", "metadata": {"name": "x"}}, "$: Node without apiVersion"),
        (
            {"kind": "List", "apiVersion": "v1", "items": [{"metadata": {"name": "x"}}]},
            "$.items[0]: an object without kind",
        ),
        (
            {"kind": "List", "apiVersion": "v1", "items": [{"kind": "Node", "metadata": {"name": "x"}}]},
            "$.items[0]: Node without apiVersion",
        ),
    ],
)
@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_objects_without_kind_or_api_version_are_refused_alike(capsys, tmp_path, obj, words, fmt):
    path = write(tmp_path / f"obj.{fmt}", json.dumps(obj) if fmt == "json" else obj)
    code, _, err = cli(capsys, "doctor", "--from-file", path)
    assert code == EXIT_USAGE
    line = one_error(err)
    assert line.startswith(f"error: {path}: {words}")
    assert "every object needs kind and apiVersion" in line


@pytest.mark.parametrize("content", ["", "\n\n", "---\n---\n", "[]", '{"kind": "List", "items": []}'])
def test_empty_input(capsys, tmp_path, content):
    path = write(tmp_path / "empty.yaml", content)
    code, _, err = cli(capsys, "doctor", "--from-file", path)
    assert code == EXIT_USAGE
    assert one_error(err) == f"error: no Kubernetes objects in {path}"


def test_bad_field_names_file_object_and_path(capsys, tmp_path):
    node = b.node("gpu-7", taints=[b.taint("nvidia.com/gpu")])
    node["spec"]["taints"][0]["effect"] = {"oops": 1}
    others = [b.node(f"gpu-{i}") for i in range(3)]
    path = write(tmp_path / "nodes.json", json.dumps({"kind": "List", "apiVersion": "v1", "items": [*others, node]}))
    code, _, err = cli(capsys, "doctor", "--from-file", path)
    assert code == EXIT_USAGE
    assert one_error(err) == (
        f"error: {path}: Node gpu-7: $.items[3].spec.taints[0].effect: expected a string, got an object"
    )


def test_bad_field_in_yaml_names_the_path_too(capsys, tmp_path):
    group = b.group("gpu", {"role": "gpu"}, [{"key": "a", "operator": "Exists", "tolerationSeconds": "soon"}])
    path = write(tmp_path / "g.yaml", {"apiVersion": "v1", "kind": "List", "items": [group]})
    code, _, err = cli(capsys, "doctor", "--from-file", path)
    assert code == EXIT_USAGE
    assert one_error(err) == (
        f"error: {path}: KernelCacheNodeGroup gpu: $.items[0].spec.tolerations[0]."
        "tolerationSeconds: expected an integer, got a string"
    )


def test_names_kubernetes_would_refuse_are_refused_and_escaped(capsys, tmp_path):
    node = b.node("gpu-\x1b[31mred\x07", {"role": "gpu"})
    path = write(tmp_path / "n.json", json.dumps({"kind": "List", "apiVersion": "v1", "items": [node]}))
    code, _, err = cli(capsys, "doctor", "--from-file", path)  # cli() asserts no control characters
    assert code == EXIT_USAGE
    assert one_error(err) == (
        f'error: {path}: Node "gpu-\\x1b[31mred\\a": Kubernetes would refuse this object: '
        'metadata.name: Invalid value: "gpu-\\x1b[31mred\\a": a lowercase RFC 1123 '
        "subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
        "start and end with an alphanumeric character (e.g. 'example.com', regex used for "
        "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*') "
        "(and 1 more)"
    )


@pytest.mark.parametrize(
    "labels, shown",
    [
        ({"role": "gpu\u202e"}, '"gpu\\u202e": a valid label must be an empty string'),
        ({"evil;rm -rf x": "x"}, '"evil;rm -rf x": name part must consist of'),
        ({"a/b/c": "x"}, '"a/b/c": a valid label key must consist of'),
    ],
)
def test_labels_kubernetes_would_refuse_are_refused(capsys, tmp_path, labels, shown):
    path = write(tmp_path / "n.yaml", b.node("n1", labels))
    code, _, err = cli(capsys, "doctor", "--from-file", path)
    assert code == EXIT_USAGE
    assert f"metadata.labels: Invalid value: {shown}" in one_error(err)


@pytest.mark.parametrize("fmt", ["table", "wide", "markdown", "json", "yaml", "sarif", "junit"])
def test_control_characters_in_free_text_never_reach_the_terminal(capsys, tmp_path, fmt):
    """Status messages are free text in Kubernetes: they arrive as data and are printed escaped."""
    kc = b.kernel_cache(
        "hostile-kc", state="Error", reason="VerificationFailed", message="digest \x1b[2Jmismatch\u202e\x07 see \x9b31m"
    )
    path = write(tmp_path / "kc.yaml", kc)
    code, out, _ = cli(capsys, "doctor", "--from-file", HEALTHY, "--from-file", path, "-o", fmt)
    assert code == 1  # cli() asserted no control characters
    assert "hostile-kc" in out and "mismatch" in out


# ---- partial input is not cluster fact -----------------------------------------------------------


def test_a_kind_absent_from_plain_files_is_not_in_the_input(capsys, tmp_path):
    """Only node groups exported: only the groups' CRD is known to be served, a missing ConfigMap is not a finding,
    and every check that needs what is not in the files is skipped saying so."""
    path = write(tmp_path / "groups.yaml", b.group("gpu", {"role": "gpu"}))
    code, report, _ = doctor_json(capsys, path)
    s = statuses(report)
    # the groups' CRD is served (a group exists); nothing is claimed about the other three
    assert s["crds"][0] == "pass" and "partial: not in the input: list customresourcedefinitions" in s["crds"][1]
    assert s["config"] == ("skipped", "not in the input: list configmaps in kserve")
    for check in ("agent", "control-plane", "registry-pull", "nodes", "kcn-missing"):
        assert s[check][0] == "skipped", (check, s[check])
        assert s[check][1].startswith("not in the input: "), (check, s[check])
    assert not [f for f in report["findings"] if "not found" in f["message"] or "missing" in f["message"]]
    assert code == EXIT_OK  # skipped for lack of input is not a forbidden read (exit 3) nor a finding


def test_folder_without_pods_jobs_or_webhooks(capsys, tmp_path):
    """A folder exported without Pods, Jobs and MutatingWebhookConfigurations: the checks that read them are
    skipped as not in the input, instead of failing (no agent pod!) or passing (no failed Job!)."""
    doc = yaml.safe_load(Path(HEALTHY).read_text())
    keep = [x for x in doc["items"] if x["kind"] not in ("Pod", "Job", "MutatingWebhookConfiguration")]
    folder = tmp_path / "export"
    write(folder / "objects.yaml", {"apiVersion": "v1", "kind": "List", "items": keep})
    code, report, _ = doctor_json(capsys, str(folder))
    s = statuses(report)
    # the DaemonSet's placement is checked; its pods per node are said not to be
    assert s["agent"] == (
        "pass",
        "partial: not in the input: list pods in kserve (agent pods per member node not checked); partial: not "
        "in the input: list events in default (the agents' Warning events not checked)",
    )
    assert s["control-plane"][1].startswith("not in the input: list mutatingwebhookconfigurations")
    assert s["registry-pull"][1].startswith("not in the input: list jobs")
    assert s["group-selector"][0] == "pass"


# ---- mixing clusters -----------------------------------------------------------------------------


def dump(meta: dict[str, Any], items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"kind": "KcacheSnapshot", "version": 1, "meta": {"reads": [], **meta}, "items": items}


def test_dumps_of_two_clusters_are_refused(capsys, tmp_path):
    a = write(tmp_path / "a.yaml", dump({"cluster": "prod", "server": "https://prod:6443"}, [b.node("n1")]))
    c = write(tmp_path / "c.yaml", dump({"cluster": "staging", "server": "https://staging:6443"}, [b.node("n1")]))
    code, _, err = cli(capsys, "doctor", "--from-file", a, "--from-file", c)
    assert code == EXIT_USAGE
    assert one_error(err) == (
        f"error: the dumps come from different clusters ({a}: https://prod:6443; {c}: "
        "https://staging:6443): load one cluster at a time"
    )


def test_same_name_with_different_uids_is_warned_about(capsys, tmp_path):
    one, two = b.node("gpu-1"), b.node("gpu-1")
    one["metadata"]["uid"], two["metadata"]["uid"] = "uid-a", "uid-b"
    a, c = write(tmp_path / "a.yaml", one), write(tmp_path / "c.yaml", two)
    code, out, err = cli(capsys, "doctor", "-o", "json", "--from-file", a, "--from-file", c)
    assert code in (0, 1)
    assert err == (
        f"warning: Node gpu-1 has uid uid-b in {c} but uid-a in {a}: the input may mix two clusters "
        "(or an object was recreated); the later file wins\n"
    )
