"""One YAML writer: every command's `-o yaml` is its `-o json` document, with each string whole on its line
(a hint or a reason is copied whole: no folding at 80 columns, as `reconcile -o yaml` once did)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from kubectl_kcache.cli import run

ROOT = Path(__file__).resolve().parents[2]
BROKEN = str(ROOT / "examples" / "broken-cluster.yaml")

COMMANDS = [
    ["doctor", "-f", BROKEN],
    ["status", "-f", BROKEN],
    ["reconcile", "--dry-run", "-f", BROKEN],
    ["why-not-cached", "-A", "-f", BROKEN],
]


def scalars(node: yaml.Node) -> Iterator[yaml.ScalarNode]:
    if isinstance(node, yaml.ScalarNode):
        yield node
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from scalars(item)
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield from scalars(key)
            yield from scalars(value)


def output(capsys, argv: list[str]) -> str:
    capsys.readouterr()
    run(argv)
    return capsys.readouterr().out


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: a[0])
def test_yaml_is_the_json_document_with_long_strings_on_one_line(capsys, argv):
    as_json = json.loads(output(capsys, [*argv, "-o", "json"]))
    text = output(capsys, [*argv, "-o", "yaml"])
    doc = yaml.safe_load(text)
    doc.get("source", {}).pop("generatedAt", None)
    as_json.get("source", {}).pop("generatedAt", None)
    assert doc == as_json
    long = [n for n in scalars(yaml.compose(text)) if len(n.value) > 80 and "\n" not in n.value]
    assert long, "the document has no long string to test with"
    for node in long:
        assert node.start_mark.line == node.end_mark.line, f"folded: {node.value!r}"
