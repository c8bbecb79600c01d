"""The long-running processes at scale, on the test bed (issues 35, 36 point 3 and 38): what their "Done when"
asks for, counted from the API server's audit log.

    python3 -m bench.controller_trials --nodes 5000 --deployments 2000 --out FILE
        [--code DIR] [--quiet-seconds 600] [--churn-changes 12] [--churn-interval 5] [--window 60]
        [--mid-batch-runs 3] [--large-nodes 50000] [--large-quiet-seconds 120] [--large-churn-changes 6]
        [--fill-deadline 900] [--fill-workers 12] [--min-free-gb 6] [--skip quiet,forbidden,fence,mid_batch,large]
        [--dir DIR] [--keep] [--resume]

A phase can be run apart on a kept test bed: `--dir DIR --keep` first, then `--dir DIR --resume --skip ...`
with the same --out (the phases already there are kept). The 2026-12-05 results were made that way: the
5,000-node trials, then the large phase alone (docs/performance.md, "Long-running processes at scale").

The cluster is bench.run's (bench/fixtures.py: 20-40 KB GPU nodes, 50 node groups covering them, a
KernelCacheNode and an agent pod per node, 2,000 KernelCaches in 20 namespaces, KServe's singletons), with
KServe's controller Deployment present but not ready, and `--deployments` other Deployments in 4 namespaces.
The test bed is etcd and kube-apiserver with its watch cache (no controller manager: nothing acts on the
Deployments, and no KWOK); the plugin runs from `--code` (a git worktree of the commit measured), as
`python -m kubectl_kcache`.

1. quiet: `reconcile --leader-elect --resync-period 30 --health-port` and `monitor` side by side. Once both
   answer /readyz 200, reconcile made no write for 10 s and the monitor evaluated, `--quiet-seconds` of nothing:
   their requests by verb and resource (LIST expected 0), and every watch each made since it started, per list
   (path and selectors): the most open at once and open at the end (one per list), and the re-opens (the
   informers ask the server to end a watch after 240 s and resume it from their resourceVersion). Peak RSS
   (VmHWM: the initial lists included) and the largest VmRSS sampled every 5 s over the period. Then churn:
   every `--churn-interval` s a member node is labelled out of its group, then back in; per change the time
   from the API server receiving the label patch to reconcile's KernelCacheNode delete/create being received,
   and to the monitor's `/metrics` (kcache_nodegroup_members) showing it (polled every 0.1 s).
2. forbidden: deploy/rbac.yaml with `delete kernelcachenodes` removed; reconcile as the ServiceAccount
   (`--as`), a pass every second; all groups deleted, so every pass plans a delete per member. Once /readyz
   says the verb is refused, its requests over `--window` s (refused: answered 403).
3. fence: deploy/fence.yaml enforcing, reconcile with the pod-bound token of pod fence-a and no POD_NAME
   (tests/e2e/test_fence.py test 5), `--leader-elect`, a pass every second, the same deletes planned. Once it
   says what the fence expects, its writes (not Leases) and `list leases` over `--window` s. The binding is
   then switched to Audit, never deleted (kubernetes#133827).
4. mid_batch: groups back, reconcile (admin, no --force) ready and converged; all groups deleted, and once 300
   of its deletes were received KServe's controller Deployment (kserve/kserve-localmodel-controller-manager)
   gets readyReplicas 1 through its status subresource, as the deployment controller writes it. Its deletes
   received after that status write, and after it by 0.25, 0.5, 1 and 2 s (its watch event on the way).
   Repeated `--mid-batch-runs` times (readyReplicas 0 and the groups back between runs).
5. large: the cluster grown to `--large-nodes` (stopping at `--fill-deadline` s of loading or when less than
   `--min-free-gb` of memory is left), both processes started again; quiet and churn as in 1.

Results after every phase in --out; the load average with each.
"""

from __future__ import annotations

import sys
from pathlib import Path


def _code_dir(argv: list[str]) -> Path:
    for i, a in enumerate(argv):
        if a == "--code" and i + 1 < len(argv):
            return Path(argv[i + 1]).resolve()
        if a.startswith("--code="):
            return Path(a.split("=", 1)[1]).resolve()
    return Path(__file__).resolve().parent.parent


CODE = _code_dir(sys.argv)
sys.path.insert(0, str(CODE))  # kubectl_kcache and tests from the commit measured

import argparse  # noqa: E402
import datetime as dt  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import urllib.error  # noqa: E402
import urllib.request  # noqa: E402
from collections import Counter  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402
from urllib.parse import parse_qsl, urlsplit  # noqa: E402

from bench import fixtures as fx  # noqa: E402
from bench import run as br  # noqa: E402

TESTBED = CODE / "tests" / "testbed" / "testbed"
SA_USER = "system:serviceaccount:kserve:kubectl-kcache-reconcile"
MUTATING = ("create", "update", "patch", "delete", "deletecollection")
CONTROLLER = ("kserve", "kserve-localmodel-controller-manager")
POOL_LABEL = "kcache.bench/pool"
DEPLOYMENT_NAMESPACES = tuple(fx.TEAM_NAMESPACES[:4])
MID_BATCH_AFTER = 300  # deletes received before KServe's controller is made ready
DELIVERY = (0.0, 0.25, 0.5, 1.0, 2.0)
WRITERS = 8


def log(msg: str) -> None:
    br.log(msg)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stamp(text: str) -> float:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def mem_available_gb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 2**20
    return 0.0


# ---- the audit log ------------------------------------------------------------------------------------


def is_reconcile(e: dict[str, Any]) -> bool:
    ua = e.get("userAgent", "")
    return ua.startswith("kubectl-kcache/") and " reconcile/" in ua


def is_monitor(e: dict[str, Any]) -> bool:
    ua = e.get("userAgent", "")
    return ua.startswith("kubectl-kcache/") and ua.endswith(" monitor")


def requests(events: list[dict[str, Any]], who: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    """One event per request (the audit log has a watch twice: started and complete), the last stage seen."""
    out: dict[str, dict[str, Any]] = {}
    for e in events:
        if who(e):
            out[e["auditID"]] = e
    return list(out.values())


def resource(e: dict[str, Any]) -> str:
    ref = e.get("objectRef") or {}
    return ref.get("resource", "") + ("/" + ref["subresource"] if ref.get("subresource") else "")


def verbs(reqs: list[dict[str, Any]]) -> dict[str, int]:
    return dict(sorted(Counter(f"{e['verb']} {resource(e)}" for e in reqs).items()))


def list_key(e: dict[str, Any]) -> str:
    """A list or watch by what it reads: the path and its selectors (not the page, resourceVersion or timeout)."""
    parts = urlsplit(e["requestURI"])
    q = {k: v for k, v in parse_qsl(parts.query) if k in ("labelSelector", "fieldSelector") and v}
    return parts.path + "".join(f" {k}={v}" for k, v in sorted(q.items()))


def watch_figures(events: list[dict[str, Any]], who: Callable[[dict[str, Any]], bool], end: float) -> dict[str, Any]:
    """Every watch of `who` in `events`: per list the requests, the most open at once, open at `end`."""
    starts: dict[str, float] = {}
    ends: dict[str, float] = {}
    keys: dict[str, str] = {}
    codes: Counter = Counter()
    for e in events:
        if not who(e) or e.get("verb") != "watch":
            continue
        aid = e["auditID"]
        keys[aid] = list_key(e)
        starts.setdefault(aid, stamp(e["requestReceivedTimestamp"]))
        if e.get("stage") == "ResponseComplete":
            ends[aid] = stamp(e["stageTimestamp"])
            codes[(e.get("responseStatus") or {}).get("code")] += 1
    per: dict[str, dict[str, Any]] = {}
    for key in sorted(set(keys.values())):
        ids = [a for a in keys if keys[a] == key]
        points = sorted([(starts[a], 1) for a in ids] + [(ends[a], -1) for a in ids if a in ends])
        most = cur = 0
        for _, d in points:
            cur += d
            most = max(most, cur)
        per[key] = {
            "requests": len(ids),
            "most_open_at_once": most,
            "open_at_end": sum(1 for a in ids if a not in ends or ends[a] > end),
        }
    return {
        "lists_watched": len(per),
        "watch_requests": len(keys),
        "ended_by_server": dict(codes),
        "most_open_at_once_max": max((p["most_open_at_once"] for p in per.values()), default=0),
        "open_at_end_total": sum(p["open_at_end"] for p in per.values()),
        "per_list": per,
    }


def start_lists(events: list[dict[str, Any]], who: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    lists = [e for e in requests(events, who) if e["verb"] == "list"]
    keys = Counter(list_key(e) for e in lists)
    return {"list_requests": len(lists), "lists": len(keys), "pages_per_list": dict(sorted(keys.items()))}


# ---- the test bed and the objects ----------------------------------------------------------------------


def deployment(i: int) -> dict[str, Any]:
    """An ordinary serving Deployment (nothing of KServe's controller in its name, labels or image)."""
    name = f"svc-{i:05d}"
    labels = {"app": name, "app.kubernetes.io/part-of": "bench"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": DEPLOYMENT_NAMESPACES[i % len(DEPLOYMENT_NAMESPACES)],
            "labels": labels,
        },
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {
                            "name": "server",
                            "image": f"registry.example.com/team-{i % 13}/model-server-{i}:v1",
                            "ports": [{"containerPort": 8080}],
                            "resources": {"limits": {"nvidia.com/gpu": "1"}},
                        }
                    ],
                    "tolerations": [fx.GPU_TOLERATION],
                },
            },
        },
    }


class Trials:
    def __init__(self, args: argparse.Namespace, d: Path):
        self.args = args
        self.dir = d
        self.bed = br.Bed(d)
        from tests.e2e.cluster import Cluster

        self.cluster = Cluster(d, self.bed.state)
        self.filler = br.Filler(self.bed)
        self.r = self.filler.r
        self.tmp = d / "trials"
        self.tmp.mkdir(exist_ok=True)
        self.window_start = 0.0

    def between(self, since: int, until: int) -> list[dict[str, Any]]:
        with open(self.bed.audit, "rb") as fh:
            fh.seek(since)
            data = fh.read(until - since)
        return [json.loads(x) for x in data.splitlines() if x.strip()]

    # ---- filling -------------------------------------------------------------------------------------
    def fill(self, n: int, deadline: float | None = None) -> dict[str, Any]:
        """Nodes, KernelCacheNodes and agent pods up to `n`, in chunks of 2,500; stops at `deadline` or when
        memory runs short (the test bed's size is what held)."""
        f = self.filler
        r = self.r
        f.base()
        ctl = self.c().get(r.DEPLOYMENTS, CONTROLLER[1], CONTROLLER[0])
        if ((ctl.get("status") or {}).get("readyReplicas") or 0) != 0:  # fixtures make it ready: not here
            self.controller_ready(False)
        uid = f.done["ds_uid"]
        t0 = time.time()
        stopped = ""
        while f.done["nodes"] < n:
            if deadline is not None and time.time() > deadline:
                stopped = "fill deadline"
                break
            if mem_available_gb() < self.args.min_free_gb:
                stopped = f"memory available {mem_available_gb():.1f} GB < {self.args.min_free_gb}"
                break
            a, b = f.done["nodes"], min(n, f.done["nodes"] + 2500)

            def one(i: int) -> None:
                f.create(r.NODES, fx.gpu_node(i, br.GROUPS))
                f.create(r.KERNEL_CACHE_NODES, *fx.kcn(i, br.CACHES, br.GROUPS))
                f.create(r.PODS, *fx.agent_pod(i, uid))

            br.parallel(one, range(a, b), self.args.fill_workers)
            f.set_status(r.DAEMONSETS, "kserve-kernelcachenode-agent", fx.daemonset_status(b), "kserve")
            f.done["nodes"] = b
            f._save()
            log(f"  {b} nodes ({time.time() - t0:.0f}s, load {br.load():.1f}, {mem_available_gb():.1f} GB free)")
        return {
            "nodes": f.done["nodes"],
            "seconds": round(time.time() - t0, 1),
            "stopped": stopped,
            "mem_available_gb": round(mem_available_gb(), 1),
        }

    def deployments(self, count: int) -> None:
        if self.filler.done.get("deployments", 0) >= count:
            return
        br.parallel(lambda i: self.filler.create(self.r.DEPLOYMENTS, deployment(i)), range(count))
        self.filler.done["deployments"] = count
        self.filler._save()

    def c(self) -> Any:
        return self.filler.c

    def controller_ready(self, ready: bool) -> None:
        n = 1 if ready else 0
        status = {"replicas": 1, "readyReplicas": n, "availableReplicas": n, "updatedReplicas": 1}
        self.filler.set_status(self.r.DEPLOYMENTS, CONTROLLER[1], status, CONTROLLER[0])

    def groups(self, present: bool) -> None:
        if present:
            br.parallel(lambda g: self.filler.create(self.r.NODE_GROUPS, fx.node_group(g)), range(br.GROUPS))
        else:
            self.cluster.kubectl("delete", "kernelcachenodegroups", "--all", "--wait=false")

    def kcn_count(self) -> int:
        return len(self.c().list_all(self.r.KERNEL_CACHE_NODES, convert=lambda o: 0)[0])

    def label(self, i: int, pool: str) -> None:
        self.c().request(
            "PATCH",
            self.r.NODES.path(None, fx.node_name(i)),
            body={"metadata": {"labels": {POOL_LABEL: pool}}},
            content_type="application/merge-patch+json",
            verb="patch",
        )


class Plugin:
    """One `python -m kubectl_kcache ...` from the code measured, its stderr in a file."""

    def __init__(self, t: Trials, name: str, *args: str, env: dict[str, str] | None = None):
        self.port = free_port()
        self.name = name
        self.log_path = t.tmp / f"{name}.log"
        self._log = open(self.log_path, "w")  # noqa: SIM115 - closed by stop()
        e = {**t.bed.env, "PYTHONPATH": str(CODE), **(env or {})}
        port_flag = ["--port", str(self.port), "--address", "127.0.0.1"] if args[0] == "monitor" else []
        health = ["--health-port", str(self.port)] if args[0] == "reconcile" else []
        self.started = time.time()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kubectl_kcache", *args, *port_flag, *health],
            env=e,
            cwd=CODE,
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )
        self.rss_samples: list[float] = []

    def http(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=10) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()
        except OSError as exc:
            return 0, str(exc)

    def ready(self) -> bool:
        if self.proc.poll() is not None:
            raise RuntimeError(f"{self.name} exited {self.proc.returncode}: {self.log()[-3000:]}")
        return self.http("/readyz")[0] == 200

    def log(self) -> str:
        return self.log_path.read_text()

    def vm(self, key: str) -> float:
        return round(br._vm(self.proc.pid, key), 1)

    def cpu(self) -> float:
        return round(br._cpu_seconds(self.proc.pid), 2)

    def sample(self) -> None:
        self.rss_samples.append(self.vm("VmRSS"))

    def metric(self, name: str, **labels: str) -> float | None:
        code, text = self.http("/metrics")
        if code != 200:
            return None
        want = name + "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}" if labels else name
        for line in text.splitlines():
            if line.startswith(want + " "):
                return float(line.rsplit(" ", 1)[1])
        return None

    def stop(self) -> int | None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        return self.proc.returncode


def wait_for(what: str, check: Callable[[], Any], timeout: float, interval: float = 0.5) -> Any:
    deadline = time.time() + timeout
    while time.time() < deadline:
        got = check()
        if got:
            return got
        time.sleep(interval)
    raise RuntimeError(f"timed out after {timeout:.0f}s waiting for {what}")


def no_writes_for(t: Trials, seconds: float, timeout: float) -> float:
    """Wait until reconcile made no write (but its Lease's) for `seconds`; when its last write was received."""
    t0 = time.time()
    last = t0
    pos = t.bed.audit_mark()
    while time.time() - t0 < timeout:
        time.sleep(1)
        events, pos = t.bed.audit_read(pos)
        for e in events:
            if is_reconcile(e) and e["verb"] in MUTATING and resource(e) != "leases":
                last = time.time()
        if time.time() - last >= seconds:
            return last
    raise RuntimeError(f"reconcile still writing after {timeout:.0f}s")


# ---- 1. quiet and churn --------------------------------------------------------------------------------


def start_pair(t: Trials, timeout: float) -> tuple[Plugin, Plugin, dict[str, Any], int]:
    mark = t.bed.audit_mark()
    rec = Plugin(t, "reconcile", "reconcile", "--leader-elect", "--resync-period", "30")
    mon = Plugin(t, "monitor", "monitor")
    out: dict[str, Any] = {}
    try:
        wait_for("reconcile's /readyz", rec.ready, timeout)
        out["reconcile_ready_s"] = round(time.time() - rec.started, 1)
        wait_for("the monitor's /readyz", mon.ready, timeout)
        wait_for(
            "the monitor's first evaluation",
            lambda: (mon.metric("kcache_monitor_evaluations_total") or 0) >= 1,
            timeout,
        )
        out["monitor_ready_s"] = round(time.time() - mon.started, 1)
        no_writes_for(t, 10, timeout)
        out["converged_s"] = round(time.time() - rec.started, 1)
    except BaseException:
        rec.stop()
        mon.stop()
        raise
    startup = requests(t.bed.audit_events(mark), is_reconcile)
    out["reconcile_startup_writes"] = {k: v for k, v in verbs(startup).items() if k.split()[0] in MUTATING}
    return rec, mon, out, mark


def quiet_and_churn(t: Trials, n: int, quiet_s: float, changes: int, timeout: float) -> dict[str, Any]:
    from kubectl_kcache.snapshot import plan

    log(f"quiet and churn at {n} nodes: starting reconcile and monitor (load {br.load():.1f})")
    rec, mon, out, mark0 = start_pair(t, timeout)
    out["nodes"] = n
    try:
        log(f"  ready: {json.dumps(out)}")
        out["load_start"] = round(br.load(), 2)
        q0 = t.bed.audit_mark()
        tq = time.time()
        cpu0 = {"reconcile": rec.cpu(), "monitor": mon.cpu()}
        evals0 = mon.metric("kcache_monitor_evaluations_total") or 0
        loads = []
        while time.time() - tq < quiet_s:
            time.sleep(5)
            rec.sample()
            mon.sample()
            loads.append(br.load())
        q1 = t.bed.audit_mark()
        quiet_events = t.between(q0, q1)
        quiet = {"seconds": round(time.time() - tq, 1), "load1": [round(min(loads), 2), round(max(loads), 2)]}
        for name, who, p in (("reconcile", is_reconcile, rec), ("monitor", is_monitor, mon)):
            reqs = requests(quiet_events, who)
            quiet[name] = {
                "requests": len(reqs),
                "by_verb": verbs(reqs),
                "lists": sum(1 for e in reqs if e["verb"] == "list"),
                "watches": sum(1 for e in reqs if e["verb"] == "watch"),
                "peak_rss_mb": p.vm("VmHWM"),
                "rss_mb_max_during": max(p.rss_samples),
                "rss_mb_end": p.vm("VmRSS"),
                "cpu_s": round(p.cpu() - cpu0[name], 2),
            }
        evals = (mon.metric("kcache_monitor_evaluations_total") or 0) - evals0
        quiet["monitor"]["evaluations"] = evals
        quiet["monitor"]["cpu_s_per_evaluation"] = round(quiet["monitor"]["cpu_s"] / evals, 2) if evals else None
        quiet["monitor"]["last_evaluation_duration_s"] = mon.metric("kcache_monitor_evaluation_duration_seconds")
        out["quiet"] = quiet
        log(f"  quiet: {json.dumps(quiet)[:1500]}")
        out["churn"] = churn(t, rec, mon, changes)
        end = time.time()
        events = t.bed.audit_events(mark0)
        expected = len(plan.RECONCILE + plan.RECONCILE_ACCESS)
        before = t.between(mark0, q0)
        out["reconcile_lists_at_start"] = start_lists(before, is_reconcile)
        out["reconcile_lists_at_start"]["plan_lists_expected"] = expected
        out["monitor_lists_at_start"] = start_lists(before, is_monitor)
        # lists after the quiet period began: the churn included
        for name, who in (("reconcile", is_reconcile), ("monitor", is_monitor)):
            after = [e for e in requests(t.bed.audit_events(q0), who) if e["verb"] == "list"]
            out[f"{name}_lists_after_sync"] = [e["requestURI"] for e in after]
            out[f"{name}_watches"] = watch_figures(events, who, end)
        out["quiet_audit_bytes"] = q1 - q0
        out["reconcile_peak_rss_mb"] = rec.vm("VmHWM")
        out["monitor_peak_rss_mb"] = mon.vm("VmHWM")
        out["load_end"] = round(br.load(), 2)
    finally:
        out["reconcile_exit"] = rec.stop()
        out["monitor_exit"] = mon.stop()
        t.cluster.kubectl("delete", "lease", "kubectl-kcache-reconcile", "-n", "kserve", check=False)
    return out


def churn(t: Trials, rec: Plugin, mon: Plugin, changes: int) -> dict[str, Any]:
    """Member nodes labelled out of their group and back in, one change every --churn-interval s."""
    rows = []
    for k in range(changes):
        i = k // 2  # node i of pool-(i % 50): out, then in
        pool = f"pool-{i % br.GROUPS:02d}"
        leaving = k % 2 == 0
        before = mon.metric("kcache_nodegroup_members", nodegroup=pool)
        want = (before or 0) + (-1 if leaving else 1)
        pos = t.bed.audit_mark()
        cpu0 = mon.cpu()
        evals0 = mon.metric("kcache_monitor_evaluations_total") or 0
        t_sent = time.time()
        t.label(i, "none" if leaving else pool)
        node = fx.node_name(i)
        row: dict[str, Any] = {"node": node, "change": "out" if leaving else "in"}
        t_patch = None
        t_rec = None
        t_mon = None
        deadline = time.time() + 180
        while time.time() < deadline and (t_rec is None or t_mon is None or t_patch is None):
            if t_mon is None and mon.metric("kcache_nodegroup_members", nodegroup=pool) == want:
                t_mon = time.time()
            events, pos = t.bed.audit_read(pos)
            for e in events:
                ref = e.get("objectRef") or {}
                if e["verb"] == "patch" and ref.get("resource") == "nodes" and ref.get("name") == node:
                    t_patch = stamp(e["requestReceivedTimestamp"])
                if (
                    is_reconcile(e)
                    and ref.get("resource") == "kernelcachenodes"
                    and ref.get("name") == node
                    and e["verb"] == ("delete" if leaving else "create")
                ):
                    t_rec = stamp(e["requestReceivedTimestamp"])
            time.sleep(0.1)
        t0 = t_patch or t_sent
        row["reconcile_s"] = round(t_rec - t0, 3) if t_rec else None
        row["monitor_s"] = round(t_mon - t0, 3) if t_mon else None  # within the 0.1 s poll
        # what the monitor did meanwhile: its CPU seconds and evaluations until the change showed
        row["monitor_cpu_s"] = round(mon.cpu() - cpu0, 2)
        row["monitor_evaluations"] = (mon.metric("kcache_monitor_evaluations_total") or 0) - evals0
        row["monitor_last_evaluation_s"] = mon.metric("kcache_monitor_evaluation_duration_seconds")
        row["load1"] = round(br.load(), 2)
        rows.append(row)
        log(f"  churn {k + 1}/{changes}: {row}")
        time.sleep(max(0.0, t.args.churn_interval - (time.time() - t_sent)))
    out: dict[str, Any] = {"changes": rows}
    for key in ("reconcile_s", "monitor_s"):
        vals = [r[key] for r in rows if r[key] is not None]
        out[key] = {
            "median": round(statistics.median(vals), 3) if vals else None,
            "max": max(vals) if vals else None,
            "missed": sum(1 for r in rows if r[key] is None),
        }
    return out


# ---- 2. a write verb forbidden -------------------------------------------------------------------------


def forbid(t: Trials, verb: str) -> None:
    role = t.cluster.get("clusterrole", "kubectl-kcache-reconcile")
    for rule in role["rules"]:
        if rule.get("resources") == ["kernelcachenodes"]:
            rule["verbs"] = [v for v in rule["verbs"] if v != verb]
    role["metadata"] = {"name": "kubectl-kcache-reconcile"}
    t.cluster.apply(role)


def window_counts(t: Trials, since: int, who: Callable[[dict[str, Any]], bool], seconds: float) -> dict[str, Any]:
    reqs = requests(t.bed.audit_events(since), who)
    refused = [e for e in reqs if (e.get("responseStatus") or {}).get("code") == 403]
    writes = [e for e in reqs if e["verb"] in MUTATING and resource(e) != "leases"]
    return {
        "seconds": seconds,
        "requests": len(reqs),
        "by_verb": verbs(reqs),
        "refused": len(refused),
        "refused_by_verb": verbs(refused),
        "refused_per_minute": round(len(refused) * 60 / seconds, 1),
        "writes_not_leases": len(writes),
        "writes_not_leases_refused": sum(1 for e in writes if (e.get("responseStatus") or {}).get("code") == 403),
        "writes_per_minute": round(len(writes) * 60 / seconds, 1),
        "list_leases": sum(1 for e in reqs if e["verb"] == "list" and resource(e) == "leases"),
        "refused_received_s": [
            round(stamp(e["requestReceivedTimestamp"]) - t.window_start, 1)
            for e in sorted(refused, key=lambda e: e["requestReceivedTimestamp"])
        ][:50],
    }


def forbidden(t: Trials, window: float) -> dict[str, Any]:
    log(f"forbidden: delete kernelcachenodes refused by RBAC (load {br.load():.1f})")
    t.cluster.kubectl("apply", "-f", str(CODE / "deploy" / "rbac.yaml"))
    forbid(t, "delete")
    mark = t.bed.audit_mark()
    rec = Plugin(t, "forbidden", "reconcile", "--as", SA_USER, "--resync-period", "1")
    out: dict[str, Any] = {"resync_period_s": 1, "kcns": t.kcn_count()}
    try:
        wait_for("reconcile's /readyz", rec.ready, 600)
        t.groups(False)
        t_del = time.time()

        def refused() -> bool:
            code, body = rec.http("/readyz")
            return code == 503 and "delete kernelcachenodes refused" in body

        wait_for("/readyz to say delete kernelcachenodes is refused", refused, 300)
        out["first_pass_s"] = round(time.time() - t_del, 1)
        out["readyz"] = rec.http("/readyz")[1][-600:]
        w = t.bed.audit_mark()
        t.window_start = time.time()
        time.sleep(window)
        out["first_pass"] = window_counts_until(t, mark, w)
        out["window"] = window_counts(t, w, is_reconcile, window)
        out["log_lines_naming_the_refusal"] = [
            x for x in rec.log().splitlines() if "kernelcachenodes" in x and "delete" in x
        ][:5]
        out["peak_rss_mb"] = rec.vm("VmHWM")
        out["load"] = round(br.load(), 2)
    finally:
        out["exit"] = rec.stop()
        t.cluster.kubectl("apply", "-f", str(CODE / "deploy" / "rbac.yaml"))
    log(f"  forbidden: {json.dumps(out)[:1500]}")
    return out


def window_counts_until(t: Trials, since: int, until: int) -> dict[str, Any]:
    reqs = requests(t.between(since, until), is_reconcile)
    refused = [e for e in reqs if (e.get("responseStatus") or {}).get("code") == 403]
    return {"requests": len(reqs), "refused": len(refused), "refused_by_verb": verbs(refused)}


# ---- 3. the fence misconfigured ------------------------------------------------------------------------


def fence(t: Trials, window: float) -> dict[str, Any]:
    from tests.e2e import test_fence as tf

    log(f"fence: deploy/fence.yaml, pod fence-a's token, no POD_NAME (load {br.load():.1f})")
    t.cluster.kubectl("apply", "-f", str(CODE / "deploy" / "rbac.yaml"))
    t.cluster.kubectl("apply", "-f", str(CODE / "deploy" / "fence.yaml"))
    t.groups(False)  # every member's KernelCacheNode to delete: every pass plans those deletes
    out: dict[str, Any] = {"resync_period_s": 1, "kcns": t.kcn_count()}
    rec = None
    try:
        kc = tf.token_kubeconfig(t.cluster, t.tmp, "fence-a")
        tf.set_holder(t.cluster, "nobody_1_0")
        tf.wait_enforced(t.cluster, kc)
        mark = t.bed.audit_mark()
        rec = Plugin(
            t,
            "fence",
            "reconcile",
            "--leader-elect",
            "--lease-duration",
            "6",
            "--renew-deadline",
            "4",
            "--resync-period",
            "1",
            env={"KUBECONFIG": str(kc), "POD_NAME": ""},
        )
        said = "the API server's fence (deploy/fence.yaml) refuses every write of this replica"
        wait_for("the controller to say what the fence expects", lambda: said in rec.log(), 600)
        out["said_after_s"] = round(time.time() - rec.started, 1)
        out["said"] = [x for x in rec.log().splitlines() if said in x][:2]
        out["said_times"] = rec.log().count(said)
        w = t.bed.audit_mark()
        t.window_start = time.time()
        time.sleep(window)
        out["before_window"] = window_counts_until(t, mark, w)
        out["window"] = window_counts(t, w, is_reconcile, window)
        out["said_times_after_window"] = rec.log().count(said)
        out["readyz"] = rec.http("/readyz")[1][-600:]
        out["peak_rss_mb"] = rec.vm("VmHWM")
        out["load"] = round(br.load(), 2)
    finally:
        if rec is not None:
            out["exit"] = rec.stop()
        switch_fence_to_audit(t)
        t.cluster.kubectl("delete", "lease", "kubectl-kcache-reconcile", "-n", "kserve", check=False)
        t.cluster.kubectl("delete", "pod", "fence-a", "-n", "kserve", "--wait=false", check=False)
    log(f"  fence: {json.dumps(out)[:1500]}")
    return out


def switch_fence_to_audit(t: Trials) -> None:
    from tests.e2e import test_fence as tf

    t.cluster.kubectl(
        "patch",
        "validatingadmissionpolicybinding",
        tf.POLICY,
        "--type=merge",
        "-p",
        '{"spec": {"validationActions": ["Audit"]}}',
        check=False,
    )
    probe = json.dumps(fx.kcn(0)[0] | {"metadata": {"name": "probe"}})
    wait_for(
        "the fence to stop denying",
        lambda: (
            t.cluster.kubectl(
                "create", "--dry-run=server", "--as", SA_USER, "-f", "-", input=probe, check=False
            ).returncode
            == 0
        ),
        60,
    )


# ---- 4. KServe's controller becoming active mid-batch ----------------------------------------------------


def mid_batch(t: Trials, n: int, runs: int) -> dict[str, Any]:
    log(f"mid-batch: KServe's controller made ready during a batch of {n} deletes (load {br.load():.1f})")
    t.controller_ready(False)
    t.groups(True)
    rec = Plugin(t, "mid-batch", "reconcile", "--resync-period", "30")
    out: dict[str, Any] = {"runs": []}
    try:
        wait_for("reconcile's /readyz", rec.ready, 600)
        wait_for("every KernelCacheNode", lambda: t.kcn_count() == n, 600, 2)
        no_writes_for(t, 5, 300)
        for k in range(runs):
            run = one_mid_batch(t, rec, n)
            run["load"] = round(br.load(), 2)
            out["runs"].append(run)
            log(f"  mid-batch run {k + 1}: {json.dumps(run)[:800]}")
            # back: KServe's controller not ready, the groups again, every KernelCacheNode again
            t.controller_ready(False)
            wait_for("reconcile to stand ready again", rec.ready, 120)
            t.groups(True)
            wait_for("every KernelCacheNode again", lambda: t.kcn_count() == n, 900, 2)
            no_writes_for(t, 5, 300)
        out["peak_rss_mb"] = rec.vm("VmHWM")
    finally:
        out["exit"] = rec.stop()
    return out


def one_mid_batch(t: Trials, rec: Plugin, n: int) -> dict[str, Any]:
    mark = t.bed.audit_mark()
    pos = mark
    t.groups(False)
    seen = 0
    deadline = time.time() + 300
    while seen < min(MID_BATCH_AFTER, n // 5) and time.time() < deadline:
        events, pos = t.bed.audit_read(pos)
        seen += sum(1 for e in events if is_reconcile(e) and e["verb"] == "delete")
        time.sleep(0.01)
    log_before = rec.log()
    t.controller_ready(True)
    said = "KServe's controller is active"
    wait_for("reconcile to say it stopped", lambda: said in rec.log()[len(log_before) :], 120, 0.2)
    time.sleep(3)
    events = t.bed.audit_events(mark)
    ready_at = max(
        stamp(e["requestReceivedTimestamp"])
        for e in events
        if resource(e) == "deployments/status"
        and (e.get("objectRef") or {}).get("name") == CONTROLLER[1]
        and e["verb"] in ("update", "patch")
    )
    deletes = [e for e in requests(events, is_reconcile) if e["verb"] == "delete"]
    received = sorted(stamp(e["requestReceivedTimestamp"]) for e in deletes)
    after = {str(m): sum(1 for x in received if x > ready_at + m) for m in DELIVERY}
    last = max(received) if received else None
    return {
        "deletes_seen_before_ready": seen,
        "deletes": len(deletes),
        "of_members": n,
        "after_ready_status_by_margin_s": after,
        "last_delete_after_ready_s": round(last - ready_at, 3) if last else None,
        "deletes_answered": dict(Counter((e.get("responseStatus") or {}).get("code") for e in deletes)),
        "said": [x for x in rec.log()[len(log_before) :].splitlines() if said in x][:1],
    }


# ---- main ----------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--code", default=str(CODE), help="the checkout whose kubectl_kcache is run (a worktree)")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--deployments", type=int, default=2000)
    ap.add_argument("--quiet-seconds", type=float, default=600)
    ap.add_argument("--churn-changes", type=int, default=12)
    ap.add_argument("--churn-interval", type=float, default=5)
    ap.add_argument("--window", type=float, default=60, help="seconds refused requests are counted over")
    ap.add_argument("--mid-batch-runs", type=int, default=3)
    ap.add_argument("--large-nodes", type=int, default=50000)
    ap.add_argument("--large-quiet-seconds", type=float, default=120)
    ap.add_argument("--large-churn-changes", type=int, default=6)
    ap.add_argument("--fill-deadline", type=float, default=900, help="seconds of loading allowed for --large-nodes")
    ap.add_argument("--fill-workers", type=int, default=12)
    ap.add_argument("--min-free-gb", type=float, default=6)
    ap.add_argument("--skip", default="", help="comma-separated: quiet,forbidden,fence,mid_batch,large")
    ap.add_argument("--dir", help="test bed folder (reused when it is up)")
    ap.add_argument("--keep", action="store_true", help="leave the test bed up")
    ap.add_argument("--resume", action="store_true", help="keep the phases already in --out (with --dir, --skip)")
    ap.add_argument("--out", default=str(br.RESULTS / f"{dt.date.today()}-controller-trials.json"))
    args = ap.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))
    out_path = Path(args.out)
    d = Path(args.dir).resolve() if args.dir else Path(tempfile.mkdtemp(prefix="kcache-trials-"))
    commit = subprocess.run(["git", "-C", str(CODE), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    dirty = subprocess.run(
        ["git", "-C", str(CODE), "status", "--porcelain", "--", "kubectl_kcache"], capture_output=True, text=True
    ).stdout
    log(f"load average {br.load():.2f}; test bed in {d}; code {CODE} at {commit.strip()}")
    if not (d / "state.json").exists():
        subprocess.run([str(TESTBED), "up", "--dir", str(d), "--watch-cache"], check=True, stdout=subprocess.DEVNULL)
    res: dict[str, Any] = {
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "command": "python3 -m bench.controller_trials " + " ".join(argv if argv is not None else sys.argv[1:]),
        "commit": commit.strip(),
        "code_dirty": bool(dirty.strip()),
        "machine": {
            "cpus": os.cpu_count(),
            "mem_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
            "python": platform.python_version(),
            "load_before": round(br.load(), 2),
        },
        "test_bed": "etcd + kube-apiserver (watch cache on), no controller manager, no KWOK; audit log at Metadata",
        "objects": {
            "groups": br.GROUPS,
            "kernel_caches": br.CACHES,
            "deployments": args.deployments,
            "deployment_namespaces": list(DEPLOYMENT_NAMESPACES),
            "per_node": "a 20-40 KB GPU node, its KernelCacheNode (4 entries), its agent pod",
        },
    }

    if args.resume and out_path.exists():
        kept = json.loads(out_path.read_text())
        res = {**kept, **{k: v for k, v in res.items() if k not in ("date", "command", "commit", "machine")}}
        res.setdefault("resumed", []).append(
            {"date": dt.datetime.now().isoformat(timespec="seconds"), "command": " ".join(sys.argv[1:])}
        )

    def save() -> None:
        out_path.write_text(json.dumps(res, indent=1) + "\n")

    t = Trials(args, d)

    def phase(name: str, fn: Callable[[], dict[str, Any]]) -> None:
        try:
            res[name] = fn()
        except Exception as exc:  # noqa: BLE001 - a phase that failed is said in the results; the next ones run
            log(f"{name} failed: {exc}")
            res[name] = {"error": str(exc)[-3000:]}
        save()

    try:
        res["machine"].update(t.bed.versions())
        log(f"filling to {args.nodes} nodes and {args.deployments} Deployments")
        fill = t.fill(args.nodes)
        res.setdefault("fill", fill)
        t.deployments(args.deployments)
        t.cluster.kubectl("apply", "-f", str(CODE / "deploy" / "rbac.yaml"))
        save()
        n = res["fill"]["nodes"]
        if "quiet" not in skip:
            phase("quiet", lambda: quiet_and_churn(t, n, args.quiet_seconds, args.churn_changes, 900))
        if "forbidden" not in skip:
            phase("forbidden", lambda: forbidden(t, args.window))
        if "fence" not in skip:
            phase("fence", lambda: fence(t, args.window))
        if "mid_batch" not in skip:
            phase("mid_batch", lambda: mid_batch(t, n, args.mid_batch_runs))
        t.controller_ready(False)
        t.groups(True)
        if "large" not in skip and args.large_nodes > n:
            log(f"growing to {args.large_nodes} nodes (deadline {args.fill_deadline:.0f}s)")
            res["large_fill"] = t.fill(args.large_nodes, time.time() + args.fill_deadline)
            save()
            big = res["large_fill"]["nodes"]
            phase("large", lambda: quiet_and_churn(t, big, args.large_quiet_seconds, args.large_churn_changes, 1200))
        res["machine"]["load_after"] = round(br.load(), 2)
        save()
        log(f"results: {out_path}")
    finally:
        if not args.keep:
            subprocess.run([str(TESTBED), "down", "--dir", str(d)], check=False, stdout=subprocess.DEVNULL)
    return 0


if __name__ == "__main__":
    sys.exit(main())
