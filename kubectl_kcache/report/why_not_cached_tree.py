"""The `why-not-cached` tree: the pod, what it got at creation (history), what KServe would do today (now),
every gate with its evidence, the footprints, each candidate KernelCache with the first gate that rejected
it, what the webhook adds, where the pod runs, and the next command.

Only the CLI imports this module; rich is imported here and nowhere below. Every mark is also a word or a
symbol, so the tree reads the same without colour. Names and values from the cluster are escaped.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text
from rich.tree import Tree

from ..explain.why_not_cached import BASIS_MANIFEST, WhyNotCached
from ..kernelcache import admission as a
from ..kernelcache import constants as c
from ..text import escape

OK = "✓"
NO = "✗"
UNKNOWN = "?"
WARN = "⚠"
STYLE_OK = "green"
STYLE_BAD = "red"
STYLE_WARN = "yellow"
STYLE_DIM = "dim"
EFFECT_WORDS = {a.NOT_CALLED: "webhook not called", a.SKIP: "no cache", a.REJECT: "pod rejected"}


def _t(*parts: str | tuple[str, str]) -> Text:
    """Text from parts; every string part is escaped (it may hold names from the cluster)."""
    return Text.assemble(*((escape(p[0]), p[1]) if isinstance(p, tuple) else escape(p) for p in parts))


def render_tree(why: WhyNotCached, console: Console) -> None:
    console.print(build_tree(why))


def build_tree(why: WhyNotCached) -> Tree:
    tree = Tree(_headline(why))
    _pod(tree, why)
    _history(tree, why)
    _now(tree, why)
    _footprints(tree, why)
    _gates(tree, why)
    _candidates(tree, why)
    _injection(tree, why)
    _placement(tree, why)
    _notes(tree, why)
    return tree


def _headline(why: WhyNotCached) -> Text:
    adm = why.admission
    head = _t(("why-not-cached ", "bold"), f"{why.namespace}/{why.pod_name}", " → ")
    if why.basis == BASIS_MANIFEST:
        head.append_text(_t(("[what-if: manifest] ", STYLE_WARN)))
    elif why.cached:
        head.append_text(_t((f"{OK} cached: {why.recorded_cache or '(KernelCache unknown)'}", f"bold {STYLE_OK}")))
        head.append("; ")
    else:
        head.append_text(_t((f"{NO} not cached", f"bold {STYLE_BAD}")))
        head.append("; ")
    now = adm.cached_kernel_cache
    if now:
        head.append_text(_t("now: ", (f"{OK} {now}", STYLE_OK), f" ({adm.match} match)"))
    else:
        gate = adm.blocked_by
        words = EFFECT_WORDS.get(gate.effect, adm.outcome) if gate is not None else adm.outcome
        head.append_text(_t("now: ", (f"{NO} {words}", STYLE_BAD), f" (blocked by {why.now_blocked_by})"))
    return head


def _pod(tree: Tree, why: WhyNotCached) -> None:
    where = f" on node {why.node}" if why.node else " (not scheduled)"
    when = f", created {why.created}" if why.created else ""
    label = "Manifest pod " if why.basis == BASIS_MANIFEST else "Pod "
    tree.add(_t((label, "bold"), f"{why.namespace}/{why.pod_name}", where, when,
                f" (InferenceService {why.isvc})" if why.isvc else ""))


def _history(tree: Tree, why: WhyNotCached) -> None:
    if why.basis == BASIS_MANIFEST:
        return
    if why.cached:
        tree.add(_t(("At creation ", "bold"), (f"{OK} got {why.recorded_cache or 'a cache'}", STYLE_OK),
                    f" (annotation {c.ANNOTATION_USAGE}, init container {c.LINKER_CONTAINER}, volume "
                    f"{c.SOURCE_VOLUME})"))
    else:
        tree.add(_t(("At creation ", "bold"), (f"{NO} no cache", STYLE_BAD),
                    f": no {c.ANNOTATION_USAGE} annotation, no {c.LINKER_CONTAINER} init container (a miss leaves "
                    "no other record)"))


def _now(tree: Tree, why: WhyNotCached) -> None:
    adm = why.admission
    if adm.outcome == a.CACHED:
        tree.add(_t(("Today ", "bold"), (f"{OK} {adm.cached_kernel_cache}", STYLE_OK), f" ({adm.match} match)"))
        return
    gate = adm.blocked_by
    words = EFFECT_WORDS.get(gate.effect, adm.outcome) if gate is not None else adm.outcome
    branch = tree.add(_t(("Today ", "bold"), (f"{NO} {words}", STYLE_BAD), f": blocked by {why.now_blocked_by}"))
    denial = a.denial_message(adm)
    if denial:
        branch.add(_t((denial, STYLE_BAD)))


def _footprints(tree: Tree, why: WhyNotCached) -> None:
    ident = why.admission.identity
    branch = tree.add(_t(("Footprints", "bold")))
    if ident is None:
        branch.add(_t(("not computed (see the gates model-source, runtime-container, runtime-image)", STYLE_DIM)))
        return
    branch.add(_t(f"workload      {ident.workload_footprint or '(none: the image is not pinned by digest)'}"))
    branch.add(_t(f"compatibility {ident.compatibility_footprint}"))
    factors = branch.add(_t(f"factors ({len(ident.factors)})"))
    for key, value in ident.factors.items():
        factors.add(_t(f"{key}={value}"))


def _mark(passed: bool | None) -> tuple[str, str]:
    if passed is True:
        return OK, STYLE_OK
    if passed is False:
        return NO, STYLE_BAD
    return UNKNOWN, STYLE_DIM


def _gates(tree: Tree, why: WhyNotCached) -> None:
    branch = tree.add(_t(("Gates", "bold"), " (in KServe's order; ? = not checked)"))
    first = why.admission.blocked_by
    for g in why.admission.gates:
        mark, style = _mark(g.passed)
        label = _t((f"{mark} {g.id}", style), f"  {g.detail}")
        if g.effect:
            label.append_text(_t(("  [", STYLE_DIM), (EFFECT_WORDS.get(g.effect, g.effect), style), ("]", STYLE_DIM)))
        if first is not None and g is first:
            label.append_text(_t(("  ← first failure", f"bold {STYLE_BAD}")))
        branch.add(label)


def _candidates(tree: Tree, why: WhyNotCached) -> None:
    adm = why.admission
    branch = tree.add(_t(("Candidates", "bold"), f" ({len(adm.candidates)})"))
    if not adm.candidates:
        branch.add(_t((f"no KernelCache in namespace {why.namespace} and none elsewhere matches the pod", STYLE_DIM)))
    for cand in adm.candidates:
        selected = adm.winner is not None and cand.key == adm.winner.key
        if selected:
            label = _t((f"{OK} {cand.key}", STYLE_OK), f"  {cand.detail}", ("  ← selected", f"bold {STYLE_OK}"))
        elif cand.rejected_by:
            label = _t((f"{NO} {cand.key}", STYLE_BAD), (f"  {cand.rejected_by}", "bold"), f": {cand.detail}")
        else:
            label = _t((f"- {cand.key}", STYLE_DIM), f"  {cand.detail}")
        node = branch.add(label)
        for line in cand.evidence:
            node.add(_t((line, STYLE_WARN)))
        for e in cand.entries:
            stale = cand.kernel_cache is not None and not a.entry_matches_cache(e.entry, cand.kernel_cache)
            node.add(_t(f"{e.node}: {e.entry.state or '(no state)'}",
                        (f"  lastUpdate {e.entry.last_update}" if e.entry.last_update else "", STYLE_DIM),
                        ("  (image or footprints differ from the KernelCache's)" if stale else "", STYLE_WARN)))


def _injection(tree: Tree, why: WhyNotCached) -> None:
    inj = why.admission.injection
    if inj is None or why.admission.outcome != a.CACHED:
        return
    branch = tree.add(_t(("The webhook adds", "bold")))
    for v in inj.volumes:
        what = f"image {v.image_reference}" if v.image_reference else v.source
        branch.add(_t(f"volume {v.name}: {what}"))
    for m in inj.mounts:
        branch.add(_t(f"mount {m.name} at {m.path} in {m.container}{' (read-only)' if m.read_only else ''}"))
    linker = "init container" if inj.linker_added else "existing init container"
    branch.add(_t(f"{linker} {c.LINKER_CONTAINER} ({inj.linker_image}): links {' -> '.join(inj.linker_args[:2])}"
                  + (f" (+{len(inj.linker_args) // 2 - 1} more)" if len(inj.linker_args) > 2 else "")))
    branch.add(_t(f"annotation {inj.annotation[0]}={inj.annotation[1]}"))


def _placement(tree: Tree, why: WhyNotCached) -> None:
    p = why.placement
    if p is None:
        return
    if p.node_in_group is True:
        where = (f"in group {p.group}", STYLE_OK)
    elif p.node_in_group is False:
        where = (f"outside group {p.group or '(none)'}", STYLE_BAD)
    else:
        where = (f"group {p.group or '(none)'}: membership not read", STYLE_DIM)
    entry = (f"entry {p.entry_state}" if p.entry_state else "no entry", STYLE_OK if p.prepared else STYLE_WARN)
    tree.add(_t(("Node ", "bold"), f"{p.node}: ", where, ", ", entry, f" for {p.kernel_cache}"))


def _notes(tree: Tree, why: WhyNotCached) -> None:
    if why.notes:
        branch = tree.add(_t(("Why", "bold")))
        for line in why.notes:
            style = STYLE_WARN if line.startswith(("KServe adds no node affinity", "The cache became Ready")) else ""
            branch.add(_t((line, style) if style else line))
    if why.unread:
        branch = tree.add(_t(("Not read ", "bold"), ("(that part of the answer is not checked)", STYLE_DIM)))
        for line in why.unread:
            branch.add(_t((f"{WARN} {line}", STYLE_WARN)))
    if why.next_command:
        tree.add(_t(("Next ", "bold"), (why.next_command, "bold")))
