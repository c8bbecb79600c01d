"""`why-not-ready` for people, answer first: line 1 the verdict in KServe's terms, then one line per distinct
cause with the nodes it holds and its next command, then the cache-level chain (the gate that stops KServe's
pass, or that every one passes), the aggregate KServe computes beside the one it wrote, whether the pod
webhook can mount the cache today, and the per-node chains of the nodes not Ready (`-o wide`: every gate of
every node). Names and values from the cluster are escaped (why_layout); commands are never wrapped.

Without a KernelCache (`-A`): one row per KernelCache not Ready everywhere.
"""

from __future__ import annotations

from typing import TextIO

from ..explain.why_not_ready import WAITING, CacheGate, NodeGate, NodeTrace, WhyNotReady, WhyNotReadyFleet
from .why_layout import STYLE_BAD, STYLE_DIM, STYLE_OK, STYLE_WARN, Node, Page, spans, wrap_spans

SHOWN_NODES = 6  # node names listed on a cause line before "and N more"


def _names(nodes: tuple[str, ...]) -> str:
    shown = ", ".join(nodes[:SHOWN_NODES])
    more = len(nodes) - SHOWN_NODES
    return shown + (f" and {more} more" if more > 0 else "")


def render(why: WhyNotReady, out: TextIO, *, color: bool, width: int | None, wide: bool = False) -> None:
    page = Page(out, color=color, width=width)
    g = page.g
    mark = (f"{g['ok']} ", f"bold {STYLE_OK}") if why.ready else (f"{g['no']} ", f"bold {STYLE_BAD}")
    page.line(mark, (why.verdict, "bold"))
    page.line(f"{why.namespace}/{why.name}", (" (KernelCache)", STYLE_DIM))
    stop = why.cache_blocked_by
    if stop is not None:
        what = f"KServe's pass stops at {stop.id}: {stop.detail}"
        if stop.kserve is not None:
            what += f" (KServe writes {stop.kserve[0]}/{stop.kserve[1]})"
        page.para("Why:", what)
        if stop.next:
            page.command("Next:", stop.next)
    counted = why.node_causes
    if counted:
        total = sum(len(x.nodes) for x in counted)
        page.line(
            (
                f"{total} node{'s' if total != 1 else ''}, {len(counted)} cause{'s' if len(counted) != 1 else ''}:",
                "bold",
            )
        )
        for cause in counted:
            n = len(cause.nodes)
            page.lines += wrap_spans(
                spans(
                    (f"{g['no']} ", STYLE_BAD),
                    (f"{n} node{'s' if n != 1 else ''} ", "bold"),
                    (f"({_names(cause.nodes)})", STYLE_DIM),
                    f": {cause.cause} [{cause.gate}]",
                ),
                page.width,
                "  ",
                "    ",
            )
            if cause.next:
                page.command("", cause.next, "    ")
    apart = [x for x in why.causes if x.gate in ("member", "ready")]
    for cause in apart:
        page.line(
            (f"{g['warn']} ", STYLE_WARN),
            f"not counted by KServe ({_names(cause.nodes)}): {cause.cause}",
            indent="  ",
        )
    page.unread(why.unread, "those gates are")
    page.blank()
    page.tree(_cache_tree(page, why, wide))
    _aggregate(page, why)
    if why.admission:
        page.para("Admission:", why.admission)
    if wide or why.nodes:
        page.blank()
        root = Node(spans(("Nodes", "bold"), " (every gate):" if wide else ":"))
        for trace in why.nodes:
            child = root.add(*_node_label(page, trace))
            for gate in trace.gates if wide else ():
                _gate(page, child, gate)
        page.tree(root)
    if not wide:
        page.blank()
        page.line(("-o wide adds every gate of every node; -o json the whole chain", STYLE_DIM))
    page.write()


def _node_label(page: Page, n: NodeTrace) -> list[tuple[str, str] | str]:
    """`✗ node (cordoned): blocked at pull; entry Error; Job running`."""
    m, style = page.mark(True if n.blocked_by is None else (False if n.counted else WAITING))
    flags = ", ".join(x for x in ("cordoned" if n.cordoned else "", "NotReady" if not n.ready else "") if x)
    facts = [f"blocked at {n.blocked_by}" if n.blocked_by else "Ready"]
    facts.append(f"entry {n.entry.state or '(no state)'}" if n.entry is not None else "no entry")
    if n.job is not None:
        facts.append(f"Job {n.job[1]}")
    return [(f"{m} ", style), (n.name, "bold"), f" ({flags})" if flags else "", ": " + "; ".join(facts)]


def _gate(page: Page, parent: Node, gate: NodeGate | CacheGate) -> None:
    m, style = page.mark(gate.passed)
    parent.add((f"{m} ", style), (gate.id, "bold"), f": {gate.detail}")


def _cache_tree(page: Page, why: WhyNotReady, wide: bool) -> Node:
    stop = why.cache_blocked_by
    if stop is None:
        head = spans(("Cache level", "bold"), ": every gate passes (KServe's pass reaches the Jobs)")
    else:
        head = spans(("Cache level", "bold"), f": stops at {stop.id}")
    root = Node(head)
    for gate in why.cache:
        if wide or gate.passed is not True or gate.id == "group":
            _gate(page, root, gate)
            for ev in gate.evidence:
                root.children[-1].add((ev, STYLE_DIM))
    return root


def _aggregate(page: Page, why: WhyNotReady) -> None:
    a = why.aggregate
    stop = why.cache_blocked_by
    if stop is not None:  # KServe's pass does not reach the aggregate: what it writes is the gate's
        writes = f"writes {stop.kserve[0]}/{stop.kserve[1]}" if stop.kserve else "writes no status"
        page.para("Aggregate:", f"not reached: KServe's pass stops at {stop.id} and {writes}")
        return
    if a is None:
        return
    k = a.counts
    text = (
        f"{a.state}/{a.reason} ({k.nodes_ready} Ready, {k.nodes_preparing} preparing, {k.nodes_error} Error of "
        f"nodeCount {k.node_count})"
    )
    if why.written is None:
        page.para("Aggregate:", f"KServe computes {text}; no status written yet")
    elif why.lagging:
        w = why.written
        page.para(
            "Aggregate:",
            f"KServe computes {text}, but the written status is {w[0] or '(none)'}/{w[1] or '(none)'} "
            f"(nodeCount {w[3][0]}, {w[3][1]} Ready, {w[3][3]} Error): it lags (KServe re-runs on KernelCacheNode, "
            "Node, group, ConfigMap, capture and consumer-pod changes, not on Jobs)",
        )
    else:
        page.para("Aggregate:", f"{text}, as written")


def render_fleet(fleet: WhyNotReadyFleet, out: TextIO, *, color: bool, width: int | None, wide: bool = False) -> None:
    """One row per KernelCache not Ready everywhere: namespace/name, Ready/members, the top cause and how many
    nodes it holds, the next command (on its own line under a terminal; one line per row piped). `wide` shows
    the same: a row has nothing more to show."""
    rows = fleet.rows
    page = Page(out, color=color, width=width)
    g = page.g
    bad = [w for w in rows if not w.ready]
    page.line(
        (f"{len(rows) - len(bad)} of {len(rows)} KernelCaches Ready on every Ready member", "bold"),
        f"; {len(bad)} not" if bad else "",
    )
    for w in bad:
        stop = w.cache_blocked_by
        top = w.node_causes[0] if w.node_causes else None
        if stop is not None:
            cause, holds, nxt = f"pass stops at {stop.id}: {stop.detail}", "every node", stop.next
        elif top is not None:
            n = len(w.node_causes)
            many = f"{n} causes, top: " if n > 1 else ""
            cause, holds, nxt = top.cause, f"{many}{len(top.nodes)} node{'s' if len(top.nodes) != 1 else ''}", top.next
        else:
            cause, holds, nxt = w.verdict, "", None
        counted = w.counted_count
        page.lines += wrap_spans(
            spans(
                (f"{g['no']} ", STYLE_BAD),
                (f"{w.namespace}/{w.name}", "bold"),
                f" {w.ready_count}/{counted} Ready ({w.group or 'no group'}): {holds}{': ' if holds else ''}{cause}",
            ),
            page.width,
            "",
            "  ",
        )
        if nxt:
            page.command("", nxt, "    ")
    page.write()
