"""Agent placement: the pod template KServe's node reconciler gives DaemonSet kserve-kernelcachenode-agent.

One required node-affinity term per group (groups sorted by name), each with one `In [value]`
expression per selector key (keys sorted); with no group, a single term no node satisfies. Tolerations
are the de-duplicated union of the groups' tolerations, sorted by Go's json.Marshal bytes. nodeSelector
is removed. Other parts of the affinity are kept.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from ..objects import DaemonSet, NodeGroup, Toleration
from . import constants as c
from .gojson import marshal
from .taints import invalid_message, toleration_errors


def node_selector_terms(groups: Iterable[NodeGroup]) -> list[dict[str, Any]]:
    terms = []
    for group in sorted(groups, key=lambda g: g.name):
        expressions = [
            {"key": k, "operator": "In", "values": [group.node_selector[k]]} for k in sorted(group.node_selector)
        ]
        terms.append({"matchExpressions": expressions})
    if not terms:
        terms = [
            {"matchExpressions": [{"key": c.AGENT_DISABLED_KEY, "operator": "In", "values": [c.AGENT_DISABLED_VALUE]}]}
        ]
    return terms


def agent_tolerations(groups: Iterable[NodeGroup]) -> list[Toleration]:
    """The union of every group's tolerations, de-duplicated and sorted by their Go JSON encoding."""
    by_json: dict[bytes, Toleration] = {}
    for group in groups:
        for tol in group.tolerations:
            by_json.setdefault(marshal(tol.to_dict()), tol)
    return [by_json[k] for k in sorted(by_json)]


def desired_affinity(current: Mapping[str, Any] | None, groups: Iterable[NodeGroup]) -> dict[str, Any]:
    """`current` with its required node affinity replaced by the groups' terms; other parts kept."""
    affinity = copy.deepcopy(dict(current or {}))
    node_affinity = dict(affinity.get("nodeAffinity") or {})
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": node_selector_terms(groups)}
    affinity["nodeAffinity"] = node_affinity
    return affinity


class PlacementDiff(msgspec.Struct, frozen=True):
    """What differs between the DaemonSet's template and what the groups imply (empty: nothing)."""

    node_selector: bool
    affinity: bool
    tolerations: bool

    def __bool__(self) -> bool:
        return self.node_selector or self.affinity or self.tolerations

    def describe(self) -> list[str]:
        out = []
        if self.node_selector:
            out.append("the pod template has a nodeSelector (KServe removes it)")
        if self.affinity:
            out.append("the required node affinity differs from the node groups' selectors")
        if self.tolerations:
            out.append("the tolerations differ from the union of the node groups' tolerations")
        return out


def _semantic(value: Any) -> Any:
    """Normalise as apimachinery's semantic DeepEqual sees values: empty and absent lists/maps are equal."""
    if isinstance(value, Mapping):
        return {k: _semantic(v) for k, v in value.items() if v not in (None, [], {}, "")}
    if isinstance(value, list):
        return [_semantic(v) for v in value]
    return value


def placement_diff(ds: DaemonSet, groups: Iterable[NodeGroup]) -> PlacementDiff:
    """KServe's comparison: nodeSelector must be nil, affinity and tolerations equal to the desired."""
    groups = list(groups)
    want_tols = [t.to_dict() for t in agent_tolerations(groups)]
    have_tols = [t.to_dict() for t in ds.tolerations]
    return PlacementDiff(
        node_selector=bool(ds.node_selector),
        affinity=_semantic(ds.affinity or {}) != _semantic(desired_affinity(ds.affinity, groups)),
        tolerations=want_tols != have_tols,
    )


def _terms_text(terms: Any) -> str:
    out = []
    for term in terms or []:
        exprs = term.get("matchExpressions") or [] if isinstance(term, Mapping) else []
        out.append(" ".join(f"{e.get('key')} {e.get('operator')} {','.join(e.get('values') or [])}" for e in exprs))
    return " | ".join(out) or "(none)"


def placement_changes(ds: DaemonSet, groups: Iterable[NodeGroup]) -> list[str]:
    """What KServe's patch would change, as `- current` / `+ wanted` lines per part."""
    groups = list(groups)
    diff = placement_diff(ds, groups)
    out = []
    if diff.node_selector:
        out += [f"- nodeSelector: {json.dumps(dict(ds.node_selector or {}), sort_keys=True)}", "+ nodeSelector: (none)"]
    if diff.affinity:
        have = ((ds.affinity or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
        out += [
            f"- node affinity terms: {_terms_text((have or {}).get('nodeSelectorTerms'))}",
            f"+ node affinity terms: {_terms_text(node_selector_terms(groups))}",
        ]
    if diff.tolerations:
        have_t = [t.to_dict() for t in ds.tolerations]
        want_t = [t.to_dict() for t in agent_tolerations(groups)]
        out += [
            f"- tolerations: {json.dumps(have_t, separators=(',', ':'))}",
            f"+ tolerations: {json.dumps(want_t, separators=(',', ':'))}",
        ]
    return out


def placement_patch(ds: DaemonSet, groups: Iterable[NodeGroup]) -> dict[str, Any]:
    """The JSON merge patch that puts the DaemonSet's pod template in KServe's shape."""
    groups = list(groups)
    tolerations = [t.to_dict() for t in agent_tolerations(groups)]
    return {
        "spec": {
            "template": {
                "spec": {
                    "nodeSelector": None,
                    "affinity": desired_affinity(ds.affinity, groups),
                    "tolerations": tolerations or None,
                }
            }
        }
    }


class RejectedTolerations(msgspec.Struct, frozen=True):
    """Group tolerations Kubernetes rejects: KServe's DaemonSet patch (every node pass) and the group's
    preparation Jobs then fail with `api_text`."""

    problems: tuple[tuple[str, str], ...]  # (group, 'spec.tolerations[i].operator: Unsupported value: ...')
    api_text: str  # the API server's 422 text for the agent DaemonSet patch

    def __bool__(self) -> bool:
        return bool(self.problems)

    def lines(self) -> list[str]:
        return [f'KernelCacheNodeGroup "{g}" {p}' for g, p in self.problems]


def rejected_tolerations(groups: Iterable[NodeGroup]) -> RejectedTolerations:
    groups = sorted(groups, key=lambda g: g.name)
    problems = tuple(
        (g.name, e.at(f"spec.tolerations[{i}]"))
        for g in groups
        for i, tol in enumerate(g.tolerations)
        for e in toleration_errors(tol)
    )
    text = (
        invalid_message(
            "DaemonSet.apps", c.AGENT_DAEMONSET, "spec.template.spec.tolerations", agent_tolerations(groups)
        )
        if problems
        else ""
    )
    return RejectedTolerations(problems, text)
