"""Live doctor and dump against the parallel curl floor of the same lists, why-group and why-not-cached live,
and reconcile's steady writes and a burst of new members, on one test bed (issue 24's live budgets).

    python3 -m bench.wire [--sizes 3000,10000] [--rounds 3] [--burst 5000] [--steady-seconds 30]
                          [--dir DIR] [--keep] [--out FILE] [--no-reconcile]

The floor: one curl process fetching every list one doctor run makes (taken from the audit log), each list
whole, 8 in flight over reused connections (`curl --parallel --parallel-max 8`), bodies to /dev/null: the API
server's time to serve them with the transfer, nothing decoded. Per size, after a warm-up of each, `doctor -o
json`, the floor and `dump -o json --file` run in alternating order each round; ratios are taken within a
round (doctor / floor of the same round), then the median. Wall and CPU seconds and peak RSS (GNU time) of
each run are kept, with the load average. The cluster is bench.run's (bench/fixtures.py: 20-40 KB GPU nodes,
50 groups, a KernelCacheNode and an agent pod per node, 2,000 KernelCaches).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench import run as br

FLOOR_PARALLEL = 8


def parallel_curl(bed: br.Bed, uris: list[str]) -> list[str]:
    cmd = br.curl_cmd(bed, uris)
    return [cmd[0], "--parallel", "--parallel-max", str(FLOOR_PARALLEL), *cmd[1:]]


def measure(bed: br.Bed, n: int, rounds: int, snap_dir: Path) -> dict[str, Any]:
    env = bed.env
    br.run_timed(br.DOCTOR, env)
    uris = br.doctor_list_uris(bed)
    floor = parallel_curl(bed, uris)
    snap = snap_dir / f"wire-{n}.json"
    dump = [*br.KCACHE, "dump", "-o", "json", "--file", str(snap)]
    br.run_timed(floor, env)
    br.run_timed(dump, env)
    runs: dict[str, list[dict[str, Any]]] = {"doctor": [], "floor": [], "dump": []}
    for i in range(rounds):
        order = ["doctor", "floor", "dump"] if i % 2 == 0 else ["dump", "floor", "doctor"]
        for which in order:
            cmd = {"doctor": br.DOCTOR, "floor": floor, "dump": dump}[which]
            x = br.run_counted(bed, cmd, "curl/" if which == "floor" else "kubectl-kcache")
            x["load"] = round(br.load(), 2)
            runs[which].append(x)
            br.log(
                f"  {n}: round {i + 1} {which}: {x['seconds']:.2f}s wall {x['cpu_s']:.2f}s CPU "
                f"{x['maxrss_mb']:.0f} MB {x['requests']} requests (load {x['load']:.1f})"
            )
    out: dict[str, Any] = {k: br.summary(v) for k, v in runs.items()}
    out["floor"]["uris"] = uris
    out["doctor_vs_floor_by_round"] = [
        round(d["seconds"] / f["seconds"], 3) for d, f in zip(runs["doctor"], runs["floor"], strict=True)
    ]
    out["dump_vs_floor_by_round"] = [
        round(d["seconds"] / f["seconds"], 3) for d, f in zip(runs["dump"], runs["floor"], strict=True)
    ]
    out["doctor_vs_floor"] = statistics.median(out["doctor_vs_floor_by_round"])
    out["dump_vs_floor"] = statistics.median(out["dump_vs_floor_by_round"])
    out["dump"]["file_mb"] = round(snap.stat().st_size / 2**20, 1)
    snap.unlink()
    pod = br.PRODUCER["metadata"]
    for name, verb in (("why_group", "why-group"), ("why_not_cached", "why-not-cached")):
        cmd = [*br.KCACHE, verb, pod["name"], "-n", pod["namespace"], "-o", "json"]
        br.run_timed(cmd, env, (0, 1))
        out[name] = br.summary([br.run_counted(bed, cmd, "kubectl-kcache", (0, 1)) for _ in range(max(3, rounds))])
        br.log(f"  {n}: {verb} {out[name]['median_s']:.3f}s wall, {out[name]['median_cpu_s']:.3f}s CPU")
    br.log(
        f"  {n}: doctor / floor {out['doctor_vs_floor']:.2f} (rounds {out['doctor_vs_floor_by_round']}), "
        f"dump / floor {out['dump_vs_floor']:.2f}, dump {out['dump']['median_rss_mb']:.0f} MB"
    )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="3000,10000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--burst", type=int, default=5000)
    ap.add_argument("--steady-seconds", type=float, default=30.0)
    ap.add_argument("--no-reconcile", action="store_true")
    ap.add_argument("--dir", help="test bed folder (reused when it is up; kept afterwards)")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--out", help="results file (default bench/results/<date>-wire.json)")
    args = ap.parse_args(argv)
    sizes = sorted(int(x) for x in args.sizes.split(","))
    out_path = Path(args.out) if args.out else br.RESULTS / f"{dt.date.today().isoformat()}-wire.json"
    d = Path(args.dir).resolve() if args.dir else Path(tempfile.mkdtemp(prefix="kcache-wire-"))
    br.log(f"load average {br.load():.2f}; test bed in {d}")
    bed = br.up(d, watch_cache=True)
    res: dict[str, Any] = {
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "command": "python3 -m bench.wire " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "load_before": round(br.load(), 2),
            **bed.versions(),
        },
        "floor": f"one curl, {FLOOR_PARALLEL} lists in flight (--parallel), each list whole",
        "sizes": {},
    }
    try:
        filler = br.Filler(bed)
        snap_dir = d / "snapshots"
        snap_dir.mkdir(exist_ok=True)
        for n in sizes:
            br.log(f"filling to {n} nodes (load {br.load():.2f})")
            fill_s = filler.grow(n)
            br.log(f"  filled in {fill_s:.1f}s")
            s = measure(bed, n, args.rounds, snap_dir)
            s["fill_s"] = round(fill_s, 1)
            res["sizes"][str(n)] = s
            out_path.write_text(json.dumps(res, indent=2))
        if not args.no_reconcile:
            br.log(f"reconcile: steady {args.steady_seconds:.0f}s, then a burst of {args.burst} nodes")
            res["reconcile"] = br.measure_reconcile(bed, filler, args.burst, args.steady_seconds)
            br.log(f"  reconcile: {json.dumps({k: v for k, v in res['reconcile'].items() if k != 'runs'})[:600]}")
        res["machine"]["load_after"] = round(br.load(), 2)
        out_path.write_text(json.dumps(res, indent=2))
        br.log(f"results: {out_path}")
    finally:
        if not args.keep and not args.dir:
            br.down(d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
