"""The renderer registry, and the layering rules of report/: lazy rich and yaml, never kubernetes or click."""

from __future__ import annotations

import ast
import io
import subprocess
import sys
from pathlib import Path

import pytest

import kubectl_kcache.report as report_pkg
from kubectl_kcache.errors import InputError
from kubectl_kcache.report import formats, registry, render, render_doctor, renderer

REPORT_DIR = Path(report_pkg.__file__).parent
ALL_FORMATS = ["table", "wide", "json", "yaml", "junit", "sarif", "markdown", "html", "name"]


def test_formats_lists_every_doctor_format_with_table_first():
    assert formats() == ALL_FORMATS


def test_unknown_format_is_an_input_error_naming_the_known_ones(problem_report):
    with pytest.raises(InputError) as err:
        render_doctor(problem_report, "csv", io.StringIO(), color=False)
    assert "csv" in str(err.value) and "table" in str(err.value) and "sarif" in str(err.value)


def test_a_name_is_registered_once(monkeypatch):
    monkeypatch.setitem(registry._REGISTRY, "test-kind", {})

    @renderer("x", kind="test-kind")
    def first(report, out, *, color):
        out.write("first")

    renderer("x", kind="test-kind")(first)  # the same function again is harmless (re-import)
    with pytest.raises(ValueError, match="already registered"):

        @renderer("x", kind="test-kind")
        def second(report, out, *, color):
            pass


def test_other_report_kinds_have_their_own_formats(monkeypatch):
    monkeypatch.setitem(registry._REGISTRY, "test-plan", {})
    seen = []

    @renderer("table", kind="test-plan", order=0)
    def plan_table(report, out, *, color):
        seen.append((report, color))
        out.write("plan\n")

    out = io.StringIO()
    render("test-plan", "PLAN", "table", out, color=True)
    assert out.getvalue() == "plan\n" and seen == [("PLAN", True)]
    assert formats("test-plan") == ["table"]
    assert formats() == ALL_FORMATS


def test_context_goes_only_to_renderers_that_want_it(monkeypatch):
    monkeypatch.setitem(registry._REGISTRY, "test-ctx", {})
    seen = []

    @renderer("page", kind="test-ctx", wants=("status",))
    def page(report, out, *, color, status=None):
        seen.append(("page", status))

    @renderer("plain", kind="test-ctx")
    def plain(report, out, *, color):  # would raise TypeError if given `status`
        seen.append(("plain", None))

    render("test-ctx", "R", "page", io.StringIO(), status="S", provenance="P")
    render("test-ctx", "R", "plain", io.StringIO(), status="S", provenance="P")
    assert seen == [("page", "S"), ("plain", None)]
    assert registry.wants("page", "test-ctx") == ("status",) and registry.wants("plain", "test-ctx") == ()
    with pytest.raises(InputError):
        registry.wants("nope", "test-ctx")


@pytest.mark.parametrize("fmt", ALL_FORMATS)
@pytest.mark.parametrize("which", ["problem_report", "clean_report", "skipped_only_report", "suppressed_only_report"])
@pytest.mark.parametrize("color", [False, True])
def test_every_format_renders_every_report(fmt, which, color, request):
    out = io.StringIO()
    render_doctor(request.getfixturevalue(which), fmt, out, color=color)
    if fmt == "name" and which != "problem_report":  # no unsuppressed finding: no object to name
        assert out.getvalue() == ""
        return
    assert out.getvalue().endswith("\n") and len(out.getvalue()) > 1


@pytest.mark.parametrize("fmt", ["json", "yaml", "junit", "sarif", "markdown"])
def test_machine_and_ticket_formats_ignore_color(fmt, problem_report):
    plain, colored = io.StringIO(), io.StringIO()
    render_doctor(problem_report, fmt, plain, color=False)
    render_doctor(problem_report, fmt, colored, color=True)
    assert plain.getvalue() == colored.getvalue()
    assert "\x1b[" not in plain.getvalue()


def test_importing_report_imports_no_rich_yaml_kubernetes_or_click():
    code = (
        "import sys, kubectl_kcache.report as r; r.formats(); "
        "print(sorted(m for m in ('rich', 'yaml', 'kubernetes', 'click') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def _imports(tree: ast.AST) -> list[tuple[str, bool]]:
    """(top-level module name, imported at module level?) for every import in `tree`."""
    found = []
    module_level = {id(node) for node in tree.body} if isinstance(tree, ast.Module) else set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name.split(".")[0], id(node) in module_level) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module.split(".")[0], id(node) in module_level))
    return found


@pytest.mark.parametrize(
    "path",
    sorted(REPORT_DIR.glob("doctor_*.py")) + [REPORT_DIR / "registry.py", REPORT_DIR / "__init__.py"],
    ids=lambda p: p.name,
)
def test_report_modules_keep_their_layer(path):
    imports = _imports(ast.parse(path.read_text(encoding="utf-8")))
    assert not [name for name, _ in imports if name in ("kubernetes", "click")]
    assert not [name for name, top in imports if top and name in ("rich", "yaml")], "import rich/yaml lazily"


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("doctor", "doctor"),
        ("status", "status"),
        ("why-group", "why-group"),
        ("reconcile", "plan"),
    ],
)
def test_every_commands_output_choices_are_its_registered_formats(command, kind):
    from kubectl_kcache.cli import main

    option = next(p for p in main.commands[command].params if p.name == "output")
    assert list(option.type.choices) == formats(kind)
    assert option.default == formats(kind)[0]


def test_why_not_cached_offers_one_pods_formats_then_the_fleets_own():
    from kubectl_kcache.cli import main

    option = next(p for p in main.commands["why-not-cached"].params if p.name == "output")
    assert list(option.type.choices) == [*formats("why-not-cached"), "html"]
    assert option.default == "tree"


def test_why_not_cached_of_many_pods_also_has_a_page():
    assert formats("why-not-cached") == ["tree", "wide", "json", "yaml"]
    assert formats("hit-rate") == [*formats("why-not-cached"), "html"]  # a page of many pods
    assert formats("plan") == ["table", "json", "yaml", "name"]
