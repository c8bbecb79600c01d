"""The cache step before mounting: the pod's identity (model source, runtime container and image), the
candidate KernelCaches of the node entries (Workload pass, then Compatibility) and whether each can be
loaded and mounted into the pod.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from msgspec.structs import replace

from ...objects import CacheStatus, Container, KernelCache, KernelCacheNode, Pod, Verification
from ...sharing import changed
from .. import constants as c
from ..identity import (
    CONTAINER_KSERVE,
    CONTAINER_MAIN,
    IMAGE_FLOATING,
    Identity,
    IdentityError,
    ModelSource,
    container_identity,
    model_source,
    resolve_container,
    resolve_oci_path,
    runtime_container,
    workload_ref,
)

if TYPE_CHECKING:  # kernelcache is below snapshot: the type only
    from ...snapshot.model import ClusterSnapshot
from .gates import (
    ARTIFACT,
    CACHE_CONTAINER,
    COMPATIBILITY,
    CONTAINER_PATH,
    ENTRY_MATCHES_SPEC,
    ENTRY_READY,
    FOOTPRINT,
    KERNELCACHE_EXISTS,
    MODEL_SOURCE,
    MOUNT_TYPE,
    NAMESPACE,
    OCI_PATH,
    REJECT,
    RUNTIME_CONTAINER,
    RUNTIME_IMAGE,
    VERIFICATION,
    WORKLOAD,
    Candidate,
    EntryIndex,
    Gate,
    Inputs,
    NodeEntry,
    entry_matches_cache,
)

# ---- identity --------------------------------------------------------------------------------------------


def identity_gates(pod: Pod, namespace: str) -> tuple[list[Gate], ModelSource | None, Identity | None]:
    """model-source, runtime-container and runtime-image, and the identity when all three pass."""
    try:
        workload = workload_ref(pod.meta.labels)
    except IdentityError:
        return (
            [
                Gate(g, None, f"needs the {c.LABEL_ISVC} label")
                for g in (MODEL_SOURCE, RUNTIME_CONTAINER, RUNTIME_IMAGE)
            ],
            None,
            None,
        )
    gates: list[Gate] = []

    def gate(gate_id: str, passed: bool | None, detail: str, effect: str = "", message: str = "") -> None:
        gates.append(Gate(gate_id, passed, detail, effect, message))

    model = model_source(workload.kind, pod.meta.annotations)
    if model.known:
        gate(MODEL_SOURCE, True, f"model {model.uri} (modelURIHash {model.hash})")
    else:
        gate(MODEL_SOURCE, False, f"{model.problem}: the webhook looks for no cache")
    try:
        container = runtime_container(workload.kind, pod.spec_containers)
    except IdentityError as exc:
        names = ", ".join(x.name for x in pod.spec_containers) or "none"
        gate(
            RUNTIME_CONTAINER,
            False,
            f"no container named {CONTAINER_KSERVE} or {CONTAINER_MAIN} "
            f"(containers: {names}): the webhook rejects the pod with HTTP "
            f'500 "{exc}"',
            message=str(exc),
        )
        gate(RUNTIME_IMAGE, None, "no runtime container")
        return gates, model, None
    gate(RUNTIME_CONTAINER, True, f"runtime container {container.name}")
    # Build validates the image before the model hash (unreachable through the webhook) matters
    probe = model.hash or "sha256:" + "0" * 64
    try:
        ident = container_identity(namespace, workload, container, probe)
    except IdentityError as exc:
        detail = f'image {container.image!r}: the webhook rejects the pod with HTTP 500 "{exc}"'
        gate(RUNTIME_IMAGE, False, detail, effect=REJECT, message=str(exc))
        return gates, model, None
    if ident.image_class == IMAGE_FLOATING:
        gate(
            RUNTIME_IMAGE,
            False,
            f"image {ident.runtime_image} is floating (latest or untagged): "
            "no footprint, so the webhook looks for no cache; pin a tag (a "
            "Compatibility match) or a digest (also a Workload match)",
        )
        return gates, model, None
    kinds = "workload and compatibility footprints" if ident.workload_footprint else "a compatibility footprint only"
    gate(RUNTIME_IMAGE, True, f"image {ident.runtime_image} is pinned by {ident.image_class}: {kinds}")
    return gates, model, ident if model.known else None


# ---- candidates ------------------------------------------------------------------------------------------


def _short(ref: str) -> str:
    """An image digest reference shortened for people: @sha256:4d61ab2c..."""
    at = ref.rfind("@sha256:")
    return f"@sha256:{ref[at + 8 : at + 20]}..." if at >= 0 else ref or "(empty)"


def _fp(value: str) -> str:
    return f"{value[:19]}..." if value else "(none)"


def collect_entries(
    kcns: Iterable[KernelCacheNode], keys: set[tuple[str, str]] | None = None
) -> dict[tuple[str, str], list[NodeEntry]]:
    """Every entry with a KernelCache name (of `keys` only, when given), by (namespace, name), nodes in name
    order."""
    out: dict[tuple[str, str], list[NodeEntry]] = {}
    for kcn in sorted(kcns, key=lambda k: k.name):
        for e in kcn.entries:
            if e.ref.name and (keys is None or (e.ref.namespace, e.ref.name) in keys):
                out.setdefault((e.ref.namespace, e.ref.name), []).append(NodeEntry(kcn.name, e))
    return out


def _keys_of(kcn: KernelCacheNode) -> Iterable[tuple[tuple[str, str], CacheStatus]]:
    """(the KernelCache's (namespace, name), the entry) of each entry, without building the entries."""
    cache = kcn.status.cache_status if kcn.status is not None else None
    for key, e in (cache or {}).items():
        ref = e.ref_under(key)
        if ref.name:
            yield (ref.namespace, ref.name), e


def _scoped(
    kcns: Sequence[KernelCacheNode], namespace: str, compatibility: str
) -> tuple[list[KernelCacheNode], set[tuple[str, str]]]:
    """The KernelCacheNodes and KernelCaches one pod's decision can use: the namespace's KernelCaches, and
    another namespace's with a Ready entry of the pod's compatibility footprint (the answer names them)."""
    keys: set[tuple[str, str]] = set()
    elsewhere: set[tuple[str, str]] = set()
    nodes: list[KernelCacheNode] = []
    for kcn in kcns:
        mine = False
        for key, e in _keys_of(kcn):
            if key[0] == namespace:
                keys.add(key)
                mine = True
            elif (
                compatibility
                and e.state == c.ENTRY_READY
                and e.footprints is not None
                and e.footprints.compatibility == compatibility
            ):
                elsewhere.add(key)
        if mine:
            nodes.append(kcn)
    if elsewhere:  # every entry of those, on any node
        nodes = [k for k in kcns if any(key in keys or key in elsewhere for key, _ in _keys_of(k))]
    return nodes, keys | elsewhere


def index_entries(kcns: Sequence[KernelCacheNode], namespace: str | None = None, compatibility: str = "") -> EntryIndex:
    """The entries' index for every decision against `kcns`; with `namespace`, for the decisions of that
    namespace's pods of the `compatibility` footprint only (the same answer for them, without building every
    entry of a large fleet)."""
    keys = None
    if namespace is not None:
        kcns, keys = _scoped(kcns, namespace, compatibility)
    by_ref = collect_entries(kcns, keys)
    ready = {k: r for k, v in by_ref.items() if (r := [e for e in v if e.entry.state == c.ENTRY_READY])}
    ready_in: dict[str, list[tuple[str, str]]] = {}
    refs_in: dict[str, set[tuple[str, str]]] = {}
    by_compat: dict[str, set[tuple[str, str]]] = {}
    for key in by_ref:
        refs_in.setdefault(key[0], set()).add(key)
    for key, entries in ready.items():
        ready_in.setdefault(key[0], []).append(key)
        for e in entries:
            if e.entry.footprints.compatibility:
                by_compat.setdefault(e.entry.footprints.compatibility, set()).add(key)
    return EntryIndex(
        by_ref,
        ready,
        {ns: sorted(v) for ns, v in ready_in.items()},
        refs_in,
        {fp: sorted(v) for fp, v in by_compat.items()},
    )


def update_entries(previous: EntryIndex, was: Sequence[KernelCacheNode], kcns: Sequence[KernelCacheNode]) -> EntryIndex:
    """`index_entries(kcns)`, from `previous` (the index of `was`, every KernelCacheNode): only the KernelCaches
    with an entry on a KernelCacheNode that changed are indexed again (an agent's status write, in the monitor)."""
    gone, came = changed(was, kcns)
    if (len(gone) + len(came)) * 10 > len(kcns):
        return index_entries(kcns)
    nodes = {k.name for k in (*gone, *came)}
    keys = {key for k in (*gone, *came) for key, _ in _keys_of(k)}
    by_ref = dict(previous.by_ref)
    ready = dict(previous.ready)
    for key in keys:
        kept = [e for e in by_ref.get(key, ()) if e.node not in nodes]
        added = [NodeEntry(k.name, e) for k in came for e in k.entries if (e.ref.namespace, e.ref.name) == key]
        # (node names are unique and a node's entries keep their order: the order collect_entries gives)
        entries = sorted(kept + added, key=lambda e: e.node)
        if entries:
            by_ref[key] = entries
        else:
            by_ref.pop(key, None)
        now_ready = [e for e in entries if e.entry.state == c.ENTRY_READY]
        if now_ready:
            ready[key] = now_ready
        else:
            ready.pop(key, None)
    namespaces = {key[0] for key in keys}
    ready_in = {ns: v for ns, v in previous.ready_in.items() if ns not in namespaces}
    refs_in = {ns: v for ns, v in previous.refs_in.items() if ns not in namespaces}
    for key in by_ref:
        if key[0] in namespaces:
            refs_in.setdefault(key[0], set()).add(key)
    for key in ready:
        if key[0] in namespaces:
            ready_in.setdefault(key[0], []).append(key)
    fps = {e.entry.footprints.compatibility for key in keys for e in previous.ready.get(key, ())}
    fps |= {e.entry.footprints.compatibility for key in keys for e in ready.get(key, ())}
    fps.discard("")
    by_compat = dict(previous.by_compatibility)
    for fp in fps:
        mine = {k for k in by_compat.get(fp, ()) if k not in keys}
        mine |= {k for k in keys if any(e.entry.footprints.compatibility == fp for e in ready.get(k, ()))}
        if mine:
            by_compat[fp] = sorted(mine)
        else:
            by_compat.pop(fp, None)
    return EntryIndex(
        by_ref,
        ready,
        {ns: sorted(v) if ns in namespaces else v for ns, v in ready_in.items()},
        refs_in,
        by_compat,
    )


def entries_of(snapshot: ClusterSnapshot) -> EntryIndex:
    """The index of every KernelCacheNode's entries, kept with the snapshot: built once per change of the
    KernelCacheNodes when the snapshot is kept current (the monitor), and then from the last one's, for the
    KernelCaches of the KernelCacheNodes that changed only (a KernelCache's entry list is the very same list
    while none of its entries changed)."""

    def index() -> EntryIndex:
        stale = snapshot.stale_derived("admission-entries")
        if stale is None:
            return index_entries(snapshot.kcns)
        return update_entries(stale[0], stale[1]["kcns"], snapshot.kcns)

    return snapshot.derived("admission-entries", index, on=("kcns",), updatable=True)


def _workload_match(ident: Identity, entries: Sequence[NodeEntry]) -> bool:
    return (
        bool(ident.workload_footprint)
        and bool(ident.compatibility_footprint)
        and any(
            e.entry.footprints.workload == ident.workload_footprint
            and e.entry.footprints.compatibility == ident.compatibility_footprint
            for e in entries
        )
    )


def _compatibility_match(ident: Identity, entries: Sequence[NodeEntry]) -> bool:
    return bool(ident.compatibility_footprint) and any(
        e.entry.footprints.compatibility == ident.compatibility_footprint for e in entries
    )


_COMPATIBILITY_KEYS = ("runtimeImage", "modelURIHash")


def _footprint_miss(
    ident: Identity, kc: KernelCache | None, entries: Sequence[NodeEntry]
) -> tuple[str, tuple[str, ...]]:
    """Why no entry's footprints match the pod's, with the compatibility factors that differ when the
    KernelCache records its factors (spec.artifact.identity.factors)."""
    workload_only = ident.workload_footprint and any(
        e.entry.footprints.workload == ident.workload_footprint for e in entries
    )
    first = entries[0].entry.footprints
    if workload_only:
        detail = (
            "the workload footprint matches but the compatibility footprint differs on every Ready entry: a "
            "runtime option or environment factor changed"
        )
    else:
        detail = (
            f"no Ready entry has the pod's footprints (pod: compatibility {_fp(ident.compatibility_footprint)}"
            f", workload {_fp(ident.workload_footprint)}; entry on {entries[0].node}: compatibility "
            f"{_fp(first.compatibility)}, workload {_fp(first.workload)})"
        )
    recorded = kc.artifact.factors if kc is not None and kc.artifact is not None else {}
    evidence: list[str] = []
    if recorded:
        mine = ident.factors
        keys = {k for k in set(mine) | set(recorded) if k in _COMPATIBILITY_KEYS or k.startswith(("option.", "env."))}
        for key in sorted(keys):
            if mine.get(key) != recorded.get(key):
                evidence.append(f"{key}: pod {mine.get(key, '(unset)')}, cache {recorded.get(key, '(unset)')}")
        if evidence:
            detail += "; differing factors: " + "; ".join(evidence)
    return detail, tuple(evidence)


def resolve_container_path(container: Container, container_path: str, oci_path: str) -> tuple[str, str]:
    """ResolveContainerPath (the Triton-aware form): an explicit path, else the first env entry of the cache
    kind's variable (VLLM_CACHE_ROOT, or TRITON_CACHE_DIR for io.triton.cache), else the default path."""
    if container_path:
        return container_path, ""
    env_name, default = (
        (c.TRITON_CACHE_ENV, c.TRITON_DEFAULT_CACHE_PATH)
        if oci_path == c.OCI_PATH_TRITON
        else (c.VLLM_CACHE_ENV, c.VLLM_DEFAULT_CACHE_PATH)
    )
    env = next((e for e in container.env if e.name == env_name), None)
    if env is None:
        return default, ""
    if env.value_from:
        return "", f"{env_name} uses valueFrom; provide containerPath explicitly"
    if not env.value:
        return "", f"{env_name} is empty; provide containerPath explicitly"
    return env.value, ""


def can_mount(kc: KernelCache, namespace: str, containers: Sequence[Container]) -> tuple[str, str] | None:
    """cacheCanMountToPod: None when the cache can mount, else (gate id, why)."""
    art = kc.artifact
    if kc.namespace != namespace:
        return NAMESPACE, f"KernelCache {kc.namespace}/{kc.name} is not in the pod's namespace {namespace}"
    if art is None or not art.image_reference:
        return ARTIFACT, "spec.artifact.imageReference is empty"
    if not art.cache_paths:
        return ARTIFACT, "spec.artifact.cachePaths is empty"
    if kc.mount_type not in ("", c.MOUNT_TYPE_OCI):
        return MOUNT_TYPE, f'spec.mountType is "{kc.mount_type}": the webhook only mounts oci caches'
    for i, path in enumerate(art.cache_paths):
        found = resolve_container(path.container_name, containers)
        if isinstance(found, str):
            return CACHE_CONTAINER, f"cachePaths[{i}]: {found}"
        oci, problem = resolve_oci_path(path.oci_path)
        if problem:
            return OCI_PATH, f"cachePaths[{i}]: {problem}"
        _, problem = resolve_container_path(found, path.container_path, oci)
        if problem:
            return CONTAINER_PATH, f"cachePaths[{i}] (container {found.name}): {problem}"
    return None


def verification_allows_use(mode: str, verification: Verification | None) -> bool:
    """kernelCacheVerificationAllowsUse: with artifactSecurity.mode "" or "none" anything goes; otherwise the
    KernelCache's status.verification must carry the same mode, state Succeeded and verified true. The raw
    mode is compared: "disabled" passes config validation but the controller records mode "none", so every
    cache is skipped."""
    if mode in c.SECURITY_MODES_ALLOWING_ANY:
        return True
    return (
        verification is not None
        and verification.mode == mode
        and verification.state == c.VERIFICATION_SUCCEEDED
        and verification.verified
    )


def _verification_text(mode: str, v: Verification | None) -> str:
    if v is None:
        return f'artifactSecurity.mode is "{mode}" but the KernelCache has no status.verification yet'
    got = f"mode {v.mode or '(none)'}, state {v.state or '(none)'}, verified {str(v.verified).lower()}"
    why = ": ".join(x for x in (v.reason, v.message) if x)
    text = f'artifactSecurity.mode is "{mode}"; status.verification is {got}{f" ({why})" if why else ""}'
    if mode == "disabled":
        text += (
            '; the webhook compares the mode as written, and the controller records mode "none" when '
            'verification is disabled, so no cache is ever used: set artifactSecurity.mode to "none"'
        )
    return text


def load_candidate(cand: Candidate, inputs: Inputs, mode: str) -> tuple[str, str, tuple[str, ...]] | None:
    """loadKernelCacheCandidate: None when the KernelCache loads, else (gate id, why, evidence)."""
    kc = cand.kernel_cache
    if kc is None:
        return (
            KERNELCACHE_EXISTS,
            (
                f"KernelCacheNode entries name KernelCache {cand.key}, which does not exist "
                "(deleted: the agents drop its entries on their next pass)"
            ),
            (),
        )
    art = kc.artifact
    if art is None or not any(entry_matches_cache(e.entry, kc) for e in cand.entries):
        e = cand.entries[0]
        spec_image = art.image_reference if art is not None else ""
        evidence = []
        for ne in cand.entries:
            if art is not None and ne.entry.image_reference != spec_image:
                evidence.append(
                    f"entry on {ne.node} is Ready but its imageReference is "
                    f"{_short(ne.entry.image_reference)}, the KernelCache says {_short(spec_image)}"
                )
            elif art is not None:
                evidence.append(f"entry on {ne.node} is Ready but its footprints differ from the KernelCache's")
        detail = evidence[0] if evidence else f"the KernelCache has no artifact (entry on {e.node})"
        if len(evidence) > 1:
            detail += f" (and {len(evidence) - 1} more entries alike)"
        return ENTRY_MATCHES_SPEC, detail + ": the node's agent has not prepared the current artifact", tuple(evidence)
    problem = can_mount(kc, inputs.namespace, inputs.pod.spec_containers)
    if problem is not None:
        return problem[0], problem[1], ()
    if not verification_allows_use(mode, kc.verification):
        return VERIFICATION, _verification_text(mode, kc.verification), ()
    return None


def _candidate_base(
    key: tuple[str, str], entries: Sequence[NodeEntry], kcs: Mapping[str, KernelCache], **fields: Any
) -> Candidate:
    """The KernelCache `key` (namespace, name) with its entries and the KernelCache itself (None when absent)."""
    return Candidate(key[0], key[1], tuple(entries), kcs.get(f"{key[0]}/{key[1]}"), **fields)


def _miss(key: tuple[str, str], ident: Identity, index: EntryIndex, kc: KernelCache | None, details: bool) -> Candidate:
    """A KernelCache none of whose Ready entries has the pod's footprints; without `details`, the same
    object for every decision."""
    known = index.misses.get(key) if not details else None
    if known is not None and known.kernel_cache is kc:
        return known
    entries = tuple(index.ready[key])
    detail, evidence = _footprint_miss(ident, kc, entries) if details else ("", ())
    miss = Candidate(key[0], key[1], entries, kc, rejected_by=FOOTPRINT, detail=detail, evidence=evidence)
    if not details:
        index.misses[key] = miss
    return miss


def candidates(inputs: Inputs, ident: Identity | None) -> tuple[list[Candidate], Candidate | None]:
    """Every KernelCache worth showing with its first failing gate, and the winner KServe picks."""
    ns = inputs.namespace
    index = (
        inputs.entries
        if inputs.entries is not None
        else index_entries(inputs.kcns, ns, ident.compatibility_footprint if ident is not None else "")
    )
    kserve = index.ready_in.get(ns, [])
    kcs = inputs.kernel_caches
    cands: dict[tuple[str, str], Candidate] = {}
    winner: Candidate | None = None
    mode = inputs.config.config.artifact_security.mode if inputs.config.config is not None else "none"
    if ident is not None:
        loaded: dict[tuple[str, str], tuple[str, str, tuple[str, ...]] | None] = {}
        # both passes need a Ready entry of the pod's compatibility footprint: only those caches can match
        compatible = set(index.by_compatibility.get(ident.compatibility_footprint, ()))
        matchable = [k for k in kserve if k in compatible]
        cands = {k: _candidate_base(k, index.ready[k], kcs) for k in matchable}
        for pass_name, matches in ((WORKLOAD, _workload_match), (COMPATIBILITY, _compatibility_match)):
            for key in matchable:
                cand = cands[key]
                if cand.match is not None or not matches(ident, cand.entries):
                    continue
                if key not in loaded:
                    loaded[key] = load_candidate(cand, inputs, mode)
                problem = loaded[key]
                if problem is None:
                    cands[key] = replace(cand, match=pass_name, detail=f"{pass_name} match")
                    if winner is None:
                        winner = cands[key]
                else:
                    cands[key] = replace(
                        cand, match=pass_name, rejected_by=problem[0], detail=problem[1], evidence=problem[2]
                    )
        for key in kserve:
            found = cands.get(key)
            if found is None or found.match is None:
                cands[key] = _miss(key, ident, index, kcs.get(f"{key[0]}/{key[1]}"), inputs.miss_details)
            elif winner is not None and found.rejected_by is None and found.key != winner.key:
                cands[key] = replace(
                    found,
                    detail=f"{found.match} match, but {winner.key} comes first ({winner.match} pass, then name order)",
                )
    else:
        for key in kserve:
            cands[key] = _candidate_base(
                key, index.ready[key], kcs, evaluated=False, detail="not evaluated: the pod's footprints are unknown"
            )
    out = [cands[k] for k in kserve]
    out += _non_candidates(inputs, ident, index, set(kserve))
    return out, winner


def _non_candidates(
    inputs: Inputs, ident: Identity | None, index: EntryIndex, seen: set[tuple[str, str]]
) -> list[Candidate]:
    """The pod namespace's KernelCaches with no Ready entry, and other namespaces' caches the pod matches."""
    ns = inputs.namespace
    by_ref = index.by_ref
    out: list[Candidate] = []
    keys = {(kc.namespace, kc.name) for kc in inputs.kernel_caches.values() if kc.namespace == ns}
    keys |= index.refs_in.get(ns, set())
    for key in sorted(keys - seen):
        entries = by_ref.get(key, [])
        states = ", ".join(f"{e.node} {e.entry.state or '(no state)'}" for e in entries)
        detail = (
            f"no Ready entry on any node ({states})"
            if 0 < len(entries) <= 3
            else "no Ready entry on any node"
            if entries
            else "no KernelCacheNode has an entry for it: it is prepared on no node yet"
        )
        out.append(
            _candidate_base(key, entries, inputs.kernel_caches, rejected_by=ENTRY_READY, detail=detail, candidate=False)
        )
    if ident is None:
        return out
    # a workload match needs the compatibility footprint too: the caches with a Ready entry of the pod's
    # compatibility footprint are every match
    for key in (k for k in index.by_compatibility.get(ident.compatibility_footprint, ()) if k[0] != ns):
        ready = index.ready[key]
        if _compatibility_match(ident, ready) or _workload_match(ident, ready):
            out.append(
                _candidate_base(
                    key,
                    ready,
                    inputs.kernel_caches,
                    rejected_by=NAMESPACE,
                    candidate=False,
                    detail=f"its footprints match the pod, but it lives in namespace {key[0]}: the "
                    f"webhook only uses KernelCaches of the pod's namespace ({ns})",
                )
            )
    return out
