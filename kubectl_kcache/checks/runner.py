"""Run the doctor's checks over a snapshot and assemble the report.

For each selected check, in report order:
1. a required read that was forbidden -> `skipped` ("forbidden: list kernelcachenodes"); one whose
   resource is not served -> `skipped` ("kernelcachenodes is not served (CRD not installed)"); one that
   was never made (a dump taken with a narrower scope) -> `skipped` ("not read: ...");
2. a check of the feature while the feature is disabled, or its configuration is missing or invalid
   -> `not-applicable`; the `config` check says why, once, as a finding;
3. otherwise the check runs: `NotApplicable`/`Skip` raised by it give those statuses; findings are
   matched against the suppressions; `fail` when an unsuppressed error or warning remains, else `pass`.
   Optional reads that were not possible are named in the reason ("partial: ...").

Findings are ordered by check, with `control-plane` first: a controller or webhook that is down blocks
pod creation for every kernel cache-enabled InferenceService and explains many other findings. Within
a check the check's own (deterministic) order is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from ..errors import InputError
from ..kernelcache import constants as c
from ..snapshot import plan as readplan
from ..snapshot.model import ClusterSnapshot
from ..snapshot.reads import ABSENT, Unread, unusable
from . import suppress
from .common import checks_running, facts, resolved
from .model import CheckRead, CheckResult, CheckSpec, DoctorReport, Finding, NotApplicable, Skip
from .registry import all_checks

FIRST = "control-plane"
KERNEL_CACHE_PLURALS = (c.PLURAL_NODE_GROUPS, c.PLURAL_NODES, c.PLURAL_CACHES, c.PLURAL_CAPTURES)


def validate_ids(ids: Iterable[str], flag: str = "--only") -> list[str]:
    """`ids` (check ids, or `check/code` for one kind of finding), each known, else InputError."""
    specs = {s.id: s for s in all_checks()}
    ids = list(ids)
    unknown = [i for i in ids if i.partition("/")[0] not in specs]
    if unknown:
        raise InputError(
            f"{flag}: unknown check id {', '.join(repr(u) for u in unknown)}; valid ids: {', '.join(specs)}"
        )
    codes = [i for i in ids if "/" in i and specs[i.partition("/")[0]].code(i.partition("/")[2]) is None]
    if codes:
        check = codes[0].partition("/")[0]
        raise InputError(
            f"{flag}: unknown finding code {', '.join(repr(u) for u in codes)}; the codes of {check}: "
            f"{', '.join(f'{check}/{x.id}' for x in specs[check].codes)}"
        )
    return ids


def _code_filter(only: Sequence[str], skip: Sequence[str]) -> Callable[[Finding], bool]:
    """Whether a finding is kept by `--only check/code` and `--skip check/code` (a bare check id in --only
    keeps every code of it)."""
    whole = {i for i in only if "/" not in i}
    only_codes = {i for i in only if "/" in i}
    limited = {i.partition("/")[0] for i in only_codes} - whole
    skip_codes = {i for i in skip if "/" in i}

    def keep(f: Finding) -> bool:
        if f.full_code in skip_codes:
            return False
        return f.check not in limited or f.full_code in only_codes

    return keep


def selected_checks(only: Sequence[str], skip: Sequence[str]) -> list[CheckSpec]:
    """The checks `--only` and `--skip` leave to run, in report order."""
    only_checks = {i.partition("/")[0] for i in only}
    skip_checks = {i for i in skip if "/" not in i}
    return [s for s in all_checks() if (not only or s.id in only_checks) and s.id not in skip_checks]


def read_problems(read: CheckRead, snapshot: ClusterSnapshot) -> tuple[str, tuple[Unread, ...]] | None:
    """Why `read` is not usable ('forbidden: list pods in kserve'), and the lists that leave the answer
    incomplete (forbidden, failed, not in the input, not read; none when the resource is not served, a
    fact); None when it was made."""
    found = [u for u in (unusable(snapshot, resolved(snapshot, s)) for s in read.lists) if u is not None]
    if not found:
        return None
    first = found[0]
    if first.read.status == ABSENT:
        if read.resource in KERNEL_CACHE_PLURALS:
            return f"{read.resource} is not served (CRD not installed)", ()
        return f"{read.resource} is not served by the API server", ()
    missing = tuple(u for u in found if u.read.status != ABSENT)
    return str(first), missing


def run_check(spec: CheckSpec, snapshot: ClusterSnapshot) -> tuple[CheckResult, list[Finding]]:
    """One check's status and (unsuppressed) findings."""
    feature = facts(snapshot).feature
    # the feature off, or its configuration absent (read, and not there): nothing to check, and the reads that
    # depend on the configuration (the job namespace's lists) were rightly not made
    why = feature.not_applicable() if spec.needs_feature else ""
    if why:
        return CheckResult(spec.id, "not-applicable", why), []
    for read in spec.reads:
        if read.optional:
            continue
        problem = read_problems(read, snapshot)
        if problem:
            text, missing = problem
            return CheckResult(spec.id, "skipped", text, missing), []
    notes = []
    unread: list[Unread] = []
    if spec.needs_feature and feature.assumption():
        notes.append(feature.assumption())
        config_read = unusable(snapshot, readplan.CONFIGMAP)
        if config_read is not None and config_read.read.status != ABSENT:
            unread.append(config_read)
    for read in spec.reads:
        if read.optional:
            problem = read_problems(read, snapshot)
            if problem:
                text, missing = problem
                notes.append(f"partial: {text}" + (f" ({read.note})" if read.note else ""))
                unread.extend(missing)
    try:
        findings = list(spec.func(snapshot))
    except NotApplicable as exc:
        return CheckResult(spec.id, "not-applicable", str(exc), tuple(unread)), []
    except Skip as exc:
        return CheckResult(spec.id, "skipped", str(exc), tuple(unread)), []
    except Exception as exc:  # a bug: say which check
        if hasattr(exc, "add_note"):
            exc.add_note(f"(in doctor check {spec.id})")
        raise
    for finding in findings:
        if spec.code(finding.code) is None:  # a bug: every kind of finding is declared and documented
            raise ValueError(f"doctor check {spec.id} reported an undeclared code {finding.code!r}")
    return CheckResult(spec.id, "pass", "; ".join(notes), tuple(unread)), findings


def run_doctor(
    snapshot: ClusterSnapshot,
    only: Sequence[str] = (),
    skip: Sequence[str] = (),
    suppressions: Iterable[suppress.Suppression] | None = None,
    use_suppressions: bool = True,
    early: Mapping[str, tuple[CheckResult, list[Finding]]] | None = None,
) -> DoctorReport:
    """The report; `early` holds checks already run while the last lists arrived (`early.EarlyChecks`)."""
    with checks_running():
        return _run_doctor(snapshot, only, skip, suppressions, use_suppressions, early or {})


def _run_doctor(
    snapshot: ClusterSnapshot,
    only: Sequence[str],
    skip: Sequence[str],
    suppressions: Iterable[suppress.Suppression] | None,
    use_suppressions: bool,
    early: Mapping[str, tuple[CheckResult, list[Finding]]],
) -> DoctorReport:
    only = validate_ids(only, "--only")
    skip = validate_ids(skip, "--skip")
    both = sorted(set(only) & set(skip))
    if both:
        raise InputError(
            f"--only and --skip both name {', '.join(both)}: that would run nothing for them; "
            "give each check to one of them"
        )
    keep = _code_filter(only, skip)
    specs = selected_checks(only, skip)
    if not specs:
        raise InputError("--skip names every check: nothing would run (a report of no check is no answer)")
    rules = list(suppressions or ()) if use_suppressions else []
    index = suppress.AnnotationIndex(snapshot) if use_suppressions else None
    results: list[CheckResult] = []
    by_check: dict[str, list[Finding]] = {}
    for spec in specs:
        result, findings = early[spec.id] if spec.id in early else run_check(spec, snapshot)
        findings = [f for f in findings if keep(f)]
        if use_suppressions:
            findings = suppress.apply(findings, snapshot, rules, index)
        if result.status == "pass":
            active = [f for f in findings if not f.suppressed]
            failing = any(f.severity in ("error", "warning") for f in active)
            reason = result.reason
            quiet = len(findings) - len(active)
            if quiet:
                reason = "; ".join(x for x in (reason, f"{quiet} finding{'s' if quiet > 1 else ''} suppressed") if x)
            result = CheckResult(spec.id, "fail" if failing else "pass", reason, result.missing)
        results.append(result)
        by_check[spec.id] = findings
    order = [s.id for s in specs]
    order.sort(key=lambda i: i != FIRST)  # stable: control-plane first, the rest in report order
    ordered = [f for i in order for f in by_check[i]]
    return DoctorReport(
        checks=tuple(results),
        findings=tuple(ordered),
        object_count=snapshot.object_count(),
        cluster=snapshot.meta.cluster,
        source=snapshot.meta.source,
        titles={s.id: s.title for s in specs},
        judged_time="now" in vars(facts(snapshot)),
        warnings=tuple(index.unknown) if index is not None else (),
    )
