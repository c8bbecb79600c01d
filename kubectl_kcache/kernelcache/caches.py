"""KernelCaches and their per-node entries: the group a KernelCache is prepared on, and the phase of an
entry as the node's agent reports it.

The agent includes a KernelCache on its node when the node is Ready and matches the cache's effective
group: `spec.nodeGroupRef.name`, else the configured `defaultNodeGroup`. KServe does not trim either
name here (it trims only in node-group selection for captures), so a name with surrounding white space
names no group.

Entry states are `Pending | Pulling | Extracting | Ready | Error`. The newest agent never writes
`Extracting` (a leftover of the PVC design, when a pulled artifact was then unpacked); an older agent
writes it after `Pulling` while the artifact is being unpacked, so it is counted as `Pulling`:
preparation in progress. KServe's own KernelCacheNode counts put everything but Ready and Error into
`cachesPreparing`; the phases here keep waiting (`Pending`) apart from working (`Pulling`). An entry
without a state, or with one this version does not know, is counted as `Pending` (the state the agent
gives every new entry).
"""

from __future__ import annotations

from ..objects import KernelCache
from . import constants as c

PHASE_READY = "Ready"
PHASE_PENDING = "Pending"
PHASE_PULLING = "Pulling"
PHASE_ERROR = "Error"
# The phases in the order reports show them (the `status -o json` keys).
PHASES = (PHASE_READY, PHASE_PENDING, PHASE_PULLING, PHASE_ERROR)
LEGACY_EXTRACTING = "Extracting"

_PHASE_OF_STATE = {
    c.ENTRY_READY: PHASE_READY,
    c.ENTRY_ERROR: PHASE_ERROR,
    "Pulling": PHASE_PULLING,
    LEGACY_EXTRACTING: PHASE_PULLING,
    "Pending": PHASE_PENDING,
}


def effective_group(kc: KernelCache, default_node_group: str) -> str:
    """The node group a KernelCache is prepared on: its nodeGroupRef, else defaultNodeGroup, untrimmed;
    "" when neither is set (KServe reports Error/NodeGroupNotFound)."""
    return kc.node_group or default_node_group


def entry_phase(state: str) -> str:
    """The phase a KernelCacheNode entry's state counts as: Ready, Pending, Pulling or Error."""
    return _PHASE_OF_STATE.get(state, PHASE_PENDING)


def pods_using(kc: KernelCache) -> int:
    """How many pods use a KernelCache as KServe records it (status.usage.totalPodsUsing; the list's length
    when only the list is there). KServe counts running, scheduled pods of the cache's namespace whose
    usage annotation names it."""
    usage = kc.status.usage if kc.status is not None else None
    if usage is None:
        return 0
    return usage.total_pods_using or len(usage.pods)
