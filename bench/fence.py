"""The fence under load: a leader frozen (SIGSTOP) in the middle of a batch of deletes, resumed after the
other replica took over, many times, with CPU hogs running. Counted from the API server's audit log:
writes of the old leader received after the new leader acquired the Lease, and how many of those were
admitted (any answer but the fence's 403 counts as admitted: a 504 can be committed).

Two modes on one test bed: the fence's binding enforcing (`Deny`) and only auditing (`Audit`: the
in-process guard alone). The binding is switched, never deleted (kubernetes/kubernetes#133827).

    python3 -m bench.fence [--runs 20] [--members 600] [--hogs 2] [--out bench/results/DATE-fence.json]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import multiprocessing
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import builders as b  # noqa: E402
from tests.e2e import test_fence as tf  # noqa: E402
from tests.e2e import test_reconcile_faults as faults  # noqa: E402
from tests.e2e.cluster import Cluster  # noqa: E402


def hog(stop_at: float) -> None:
    while time.time() < stop_at:
        pass


def one_run(cluster: Cluster, tmp: Path, members: int, kubeconfigs: dict[str, Path]) -> dict[str, Any]:
    names = [f"gpu-{i:04d}" for i in range(members)]
    cluster.apply([b.config_map({"enabled": True}), b.group("gpu", {"pool": "gpu"}),
                   b.agent_daemonset(terms=[b.term({"pool": "gpu"})])])
    existing = set(faults.kcn_names(cluster))
    cluster.create([b.kcn(n) for n in names if n not in existing])
    old = faults.Replica(cluster, tmp, "old", *faults.LEADER_FLAGS,
                         env={"KUBECONFIG": str(kubeconfigs["fence-a"]), "POD_NAME": "fence-a"})
    new = None
    try:
        cluster.wait_for("fence-a to lead", lambda: old.holds(cluster), timeout=60)
        new = faults.Replica(cluster, tmp, "new", *faults.LEADER_FLAGS,
                             env={"KUBECONFIG": str(kubeconfigs["fence-b"]), "POD_NAME": "fence-b"})
        cluster.wait_for("fence-b to stand by", new.ready, timeout=60)
        mark = cluster.audit_mark()
        faults.freeze_mid_batch(cluster, old, lambda: old.proc.send_signal(signal.SIGSTOP))
        acquired = faults.take_over(cluster, new, set(names))
        old.proc.send_signal(signal.SIGCONT)
        old.proc.wait(60)
        time.sleep(2)
        writes = [e for e in cluster.audit_events(mark) if old.mine(e) and e["verb"] in faults.MUTATING
                  and e["objectRef"]["resource"] != "leases"]
        late = [e for e in writes if faults.received(e) >= acquired]
        admitted = [e for e in late if e["responseStatus"]["code"] != 403]
        return {"writes": len(writes), "late": len(late), "admitted_late": len(admitted),
                "late_after_takeover_s": [round((faults.received(e) - acquired).total_seconds(), 3) for e in late],
                "old_exit": old.proc.returncode}
    finally:
        old.stop()
        if new is not None:
            new.stop()
        cluster.kubectl("delete", "lease", faults.LEASE[1], "-n", faults.LEASE[2], check=False)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--members", type=int, default=600)
    ap.add_argument("--hogs", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / f"{dt.date.today()}-fence.json"))
    args = ap.parse_args()
    faults.MEMBERS = args.members
    d = Path(tempfile.mkdtemp(prefix="kcache-fence-bench-"))
    tmp = d / "work"
    tmp.mkdir()
    up = subprocess.run([str(ROOT / "tests" / "testbed" / "testbed"), "up", "--dir", str(d / "tb"), "--simulate"],
                        capture_output=True, text=True)
    if up.returncode != 0:
        sys.exit(up.stderr)
    cluster = Cluster(d / "tb", json.loads((d / "tb" / "state.json").read_text()))
    results: dict[str, list[dict[str, Any]]] = {"Deny": [], "Audit": []}
    try:
        cluster.reset()
        cluster.kubectl("apply", "-f", str(ROOT / "deploy" / "rbac.yaml"))
        cluster.kubectl("apply", "-f", str(ROOT / "deploy" / "fence.yaml"))
        kubeconfigs = {p: tf.token_kubeconfig(cluster, tmp, p) for p in ("fence-a", "fence-b")}
        cluster.create([b.node(f"gpu-{i:04d}", {"pool": "gpu"}, ready=None) for i in range(args.members)])
        for i in range(args.runs * 2):
            mode = "Deny" if i % 2 == 0 else "Audit"
            cluster.kubectl("patch", "validatingadmissionpolicybinding", tf.POLICY, "--type=merge",
                            "-p", json.dumps({"spec": {"validationActions": [mode]}}))
            time.sleep(2)  # the binding change reaches admission
            hogs = [multiprocessing.Process(target=hog, args=(time.time() + 600,)) for _ in range(args.hogs)]
            for h in hogs:
                h.start()
            try:
                run = one_run(cluster, tmp, args.members, kubeconfigs)
            except AssertionError as exc:  # a trial that did not get going (no batch to freeze): said, not counted
                run = {"error": str(exc).splitlines()[0], "logs": {p.name: p.read_text()[-2000:]
                                                                  for p in tmp.glob("*.log")}}
            finally:
                for h in hogs:
                    h.terminate()
            results[mode].append(run)
            print(f"run {i + 1}/{args.runs * 2} ({mode}): {run}", file=sys.stderr, flush=True)
    finally:
        subprocess.run([str(ROOT / "tests" / "testbed" / "testbed"), "down", "--dir", str(d / "tb")],
                       capture_output=True)
        shutil.rmtree(d, ignore_errors=True)
    summary = {}
    for mode, all_runs in results.items():
        rs = [r for r in all_runs if "error" not in r]
        summary[mode] = {"runs": len(rs), "failed_to_start": len(all_runs) - len(rs),
                         "runs_with_late_writes": sum(1 for r in rs if r["late"]),
                         "late_writes": sum(r["late"] for r in rs),
                         "admitted_late": sum(r["admitted_late"] for r in rs)}
    Path(args.out).write_text(json.dumps({"members": args.members, "hogs": args.hogs, "summary": summary,
                                          "runs": results}, indent=1) + "\n")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
