"""`status` against `doctor` on the same snapshot, offline: a dump-format JSON file of bench.run's cluster
(GPU nodes of 20-40 KB, 50 groups, a KernelCacheNode with 4 entries and an agent pod per node, 2,000
KernelCaches, KServe's singletons), then `status --from-file` and `doctor --from-file` alternately, in fresh
processes, wall time and peak RSS. The live comparison is in bench.run (status beside doctor and kubectl).

    python3 -m bench.status [--nodes 5000] [--rounds 3] [--keep FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench import fixtures as fx
from bench.run import CACHES, GROUPS, log, run_timed

ROOT = Path(__file__).resolve().parent.parent


def with_status(pair: tuple[dict[str, Any], dict[str, Any]]) -> dict[str, Any]:
    body, status = pair
    return {**body, "status": status}


def snapshot_items(n: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [fx.inferenceservice_config()]
    items += [fx.node_group(g) for g in range(GROUPS)]
    items += [fx.gpu_node(i, GROUPS) for i in range(n)]
    items += [with_status(fx.kcn(i, CACHES, GROUPS)) for i in range(n)]
    items += [with_status(fx.agent_pod(i, "ds-uid")) for i in range(n)]
    items += [with_status(fx.kernel_cache(j, GROUPS)) for j in range(CACHES)]
    return items


def write_dump(n: int, path: Path) -> None:
    reads = [
        {"resource": r, "namespace": ns, "status": "ok", "count": 0}
        for r, ns in (
            ("nodes", None),
            ("kernelcachenodegroups", None),
            ("kernelcachenodes", None),
            ("kernelcaches", None),
            ("kernelcachecaptures", None),
            ("configmaps", "kserve"),
            ("pods", "kserve"),
        )
    ]
    doc = {
        "kind": "KcacheSnapshot",
        "version": 1,
        "meta": {"cluster": "bench", "takenAt": fx.NOW, "serverVersion": "v1.36.3", "reads": reads},
        "items": snapshot_items(n),
    }
    path.write_text(json.dumps(doc))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--keep", help="write the snapshot here and keep it")
    args = ap.parse_args(argv)
    path = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="kcache-status-")) / "snapshot.json"
    log(f"writing a {args.nodes}-node snapshot to {path}")
    write_dump(args.nodes, path)
    log(f"  {path.stat().st_size / 2**20:.0f} MB")
    env = {"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    cmds = {
        "status": [sys.executable, "-m", "kubectl_kcache", "status", "--from-file", str(path), "-o", "json"],
        "doctor": [
            sys.executable,
            "-m",
            "kubectl_kcache",
            "doctor",
            "--from-file",
            str(path),
            "-o",
            "json",
            "--fail-on",
            "never",
        ],
    }
    for cmd in cmds.values():  # warm-up: bytecode and page cache
        run_timed(cmd, env, ok=(0, 1, 3))
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in cmds}
    for i in range(args.rounds):
        for which in ("status", "doctor") if i % 2 == 0 else ("doctor", "status"):
            runs[which].append(run_timed(cmds[which], env, ok=(0, 1, 3)))
            log(f"  round {i + 1} {which}: {runs[which][-1]['seconds']:.2f}s {runs[which][-1]['maxrss_mb']:.0f} MB")
    out = {
        k: {
            "median_s": round(statistics.median(r["seconds"] for r in v), 2),
            "median_rss_mb": round(statistics.median(r["maxrss_mb"] for r in v), 1),
        }
        for k, v in runs.items()
    }
    out["ratio"] = round(out["status"]["median_s"] / out["doctor"]["median_s"], 2)
    out["file_mb"] = round(path.stat().st_size / 2**20, 1)
    out["nodes"] = args.nodes
    print(json.dumps(out, indent=2))
    if not args.keep:
        path.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
