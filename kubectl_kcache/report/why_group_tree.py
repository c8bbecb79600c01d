"""The `why-group` tree: the session, the node and its relevant labels, every group, the default and the
outcome (with KServe's exact Warning event when selection fails), then drift and traps.

Only the CLI imports this module, when it renders a tree; rich is imported here and nowhere below.
Every mark is also a word or a symbol, so the tree reads the same without colour.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text
from rich.tree import Tree

from ..explain.why_group import BASIS_CAPTURE, BASIS_POD, BASIS_WHAT_IF, WARNING, WhyGroup
from ..kernelcache import constants as c

OK = "✓"
NO = "✗"
WARN = "⚠"
STYLE_OK = "green"
STYLE_BAD = "red"
STYLE_WARN = "yellow"
STYLE_DIM = "dim"


def _text(*parts: str | tuple[str, str]) -> Text:
    return Text.assemble(*parts)


def _quoted(value: str) -> str:
    return f'"{value}"' if value else "(none)"


def render_tree(why: WhyGroup, console: Console) -> None:
    console.print(build_tree(why))


def build_tree(why: WhyGroup) -> Tree:
    d = why.decision
    head = _text(("why-group ", "bold"), f"{why.namespace}/{why.pod_name or '(no pod)'}", " → ")
    if d.ok:
        head.append_text(_text((str(d.group), f"bold {STYLE_OK}"), f" (source {d.source})"))
    else:
        head.append_text(_text((f"{NO} no group: {d.reason}", f"bold {STYLE_BAD}")))
    if why.basis == BASIS_WHAT_IF:
        head.append("  [what-if]", style=STYLE_WARN)
    tree = Tree(head)
    _pod_and_session(tree, why)
    _requested(tree, why)
    _node(tree, why)
    _groups(tree, why)
    _default(tree, why)
    _steps(tree, why)
    _outcome(tree, why)
    _kernel_cache(tree, why)
    if why.drift:
        branch = tree.add(_text((f"{WARN} Drift", f"bold {STYLE_WARN}"),
                                " (recorded differs from what KServe would decide now)"))
        for line in why.drift:
            branch.add(Text(line, style=STYLE_WARN))
    if why.warnings:
        branch = tree.add(Text(f"{WARN} Warnings", style=f"bold {STYLE_WARN}"))
        for step in why.warnings:
            branch.add(_text((f"{step.step}: ", "bold"), (step.detail, STYLE_WARN)))
    for line in why.next_commands:
        tree.add(_text(("Next ", "bold"), (line, "bold")))
    return tree


def _pod_and_session(tree: Tree, why: WhyGroup) -> None:
    if why.pod is not None:
        tree.add(_text(("Pod ", "bold"), f"{why.namespace}/{why.pod.name}",
                       f" on node {why.pod.node_name}" if why.pod.node_name else " (not scheduled)"))
    elif why.pod_name:
        tree.add(_text(("Pod ", "bold"), f"{why.namespace}/{why.pod_name} ", (f"{NO} gone", STYLE_WARN)))
    basis = {BASIS_CAPTURE: "the session recorded on the capture", BASIS_POD: "predicted from the pod",
             BASIS_WHAT_IF: "what-if"}.get(why.basis, why.basis)
    if why.capture is None:
        branch = tree.add(_text(("Capture ", "bold"), ("none found", STYLE_DIM), f"  (basis: {basis})"))
    else:
        branch = tree.add(_text(("Capture ", "bold"), f"{why.capture.namespace}/{why.capture.name}",
                                f"  (basis: {basis})"))
        s = why.capture.active_session
        if s is None:
            branch.add(Text("activeSession: (none yet)", style=STYLE_DIM))
        else:
            branch.add(Text(f"activeSession: id {s.id or '(none)'}, pod {s.pod_name or '(none)'}, "
                            f"node {s.node_name or '(not recorded)'}, "
                            f"requestedNodeGroup {_quoted(s.requested_node_group)}"))
    if why.basis != BASIS_CAPTURE and why.session is not None:
        s = why.session
        branch.add(_text(("decided from: ", "bold"), f"node {s.node_name or '(none)'}, "
                         f"requestedNodeGroup {_quoted(s.requested_node_group)}"))


def _requested(tree: Tree, why: WhyGroup) -> None:
    name = why.requested_group
    label = _text(("Requested group ", "bold"), f"({c.ANNOTATION_NODE_GROUP}): ")
    if not name:
        label.append("(none)", style=STYLE_DIM)
    elif any(g.name == name for g in why.groups):
        label.append_text(_text(f'"{name}" ', (f"{OK} exists", STYLE_OK)))
    else:
        label.append_text(_text(f'"{name}" ', (f"{NO} not found", STYLE_BAD)))
    branch = tree.add(label)
    for d in why.pod_drift:
        if d.field == "requestedNodeGroup":
            branch.add(Text(f"pod annotation now: {_quoted(d.now)} (the session recorded {_quoted(d.recorded)}"
                            " when the pod claimed the capture; KServe never updates it)", style=STYLE_WARN))


def _node(tree: Tree, why: WhyGroup) -> None:
    if not why.node:
        tree.add(_text(("Node ", "bold"), ("(not recorded: the producer is not scheduled yet)", STYLE_DIM)))
        return
    if not why.node_found:
        tree.add(_text(("Node ", "bold"), f"{why.node} ", (f"{NO} not found", STYLE_BAD),
                       " (KServe skips matching and uses the default)"))
        return
    branch = tree.add(_text(("Node ", "bold"), why.node))
    if not why.node_labels:
        branch.add(Text("no label any group selects on", style=STYLE_DIM))
    for key, value in why.node_labels.items():
        branch.add(f"{key}={value}")
    if why.other_label_count:
        branch.add(Text(f"(+{why.other_label_count} other labels)", style=STYLE_DIM))


def _groups(tree: Tree, why: WhyGroup) -> None:
    branch = tree.add(Text(f"Groups ({len(why.groups)})", style="bold"))
    if not why.groups:
        branch.add(Text("no KernelCacheNodeGroup exists", style=STYLE_DIM))
    for g in why.groups:
        selector = ", ".join(f"{k}={v}" for k, v in sorted(g.selector.items()))
        chosen = ("  ← selected", f"bold {STYLE_OK}") if g.name == why.decision.group else ""
        if g.matches:
            label = _text((f"{OK} {g.name}", STYLE_OK), f"  matches ({selector})", chosen)
        elif why.node_found:
            missing = ", ".join(f"{k}={v}" for k, v in g.missing_labels.items())
            label = _text((f"{NO} {g.name}", STYLE_BAD), f"  missing {missing}", chosen)
        else:
            label = _text((f"- {g.name}", STYLE_DIM), f"  ({selector}; no node to match)", chosen)
        node = branch.add(label)
        if g.untolerated_taints:
            node.add(Text(f"untolerated taints: {', '.join(g.untolerated_taints)}", style=STYLE_WARN))


def _default(tree: Tree, why: WhyGroup) -> None:
    label = _text(("Default ", "bold"), "(defaultNodeGroup): ")
    name = why.default_group
    if not name:
        label.append("(not set)", style=STYLE_DIM)
    elif any(g.name == name for g in why.groups):
        label.append_text(_text(f'"{name}" ', (f"{OK} exists", STYLE_OK)))
    else:
        label.append_text(_text(f'"{name}" ', (f"{NO} not found", STYLE_BAD)))
    branch = tree.add(label)
    if why.config_problem:
        branch.add(Text(f"{WARN} {why.config_problem}", style=STYLE_WARN))


def _steps(tree: Tree, why: WhyGroup) -> None:
    branch = tree.add(Text("Steps", style="bold"))
    for i, step in enumerate((s for s in why.steps if s.outcome != WARNING), start=1):
        branch.add(_text(f"{i}. ", (step.step, "bold"), f" {step.outcome}",
                         (f": {step.detail}" if step.detail else "")))


def _outcome(tree: Tree, why: WhyGroup) -> None:
    d = why.decision
    what_if = " (what-if)" if why.basis == BASIS_WHAT_IF else ""
    if d.ok:
        label = _text(("Outcome ", "bold"), (f"{OK} {d.group}", f"bold {STYLE_OK}"),
                      f" (source {d.source}){what_if}")
        branch = tree.add(label)
        if d.message:
            branch.add(Text(d.message, style=STYLE_DIM))
        return
    branch = tree.add(_text(("Outcome ", "bold"), (f"{NO} no group selected", f"bold {STYLE_BAD}"),
                            what_if, ": KServe creates no KernelCache and emits" if why.kernel_cache is None
                            else ": KServe would emit"))
    branch.add(Text(why.event or "", style=STYLE_BAD))
    if why.capture is not None and why.basis == BASIS_CAPTURE:
        branch.add(Text(why.events_command, style=STYLE_DIM))


def _kernel_cache(tree: Tree, why: WhyGroup) -> None:
    kc = why.kernel_cache
    if kc is None:
        if why.capture is not None:
            tree.add(_text(("KernelCache ", "bold"), ("none created yet", STYLE_DIM)))
        return
    label = _text(("KernelCache ", "bold"), f"{kc.namespace}/{kc.name}: ",
                  f"group {_quoted(kc.node_group or '')}, source {kc.selection_source or '(no annotation)'}")
    if not kc.group_exists:
        label.append_text(_text(" ", (f"{NO} group no longer exists", STYLE_BAD)))
    tree.add(label)
