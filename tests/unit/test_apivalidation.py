"""Pure parts of apivalidation: Go's %q as Kubernetes prints bad values, and the one-line cut. (The messages
themselves are compared with the real API server's in tests/e2e/test_api_validation.py.)"""

from __future__ import annotations

import pytest

from kubectl_kcache.apivalidation import go_quote, label_value_errors, metadata_errors, shown


@pytest.mark.parametrize(
    "value, quoted",
    [
        ("plain", '"plain"'),
        ('say "hi" \\ bye', '"say \\"hi\\" \\\\ bye"'),
        ("\x1b[31m\x07\n\t\x00", '"\\x1b[31m\\a\\n\\t\\x00"'),
        ("rtl\u202eevil\u00a0nbsp", '"rtl\\u202eevil\\u00a0nbsp"'),
        ("café 😀", '"café 😀"'),
        ("\U000e0001", '"\\U000e0001"'),
    ],
)
def test_go_quote(value, quoted):
    assert go_quote(value) == quoted


def test_shown_cuts_long_values_and_says_how_long():
    assert shown("a" * 63) == go_quote("a" * 63)
    assert shown("b" * 100) == f'"{"b" * 60}"... (100 characters)'


def test_a_value_with_a_trailing_newline_is_not_a_valid_label():
    assert label_value_errors("gpu\n") and not label_value_errors("gpu")


def test_valid_metadata_has_no_errors_twice():
    labels = {"kubernetes.io/hostname": "gpu-1", "pool": "", "example.com/x_y.z": "A-1"}
    assert metadata_errors("Node", "gpu-1.example.com", None, labels) == []
    assert metadata_errors("Pod", "p", "team-a", labels) == []  # remembered strings: the same answer again
    assert metadata_errors("Namespace", "team.a", None, {}) != []
