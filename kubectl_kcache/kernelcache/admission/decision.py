"""The whole admission of one pod: every step's gates in order, their effects, the denial message, and the
inputs of a decision taken from a snapshot.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from msgspec.structs import replace

from ...objects import KernelCache, Pod
from .. import constants as c
from ..config import ConfigState
from ..identity import Identity, ModelSource

if TYPE_CHECKING:
    from ...snapshot.model import ClusterSnapshot
from .candidates import candidates, identity_gates
from .gates import (
    _EFFECTS,
    CANDIDATES,
    INJECTION,
    REJECT,
    SELECTION,
    WEBHOOK_REACHABLE,
    Admission,
    Candidate,
    EntryIndex,
    Gate,
    Injection,
    Inputs,
)
from .injection import InjectionError, plan_injection
from .reach import handler_gates, webhook_gates
from .sidecar_step import sidecar_gates

# ---- the whole decision -------------------------------------------------------------------------------------


def decide(inputs: Inputs) -> Admission:
    """KServe's admission of `inputs.pod` (as its controller created it: see `pre_admission`)."""
    gates, cands, ident, model, winner, injection = _cache_step(inputs)
    gates = _effects(gates)
    gates += sidecar_gates(inputs, gates, injection)
    return Admission(tuple(_effects(gates)), tuple(cands), ident, model, winner, injection)


def _cache_step(
    inputs: Inputs,
) -> tuple[list[Gate], list[Candidate], Identity | None, ModelSource | None, Candidate | None, Injection | None]:
    pod = inputs.pod
    gates = webhook_gates(inputs) + handler_gates(inputs)
    id_gates, model, ident = identity_gates(pod, inputs.namespace)
    gates += id_gates
    cands, winner = candidates(inputs, ident)

    def gate(gate_id: str, passed: bool | None, detail: str, message: str = "") -> None:
        gates.append(Gate(gate_id, passed, detail, message=message))

    n_ready = sum(1 for x in cands if x.candidate)
    if not n_ready:
        gate(
            CANDIDATES,
            False,
            f"no KernelCacheNode has a Ready entry for a KernelCache in namespace "
            f"{inputs.namespace}: nothing to select",
        )
    else:
        gate(CANDIDATES, True, f"{n_ready} KernelCache(s) with a Ready entry in namespace {inputs.namespace}")
    if ident is None:
        gate(SELECTION, None, "not evaluated: the pod's footprints are unknown")
        gate(INJECTION, None, "nothing selected")
        return gates, cands, None, model, None, None
    if winner is None:
        no_winner = "no candidate passes every check (see candidates)" if n_ready else "no candidate"
        gate(SELECTION, False if n_ready else None, no_winner)
        gate(INJECTION, None, "nothing selected")
        return gates, cands, ident, model, None, None
    gate(SELECTION, True, f"{winner.key} ({winner.match} match)")
    assert winner.kernel_cache is not None
    cfg = inputs.config.config
    try:
        injection = plan_injection(
            pod,
            winner.kernel_cache,
            cfg.default_mount_type if cfg else c.MOUNT_TYPE_OCI,
            cfg.prefetch_image if cfg else "",
        )
    except InjectionError as exc:
        gate(
            INJECTION,
            False,
            f"mounting {winner.key} fails: the webhook rejects the pod with HTTP "
            f'500 "{exc}" (it does not fall back to another KernelCache)',
            message=str(exc),
        )
        return gates, cands, ident, model, winner, None
    gate(
        INJECTION,
        True,
        f"volume {c.SOURCE_VOLUME} (image {injection.image_reference}), init "
        f"container {c.LINKER_CONTAINER}, annotation {c.ANNOTATION_USAGE}={winner.key}",
    )
    return gates, cands, ident, model, winner, injection


def _effects(gates: Iterable[Gate]) -> list[Gate]:
    """Each failed gate with its effect; the denial message of a rejecting gate stays in its detail."""
    return [replace(g, effect=g.effect or _EFFECTS[g.id]) if g.passed is False else g for g in gates]


def denial_message(admission: Admission) -> str:
    """What the API server says when the webhook rejects the pod (a FailedCreate event on its ReplicaSet)."""
    gate = admission.blocked_by
    if gate is None or gate.effect != REJECT:
        return ""
    if gate.id == WEBHOOK_REACHABLE:  # the API server's own error: the webhook was never reached
        return gate.message
    return f'admission webhook "{c.WEBHOOK_NAME}" denied the request: {gate.message}'


# ---- inputs from a snapshot ----------------------------------------------------------------------------------


def snapshot_inputs(
    snapshot: ClusterSnapshot,
    namespace: str,
    pod: Pod,
    *,
    webhook_known: bool,
    captures_known: bool,
    revision_known: bool = True,
    config: ConfigState | None = None,
    kernel_caches: Mapping[str, KernelCache] | None = None,
    entries: EntryIndex | None = None,
    miss_details: bool = True,
    webhook_endpoints: int | None = None,
) -> Inputs:
    """The decision's inputs for `pod` (as its controller creates it) from a snapshot: only the namespace's
    KernelCaches and captures, as the webhook reads them. Whether the webhook configuration and the captures
    were read is the caller's to say (`webhook_known`, `captures_known`). A caller deciding for many pods
    passes what they share: the config, the namespace's KernelCaches, `index_entries(kcns)`."""
    from ..config import read_config

    ns_obj = next((n for n in snapshot.namespaces if n.meta.name == namespace), None)
    return Inputs(
        pod=pod,
        namespace=namespace,
        config=config if config is not None else read_config(snapshot.configmap(c.KSERVE_NAMESPACE, c.CONFIGMAP_NAME)),
        kcns=snapshot.kcns,
        kernel_caches=kernel_caches
        if kernel_caches is not None
        else {k: v for k, v in snapshot.kc_by_key.items() if v.namespace == namespace},
        entries=entries,
        webhooks=snapshot.webhooks,
        webhook_known=webhook_known,
        namespace_labels=ns_obj.meta.labels if ns_obj is not None else None,
        captures={x.name: x for x in snapshot.captures if x.namespace == namespace} if captures_known else None,
        revision_known=revision_known,
        miss_details=miss_details,
        webhook_endpoints=webhook_endpoints,
    )
