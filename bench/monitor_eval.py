"""The monitor's evaluation, offline: a dump (bench.scale's) loaded as `--from-file` loads it, put into the
informer stores of a LiveSnapshot (snapshot/follow.py, no watch running) as the monitor's lists hold it, then
evaluated `--evaluations` times as the monitor does after a settled burst of changes (one node relabelled
before each: a change), each part timed in CPU seconds, side by side with the doctor alone on a fresh snapshot
(the floor, measured in the same process and round). Every dump runs in a fresh process (peak RSS is
/proc/self/status VmHWM).

    python3 -m bench.monitor_eval DUMP [DUMP...] [--evaluations 3] [--change nodes|kcns] [--profile N]
                                  [--code WORKTREE] [--out FILE]

The machine is shared: read the CPU seconds and the ratios to the doctor, not wall times.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _status(key: str) -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def _live(snap: Any) -> Any:
    """A LiveSnapshot whose stores hold `snap`'s objects, one list per snapshot field (not started)."""
    from kubectl_kcache.snapshot import kinds
    from kubectl_kcache.snapshot.follow import LiveSnapshot
    from kubectl_kcache.snapshot.kinds import ListSpec
    from kubectl_kcache.snapshot.reads import ListMade

    lists = []
    for kind in kinds.KINDS:
        if kind.resource.plural == "events" and kind.resource.group:
            continue  # one list per field
        keys = frozenset(
            (kind.field, obj.metadata.namespace or "", obj.metadata.name) for obj in getattr(snap, kind.field)
        )
        lists.append(ListMade(ListSpec(kind.resource), "1", keys))
    return LiveSnapshot(None, snap, lists, lister_watcher=lambda _listed: None)  # type: ignore[arg-type,return-value]


CHANGE = "nodes"  # the field whose objects are changed before each evaluation (--change)


def _relabel(live: Any, i: int) -> None:
    """A change as a watch brings it: a label added to one object (a node, by default; `--change kcns`: a
    KernelCacheNode, as its agent's status writes replace it), the store updated."""
    import msgspec

    inf = next(inf for inf in live.informers if inf.kind.field == CHANGE)
    with inf.lock:
        key = sorted(inf.store)[i % len(inf.store)]
        node = inf.store[key]
        labels = dict(node.metadata.labels or {})
        labels["bench.kcache/flip"] = str(i)
        inf.store[key] = msgspec.structs.replace(node, metadata=msgspec.structs.replace(node.metadata, labels=labels))
        inf.changes = getattr(inf, "changes", 0) + 1  # (the code before 2026-12-05 has no counter)
    live.coalescer.notify()


def child(path: str, evaluations: int, profile: int) -> dict[str, Any]:
    import dataclasses
    import gc
    import time

    from kubectl_kcache.checks import run_doctor
    from kubectl_kcache.monitor import evaluate as ev_mod
    from kubectl_kcache.monitor.metrics import Health, render
    from kubectl_kcache.provenance import now_rfc3339
    from kubectl_kcache.snapshot.files.from_files import load_files

    out: dict[str, Any] = {"dump": path, "import_rss_mb": round(_status("VmHWM"), 1)}
    t = time.process_time()
    gc.disable()  # as reading.load_snapshot_files reads files; the monitor's lists are made with the GC on
    snap = load_files([path])
    gc.enable()
    out["load_cpu_s"] = round(time.process_time() - t, 2)
    out["nodes"], out["kernel_caches"] = len(snap.nodes), len(snap.kernel_caches)
    live = _live(snap)
    del snap
    gc.collect()
    out["loaded_rss_mb"] = round(_status("VmRSS"), 1)

    # each part of the evaluation, timed where evaluate() calls it (module-level names of monitor/evaluate.py)
    parts: dict[str, float] = {}

    def timed(name: str, fn: Any) -> Any:
        def wrapper(*a: Any, **k: Any) -> Any:
            t0 = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                parts[name] = parts.get(name, 0.0) + time.process_time() - t0

        return wrapper

    for name in ("run_doctor", "fleet_status", "hit_rate", "explain_all", "Derived", "derive"):
        if hasattr(ev_mod, name):
            setattr(ev_mod, name, timed(name, getattr(ev_mod, name)))

    rounds = []
    health = Health(ready=True, read_errors={}, last_read=time.time(), evaluations=1)
    ev = None
    for i in range(evaluations):
        _relabel(live, i)
        parts.clear()
        t0 = time.process_time()
        snapshot = live.snapshot(now_rfc3339())
        t1 = time.process_time()
        made = ev_mod.evaluate(snapshot, None)
        del snapshot
        t2 = time.process_time()
        text = render(made, health)
        t3 = time.process_time()
        ev = made  # published: the previous one was held while this one was made, as the monitor holds it
        rounds.append(
            {
                "snapshot_s": round(t1 - t0, 3),
                "evaluate_s": round(t2 - t1, 3),
                "metrics_s": round(t3 - t2, 3),
                "total_s": round(t3 - t0, 3),
                "parts_s": {k: round(v, 3) for k, v in parts.items()},
                "metrics_lines": text.count("\n"),
                "html_rendered": "html" in ev.__dict__,
            }
        )
        print(f"{Path(path).name} evaluation {i + 1}: {json.dumps(rounds[-1])}", file=sys.stderr, flush=True)
    # memory before anything else runs: the stores, the last snapshot and its indexes, the published evaluation
    out["rounds"] = rounds
    out["rss_after_evaluations_mb"] = round(_status("VmRSS"), 1)
    out["peak_rss_mb"] = round(_status("VmHWM"), 1)
    t = time.process_time()
    scrapes = 10
    for _ in range(scrapes):
        render(ev, health)
    out["scrape_cpu_s"] = round((time.process_time() - t) / scrapes, 4)
    # the floor: the doctor alone on a fresh snapshot of the same objects (every index built again)
    last = live.snapshot(now_rfc3339())
    out["doctor_alone_s"] = []
    for _ in range(evaluations):
        fresh = dataclasses.replace(last)
        t = time.process_time()
        run_doctor(fresh)
        out["doctor_alone_s"].append(round(time.process_time() - t, 3))
        del fresh
    t = time.process_time()
    page = ev.html  # type: ignore[union-attr]
    out["report_cpu_s"], out["report_mb"] = round(time.process_time() - t, 2), round(len(page) / 2**20, 1)
    if profile:
        import cProfile

        prof = cProfile.Profile()
        _relabel(live, evaluations)
        snapshot = live.snapshot(now_rfc3339())
        prof.enable()
        ev_mod.evaluate(snapshot, None)
        prof.disable()
        import io
        import pstats

        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(profile)
        pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(profile)
        out["profile"] = s.getvalue()
    return out


def _median(xs: list[float]) -> float:
    import statistics

    return round(statistics.median(xs), 3)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dumps", nargs="+")
    ap.add_argument("--evaluations", type=int, default=3)
    ap.add_argument("--profile", type=int, default=0, help="cProfile the last evaluation: top N by cumulative time")
    ap.add_argument("--label", default="", help="what code is measured (recorded with the results)")
    ap.add_argument("--code", default=str(ROOT), help="the tree whose kubectl_kcache is measured (a worktree)")
    ap.add_argument("--out", help="append the results to this JSON file (a list)")
    ap.add_argument("--change", default="nodes", help="the snapshot field of the object changed (nodes, kcns)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        global CHANGE
        CHANGE = args.change
        print(json.dumps(child(args.dumps[0], args.evaluations, args.profile)))
        return 0
    results = []
    for dump in args.dumps:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([args.code, str(ROOT)]), "NO_COLOR": "1"}
        cmd = [sys.executable, __file__, "--child", dump, "--evaluations", str(args.evaluations)]
        cmd += ["--profile", str(args.profile), "--change", args.change]
        proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True, check=True, cwd=ROOT)
        res = json.loads(proc.stdout)
        if "profile" in res:
            print(res["profile"], file=sys.stderr)
        rows = res["rounds"][1:] or res["rounds"]  # the first evaluation apart (its imports, first-call caches)
        res["label"], res["code"], res["change"] = args.label, args.code, args.change
        res["median"] = {k: _median([r[k] for r in rows]) for k in ("snapshot_s", "evaluate_s", "metrics_s", "total_s")}
        res["median"]["doctor_alone_s"] = _median(res["doctor_alone_s"])
        res["median"]["total_per_doctor"] = round(res["median"]["total_s"] / res["median"]["doctor_alone_s"], 2)
        results.append(res)
        print(
            f"{Path(dump).name}: per evaluation CPU {res['median']['total_s']} s "
            f"(snapshot {res['median']['snapshot_s']}, evaluate {res['median']['evaluate_s']}, "
            f"metrics {res['median']['metrics_s']}), doctor alone {res['median']['doctor_alone_s']} s, "
            f"ratio {res['median']['total_per_doctor']}; a scrape {res['scrape_cpu_s']} s; "
            f"peak RSS {res['peak_rss_mb']} MB "
            f"(loaded {res['loaded_rss_mb']} MB)",
            flush=True,
        )
    if args.out:
        out = Path(args.out)
        prior = json.loads(out.read_text()) if out.exists() else []
        out.write_text(json.dumps(prior + [{k: v for k, v in r.items() if k != "profile"} for r in results], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
