"""`html`: the doctor's report as one self-contained page to share during an incident.

One file, nothing fetched: the style sheet is inline, a Content-Security-Policy forbids every load but
inline styles and the one inline script (it opens every collapsed list before printing, so that a printed
report holds every object). The page shows where the data came from and when, the summary, the checks,
the fleet's status as a heatmap (`kubectl kcache status`'s counts: per node group its members, and per
KernelCache and group the share of the group's Ready members whose entry is Ready, split by phase, as KServe
counts them; each cell links to a line for its KernelCache below the map: KServe's state and the
`kubectl kcache why-not-ready` command that explains it node by node), then the findings by
check, each with its code, object, evidence and the next command. Findings of one cause that hit many
objects are one entry with the count, a sample and the command that lists them all, and the objects in a
collapsible list. Suppressed findings are listed last, collapsed.

Every name and value from the cluster or a file is HTML-escaped, after control and bidi characters are
made visible (`text.escape`). The layout reads on a phone (under 600 px one column, every table row a card:
its name, then its numbers, then the long values such as a selector or a command; CSS only) and on paper
(print style: no shadows, no page-wide backgrounds, sections kept whole where they fit). `document`, `header`
and `serving_pods_section` make the hit rate's page too (`hit_rate_page`).
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, TextIO

from .. import __version__
from ..kernelcache.constants import CACHE_ERROR
from ..provenance import LIVE
from ..text import escape
from . import hit_rate_table
from .doctor_common import (
    SEVERITY_RANK,
    CheckGroup,
    FindingGroup,
    check_groups,
    clean_line,
    finding_groups,
    is_clean,
    object_path,
    plural,
    summary_line,
    without_shared,
    write_text,
)
from .registry import renderer
from .status_common import (
    ERROR,
    NO_ENTRY,
    PENDING,
    PULLING,
    READY,
    SEGMENTS,
    cell_counts,
    cells_by_cache,
    problems_first,
    selector_text,
    totals_line,
)

if TYPE_CHECKING:
    from ..checks.model import DoctorReport, Finding
    from ..explain.fleet import FleetHitRate
    from ..explain.status import CacheCell, FleetStatus, GroupStatus
    from ..provenance import Provenance

STATUS_WORDS = {"pass": "pass", "fail": "fail", "skipped": "skipped", "not-applicable": "n/a"}
SEGMENT_CLASSES = {READY: "ready", PULLING: "pulling", PENDING: "pending", ERROR: "error", NO_ENTRY: "none"}
MATRIX_GROUPS = 8  # more groups with caches than this: one row per KernelCache and group instead of a matrix
CATALOGUE_URL = "https://github.com/kserve/kubectl-kcache/blob/main/docs/checks.md"
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"


def e(value: Any) -> str:
    """A value from the cluster, safe in HTML text and attributes."""
    return html.escape(escape(str(value)), quote=True)


@renderer("html", order=50, wants=("status", "provenance", "run", "fleet"))
def render_html(
    report: DoctorReport,
    out: TextIO,
    *,
    color: bool = False,
    status: FleetStatus | str | None = None,
    provenance: Provenance | None = None,
    run: dict[str, str] | None = None,
    fleet: FleetHitRate | str | None = None,
) -> None:
    write_text(out, page(report, status, provenance, run, fleet))


def page(
    report: DoctorReport,
    status: FleetStatus | str | None,
    provenance: Provenance | None,
    run: dict[str, str] | None = None,
    fleet: FleetHitRate | str | None = None,
) -> str:
    """`run`: what the page says about how it was made: `kubernetes` (the API server's version), `context`
    (the kubeconfig context), `command` (the exact command line). `fleet`: the serving pods' hit rate."""
    checks = worst_first(check_groups(report))
    cluster = (provenance.cluster if provenance else "") or report.cluster
    body = [
        header("Kernel Cache doctor", cluster, provenance, run or {}, source=report.source),
        _summary(report, checks),
        _fleet(status),
        serving_pods_section(fleet),
        _findings(checks, notes := _notes_of(checks)),
        _checks(checks),
        _suppressed(checks, notes),
    ]
    return document("Kernel Cache doctor", cluster, body, "kubectl kcache doctor -o html")


def document(heading: str, cluster: str, body: Iterable[str], made_by: str) -> str:
    """A whole self-contained page (this module's style sheet, print script and CSP) around `body`'s
    sections; `made_by` is the command the footer names."""
    title = heading + (f": {cluster}" if cluster else "")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta name="generator" content="kubectl-kcache {e(__version__)}">',
        f"<title>{e(title)}</title>",
        f"<style>{STYLE}</style>",
        "</head><body><main>",
        *body,
        f"<footer>kubectl-kcache {e(__version__)} · <code>{e(made_by)}</code></footer>",
        "</main>",
        f"<script>{SCRIPT}</script>",
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


# ---- header and summary -----------------------------------------------------------------------------


def worst_first(checks: list[CheckGroup]) -> list[CheckGroup]:
    """Checks with errors first, then warnings, then infos, then the rest (each in report order)."""
    return sorted(checks, key=lambda c: SEVERITY_ORDER.get(_worst(c), 3) if c.active else 3)


def header(
    heading: str,
    cluster: str,
    provenance: Provenance | None,
    run: dict[str, str],
    *,
    source: str = "",
    scope: str = "",
) -> str:
    """Where the page's data came from and how the page was made. `source`: said when there is no
    provenance; `scope`: what the command narrowed its answer to beyond the namespace, in words."""
    rows: list[tuple[str, str]] = [("cluster", e(cluster) if cluster else "<em>not recorded</em>")]
    rows.append(("Kubernetes", e(run["kubernetes"]) if run.get("kubernetes") else "<em>not recorded</em>"))
    if run.get("context"):
        rows.append(("context", e(run["context"])))
    if provenance is not None:
        if provenance.source == LIVE:
            rows.append(("API server", f"<code>{e(provenance.server)}</code>"))
        else:
            rows.append(("input files", ", ".join(f"<code>{e(f)}</code>" for f in provenance.files)))
        rows.append(("data read", e(provenance.taken_at) if provenance.taken_at else "<em>not recorded</em>"))
        rows.append(("report made", e(provenance.generated_at)))
        where = f"namespace {e(provenance.namespace)}" if provenance.namespace else "all namespaces"
        rows.append(("scope", where + (f", {e(scope)}" if scope else "")))
        rows.append(("tool", f"kubectl-kcache {e(provenance.tool_version)}"))
    else:
        rows.append(("source", e(source)))
    if run.get("command"):
        rows.append(("command", f"<code>{e(run['command'])}</code>"))
    meta = "".join(f"<div><dt>{k}</dt><dd>{v}</dd></div>" for k, v in rows)
    return f'<header><h1>{e(heading)}</h1><dl class="meta">{meta}</dl></header>'


def _summary(report: DoctorReport, checks: list[CheckGroup]) -> str:
    s = report.summary()
    verdict = clean_line(report) if is_clean(report) else summary_line(report)
    level = "error" if s["errors"] else "warning" if s["warnings"] else "incomplete" if s["incomplete"] else "ok"
    if report.incomplete:  # no verdict on data not read: the page says so before anything else
        unread = sorted({u for c in report.checks for u in c.unread})
        verdict = (
            f"incomplete: no verdict. {plural(s['incomplete'], 'check')} could not read: {'; '.join(unread)}. {verdict}"
        )
        level = "incomplete"
    tiles = [
        (s["errors"], "error", "errors"),
        (s["warnings"], "warning", "warnings"),
        (s["infos"], "info", "infos"),
        (s["checks"], "neutral", "checks"),
        (s["skipped"], "skipped", "skipped"),
        (s["suppressed"], "neutral", "suppressed"),
    ]
    cells = "".join(
        f'<div class="tile {cls}{" zero" if not n else ""}"><b>{n}</b><span>{word}</span></div>'
        for n, cls, word in tiles
    )
    failing = worst_first([c for c in checks if c.active])
    links = "".join(
        f'<a class="chip {e(_worst(c))}" href="#check-{e(c.id)}">{e(c.id)} <b>{len(c.active)}</b></a>' for c in failing
    )
    skipped = [c for c in checks if c.status == "skipped"]
    links += "".join(f'<a class="chip skipped" href="#checks">{e(c.id)} skipped</a>' for c in skipped)
    chips = f'<p class="chips">{links}</p>' if links else ""
    return (
        f'<section id="summary"><p class="verdict {level}">{e(verdict)}</p>'
        f'<div class="tiles">{cells}</div>{chips}'
        f'<p class="muted">{report.object_count} objects read · <a href="#checks">all checks</a></p></section>'
    )


def _worst(check: CheckGroup) -> str:
    return max((f.severity for f in check.active), key=lambda sev: SEVERITY_RANK.get(sev, 0), default="info")


def _checks(checks: list[CheckGroup]) -> str:
    rows = []
    for c in checks:
        found = str(len(c.active)) + (
            f" <span class=muted>+{len(c.suppressed)} suppressed</span>" if c.suppressed else ""
        )
        link = f'<a href="#check-{e(c.id)}">{e(c.id)}</a>' if c.active else e(c.id)
        rows.append(
            f'<tr class="st-{e(c.status)}"><td class=st><span class="badge st-{e(c.status)}">'
            f"{STATUS_WORDS.get(c.status, e(c.status))}</span></td><td class=id><code>{link}</code></td>"
            f"<td>{e(c.title)}</td><td class=num data-label=findings>{found}</td>"
            f"<td class=reason>{e(c.reason)}</td></tr>"
        )
    return (
        '<section id="checks"><h2>All checks</h2><div class="scroll"><table class="checks cards"><thead><tr>'
        "<th>status</th><th>check</th><th>what it checks</th><th>findings</th><th>reason</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div></section>"
    )


# ---- the fleet ----------------------------------------------------------------------------------------


def _fleet(status: FleetStatus | str | None) -> str:
    head = '<section id="fleet"><h2>Fleet status</h2>'
    if status is None:
        return ""
    if isinstance(status, str):
        return f'{head}<p class="warning-text">Not shown: {e(status)}</p></section>'
    if not status.groups:
        return f"{head}<p>No KernelCacheNodeGroups.</p></section>"
    totals = f'<p class="totals"><b>{e(totals_line(status))}</b></p>'
    return head + totals + _groups_table(status) + _heatmap(status) + _unassigned(status) + "</section>"


def _groups_table(status: FleetStatus) -> str:
    rows = []
    for g in problems_first(status.groups):
        agents = "bad" if g.agent_ready < g.agent_desired else ""
        rows.append(
            f"<tr><th scope=row>{e(g.name)}</th><td data-label=selector><code>{_selector(g.selector)}</code></td>"
            f"<td class=num data-label=members>{g.members}</td><td class=num data-label=Ready>{g.ready}</td>"
            f"<td class='num{' warn' if g.not_ready else ''}' data-label=NotReady>{g.not_ready}</td>"
            f"<td class='num{' warn' if g.cordoned else ''}' data-label=cordoned>{g.cordoned}</td>"
            f"<td class=num data-label=KCN>{g.kernel_cache_nodes}</td>"
            f"<td class='num{' bad' if g.kernel_cache_nodes_missing else ''}' data-label='KCN missing'>"
            f"{g.kernel_cache_nodes_missing}</td>"
            f"<td class='num {agents}' data-label=agents>{g.agent_ready}/{g.agent_desired}</td>"
            f"<td class=num data-label=caches>{g.assigned_caches}</td></tr>"
        )
    return (
        '<h3>Node groups</h3><div class="scroll"><table class="groups cards"><thead><tr><th>group</th><th>selector</th>'
        "<th>members</th><th>Ready</th><th>NotReady</th><th>cordoned</th>"
        '<th title="KernelCacheNodes present">KCN</th><th title="member nodes without a KernelCacheNode">'
        'KCN missing</th><th title="agent pods Running and Ready / member nodes">agents</th>'
        '<th title="KernelCaches whose group this is">caches</th></tr></thead><tbody>'
        + "".join(rows)
        + "</tbody></table></div>"
    )


def _selector(selector: Mapping[str, str]) -> str:
    """A selector that breaks only between its labels, never inside one (`kernel-|cache=enabled`)."""
    if not selector:
        return e(selector_text(selector))
    return ",<wbr>".join(f'<span class="nw">{e(f"{k}={v}")}</span>' for k, v in sorted(selector.items()))


def _cache_name(cache: str) -> str:
    """`namespace/name`, broken (when the row is too narrow) only after the slash."""
    ns, _, name = cache.rpartition("/")
    inner = f'<span class="nw">{e(ns)}/</span><wbr><span class="nw">{e(name)}</span>' if ns else e(cache)
    return f'<code class="kc">{inner}</code>'


def _heatmap(status: FleetStatus) -> str:
    rows = dict(sorted(cells_by_cache(status.groups).items(), key=lambda kv: _badness(kv[1])))
    if not rows:
        return "<h3>KernelCaches</h3><p>No KernelCache has a group or an entry on a member node.</p>"
    columns = [g for g in status.groups if any(c for c in g.caches)]
    namespaces = sorted({cache.partition("/")[0] for cache in rows})
    ns_index = {ns: i for i, ns in enumerate(namespaces)}
    group_index = {g.name: i for i, g in enumerate(columns)}

    def row_class(cache: str, groups: Iterable[str]) -> str:
        return " ".join(
            [
                "hrow",
                f"ns-{ns_index[cache.partition('/')[0]]}",
                *(f"g-{group_index[g]}" for g in groups if g in group_index),
            ]
        )

    legend = "".join(f'<span><i class="seg {SEGMENT_CLASSES[s]}"></i>{s}</span>' for s in SEGMENTS)
    anchors = {cache: f"why-{i}" for i, cache in enumerate(rows)}  # ids of our own: no name is put in one
    body = []
    if len(columns) <= MATRIX_GROUPS:
        head = "".join(
            f"<th scope=col>{e(g.name)}<small>{g.ready} Ready of {plural(g.members, 'node')}</small></th>"
            for g in columns
        )
        for cache, cells in rows.items():
            by_group = {g.name: cell for g, cell in cells}
            tds = "".join(_heat_cell(g, by_group.get(g.name), anchors[cache]) for g in columns)
            body.append(f'<tr class="{row_class(cache, by_group)}"><th scope=row>{_cache_name(cache)}</th>{tds}</tr>')
    else:  # a cache has one group: with many groups the matrix is mostly empty, so one row per cell
        for cache, cells in rows.items():
            for index, (g, cell) in enumerate(cells):
                name = _cache_name(cache) if index == 0 else ""
                body.append(
                    f'<tr class="{row_class(cache, [g.name])}"><th scope=row>{name}</th><td class=grp>{e(g.name)}</td>'
                    f"{_heat_cell(g, cell, anchors[cache])}</tr>"
                )
        head = "<th scope=col>node group</th><th scope=col>entries on its Ready members</th>"
    return (
        "<h3>KernelCaches by group</h3>"
        "<p class=muted>Per KernelCache and node group: how many of the group's Ready members have its entry "
        "Ready (cordoned ones included, as KServe counts them; the colour goes from red, none, to green, all), "
        "and the bar splits those Ready members by phase. NotReady members are not counted: KServe leaves them "
        "out, and an entry there never fails the cache. A dashed cell is not the KernelCache's own group. "
        "Each cell links to its KernelCache's line below the map.</p>"
        "<p class=muted>Worst first: KernelCaches with an Error entry, then by the share of Ready members "
        "Ready.</p>"
        f'<p class="legend">{legend}</p><div class="heatwrap">'
        + _filters(namespaces, [g.name for g in columns])
        + f'<div class="scroll"><table class="heat cards"><thead><tr><th>KernelCache</th>{head}</tr></thead><tbody>'
        + "".join(body)
        + "</tbody></table></div></div>"
        + _why_lines(rows, anchors)
    )


def why_not_ready_command(cache: str) -> str:
    """`kubectl kcache why-not-ready NAME -n NAMESPACE` for `cache` (namespace/name); "" for a name Kubernetes
    would not accept."""
    from ..kernelcache.commands import why_not_ready_command as build

    namespace, _, name = cache.partition("/")  # a namespace has no slash
    return build(namespace, name) or NO_COMMAND


NO_COMMAND = "no command (the name is not one Kubernetes accepts)"


def _why_lines(rows: Mapping[str, list[tuple[GroupStatus, CacheCell]]], anchors: Mapping[str, str]) -> str:
    """One short line per KernelCache of the map, the target of its cells: KServe's state on its own group,
    the counts behind it and the command that explains it node by node."""
    items = []
    for cache, cells in rows.items():
        own = next(((g, cell) for g, cell in cells if cell.assigned), None)
        if own is None:
            said = "its group is none of these (its entries are on another group's members): not counted here"
        else:
            said = _state_line(*own)
        apart = sum(cell.not_ready.total for _, cell in cells)
        if apart:
            said += f"; {apart} {'entry' if apart == 1 else 'entries'} on NotReady members, not counted by KServe"
        items.append(
            f'<li id="{anchors[cache]}"><code class="kc">{e(cache)}</code> {said}. Node by node: '
            f"<code>{e(why_not_ready_command(cache))}</code></li>"
        )
    return f'<h4>Each KernelCache, as KServe computes it</h4><ul class="why">{"".join(items)}</ul>'


def _state_line(group: GroupStatus, cell: CacheCell) -> str:
    """`<state> on group G (Reason: message): 1 of 3 Ready members Ready, ...`, escaped."""
    agg = cell.aggregate
    ready = cell.ready_members(group.ready)
    counts = cell_counts(cell, group.ready)
    detail = ", ".join(f"{counts[s]} {s}" for s in SEGMENTS if counts[s] and s != READY)
    numbers = f"{counts[READY]} of {plural(ready, 'Ready member')} Ready" + (f", {detail}" if detail else "")
    where = f"on group <b>{e(group.name)}</b>"
    if agg is None:
        return f"{where}: {numbers}"
    why = e(agg.reason) + (f": {e(agg.message)}" if agg.message and agg.state == CACHE_ERROR else "")
    return f'<span class="state ks-{e(agg.state.lower())}">{e(agg.state)}</span> {where} ({why}): {numbers}'


def _badness(cells: list[tuple[GroupStatus, CacheCell]]) -> tuple[int, float]:
    """Sort key of a KernelCache's row: an Error entry (on a Ready member) first, then the lowest share of
    Ready members Ready."""
    errors = 0
    ready = 1.0
    for g, cell in cells:
        counts = cell_counts(cell, g.ready)
        errors += counts[ERROR]
        if cell.assigned or len(cells) == 1:
            members = cell.ready_members(g.ready)
            ready = min(ready, counts[READY] / members if members else 0.0)
    return (0 if errors else 1, ready)


FILTER_LIMIT = 40  # more namespaces (or groups) than this: no filter buttons for them


def _filters(namespaces: list[str], groups: list[str]) -> str:
    """Radio buttons that hide the heatmap's other rows, with CSS only (the page runs no script for it)."""
    if len(namespaces) < 2 and len(groups) < 2:
        return ""
    buttons = [
        '<input type="radio" name="hf" id="hf-all" class="hf" checked><label class="flt" for="hf-all">all</label>'
    ]
    rules = []
    for prefix, word, values in (("ns", "namespace", namespaces), ("g", "group", groups)):
        if len(values) < 2 or len(values) > FILTER_LIMIT:
            continue
        for i, value in enumerate(values):
            ident = f"hf-{prefix}-{i}"
            buttons.append(
                f'<input type="radio" name="hf" id="{ident}" class="hf">'
                f'<label class="flt" for="{ident}">{word} <b>{e(value)}</b></label>'
            )
            rules.append(
                f"#{ident}:checked~.scroll tr.hrow:not(.{prefix}-{i}){{display:none}}"
                f"#{ident}:checked+label{{background:var(--fg);color:#fff}}"
            )
    rules.append("#hf-all:checked+label{background:var(--fg);color:#fff}")
    # the inputs are siblings of the table's box: `:checked ~ .scroll` needs no script
    return f'<style>{"".join(rules)}</style><span class="muted">filter: </span>' + "".join(buttons)


def _heat_cell(group: GroupStatus, cell: CacheCell | None, anchor: str) -> str:
    """A KernelCache's cell in a group: its entries on the group's Ready members (KServe's expected nodes) by
    phase, the bar over those members only, and a link to the cache's line (`anchor`) below the map."""
    if cell is None:
        return '<td class="empty">–</td>'
    members = cell.ready_members(group.ready)
    counts = cell_counts(cell, group.ready)
    hue = round(120 * counts[READY] / members) if members else 0
    style = f"background:hsl({hue},62%,{88 if members else 96}%)"
    classes = "cell" + ("" if cell.assigned else " other") + (" has-error" if counts[ERROR] else "")
    detail = ", ".join(f"{counts[s]} {s}" for s in SEGMENTS if counts[s])
    if detail:
        detail += f" of {plural(members, 'Ready member')}"
    else:
        detail = "no Ready member" if group.members else "no member"
    if cell.not_ready.total:
        detail += f" ({cell.not_ready.total} on NotReady members, not counted)"
    state = f"; KServe: {cell.state}" if cell.state else ""
    title = f"{group.name}: {detail}{state}. Node by node: {why_not_ready_command(cell.cache)}"
    bar = "".join(
        f'<i class="seg {SEGMENT_CLASSES[s]}" style="width:{100 * counts[s] / members:.1f}%"></i>'
        for s in SEGMENTS
        if counts[s] and members
    )
    numbers = [f"<b>{counts[READY]}/{members}</b> ready"]
    numbers += [
        f'<span class="n {SEGMENT_CLASSES[s]}">{counts[s]} {s}</span>' for s in (PULLING, PENDING, ERROR) if counts[s]
    ]
    return (
        f'<td class="{classes}" style="{style}" title="{e(title)}" data-label="{e(group.name)}">'
        f'<a class="why" href="#{anchor}">'
        f'{" ".join(numbers)}<div class="bar">{bar}</div></a></td>'
    )


def _unassigned(status: FleetStatus) -> str:
    if not status.unassigned:
        return ""
    items = "".join(f"<li><code>{e(u.cache)}</code>: {e(u.reason)}</li>" for u in status.unassigned)
    return f'<h3>KernelCaches no group prepares</h3><ul class="unassigned">{items}</ul>'


# ---- serving pods -----------------------------------------------------------------------------------


def serving_pods_section(fleet: FleetHitRate | str | None) -> str:
    """`why-not-cached -A`'s counts per InferenceService (and revision where they differ), with the top blocking
    gate and the next command."""
    head = '<section id="serving"><h2>Serving pods</h2>'
    if fleet is None:
        return ""
    if isinstance(fleet, str):
        return f'{head}<p class="warning-text">Not shown: {e(fleet)}</p></section>'
    intro = f"<p>{e(hit_rate_table.summary_sentence(fleet))}</p>"
    if not fleet.rows:
        return head + intro + "</section>"
    rows = []
    for r in hit_rate_table.worst_first(fleet.rows):  # what needs doing first, as the text view
        name = e(r.isvc) + (f" <small>revision {e(r.revision)}</small>" if r.revision else "")
        gate = f"{e(r.gate)} ({r.gate_count})" if r.gate else ""
        nxt = f"<code>{e(r.next_command)}</code>" if r.next_command else ""
        rows.append(
            f"<tr><td class=ns>{e(r.namespace)}</td><th scope=row>{name}</th>"
            f"<td class=num data-label=pods>{r.pods}</td><td class=num data-label=cached>{r.cached}</td>"
            f"<td class='num{' warn' if r.cold else ''}' data-label=cold>{r.cold}</td>"
            f"<td class='num{' warn' if r.now else ''}' data-label='would be cached now'>{r.now}</td>"
            f"<td class='num{' bad' if r.denied else ''}' data-label=denied>{r.denied}</td>"
            f"<td class=num data-label='producers (cold by design)'>{r.producer}</td>"
            f"<td class=num data-label='hit rate'>{'-' if r.hit_rate is None else f'{r.hit_rate}%'}</td>"
            f"<td data-label='top blocking gate'>{gate}</td><td data-label=next>{nxt}</td></tr>"
        )
    table = (
        '<div class="scroll"><table class="serving cards"><thead><tr><th>namespace</th><th>InferenceService</th>'
        '<th>pods</th><th title="KServe mounted a KernelCache at admission">cached</th>'
        '<th title="started without one">cold</th><th title="cold, but admission would mount one today: '
        'recreate them">now</th><th title="admission would reject a recreated pod">denied</th>'
        '<th title="started cold by design: a producer of a cache (it compiled the kernels and holds them), or its '
        'revision is being captured">producer</th><th title="cached of the pods that are not producers">hit rate</th>'
        "<th>top blocking gate</th><th>next</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table></div>"
    )
    return head + intro + table + "</section>"


# ---- findings -----------------------------------------------------------------------------------------


def _notes_of(checks: list[CheckGroup]) -> list[str]:
    """The explanations many findings share (why KServe's node pass may not have run), in the order first
    used: the page says each once, as a numbered note after the findings, and the findings point to it."""
    found = [s for c in checks for f in (*c.active, *c.suppressed) for s in f.shared if s in f.message]
    return list(dict.fromkeys(found))


def _findings(checks: list[CheckGroup], notes: list[str]) -> str:
    active = [c for c in checks if c.active]
    if not active:
        return '<section id="findings"><h2>Findings</h2><p class="ok-text">No findings.</p></section>'
    items = "".join(f'<li id="note-{i}">{e(text)}</li>' for i, text in enumerate(notes, 1))
    return (
        '<section id="findings"><h2>Findings</h2>'
        + "".join(_check_section(c, c.active, notes, anchor=True) for c in active)
        + (f'<section id="notes"><h3>Notes</h3><ol class="notes">{items}</ol></section>' if notes else "")
        + "</section>"
    )


def _suppressed(checks: list[CheckGroup], notes: list[str]) -> str:
    quiet = [c for c in checks if c.suppressed]
    if not quiet:
        return ""
    n = sum(len(c.suppressed) for c in checks)
    inner = "".join(_check_section(c, c.suppressed, notes, anchor=False) for c in quiet)
    return (
        f'<section id="suppressed"><details><summary><h2>Suppressed findings ({n})</h2></summary>{inner}'
        "</details></section>"
    )


def _check_section(check: CheckGroup, findings: Iterable[Finding], notes: list[str], *, anchor: bool) -> str:
    groups = sorted(finding_groups(tuple(findings)), key=lambda g: SEVERITY_ORDER.get(g.severity, 3))
    count = sum(len(g.findings) for g in groups)
    ident = f' id="check-{e(check.id)}"' if anchor else ""
    title = f" <span>{e(check.title)}</span>" if check.title else ""
    return (
        f'<section class="check"{ident}><h3><code>{e(check.id)}</code>{title}'
        f"<small>{plural(count, 'finding')}</small></h3>" + "".join(_finding(g, notes) for g in groups) + "</section>"
    )


def _finding(group: FindingGroup, notes: list[str]) -> str:
    f = group.first
    sev = e(group.severity)
    code = f'<a class="code" href="{CATALOGUE_URL}#{e(f.full_code)}"><code>{e(f.full_code)}</code></a>'
    where = f' <span class="group">group <b>{e(f.group)}</b></span>' if f.group else ""
    if group.grouped:
        groups = group.node_groups
        where = f' <span class="group">group <b>{e(groups[0])}</b></span>' if len(groups) == 1 else ""
        where = where or (f' <span class="group">in <b>{len(groups)}</b> groups</span>' if groups else "")
        obj = e(group.kinds)
        body = f'<p class="msg">{e(f.cause)}: <span class="sample">{e(group.sample())}</span>{_refs(f, notes)}</p>'
        hint = group.hint
        extra = ""
        if group.lister:
            extra += f'<p class="next">all {len(group.findings)}:</p><pre><code>{e(group.lister)}</code></pre>'
        items = "".join(_object_item(x, hint, notes) for x in group.findings)
        extra += f'<details class="objects"><summary>{len(group.findings)} objects</summary><ol>{items}</ol></details>'
    else:
        obj = f"<code>{e(object_path(f.object))}</code>"
        body = f'<p class="msg">{_message(f, notes)}</p>' + _evidence(f.evidence)
        hint = f.hint
        extra = ""
    head = f'<div class="fhead"><span class="sev {sev}">{sev}</span>{code}<span class="obj">{obj}</span>{where}</div>'
    hint_html = f'<p class="next">next:</p><pre><code>{e(hint)}</code></pre>' if hint else ""
    kind = " grouped" if group.grouped else ""
    return f'<article class="finding {sev}{kind}">{head}{body}{hint_html}{extra}</article>'


def _object_item(f: Finding, shared_hint: str, notes: list[str]) -> str:
    """One object of a grouped finding: its message, evidence and, when it has its own, its next command."""
    hint = f"<pre><code>{e(f.hint)}</code></pre>" if f.hint and f.hint != shared_hint else ""
    return (
        f"<li><code>{e(object_path(f.object))}</code><p class=msg>{_message(f, notes)}</p>"
        f"{_evidence(f.evidence)}{hint}</li>"
    )


def _message(f: Finding, notes: list[str]) -> str:
    """The message without the explanations the page says once (`notes`), and links to them."""
    return e(without_shared(f.message, [s for s in f.shared if s in notes])) + _refs(f, notes)


def _refs(f: Finding, notes: list[str]) -> str:
    numbers = [notes.index(s) + 1 for s in f.shared if s in notes and s in f.message]
    links = ", ".join(f'<a href="#note-{n}">note {n}</a>' for n in numbers)
    return f' <span class="muted">(see {links})</span>' if links else ""


def _evidence(evidence: Iterable[str]) -> str:
    items = "".join(f"<li>{e(x)}</li>" for x in evidence)
    return f'<ul class="evidence">{items}</ul>' if items else ""


# ---- style and script -------------------------------------------------------------------------------------

SCRIPT = (
    "window.addEventListener('beforeprint',function(){"
    "document.querySelectorAll('details').forEach(function(d){d.open=true;});});"
)

STYLE = """
:root{--fg:#1b1f24;--muted:#5f6b7a;--line:#d9dee5;--bg:#f6f8fa;--card:#fff;--error:#c62828;--warning:#a05a00;
--info:#1565c0;--ok:#2e7d32;--skipped:#8d6e63;--ready:#2e7d32;--pulling:#1e88e5;--pending:#f2b01e;--none:#c5ccd4}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,
"Helvetica Neue",Arial,sans-serif}
main{max-width:1180px;margin:0 auto;padding:20px 24px 40px}
h1{font-size:1.6em;margin:0 0 8px}h2{font-size:1.25em;margin:28px 0 10px}h3{font-size:1.05em;margin:18px 0 8px}
code,pre{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace}
pre{background:#eef1f4;border-radius:6px;padding:7px 10px;margin:4px 0 6px;white-space:pre-wrap;
overflow-wrap:anywhere}
a{color:var(--info)}
.muted,small{color:var(--muted)}
header{border-bottom:1px solid var(--line);padding-bottom:10px}
.meta{display:flex;flex-wrap:wrap;gap:4px 24px;margin:0}.meta div{min-width:0}
.meta dt{font-size:.75em;text-transform:uppercase;letter-spacing:.04em;color:var(--muted)}
.meta dd{margin:0;overflow-wrap:anywhere}
.verdict{font-size:1.15em;font-weight:600;margin:16px 0 10px;padding:8px 12px;border-radius:6px;
border-left:5px solid var(--ok);background:#e8f5e9}
.verdict.error{border-color:var(--error);background:#fdecea}.verdict.warning{border-color:var(--warning);
background:#fff4e0}.verdict.incomplete{border-color:var(--skipped);background:#f3ece9}
.tiles{display:flex;flex-wrap:wrap;gap:8px}
.tile{background:var(--card);border:1px solid var(--line);border-top:4px solid var(--muted);border-radius:6px;
padding:6px 14px;min-width:92px}
.tile b{display:block;font-size:1.5em}.tile span{color:var(--muted);font-size:.85em}
.tile.error{border-top-color:var(--error)}.tile.warning{border-top-color:var(--warning)}
.chips{display:flex;flex-wrap:wrap;gap:6px;margin:10px 0 0}
.chip{border:1px solid var(--line);border-left:4px solid var(--muted);border-radius:5px;padding:1px 8px;
background:var(--card);color:var(--fg);text-decoration:none;font:13px ui-monospace,Menlo,Consolas,monospace}
.chip.error{border-left-color:var(--error)}.chip.warning{border-left-color:var(--warning)}
.chip.info{border-left-color:var(--info)}.chip.skipped{border-left-color:var(--skipped)}
.tile.info{border-top-color:var(--info)}.tile.skipped{border-top-color:var(--skipped)}.tile.zero b{color:var(--muted)}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;background:var(--card);width:100%}
th,td{border-bottom:1px solid var(--line);padding:5px 9px;text-align:left;vertical-align:top}
thead th{font-size:.8em;text-transform:uppercase;letter-spacing:.03em;color:var(--muted);white-space:nowrap}
td.num{text-align:right;font-variant-numeric:tabular-nums}
td.warn{color:var(--warning);font-weight:600}td.bad{color:var(--error);font-weight:600}
td.reason{color:var(--muted);font-size:.9em;overflow-wrap:anywhere}
.badge{display:inline-block;border-radius:10px;padding:0 8px;font-size:.8em;font-weight:600;color:#fff;
background:var(--muted)}
.badge.st-pass{background:var(--ok)}.badge.st-fail{background:var(--error)}.badge.st-skipped{background:var(--skipped)}
table.heat th[scope=row]{font-weight:normal}
table.groups td:nth-child(2){max-width:380px;overflow-wrap:anywhere}
table.checks td:nth-child(2){white-space:nowrap}
table.heat thead th[scope=col]{text-transform:none;letter-spacing:0;font-size:.9em;color:var(--fg)}
table.heat thead th small{display:block;color:var(--muted)}
table.groups th[scope=row]{white-space:nowrap}
td.cell{min-width:150px;border:2px solid #fff;white-space:nowrap}
td.cell.other{border:2px dashed #8895a3;opacity:.85}td.cell.has-error{box-shadow:inset 0 0 0 2px var(--error)}
td.empty{color:var(--muted);text-align:center}
td.cell a.why{display:block;color:inherit;text-decoration:none}
ul.why{padding-left:20px;font-size:.92em}ul.why li{margin:3px 0;overflow-wrap:anywhere}
ul.why li:target{background:#fff4c2}.state{font-weight:600}.ks-error{color:var(--error)}
.ks-ready{color:var(--ok)}.ks-pending{color:var(--warning)}.ks-preparing{color:var(--info)}
h4{font-size:.95em;margin:14px 0 4px}
.n{font-size:.82em;margin-left:4px}.n.error{color:var(--error);font-weight:600}.n.pulling{color:#0d5ca8}
.n.pending{color:#7a5300}
.bar{display:flex;height:8px;border-radius:4px;overflow:hidden;margin-top:4px;background:var(--none)}
.seg{display:inline-block;height:100%}.legend .seg{width:12px;height:12px;border-radius:2px;margin:0 4px 0 12px;
vertical-align:-1px}
.seg.ready{background:var(--ready)}.seg.pulling{background:var(--pulling)}.seg.pending{background:var(--pending)}
.seg.error{background:var(--error)}.seg.none{background:var(--none)}
.check{margin-top:18px}.check h3 span{font-weight:normal;color:var(--muted);margin-left:6px}
.check h3 small{float:right;font-weight:normal}
.finding{background:var(--card);border:1px solid var(--line);border-left:5px solid var(--muted);border-radius:6px;
padding:8px 12px;margin:8px 0;break-inside:avoid}
.finding.error{border-left-color:var(--error)}.finding.warning{border-left-color:var(--warning)}
.finding.info{border-left-color:var(--info)}
.fhead{display:flex;flex-wrap:wrap;align-items:baseline;gap:4px 10px}
.sev{font-weight:700;text-transform:uppercase;font-size:.78em;letter-spacing:.04em}
.sev.error{color:var(--error)}.sev.warning{color:var(--warning)}.sev.info{color:var(--info)}
.code{color:var(--muted)}.hf{position:absolute;opacity:0}.flt{display:inline-block;margin:2px 4px 2px 0;
padding:1px 8px;border:1px solid var(--line);border-radius:10px;cursor:pointer;font-size:.9em}
.heatwrap .scroll{margin-top:6px}.nw{white-space:nowrap}@media print{.flt,.hf{display:none}}
.obj{overflow-wrap:anywhere;font-weight:600}.group{color:var(--muted);font-size:.9em}
.msg{margin:6px 0;overflow-wrap:anywhere}.sample{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9em}
.next{margin:6px 0 0;font-size:.8em;text-transform:uppercase;letter-spacing:.04em;color:var(--muted)}
.evidence{margin:4px 0;padding-left:20px;color:var(--muted);font-size:.92em;overflow-wrap:anywhere}
details.objects{margin-top:6px}details summary{cursor:pointer;color:var(--info)}
details.objects ol{padding-left:22px}details.objects li{margin:6px 0;overflow-wrap:anywhere}
#suppressed summary h2{display:inline;font-size:1.1em;color:var(--muted)}
.warning-text{color:var(--warning)}.ok-text{color:var(--ok)}
footer{margin-top:32px;color:var(--muted);font-size:.85em}
@media (max-width:600px){main{padding:12px}h1{font-size:1.3em}.tile{min-width:70px;padding:4px 10px}
.tile b{font-size:1.2em}.check h3 small{float:none;display:block}
table.cards,table.cards tbody{display:block;background:none}table.cards thead{display:none}
table.cards tr{display:flex;flex-wrap:wrap;align-items:baseline;gap:2px 14px;background:var(--card);
border:1px solid var(--line);border-radius:6px;padding:6px 10px;margin:0 0 8px}
table.cards th,table.cards td{display:block;border:0;padding:0;min-width:0;max-width:none;text-align:left;
white-space:normal;overflow-wrap:anywhere}
table.cards th[scope=row]{flex:1 0 100%;font-weight:600;white-space:normal}table.cards td{order:2;flex:1 0 100%}
table.cards td.num{order:1;flex:0 0 auto}table.cards .nw{white-space:normal}
table.cards td.num::after{content:" " attr(data-label);color:var(--muted);font-size:.85em;font-weight:normal}
table.cards td[data-label]:not(.num)::before{content:attr(data-label) ": ";color:var(--muted);font-size:.85em}
table.cards td:empty,table.cards th:empty,table.heat.cards td.empty,table.heat.cards td.grp{display:none}
table.cards td.ns{order:0;color:var(--muted);font-size:.85em}
table.checks.cards td.st,table.checks.cards td.id{order:0;flex:0 0 auto}
table.heat.cards td.cell{order:1;flex:1 1 140px;border-radius:4px;padding:3px 8px 5px}
table.heat.cards td.cell::before{display:block;content:attr(data-label);color:var(--fg);font-size:.8em}}
.legend span{white-space:nowrap}
@media print{body{background:#fff;font-size:11pt}main{max-width:none;padding:0}.scroll{overflow:visible}
a{color:inherit;text-decoration:none}.finding,.tile,table{box-shadow:none}section{break-inside:auto}
h2,h3{break-after:avoid}tr,.finding,details.objects li{break-inside:avoid}.finding.grouped{break-inside:auto}
*{-webkit-print-color-adjust:exact;print-color-adjust:exact}}
"""
