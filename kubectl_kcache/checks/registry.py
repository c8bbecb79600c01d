"""The catalogue of doctor checks: each check module registers its function with `@check(...)`.

The registry is the single source of the check ids, titles, default severities, the reads each check
needs (which also make up the read-only ClusterRole in docs/checks.md) and the report order.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable, Iterable, Mapping

from ..snapshot.model import ClusterSnapshot
from .model import SEVERITIES, CheckRead, CheckSpec, Code, Finding

CheckFunc = Callable[[ClusterSnapshot], Iterable[Finding]]

_REGISTRY: dict[str, CheckSpec] = {}
_CODE = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")


def check(
    id: str,
    title: str,
    severity: str,
    reads: Iterable[CheckRead] = (),
    order: int = 100,
    needs_feature: bool = False,
    codes: Mapping[str, tuple[str, str]] | None = None,
) -> Callable[[CheckFunc], CheckFunc]:
    """Register a pure check `snapshot -> findings`. Its module's docstring documents it.

    severity: the default severity of its findings (a check may report some at a lower one).
    reads: what it reads; a forbidden or not-served required read makes the runner skip the check.
    order: the position in the report. needs_feature: not applicable while the feature is disabled.
    codes: every kind of finding it reports, `code -> (default severity, what it means)`; each finding
    carries one of them.
    """
    if severity not in SEVERITIES:
        raise ValueError(f"check {id}: severity must be one of {SEVERITIES}")
    declared = tuple(Code(k, sev, summary) for k, (sev, summary) in (codes or {}).items())
    for code in declared:
        if code.severity not in SEVERITIES or not _CODE.fullmatch(code.id):
            raise ValueError(f"check {id}: code {code.id!r} needs a lowercase-dashed id and a severity")

    def register(func: CheckFunc) -> CheckFunc:
        module = sys.modules.get(func.__module__)
        doc = inspect.cleandoc(module.__doc__ or "") if module is not None else ""
        existing = _REGISTRY.get(id)
        if existing is not None and (existing.func.__module__, existing.func.__qualname__) != (
            func.__module__,
            func.__qualname__,
        ):
            raise ValueError(f"check id {id!r} is registered twice ({existing.func.__module__}, {func.__module__})")
        _REGISTRY[id] = CheckSpec(
            id=id,
            title=title,
            severity=severity,
            reads=tuple(reads),
            func=func,
            doc=doc,
            order=order,
            needs_feature=needs_feature,
            codes=declared,
        )
        return func

    return register


def all_checks() -> list[CheckSpec]:
    """Every registered check, in report order. (Importing kubectl_kcache.checks, which any import of
    this module does first, imports every check module.)"""
    return sorted(_REGISTRY.values(), key=lambda s: (s.order, s.id))


def check_ids() -> list[str]:
    return [s.id for s in all_checks()]


def get_check(id: str) -> CheckSpec:
    return _REGISTRY[id]
