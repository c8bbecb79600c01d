"""`kubectl kcache explain CODE`: what a doctor finding code (or a whole check) means, from the same registry
docs/checks.md is generated from: the meaning and severity, what the check reads, what KServe does and what
to do (the check's documentation), and where the catalogue says it. Wrapped at spaces at the terminal's width.
"""

from __future__ import annotations

from ..checks.model import CheckSpec, Code
from ..checks.registry import all_checks
from ..errors import InputError
from . import layout

CATALOGUE = "docs/checks.md"


def find_code(text: str) -> tuple[CheckSpec, Code | None]:
    """The check and code `text` names (`check/code`, or `check` for the whole check); InputError otherwise."""
    check_id, _, code_id = text.strip().partition("/")
    specs = {s.id: s for s in all_checks()}
    spec = specs.get(check_id)
    if spec is None:
        raise InputError(
            f"explain: unknown code {text!r}: a code is check/code, e.g. kcn-missing/missing; "
            f"the checks: {', '.join(specs)} (see {CATALOGUE})"
        )
    if not code_id:
        return spec, None
    code = spec.code(code_id)
    if code is None:
        raise InputError(
            f"explain: unknown code {text!r}; the codes of {check_id}: "
            f"{', '.join(f'{check_id}/{x.id}' for x in spec.codes)}"
        )
    return spec, code


def explain_text(text: str, width: int | None, *, color: bool = False) -> str:
    spec, code = find_code(text)
    head = f"{spec.id}/{code.id}" if code else spec.id
    out: list[str] = []

    def para(body: str, indent: int = 0, first: str = "") -> None:
        lines = layout.wrap(body, width, first_indent=len(first), indent=indent)
        out.append(first + lines[0])
        out.extend(lines[1:])

    if code:
        out.append(
            f"{layout.paint(code.severity, layout.SEVERITY_STYLES.get(code.severity, 'bold'), color)}"
            f"[{layout.paint(head, 'bold', color)}]: {code.summary}"
        )
        para(f"check {spec.id}: {spec.title}", indent=4)
    else:
        out.append(f"{layout.paint(head, 'bold', color)}: {spec.title}")
        para(f"default severity {spec.severity}", indent=4)
        for c in spec.codes:
            para(f"{c.summary} ({c.severity})", indent=len(spec.id) + len(c.id) + 4, first=f"  {spec.id}/{c.id}: ")
    applies = "only while the feature is enabled and its configuration valid" if spec.needs_feature else "always"
    para(f"applies: {applies}", indent=4)
    para("reads: " + ", ".join(str(r) + (" (optional)" if r.optional else "") for r in spec.reads), indent=4)
    for block in _paragraphs(spec.doc):
        bullet = block[:2] if block[:2] in ("* ", "- ") else ""
        if not bullet or not out[-1].startswith(("* ", "- ")):
            out.append("")
        para(block[len(bullet) :], indent=len(bullet), first=bullet)
    out.append("")
    para(f"See {CATALOGUE}#{head}; run only this with:")
    out.append(f"  kubectl kcache doctor --only {head}")
    return "\n".join(out) + "\n"


def _paragraphs(doc: str) -> list[str]:
    """The doc's paragraphs and list items, each joined on one line."""
    blocks: list[str] = []
    current: list[str] = []
    for line in doc.splitlines():
        stripped = line.strip()
        if not stripped or stripped[:2] in ("* ", "- "):
            if current:
                blocks.append(" ".join(current))
            current = [stripped] if stripped else []
            continue
        current.append(stripped)
    if current:
        blocks.append(" ".join(current))
    return blocks
