"""Kubernetes' core/v1 toleration validation (v1.36 ValidateTolerations), which the KernelCacheNodeGroup CRD
does not apply: the exact 422 texts the API server gives for the agent DaemonSet patch and a preparation Job
(recorded from the real validation code of v1.36.3), and the e2e test compares them with the test bed."""

from __future__ import annotations

import pytest

from kubectl_kcache.kernelcache.taints import invalid_message, toleration_errors
from kubectl_kcache.objects import Toleration as T

DS = ("DaemonSet.apps", "kserve-kernelcachenode-agent", "spec.template.spec.tolerations")
PREFIX = 'DaemonSet.apps "kserve-kernelcachenode-agent" is invalid: spec.template.spec.tolerations[0]'


@pytest.mark.parametrize(
    ("tol", "text"),
    [
        (
            T(key="a", operator="In", effect="NoSchedule"),
            '.operator: Unsupported value: "In": supported values: "Equal", "Exists"',
        ),
        (
            T(key="a", operator="Lt", value="3"),
            '.operator: Unsupported value: "Lt": supported values: "Equal", "Exists", "Lt", "Gt"',
        ),
        (
            T(key="a", operator="Exists", value="v"),
            """.operator: Invalid value: "v": value must be empty when `operator` is 'Exists'""",
        ),
        (
            T(operator="Equal", value="x"),
            '.operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all '
            'values and all keys"',
        ),
        (
            T(key="a", operator="Exists", effect="NoScheduleNoAdmit"),
            '.effect: Unsupported value: "NoScheduleNoAdmit": supported values: "NoSchedule", "PreferNoSchedule", '
            '"NoExecute"',
        ),
        (
            T(key="a", operator="Exists", effect="NoSchedule", toleration_seconds=30),
            """.effect: Invalid value: "NoSchedule": effect must be 'NoExecute' when `tolerationSeconds` is set""",
        ),
        (
            T(key="bad key", operator="Exists"),
            ".key: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
            "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
        (T(key="/k", operator="Exists"), '.key: Invalid value: "/k": prefix part must be non-empty'),
        (
            T(key="a", operator="Equal", value="bad value"),
            '.operator: Invalid value: "bad value": a valid label must be an empty string or consist of alphanumeric '
            "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
            "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ),
    ],
)
def test_one_invalid_toleration_gives_the_api_servers_text(tol, text):
    assert invalid_message(*DS, [tol]) == PREFIX + text


def test_several_errors_are_bracketed_in_order():
    tols = [T(key="a", operator="In", effect="NoSchedule"), T(key="b", operator="Exists", value="v")]
    assert invalid_message(*DS, tols) == (
        'DaemonSet.apps "kserve-kernelcachenode-agent" is invalid: [spec.template.spec.tolerations[0].operator: '
        'Unsupported value: "In": supported values: "Equal", "Exists", spec.template.spec.tolerations[1].operator: '
        """Invalid value: "v": value must be empty when `operator` is 'Exists']"""
    )


@pytest.mark.parametrize(
    "tol",
    [
        T(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule"),
        T(key="workload", operator="Equal", value="gpu", effect="NoSchedule"),
        T(key="workload", value="gpu"),  # an empty operator means Equal
        T(operator="Exists"),  # tolerate everything
        T(key="node.kubernetes.io/unreachable", operator="Exists", effect="NoExecute", toleration_seconds=300),
    ],
)
def test_valid_tolerations_give_nothing(tol):
    assert toleration_errors(tol) == []
    assert invalid_message(*DS, [tol]) == ""
