"""How kube/ should read: time and peak memory to list N realistic GPU nodes through the Python client's
generated models versus raw JSON pages into slim dataclasses; and `kubectl kcache --help` start-up.

    python -m bench.list [--nodes 5000] [--dir DIR]

Starts its own test bed (API server and etcd only) unless --dir names a running one. Run by hand.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTBED = ROOT / "tests" / "testbed" / "testbed"

MEASURE = r"""
import json, resource, sys, time
mode, kubeconfig = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
if mode == "models":
    from kubernetes import client, config
    config.load_kube_config(kubeconfig)
    api = client.CoreV1Api()
    items, cont = [], None
    while True:
        page = api.list_node(limit=500, _continue=cont)
        items.extend(page.items)
        cont = page.metadata._continue
        if not cont:
            break
    n = len(items)
else:
    from kubectl_kcache.kube.client import Client
    from kubectl_kcache.kube.kubeconfig import Overrides
    from kubectl_kcache.kube import resources as r
    from kubectl_kcache import kinds
    c = Client(Overrides(kubeconfig=kubeconfig))
    items, _ = c.list_all(r.NODES, decode=kinds.for_resource(r.NODES).decode_page)
    n = len(items)
elapsed = time.perf_counter() - t0
print(json.dumps({"n": n, "seconds": elapsed, "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def up(d: Path) -> dict:
    subprocess.run([str(TESTBED), "up", "--dir", str(d)], check=True, stdout=subprocess.DEVNULL)
    return json.loads((d / "state.json").read_text())


def fill(kubeconfig: str, n: int) -> None:
    sys.path.insert(0, str(ROOT))
    from bench.fixtures import gpu_node
    from kubectl_kcache.errors import Conflict
    from kubectl_kcache.kube import resources as r
    from kubectl_kcache.kube.client import Client
    from kubectl_kcache.kube.kubeconfig import Overrides

    c = Client(Overrides(kubeconfig=kubeconfig))
    have = {x["metadata"]["name"] for x in c.list_all(r.NODES)[0]}

    def create(i: int) -> None:
        node = gpu_node(i)
        if node["metadata"]["name"] in have:
            return
        with contextlib.suppress(Conflict):
            c.create(r.NODES, node)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(create, range(n)))


def measure(mode: str, kubeconfig: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, mode, kubeconfig], check=True, capture_output=True, text=True, cwd=ROOT
    )
    return json.loads(out.stdout)


def help_startup(runs: int = 15) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "kubectl_kcache", "--help"], check=True, stdout=subprocess.DEVNULL, cwd=ROOT
        )
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir")
    args = ap.parse_args()
    d = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="kcache-bench-"))
    up(d)
    kubeconfig = str(d / "kubeconfig")
    t0 = time.perf_counter()
    fill(kubeconfig, args.nodes)
    print(f"filled {args.nodes} nodes in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    results: dict[str, list[dict]] = {"models": [], "raw": []}
    for _ in range(args.runs):
        for mode in ("models", "raw"):  # alternate, so that drift affects both alike
            results[mode].append(measure(mode, kubeconfig))
    summary = {
        mode: {
            "n": runs[0]["n"],
            "seconds": statistics.median(r["seconds"] for r in runs),
            "maxrss_mb": statistics.median(r["maxrss_mb"] for r in runs),
        }
        for mode, runs in results.items()
    }
    summary["help_seconds"] = help_startup()
    summary["python"] = sys.version.split()[0]
    summary["cpus"] = os.cpu_count()
    print(json.dumps(summary, indent=2))
    if not args.dir:
        subprocess.run([str(TESTBED), "down", "--dir", str(d)], check=False)


if __name__ == "__main__":
    main()
