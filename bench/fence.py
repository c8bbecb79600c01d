"""The fence under load: a leader frozen (SIGSTOP) in the middle of a batch of deletes, resumed after the
other replica took over, many times, with CPU hogs running. Counted from the API server's audit log:
writes of the old leader received after the new leader acquired the Lease; and from the objects, not the
answers (a 504 can be committed): the KernelCacheNodes (name -> uid) once the new leader converged, before
the old one is resumed, against the same list after it exited: a late delete that took effect leaves a
name missing or recreated under another uid (the new leader is quiet on a converged cluster).

Two modes on one test bed: the fence's binding enforcing (`Deny`) and only auditing (`Audit`: the
in-process guard alone). The binding is switched, never deleted (kubernetes/kubernetes#133827).

    python3 -m bench.fence [--runs 20 (valid trials per mode)] [--members 600] [--hogs 2] [--out FILE]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import multiprocessing
import os
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
    cluster.apply(
        [
            b.config_map({"enabled": True}),
            b.group("gpu", {"pool": "gpu"}),
            b.agent_daemonset(terms=[b.term({"pool": "gpu"})]),
        ]
    )
    existing = set(faults.kcn_names(cluster))
    cluster.create([b.kcn(n) for n in names if n not in existing])
    old = faults.Replica(
        cluster,
        tmp,
        "old",
        *faults.LEADER_FLAGS,
        env={"KUBECONFIG": str(kubeconfigs["fence-a"]), "POD_NAME": "fence-a"},
    )
    new = None
    try:
        cluster.wait_for("fence-a to lead", lambda: old.holds(cluster), timeout=60)
        new = faults.Replica(
            cluster,
            tmp,
            "new",
            *faults.LEADER_FLAGS,
            env={"KUBECONFIG": str(kubeconfigs["fence-b"]), "POD_NAME": "fence-b"},
        )
        cluster.wait_for("fence-b to stand by", new.ready, timeout=60)
        mark = cluster.audit_mark()
        faults.freeze_mid_batch(cluster, old, lambda: old.proc.send_signal(signal.SIGSTOP))
        acquired = faults.take_over(cluster, new, set(names))
        before = uids(cluster)
        old.proc.send_signal(signal.SIGCONT)
        old.proc.wait(60)
        time.sleep(2)
        after = uids(cluster)
        changed = sorted(n for n in before if after.get(n) != before[n])
        writes = [
            e
            for e in cluster.audit_events(mark)
            if old.mine(e) and e["verb"] in faults.MUTATING and e["objectRef"]["resource"] != "leases"
        ]
        late = [e for e in writes if faults.received(e) >= acquired]
        admitted = [e for e in late if e["responseStatus"]["code"] != 403]
        late_names = {e["objectRef"].get("name") for e in late}
        return {
            "writes": len(writes),
            "late": len(late),
            "admitted_late": len(admitted),
            # from the objects: a late write of the old leader that took effect, whatever it was answered
            "took_effect": [n for n in changed if n in late_names],
            "changed_otherwise": [n for n in changed if n not in late_names],
            "late_writes": [
                (e["verb"], e["objectRef"]["resource"], e["objectRef"].get("name"), e["responseStatus"]["code"])
                for e in late
            ],
            "late_after_takeover_s": [round((faults.received(e) - acquired).total_seconds(), 3) for e in late],
            "old_exit": old.proc.returncode,
        }
    finally:
        old.stop()
        if new is not None:
            new.stop()
        cluster.kubectl("delete", "lease", faults.LEASE[1], "-n", faults.LEASE[2], check=False)


def uids(cluster: Cluster) -> dict[str, str]:
    items = cluster.get("kernelcachenodes")["items"]
    return {x["metadata"]["name"]: x["metadata"]["uid"] for x in items}


def switch(cluster: Cluster, mode: str, other_pod: Path) -> None:
    """Set the binding to `mode` and wait until admission acts on it: with a Lease held by a third identity,
    a dry-run write of another pod is refused (Deny) or admitted (Audit)."""
    cluster.kubectl(
        "patch",
        "validatingadmissionpolicybinding",
        tf.POLICY,
        "--type=merge",
        "-p",
        json.dumps({"spec": {"validationActions": [mode]}}),
    )
    tf.set_holder(cluster, "bench-probe_0_0")
    cluster.wait_for(
        f"the fence to {mode.lower()}",
        lambda: tf.refused_by_fence(tf.probe(cluster, other_pod)) == (mode == "Deny"),
        timeout=60,
    )
    cluster.kubectl("delete", "lease", faults.LEASE[1], "-n", faults.LEASE[2], check=False)


def write(args: argparse.Namespace, results: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    summary = {}
    for mode, all_runs in results.items():
        rs = [r for r in all_runs if "error" not in r]
        summary[mode] = {
            "runs": len(rs),
            "failed_to_start": len(all_runs) - len(rs),
            "runs_with_late_writes": sum(1 for r in rs if r["late"]),
            "late_writes": sum(r["late"] for r in rs),
            "answered_not_403": sum(r["admitted_late"] for r in rs),
            "took_effect": sum(len(r["took_effect"]) for r in rs),
            "load1": [min(r["load1"] for r in all_runs), max(r["load1"] for r in all_runs)] if all_runs else [],
        }
    Path(args.out).write_text(
        json.dumps({"members": args.members, "hogs": args.hogs, "summary": summary, "runs": results}, indent=1) + "\n"
    )
    return summary


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
    up = subprocess.run(
        [str(ROOT / "tests" / "testbed" / "testbed"), "up", "--dir", str(d / "tb"), "--simulate"],
        capture_output=True,
        text=True,
    )
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
        # alternate the modes until each has `runs` valid trials (a trial that did not start is not one)
        attempt = 0
        while attempt < args.runs * 3 and min(sum("error" not in r for r in rs) for rs in results.values()) < args.runs:
            mode = ("Deny", "Audit")[attempt % 2]
            attempt += 1
            if sum("error" not in r for r in results[mode]) >= args.runs:
                continue
            switch(cluster, mode, kubeconfigs["fence-b"])
            hogs = [multiprocessing.Process(target=hog, args=(time.time() + 600,)) for _ in range(args.hogs)]
            for h in hogs:
                h.start()
            load = os.getloadavg()[0]
            try:
                run = one_run(cluster, tmp, args.members, kubeconfigs)
            except AssertionError as exc:  # a trial that did not get going (no batch to freeze): said, not counted
                run = {
                    "error": str(exc).splitlines()[0],
                    "logs": {p.name: p.read_text()[-2000:] for p in tmp.glob("*.log")},
                }
            finally:
                for h in hogs:
                    h.terminate()
            run["load1"] = round(load, 1)
            results[mode].append(run)
            print(f"trial {attempt} ({mode}): {run}", file=sys.stderr, flush=True)
            summary = write(args, results)  # after every trial: a bench cut short keeps what it measured
    finally:
        subprocess.run(
            [str(ROOT / "tests" / "testbed" / "testbed"), "down", "--dir", str(d / "tb")], capture_output=True
        )
        shutil.rmtree(d, ignore_errors=True)
    summary = write(args, results)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
