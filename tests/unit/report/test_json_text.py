"""`documents.json_text` is `json.dumps(doc, indent=2)`, made faster: the same text for every document, the
fallbacks included (non-ASCII, floats, what msgspec cannot encode)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_kcache.documents import json_text

_leaves = st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=12)
_docs = st.recursive(
    _leaves | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_docs)
def test_the_text_of_json_dumps(doc: Any) -> None:
    assert json_text(doc) == json.dumps(doc, indent=2)


def test_the_fallbacks() -> None:
    for doc in (
        {"message": "caf\u00e9 \u202e"},  # json escapes non-ASCII
        {"rate": 1e16, "x": [0.5, -2.5e-7]},  # floats are spelled by json
        {"evil": '\x00\x1f\x7f \\ " /'},
        {"tuple": (1, "a"), "empty": [], "nothing": {}},
    ):
        assert json_text(doc) == json.dumps(doc, indent=2)


def test_a_float_json_cannot_spell_is_written_as_valid_json() -> None:
    """json.dumps writes Infinity, which is not JSON (jq and Go refuse it); a document stays parseable."""

    def refuse(constant: str) -> Any:
        raise AssertionError(f"{constant} is not JSON")

    for value in (float("inf"), float("-inf"), float("nan")):
        text = json_text({"x": value, "y": [1, value]})
        assert json.loads(text, parse_constant=refuse) == {"x": None, "y": [1, None]}
        mixed = json_text({"x": value, "rate": 0.5, "name": "caf\u00e9"})  # json writes this one
        assert json.loads(mixed, parse_constant=refuse) == {"x": None, "rate": 0.5, "name": "caf\u00e9"}


def test_a_number_inside_a_string_is_no_float(monkeypatch: Any) -> None:
    """A digest (`sha256:1e2c...`), a quoted `[1.5` or `,2e3` is text: msgspec writes it, json's pure-Python
    indenting encoder is not called (it took ~0.7 s for why-not-cached's 7 MB answer at 130,000 nodes)."""
    docs = (
        {"image": "registry.example/m@sha256:1e2c24bd", "note": 'say "[1.5" and \\",2e3'},
        ["a:1.5", {"k:1e": "-0.5"}],
    )
    expected = [json.dumps(doc, indent=2) for doc in docs]

    def refused(*args: Any, **kwargs: Any) -> str:
        raise AssertionError("json.dumps called for a document without floats")

    monkeypatch.setattr(json, "dumps", refused)
    assert [json_text(doc) for doc in docs] == expected
    monkeypatch.undo()
    assert json_text({"ratio": 1.5, "image": "sha256:1e2c"}) == json.dumps(
        {"ratio": 1.5, "image": "sha256:1e2c"}, indent=2
    )
