"""Input at the edges against the real API server: an enum value or a selector key the loader refuses is
refused by kube-apiserver with the same words at the same field; a mistyped `-n` on a live cluster is
warned about as kubectl does, and kubectl's flags are checked before any request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubectl_kcache.errors import InputError
from kubectl_kcache.snapshot.files.from_files import load_files
from tests import builders as b

pytestmark = pytest.mark.e2e


def hook(**kw: Any) -> dict[str, Any]:
    obj = b.webhook_configuration(**kw)
    obj["metadata"]["name"] = "kcache-e2e-refused"
    return obj


CASES = {
    "taint-effect": b.node("kcache-e2e-refused", taints=[b.taint("gpu", effect="NoScheduleNow")]),
    "failure-policy": hook(failure_policy="Sometimes"),
    "selector-operator": hook(namespace_selector={"matchExpressions": [{"key": "a", "operator": "Foo"}]}),
    "selector-values": hook(namespace_selector={"matchExpressions": [{"key": "a", "operator": "In"}]}),
    "selector-key": hook(namespace_selector={"matchExpressions": [{"key": "--overwrite", "operator": "DoesNotExist"}]}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_loader_refuses_enums_and_keys_as_the_api_server_does(cluster, tmp_path: Path, case: str):
    obj = json.loads(json.dumps(CASES[case]))
    obj.pop("status", None)
    proc = cluster.kubectl(
        "create", "--dry-run=server", "-f", "-", "-o", "name", "-v=9", input=json.dumps(obj), check=False
    )
    assert proc.returncode != 0
    body = next(line for line in proc.stderr.splitlines() if '"kind":"Status"' in line)
    causes = json.loads(body[body.index("{") :])["details"]["causes"]
    # the field as the server names it (a node's taints it calls metadata.taints[0]); ours is the JSON path
    server = {(c["field"].removeprefix("metadata."), c["message"]) for c in causes}
    path = tmp_path / "in.json"
    path.write_text(json.dumps(obj))
    with pytest.raises(InputError) as err:
        load_files([str(path)])
    field, message = str(err.value).split(": $.", 1)[1].split(": ", 1)  # after "file: Kind name: $."
    assert (field.removeprefix("spec."), message) in server, (field, message, server)


def test_a_mistyped_namespace_is_warned_about_live(cluster):
    typo = cluster.kcache("doctor", "-n", "tema", "-o", "json", "--fail-on", "never")
    assert "warning: No resources found in tema namespace.\n" in typo.stderr, typo.stderr
    assert json.loads(typo.stdout)["kind"] == "DoctorReport"
    known = cluster.kcache("doctor", "-n", "kserve", "-o", "json", "--fail-on", "never")
    assert "No resources found" not in known.stderr


@pytest.mark.parametrize(
    "args, words",
    [
        (["status", "--request-timeout", "1x"], "invalid duration"),
        (["status", "--as-group", "admins"], "requires --as"),
        (["doctor", "-n", "Tema"], 'invalid namespace "Tema"'),
    ],
)
def test_bad_flags_end_before_any_request(cluster, args, words):
    mark = cluster.audit_mark()
    proc = cluster.kcache(*args)
    assert proc.returncode == 2 and words in proc.stderr, proc.stderr
    assert not [e for e in cluster.audit_events(mark) if "kubectl-kcache" in (e.get("userAgent") or "")]
