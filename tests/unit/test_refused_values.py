"""Values Kubernetes would refuse are refused on input, in the API server's words, naming file, object and
JSON path (never an internal error later): enums, integers past their Go type, negative counts, affinity
of another shape. Times past year 9999 and Go's zero time are said as what they are."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_kcache.errors import InputError
from kubectl_kcache.objects import parse_time
from kubectl_kcache.snapshot.files.from_files import load_files
from tests import builders as b

AGENT = "DaemonSet kserve/kserve-kernelcachenode-agent"
HOOK = "MutatingWebhookConfiguration kernelcache.serving.kserve.io"


def refused(tmp_path: Path, obj: dict[str, Any]) -> list[str]:
    """The error for `obj` read from JSON and from YAML (the same text but the file name)."""
    out = []
    for fmt in ("json", "yaml"):
        path = tmp_path / f"in.{fmt}"
        path.write_text(json.dumps(obj) if fmt == "json" else yaml.safe_dump(obj))
        with pytest.raises(InputError) as err:
            load_files([str(path)])
        out.append(str(err.value).removeprefix(f"{path}: "))
    assert out[0] == out[1], out
    return out


def with_affinity(affinity: Any) -> dict[str, Any]:
    ds = b.agent_daemonset()
    ds["spec"]["template"]["spec"]["affinity"] = affinity
    return ds


@pytest.mark.parametrize(
    "obj, message",
    [
        (
            b.webhook_configuration(namespace_selector={"matchExpressions": [{"key": "a", "operator": "Foo"}]}),
            f'{HOOK}: $.webhooks[0].namespaceSelector.matchExpressions[0].operator: Invalid value: "Foo": not a valid '
            "selector operator",
        ),
        (
            b.webhook_configuration(namespace_selector={"matchExpressions": [{"key": "a", "operator": "In"}]}),
            f"{HOOK}: $.webhooks[0].namespaceSelector.matchExpressions[0].values: Required value: must be specified "
            "when `operator` is 'In' or 'NotIn'",
        ),
        (
            b.webhook_configuration(failure_policy="Sometimes"),
            f'{HOOK}: $.webhooks[0].failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore"',
        ),
        (
            b.node("n1", taints=[b.taint("gpu", effect="NoScheduleNow")]),
            'Node n1: $.spec.taints[0].effect: Unsupported value: "NoScheduleNow": supported values: "NoSchedule", '
            '"PreferNoSchedule", "NoExecute"',
        ),
        (
            b.agent_daemonset(tolerations=[{"key": "a", "operator": "Exists", "tolerationSeconds": 10**30}]),
            f"{AGENT}: $.spec.template.spec.tolerations[0].tolerationSeconds: json: cannot unmarshal number 1e+30 into "
            "Go struct field Toleration.tolerationSeconds of type int64",
        ),
        (
            b.agent_daemonset(status={"desiredNumberScheduled": 3, "numberReady": -3}),
            f"{AGENT}: $.status.numberReady: Invalid value: -3: must be greater than or equal to 0",
        ),
        (
            b.agent_daemonset(status={"desiredNumberScheduled": 10**20, "numberReady": 1}),
            f"{AGENT}: $.status.desiredNumberScheduled: json: cannot unmarshal number 100000000000000000000 into Go "
            "struct field DaemonSetStatus.desiredNumberScheduled of type int32",
        ),
        (
            with_affinity({"nodeAffinity": "x"}),
            f"{AGENT}: $.spec.template.spec.affinity.nodeAffinity: expected an object, got a string",
        ),
        (
            with_affinity({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"a": 1}]}}),
            f"{AGENT}: $.spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution: "
            "expected an object, got a list",
        ),
        (
            with_affinity(
                {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [{"matchExpressions": ["pool In gpu"]}]
                        }
                    }
                }
            ),
            f"{AGENT}: $.spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
            ".nodeSelectorTerms[0].matchExpressions[0]: expected an object, got a string",
        ),
        (
            with_affinity(
                {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [{"key": "pool", "operator": "In", "values": [1, 2]}]}
                            ]
                        }
                    }
                }
            ),
            f"{AGENT}: $.spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
            ".nodeSelectorTerms[0].matchExpressions[0].values[0]: expected a string, got an integer",
        ),
    ],
)
def test_values_kubernetes_refuses_are_refused_in_its_words(tmp_path, obj, message):
    assert refused(tmp_path, obj) == [message, message]


def test_valid_enums_and_affinity_are_read(tmp_path):
    items = [
        b.webhook_configuration(failure_policy="Ignore"),
        b.node("n1", taints=[b.taint("a", effect=e) for e in ("NoExecute", "NoSchedule", "PreferNoSchedule")]),
        b.agent_daemonset(
            terms=[b.term({"pool": "gpu"})],
            status={"desiredNumberScheduled": 2, "numberReady": 2},
            tolerations=[{"key": "a", "operator": "Exists", "tolerationSeconds": 3600}],
        ),
    ]
    path = tmp_path / "ok.yaml"
    path.write_text(yaml.safe_dump_all(items))
    snap = load_files([str(path)])
    assert snap.daemonsets[0].tolerations[0].toleration_seconds == 3600
    assert [t.effect for t in snap.nodes[0].taints] == ["NoExecute", "NoSchedule", "PreferNoSchedule"]


def test_go_zero_time_is_no_time():
    assert parse_time("0001-01-01T00:00:00Z") is None
    assert parse_time("0001-01-01T00:00:00+02:00") is None
    assert parse_time("2026-11-29T10:00:00Z") == dt.datetime(2026, 11, 29, 10, tzinfo=dt.timezone.utc)


def test_go_zero_time_is_never_shown_as_a_time(tmp_path):
    pod = b.consumer("pod", node="gpu-1", created="0001-01-01T00:00:00Z")
    kc = b.consumer_cache("qwen", ready_at="0001-01-01T00:00:00Z")
    kcn = b.kcn("gpu-1", {"team-a/qwen": b.cache_entry(kc, last_update="0001-01-01T00:00:00Z")})
    path = tmp_path / "x.yaml"
    path.write_text(yaml.safe_dump_all([pod, kc, kcn]))
    snap = load_files([str(path)])
    assert snap.pods[0].meta.created == ""
    assert snap.kernel_caches[0].conditions[0].last_transition == ""
    assert snap.kcns[0].entries[0].last_update == ""


def test_a_selector_key_that_looks_like_a_flag_is_refused_as_the_api_server_does(tmp_path):
    hook = b.webhook_configuration(
        namespace_selector={"matchExpressions": [{"key": "--overwrite", "operator": "DoesNotExist"}]}
    )
    [message, _] = refused(tmp_path, hook)
    assert message.startswith(
        f"{HOOK}: $.webhooks[0].namespaceSelector.matchExpressions[0].key: Invalid value: "
        '"--overwrite": name part must consist of alphanumeric characters'
    )
