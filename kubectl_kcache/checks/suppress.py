"""Suppressing known findings: a file of rules, and an annotation on the objects themselves.

File (YAML or JSON), every field but `check` optional; `name`, `namespace` and `group` take fnmatch globs;
`code` narrows the rule to one kind of finding of the check (docs/checks.md lists them):

    suppress:
      - check: group-taints
        code: prefer-no-schedule
        object: {kind: Node, name: "gpu-*"}
        reason: GPU nodes are drained by the vendor operator on purpose

Annotation on the finding's object: `kcache.kserve.io/suppress: "group-taints/prefer-no-schedule,nodes"`
(comma-separated check ids, or `check/code` for one kind of finding; `*` for every check). Suppressed
findings stay in the report, marked suppressed, and do not count towards the exit code.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from fnmatch import fnmatchcase
from functools import partial
from typing import Any

import msgspec

from ..errors import InputError
from ..snapshot import kinds
from ..snapshot.model import ClusterSnapshot
from ..text import json_type
from .model import Finding

ANNOTATION = "kcache.kserve.io/suppress"
_ENTRY_KEYS = {"check", "code", "object", "group", "reason"}
_OBJECT_KEYS = {"kind", "name", "namespace"}


class Suppression(msgspec.Struct, frozen=True):
    check: str
    code: str = ""
    kind: str = ""
    name: str = ""
    namespace: str = ""
    group: str = ""
    reason: str = ""

    def matches(self, finding: Finding) -> bool:
        """Every field given matches (names, namespace and group as globs)."""
        obj = finding.object
        return (
            finding.check == self.check
            and (not self.code or finding.code == self.code)
            and (not self.kind or self.kind.lower() == obj.kind.lower())
            and (not self.name or fnmatchcase(obj.name, self.name))
            and (not self.namespace or fnmatchcase(obj.namespace or "", self.namespace))
            and (not self.group or fnmatchcase(finding.group or "", self.group))
        )

    def describe(self) -> str:
        return f"suppressed by file: {self.reason}" if self.reason else "suppressed by file"


def _text(value: Any, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InputError(f"{where} must be a string, got {json_type(value)}")
    return value


def parse_suppressions(doc: Any, origin: str = "suppressions") -> tuple[Suppression, ...]:
    """Rules from a parsed document; a clear InputError naming `origin` when malformed."""
    if doc is None:
        return ()
    if not isinstance(doc, Mapping):
        raise InputError(f"{origin}: expected an object with a 'suppress' list, got {json_type(doc)}")
    unknown = sorted(set(doc) - {"suppress"})
    if unknown:
        raise InputError(f"{origin}: unknown key {unknown[0]!r} (expected 'suppress')")
    entries = doc.get("suppress")
    if entries is None:
        return ()
    if not isinstance(entries, list):
        raise InputError(f"{origin}: 'suppress' must be a list, got {json_type(entries)}")
    from .registry import check_ids, get_check

    valid = check_ids()
    out = []
    for i, entry in enumerate(entries):
        where = f"{origin}: suppress[{i}]"
        if not isinstance(entry, Mapping):
            raise InputError(f"{where} must be an object, got {json_type(entry)}")
        extra = sorted(set(entry) - _ENTRY_KEYS)
        if extra:
            raise InputError(f"{where}: unknown key {extra[0]!r} (expected {', '.join(sorted(_ENTRY_KEYS))})")
        check = _text(entry.get("check"), f"{where}.check")
        if not check:
            raise InputError(f"{where}: 'check' is required")
        if check not in valid:
            raise InputError(f"{where}: unknown check {check!r}; valid ids: {', '.join(valid)}")
        code = _text(entry.get("code"), f"{where}.code")
        codes = [c.id for c in get_check(check).codes]
        if code and code not in codes:
            raise InputError(f"{where}: check {check} has no code {code!r}; its codes: {', '.join(codes)}")
        obj = entry.get("object") or {}
        if not isinstance(obj, Mapping):
            raise InputError(f"{where}.object must be an object, got {json_type(obj)}")
        extra = sorted(set(obj) - _OBJECT_KEYS)
        if extra:
            raise InputError(f"{where}.object: unknown key {extra[0]!r} (expected kind, name, namespace)")
        out.append(
            Suppression(
                check=check,
                code=code,
                kind=_text(obj.get("kind"), f"{where}.object.kind"),
                name=_text(obj.get("name"), f"{where}.object.name"),
                namespace=_text(obj.get("namespace"), f"{where}.object.namespace"),
                group=_text(entry.get("group"), f"{where}.group"),
                reason=_text(entry.get("reason"), f"{where}.reason"),
            )
        )
    return tuple(out)


def load_suppressions(path: str) -> tuple[Suppression, ...]:
    """Rules from a YAML or JSON file."""
    from ..snapshot.files.paths import read_bytes  # bounded (a device or a pipe never fills memory), BOM-aware as -f is

    if not path:
        raise InputError("--config: an empty path")
    try:
        data = read_bytes(path)
    except InputError as exc:
        raise InputError(f"cannot read suppressions: {exc}") from None
    from ..snapshot.files.yaml_docs import yaml_documents  # within the input limits, as -f is

    docs = yaml_documents(path, data)
    if len(docs) > 1:
        raise InputError(f"{path}: {len(docs)} YAML documents: give one, with the suppress list")
    doc = docs[0] if docs else None
    return parse_suppressions(doc, path)


def _known_ids() -> set[str]:
    from .registry import all_checks

    out = {"*"}
    for spec in all_checks():
        out.add(spec.id)
        out.update(f"{spec.id}/{code.id}" for code in spec.codes)
    return out


def _annotated(objects: Iterable[Any]) -> list[tuple[Any, str]]:
    """The objects with the suppress annotation, and its value."""
    return [(obj, value) for obj in objects if (value := obj.meta.annotations.get(ANNOTATION))]


class AnnotationIndex:
    """The suppress annotation of every object in a snapshot, by (kind, namespace, name)."""

    def __init__(self, snapshot: ClusterSnapshot):
        self.by_object: dict[tuple[str, str, str], frozenset[str]] = {}
        self.unknown: list[str] = []  # objects whose annotation names ids no check has, said as warnings
        known: set[str] | None = None
        seen_fields = set()
        for k in kinds.KINDS:
            kind, field_name = k.kind, k.field
            if field_name in seen_fields:
                continue
            seen_fields.add(field_name)
            # the objects with the annotation, kept while the field holds the same objects (the monitor)
            annotated = snapshot.derived(
                f"suppress-annotated/{field_name}", partial(_annotated, getattr(snapshot, field_name)), on=(field_name,)
            )
            for obj, value in annotated:
                ids = frozenset(x.strip() for x in value.replace(";", ",").split(",") if x.strip())
                self.by_object[(kind.lower(), obj.meta.namespace or "", obj.meta.name)] = ids
                known = known if known is not None else _known_ids()
                bad = sorted(ids - known)
                if bad:
                    where = f"{obj.meta.namespace}/{obj.meta.name}" if obj.meta.namespace else obj.meta.name
                    self.unknown.append(
                        f"{kind} {where}: annotation {ANNOTATION} names "
                        f"{', '.join(bad)}, which no check has (it suppresses nothing for "
                        "them; give check ids or check/code)"
                    )

    def suppresses(self, finding: Finding) -> bool:
        ids = self.by_object.get((finding.object.kind.lower(), finding.object.namespace or "", finding.object.name))
        if not ids:
            return False
        return finding.check in ids or finding.full_code in ids or "*" in ids


def apply(
    findings: Iterable[Finding],
    snapshot: ClusterSnapshot,
    rules: Iterable[Suppression] = (),
    index: AnnotationIndex | None = None,
) -> list[Finding]:
    """The findings with `suppressed` set where a rule or an object's annotation says so."""
    rules = list(rules)
    index = index if index is not None else AnnotationIndex(snapshot)
    out = []
    for f in findings:
        rule = next((r for r in rules if r.matches(f)), None)
        if rule is not None:
            f = replace(f, suppressed=True, suppressed_by=rule.describe())
        elif index.suppresses(f):
            f = replace(f, suppressed=True, suppressed_by=f"suppressed by annotation {ANNOTATION}")
        out.append(f)
    return out
