"""Node-group membership: a node belongs to a group when it carries every selector label with that value.

`selector_matches` is the rule; `LabelIndex` answers it for many nodes at once (the nodes carrying each
key=value pair, intersected), so that a fleet's membership costs O(labels + members), not O(nodes x groups).
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable, Mapping, Sequence

import msgspec

from ..objects import LabelSelector, Node, NodeGroup, SelectorRequirement


def selector_matches(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    """KServe's rule (nodegroup.MatchingGroups): every label equal. An empty selector therefore matches every
    node, as in KServe; the CRD forbids it and the node reconciler aborts on it (membership.py)."""
    return all(k in labels and labels[k] == v for k, v in selector.items())


class LabelIndex:
    """An inverted index of the nodes' labels: key -> value -> the positions (in `nodes`, ascending) of the
    nodes carrying key=value. A key is indexed the first time a selector asks for it, in one pass over the
    nodes, so only selector keys are ever indexed."""

    def __init__(self, nodes: Sequence[Node]):
        self.nodes = nodes
        self._values: dict[str, dict[str, list[int]]] = {}

    def values_of(self, key: str) -> dict[str, list[int]]:
        """value -> positions of the nodes with label `key` set to it."""
        out = self._values.get(key)
        if out is None:
            out = {}
            for i, node in enumerate(self.nodes):
                labels = node.labels
                if key in labels:
                    value = labels[key]
                    hit = out.get(value)
                    if hit is None:
                        out[value] = [i]
                    else:
                        hit.append(i)
            self._values[key] = out
        return out

    def with_label(self, key: str, value: str) -> list[int]:
        return self.values_of(key).get(value, [])

    def with_key(self, key: str) -> list[int]:
        """Positions of the nodes that carry `key`, whatever its value (ascending)."""
        found = self.values_of(key).values()
        return sorted(i for hit in found for i in hit) if len(found) > 1 else next(iter(found), [])

    def matching(self, selector: Mapping[str, str]) -> Sequence[int]:
        """Positions of the nodes `selector_matches` accepts, ascending: the intersection of each pair's nodes,
        smallest first. An empty selector matches every node, as `selector_matches` (and KServe) says."""
        if not selector:
            return range(len(self.nodes))
        hits = sorted((self.with_label(k, v) for k, v in selector.items()), key=len)
        if len(hits) == 1 or not hits[0]:
            return hits[0]
        found = set(hits[0])
        for more in hits[1:]:
            found.intersection_update(more)
            if not found:
                return []
        return sorted(found)

    def near(self, selector: Mapping[str, str]) -> list[int]:
        """Positions of the nodes carrying some but not all of the selector's pairs (key and value right)."""
        hits: dict[int, int] = {}
        for k, v in selector.items():
            for i in self.with_label(k, v):
                hits[i] = hits.get(i, 0) + 1
        return sorted(i for i, n in hits.items() if n < len(selector))

    @property
    def keys(self) -> CarriedKeys:
        """The label keys some node carries, as a container (`key in index.keys`)."""
        return CarriedKeys(self)

    def with_keys(self, keys: Iterable[str]) -> list[int]:
        """Positions of the nodes that carry every key (any values)."""
        sets = sorted((self.with_key(k) for k in keys), key=len)
        if not sets:
            return list(range(len(self.nodes)))
        found = set(sets[0])
        for more in sets[1:]:
            found.intersection_update(more)
        return sorted(found)


class CarriedKeys(Container[str]):
    """`key in keys`: whether some node of the index carries the label key."""

    def __init__(self, index: LabelIndex):
        self._index = index

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and bool(self._index.values_of(key))


def matching_groups(labels: Mapping[str, str], groups: Iterable[NodeGroup]) -> list[NodeGroup]:
    """The groups whose selector the labels satisfy, sorted by name as KServe sorts them."""
    return sorted((g for g in groups if selector_matches(g.node_selector, labels)), key=lambda g: g.name)


class LabelMismatch(msgspec.Struct, frozen=True):
    """How a node's labels miss a selector: labels it lacks, and labels it has with another value."""

    missing: Mapping[str, str]
    different: Mapping[str, tuple[str, str]]  # key -> (wanted, actual)

    @property
    def wanted(self) -> dict[str, str]:
        """Every selector label the node does not satisfy, with the value the selector wants."""
        out = dict(self.missing)
        out.update({k: w for k, (w, _) in self.different.items()})
        return dict(sorted(out.items()))

    @property
    def count(self) -> int:
        return len(self.missing) + len(self.different)


def label_mismatch(selector: Mapping[str, str], labels: Mapping[str, str]) -> LabelMismatch:
    missing = {k: v for k, v in sorted(selector.items()) if k not in labels}
    different = {k: (v, labels[k]) for k, v in sorted(selector.items()) if k in labels and labels[k] != v}
    return LabelMismatch(missing, different)


def near_misses(group: NodeGroup, nodes: Iterable[Node] | LabelIndex) -> list[tuple[Node, LabelMismatch]]:
    """Nodes that carry some but not all of the group's selector labels (key and value both right). Given a
    LabelIndex, only the nodes carrying one of the pairs are looked at."""
    selector = group.node_selector
    candidates = [nodes.nodes[i] for i in nodes.near(selector)] if isinstance(nodes, LabelIndex) else nodes
    out = []
    for node in candidates:
        mm = label_mismatch(selector, node.labels)
        if 0 < mm.count < len(selector):
            out.append((node, mm))
    return sorted(out, key=lambda x: (x[1].count, x[0].name))


def label_selector_matches(selector: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    """metav1.LabelSelector semantics: matchLabels all equal and every expression true; an unset or empty
    selector matches everything. An unknown operator matches nothing (the API server rejects it anyway)."""
    if selector is None:
        return True
    if any(labels.get(k) != v for k, v in selector.match_labels.items()):
        return False
    for req in selector.match_expressions:
        present = req.key in labels
        if req.operator == "In":
            ok = present and labels[req.key] in req.values
        elif req.operator == "NotIn":
            ok = not present or labels[req.key] not in req.values
        elif req.operator == "Exists":
            ok = present
        elif req.operator == "DoesNotExist":
            ok = not present
        else:
            ok = False
        if not ok:
            return False
    return True


def describe_label_selector(selector: LabelSelector | None) -> str:
    """A selector as kubectl writes it (`a=b,c notin (d),!e`); "(everything)" when unset or empty."""
    if selector is None or (not selector.match_labels and not selector.match_expressions):
        return "(everything)"
    parts = [f"{k}={v}" for k, v in sorted(selector.match_labels.items())]
    for req in selector.match_expressions:
        values = ",".join(req.values)
        parts.append(
            {
                "In": f"{req.key} in ({values})",
                "NotIn": f"{req.key} notin ({values})",
                "Exists": req.key,
                "DoesNotExist": f"!{req.key}",
            }.get(req.operator, f"{req.key} {req.operator} ({values})")
        )
    return ",".join(parts)


_SET_TERM = re.compile(r"^\s*([^\s!=(),]+)\s+(in|notin)\s+\(([^()]*)\)\s*$")
_EQ_TERM = re.compile(r"^\s*([^\s!=(),]+)\s*(==|=|!=)\s*([^\s!=(),]*)\s*$")
_KEY_TERM = re.compile(r"^\s*(!?)\s*([^\s!=(),]+)\s*$")


def parse_label_selector(text: str) -> LabelSelector:
    """A label selector as kubectl's `-l` takes it (`a=b,c!=d,e,!f,g in (h,i),j notin (k)`), the one parser of
    every `-l`; ValueError naming the term it cannot read, or the key or value kubectl would refuse (offline no
    API server checks them)."""
    if not text.strip():
        return LabelSelector()
    terms: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):  # commas inside `in (...)` do not separate terms
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    labels: dict[str, str] = {}
    exprs: list[SelectorRequirement] = []
    for term in terms:
        if m := _SET_TERM.match(term):
            values = tuple(v.strip() for v in m.group(3).split(",") if v.strip())
            if not values:  # kubectl's words
                raise ValueError(
                    f"invalid label selector {term.strip()!r}: for 'in', 'notin' operators, values set can't be empty"
                )
            exprs.append(
                SelectorRequirement(key=m.group(1), operator="In" if m.group(2) == "in" else "NotIn", values=values)
            )
        elif m := _EQ_TERM.match(term):
            if m.group(2) == "!=":
                exprs.append(SelectorRequirement(key=m.group(1), operator="NotIn", values=(m.group(3),)))
            elif m.group(1) in labels and labels[m.group(1)] != m.group(3):
                exprs.append(SelectorRequirement(key=m.group(1), operator="In", values=(m.group(3),)))
            else:
                labels[m.group(1)] = m.group(3)
        elif m := _KEY_TERM.match(term):
            exprs.append(SelectorRequirement(key=m.group(2), operator="DoesNotExist" if m.group(1) else "Exists"))
        else:
            raise ValueError(
                f"cannot read label selector term {term.strip()!r} (examples: app=x, tier!=db, gpu, "
                "!legacy, env in (prod,staging))"
            )
    for key, value in labels.items():
        _check_term(key, (value,))
    for req in exprs:
        _check_term(req.key, req.values)
    return LabelSelector(match_labels=labels, match_expressions=tuple(exprs))


def _check_term(key: str, values: tuple[str, ...]) -> None:
    """kubectl's labels.Parse: a qualified-name key and label values."""
    from ..apivalidation import go_quote, label_value_errors, qualified_name_errors

    problems = [f"key {go_quote(key)}: {e}" for e in qualified_name_errors(key)]
    problems += [f"value {go_quote(v)}: {e}" for v in values for e in label_value_errors(v)]
    if problems:
        raise ValueError(f"invalid label selector: {problems[0]}")
