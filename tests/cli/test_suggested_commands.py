"""Names the API server does not validate (an ownerReference's name, a capture's session pod name) never
reach a suggested command: the answer says which name and why there is no command instead."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from .test_why_not_cached import cli

ROOT = Path(__file__).resolve().parents[2]
BROKEN = ROOT / "examples" / "broken-cluster.yaml"
OPTION = "--namespace=kube-system"


def _broken_with_owner(tmp_path: Path, deployment: str) -> str:
    """The broken example with the recreatable pod's ReplicaSet owner renamed to `deployment`-HASH."""
    docs = list(yaml.safe_load_all(BROKEN.read_text()))
    items = [x for d in docs if d for x in (d.get("items") or [d])]
    pod = next(
        x
        for x in items
        if x.get("kind") == "Pod" and x["metadata"]["name"].startswith("mistral-7b-instruct-v0-3-predictor-")
    )
    hash_ = pod["metadata"]["labels"]["pod-template-hash"]
    for ref in pod["metadata"]["ownerReferences"]:
        ref["name"] = f"{deployment}-{hash_}"
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return str(path)


def test_an_owner_reference_named_like_an_option_is_never_a_command(capsys, tmp_path):
    f = _broken_with_owner(tmp_path, OPTION)
    for argv in (["-A"], ["-A", "-o", "wide"], ["-A", "-o", "json"]):
        code, out, err = cli(capsys, "why-not-cached", *argv, "--from-file", f)
        assert code == 1, (argv, err)
        assert "rollout restart deployment --namespace" not in out, argv
        assert f"restart deployment {OPTION}" not in out and f"deployment/{OPTION}" not in out, argv
    code, out, _ = cli(capsys, "why-not-cached", "-A", "--from-file", f, "-o", "json")
    doc = json.loads(out)
    [row] = [r for r in doc["inferenceServices"] if r["inferenceService"] == "mistral-7b-instruct-v0-3"]
    assert row["next"].startswith("no command suggested: deployment name ") and OPTION in row["next"], row


def test_a_valid_owner_still_gets_its_restart(capsys, tmp_path):
    f = _broken_with_owner(tmp_path, "mistral-7b-instruct-v0-3-predictor")
    code, out, _ = cli(capsys, "why-not-cached", "-A", "--from-file", f)
    assert code == 1
    assert "kubectl -n team-llm rollout restart deployment/mistral-7b-instruct-v0-3-predictor" in out
