"""The layout of the why-* answers: words are never cut, lines fit the width unless one word is wider,
colour does not move a break, hostile values never reach the terminal raw, and ASCII glyphs stand in for
a stdout that cannot encode the Unicode ones."""

from __future__ import annotations

import io
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_kcache.report.plan_table import render_plan_table
from kubectl_kcache.report.why_layout import Node, Page, spans, wrap_spans

ANSI = re.compile(r"\x1b\[[0-9;]*m")
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
HOSTILE = st.lists(
    st.sampled_from(list("ab-./= ") + ["\x1b", "\x07", "\x9b", "\u202e", "\u2066", "\n", "\r", "]0;", "[2J", "é", "✓"]),
    max_size=30,
).map("".join)
WORDS = st.lists(st.text(alphabet="abcdefghij-./=:", min_size=1, max_size=30), min_size=1, max_size=30)


@given(WORDS, st.integers(min_value=10, max_value=120))
def test_wrapping_never_cuts_a_word_and_fits_the_width(words, width):
    lines = ["".join(t for t, _ in line) for line in wrap_spans(spans(" ".join(words)), width, "", "  ")]
    for word in words:
        assert any(word in line.split() for line in lines)
    assert all(len(line) <= width or len(line.split()) == 1 for line in lines)
    assert " ".join(" ".join(line.split()) for line in lines) == " ".join(words)


@given(WORDS, st.integers(min_value=20, max_value=120))
def test_colour_never_moves_a_line_break(words, width):
    def page(color: bool) -> str:
        out = io.StringIO()
        p = Page(out, color=color, width=width)
        root = Node(spans(("Head ", "bold"), " ".join(words[:3])))
        child = root.add(("✓ ", "green"), " ".join(words), (" tail", "dim"))
        child.add(" ".join(reversed(words)))
        p.tree(root)
        p.para("Why:", " ".join(words))
        p.write()
        return out.getvalue()

    assert ANSI.sub("", page(True)) == page(False)


@settings(max_examples=200)
@given(HOSTILE, st.sampled_from([None, 30, 80]))
def test_hostile_values_are_escaped_in_every_part(value, width):
    out = io.StringIO()
    page = Page(out, color=True, width=width)
    root = Node(spans(("Node ", "bold"), value))
    root.add(value, (value, "red"))
    page.tree(root)
    page.para("Why:", value)
    page.command("Next:", f"kubectl get node {value}")
    page.line(value)
    page.write()
    assert not UNSAFE.search(ANSI.sub("", out.getvalue())), repr(out.getvalue())


@settings(max_examples=100)
@given(HOSTILE)
def test_the_plan_table_escapes_names_and_reasons(value):
    doc = {
        "actions": [
            {
                "verb": "delete",
                "kind": "KernelCacheNode",
                "name": value or "x",
                "reason": value,
                "diff": [f"- x: {value}"],
            },
            {"verb": "event", "kind": "Event", "namespace": value, "name": "c", "eventReason": value, "message": value},
        ]
    }
    for width in (None, 80):
        out = io.StringIO()
        render_plan_table(doc, out, color=True, width=width)
        assert not UNSAFE.search(ANSI.sub("", out.getvalue()))


class Ascii(io.StringIO):
    encoding = "ascii"


def test_ascii_glyphs_on_a_stream_that_cannot_take_unicode():
    out = Ascii()
    page = Page(out, color=False, width=80)
    root = Node(spans(f"{page.g['ok']} ok"))
    root.add(f"{page.g['no']} no").add("leaf")
    root.add("last")
    page.tree(root)
    page.write()
    assert out.getvalue() == "+ ok\n|-- x no\n|   `-- leaf\n`-- last\n"
