"""What the status renderers share (the terminal table and the HTML report): the phases of a heat cell in
display order, how a cell's bar is split, and the words for a group's selector and a report's source."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..kernelcache import constants as c
from ..provenance import LIVE

if TYPE_CHECKING:
    from ..explain.fleet import FleetHitRate
    from ..explain.status import CacheCell, FleetStatus, GroupStatus
    from ..provenance import Provenance

# A heat cell's segments, best first: the four phases of the documented counts over the group's Ready
# members (KServe's expected nodes), then the Ready members that have no entry for the cache (a node without
# its KernelCacheNode or agent, a new node; KServe counts them as preparing). NotReady members are in no
# segment: KServe does not count them, and their entries are shown apart (`not_ready_cells`).
READY, PULLING, PENDING, ERROR, NO_ENTRY = "Ready", "Pulling", "Pending", "Error", "no entry"
SEGMENTS = (READY, PULLING, PENDING, ERROR, NO_ENTRY)


def cell_counts(cell: CacheCell, members: int) -> dict[str, int]:
    """A cell's counts by segment, over the group's Ready members; `no entry` is the Ready members without an
    entry for the cache. `members` stands for the Ready members only for a cell made without them."""
    c = cell.counts
    return {READY: c.ready, PULLING: c.pulling, PENDING: c.pending, ERROR: c.error, NO_ENTRY: cell.no_entry(members)}


def not_ready_cells(groups: tuple[GroupStatus, ...]) -> dict[str, list[tuple[GroupStatus, CacheCell]]]:
    """KernelCache -> its cells that have entries on NotReady members (not counted by KServe), the cache's own
    group first."""
    return {
        cache: kept
        for cache, cells in cells_by_cache(groups).items()
        if (kept := [(g, cell) for g, cell in cells if cell.not_ready.total])
    }


def bar_widths(counts: Mapping[str, int], width: int) -> dict[str, int]:
    """How many of `width` characters each segment gets: proportional (largest remainder), and at least one
    for every segment that is not zero, so that one Error among 1,000 nodes still shows."""
    total = sum(counts.values())
    if total <= 0 or width <= 0:
        return {k: 0 for k in counts}
    nonzero = [k for k in SEGMENTS if counts.get(k, 0) > 0]
    width = max(width, len(nonzero))
    exact = {k: counts.get(k, 0) * width / total for k in SEGMENTS}
    out = {k: (max(1, int(exact[k])) if k in nonzero else 0) for k in SEGMENTS}
    # Give or take characters by the largest remainders (or take from the widest) until the sum is right.
    while sum(out.values()) < width:
        k = max(nonzero, key=lambda s: (exact[s] - out[s], -SEGMENTS.index(s)))
        out[k] += 1
    while sum(out.values()) > width:
        k = max((s for s in nonzero if out[s] > 1), key=lambda s: (out[s] - exact[s], out[s]))
        out[k] -= 1
    return out


def selector_text(selector: Mapping[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "(empty: matches every node)"


def source_line(provenance: Provenance) -> str:
    """`cluster NAME · https://server · read 2026-... · all namespaces` (the table's and the page's header)."""
    parts = []
    if provenance.cluster:
        parts.append(f"cluster {provenance.cluster}")
    where = provenance.where
    if where and where != provenance.cluster:
        parts.append(where if provenance.source == LIVE else f"from {where}")
    if provenance.taken_at:
        parts.append(f"read {provenance.taken_at}")
    parts.append(f"namespace {provenance.namespace}" if provenance.namespace else "all namespaces")
    return " · ".join(parts)


def cells_by_cache(groups: tuple[GroupStatus, ...]) -> dict[str, list[tuple[GroupStatus, CacheCell]]]:
    """KernelCache -> its cells, the cache's own group first, then the others by name."""
    out: dict[str, list[tuple[GroupStatus, CacheCell]]] = {}
    for g in groups:
        for cell in g.caches:
            out.setdefault(cell.cache, []).append((g, cell))
    for cells in out.values():
        cells.sort(key=lambda gc: (not gc[1].assigned, gc[0].name))
    return dict(sorted(out.items()))


def group_problem(g: GroupStatus) -> bool:
    """A group with members missing their KernelCacheNode, NotReady members or agents not running."""
    return bool(g.kernel_cache_nodes_missing or g.not_ready or g.agent_ready < g.agent_desired or not g.members)


def problems_first(groups: tuple[GroupStatus, ...]) -> list[GroupStatus]:
    """The groups with a problem first, each part by name: the order of every groups table."""
    return sorted(groups, key=lambda g: (not group_problem(g), g.name))


def cell_problem(cell: CacheCell, members: int) -> int:
    """How bad a heat row is, by KServe's state for the cache on its own group: 3 Error, 2 Pending (no member
    or no Ready member) or Ready members without an entry, 1 still preparing, 0 Ready. A cell of another group
    (no state) by its counts over Ready members alike. Entries on NotReady members never count."""
    counts = cell_counts(cell, members)
    state = cell.state
    if state == c.CACHE_READY:
        return 0
    if counts[ERROR] or state == c.CACHE_ERROR:
        return 3
    if counts[NO_ENTRY] or state == c.CACHE_PENDING:
        return 2
    return 1 if state is not None or counts[PENDING] or counts[PULLING] else 0


def problems_only(status: FleetStatus) -> FleetStatus:
    """`status` as `--problems` shows it, in every format: the groups with a problem, the KernelCaches with a
    problem (each with its cells in every group, so that its own group's still decides), the caches no group
    prepares; a group stays while it holds a problem cache's cell."""
    from msgspec.structs import replace

    bad = {
        cache
        for cache, cells in cells_by_cache(status.groups).items()
        if max(cell_problem(cell, g.members) for g, cell in ([(g, x) for g, x in cells if x.assigned] or cells))
    }
    bad |= {u.cache for u in status.unassigned}
    groups = tuple(
        replace(g, caches=tuple(x for x in g.caches if x.cache in bad))
        for g in status.groups
        if group_problem(g) or any(x.cache in bad for x in g.caches)
    )
    return replace(status, groups=groups, caches=tuple(k for k in status.caches if k in bad))


def narrowed(status: FleetStatus, group: str | None = None, caches: set[str] | None = None) -> FleetStatus:
    """`status` with only the group `group` and only the KernelCaches `caches` (None: all of them)."""
    from msgspec.structs import replace

    groups = tuple(g for g in status.groups if group is None or g.name == group)
    if caches is not None:
        groups = tuple(replace(g, caches=tuple(cell for cell in g.caches if cell.cache in caches)) for g in groups)
    unassigned = tuple(
        u for u in status.unassigned if (caches is None or u.cache in caches) and (group is None or u.group == group)
    )
    shown = {cell.cache for g in groups for cell in g.caches} | {u.cache for u in unassigned}
    kept = tuple(k for k in status.caches if (caches is None or k in caches) and (group is None or k in shown))
    return replace(status, groups=groups, unassigned=unassigned, caches=kept)


def _counted(n: int, word: str, plural: str = "") -> str:
    return f"{n:,} {word if n == 1 else plural or word + 's'}"


def caches_not_ready(status: FleetStatus) -> int:
    """KernelCaches that are not Ready as KServe computes them on their own group, or that no group prepares."""
    own = {cell.cache: cell.state for g in status.groups for cell in g.caches if cell.assigned}
    return sum(1 for cache in status.caches if own.get(cache) != c.CACHE_READY)


def totals_line(status: FleetStatus, serving: FleetHitRate | str | None = None) -> str:
    """`status`'s answer, its first line and its last: `50 node groups: 12 with problems; 2,000 nodes: 30
    NotReady, 20 cordoned, 10 without a KernelCacheNode; 200 KernelCaches: 22 not Ready; serving pods: 61%
    cached`. Nodes are counted as the groups table counts its members (a node in two groups in each)."""
    t = status.totals()
    bad = sum(1 for g in status.groups if group_problem(g))
    parts = [f"{_counted(t['groups'], 'node group')}: {f'{bad:,} with problems' if bad else 'no problem'}"]
    nodes = [
        f"{n:,} {what}"
        for n, what in (
            (t["notReady"], "NotReady"),
            (t["cordoned"], "cordoned"),
            (t["kernelCacheNodesMissing"], "without a KernelCacheNode"),
            (t["agentsNotReady"], "without a running agent"),
        )
        if n
    ]
    parts.append(f"{_counted(t['members'], 'node')}: {', '.join(nodes) or 'all Ready'}")
    not_ready = caches_not_ready(status)
    parts.append(
        f"{_counted(t['kernelCaches'], 'KernelCache')}: {f'{not_ready:,} not Ready' if not_ready else 'all Ready'}"
    )
    rate = None if serving is None or isinstance(serving, str) else serving.totals.hit_rate
    if rate is not None:
        parts.append(f"serving pods: {rate}% cached")
    return "; ".join(parts)
