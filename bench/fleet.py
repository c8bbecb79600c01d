"""`why-not-cached -A` against `doctor` on the same snapshot, and the monitor's evaluation at scale, offline.

The snapshot is bench.run's cluster (GPU nodes of 20-40 KB, 50 groups, a KernelCacheNode with 4 entries and an
agent pod per node, 2,000 KernelCaches in 20 namespaces, KServe's singletons) plus serving pods: five per
InferenceService `model-<j>` (one ReplicaSet each, the pods as the API server stores them: a token volume with
a random name, status Running), every other one mutated by KServe's webhook (usage annotation, image volume,
linker). Their footprints match no KernelCache's, so every decision goes through all candidates of the pod's
namespace: the slow path.

    python3 -m bench.fleet fleet [--nodes 5000] [--pods 10000] [--rounds 2]
        why-not-cached -A --from-file and doctor --from-file, alternately, in fresh processes
    python3 -m bench.fleet live [--nodes 10000] [--pods 10000] [--evaluations 3] [--dir DIR]
        `kubectl kcache monitor` against a test bed filled as bench.run fills it, plus the serving pods: its
        RSS when ready and after each change (a node relabelled), how soon each change shows in /metrics
    python3 -m bench.fleet monitor [--nodes 10000] [--pods 10000] [--evaluations 3]
        in a fresh process, the snapshot's objects as the monitor's lists hold them (typed), then evaluations
        (the doctor's checks, status's counts, the hit rate, the metrics) one after the other: CPU time of
        each, peak RSS
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import string
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench import fixtures as fx
from bench.run import CACHES, log, parallel, run_timed
from bench.status import snapshot_items
from kubectl_kcache.snapshot.files.layout import DUMP_HEAD, DUMP_META

ROOT = Path(__file__).resolve().parent.parent
PODS_PER_ISVC = 5
VLLM = "docker.io/vllm/vllm-openai@sha256:" + "8505a4bec14c14a6d9630a12bb8fbc21e0ab1cfc3541bb68b633bee8ebb84687"


def serving_pod(j: int, k: int, nodes: int, rng: random.Random) -> dict[str, Any]:
    ns = fx.TEAM_NAMESPACES[j % len(fx.TEAM_NAMESPACES)]
    isvc = f"model-{j:04d}"
    rs = f"{isvc}-predictor-{fx.REVISION}"
    token = "kube-api-access-" + "".join(rng.choices(string.ascii_lowercase + string.digits, k=5))
    container: dict[str, Any] = {
        "name": "kserve-container",
        "image": VLLM,
        "args": ["--model", "/mnt/models", "--dtype", "bfloat16", "--max-model-len", "32768", "--port", "8080"],
        "env": [{"name": "HF_HOME", "value": "/tmp/hf"}, {"name": "VLLM_CACHE_ROOT", "value": "/root/.cache/vllm"}],
        "volumeMounts": [
            {"name": token, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": True}
        ],
    }
    spec: dict[str, Any] = {
        "containers": [container],
        "nodeName": fx.node_name((j * 7 + k) % nodes),
        "volumes": [
            {
                "name": token,
                "projected": {"sources": [{"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}}]},
            }
        ],
    }
    annotations = {
        "serving.kserve.io/kernelcache-supported": "true",
        "internal.serving.kserve.io/storage-initializer-sourceuri": f"hf://org/model-{j:04d}",
    }
    if k % 2 == 0:  # a hit, as the webhook leaves it
        kc = fx.kernel_cache_name(j % CACHES)
        annotations["internal.serving.kserve.io/kernelcache-usage"] = f"{ns}/{kc}"
        spec["volumes"] += [
            {
                "name": "kernel-cache-source",
                "image": {"reference": fx.cache_artifact(j % CACHES)["imageReference"], "pullPolicy": "IfNotPresent"},
            },
            {"name": "kernel-cache-runtime-0", "emptyDir": {}},
        ]
        container["volumeMounts"] += [
            {"name": "kernel-cache-source", "mountPath": "/var/run/gkm/kernel-cache", "readOnly": True}
        ]
        spec["initContainers"] = [
            {
                "name": "kernel-cache-linker",
                "image": "registry.access.redhat.com/ubi9/ubi",
                "args": ["/var/run/gkm/kernel-cache/io.vllm.cache", "/root/.cache/vllm"],
            }
        ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{rs}-{k:05d}",
            "namespace": ns,
            "uid": fx._sha(f"{j}-{k}")[:36],
            "labels": {
                "serving.kserve.io/inferenceservice": isvc,
                "component": "predictor",
                "pod-template-hash": fx.REVISION,
            },
            "annotations": annotations,
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs, "uid": fx._sha(rs)[:36], "controller": True}
            ],
        },
        "spec": spec,
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }


def items(nodes: int, pods: int) -> list[dict[str, Any]]:
    rng = random.Random(26)
    out = snapshot_items(nodes)
    out += [fx.namespace(ns) for ns in fx.TEAM_NAMESPACES]
    out += [serving_pod(p // PODS_PER_ISVC, p % PODS_PER_ISVC, nodes, rng) for p in range(pods)]
    return out


def write_dump(nodes: int, pods: int, path: Path) -> None:
    """A JSON dump laid out as `kubectl kcache dump` writes it (one item per line, meta last), which the loader
    streams: the file never sits in the reading process's memory whole."""
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
            ("pods", None),
            ("namespaces", None),
            ("mutatingwebhookconfigurations", None),
        )
    ]
    meta = {"cluster": "bench", "takenAt": fx.NOW, "serverVersion": "v1.36.3", "reads": reads}
    objects = items(nodes, pods)
    with open(path, "wb") as fh:
        fh.write(DUMP_HEAD + b"\n")
        for i, item in enumerate(objects):
            fh.write(json.dumps(item).encode() + (b",\n" if i < len(objects) - 1 else b"\n"))
        fh.write(DUMP_META + json.dumps(meta).encode() + b"}\n")


def fleet(args: argparse.Namespace) -> dict[str, Any]:
    path = Path(tempfile.mkdtemp(prefix="kcache-fleet-")) / "snapshot.json"
    log(f"writing a snapshot of {args.nodes} nodes and {args.pods} serving pods to {path}")
    write_dump(args.nodes, args.pods, path)
    env = {"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    base = [sys.executable, "-m", "kubectl_kcache"]
    cmds = {
        "why-not-cached -A": [*base, "why-not-cached", "-A", "--from-file", str(path), "-o", "json"],
        "doctor": [*base, "doctor", "--from-file", str(path), "-o", "json", "--fail-on", "never"],
    }
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in cmds}
    for i in range(args.rounds):
        for which in list(cmds) if i % 2 == 0 else list(cmds)[::-1]:
            runs[which].append(run_timed(cmds[which], env, ok=(0, 1, 3)))
            r = runs[which][-1]
            log(f"  round {i + 1} {which}: {r['seconds']:.2f}s (CPU {r['cpu_s']:.2f}s) {r['maxrss_mb']:.0f} MB")
    out: dict[str, Any] = {
        k: {
            "median_s": round(statistics.median(r["seconds"] for r in v), 2),
            "median_cpu_s": round(statistics.median(r["cpu_s"] for r in v), 2),
            "median_rss_mb": round(statistics.median(r["maxrss_mb"] for r in v), 1),
        }
        for k, v in runs.items()
    }
    out["cpu_ratio"] = round(out["why-not-cached -A"]["median_cpu_s"] / out["doctor"]["median_cpu_s"], 2)
    out["file_mb"] = round(path.stat().st_size / 2**20, 1)
    out.update(nodes=args.nodes, pods=args.pods)
    path.unlink()
    return out


def monitor(args: argparse.Namespace) -> dict[str, Any]:
    """Write the snapshot (in this process), then in a fresh one load it (streamed, item by item: the typed
    objects the monitor's lists hold, without the file) and evaluate it `--evaluations` times: CPU time of each
    evaluation (wall time is meaningless on a loaded machine), the RSS once loaded and after the evaluations,
    the /report page's cost, and the fresh process's peak RSS."""
    path = Path(tempfile.mkdtemp(prefix="kcache-monitor-")) / "snapshot.json"
    log(f"writing a snapshot of {args.nodes} nodes and {args.pods} serving pods to {path}")
    write_dump(args.nodes, args.pods, path)
    code = (
        "import json, sys, time\n"
        "from kubectl_kcache.snapshot.files.from_files import load_files\n"
        "from kubectl_kcache.monitor.evaluate import evaluate\n"
        "from kubectl_kcache.monitor.metrics import Health, render\n"
        "import gc\n"
        # /proc, not getrusage: a child's ru_maxrss keeps the parent's high-water mark from before its exec
        "def status(key):\n"
        "    for line in open('/proc/self/status'):\n"
        "        if line.startswith(key + ':'):\n"
        "            return int(line.split()[1]) / 1024\n"
        "rss = lambda: status('VmHWM')\n"
        "now_rss = lambda: status('VmRSS')\n"
        "base = rss()\n"
        "t = time.process_time()\n"
        "snap = load_files([sys.argv[1]])\n"
        "gc.collect()\n"
        "out = {'import_rss_mb': round(base, 1), 'load_cpu_s': round(time.process_time() - t, 2),\n"
        "       'loaded_peak_rss_mb': round(rss(), 1), 'loaded_rss_mb': round(now_rss(), 1), 'evaluation_cpu_s': []}\n"
        "for i in range(int(sys.argv[2])):\n"
        "    t = time.process_time()\n"
        "    ev = evaluate(snap)\n"
        "    text = render(ev, Health(ready=True, read_errors={}, last_read=time.time(), evaluations=i + 1))\n"
        "    out['evaluation_cpu_s'].append(round(time.process_time() - t, 2))\n"
        "    print(f'evaluation {i + 1}: CPU {out[\"evaluation_cpu_s\"][-1]}s, {len(text.splitlines())} lines',"
        " file=sys.stderr, flush=True)\n"
        "out['rss_after_evaluations_mb'] = round(now_rss(), 1)\n"
        "t = time.process_time()\n"
        "page = ev.html\n"
        "out['report_cpu_s'], out['report_mb'] = round(time.process_time() - t, 2), round(len(page) / 2**20, 1)\n"
        "out['peak_rss_mb'] = round(rss(), 1)\n"
        "print(json.dumps(out))\n"
    )
    env = {"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-c", code, str(path), str(args.evaluations)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    log(proc.stderr.strip())
    out = {"nodes": args.nodes, "pods": args.pods, **json.loads(proc.stdout)}
    path.unlink()
    return out


def without_token(pod: dict[str, Any]) -> dict[str, Any]:
    """The pod as a client sends it: the token volume is the API server's to add (it refuses one without a
    service account)."""
    spec = pod["spec"]
    spec["volumes"] = [v for v in spec["volumes"] if not v["name"].startswith("kube-api-access-")]
    for ctr in spec["containers"]:
        ctr["volumeMounts"] = [m for m in ctr["volumeMounts"] if not m["name"].startswith("kube-api-access-")]
    return pod


def live(args: argparse.Namespace) -> dict[str, Any]:
    """The monitor against a test bed of `--nodes` nodes (each with its KernelCacheNode and agent pod, as
    bench.run fills it) and `--pods` serving pods: its RSS once ready and after `--evaluations` changes (a node
    relabelled each time), how long each change takes to show in /metrics, and its CPU per evaluation."""
    import re
    import subprocess
    import time
    import urllib.request

    from bench.run import Filler, _cpu_seconds, _vm, down, up
    from kubectl_kcache.kube import resources as r

    d = Path(args.dir or tempfile.mkdtemp(prefix="kcache-monitor-live-"))
    bed = up(d, watch_cache=False)
    try:
        filler = Filler(bed)
        log(f"filling {args.nodes} nodes")
        filler.grow(args.nodes)
        rng = random.Random(26)
        pods = [
            without_token(serving_pod(p // PODS_PER_ISVC, p % PODS_PER_ISVC, args.nodes, rng)) for p in range(args.pods)
        ]
        log(f"creating {len(pods)} serving pods")
        parallel(lambda p: filler.create(r.PODS, p), pods)
        err = open(d / "monitor.log", "w")  # noqa: SIM115 - closed below
        proc = subprocess.Popen(
            [sys.executable, "-m", "kubectl_kcache", "monitor", "--port", "0", "--resync-period", "600"],
            env={**bed.env, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.DEVNULL,
            stderr=err,
        )

        def scrape(port: int) -> dict[str, float]:
            text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30).read().decode()
            return {m.group(1): float(m.group(2)) for m in re.finditer(r"^(kcache_monitor_\w+) (\S+)$", text, re.M)}

        try:
            t0 = time.time()
            port = 0
            while not port:
                time.sleep(0.5)
                found = re.search(r"on 0\.0\.0\.0:(\d+)", (d / "monitor.log").read_text())
                port = int(found.group(1)) if found else 0
            while True:
                try:
                    if urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=30).status == 200:
                        break
                except OSError:
                    pass
                time.sleep(0.5)
            out: dict[str, Any] = {
                "nodes": args.nodes,
                "pods": args.pods,
                "ready_after_s": round(time.time() - t0, 1),
                "ready_rss_mb": round(_vm(proc.pid, "VmRSS"), 1),
                "ready_cpu_s": round(_cpu_seconds(proc.pid), 2),
                "changes": [],
            }
            for i in range(args.evaluations):
                before, cpu = scrape(port)["kcache_monitor_evaluations_total"], _cpu_seconds(proc.pid)
                t = time.time()
                filler.c.request(
                    "PATCH",
                    r.NODES.path(None, fx.node_name(i)),
                    verb="patch",
                    body={"metadata": {"labels": {"kcache-bench/changed": f"{time.time():.0f}-{i}"}}},
                    content_type="application/merge-patch+json",
                )
                while (now := scrape(port))["kcache_monitor_evaluations_total"] <= before:
                    time.sleep(0.2)
                out["changes"].append(
                    {
                        "seen_after_s": round(time.time() - t, 2),
                        "evaluation_s": now["kcache_monitor_evaluation_seconds"],
                        "cpu_s": round(_cpu_seconds(proc.pid) - cpu, 2),
                    }
                )
                log(f"  change {i + 1}: in /metrics after {out['changes'][-1]['seen_after_s']}s")
            out["rss_mb"] = round(_vm(proc.pid, "VmRSS"), 1)
            out["peak_rss_mb"] = round(_vm(proc.pid, "VmHWM"), 1)
        finally:
            proc.terminate()
            proc.wait(30)
            err.close()
        return out
    finally:
        if not args.dir:
            down(d)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["fleet", "monitor", "live"])
    ap.add_argument("--dir", help="live: a test bed folder to reuse (kept)")
    ap.add_argument("--nodes", type=int)
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--evaluations", type=int, default=3)
    args = ap.parse_args(argv)
    args.nodes = args.nodes or (5000 if args.what == "fleet" else 10000)
    print(json.dumps({"fleet": fleet, "monitor": monitor, "live": live}[args.what](args), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
