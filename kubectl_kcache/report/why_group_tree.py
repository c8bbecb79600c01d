"""`why-group` for people, answer first: the verdict, the one paragraph that says why, the next command; then
the outcome with KServe's exact Warning event and the decisive step, the node, the groups, the requested
and default groups, the KernelCache, drift and traps. `-o wide` adds the pod, the capture and its session
and every step. Names and values from the cluster are escaped (why_layout); a command is never drawn
inside the tree's guides.
"""

from __future__ import annotations

from typing import TextIO

from ..explain.why_group import BASIS_CAPTURE, BASIS_POD, BASIS_WHAT_IF, WARNING, WhyGroup
from ..kernelcache import constants as c
from .why_layout import STYLE_BAD, STYLE_DIM, STYLE_OK, STYLE_WARN, Node, Page, spans


def _quoted(value: str) -> str:
    return f'"{value}"' if value else "(none)"


def render(why: WhyGroup, out: TextIO, *, color: bool, width: int | None, wide: bool = False) -> None:
    page = Page(out, color=color, width=width)
    _headline(page, why)
    text, next_command = why.answer
    page.para("Why:", text)
    if next_command:
        page.command("Next:", next_command)
    page.blank()
    page.tree(_outcome(page, why))
    if not why.decision.ok and why.capture is not None and why.basis == BASIS_CAPTURE:
        page.command("KServe's event:", why.events_command)
    page.blank()
    page.tree(_node(page, why))
    page.tree(_groups(page, why))
    page.tree(_requested(page, why))
    page.tree(_default(page, why))
    kc = _kernel_cache(page, why)
    if kc is not None:
        page.tree(kc)
    _drift(page, why)
    if why.warnings:
        root = Node(spans((f"{page.g['warn']} Warnings", f"bold {STYLE_WARN}")))
        for step in why.warnings:
            root.add((f"{step.step}: ", "bold"), (step.detail, STYLE_WARN))
        page.tree(root)
    if wide:
        page.blank()
        for node in _pod_and_session(page, why):
            page.tree(node)
        page.tree(_steps(why))
    else:
        page.blank()
        steps = sum(1 for s in why.steps if s.outcome != WARNING)
        page.line((f"-o wide adds the pod, the capture and its session, and all {steps} steps", STYLE_DIM))
    page.write()


def _headline(page: Page, why: WhyGroup) -> None:
    g = page.g
    d = why.decision
    parts: list[str | tuple[str, str]] = [
        ("why-group ", "bold"),
        f"{why.namespace}/{why.pod_name or '(no pod)'} {g['to']} ",
    ]
    if d.ok:
        parts += [(str(d.group), f"bold {STYLE_OK}"), f" (source {d.source})"]
    else:
        parts.append((f"{g['no']} no group: {d.reason}", f"bold {STYLE_BAD}"))
    if why.basis == BASIS_WHAT_IF:
        parts.append(("  [what-if]", STYLE_WARN))
    page.line(*parts)


def _outcome(page: Page, why: WhyGroup) -> Node:
    g = page.g
    d = why.decision
    what_if = " (what-if)" if why.basis == BASIS_WHAT_IF else ""
    if d.ok:
        root = Node(
            spans(("Outcome ", "bold"), (f"{g['ok']} {d.group}", f"bold {STYLE_OK}"), f" (source {d.source}){what_if}")
        )
        if d.message:
            root.add((d.message, STYLE_DIM))
    else:
        root = Node(
            spans(
                ("Outcome ", "bold"),
                (f"{g['no']} no group selected", f"bold {STYLE_BAD}"),
                what_if,
                ": KServe creates no KernelCache and emits" if why.kernel_cache is None else ": KServe would emit",
            )
        )
        root.add((why.event or "", STYLE_BAD))
    steps = [s for s in why.steps if s.outcome != WARNING]
    if steps and steps[-1].detail != d.message:
        last = steps[-1]
        root.add(
            ("decided at step ", STYLE_DIM),
            (f"{len(steps)}. {last.step}", "bold"),
            f" {last.outcome}",
            f": {last.detail}" if last.detail else "",
        )
    return root


def _node(page: Page, why: WhyGroup) -> Node:
    g = page.g
    if not why.node:
        return Node(spans(("Node ", "bold"), ("(not recorded: the producer is not scheduled yet)", STYLE_DIM)))
    if not why.node_found:
        return Node(
            spans(
                ("Node ", "bold"),
                f"{why.node} ",
                (f"{g['no']} not found", STYLE_BAD),
                " (KServe skips matching and uses the default)",
            )
        )
    root = Node(spans(("Node ", "bold"), why.node))
    if not why.node_labels:
        root.add(("no label any group selects on", STYLE_DIM))
    for key, value in why.node_labels.items():
        root.add(f"{key}={value}")
    if why.other_label_count:
        root.add((f"(+{why.other_label_count} other labels)", STYLE_DIM))
    return root


def _groups(page: Page, why: WhyGroup) -> Node:
    g = page.g
    root = Node(spans((f"Groups ({len(why.groups)})", "bold")))
    if not why.groups:
        root.add(("no KernelCacheNodeGroup exists", STYLE_DIM))
    for fit in why.groups:
        selector = ", ".join(f"{k}={v}" for k, v in sorted(fit.selector.items()))
        chosen = (f"  {g['back']} selected", f"bold {STYLE_OK}") if fit.name == why.decision.group else ""
        if fit.matches:
            node = root.add((f"{g['ok']} {fit.name}", STYLE_OK), f"  matches ({selector})", chosen)
        elif why.node_found:
            missing = ", ".join(f"{k}={v}" for k, v in fit.missing_labels.items())
            node = root.add((f"{g['no']} {fit.name}", STYLE_BAD), f"  missing {missing}", chosen)
        else:
            node = root.add((f"- {fit.name}", STYLE_DIM), f"  ({selector}; no node to match)", chosen)
        if fit.untolerated_taints:
            node.add((f"untolerated taints: {', '.join(fit.untolerated_taints)}", STYLE_WARN))
    return root


def _exists(page: Page, name: str, why: WhyGroup) -> list[str | tuple[str, str]]:
    g = page.g
    found = any(fit.name == name for fit in why.groups)
    return [f'"{name}" ', (f"{g['ok']} exists", STYLE_OK) if found else (f"{g['no']} not found", STYLE_BAD)]


def _requested(page: Page, why: WhyGroup) -> Node:
    name = why.requested_group
    parts: list[str | tuple[str, str]] = [("Requested group ", "bold"), f"({c.ANNOTATION_NODE_GROUP}): "]
    parts += _exists(page, name, why) if name else [("(none)", STYLE_DIM)]
    root = Node(spans(*parts))
    for d in why.pod_drift:
        if d.field == "requestedNodeGroup":
            root.add(
                (
                    f"pod annotation now: {_quoted(d.now)} (the session recorded {_quoted(d.recorded)}"
                    " when the pod claimed the capture; KServe never updates it)",
                    STYLE_WARN,
                )
            )
    return root


def _default(page: Page, why: WhyGroup) -> Node:
    name = why.default_group
    parts: list[str | tuple[str, str]] = [("Default ", "bold"), "(defaultNodeGroup): "]
    parts += _exists(page, name, why) if name else [("(not set)", STYLE_DIM)]
    root = Node(spans(*parts))
    if why.config_problem:
        root.add((f"{page.g['warn']} {why.config_problem}", STYLE_WARN))
    return root


def _kernel_cache(page: Page, why: WhyGroup) -> Node | None:
    kc = why.kernel_cache
    if kc is None:
        return Node(spans(("KernelCache ", "bold"), ("none created yet", STYLE_DIM))) if why.capture else None
    root = Node(
        spans(
            ("KernelCache ", "bold"),
            f"{kc.namespace}/{kc.name}: ",
            f"group {_quoted(kc.node_group or '')}, source {kc.selection_source or '(no annotation)'}",
        )
    )
    if not kc.group_exists:
        root.label += spans(" ", (f"{page.g['no']} group no longer exists", STYLE_BAD))
    return root


def _drift(page: Page, why: WhyGroup) -> None:
    """Drift lines; a command a line ends with is printed on its own, whole."""
    if not why.drift:
        return
    root = Node(
        spans(
            (f"{page.g['warn']} Drift", f"bold {STYLE_WARN}"), " (recorded differs from what KServe would decide now)"
        )
    )
    commands = list(why.next_commands)
    for line in why.drift:
        text, sep, cmd = line.rpartition(": kubectl ")
        if sep:
            root.add((text + ":", STYLE_WARN), " (the command below)")
            commands.append("kubectl " + cmd)
        else:
            root.add((line, STYLE_WARN))
    page.tree(root)
    for cmd in commands:
        page.command("Drift fix:", cmd)


def _pod_and_session(page: Page, why: WhyGroup) -> list[Node]:
    g = page.g
    out = []
    if why.pod is not None:
        out.append(
            Node(
                spans(
                    ("Pod ", "bold"),
                    f"{why.namespace}/{why.pod.name}",
                    f" on node {why.pod.node_name}" if why.pod.node_name else " (not scheduled)",
                )
            )
        )
    elif why.pod_name:
        out.append(Node(spans(("Pod ", "bold"), f"{why.namespace}/{why.pod_name} ", (f"{g['no']} gone", STYLE_WARN))))
    basis = {
        BASIS_CAPTURE: "the session recorded on the capture",
        BASIS_POD: "predicted from the pod",
        BASIS_WHAT_IF: "what-if",
    }.get(why.basis, why.basis)
    if why.capture is None:
        branch = Node(spans(("Capture ", "bold"), ("none found", STYLE_DIM), f"  (basis: {basis})"))
    else:
        branch = Node(spans(("Capture ", "bold"), f"{why.capture.namespace}/{why.capture.name}", f"  (basis: {basis})"))
        s = why.capture.active_session
        if s is None:
            branch.add(("activeSession: (none yet)", STYLE_DIM))
        else:
            branch.add(
                f"activeSession: id {s.id or '(none)'}, pod {s.pod_name or '(none)'}, "
                f"node {s.node_name or '(not recorded)'}, "
                f"requestedNodeGroup {_quoted(s.requested_node_group)}"
            )
    if why.basis != BASIS_CAPTURE and why.session is not None:
        s = why.session
        branch.add(
            ("decided from: ", "bold"),
            f"node {s.node_name or '(none)'}, requestedNodeGroup {_quoted(s.requested_node_group)}",
        )
    out.append(branch)
    return out


def _steps(why: WhyGroup) -> Node:
    root = Node(spans(("Steps", "bold")))
    for i, step in enumerate((s for s in why.steps if s.outcome != WARNING), start=1):
        root.add(f"{i}. ", (step.step, "bold"), f" {step.outcome}", f": {step.detail}" if step.detail else "")
    return root
