"""`dump --anonymize` leaks nothing that identifies a cluster (issue 37, point 2).

On both bundled examples, `dump --anonymize -f` leaves no node name, IP address, namespace, registry host or
model id of the input anywhere in its output (also not cut into a generated name, as in a preparation Job's
pod `kc-...-ip-10-0-1-11-ec2-i-...`), and the doctor finds the same things. A property test plants
secret-like values (private IPs, cloud host names, model ids, registry hosts) as the names of the broken
example's nodes, namespaces, registry and models and in every message, and asserts that none survives while
every command's verdict stays the same.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_kcache.anonymize import KEPT_HOSTS, KEPT_NAMESPACES
from kubectl_kcache.cli import run

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = [ROOT / "examples" / "broken-cluster.yaml", ROOT / "examples" / "healthy-cluster.yaml"]
IP = re.compile(r"(?<![\w.:])(?:10|172|192)\.\d{1,3}\.\d{1,3}\.\d{1,3}(?![\w])")
MODEL = re.compile(r"hf://([\w.-]+)/([\w.-]+)")
# every read command with the flags that make it answer for the whole cluster
COMMANDS = [["doctor"], ["status"], ["why-not-ready", "-A"], ["why-not-cached", "-A"]]


def _identifying(doc: dict) -> set[str]:
    """What the input says that identifies its cluster: node names (and their dashed IP), IP addresses,
    namespaces but Kubernetes' and KServe's, private registry hosts, model ids and model names."""
    items = doc["items"]
    text = json.dumps(doc)
    found = {i["metadata"]["name"] for i in items if i["kind"] in ("Node", "KernelCacheNode")}
    found |= {re.sub(r"\.", "-", n.split(".")[0]) for n in list(found)}  # ip-10-0-1-11, as cut into Job names
    found |= set(IP.findall(text)) - {"127.0.0.1"}
    found |= {str(i["metadata"].get("namespace")) for i in items} - KEPT_NAMESPACES - {"None"}
    found -= {"kserve-kernelcache-jobs"}  # KServe's default Job namespace
    images = re.findall(r'"(?:image|imageReference)": "([a-z0-9.-]+\.[a-z0-9.-]+)(?::\d+)?/', text)
    found |= set(images) - KEPT_HOSTS
    for org, model in MODEL.findall(text):
        found |= {f"{org}/{model}", model}
    found.add(str(doc["meta"].get("cluster")))
    return {f for f in found if f}


def _dump_anonymized(path: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert run(["dump", "--anonymize", "-o", "json", "-f", str(path), "--file", str(out)]) == 0, capsys.readouterr()
    return out.read_text()


def _verdicts(path: Path, capsys: pytest.CaptureFixture[str]) -> list:
    """Each command's exit code; the doctor's findings by check, code and severity, and its checks' status."""
    out = []
    for argv in COMMANDS:
        capsys.readouterr()
        code = run([*argv, "-o", "json", "--from-file", str(path)])
        doc = json.loads(capsys.readouterr().out or "null")
        out.append((argv[0], code))
        if argv == ["doctor"]:
            out.append(sorted((f["check"], f.get("code"), f["severity"]) for f in doc["findings"]))
            out.append([(c["id"], c["status"]) for c in doc["checks"]])
            out.append(doc["summary"])
    return out


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_an_anonymized_example_holds_nothing_of_its_cluster(
    example: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = yaml.safe_load(example.read_text())
    text = _dump_anonymized(example, tmp_path / "anon.json", capsys)
    secrets = _identifying(doc)
    assert len(secrets) > 20
    left = sorted(s for s in secrets if s in text)
    assert not left, left
    assert "ip-10-" not in text and "ec2.internal" not in text
    assert _verdicts(tmp_path / "anon.json", capsys) == _verdicts(example, capsys)


def test_anonymizing_an_anonymized_dump_and_reading_stdin(tmp_path: Path, capsys, monkeypatch) -> None:
    """`-f -` reads a snapshot piped in; the dump it writes is read back by every command."""
    import io
    import sys

    data = EXAMPLES[0].read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    capsys.readouterr()
    assert run(["dump", "--anonymize", "-o", "json", "-f", "-", "--file", str(tmp_path / "a.json")]) == 0
    assert "ip-10-0-1-11" not in (tmp_path / "a.json").read_text()
    assert _verdicts(tmp_path / "a.json", capsys) == _verdicts(EXAMPLES[0], capsys)


# ---- the property test --------------------------------------------------------------------------------

_word = st.text("abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=8)
_octet = st.integers(min_value=1, max_value=254)
_private_ip = st.tuples(st.sampled_from([10, 172, 192]), _octet, _octet, _octet).map(
    lambda t: ".".join(map(str, (t[0], 16 if t[0] == 172 else 168 if t[0] == 192 else t[1], t[2], t[3])))
)


@st.composite
def _planted(draw: st.DrawFn) -> dict:
    """Secret-like values: node names that hold a private IP and a cloud region, namespaces, a registry host,
    model ids; all distinct."""
    ips = draw(st.lists(_private_ip, min_size=11, max_size=11, unique=True))
    region = draw(st.sampled_from(["us-west-2", "eu-central-1", "ap-south-1"]))
    nodes = [f"ip-{ip.replace('.', '-')}.{region}.compute.internal" for ip in ips]
    words = draw(st.lists(_word, min_size=8, max_size=8, unique=True))
    return {
        "ips": ips,
        "nodes": nodes,
        "namespaces": [f"{words[0]}-{w}" for w in words[1:4]],
        "registry": f"{words[4]}.{words[5]}.corp",
        "models": [f"{words[6].capitalize()}AI/{w.capitalize()}-{n}B-Instruct" for n, w in enumerate(words[1:6])],
    }


def _plant(doc: dict, planted: dict) -> tuple[dict, set[str]]:
    """The broken example with its nodes, IPs, namespaces, registry and models replaced by the planted
    values, and every message quoting a node, an IP, a model and the registry."""
    text = json.dumps(doc)
    nodes = sorted({i["metadata"]["name"] for i in doc["items"] if i["kind"] in ("Node", "KernelCacheNode")})
    ips = sorted(set(IP.findall(text)) - {"127.0.0.1"})
    namespaces = ["team-llm", "team-chat", "team-vision"]
    models = sorted({f"{o}/{m}" for o, m in MODEL.findall(text)})
    pairs = [
        *zip(nodes, planted["nodes"], strict=False),
        *zip(ips, planted["ips"][::-1] * 3, strict=False),
        *zip(namespaces, planted["namespaces"], strict=True),
        ("harbor.ml.example.com", planted["registry"]),
        *zip(models, planted["models"], strict=False),
    ]
    for old, new in sorted(pairs, key=lambda p: -len(p[0])):
        text = re.sub(rf"(?<![\w.-]){re.escape(old)}(?![\w])", new, text)
    quote = f" (on {planted['nodes'][0]} at {planted['ips'][0]}, hf://{planted['models'][0]}, {planted['registry']})"
    text = re.sub(r'("message": ")((?:[^"\\]|\\.)*)"', lambda m: f'{m.group(1)}{m.group(2)}{quote}"', text)
    secrets = {*planted["nodes"], *planted["ips"], *planted["namespaces"], planted["registry"], *planted["models"]}
    secrets |= {n.split(".")[0] for n in planted["nodes"]} | {m.split("/")[1] for m in planted["models"]}
    return json.loads(text), secrets


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(planted=_planted())
def test_no_planted_value_survives_and_every_verdict_stays(
    planted: dict, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    tmp = tmp_path_factory.mktemp("planted")
    doc, secrets = _plant(yaml.safe_load(EXAMPLES[0].read_text()), planted)
    original = tmp / "planted.json"
    original.write_text(json.dumps(doc))
    text = _dump_anonymized(original, tmp / "anon.json", capsys)
    assert all(s in original.read_text() for s in secrets)
    left = sorted(s for s in secrets if s in text)
    assert not left, left
    assert _verdicts(tmp / "anon.json", capsys) == _verdicts(original, capsys)
