"""Go's net/url as KServe's identity.ModelURIHash uses it: every case in golden/model_uri.json was computed
by Go 1.26.8 (golden/gen_model_uri.go), the Go of KServe's go.mod: the printed URL (userinfo, query and
fragment cleared), the error, and the hash KServe puts in every footprint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubectl_kcache.kernelcache import gourl
from kubectl_kcache.kernelcache.identity import model_uri_hash

GOLDEN = json.loads((Path(__file__).parent / "golden" / "model_uri.json").read_text(encoding="utf-8"))
CASES = GOLDEN["results"]


def test_golden_file_is_from_kserves_go():
    assert GOLDEN["go"] == "go1.26.8"
    assert len(CASES) > 300


@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
def test_parse_and_print_as_go_does(case):
    try:
        printed, error = gourl.string_without_user_query_fragment(gourl.parse(case["input"])), ""
    except gourl.URLError as exc:
        printed, error = "", str(exc)
    assert printed == case["printed"]
    assert bool(error) == bool(case["error"])
    if error and not case["error"].startswith("invalid host: ParseAddr"):  # netip's wording is not ported
        assert error == case["error"]
    assert model_uri_hash(case["input"]) == case["hash"]


@pytest.mark.parametrize(
    ("raw", "printed"),
    [
        # admission.md §2.4, computed with Go's net/url
        ("HF://Qwen/Qwen3-0.6B", "hf://Qwen/Qwen3-0.6B"),
        ("https://user:pass@huggingface.co/org/model?rev=main", "https://huggingface.co/org/model"),
        ("s3://bucket/models/llama?versionId=3#frag", "s3://bucket/models/llama"),
        ("hf://org/model#", "hf://org/model"),
        ("hf://org/model?", "hf://org/model"),
        ("hf://@host/p", "hf://host/p"),
        ("hf://Org/Model/../x", "hf://Org/Model/../x"),
        ("gs://b/p/", "gs://b/p/"),
        ("hf://org/mod%2fel", "hf://org/mod%2fel"),
        ("hf://org/a(b)!*'", "hf://org/a(b)!*'"),
        ("hf://org/my model", "hf://org/my%20model"),
        ("hf://org/a b%41", "hf://org/a%20bA"),
        ("hf://org/a{b}|^", "hf://org/a%7Bb%7D%7C%5E"),
        ("hf://org/modèle", "hf://org/mod%C3%A8le"),
        ("hf://modèle/x", "hf://mod%C3%A8le/x"),
        ("file:///mnt/models", "file:///mnt/models"),
        ("a:b/c", "a:b/c"),
    ],
)
def test_admission_notes_examples(raw, printed):
    assert gourl.string_without_user_query_fragment(gourl.parse(raw)) == printed


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ("%", 'invalid URL escape "%"'),
        ("hf://org/m#%zz", 'invalid URL escape "%zz"'),
        ("hf://a\x01b", "net/url: invalid control character in URL"),
        (":foo", "missing protocol scheme"),
        ("hf://[::1/x", "missing ']' in host"),
        ("http://host:abc/x", 'invalid port ":abc" after host'),
        ("hf://org name/x", 'invalid character " " in host name'),
        ("1a:b/c", "first path segment in URL cannot contain colon"),
        ("http://h:80:90/x", 'invalid port ":80:90" after host'),  # Go 1.26: strict colons for http(s)
    ],
)
def test_unparsable_model_uris(raw, error):
    with pytest.raises(gourl.URLError) as exc:
        gourl.parse(raw)
    assert str(exc.value) == error
    assert model_uri_hash(raw) == ""


def test_go_quote():
    assert gourl.go_quote(b'a"\\\n\x01\xff\xc3\xa8') == '"a\\"\\\\\\n\\x01\\xffè"'
