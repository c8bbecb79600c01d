"""The 2,000-node fleet of issue 34, shared by the layout tests and the docs' screenshots: 50 node groups of 40
nodes (an agent pod on each), 30 NotReady nodes (one in each of 30 groups, all for the same reason), 20
cordoned, 10 without a KernelCacheNode, 200 KernelCaches (4 per group) of which 22 have an entry in Error
with the same `401 Unauthorized`, and 100 serving pods of 20 InferenceServices of which 61 use a cache.

    python3 -m tests.fleets PATH      writes it as one `kind: List` JSON file
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests import builders as b

NODES = 2000
GROUPS = 50
CACHES = 200
NOT_READY = 30
CORDONED = 20
NO_KCN = 10
IN_ERROR = 22
SERVING = 100
PODS_PER_ISVC = 5
CACHED = 61
LABEL = "kserve.example.com/kernel-cache"
POOL = "example.com/pool"
REGISTRY = "harbor.ml.example.com"
UNAUTHORIZED = (
    f'failed to pull and unpack image "{REGISTRY}/team-llm/kernel-cache@{b.digest("kc")}": failed to resolve '
    f"reference: pulling from host {REGISTRY} failed with status code [manifests]: 401 Unauthorized"
)


def node_name(i: int) -> str:
    return f"ip-10-0-{i // 100}-{i % 100 + 10}.ec2.internal"


def group_name(g: int) -> str:
    return f"pool-{g:02d}"


def selector(g: int) -> dict[str, str]:
    return {LABEL: "enabled", POOL: group_name(g)}


def not_ready(i: int) -> bool:
    return i % 51 == 0 and i // 51 < NOT_READY  # nodes 0, 51, 102, ...: one in each of the first 30 groups


def cordoned(i: int) -> bool:
    return i % 97 == 7 and i // 97 < CORDONED


def without_kcn(i: int) -> bool:
    return i % 10 == 3 and i < 10 * NO_KCN  # two in each of 5 groups


def cache_name(j: int) -> str:
    return f"model-{j:03d}-kcc-{j * 7919 % 100000:05d}"


def items() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        b.config_map({"enabled": True, "defaultNodeGroup": group_name(0)}),
        b.controller_deployment(),
        b.webhook_configuration(),
        b.webhook_endpoints(),
        b.agent_daemonset(terms=[b.term(selector(g)) for g in range(GROUPS)]),
        *(b.group(group_name(g), selector(g)) for g in range(GROUPS)),
    ]
    caches = []
    for j in range(CACHES):
        ns = f"team-{j % 8}"
        kc = b.consumer_cache(
            cache_name(j),
            ns=ns,
            identity=b.consumer_identity(ns, isvc=f"model-{j:03d}"),
            group_name=group_name(j % GROUPS),
            state="Error" if j < IN_ERROR else "Ready",
        )
        if j < IN_ERROR:  # as KServe's aggregate writes it: the first Error entry's message
            kc["status"]["conditions"][0].update(reason="PreparationFailed", message=UNAUTHORIZED)
        caches.append(kc)
    out += caches
    failing = {j: None for j in range(IN_ERROR)}  # each cache in Error has one entry in Error, on a Ready node
    for i in range(NODES):
        g = i % GROUPS
        name = node_name(i)
        out.append(b.node(name, selector(g), ready=not not_ready(i), unschedulable=cordoned(i)))
        out.append(
            b.pod(
                f"kserve-kernelcachenode-agent-{i:05d}",
                ns="kserve",
                node_name=name,
                labels={"control-plane": "kserve-kernelcachenode-agent"},
            )
        )
        if without_kcn(i):
            continue
        entries = {}
        for j in range(g, CACHES, GROUPS):
            state = "Ready"
            if j in failing and failing[j] is None and not not_ready(i):
                failing[j] = i
                state = "Error"
            entries[f"{caches[j]['metadata']['namespace']}/{cache_name(j)}"] = b.cache_entry(
                caches[j], state, message=UNAUTHORIZED if state == "Error" else "OCI artifact was prefetched"
            )
        out.append(b.kcn(name, entries))
    for k in range(SERVING):
        j = 30 + k // PODS_PER_ISVC  # Ready caches
        kc = caches[j]
        ns = kc["metadata"]["namespace"]
        out.append(
            b.consumer(
                f"model-{j:03d}-predictor-7c5d9b8f46-{k:05d}",
                ns=ns,
                isvc=f"model-{j:03d}",
                node=node_name(j % GROUPS + GROUPS),
                cache=kc if k < CACHED else None,
            )
        )
    return out


def write(path: Path) -> str:
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items()}))
    return str(path)


if __name__ == "__main__":
    print(write(Path(sys.argv[1])))
