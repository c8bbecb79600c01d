"""The benchmark behind docs/performance.md: doctor against the curl floor of the lists it reads and against
`kubectl get`, `dump -o json` against the same floor, doctor --from-file against a bare `json.load` of the
dump, why-group, reconcile convergence, steady writes and memory, and `--help` start-up, on a real API server
(test bed: etcd and kube-apiserver only) filled with realistic generated objects.

    python3 -m bench.run [--sizes 1000,2000,5000,10000] [--quick] [--rounds 3] [--burst 5000]
                         [--profile-at 5000] [--no-watch-cache] [--dir DIR] [--keep] [--no-plot]

For each size (ascending; the cluster grows from one size to the next) the cluster holds that many GPU
nodes (20-40 KB each), 50 node groups, a KernelCacheNode (4 cache entries) and an agent pod per node,
2,000 KernelCaches in 20 namespaces, and KServe's singletons. Then, alternating the order each round:
`kubectl kcache doctor -o json` against the `kubectl get -o json` calls that list the same objects
(wall time, peak RSS, API requests from the audit log), `kubectl kcache status -o json` beside them, and
curl fetching the same lists whole over one connection (the transfer floor: the API server's time to serve
them plus the bytes). Then `dump -o json`
(also against the floor) and `doctor --from-file` on that dump against `json.load` of it. After the sweep:
reconcile on the steady cluster (mutating requests in 60 s, memory) and while --burst new member nodes
arrive at once (time until every one has its KernelCacheNode). Results: bench/results/<date>.json and
docs/performance-doctor.png.

Not part of the test suite; run it by hand on a quiet machine (see docs/performance.md).
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import os
import platform
import pstats
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench import fixtures as fx

ROOT = Path(__file__).resolve().parent.parent
TESTBED = ROOT / "tests" / "testbed" / "testbed"
RESULTS = ROOT / "bench" / "results"
PLOT = ROOT / "docs" / "performance-doctor.png"
DEFAULT_SIZES = (1000, 2000, 5000, 10000)
QUICK_SIZES = (200, 500)
GROUPS = 50
CACHES = 2000
PRODUCER = fx.producer_pod(0, 0)
MUTATING = ("create", "update", "patch", "delete", "deletecollection")
WORKERS = 8


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def load() -> float:
    return os.getloadavg()[0]


# ---- the test bed ---------------------------------------------------------------------------------------


class Bed:
    """A running test bed: kubeconfig, binaries, audit log, and the environment commands run in."""

    def __init__(self, d: Path):
        self.dir = d
        self.state = json.loads((d / "state.json").read_text())
        self.kubeconfig = str(d / "kubeconfig")
        self.bin = Path(self.state["bin"])
        self.kubectl = str(self.bin / "kubectl")
        self.audit = d / "audit.log"
        self.plugin_bin = d / "plugin-bin"
        self.home = d / "home"
        self._write_plugin()

    def _write_plugin(self) -> None:
        """`kubectl-kcache` as pip installs it (a script running this checkout), found on PATH by kubectl.
        The pyenv shim on this machine would add ~0.1 s of bash to every start; a user's install has none."""
        self.plugin_bin.mkdir(exist_ok=True)
        self.home.mkdir(exist_ok=True)
        script = self.plugin_bin / "kubectl-kcache"
        script.write_text(
            f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(ROOT)!r})\n"
            "from kubectl_kcache.__main__ import main\nmain()\n"
        )
        script.chmod(0o755)

    @property
    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(KUBECONFIG=self.kubeconfig, HOME=str(self.home), NO_COLOR="1")
        env["PATH"] = f"{self.plugin_bin}:{self.bin}:{env.get('PATH', '')}"
        # bytecode is cached, as after `pip install` (this machine sets PYTHONDONTWRITEBYTECODE)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        return env

    def client(self) -> Any:
        from kubectl_kcache.kube.client import Client
        from kubectl_kcache.kube.kubeconfig import Overrides

        c = Client(Overrides(kubeconfig=self.kubeconfig, request_timeout=120))
        c.user_agent = "kcache-bench"  # the fill is not counted as the plugin's requests
        return c

    def audit_mark(self) -> int:
        return self.audit.stat().st_size if self.audit.exists() else 0

    def audit_read(self, since: int) -> tuple[list[dict[str, Any]], int]:
        """The complete audit events from offset `since`, and the offset after the last complete line (a
        line being written is left for the next read)."""
        with open(self.audit, "rb") as fh:
            fh.seek(since)
            data = fh.read()
        end = data.rfind(b"\n") + 1
        return [json.loads(line) for line in data[:end].splitlines() if line.strip()], since + end

    def audit_events(self, since: int) -> list[dict[str, Any]]:
        return self.audit_read(since)[0]

    def versions(self) -> dict[str, str]:
        out = subprocess.run([self.kubectl, "version", "-o", "json"], env=self.env, capture_output=True, text=True)
        try:
            doc = json.loads(out.stdout)
            return {"kubectl": doc["clientVersion"]["gitVersion"], "server": doc["serverVersion"]["gitVersion"]}
        except (ValueError, KeyError):
            return {}


def up(d: Path, watch_cache: bool) -> Bed:
    cmd = [str(TESTBED), "up", "--dir", str(d)] + (["--watch-cache"] if watch_cache else [])
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return Bed(d)


def down(d: Path) -> None:
    subprocess.run([str(TESTBED), "down", "--dir", str(d)], check=False, stdout=subprocess.DEVNULL)


def requests_by(events: Iterable[dict[str, Any]], agent: str) -> Counter:
    """Completed requests (verb -> count) whose user agent starts with `agent`."""
    out: Counter = Counter()
    for e in events:
        if e.get("stage") == "ResponseComplete" and e.get("userAgent", "").startswith(agent):
            out[e.get("verb", "")] += 1
    return out


# ---- filling the cluster ------------------------------------------------------------------------------


def parallel(fn: Callable[[Any], None], items: Iterable[Any], workers: int = WORKERS) -> None:
    with ThreadPoolExecutor(workers) as pool:
        for _ in pool.map(fn, items):
            pass


class Filler:
    """Creates the objects through kubectl_kcache's Client (raw JSON, 8 threads); statuses through the
    status subresource (pods, KernelCacheNodes, KernelCaches, the DaemonSet and Deployment ignore status
    at create). Remembers how far it got in DIR/bench-fill.json."""

    def __init__(self, bed: Bed):
        from kubectl_kcache.kube import resources as r

        self.r = r
        self.bed = bed
        self.c = bed.client()
        self.path = bed.dir / "bench-fill.json"
        self.done: dict[str, Any] = json.loads(self.path.read_text()) if self.path.exists() else {}

    def _save(self) -> None:
        self.path.write_text(json.dumps(self.done))

    def create(self, res: Any, body: dict[str, Any], status: dict[str, Any] | None = None) -> dict[str, Any]:
        from kubectl_kcache.errors import Conflict

        ns = body["metadata"].get("namespace")
        try:
            made = self.c.create(res, body, ns)
        except Conflict:
            made = self.c.get(res, body["metadata"]["name"], ns)
        if status is not None:
            self.set_status(res, body["metadata"]["name"], status, ns)
        return made

    def set_status(self, res: Any, name: str, status: dict[str, Any], ns: str | None = None) -> None:
        self.c.request(
            "PATCH",
            res.path(ns, name, "status"),
            body={"status": status},
            content_type="application/merge-patch+json",
            verb="patch",
        )

    def base(self) -> None:
        if self.done.get("base"):
            return
        r = self.r
        for ns in ("kserve", fx.JOB_NAMESPACE, *fx.TEAM_NAMESPACES):
            self.create(r.NAMESPACES, fx.namespace(ns))
        self.create(r.CONFIGMAPS, fx.inferenceservice_config())
        ds = self.create(r.DAEMONSETS, fx.agent_daemonset(GROUPS), fx.daemonset_status(0))
        self.done["ds_uid"] = ds["metadata"]["uid"]
        self.create(r.DEPLOYMENTS, *fx.controller_deployment())
        self.create(r.MUTATING_WEBHOOKS, fx.webhook_configuration())
        self.create(r.ENDPOINT_SLICES, fx.webhook_endpoint_slice())
        self.create(r.SERVICE_ACCOUNTS, fx.service_account("kernel-cache-prefetcher-sa", fx.JOB_NAMESPACE))
        parallel(lambda g: self.create(r.NODE_GROUPS, fx.node_group(g)), range(GROUPS))
        parallel(lambda j: self.create(r.KERNEL_CACHES, *fx.kernel_cache(j, GROUPS)), range(CACHES))
        self.create(r.PODS, PRODUCER)
        self.create(r.CAPTURES, *fx.capture(0, 0))
        self.done.update(base=True, nodes=0)
        self._save()

    def nodes(self, start: int, stop: int, members: bool = True, workers: int = WORKERS) -> None:
        """Nodes [start, stop); with `members` also their KernelCacheNodes and agent pods (what KServe's
        controller and the DaemonSet controller would have made)."""
        r = self.r
        parallel(lambda i: self.create(r.NODES, fx.gpu_node(i, GROUPS)), range(start, stop), workers)
        if members:
            parallel(lambda i: self.create(r.KERNEL_CACHE_NODES, *fx.kcn(i, CACHES, GROUPS)), range(start, stop))
            uid = self.done["ds_uid"]
            parallel(lambda i: self.create(r.PODS, *fx.agent_pod(i, uid)), range(start, stop))
            self.set_status(r.DAEMONSETS, "kserve-kernelcachenode-agent", fx.daemonset_status(stop), "kserve")
        self.done["nodes"] = stop
        self._save()

    def grow(self, n: int) -> float:
        t0 = time.perf_counter()
        self.base()
        if self.done["nodes"] < n:
            self.nodes(self.done["nodes"], n)
        return time.perf_counter() - t0


# ---- measuring commands -------------------------------------------------------------------------------


def run_timed(
    cmd: list[str], env: dict[str, str], ok: tuple[int, ...] = (0,), cwd: Path | None = None
) -> dict[str, Any]:
    """Wall time, CPU time (user + system) and peak RSS (GNU time's %M) of one command, its stdout thrown
    away. CPU time is the figure other load on the machine disturbs least. `cwd`: where it runs (`python -m`
    imports from there first)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        t0 = time.perf_counter()
        proc = subprocess.run(
            ["/usr/bin/time", "-f", "%U %S %M", "-o", tf.name, *cmd],
            env=env,
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        seconds = time.perf_counter() - t0
        user, system, rss_kb = Path(tf.name).read_text().split()[-3:]
    if proc.returncode not in ok:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr[-2000:]}")
    return {
        "seconds": round(seconds, 4),
        "cpu_s": round(float(user) + float(system), 3),
        "maxrss_mb": round(int(rss_kb) / 1024, 1),
    }


def run_counted(bed: Bed, cmd: list[str], agent: str, ok: tuple[int, ...] = (0,)) -> dict[str, Any]:
    mark = bed.audit_mark()
    out = run_timed(cmd, bed.env, ok)
    time.sleep(0.3)  # the audit log is written as responses complete
    verbs = requests_by(bed.audit_events(mark), agent)
    out["requests"] = sum(verbs.values())
    out["verbs"] = dict(sorted(verbs.items()))
    return out


KCACHE = ["kubectl", "kcache"]
DOCTOR = [*KCACHE, "doctor", "-o", "json", "--fail-on", "never"]
STATUS = [*KCACHE, "status", "-o", "json"]


def kubectl_calls(bed: Bed) -> list[list[str]]:
    """`kubectl get -o json` of what doctor lists, as few calls as kubectl allows: one cannot mix kinds
    with type/name arguments, nor -A with -n."""
    k = bed.kubectl
    crds = [
        f"customresourcedefinition/{p}.serving.kserve.io"
        for p in ("kernelcachenodegroups", "kernelcachenodes", "kernelcaches", "kernelcachecaptures")
    ]
    return [
        [k, "get", "nodes,kernelcachenodegroups,kernelcachenodes,kernelcaches,kernelcachecaptures", "-A", "-o", "json"],
        [k, "get", "pods", "-n", "kserve", "-l", "control-plane=kserve-kernelcachenode-agent", "-o", "json"],
        [
            k,
            "get",
            "-n",
            "kserve",
            "configmap/inferenceservice-config",
            "daemonset/kserve-kernelcachenode-agent",
            "deployment/kserve-localmodel-controller-manager",
            "-o",
            "json",
        ],
        [
            k,
            "get",
            "mutatingwebhookconfiguration/kernelcache.serving.kserve.io",
            f"namespace/{fx.JOB_NAMESPACE}",
            *crds,
            "-o",
            "json",
        ],
    ]


def measure_kubectl(bed: Bed) -> dict[str, Any]:
    """The sum of the calls' wall times and requests; the largest call's peak RSS."""
    parts = [run_counted(bed, cmd, "kubectl/") for cmd in kubectl_calls(bed)]
    verbs: Counter = Counter()
    for p in parts:
        verbs.update(p["verbs"])
    return {
        "seconds": round(sum(p["seconds"] for p in parts), 4),
        "cpu_s": round(sum(p["cpu_s"] for p in parts), 3),
        "maxrss_mb": max(p["maxrss_mb"] for p in parts),
        "requests": sum(p["requests"] for p in parts),
        "verbs": dict(sorted(verbs.items())),
        "calls": [p["seconds"] for p in parts],
    }


def doctor_list_uris(bed: Bed) -> list[str]:
    """The lists one doctor run makes (from the audit log), each once and whole (no limit/continue)."""
    from urllib.parse import parse_qsl, urlencode, urlsplit

    mark = bed.audit_mark()
    run_timed(DOCTOR, bed.env)
    time.sleep(0.3)
    uris: list[str] = []
    for e in bed.audit_events(mark):
        if e.get("stage") != "ResponseComplete" or not e.get("userAgent", "").startswith("kubectl-kcache"):
            continue
        if e.get("verb") not in ("list", "get"):
            continue
        parts = urlsplit(e["requestURI"])
        query = [(k, v) for k, v in parse_qsl(parts.query) if k not in ("limit", "continue")]
        uri = parts.path + ("?" + urlencode(query) if query else "")
        if uri not in uris:
            uris.append(uri)
    return uris


def curl_cmd(bed: Bed, uris: list[str]) -> list[str]:
    """One curl fetching every URI over one connection, as the admin user, bodies thrown away."""
    import yaml

    cfg = yaml.safe_load(Path(bed.kubeconfig).read_text())
    ctx = next(c["context"] for c in cfg["contexts"] if c["name"] == cfg["current-context"])
    cluster = next(c["cluster"] for c in cfg["clusters"] if c["name"] == ctx["cluster"])
    user = next(u["user"] for u in cfg["users"] if u["name"] == ctx["user"])
    cmd = [
        "curl",
        "-sS",
        "--fail",
        "--cacert",
        cluster["certificate-authority"],
        "--cert",
        user["client-certificate"],
        "--key",
        user["client-key"],
        "-H",
        "Accept: application/json",
    ]
    for uri in uris:
        cmd += [cluster["server"].rstrip("/") + uri, "-o", "/dev/null"]
    return cmd


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "median_s": round(statistics.median(r["seconds"] for r in runs), 3),
        "median_cpu_s": round(statistics.median(r.get("cpu_s", 0.0) for r in runs), 3),
        "median_rss_mb": round(statistics.median(r["maxrss_mb"] for r in runs), 1),
        "requests": runs[0].get("requests"),
        "verbs": runs[0].get("verbs"),
        "runs": runs,
    }


def measure_size(bed: Bed, n: int, rounds: int, snap_dir: Path) -> dict[str, Any]:
    env = bed.env
    # warm up: discovery cache for kubectl, bytecode for the plugin, page cache for both
    run_timed(DOCTOR, env)
    run_timed(STATUS, env)
    for cmd in kubectl_calls(bed):
        run_timed(cmd, env)
    uris = doctor_list_uris(bed)
    curl = curl_cmd(bed, uris)
    run_timed(curl, env)
    snap = snap_dir / f"snapshot-{n}.json"
    dump_cmd = [*KCACHE, "dump", "-o", "json", "--file", str(snap)]
    runs: dict[str, list[dict[str, Any]]] = {"doctor": [], "status": [], "kubectl": [], "curl": [], "dump": []}
    for i in range(rounds):
        order = ["doctor", "status", "curl", "kubectl", "dump"]
        order = order if i % 2 == 0 else order[::-1]
        for which in order:
            if which == "doctor":
                runs[which].append(run_counted(bed, DOCTOR, "kubectl-kcache"))
            elif which == "status":
                runs[which].append(run_counted(bed, STATUS, "kubectl-kcache"))
            elif which == "curl":
                runs[which].append(run_counted(bed, curl, "curl/"))
            elif which == "dump":
                runs[which].append(run_counted(bed, dump_cmd, "kubectl-kcache"))
            else:
                runs[which].append(measure_kubectl(bed))
            last = runs[which][-1]
            log(
                f"  {n}: round {i + 1} {which}: {last['seconds']:.2f}s {last['maxrss_mb']:.0f} MB "
                f"{last['requests']} requests"
            )
    out: dict[str, Any] = {k: summary(v) for k, v in runs.items()}
    out["curl"]["uris"] = uris
    out["ratio_time"] = round(out["doctor"]["median_s"] / out["kubectl"]["median_s"], 2)
    out["ratio_rss"] = round(out["doctor"]["median_rss_mb"] / out["kubectl"]["median_rss_mb"], 2)
    out["doctor_vs_curl"] = round(out["doctor"]["median_s"] / out["curl"]["median_s"], 2)
    out["status_vs_doctor"] = [
        round(s["seconds"] / d["seconds"], 2) for s, d in zip(runs["status"], runs["doctor"], strict=True)
    ]
    out["dump_vs_curl"] = round(out["dump"]["median_s"] / out["curl"]["median_s"], 2)
    out["doctor_findings"] = doctor_findings(bed)

    why_cmd = [
        *KCACHE,
        "why-group",
        PRODUCER["metadata"]["name"],
        "-n",
        PRODUCER["metadata"]["namespace"],
        "-o",
        "json",
    ]
    run_timed(why_cmd, env)
    out["why_group"] = summary([run_counted(bed, why_cmd, "kubectl-kcache") for _ in range(max(5, rounds))])
    log(f"  {n}: why-group {out['why_group']['median_s']:.3f}s")

    out["dump"]["file_mb"] = round(snap.stat().st_size / 2**20, 1)
    from_file = [*KCACHE, "doctor", "--from-file", str(snap), "-o", "json", "--fail-on", "never"]
    json_load = [sys.executable, "-c", "import json, sys; json.load(open(sys.argv[1], 'rb'))", str(snap)]
    run_timed(json_load, env)
    ff: list[dict[str, Any]] = []
    jl: list[dict[str, Any]] = []
    for i in range(rounds):
        pair = [(ff, from_file), (jl, json_load)]
        for runs_, cmd in pair if i % 2 == 0 else pair[::-1]:
            runs_.append(run_timed(cmd, env))
    out["doctor_from_file"] = summary(ff)
    status_file = [*KCACHE, "status", "--from-file", str(snap), "-o", "json"]
    out["status_from_file"] = summary([run_timed(status_file, env) for _ in range(rounds)])
    out["json_load"] = summary(jl)
    out["from_file_vs_json_load"] = round(out["doctor_from_file"]["median_s"] / out["json_load"]["median_s"], 2)
    log(
        f"  {n}: dump {out['dump']['median_s']:.1f}s ({out['dump']['file_mb']} MB, x{out['dump_vs_curl']} curl), "
        f"doctor --from-file {out['doctor_from_file']['median_s']:.2f}s (x{out['from_file_vs_json_load']} json.load)"
    )
    snap.unlink()
    return out


def doctor_findings(bed: Bed) -> dict[str, Any]:
    proc = subprocess.run(DOCTOR, env=bed.env, capture_output=True, text=True)
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        return {}
    findings = doc.get("findings") or []
    return {
        "findings": len(findings),
        "by_severity": dict(Counter(f.get("severity") for f in findings)),
        "by_check": dict(Counter(f.get("check") for f in findings)),
    }


def yaml_dump(bed: Bed, n: int, snap_dir: Path) -> dict[str, Any]:
    """The default `dump --file` format (YAML) and doctor on it, once."""
    snap = snap_dir / f"snapshot-{n}.yaml"
    out = {"nodes": n, "dump": run_timed([*KCACHE, "dump", "--file", str(snap)], bed.env)}
    out["dump"]["file_mb"] = round(snap.stat().st_size / 2**20, 1)
    out["doctor_from_file"] = run_timed(
        [*KCACHE, "doctor", "--from-file", str(snap), "-o", "json", "--fail-on", "never"], bed.env
    )
    snap.unlink()
    log(
        f"  {n}: YAML dump {out['dump']['seconds']:.1f}s ({out['dump']['file_mb']} MB), doctor --from-file "
        f"{out['doctor_from_file']['seconds']:.1f}s"
    )
    return out


def profile_doctor(bed: Bed, n: int, out_txt: Path) -> dict[str, Any]:
    """cProfile of one live doctor run; the top functions by cumulative and by own time."""
    prof = bed.dir / "doctor.prof"
    cmd = [
        sys.executable,
        "-m",
        "cProfile",
        "-o",
        str(prof),
        "-m",
        "kubectl_kcache",
        "doctor",
        "-o",
        "json",
        "--fail-on",
        "never",
    ]
    t = run_timed(cmd, bed.env)
    stats = pstats.Stats(str(prof))
    total = stats.total_tt  # type: ignore[attr-defined]
    text = io.StringIO()
    pstats.Stats(str(prof), stream=text).sort_stats("cumulative").print_stats(40)
    pstats.Stats(str(prof), stream=text).sort_stats("tottime").print_stats(25)
    out_txt.write_text(f"doctor -o json at {n} nodes under cProfile ({t['seconds']:.1f}s wall)\n" + text.getvalue())

    def rows(key: str, limit: int) -> list[dict[str, Any]]:
        out = []
        entries = stats.stats  # type: ignore[attr-defined]
        for (file, line, func), (_cc, ncalls, tt, ct, _callers) in sorted(
            entries.items(), key=lambda kv: kv[1][3 if key == "cum" else 2], reverse=True
        )[:limit]:
            where = file.replace(str(ROOT) + "/", "").split("site-packages/")[-1]
            out.append(
                {
                    "function": f"{where}:{line}({func})",
                    "calls": ncalls,
                    "own_s": round(tt, 3),
                    "cumulative_s": round(ct, 3),
                    "cumulative_pct": round(100 * ct / total, 1),
                }
            )
        return out

    def cum(file_end: str, func: str, own: bool = False) -> float:
        entries = stats.stats  # type: ignore[attr-defined]
        return round(
            sum(v[2 if own else 3] for (f, _l, fn), v in entries.items() if f.endswith(file_end) and fn == func), 3
        )

    breakdown = {
        "imports": cum("<frozen importlib._bootstrap>", "_find_and_load"),
        "collect (all requests and parsing)": cum("kubectl_kcache/snapshot/live.py", "collect"),
        "  receiving (TLS reads)": cum("", "<method 'read' of '_ssl._SSLSocket' objects>", own=True),
        "  decoding pages into typed objects (msgspec)": cum(
            "", "<method 'decode' of 'msgspec.json.Decoder' objects>", own=True
        ),
        "  null handling (__post_init__)": cum("kubectl_kcache/objects/__init__.py", "__post_init__"),
        "checks (run_doctor)": cum("kubectl_kcache/checks/runner.py", "run_doctor"),
        "rendering -o json": cum("kubectl_kcache/report/registry.py", "render_doctor"),
    }
    return {
        "nodes": n,
        "wall_s": t["seconds"],
        "profiled_total_s": round(total, 2),
        "breakdown_s": breakdown,
        "top_cumulative": rows("cum", 40),
        "top_own": rows("own", 20),
        "text": str(out_txt).replace(str(ROOT) + "/", ""),
    }


# ---- reconcile ----------------------------------------------------------------------------------------


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _vm(pid: int, key: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def _stamp(e: dict[str, Any]) -> float:
    return dt.datetime.fromisoformat(e["stageTimestamp"].replace("Z", "+00:00")).timestamp()


def measure_reconcile(bed: Bed, filler: Filler, burst: int, steady_seconds: float) -> dict[str, Any]:
    """reconcile --force on the steady cluster (writes in `steady_seconds`), then `burst` new member nodes
    created at once: time until each has its KernelCacheNode."""
    n = filler.done["nodes"]
    out: dict[str, Any] = {"nodes_before": n, "burst": burst, "resync_period_s": 20}
    err = open(bed.dir / "reconcile.log", "w")  # noqa: SIM115 - the controller's log while it runs
    mark0 = bed.audit_mark()
    t_start = time.time()
    proc = subprocess.Popen(
        [*KCACHE, "reconcile", "--force", "--resync-period", "20"], env=bed.env, stdout=subprocess.DEVNULL, stderr=err
    )
    try:
        watched: set[str] = set()
        pos = mark0
        while len(watched) < 8:
            if proc.poll() is not None:
                raise RuntimeError(f"reconcile exited {proc.returncode}: {(bed.dir / 'reconcile.log').read_text()}")
            time.sleep(0.2)
            events, pos = bed.audit_read(pos)
            for e in events:
                if e.get("verb") == "watch" and e.get("userAgent", "").startswith("kubectl-kcache"):
                    watched.add(e["objectRef"]["resource"])
        out["startup_to_watching_s"] = round(time.time() - t_start, 2)
        time.sleep(5)  # the first pass
        startup = requests_by(bed.audit_events(mark0), "kubectl-kcache")
        out["startup_writes"] = sum(startup[v] for v in MUTATING)
        out["startup_rss_mb"] = round(_vm(proc.pid, "VmRSS"), 1)
        log(f"  reconcile: watching after {out['startup_to_watching_s']}s, {out['startup_writes']} writes at start")

        mark = bed.audit_mark()
        cpu0 = _cpu_seconds(proc.pid)
        time.sleep(steady_seconds)
        steady = requests_by(bed.audit_events(mark), "kubectl-kcache")
        out["steady_seconds"] = steady_seconds
        out["steady_writes"] = sum(steady[v] for v in MUTATING)
        out["steady_writes_per_minute"] = round(out["steady_writes"] * 60 / steady_seconds, 2)
        out["steady_requests"] = dict(steady)
        out["steady_cpu_s"] = round(_cpu_seconds(proc.pid) - cpu0, 2)
        out["steady_rss_mb"] = round(_vm(proc.pid, "VmHWM"), 1)  # peak so far: the initial lists included
        log(f"  reconcile: {out['steady_writes']} writes in {steady_seconds:.0f}s steady, {out['steady_cpu_s']}s CPU")

        mark = bed.audit_mark()
        t0 = time.time()
        filler.nodes(n, n + burst, members=False, workers=WORKERS)
        t_burst = time.time()
        out["burst_create_s"] = round(t_burst - t0, 2)
        log(f"  reconcile: {burst} nodes created in {out['burst_create_s']}s")
        created: dict[str, float] = {}  # auditID -> when the KernelCacheNode was created
        pos = mark
        deadline = time.time() + 600
        while len(created) < burst and time.time() < deadline and proc.poll() is None:
            time.sleep(0.5)
            events, pos = bed.audit_read(pos)
            for e in events:
                if (
                    e.get("stage") == "ResponseComplete"
                    and e.get("verb") == "create"
                    and e.get("userAgent", "").startswith("kubectl-kcache")
                    and e["objectRef"].get("resource") == "kernelcachenodes"
                    and (e.get("responseStatus") or {}).get("code") == 201
                ):
                    created[e["auditID"]] = _stamp(e)
        out["kcn_created"] = len(created)
        out["kcn_total_after"] = len(filler.c.list_all(filler.r.KERNEL_CACHE_NODES, convert=lambda o: 0)[0])
        out["kcn_total_expected"] = n + burst
        if created:
            last = max(created.values())
            out["converge_from_burst_start_s"] = round(last - t0, 2)
            out["converge_after_last_node_s"] = round(last - t_burst, 2)
            out["first_kcn_after_burst_start_s"] = round(min(created.values()) - t0, 2)
        out["converged"] = len(created) >= burst and out["kcn_total_after"] == n + burst
        out["peak_rss_mb"] = round(_vm(proc.pid, "VmHWM"), 1)
        log(
            f"  reconcile: {len(created)}/{burst} KernelCacheNodes, last "
            f"{out.get('converge_from_burst_start_s')}s after the burst began"
        )
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        err.close()
    out["exit_code"] = proc.returncode
    applied = [ln for ln in (bed.dir / "reconcile.log").read_text().splitlines() if "applied" in ln]
    out["passes_that_wrote"] = len(applied)
    out["log_tail"] = (bed.dir / "reconcile.log").read_text().splitlines()[-5:]
    filler.done["nodes"] = n + burst
    filler.done["members_until"] = n
    filler._save()
    return out


# ---- start-up -----------------------------------------------------------------------------------------


def help_startup(bed: Bed, runs: int = 20) -> dict[str, Any]:
    out = {}
    for label, cmd in (
        ("kubectl-kcache --help", ["kubectl-kcache", "--help"]),
        ("kubectl kcache --help", [*KCACHE, "--help"]),
    ):
        subprocess.run(cmd, env=bed.env, stdout=subprocess.DEVNULL, check=True)
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            subprocess.run(cmd, env=bed.env, stdout=subprocess.DEVNULL, check=True)
            times.append(time.perf_counter() - t0)
        out[label] = {"median_s": round(statistics.median(times), 4), "min_s": round(min(times), 4)}
    t0 = time.perf_counter()
    for _ in range(runs):
        subprocess.run([sys.executable, "-c", "pass"], env=bed.env, check=True)
    out["python -c pass"] = {"median_s": round((time.perf_counter() - t0) / runs, 4)}
    return out


# ---- reporting ----------------------------------------------------------------------------------------


def budgets(res: dict[str, Any], at: int) -> dict[str, Any]:
    s = res["sizes"].get(str(at))
    out: dict[str, Any] = {"at_nodes": at}
    if s:
        out["doctor_vs_curl"] = {"limit": 1.3, "value": s["doctor_vs_curl"], "met": s["doctor_vs_curl"] <= 1.3}
        rss = s["doctor"]["median_rss_mb"]
        out["doctor_rss_mb"] = {"limit": 300, "value": rss, "met": rss < 300}
        ratio = s["from_file_vs_json_load"]
        out["from_file_vs_json_load"] = {"limit": 1.5, "value": ratio, "met": ratio <= 1.5}
        rss = s["doctor_from_file"]["median_rss_mb"]
        out["from_file_rss_mb"] = {"limit": 300, "value": rss, "met": rss < 300}
        why = s["why_group"]["median_s"]
        out["why_group_s"] = {"limit": 0.5, "value": why, "met": why < 0.5}
    big = res["sizes"].get(str(max(int(k) for k in res["sizes"]))) if res["sizes"] else None
    if big:
        at_big = max(int(k) for k in res["sizes"])
        out["dump_vs_curl"] = {
            "at_nodes": at_big,
            "limit": 1.3,
            "value": big["dump_vs_curl"],
            "met": big["dump_vs_curl"] <= 1.3,
        }
        rss = big["dump"]["median_rss_mb"]
        out["dump_rss_mb"] = {"at_nodes": at_big, "limit": 300, "value": rss, "met": rss < 300}
    h = res.get("help", {}).get("kubectl kcache --help")
    if h:
        out["help_s"] = {
            "limit": 0.15,
            "value": h["median_s"],
            "met": h["median_s"] < 0.15,
            "plugin_alone_s": res["help"]["kubectl-kcache --help"]["median_s"],
        }
    rec = res.get("reconcile")
    if rec:
        conv = rec.get("converge_from_burst_start_s")
        out["reconcile_converge_s"] = {
            "limit": 60,
            "burst": rec["burst"],
            "value": conv,
            "after_last_node_s": rec.get("converge_after_last_node_s"),
            "met": bool(rec["converged"] and conv is not None and conv < 60),
        }
        out["reconcile_steady_writes"] = {"limit": 0, "value": rec["steady_writes"], "met": rec["steady_writes"] == 0}
        rss = rec.get("steady_rss_mb")
        out["reconcile_rss_mb"] = {
            "at_nodes": rec["nodes_before"],
            "limit": 250,
            "value": rss,
            "met": rss is not None and rss < 250,
        }
    return out


def plot(res: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted(int(k) for k in res["sizes"])
    get = lambda key, field: [res["sizes"][str(n)][key][field] for n in sizes]  # noqa: E731
    lines = (
        ("doctor", "o-", "kubectl kcache doctor -o json"),
        ("curl", "k-", "curl of the same lists (the floor)"),
        ("kubectl", "s-", "kubectl get -o json (same objects)"),
        ("dump", "d--", "kubectl kcache dump -o json"),
        ("doctor_from_file", "^--", "doctor --from-file (the JSON dump)"),
        ("json_load", "v:", "python json.load of the dump"),
    )
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.6))
    for key, style, label in lines:
        ax1.plot(sizes, get(key, "median_s"), style, label=label)
        ax2.plot(sizes, get(key, "median_rss_mb"), style, label=label)
    ax1.plot(sizes, [1.3 * x for x in get("curl", "median_s")], ":", color="grey", label="budget: 1.3x curl")
    ax1.set_xlabel("GPU nodes (20-40 KB each; + as many KernelCacheNodes and agent pods)")
    ax1.set_ylabel("wall time, median (s)")
    ax1.set_yscale("log")
    ax1.set_title("Wall time")
    ax1.grid(alpha=0.3)
    ax1.legend(fontsize=7)
    ax2.axhline(300, ls=":", color="grey", label="budget: 300 MB")
    ax2.set_xlabel("GPU nodes")
    ax2.set_ylabel("peak RSS (MB)")
    ax2.set_yscale("log")
    ax2.set_title("Peak memory")
    ax2.grid(alpha=0.3)
    ax2.legend(fontsize=7)
    m = res["machine"]
    fig.suptitle(
        f"doctor, dump and --from-file vs the curl floor and kubectl get on a real API server ({m['cpus']} "
        f"cores, Python {m['python']}, Kubernetes {m.get('server', '?')}, watch cache "
        f"{'on' if m['watch_cache'] else 'off'})",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def table(res: dict[str, Any]) -> str:
    lines = [
        "| nodes | doctor s (MB) | curl s | doctor/curl | kubectl s (MB) | dump s (MB) | dump/curl "
        "| from-file s (MB) | json.load s (MB) | from-file/json.load | why-group s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for n in sorted(int(k) for k in res["sizes"]):
        s = res["sizes"][str(n)]

        def cell(key: str, s: dict[str, Any] = s) -> str:
            return f"{s[key]['median_s']:.2f} ({s[key]['median_rss_mb']:.0f})"

        lines.append(
            f"| {n} | {cell('doctor')} | {s['curl']['median_s']:.2f} | {s['doctor_vs_curl']:.2f} "
            f"| {cell('kubectl')} | {cell('dump')} | {s['dump_vs_curl']:.2f} | {cell('doctor_from_file')} "
            f"| {cell('json_load')} | {s['from_file_vs_json_load']:.2f} | {s['why_group']['median_s']:.3f} |"
        )
    return "\n".join(lines)


# ---- main ---------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", help="comma-separated node counts (default 1000,2000,5000,10000)")
    ap.add_argument("--quick", action="store_true", help="a smoke run: sizes 200,500, burst 500, 15 s steady")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--burst", type=int, help="new member nodes for the reconcile measurement (default 5000)")
    ap.add_argument("--steady-seconds", type=float, help="reconcile on the steady cluster (default 60)")
    ap.add_argument("--profile-at", type=int, default=5000, help="profile doctor at this size (if measured)")
    ap.add_argument("--yaml-dump-at", type=int, help="time the YAML dump at this size (default: the smallest)")
    ap.add_argument("--no-watch-cache", action="store_true", help="the API server without its watch cache")
    ap.add_argument("--no-reconcile", action="store_true")
    ap.add_argument("--dir", help="test bed folder (kept afterwards; reused when it is up)")
    ap.add_argument("--keep", action="store_true", help="leave the test bed running")
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--out", help="results file (default bench/results/<date>.json; quick runs: -quick)")
    args = ap.parse_args(argv)
    sizes = (
        sorted({int(x) for x in args.sizes.split(",")})
        if args.sizes
        else list(QUICK_SIZES if args.quick else DEFAULT_SIZES)
    )
    burst = args.burst or (500 if args.quick else 5000)
    steady = args.steady_seconds or (15.0 if args.quick else 60.0)
    stamp = dt.datetime.now().strftime("%Y-%m-%d")
    # a quick run is a smoke test: its results stay out of bench/results
    results = Path(tempfile.gettempdir()) / "kcache-bench-quick" if args.quick else RESULTS
    results.mkdir(parents=True, exist_ok=True)
    out_path = Path(args.out) if args.out else results / f"{stamp}.json"

    d = Path(args.dir).resolve() if args.dir else Path(tempfile.mkdtemp(prefix="kcache-bench-"))
    t_all = time.perf_counter()
    log(f"load average {load():.2f}; test bed in {d}")
    bed = up(d, watch_cache=not args.no_watch_cache)
    res: dict[str, Any] = {
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "command": "python3 -m bench.run " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": {
            "cpus": os.cpu_count(),
            "mem_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "watch_cache": not args.no_watch_cache,
            "load_before": round(load(), 2),
            **bed.versions(),
        },
        "objects": {
            "node_bytes_mean": round(statistics.mean(len(json.dumps(fx.gpu_node(i))) for i in range(200))),
            "kcn_bytes": len(json.dumps(fx.kcn(7, CACHES, GROUPS))),
            "agent_pod_bytes": len(json.dumps(fx.agent_pod(7, "uid"))),
            "kernel_cache_bytes": len(json.dumps(fx.kernel_cache(7, GROUPS))),
            "groups": GROUPS,
            "kernel_caches": CACHES,
            "namespaces": len(fx.TEAM_NAMESPACES),
        },
        "sizes": {},
    }
    try:
        filler = Filler(bed)
        snap_dir = d / "snapshots"
        snap_dir.mkdir(exist_ok=True)
        for n in sizes:
            log(f"filling to {n} nodes (load {load():.2f})")
            fill_s = filler.grow(n)
            log(f"  filled in {fill_s:.1f}s")
            s = measure_size(bed, n, args.rounds, snap_dir)
            s["fill_s"] = round(fill_s, 1)
            s["load"] = round(load(), 2)
            res["sizes"][str(n)] = s
            if n == (args.yaml_dump_at or sizes[0]):
                res["yaml_dump"] = yaml_dump(bed, n, snap_dir)
            if n == args.profile_at or (args.profile_at not in sizes and n == sizes[-1]):
                res["profile"] = profile_doctor(bed, n, results / f"{stamp}-doctor-profile.txt")
                log(f"  profiled doctor at {n}: {res['profile']['text']}")
            out_path.write_text(json.dumps(res, indent=2))
        if not args.no_reconcile:
            log(f"reconcile: steady {steady:.0f}s, then a burst of {burst} nodes (load {load():.2f})")
            res["reconcile"] = measure_reconcile(bed, filler, burst, steady)
        res["help"] = help_startup(bed)
        log(f"--help: {res['help']}")
        res["budgets"] = budgets(res, 5000 if "5000" in res["sizes"] else max(sizes))
        res["machine"]["load_after"] = round(load(), 2)
        res["total_s"] = round(time.perf_counter() - t_all, 1)
        out_path.write_text(json.dumps(res, indent=2))
        if not args.no_plot:
            plot(res, results / f"{stamp}.png" if args.quick else PLOT)
        print(table(res))
        print(json.dumps(res["budgets"], indent=2))
        log(f"results: {out_path} ({res['total_s']:.0f}s in all)")
    finally:
        if not args.keep and not args.dir:
            down(d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
