"""The k9s plugins of docs/user-guide.md: valid YAML of k9s's plugins.yaml shape (the JSON schema below has
the shape of k9s's internal/config/json/schemas/plugins.json: the required keys and their types, here also
refusing keys k9s does not know), scopes and shortcuts as asked, and every kcache command line in them a real
command with real flags."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import jsonschema
import yaml

from kubectl_kcache.cli import main

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "user-guide.md"

PLUGINS_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["plugins"],
    "properties": {
        "plugins": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "additionalProperties": False,
                "required": ["shortCut", "description", "scopes", "command"],
                "properties": {
                    "shortCut": {"type": "string"},
                    "override": {"type": "boolean"},
                    "description": {"type": "string"},
                    "confirm": {"type": "boolean"},
                    "dangerous": {"type": "boolean"},
                    "scopes": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                    "command": {"type": "string"},
                    "background": {"type": "boolean"},
                    "overwriteOutput": {"type": "boolean"},
                    "args": {"type": "array", "items": {"type": ["string", "number"]}},
                },
            },
        }
    },
}


def plugins() -> dict:
    text = GUIDE.read_text()
    m = re.search(r"<!-- k9s-plugins:[^\n]*-->\n```yaml\n(.*?)```", text, re.DOTALL)
    assert m, "docs/user-guide.md has no k9s plugins block"
    return yaml.safe_load(m.group(1))


def test_the_snippet_is_a_valid_k9s_plugins_file():
    doc = plugins()
    jsonschema.validate(doc, PLUGINS_SCHEMA)
    scopes = {name: p["scopes"] for name, p in doc["plugins"].items()}
    assert scopes == {
        "kcache-why-not-cached": ["pods"],
        "kcache-doctor-node": ["nodes", "kernelcachenodegroups"],
        "kcache-status": ["all"],
    }
    by_scope = {}
    for name, p in doc["plugins"].items():
        for scope in p["scopes"]:
            assert by_scope.setdefault((scope, p["shortCut"]), name) == name, "two plugins on one key in a view"


def test_each_plugin_runs_a_real_kcache_command_paged_in_colour():
    for name, p in plugins()["plugins"].items():
        assert p["command"] == "bash" and p["args"][0] == "-c" and p["background"] is False, name
        line = p["args"][1]
        kcache, pager = line.split(" | ")
        assert pager == "less -R", name
        words = shlex.split(kcache)
        assert words[:2] == ["kubectl", "kcache"] and "--color=always" in words, name
        command = main.commands[words[2]]
        known = {o for param in command.params for o in getattr(param, "opts", [])}
        flags = [w.split("=")[0] for w in words[3:] if w.startswith("-") and w != "--color=always"]
        assert set(flags) <= known, (name, set(flags) - known)
        assert "--context" in flags, f"{name}: the context k9s shows ($CONTEXT), not the kubeconfig's current one"
