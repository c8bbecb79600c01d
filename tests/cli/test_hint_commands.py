"""Every command a report suggests is pasted into a shell by someone: on hostile names, labels, annotations
and values (quotes, `$()`, `;|&<>`, newlines, controls), each hint of doctor, why-group and why-not-cached
must parse (`bash -n`) and, run with a fake `kubectl` on PATH that records its argv, reach kubectl with
exactly the intended arguments, run nothing else and create no file. status and reconcile --dry-run
suggest no command; their answers on the same input are checked for that."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kubectl_kcache import apivalidation
from kubectl_kcache.cli import run
from tests import builders as b

NS = "team-a"
ANN = "serving.kserve.io/kernelcache-nodegroup"
POD = "model-predictor-669889f77f-x7k2p"
CAPTURE = "model-kcc-669889f77f"
FAKE_KUBECTL = """#!/bin/bash
{ printf '%s\\0' "$#"; printf '%s\\0' "$@"; } >> "$ARGV_LOG"
"""
FAKE_DATE = "#!/bin/bash\necho 1700000000\n"

HOSTILE = st.text(
    alphabet=st.sampled_from(list("'\"$();|&<>\n\t `\\*?!#~{}[]=,-ab\x1b\u202e")), min_size=1, max_size=24
)


@pytest.fixture(scope="module")
def fake_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fakebin")
    for name, text in (("kubectl", FAKE_KUBECTL), ("date", FAKE_DATE)):
        (path / name).write_text(text)
        (path / name).chmod(0o755)
    return path


def run_hint(hint: str, fake_bin: Path, tmp: Path) -> list[list[str]]:
    """The argv of each kubectl the hint runs, after checking it parses, runs nothing else and writes nothing."""
    assert "\n" not in hint and "\x1b" not in hint, hint  # one line, nothing a terminal would act on
    syntax = subprocess.run(["bash", "-n", "-c", hint], capture_output=True, text=True)
    assert syntax.returncode == 0, (hint, syntax.stderr)
    work = tmp / "cwd"
    work.mkdir(exist_ok=True)
    log = tmp / "argv.log"
    log.write_bytes(b"")
    proc = subprocess.run(
        ["/bin/bash", "-c", hint],
        cwd=work,
        capture_output=True,
        timeout=10,
        env={"PATH": str(fake_bin), "ARGV_LOG": str(log), "LC_ALL": "C.UTF-8"},
    )
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b"", (hint, proc)
    assert list(work.iterdir()) == [], (hint, list(work.iterdir()))  # no redirection wrote a file
    words = log.read_bytes().split(b"\0")[:-1]
    calls: list[list[str]] = []
    while words:
        n = int(words.pop(0))
        calls.append([w.decode() for w in words[:n]])
        del words[:n]
    assert len(calls) == 1, (hint, calls)  # one command, nothing chained onto it
    return calls


def cluster(value: str) -> list[dict[str, Any]]:
    """A cluster where `value` is a pod annotation, a group's selector key and value, the default group and
    an entry message: every place a hint takes data from that Kubernetes does not validate."""
    gpu = b.group("gpu", {"role": "gpu"})
    odd = b.group("odd", {value: value})
    near = b.group("near", {"role": "gpu", "zone": "a"})
    kc = b.consumer_cache("qwen", group_name="odd")
    producer = b.pod(
        POD,
        NS,
        node_name="gpu-node",
        labels={"serving.kserve.io/inferenceservice": "model", "pod-template-hash": "669889f77f"},
        annotations={ANN: value},
    )
    capture = b.capture(CAPTURE, NS, status=b.capture_status(pod=POD, node_name="gpu-node", requested="gpu"))
    consumer = b.consumer("serving", node="cpu-1", cache=kc)
    namespace = b.namespace(NS)
    namespace["metadata"]["labels"] = {"kubernetes.io/metadata.name": NS}
    return [
        b.config_map({"enabled": True, "defaultNodeGroup": value, "defaultMountType": "oci"}),
        b.node("gpu-node", {"role": "gpu"}),
        b.node("cpu-1", {"role": "cpu"}),
        gpu,
        odd,
        near,
        kc,
        b.kcn("gpu-node", {f"{NS}/qwen": b.cache_entry(kc, state="Error", message=value)}),
        producer,
        capture,
        consumer,
        namespace,
        b.webhook_configuration(),
        b.agent_daemonset(),
        b.controller_deployment(),
    ]


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    capsys.readouterr()
    code = run(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err, err
    return code, json.loads(out) if out.strip() else None


def doctor_hints(report: dict[str, Any]) -> list[str]:
    return [h for f in report["findings"] for h in (f.get("hint"), f.get("lister")) if h]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=HOSTILE)
@example(value="x'; touch pw; echo '")
@example(value="$(touch pw)")
@example(value="--overwrite")
@example(value="a=b,c=d")
@example(value='"}}; touch pw #\n')
def test_every_hint_runs_kubectl_with_exactly_its_arguments(capsys, tmp_path, fake_bin, value):
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(cluster(value)))
    f = str(path)

    _, report = cli_json(capsys, "doctor", "-f", f, "-o", "json")
    hints = doctor_hints(report)
    assert hints
    for hint in hints:
        run_hint(hint, fake_bin, tmp_path)
    odd = [x for x in report["findings"] if x.get("group") == "odd" and x["check"] == "group-selector"]
    assert odd
    if apivalidation.qualified_name_errors(value) or apivalidation.label_value_errors(value):
        for finding in odd:  # a selector no node can carry: the group is shown, never a -l or a label command
            assert run_hint(finding["hint"], fake_bin, tmp_path) == [
                ["get", "kernelcachenodegroup", "odd", "-o", "yaml"]
            ], finding
    near = [x for x in report["findings"] if x["check"] == "group-selector" and x.get("group") == "near"]
    assert [run_hint(x["hint"], fake_bin, tmp_path) for x in near] == [[["label", "node", "gpu-node", "zone=a"]]]

    _, why = cli_json(capsys, "why-group", POD, "-n", NS, "-f", f, "-o", "json")
    assert why["fixes"] and why["next"], why
    run_hint(why["next"], fake_bin, tmp_path)  # the answer's next command: one kubectl command, nothing else
    for hint in why["fixes"]:
        [argv] = run_hint(hint, fake_bin, tmp_path)
        assert argv[:7] == ["-n", NS, "patch", "inferenceservice", "model", "--type=merge", "-p"]
        assert json.loads(argv[7]) == {"spec": {"predictor": {"annotations": {ANN: value}}}} and len(argv) == 8

    _, wnc = cli_json(capsys, "why-not-cached", "serving", "-n", NS, "-f", f, "-o", "json")
    [argv] = run_hint(wnc["next"], fake_bin, tmp_path)
    assert argv[:7] == ["-n", NS, "patch", "inferenceservice", "qwen", "--type=merge", "-p"] and len(argv) == 8
    assert json.loads(argv[7]) == {"spec": {"predictor": {"nodeSelector": {value: value}}}}

    for argv in (["status", "-f", f, "-o", "json"], ["reconcile", "--dry-run", "-f", f, "-o", "json"]):
        _, doc = cli_json(capsys, *argv)
        assert "kubectl " not in json.dumps(doc.get("groups", doc)), argv  # no command suggested there


def _texts(fmt: str, out: str) -> str:
    """What a person reads or copies from a format's output, its markup decoded."""
    if fmt == "sarif":
        return "\n".join(r["message"]["text"] for run in json.loads(out)["runs"] for r in run["results"])
    if fmt == "junit":
        import xml.etree.ElementTree as ET

        return "\n".join(e.text or "" for e in ET.fromstring(out).iter())
    if fmt == "html":
        import html

        return html.unescape(out)
    return out


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=HOSTILE)
@example(value="x'; touch pw; echo '\n$(id)")
def test_every_format_shows_each_hint_whole(capsys, tmp_path, fake_bin, value):
    """The hint a person copies from any doctor format is the one the JSON gives, byte for byte."""
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(cluster(value)))
    _, report = cli_json(capsys, "doctor", "-f", str(path), "-o", "json")
    hints = {f["hint"] for f in report["findings"] if f.get("hint")}
    for fmt in ("wide", "markdown", "junit", "sarif", "html", "yaml"):
        capsys.readouterr()
        run(["doctor", "-f", str(path), "-o", fmt])
        text = _texts(fmt, capsys.readouterr().out)
        if fmt == "yaml":
            text = "\n".join(f.get("hint") or "" for f in yaml.safe_load(text)["findings"])
        for hint in hints:
            assert hint in text, (fmt, hint)
