"""why-not-cached live against the floor of the one list it cannot avoid: every KernelCacheNode (KServe's pod
webhook lists them all, the pod's future node being unknown at admission).

    python3 -m bench.why_live [--kcns 10000] [--runs 7] [--dir DIR] [--keep] [--out FILE] [--tree NAME=DIR ...]

One test bed (`--watch-cache`), filled by bench.run's Filler with KServe's singletons, 2,000 KernelCaches, the
producer pod and its node, and N KernelCacheNodes (4 entries each: bench/fixtures.py); no other nodes, which
why-not-cached does not read. Measured, alternating, `runs` times each: `why-not-cached POD -o json` (wall,
CPU, peak RSS), one curl of the KernelCacheNode list unpaginated, and the same list in 500-object pages over
one connection (kubectl's chunk size, what the plugin asks for). `--tree NAME=DIR` (repeatable) times the
why-not-cached of other code trees too, in the same rounds (each through its own `kubectl-kcache` script).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from bench import fixtures as fx
from bench import run as br

KCNS = "/apis/serving.kserve.io/v1alpha1/kernelcachenodes"


def fill(bed: br.Bed, n: int) -> None:
    f = br.Filler(bed)
    f.base()
    r = f.r
    f.create(r.NODES, fx.gpu_node(0, br.GROUPS))  # the producer pod's node
    have = f.done.get("kcns", 0)
    if have < n:
        br.parallel(lambda i: f.create(r.KERNEL_CACHE_NODES, *fx.kcn(i, br.CACHES, br.GROUPS)), range(have, n))
        f.done["kcns"] = n
        f._save()


def paged_curl(bed: br.Bed, page: int = 500) -> list[str]:
    """The pages' URIs need the continue tokens: fetched once, then replayed (the tokens stay valid for the
    etcd compaction window, minutes)."""
    from kubectl_kcache.kube import resources as r

    c = bed.client()
    uris, token = [], ""
    while True:
        query = {"limit": page, **({"continue": token} if token else {})}
        uris.append(f"{KCNS}?{urlencode(query)}")
        body = c.request("GET", r.KERNEL_CACHE_NODES.path(), query=query, verb="list")
        token = (body.get("metadata") or {}).get("continue") or ""
        if not token:
            return br.curl_cmd(bed, uris)


def tree_env(bed: br.Bed, name: str, root: Path) -> dict[str, str]:
    """The test bed's environment with `kubectl kcache` running the code tree at `root` (its own plugin script,
    first on PATH)."""
    plugin = bed.dir / f"plugin-bin-{name}"
    plugin.mkdir(exist_ok=True)
    script = plugin / "kubectl-kcache"
    script.write_text(
        f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(root)!r})\n"
        "from kubectl_kcache.__main__ import main\nmain()\n"
    )
    script.chmod(0o755)
    env = dict(bed.env)
    env["PATH"] = f"{plugin}:{env['PATH']}"
    return env


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kcns", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--dir", help="test bed folder (reused when it is up; kept afterwards)")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--out", help=f"results file (default bench/results/{dt.date.today()}-why-live.json)")
    ap.add_argument(
        "--tree",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="also time why-not-cached of this code tree (e.g. a `git archive` of another commit) in the same "
        "rounds, as why_not_cached@NAME; repeatable",
    )
    args = ap.parse_args(argv)
    d = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="kcache-why-live-"))
    bed = br.Bed(d) if (d / "state.json").exists() else br.up(d, watch_cache=True)
    try:
        fill(bed, args.kcns)
        pod = br.PRODUCER["metadata"]
        why = [*br.KCACHE, "why-not-cached", pod["name"], "-n", pod["namespace"], "-o", "json"]
        cmds = {"why_not_cached": (why, (0, 1), bed.env), "floor_unpaged": (br.curl_cmd(bed, [KCNS]), (0,), bed.env)}
        cmds["floor_pages_500"] = (paged_curl(bed), (0,), bed.env)
        for tree, _, root in (t.partition("=") for t in args.tree):
            cmds[f"why_not_cached@{tree}"] = (why, (0, 1), tree_env(bed, tree, Path(root).resolve()))
        for cmd, ok, env in cmds.values():  # warm-up
            br.run_timed(cmd, env, ok)
        runs: dict[str, list[dict[str, Any]]] = {k: [] for k in cmds}
        for i in range(args.runs):
            for name in list(cmds) if i % 2 == 0 else list(cmds)[::-1]:
                cmd, ok, env = cmds[name]
                x = br.run_timed(cmd, env, ok)
                x["load"] = round(br.load(), 2)
                runs[name].append(x)
        out: dict[str, Any] = {
            "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "kcns": args.kcns,
            "cpus": os.cpu_count(),
            **{k: br.summary(v) for k, v in runs.items()},
        }
        for why_name in (k for k in runs if k.startswith("why_not_cached")):
            for floor in ("floor_unpaged", "floor_pages_500"):
                name = f"{why_name.replace('why_not_cached', 'why')}_vs_{floor}"
                out[name] = round(
                    statistics.median(
                        w["seconds"] / f["seconds"] for w, f in zip(runs[why_name], runs[floor], strict=True)
                    ),
                    2,
                )
                # the same comparison read another way (the floor's own spread is wide on a shared machine)
                out[f"{name}_of_medians"] = round(out[why_name]["median_s"] / out[floor]["median_s"], 2)
        path = Path(args.out) if args.out else br.RESULTS / f"{dt.date.today()}-why-live.json"
        path.write_text(json.dumps(out, indent=2) + "\n")
        for k in cmds:
            br.log(f"{k}: {out[k]['median_s']:.3f}s wall, {out[k]['median_cpu_s']:.3f}s CPU")
        for key in (k for k in out if "_vs_floor_" in k):
            how = "ratio of the median wall times" if key.endswith("_of_medians") else "median of the per-round ratios"
            br.log(f"{key}: {out[key]} ({how})")
        br.log(f"results: {path}")
    finally:
        if not args.keep and not args.dir:
            br.down(d)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
