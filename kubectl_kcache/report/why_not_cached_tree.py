"""`why-not-cached` for people, answer first: the verdict (history and today), the one paragraph that says
why, the next command; then the failing gate, the decisive candidate and where the pod runs; the pod and
the other notes. `-o wide` adds every gate, the footprints and their factors, every candidate and what the
webhook adds. Names and values from the cluster are escaped (why_layout).
"""

from __future__ import annotations

from typing import TextIO

from ..explain.why_not_cached import BASIS_MANIFEST, WhyNotCached, furthest_candidate
from ..kernelcache import admission as a
from ..kernelcache import constants as c
from ..kernelcache.cold_start import PRODUCER
from .why_layout import STYLE_BAD, STYLE_DIM, STYLE_OK, STYLE_WARN, Node, Page, spans

EFFECT_WORDS = {a.NOT_CALLED: "webhook not called", a.SKIP: "no cache", a.REJECT: "pod rejected"}
BACKGROUND = "Admission ran once"  # the note every pod answer starts with: context, not the reason


def render(why: WhyNotCached, out: TextIO, *, color: bool, width: int | None, wide: bool = False) -> None:
    page = Page(out, color=color, width=width)
    g = page.g
    _headline(page, why)
    why_text, others = _why(why)
    if why_text:
        page.para("Why:", why_text)
    if why.next_command:
        page.command("Next:", why.next_command)
    page.unread(why.unread, "that part of the answer is")  # it qualifies the verdict: said before the evidence
    page.blank()
    page.tree(_today(page, why))
    _where(page, why)
    page.blank()
    _pod(page, why)
    _usage(page, why)
    for note in others:
        page.para(f"{g['warn']}" if note.startswith("KServe adds no node affinity") else "Note:", note)
    if wide:
        page.blank()
        page.tree(_gates(page, why))
        page.tree(_footprints(why))
        page.tree(_candidates(page, why))
        injection = _injection(why)
        if injection is not None:
            page.tree(injection)
    else:
        rest = _hidden(why)
        if rest:
            page.blank()
            page.line((f"-o wide adds {rest}", STYLE_DIM))
    page.write()


def _why(why: WhyNotCached) -> tuple[str, list[str]]:
    """The decisive note (the last one the story added) and the others, context first."""
    notes = list(why.notes)
    decisive = [n for n in notes if not n.startswith(BACKGROUND) and n != why.source_note]
    if not decisive:
        return _gate_story(why), notes
    main = decisive[-1]
    return main, [n for n in notes if n is not main]


def _gate_story(why: WhyNotCached) -> str:
    """Why, in one sentence, when the story has no note of its own: the gate and what stopped the cache."""
    adm = why.admission
    if adm.outcome == a.CACHED:
        return f"Today KServe's webhook would mount {adm.cached_kernel_cache} ({adm.match} match)."
    cand = furthest_candidate(adm)
    if cand is not None and cand.rejected_by:
        return (
            f"Today admission gives {_effect(why)}: the closest KernelCache, {cand.key}, fails the "
            f"{cand.rejected_by} check: {cand.detail}."
        )
    gate = adm.blocked_by
    detail = f": {gate.detail}" if gate is not None and gate.detail else ""
    return f"Today admission gives {_effect(why)}: it stops at the {why.now_blocked_by} gate{detail}."


def _headline(page: Page, why: WhyNotCached) -> None:
    g = page.g
    adm = why.admission
    parts: list[str | tuple[str, str]] = [("why-not-cached ", "bold"), f"{why.namespace}/{why.pod_name} {g['to']} "]
    history: list[str | tuple[str, str]] = []
    if why.basis == BASIS_MANIFEST:
        parts.append(("[what-if: manifest] ", STYLE_WARN))
    elif why.cached:
        history = [(f"{g['ok']} cached: {why.recorded_cache or '(KernelCache unknown)'}", f"bold {STYLE_OK}")]
    elif why.cold is not None:
        cold = why.cold
        what = (
            f"producer of {cold.kernel_cache or 'capture ' + cold.capture_key}"
            if cold.reason == PRODUCER
            else f"its revision is being captured ({cold.capture_key})"
        )
        history = [(f"{g['ok']} cold by design: {what}", f"bold {STYLE_OK}")]
    else:
        history = [(f"{g['no']} not cached", f"bold {STYLE_BAD}")]
    if why.denied:  # the worst news first: the next pod of this workload is not created
        subject = "this pod" if why.basis == BASIS_MANIFEST else "a replacement pod"
        parts += [
            (f"{g['no']} {subject} would be denied by the webhook", f"bold {STYLE_BAD}"),
            f" (blocked by {why.now_blocked_by})",
        ]
        if history:
            parts += ["; at creation: ", *history]
        page.line(*parts)
        return
    if history:
        parts += [*history, "; "]
    now = adm.cached_kernel_cache
    if now:
        parts += ["now: ", (f"{g['ok']} {now}", STYLE_OK), f" ({adm.match} match)"]
    else:
        parts += ["now: ", (f"{g['no']} {_effect(why)}", STYLE_BAD), f" (blocked by {why.now_blocked_by})"]
    page.line(*parts)


def _effect(why: WhyNotCached) -> str:
    gate = why.admission.blocked_by
    return EFFECT_WORDS.get(gate.effect, why.admission.outcome) if gate is not None else why.admission.outcome


def _gate_label(page: Page, gate: a.Gate, first: bool) -> list[tuple[str, str]]:
    mark, style = page.mark(gate.passed)
    label = spans((f"{mark} {gate.id}", style), f"  {gate.detail}")
    if gate.effect:
        label += spans(("  [", STYLE_DIM), (EFFECT_WORDS.get(gate.effect, gate.effect), style), ("]", STYLE_DIM))
    if first:
        label += spans((f"  {page.g['back']} first failure", f"bold {STYLE_BAD}"))
    return label


def _decisive(why: WhyNotCached) -> a.Candidate | None:
    adm = why.admission
    return adm.winner if adm.winner is not None else furthest_candidate(adm)


def _today(page: Page, why: WhyNotCached) -> Node:
    g = page.g
    adm = why.admission
    if adm.outcome == a.CACHED:
        root = Node(
            spans(("Today ", "bold"), (f"{g['ok']} {adm.cached_kernel_cache}", STYLE_OK), f" ({adm.match} match)")
        )
    else:
        root = Node(
            spans(("Today ", "bold"), (f"{g['no']} {_effect(why)}", STYLE_BAD), f": blocked by {why.now_blocked_by}")
        )
        gate = adm.blocked_by
        if gate is not None:
            root.children.append(Node(_gate_label(page, gate, True)))
        denial = a.denial_message(adm)
        if denial:
            root.add((denial, STYLE_BAD))
    cand = _decisive(why)
    if cand is not None:
        root.children.append(_candidate(page, why, cand))
    return root


def _candidate(page: Page, why: WhyNotCached, cand: a.Candidate) -> Node:
    g = page.g
    adm = why.admission
    if adm.winner is not None and cand.key == adm.winner.key:
        node = Node(
            spans(
                (f"{g['ok']} {cand.key}", STYLE_OK), f"  {cand.detail}", (f"  {g['back']} selected", f"bold {STYLE_OK}")
            )
        )
    elif cand.rejected_by:
        node = Node(spans((f"{g['no']} {cand.key}", STYLE_BAD), (f"  {cand.rejected_by}", "bold"), f": {cand.detail}"))
    else:
        node = Node(spans((f"- {cand.key}", STYLE_DIM), f"  {cand.detail}"))
    for line in cand.evidence:
        node.add((line, STYLE_WARN))
    for e in cand.entries:
        stale = cand.kernel_cache is not None and not a.entry_matches_cache(e.entry, cand.kernel_cache)
        node.add(
            f"{e.node}: {e.entry.state or '(no state)'}",
            (f"  lastUpdate {e.entry.last_update}" if e.entry.last_update else "", STYLE_DIM),
            ("  (image or footprints differ from the KernelCache's)" if stale else "", STYLE_WARN),
        )
    return node


def _where(page: Page, why: WhyNotCached) -> None:
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
    page.line(("Node ", "bold"), f"{p.node}: ", where, ", ", entry, f" for {p.kernel_cache}")


def _pod(page: Page, why: WhyNotCached) -> None:
    g = page.g
    where = f" on node {why.node}" if why.node else " (not scheduled)"
    when = f", created {why.created}" if why.created else ""
    label = "Manifest pod " if why.basis == BASIS_MANIFEST else "Pod "
    page.line(
        (label, "bold"),
        f"{why.namespace}/{why.pod_name}",
        where,
        when,
        f" (InferenceService {why.isvc})" if why.isvc else "",
    )
    if why.basis == BASIS_MANIFEST:
        return
    if why.cached:
        page.line(
            ("At creation ", "bold"),
            (f"{g['ok']} got {why.recorded_cache or 'a cache'}", STYLE_OK),
            f" (annotation {c.ANNOTATION_USAGE}, init container {c.LINKER_CONTAINER}, volume {c.SOURCE_VOLUME})",
        )
    else:
        page.line(
            ("At creation ", "bold"),
            (f"{g['no']} no cache", STYLE_BAD),
            f": no {c.ANNOTATION_USAGE} annotation, no {c.LINKER_CONTAINER} init container (a miss leaves "
            "no other record)",
        )


USAGE_SHOWN = 5  # pods named on the Used by line; the rest are counted


def _usage(page: Page, why: WhyNotCached) -> None:
    """Which pods use the pod's KernelCache and on which nodes (status.usage), and what each of their
    KernelCacheNodes counts (totalPodsUsing, over every cache on the node)."""
    u = why.usage
    if not u:
        return
    pods = u["pods"]
    if not pods:
        page.line(
            ("Used by ", "bold"),
            f"no pod: status.usage of KernelCache {u['kernelCache']} lists none (KServe "
            "counts running, scheduled pods of its namespace carrying its usage annotation)",
        )
        return
    named = ", ".join(f"{p['name']} on {p['node'] or '(no node)'}" for p in pods[:USAGE_SHOWN])
    more = f" and {len(pods) - USAGE_SHOWN} more" if len(pods) > USAGE_SHOWN else ""
    page.line(
        ("Used by ", "bold"),
        f"{len(pods)} pod{'s' if len(pods) != 1 else ''} of KernelCache "
        f"{u['kernelCache']} (status.usage): {named}{more}",
    )
    counts = u["totalPodsUsingByNode"]
    if counts:
        page.line(
            ("Nodes ", "bold"),
            "pods using any cache (KernelCacheNode totalPodsUsing): "
            + ", ".join(f"{node} {n}" for node, n in counts.items()),
        )


def _hidden(why: WhyNotCached) -> str:
    """What `-o wide` would add, in words (nothing when there is nothing more)."""
    adm = why.admission
    shown = adm.blocked_by is not None
    others = sum(1 for gate in adm.gates if gate is not adm.blocked_by)
    parts = [f"{others} other gates" if shown else f"all {others} gates"] if others else []
    if adm.identity is not None:
        parts.append(f"the footprints and their {len(adm.identity.factors)} factors")
    rest = len(adm.candidates) - (1 if _decisive(why) is not None else 0)
    if rest:
        parts.append(f"{rest} other candidate{'s' if rest != 1 else ''}")
    if adm.injection is not None and adm.outcome == a.CACHED:
        parts.append("what the webhook adds")
    if not parts:
        return ""
    return (", ".join(parts[:-1]) + " and " + parts[-1]) if len(parts) > 1 else parts[0]


def _gates(page: Page, why: WhyNotCached) -> Node:
    root = Node(spans(("Gates", "bold"), " (in KServe's order; ? = not checked)"))
    first = why.admission.blocked_by
    for gate in why.admission.gates:
        root.children.append(Node(_gate_label(page, gate, first is not None and gate is first)))
    return root


def _footprints(why: WhyNotCached) -> Node:
    ident = why.admission.identity
    root = Node(spans(("Footprints", "bold")))
    if ident is None:
        root.add(("not computed (see the gates model-source, runtime-container, runtime-image)", STYLE_DIM))
        return root
    root.add(f"workload      {ident.workload_footprint or '(none: the image is not pinned by digest)'}")
    root.add(f"compatibility {ident.compatibility_footprint}")
    factors = root.add(f"factors ({len(ident.factors)})")
    for key, value in ident.factors.items():
        factors.add(f"{key}={value}")
    return root


def _candidates(page: Page, why: WhyNotCached) -> Node:
    adm = why.admission
    root = Node(spans(("Candidates", "bold"), f" ({len(adm.candidates)})"))
    if not adm.candidates:
        root.add((f"no KernelCache in namespace {why.namespace} and none elsewhere matches the pod", STYLE_DIM))
    for cand in adm.candidates:
        root.children.append(_candidate(page, why, cand))
    return root


def _injection(why: WhyNotCached) -> Node | None:
    inj = why.admission.injection
    if inj is None or why.admission.outcome != a.CACHED:
        return None
    root = Node(spans(("The webhook adds", "bold")))
    for v in inj.volumes:
        what = f"image {v.image_reference}" if v.image_reference else v.source
        root.add(f"volume {v.name}: {what}")
    for m in inj.mounts:
        root.add(f"mount {m.name} at {m.path} in {m.container}{' (read-only)' if m.read_only else ''}")
    linker = "init container" if inj.linker_added else "existing init container"
    root.add(
        f"{linker} {c.LINKER_CONTAINER} ({inj.linker_image}): links {' -> '.join(inj.linker_args[:2])}"
        + (f" (+{len(inj.linker_args) // 2 - 1} more)" if len(inj.linker_args) > 2 else "")
    )
    root.add(f"annotation {inj.annotation[0]}={inj.annotation[1]}")
    return root
