"""What why-not-ready's chains look up, indexed once per snapshot and job namespace (-A explains thousands of
caches): the cache-level requeue gate and every node's chain read the same Jobs, pods and events."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from .. import objects as o
from ..kernelcache import constants as c
from ..kernelcache import preparation as prep
from ..kernelcache.agent_events import agent_warnings
from ..snapshot.model import ClusterSnapshot


@dataclass(frozen=True)
class ChainIndex:
    """What every chain of one snapshot looks up, indexed once (-A explains thousands of caches): agent pods and
    the agents' events by node, preparation Jobs by the KernelCache and node their labels name, their pods and
    the Job controller's events by Job."""

    agent_pods: dict[str, list[o.Pod]]
    agent_events: dict[str, list[o.Event]]
    jobs: dict[tuple[str, str, str], list[o.Job]]
    pods_by_job: dict[str, list[o.Pod]]
    events_by_job: dict[str, list[o.Event]]
    images_known: bool
    situations: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    _interned: dict[tuple[Any, ...], tuple[Any, ...]] = field(default_factory=dict, repr=False, compare=False)

    def carried(self) -> ChainIndex:
        """The same index for the next snapshot of a kept-current view; situations are asked again (they
        depend on the KernelCacheNodes too)."""
        return replace(self, situations={}, _interned={})

    def situation(self, node: o.Node, has_kcn: bool) -> tuple[Any, ...]:
        """What decides a member's chain besides its entry, when it has no Job: cordon, KernelCacheNode, agent
        pods and the agent's newest Warning (kept per node: -A asks it for every KernelCache of the group). Equal
        situations are the same tuple (-A tells them apart by identity)."""
        found = self.situations.get(node.name)
        if found is None:
            agents = tuple((p.phase, p.ready, p.meta.deleting) for p in self.agent_pods.get(node.name, ()))
            warnings = self.agent_events.get(node.name)
            found = (
                node.unschedulable,
                has_kcn,
                agents,
                (warnings[0].reason, warnings[0].message) if warnings else None,
            )
            found = self._interned.setdefault(found, found)
            self.situations[node.name] = found
        return found


def chain_index(snap: ClusterSnapshot, job_ns: str) -> ChainIndex:
    """The snapshot's index for the job namespace `job_ns`, built on first use and kept with the snapshot."""

    def build() -> ChainIndex:
        key, value = c.AGENT_POD_LABEL
        agents: dict[str, list[o.Pod]] = {}
        for pod in snap.pods_labelled(c.KSERVE_NAMESPACE, key, value):
            agents.setdefault(pod.node_name, []).append(pod)
        jobs: dict[tuple[str, str, str], list[o.Job]] = {}
        for j in snap.jobs:
            if j.meta.namespace == job_ns:
                lab = j.meta.labels
                target = (
                    lab.get(c.LABEL_JOB_CACHE_NAMESPACE, ""),
                    lab.get(c.LABEL_JOB_CACHE_NAME, ""),
                    lab.get(c.LABEL_JOB_NODE, ""),
                )
                jobs.setdefault(target, []).append(j)
        pods: dict[str, list[o.Pod]] = {}
        for p in snap.pods:
            if p.namespace == job_ns:
                name = p.meta.labels.get(prep.JOB_NAME_LABEL, p.meta.labels.get("job-name"))
                if name:
                    pods.setdefault(name, []).append(p)
        events: dict[str, list[o.Event]] = {}
        for e in snap.events:
            if e.involved_namespace == job_ns and e.involved_kind == "Job":
                events.setdefault(e.involved_name, []).append(e)
        return ChainIndex(agents, agent_warnings(snap.events), jobs, pods, events, False)

    def assemble() -> ChainIndex:
        # the lists' part is carried to the next snapshot of a kept-current view while the pods, Jobs and events
        # stay the same (a node relabelled does not rebuild it); whether any node lists its images, per snapshot
        lists = snap.derived(f"why-not-ready-lists/{job_ns}", build, on=("pods", "jobs", "events"))
        images = snap.derived(
            "why-not-ready-images-known", lambda: any(n.image_count or n.images.keys for n in snap.nodes), on=("nodes",)
        )
        return replace(lists, images_known=images, situations={}, _interned={})

    return snap.derived(f"why-not-ready-index/{job_ns}", assemble)
