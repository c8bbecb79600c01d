"""The offline commands on large generated dumps: doctor, status, why-group, why-not-cached and reconcile
--dry-run with `--from-file`, against a bare `json.load` of the same file, at several fleet sizes and two node
sizes (no cluster needed).

    python3 -m bench.scale [--sizes 10000,20000,50000] [--node-size small,large] [--groups 200]
                           [--caches 5000] [--rounds 1] [--commands doctor,status,...] [--dir DIR] [--keep]
                           [--out FILE] [--plot FILE] [--tree NAME=DIR ...]

A dump holds, for N nodes: N Nodes (`small`: 5 labels, a taint, a Ready condition, ~0.6 KB; `large`: the
20-40 KB GPU nodes of bench.run with ~130 `status.images`), G KernelCacheNodeGroups each selecting N/G nodes
by one label, a KernelCacheNode per node (4 cache entries of its group), an agent pod per node, C KernelCaches
in 20 namespaces, KServe's singletons and one producer pod with its capture (what why-group and
why-not-cached are asked about). The file is laid out as `kubectl kcache dump -o json` writes it (one item
per line), so `--from-file` streams it. Every command runs in a fresh process (wall, CPU, peak RSS by GNU
time); commands of one size alternate their order between rounds. `--tree NAME=DIR` (repeatable) runs the
commands of other code trees instead of this checkout's, side by side in the same rounds (before and after a
change, with json.load beside them).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec

from bench import fixtures as fx
from bench.run import log, run_timed

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
DS_UID = "3f1c2d9e-0000-4000-8000-000000000001"


def _with_status(pair: tuple[dict[str, Any], dict[str, Any]]) -> dict[str, Any]:
    body, status = pair
    return {**body, "status": status}


# The fleets the budgets name (design.md, issue 24 and 36): nodes -> (node groups, KernelCaches). Other sizes
# get the 50,000-node fleet's 200 groups and 5,000 KernelCaches, as every round before issue 36 had them.
SHAPES = {5000: (50, 2000), 50000: (200, 5000), 130000: (500, 13000)}
DEFAULT_SHAPE = (200, 5000)


def shape(n: int, groups: int | None, caches: int | None) -> tuple[int, int]:
    g, c = SHAPES.get(n, DEFAULT_SHAPE)
    return (groups or g, caches or c)


def items(n: int, node_size: str, groups: int, caches: int, seed: int = 0) -> Any:
    """Every item of the dump, in the order `dump` writes kinds (nodes first). A pure function of its
    arguments: the only randomness (a large node's images and sizes) comes from `random.Random` seeded per
    node from `seed` and the node's index, so the same arguments write the same bytes (seed 0 is the
    generator of every round before issue 36)."""
    for i in range(n):
        if node_size == "small":
            yield fx.small_node(i, groups)
        else:  # the artifacts its KernelCacheNode holds are among its images, as on a node that pulled them
            node = fx.gpu_node(i, groups, random.Random(i + seed * 1_000_003))
            pulled = [
                {"names": [e["imageReference"]], "sizeBytes": 3 * 10**9}
                for e in fx.kcn(i, caches, groups)[1]["cacheStatus"].values()
            ]
            node["status"]["images"][:0] = pulled
            yield node
    for g in range(groups):
        yield fx.node_group(g)
    for i in range(n):
        yield _with_status(fx.kcn(i, caches, groups))
    for j in range(caches):
        yield _with_status(fx.kernel_cache(j, groups))
    capture = _with_status(fx.capture(0, 0))
    capture["metadata"]["generation"] = 1
    yield capture
    yield fx.producer_pod(0, 0)
    for i in range(n):
        yield _with_status(fx.agent_pod(i, DS_UID))
    ds = fx.agent_daemonset(groups)
    ds["metadata"]["uid"] = DS_UID
    yield {**ds, "status": fx.daemonset_status(n)}
    yield _with_status(fx.controller_deployment())
    yield fx.inferenceservice_config()
    webhook = fx.webhook_configuration()
    del webhook["webhooks"][0]["objectSelector"]  # no API server here: the producer pod is sent to it
    yield webhook
    yield fx.webhook_endpoint_slice()
    yield fx.service_account("kernel-cache-prefetcher-sa", fx.JOB_NAMESPACE)
    for ns in ("kserve", fx.JOB_NAMESPACE, *fx.TEAM_NAMESPACES):
        yield fx.namespace(ns)
    for kind in ("KernelCacheNodeGroup", "KernelCacheNode", "KernelCache", "KernelCacheCapture"):
        plural = kind.lower() + "s"
        yield {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.serving.kserve.io"},
            "spec": {
                "group": "serving.kserve.io",
                "names": {"kind": kind, "plural": plural},
                "scope": "Namespaced" if kind in ("KernelCache", "KernelCacheCapture") else "Cluster",
                "versions": [{"name": "v1alpha1", "served": True, "storage": True}],
            },
        }


def write_dump(path: Path, n: int, node_size: str, groups: int, caches: int, seed: int = 0) -> str:
    """The dump, laid out as snapshot/dump.py writes it (its reads: every kind listed, ok); returns the
    sha256 of its bytes (recorded with the results: the same arguments give the same file)."""
    from kubectl_kcache.snapshot import kinds
    from kubectl_kcache.snapshot.files.layout import DUMP_HEAD, DUMP_META

    enc = msgspec.json.Encoder()
    digest = hashlib.sha256()
    count = 0
    with open(path, "wb") as fh:

        def write(b: bytes) -> None:
            digest.update(b)
            fh.write(b)

        write(DUMP_HEAD)
        for item in items(n, node_size, groups, caches, seed):
            write(b"\n" if count == 0 else b",\n")
            write(enc.encode(item))
            count += 1
        reads = [{"resource": p, "namespace": None, "status": "ok", "count": 0} for p in kinds.PLURALS]
        meta = {
            "cluster": "bench",
            "server": "https://bench.example:6443",
            "takenAt": fx.NOW,
            "serverVersion": "v1.36.3",
            "tool": "bench.scale",
            "scope": {},
            "reads": reads,
        }
        write(b"\n" + DUMP_META + enc.encode(meta) + b"}\n")
    return digest.hexdigest()


def commands(path: Path) -> dict[str, tuple[list[str], tuple[int, ...]]]:
    py = sys.executable
    kc = [py, "-m", "kubectl_kcache"]
    f = ["--from-file", str(path)]
    pod = fx.producer_pod(0, 0)["metadata"]
    cache = fx.kernel_cache(0)[0]["metadata"]
    return {
        "json_load": ([py, "-c", "import json, sys; json.load(open(sys.argv[1], 'rb'))", str(path)], (0,)),
        "doctor": ([*kc, "doctor", *f, "-o", "json", "--fail-on", "never"], (0,)),
        "status": ([*kc, "status", *f, "-o", "json"], (0,)),
        "why_group": ([*kc, "why-group", pod["name"], "-n", pod["namespace"], *f, "-o", "json"], (0,)),
        "why_not_cached": ([*kc, "why-not-cached", pod["name"], "-n", pod["namespace"], *f, "-o", "json"], (0, 1)),
        "reconcile_dry_run": ([*kc, "reconcile", "--dry-run", *f, "-o", "json"], (0, 1)),
        "why_not_ready": ([*kc, "why-not-ready", cache["name"], "-n", cache["namespace"], *f, "-o", "json"], (0, 1)),
        "why_not_ready_all": ([*kc, "why-not-ready", "-A", *f, "-o", "json"], (0, 1)),
        "why_not_cached_all": ([*kc, "why-not-cached", "-A", *f, "-o", "json"], (0, 1)),
    }


def measure(path: Path, rounds: int, which: list[str], trees: dict[str, Path] | None = None) -> dict[str, Any]:
    """`trees`: code trees (name -> a checkout's root) whose commands run side by side in the same rounds, as
    `COMMAND@NAME` (json_load once); without them, this checkout's."""

    def env(root: Path) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "NO_COLOR": "1",
            "PYTHONPATH": str(root),
            "HOME": os.environ.get("HOME", "/tmp"),
        }

    made = {k: v for k, v in commands(path).items() if k in which}
    # each runs in its tree (`python -m` imports from the working directory before PYTHONPATH)
    cmds = {k: (*v, env(ROOT), ROOT) for k, v in made.items() if not trees or k == "json_load"}
    for tree, root in (trees or {}).items():
        cmds.update({f"{k}@{tree}": (*v, env(root), root) for k, v in made.items() if k != "json_load"})
        for k in cmds:  # once before the rounds: each tree's bytecode written, the file in the page cache
            if k.endswith(f"@{tree}"):
                run_timed(cmds[k][0], cmds[k][2], cmds[k][1], cmds[k][3])
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in cmds}
    order = list(cmds)
    for r in range(rounds):
        for name in order if r % 2 == 0 else order[::-1]:
            cmd, ok, cmd_env, cwd = cmds[name]
            runs[name].append(run_timed(cmd, cmd_env, ok, cwd))
            x = runs[name][-1]
            log(f"    {name}: {x['seconds']:.2f}s wall, {x['cpu_s']:.2f}s CPU, {x['maxrss_mb']:.0f} MB")
    out: dict[str, Any] = {}
    for name, rs in runs.items():
        out[name] = {
            "runs": rs,
            "median_s": round(statistics.median(x["seconds"] for x in rs), 3),
            "median_cpu_s": round(statistics.median(x["cpu_s"] for x in rs), 3),
            "median_rss_mb": round(statistics.median(x["maxrss_mb"] for x in rs), 1),
        }
    if "json_load" in out and "doctor" in out:
        out["doctor_vs_json_load"] = round(out["doctor"]["median_s"] / out["json_load"]["median_s"], 3)
        out["doctor_vs_json_load_cpu"] = round(out["doctor"]["median_cpu_s"] / out["json_load"]["median_cpu_s"], 3)
    # each command against its floors, per round (the commands of one round ran side by side): json.load of
    # the file, and the doctor (status and the fleet views' budget is 1.2x the doctor)
    for name in runs:
        for floor in ("json_load", "doctor"):
            if floor in runs and name != floor:
                for key, unit in (("seconds", "s"), ("cpu_s", "cpu")):
                    rs = [a[key] / b[key] for a, b in zip(runs[name], runs[floor], strict=True) if b[key]]
                    if rs:
                        out[name][f"vs_{floor}_{unit}"] = round(statistics.median(rs), 3)
    return out


NAMES = {
    "json_load": "json.load (the floor)",
    "doctor": "doctor",
    "status": "status",
    "why_not_cached_all": "why-not-cached -A",
    "why_not_ready_all": "why-not-ready -A",
    "reconcile_dry_run": "reconcile --dry-run",
    "why_group": "why-group POD",
    "why_not_cached": "why-not-cached POD",
    "why_not_ready": "why-not-ready KERNELCACHE",
}
STYLES = {
    "json_load": "k:",
    "doctor": "o-",
    "status": "s-",
    "why_not_cached_all": "D-",
    "why_not_ready_all": "P-",
    "reconcile_dry_run": "d-",
    "why_group": "^--",
    "why_not_cached": "v--",
    "why_not_ready": "<--",
}


def plot(res: dict[str, Any], path: Path) -> None:
    """How each command grows with the fleet: CPU seconds and peak RSS against nodes, both axes logarithmic
    (a straight line of slope 1 is linear growth), one row of panels per node size measured."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    node_sizes = [ns for ns in ("small", "large") if res["runs"].get(ns)]
    fig, axes = plt.subplots(len(node_sizes), 2, figsize=(12, 4.8 * len(node_sizes)), squeeze=False)
    for row, node_size in zip(axes, node_sizes, strict=True):
        by = res["runs"][node_size]
        sizes = sorted(int(k) for k in by)
        for ax, key, unit in ((row[0], "median_cpu_s", "CPU seconds"), (row[1], "median_rss_mb", "peak RSS, MB")):
            for cmd, style in STYLES.items():
                pts = [(n, by[str(n)][cmd][key]) for n in sizes if cmd in by[str(n)]]
                if pts:
                    ax.plot([n for n, _ in pts], [v for _, v in pts], style, label=NAMES[cmd], ms=5)
            if key == "median_cpu_s":
                ax.axhline(10, ls=":", color="grey", lw=0.8)
                ax.axhline(2, ls=":", color="grey", lw=0.8)
            else:
                ax.axhline(1024, ls=":", color="grey", lw=0.8)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xticks(sizes, [f"{n:,}" for n in sizes])
            kb = "~0.6 KB" if node_size == "small" else "20-40 KB"
            ax.set_title(f"{unit}, {node_size} nodes ({kb} each), --from-file", fontsize=10)
            ax.set_xlabel("nodes (+ as many KernelCacheNodes and agent pods)")
            ax.set_ylabel(f"{unit} (median)")
            ax.grid(alpha=0.3, which="both")
        row[0].legend(fontsize=7)
    shapes = "; ".join(f"{n:,}: {g} groups, {c:,} KernelCaches" for n, (g, c) in SHAPES.items())
    fig.suptitle(
        f"offline commands vs nodes ({shapes})\ndotted: the budgets 2 s, 10 s and 1 GB; "
        f"{res['machine']['cpus']} shared cores, Python {res['machine']['python']}",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def by_command(res: dict[str, Any], node_size: str = "small") -> str:
    """One table per command, as docs/performance.md shows them: at each fleet size its CPU seconds, its ratio
    to json.load of the same file in the same round, and its peak RSS."""
    by = res["runs"].get(node_size, {})
    sizes = sorted(int(k) for k in by)
    out = []
    for cmd, name in NAMES.items():
        rows = [(n, by[str(n)][cmd]) for n in sizes if cmd in by[str(n)]]
        if not rows or cmd == "json_load":
            continue
        out += [f"**{name}**", "", "| nodes | CPU s | / json.load | peak RSS |", "|---|---|---|---|"]
        for n, r in rows:
            ratio = f"{r['vs_json_load_cpu']:.2f}x" if "vs_json_load_cpu" in r else ""
            out.append(f"| {n:,} | {r['median_cpu_s']:.2f} | {ratio} | {r['median_rss_mb']:.0f} MB |")
        out.append("")
    return "\n".join(out)


COLUMNS = ("doctor", "status", "why_group", "why_not_cached", "reconcile_dry_run", "json_load")


def table(res: dict[str, Any]) -> str:
    """The results as docs/performance.md shows them: per node size and fleet, each command's wall and CPU
    seconds and peak RSS (medians)."""
    lines = [
        "| nodes | file | " + " | ".join(c.replace("_", " ") for c in COLUMNS) + " | doctor / json.load (CPU) |",
        "|---|---|" + "---|" * len(COLUMNS) + "---|",
    ]
    for node_size in ("small", "large"):
        for n in sorted(int(k) for k in res["runs"].get(node_size, {})):
            r = res["runs"][node_size][str(n)]
            cells = [
                f"{r[c]['median_s']:.2f} / {r[c]['median_cpu_s']:.2f} s, {r[c]['median_rss_mb']:.0f} MB"
                if c in r
                else ""
                for c in COLUMNS
            ]
            ratio = (
                f"{r['doctor_vs_json_load']:.2f} ({r['doctor_vs_json_load_cpu']:.2f})"
                if "doctor_vs_json_load" in r
                else ""
            )
            lines.append(f"| {n:,} {node_size} | {r['file_mb']:.0f} MB | " + " | ".join(cells) + f" | {ratio} |")
            lines += [  # the commands of other code trees (--tree), against the json.load of the same rounds
                f"  {k} ({n:,} {node_size}): {v['median_cpu_s']:.2f} s CPU, {v['median_rss_mb']:.0f} MB, "
                f"{v.get('vs_json_load_cpu', float('nan')):.3f}x json.load (CPU, median of the rounds)"
                for k, v in r.items()
                if "@" in k
            ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,20000,50000")
    ap.add_argument("--node-size", default="small,large")
    ap.add_argument("--groups", type=int, help="node groups (default: by size, SHAPES; else 200)")
    ap.add_argument("--caches", type=int, help="KernelCaches (default: by size, SHAPES; else 5000)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the generator (0: every earlier round's dumps)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--commands", default=",".join(commands(Path("x"))))
    ap.add_argument(
        "--json-load-max",
        type=int,
        default=20000,
        help="json.load only up to this many nodes for large nodes (it needs ~6x the file in memory)",
    )
    ap.add_argument("--dir", help="where the dumps go (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the dumps")
    ap.add_argument("--out", help="results file (default bench/results/<date>-scale.json)")
    ap.add_argument("--plot", help="plot file (default docs/performance-scale.png; 'none' for no plot)")
    ap.add_argument("--table", action="store_true", help="print the table of the results file and exit")
    ap.add_argument("--by-command", action="store_true", help="print one table per command of the results file")
    ap.add_argument(
        "--tree",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="measure the commands of this code tree (e.g. a `git archive` of another commit), interleaved with "
        "the other trees' in the same rounds; repeatable",
    )
    args = ap.parse_args(argv)
    d = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="kcache-scale-"))
    d.mkdir(parents=True, exist_ok=True)
    out_path = Path(args.out) if args.out else RESULTS / f"{dt.date.today().isoformat()}-scale.json"
    res: dict[str, Any] = {
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "command": "python3 -m bench.scale " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "msgspec": msgspec.__version__,
            "load_before": round(os.getloadavg()[0], 2),
        },
        "runs": {},
    }
    if out_path.exists():  # several invocations (a few commands at a time) add to one results file
        prev = json.loads(out_path.read_text())
        res["runs"] = prev.get("runs", {})
    if args.table or args.by_command:
        print(by_command(res) if args.by_command else table(res))
        return 0
    which = args.commands.split(",")
    trees = {name: Path(root).resolve() for name, _, root in (t.partition("=") for t in args.tree)} or None
    for node_size in args.node_size.split(","):
        for n in sorted(int(x) for x in args.sizes.split(",")):
            groups, caches = shape(n, args.groups, args.caches)
            path = d / f"dump-{node_size}-{n}-g{groups}-c{caches}-s{args.seed}.json"
            sha = None
            if not path.exists():
                t0 = time.perf_counter()
                sha = write_dump(path, n, node_size, groups, caches, args.seed)
                log(
                    f"wrote {path} ({path.stat().st_size / 2**20:.0f} MB, sha256 {sha[:12]}) in "
                    f"{time.perf_counter() - t0:.0f}s"
                )
            log(f"  {node_size} x {n} (load {os.getloadavg()[0]:.1f})")
            cmds = [c for c in which if c != "json_load" or node_size == "small" or n <= args.json_load_max]
            m = measure(path, args.rounds, cmds, trees)
            m["file_mb"] = round(path.stat().st_size / 2**20, 1)
            m["groups"], m["caches"], m["seed"] = groups, caches, args.seed
            if sha:
                m["sha256"] = sha
            m["load"] = round(os.getloadavg()[0], 2)
            slot = res["runs"].setdefault(node_size, {}).setdefault(str(n), {})
            slot.update(m)
            out_path.write_text(json.dumps(res, indent=2))
            if not args.keep:
                path.unlink()
    res["machine"]["load_after"] = round(os.getloadavg()[0], 2)
    out_path.write_text(json.dumps(res, indent=2))
    if args.plot != "none":
        try:
            plot(res, Path(args.plot) if args.plot else ROOT / "docs" / "performance-scale.png")
        except ImportError:
            log("matplotlib is not installed: no plot")
    print(table(res))
    log(f"results: {out_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
