"""The one builder of suggested commands (`kubectl_kcache/suggest.py`): every template the plugin uses, read
from its call sites, filled with every kind of string (option payloads, shell, escape and bidi payloads, valid
names); a word from data never starts with `-`, is a valid value of its kind, and the line reads back through
the shell to the argv intended. And no call site builds a command any other way."""

from __future__ import annotations

import ast
import re
import shlex
import string
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_kcache import apivalidation as v
from kubectl_kcache.suggest import (
    Identity,
    Json,
    Labels,
    Name,
    Namespace,
    Placeholder,
    Selector,
    Url,
    Verb,
    build,
    kubectl,
    kubectl_or_none,
)

PACKAGE = Path(__file__).resolve().parents[2] / "kubectl_kcache"
BUILDERS = {"kubectl", "kubectl_or_none", "build"}
WORDS = {
    "Name",
    "Namespace",
    "Selector.of",
    "Selector.has",
    "Labels.of",
    "Json",
    "Placeholder",
    "Identity",
    "Verb",
    "Url",
}
# text.command outside the builder: a record of how the plugin was invoked (the page header), not a suggestion
RAW_COMMAND_ALLOWED = {"suggest.py", "text.py", "cli/doctor.py", "cli/pages.py"}

OPTIONS = st.sampled_from(
    ["-x", "-n", "--", "-", "--namespace=kube-system", "--server=https://evil.example", "--kubeconfig=/tmp/k",
     "-A", "--all-namespaces", "--as=system:admin", "-oyaml", "-- x", "--token=abc"]
)  # fmt: skip
SHELL = st.sampled_from(["$(id)", "`id`", "a;b", "a|b", "a&&b", "x'y", 'x"y', "a b", "a\nb", "*", "~", "!x", "#x"])
ESCAPES = st.sampled_from(["\x1b[31mred", "a\u202eb", "\u2066x\u2069", "a\u200bb", "\x00", "a\x7fb", "\ufeffx"])
VALID = st.one_of(
    st.from_regex(re.compile(v.DNS1123_LABEL), fullmatch=True).filter(lambda x: len(x) <= 63),
    st.from_regex(re.compile(v.DNS1123_SUBDOMAIN), fullmatch=True).filter(lambda x: len(x) <= 253),
    st.from_regex(re.compile(v.NAME_PART), fullmatch=True).filter(lambda x: len(x) <= 63),
    st.sampled_from(["gpu-1", "team-a", "kserve", "a", "0", "model.v1", "nvidia.com/gpu.product", "A_b-C"]),
)
STRINGS = st.one_of(
    VALID,
    OPTIONS,
    st.builds(lambda a, b: f"--{a}={b}", VALID, VALID),
    st.builds(lambda a: f"-{a}", VALID),
    SHELL,
    ESCAPES,
    st.builds(lambda a, b: a + b, VALID, st.one_of(SHELL, ESCAPES, OPTIONS)),
    st.text(max_size=40),
    st.just(""),
    st.text(min_size=254, max_size=300, alphabet="ab"),
)


# ---- every template at its call site ----------------------------------------------------------------------


def _callee(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_callee(node.value)}.{node.attr}"
    return ""


ASSIGNED: dict[str, dict[str, list[ast.expr]]] = {}  # module -> variable -> what is assigned to it


def _assignments(tree: ast.Module) -> dict[str, list[ast.expr]]:
    out: dict[str, list[ast.expr]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out.setdefault(target.id, []).append(node.value)
                elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                    for t, v in zip(target.elts, node.value.elts, strict=True):
                        if isinstance(t, ast.Name):
                            out.setdefault(t.id, []).append(v)
    return out


def _calls() -> list[tuple[str, ast.Call, set[str]]]:
    """Every call in the package, with the builders its module imports."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text(), rel)
        ASSIGNED[rel] = _assignments(tree)
        imported = {
            a.asname or a.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("suggest")
            for a in node.names
            if a.name in BUILDERS
        }
        out += [(rel, node, imported) for node in ast.walk(tree) if isinstance(node, ast.Call)]
    return out


CALLS = _calls()
SITES = [(rel, call) for rel, call, imported in CALLS if _callee(call.func) in imported]
WordKind = tuple[str, str]  # ("Name", kind) | ("Selector", "") | ("Json", "")


def _word_kind(rel: str, expr: ast.expr) -> WordKind:
    """What a keyword of a builder call is: a word's constructor, directly, in a conditional, or in a variable
    of the module that only ever holds such a word."""
    if isinstance(expr, ast.IfExp):
        return _word_kind(rel, expr.body)
    if isinstance(expr, ast.Name):
        kinds = {_word_kind(rel, v) for v in ASSIGNED[rel].get(expr.id, ())}
        assert len(kinds) == 1, (rel, expr.lineno, expr.id, "a variable holds one kind of word")
        return kinds.pop()
    assert isinstance(expr, ast.Call), (rel, expr.lineno, "a word is built by its constructor")
    name = _callee(expr.func)
    assert name in WORDS, (rel, expr.lineno, name)
    if name == "Name":
        kind = expr.args[0]
        assert isinstance(kind, ast.Constant) and isinstance(kind.value, str), (rel, expr.lineno)
        return ("Name", kind.value)
    if name == "Namespace":
        return ("Name", "namespace")
    if name == "Labels.of":
        return ("Labels", "")
    return (name.split(".")[0], "")


def _templates() -> list[tuple[str, str, dict[str, WordKind]]]:
    out = []
    for rel, call in SITES:
        if rel == "suggest.py":
            continue
        first = call.args[0] if call.args else None
        assert isinstance(first, ast.Constant) and isinstance(first.value, str), (
            f"{rel}:{call.lineno}: a template is a string literal, its data only in typed words"
        )
        assert not call.args[1:] and all(k.arg for k in call.keywords), (rel, call.lineno)
        words = {str(k.arg): _word_kind(rel, k.value) for k in call.keywords}
        fields = {f for part in first.value.split() for _, f, _, _ in string.Formatter().parse(part) if f}
        assert fields == set(words), (rel, call.lineno, fields, set(words))
        out.append((f"{rel}:{call.lineno}", first.value, words))
    return out


TEMPLATES = _templates()


def test_every_command_is_built_by_the_builder():
    assert len(TEMPLATES) > 100
    raw = sorted({rel for rel, call, _ in CALLS if _callee(call.func) == "command"} - RAW_COMMAND_ALLOWED)
    assert raw == [], "build suggested commands with kubectl_kcache.suggest, not text.command"


def _filled(words: dict[str, WordKind], draw: Callable[[st.SearchStrategy[str]], str]) -> dict[str, object]:
    out: dict[str, object] = {}
    for field, (kind, of) in words.items():
        if kind == "Name":
            out[field] = Name(of, draw(STRINGS))
        elif kind == "Selector":
            pairs = draw(st.lists(st.tuples(STRINGS, st.one_of(st.none(), STRINGS)), min_size=1, max_size=3))
            out[field] = Selector(tuple(pairs))
        elif kind == "Labels":
            out[field] = Labels.of(draw(st.dictionaries(STRINGS, STRINGS, min_size=1, max_size=3)))
        elif kind == "Placeholder":
            out[field] = Placeholder(draw(st.sampled_from(["INFERENCESERVICE", "GROUP"])))
        elif kind in ("Identity", "Verb", "Url"):
            out[field] = {"Identity": Identity, "Verb": Verb, "Url": Url}[kind](draw(STRINGS))
        else:
            out[field] = Json({draw(STRINGS): draw(STRINGS)})
    return out


def _valid_of_its_kind(word: object) -> bool:
    """Checked from apimachinery's rules directly, not through the builder."""
    if isinstance(word, Name):
        value = word.value
        if word.kind in ("namespace", "container", "service"):
            return len(value) <= 63 and re.fullmatch(v.DNS1123_LABEL, value) is not None
        if word.kind.endswith(("role", "rolebinding")):
            return value not in ("", ".", "..") and not set("/%") & set(value) and value.isprintable()
        return len(value) <= 253 and re.fullmatch(v.DNS1123_SUBDOMAIN, value) is not None
    if isinstance(word, Identity):
        return bool(word.value) and word.value.isprintable() and word.value == word.value.strip()
    if isinstance(word, Verb):
        return re.fullmatch("[a-z]+", word.value) is not None
    if isinstance(word, Url):
        return word.value.startswith("https://") and not set(" '\"\\$`;&|<>") & set(word.value)
    if isinstance(word, Selector):
        return bool(word.pairs) and all(
            not v.qualified_name_errors(k) and (x is None or not v.label_value_errors(x)) for k, x in word.pairs
        )
    return True


@pytest.mark.parametrize(("site", "template", "words"), TEMPLATES, ids=[t[0] for t in TEMPLATES])
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_every_suggested_command_holds_only_valid_names_never_as_options(site, template, words, data):
    filled = _filled(words, data.draw)
    built = build(template, **filled)  # type: ignore[arg-type]
    valid = all(_valid_of_its_kind(w) for w in filled.values())
    if built.argv is None:
        assert built.refused and built.refused.startswith("no command suggested: "), (site, built)
        assert not valid or any(
            isinstance(w, (Name, Selector)) and w.render().startswith("-") for w in filled.values()
        ), (site, filled)
        assert kubectl(template, **filled) == built.refused  # type: ignore[arg-type]
        assert kubectl_or_none(template, **filled) is None  # type: ignore[arg-type]
        return
    assert valid, (site, filled)
    parts: list[str] = []
    expected: list[str] = []
    for part in template.split():
        word = filled.get(part[1:-1]) if part.startswith("{") else None
        if isinstance(word, Labels):
            expected += [f"{k}={x}" for k, x in word.pairs]
            assert all(not w.startswith("-") for w in word.words()), (site, word)
        else:
            parts.append(part)
    argv = [w for w in built.argv if w not in expected]
    assert len(argv) == len(parts), (site, built.argv)
    for part, word in zip(parts, argv, strict=True):
        fields = list(string.Formatter().parse(part))
        data_first = not fields[0][0] and fields[0][1] is not None
        if data_first:
            assert not word.startswith("-"), (site, word)
        intended = "".join(lit + (filled[f].render() if f else "") for lit, f, _, _ in fields)  # type: ignore[attr-defined]
        assert word == intended, (site, word, intended)
    line = built.line
    assert line is not None and "\n" not in line
    if "$'" not in line:  # ANSI-C quoting (a JSON body with controls) is for the shell, not shlex
        assert shlex.split(line) == ["kubectl", *built.argv], (site, line)


@settings(max_examples=300, deadline=None)
@given(
    kind=st.sampled_from(["pod", "namespace", "deployment", "rolebinding", "container", "kernelcache"]), value=STRINGS
)
def test_a_name_of_any_kind(kind, value):
    built = build("-n kserve describe {kind} {name}", kind=Name("resource", "pod"), name=Name(kind, value))
    if built.argv is None:
        assert shown_in(value, built.refused or "") and kind in (built.refused or "")
        return
    assert not built.argv[-1].startswith("-") and _valid_of_its_kind(Name(kind, value))
    assert shlex.split(built.line or "") == ["kubectl", "-n", "kserve", "describe", "pod", value]


def shown_in(value: str, sentence: str) -> bool:
    return v.shown(value) in sentence or not value


def test_an_option_is_refused_and_said_why():
    assert kubectl(
        "-n {ns} rollout restart deployment/{d}", ns=Namespace("team"), d=Name("deployment", "--namespace=kube-system")
    ) == (
        'no command suggested: deployment name "--namespace=kube-system" is not one Kubernetes accepts: a lowercase '
        "RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end "
        "with an alphanumeric character"
    )
    assert kubectl_or_none("describe pod {p}", p=Name("pod", "-x")) is None
    # RBAC names are path segments: a leading '-' is valid for the API server, never for a command
    assert build("get rolebinding {r}", r=Name("rolebinding", "-x")).refused == (
        'no command suggested: rolebinding name "-x" would be read as an option'
    )
    assert kubectl("get rolebinding {r}", r=Name("rolebinding", "system:x")) == "kubectl get rolebinding system:x"


def test_selectors_and_bodies():
    assert (
        kubectl("get nodes -l {s}", s=Selector.of({"role": "gpu", "a/b": ""})) == "kubectl get nodes -l role=gpu,a/b="
    )
    assert kubectl("get nodes -L {s}", s=Selector.has("zone", "role")) == "kubectl get nodes -L zone,role"
    assert kubectl("get nodes -l {s}", s=Selector.of({"role": "--all"})).startswith("no command suggested: label value")
    assert kubectl("get nodes -l {s}", s=Selector.of({})) == "no command suggested: the label selector is empty"
    body = build("patch x y -p {p}", p=Json({"a": "--namespace=kube-system"}))
    assert body.argv == ("patch", "x", "y", "-p", '{"a":"--namespace=kube-system"}')
    assert kubectl("get cm x -o jsonpath={{.data}}") == "kubectl get cm x -o 'jsonpath={.data}'"
