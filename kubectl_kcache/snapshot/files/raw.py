"""The objects of `--from-file` input as plain data, for `dump -f`, which writes them again (anonymized with
--anonymize) as the API returned them, every field kept; the typed loader (load.py) checks the input first
and says what is wrong with it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from .layout import SNAPSHOT_KIND
from .paths import find_files, read_bytes, shown_path
from .yaml_docs import yaml_documents


def _documents(path: str) -> list[Any]:
    data = read_bytes(path)
    if data.lstrip()[:1] in (b"{", b"["):
        try:
            return [msgspec.json.decode(data)]
        except msgspec.DecodeError:
            try:  # JSON Lines
                return [msgspec.json.decode(line) for line in data.splitlines() if line.strip()]
            except msgspec.DecodeError:
                pass
    return yaml_documents(shown_path(path), data)


def raw_objects(paths: Iterable[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(every object, the meta of every dump) of the input: dumps' items, lists walked, plain documents."""
    items: list[dict[str, Any]] = []
    metas: list[dict[str, Any]] = []
    warnings: list[str] = []
    for path in find_files(paths, warnings):
        stack = list(reversed(_documents(path)))
        while stack:
            node = stack.pop()
            if isinstance(node, list):
                stack.extend(reversed(node))
            elif isinstance(node, dict) and node.get("kind") == SNAPSHOT_KIND:
                if isinstance(node.get("meta"), dict):
                    metas.append(node["meta"])
                stack.extend(reversed(node.get("items") or []))
            elif isinstance(node, dict) and str(node.get("kind", "")).endswith("List") and "items" in node:
                stack.extend(reversed(node.get("items") or []))
            elif isinstance(node, dict) and node:
                items.append(_as_dumped(node))
    return items, metas


def _as_dumped(item: dict[str, Any]) -> dict[str, Any]:
    """As `dump` writes an object: managedFields and Secret data removed."""
    out = dict(item)
    if isinstance(out.get("metadata"), dict) and "managedFields" in out["metadata"]:
        out["metadata"] = {k: v for k, v in out["metadata"].items() if k != "managedFields"}
    if out.get("kind") == "Secret":
        out.pop("data", None)
        out.pop("stringData", None)
    return out
