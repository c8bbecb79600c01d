"""A real Kubernetes control plane on 127.0.0.1 for the tests: etcd + kube-apiserver, and with
--simulate also kube-controller-manager, kube-scheduler and KWOK (fake nodes whose pods run).

    testbed up --dir DIR [--simulate] [--watch-cache]
                                          start (building the binaries first if they are not cached);
                                          --watch-cache turns the API server's watch cache on (benchmarks)
    testbed down --dir DIR                stop everything started and remove the state (safe to repeat)
    testbed restart --dir DIR apiserver|etcd   restart one component on the same ports
    testbed compact --dir DIR             compact etcd to its current revision (watches from older
                                          resourceVersions then get 410 Gone: the watch cache is off)
    testbed status --dir DIR

KWOK simulates the nodes annotated kwok.x-k8s.io/node=fake (others keep the status tests give them).
DIR/kubeconfig (contexts: admin, alice, viewer, token-user, exec-user), DIR/env (KUBECONFIG and PATH),
DIR/audit.log (every request, metadata level) and DIR/state.json are written by `up`.
Only the standard library and openssl are used.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
CRDS = HERE / "crds"
APISERVER_READY_TIMEOUT = 90.0

# Users for auth tests. Client-certificate users: CN is the user, O entries are groups.
CERT_USERS = {
    "admin": ["system:masters"],
    "alice": [],
    "viewer": ["kcache-viewers"],
}
TOKEN_USERS = {  # name -> (token, groups)
    "token-user": ("testbed-static-token-0123456789", ["kcache-token-group"]),
    "exec-user": ("testbed-exec-token-9876543210", ["kcache-exec-group"]),
}
FAIL_LABEL = "kcache.test/fail"


def log(msg: str) -> None:
    print(f"testbed: {msg}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


# ---- binaries -----------------------------------------------------------------------------------


def binaries() -> Path:
    out = subprocess.run([str(HERE / "build-binaries")], stdout=subprocess.PIPE, text=True)
    if out.returncode != 0:
        raise SystemExit(f"testbed: building the binaries failed (exit {out.returncode})")
    return Path(out.stdout.strip().splitlines()[-1])


# ---- PKI ----------------------------------------------------------------------------------------


def make_pki(pki: Path) -> None:
    pki.mkdir(parents=True, exist_ok=True)

    def ossl(*args: str) -> None:
        run(["openssl", *args], cwd=pki)

    def sign(name: str, extensions: str) -> None:
        """<name>.csr signed by the test bed's CA into <name>.crt."""
        ossl(
            "x509",
            "-req",
            "-in",
            f"{name}.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "3650",
            "-extfile",
            extensions,
            "-out",
            f"{name}.crt",
        )

    ossl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "3650",
        "-subj",
        "/CN=kcache-testbed-ca",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    )
    (pki / "server.ext").write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,"
        "DNS:kubernetes.default.svc,IP:10.96.0.1\nextendedKeyUsage=serverAuth\n"
    )
    (pki / "client.ext").write_text("extendedKeyUsage=clientAuth\n")
    ossl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "apiserver.key",
        "-out",
        "apiserver.csr",
        "-subj",
        "/CN=kube-apiserver",
    )
    sign("apiserver", "server.ext")
    for user, groups in CERT_USERS.items():
        subj = f"/CN={user}" + "".join(f"/O={g}" for g in groups)
        ossl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{user}.key", "-out", f"{user}.csr", "-subj", subj)
        sign(user, "client.ext")
    ossl("genrsa", "-out", "sa.key", "2048")
    ossl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub")
    with open(pki / "tokens.csv", "w") as fh:
        for user, (token, groups) in TOKEN_USERS.items():
            fh.write(f'{token},{user},uid-{user},"{",".join(groups)}"\n')


# ---- processes ----------------------------------------------------------------------------------


class State:
    def __init__(self, d: Path):
        self.dir = d
        self.path = d / "state.json"
        self.data: dict = json.loads(self.path.read_text()) if self.path.exists() else {"procs": {}}

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.data, indent=2))
        tmp.replace(self.path)


def spawn(state: State, name: str, cmd: list[str]) -> int:
    logf = open(state.dir / f"{name}.log", "ab")  # noqa: SIM115 - the child's log, open while it runs
    proc = subprocess.Popen(
        cmd, stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
    )
    state.data["procs"][name] = {"pid": proc.pid, "cmd": cmd}
    state.save()
    return proc.pid


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child of ours is not alive
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def stop(state: State, name: str, timeout: float = 10.0) -> None:
    info = state.data["procs"].get(name)
    if not info:
        return
    pid = info["pid"]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            break
        except PermissionError:
            break
        deadline = time.time() + timeout
        while time.time() < deadline and alive(pid):
            time.sleep(0.05)
        if not alive(pid):
            break
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def wait_until(what: str, check, timeout: float, state: State | None = None, proc: str | None = None) -> None:
    deadline = time.time() + timeout
    last = ""
    while time.time() < deadline:
        try:
            if check():
                return
        except Exception as exc:  # noqa: BLE001 - any failure means "not yet"
            last = str(exc)
        if state is not None and proc is not None and not alive(state.data["procs"][proc]["pid"]):
            tail = (state.dir / f"{proc}.log").read_text(errors="replace")[-3000:]
            raise SystemExit(f"testbed: {proc} exited while waiting for {what}:\n{tail}")
        time.sleep(0.2)
    raise SystemExit(f"testbed: timed out after {timeout:.0f}s waiting for {what} ({last})")


def admin_ssl(state: State) -> ssl.SSLContext:
    pki = state.dir / "pki"
    ctx = ssl.create_default_context(cafile=str(pki / "ca.crt"))
    ctx.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
    return ctx


def api_get(state: State, path: str, timeout: float = 5.0) -> tuple[int, bytes]:
    url = f"https://127.0.0.1:{state.data['ports']['apiserver']}{path}"
    try:
        with urllib.request.urlopen(url, context=admin_ssl(state), timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


# ---- components ---------------------------------------------------------------------------------


def etcd_cmd(state: State) -> list[str]:
    p = state.data["ports"]
    return [
        str(Path(state.data["bin"]) / "etcd"),
        "--name=testbed",
        f"--data-dir={state.dir / 'etcd-data'}",
        f"--listen-client-urls=http://127.0.0.1:{p['etcd']}",
        f"--advertise-client-urls=http://127.0.0.1:{p['etcd']}",
        f"--listen-peer-urls=http://127.0.0.1:{p['etcd_peer']}",
        f"--initial-advertise-peer-urls=http://127.0.0.1:{p['etcd_peer']}",
        f"--initial-cluster=testbed=http://127.0.0.1:{p['etcd_peer']}",
        "--unsafe-no-fsync=true",
        "--log-level=warn",
        "--quota-backend-bytes=8589934592",
    ]


def start_etcd(state: State) -> None:
    spawn(state, "etcd", etcd_cmd(state))
    url = f"http://127.0.0.1:{state.data['ports']['etcd']}/health"
    wait_until(
        "etcd /health", lambda: b'"health":"true"' in urllib.request.urlopen(url, timeout=2).read(), 30, state, "etcd"
    )


def advertise_address() -> str:
    """The apiserver needs a non-loopback address to advertise; use this host's own when it has one."""
    try:
        with open("/proc/net/route") as fh:
            has_default = any(line.split()[1] == "00000000" for line in fh.readlines()[1:])
    except OSError:
        has_default = False
    if has_default:
        return ""
    out = subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout.split()
    return out[0] if out else "10.255.255.1"


def apiserver_cmd(state: State) -> list[str]:
    p, d, pki = state.data["ports"], state.dir, state.dir / "pki"
    cmd = [
        str(Path(state.data["bin"]) / "kube-apiserver"),
        f"--etcd-servers=http://127.0.0.1:{p['etcd']}",
        "--bind-address=127.0.0.1",
        f"--secure-port={p['apiserver']}",
        f"--tls-cert-file={pki / 'apiserver.crt'}",
        f"--tls-private-key-file={pki / 'apiserver.key'}",
        f"--client-ca-file={pki / 'ca.crt'}",
        "--authorization-mode=RBAC",
        f"--token-auth-file={pki / 'tokens.csv'}",
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        f"--service-account-key-file={pki / 'sa.pub'}",
        f"--service-account-signing-key-file={pki / 'sa.key'}",
        "--service-cluster-ip-range=10.96.0.0/12",
        "--allow-privileged=true",
        # TaintNodesByCondition would taint new nodes not-ready; only the (disabled) node-lifecycle
        # controller removes that taint
        "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
        f"--audit-policy-file={d / 'audit-policy.yaml'}",
        f"--audit-log-path={d / 'audit.log'}",
        "--audit-log-mode=blocking-strict",
        "--audit-log-maxsize=0",
        # without the watch cache, watches come straight from etcd: compaction gives a real 410 Gone
        # (`up --watch-cache` turns it on, as in production clusters, for benchmarks)
        f"--watch-cache={'true' if state.data.get('watch_cache') else 'false'}",
        "--enable-priority-and-fairness=false",
        "--max-requests-inflight=0",
        "--max-mutating-requests-inflight=0",
        "--profiling=false",
        "--v=0",
    ]
    adv = state.data.get("advertise", "")
    if adv:
        cmd.append(f"--advertise-address={adv}")
    return cmd


def start_apiserver(state: State) -> None:
    spawn(state, "apiserver", apiserver_cmd(state))
    wait_until(
        "kube-apiserver /readyz",
        lambda: api_get(state, "/readyz")[0] == 200,
        APISERVER_READY_TIMEOUT,
        state,
        "apiserver",
    )


def kubectl(state: State, *args: str, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess:
    cmd = [str(Path(state.data["bin"]) / "kubectl"), f"--kubeconfig={state.dir / 'kubeconfig'}", *args]
    return subprocess.run(cmd, check=check, capture_output=True, text=True, input=input)


def install_crds(state: State) -> None:
    kubectl(state, "apply", "--server-side", "-f", str(CRDS))
    names = [f"crd/{f.stem}.serving.kserve.io" for f in sorted(CRDS.glob("*.yaml"))]
    kubectl(state, "wait", "--for=condition=Established", "--timeout=60s", *names)


def write_kubeconfig(state: State) -> None:
    pki = state.dir / "pki"
    server = f"https://127.0.0.1:{state.data['ports']['apiserver']}"
    exec_plugin = state.dir / "exec-credential"
    token, _ = TOKEN_USERS["exec-user"]
    exec_plugin.write_text(
        "#!/bin/sh\n# a tiny exec credential plugin, like the ones EKS/GKE/AKS users run\n"
        f'echo \'{{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",'
        f'"status":{{"token":"{token}"}}}}\'\n'
    )
    exec_plugin.chmod(0o755)
    users = [
        {"name": u, "user": {"client-certificate": str(pki / f"{u}.crt"), "client-key": str(pki / f"{u}.key")}}
        for u in CERT_USERS
    ]
    users.append({"name": "token-user", "user": {"token": TOKEN_USERS["token-user"][0]}})
    users.append(
        {
            "name": "exec-user",
            "user": {
                "exec": {
                    "apiVersion": "client.authentication.k8s.io/v1",
                    "command": str(exec_plugin),
                    "interactiveMode": "Never",
                }
            },
        }
    )
    contexts = [
        {"name": u["name"], "context": {"cluster": "testbed", "user": u["name"], "namespace": "default"}} for u in users
    ]
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "testbed", "cluster": {"server": server, "certificate-authority": str(pki / "ca.crt")}}],
        "users": users,
        "contexts": contexts,
        "current-context": "admin",
    }
    (state.dir / "kubeconfig").write_text(json.dumps(cfg, indent=2))
    (state.dir / "env").write_text(
        f"export KUBECONFIG={state.dir / 'kubeconfig'}\nexport PATH={state.data['bin']}:$PATH\n"
    )


AUDIT_POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
"""


def write_kwok_stages(state: State) -> Path:
    """Upstream's fast node and pod stages, except that pods labelled kcache.test/fail=<Reason> fail the
    way preparation pods do instead of becoming Ready (KWOK would otherwise overwrite a hand-set status)."""
    src = Path(state.data["bin"]) / "kwok-stages"
    docs = []
    for rel in (
        "node/fast/node-initialize.yaml",
        "node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
        "pod/fast/pod-ready.yaml",
        "pod/fast/pod-complete.yaml",
        "pod/fast/pod-delete.yaml",
    ):
        text = (src / rel).read_text()
        if rel.endswith(("pod-ready.yaml", "pod-complete.yaml")):
            text = text.replace(
                "    matchExpressions:\n",
                f"    matchExpressions:\n    - key: '.metadata.labels.\"{FAIL_LABEL}\"'\n"
                "      operator: 'DoesNotExist'\n",
                1,
            )
        docs.append(text.strip())
    for reason, message in (
        (
            "ImagePullBackOff",
            'Back-off pulling image "registry.invalid/kcache@sha256:0000": ErrImagePull: '
            "failed to pull and unpack image: 401 Unauthorized",
        ),
        ("ErrImagePull", "failed to pull and unpack image: 401 Unauthorized"),
        ("CrashLoopBackOff", "back-off 5m0s restarting failed container"),
    ):
        docs.append(f"""apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-fail-{reason.lower()}
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.metadata.labels."{FAIL_LABEL}"'
      operator: 'In'
      values: ['{reason}']
    - key: '.status.phase'
      operator: 'In'
      values: ['Pending']
    - key: '.status.containerStatuses'
      operator: 'DoesNotExist'
  next:
    statusTemplate: |
      {{{{ $now := Now }}}}
      conditions:
      - lastTransitionTime: {{{{ $now | Quote }}}}
        status: "False"
        type: Ready
        reason: ContainersNotReady
      containerStatuses:
      {{{{ range .spec.containers }}}}
      - image: {{{{ .image | Quote }}}}
        name: {{{{ .name | Quote }}}}
        ready: false
        restartCount: {"3" if reason == "CrashLoopBackOff" else "0"}
        state:
          waiting:
            reason: {reason}
            message: {json.dumps(message)}
      {{{{ end }}}}
      phase: Pending
""")
    path = state.dir / "kwok-stages.yaml"
    path.write_text("\n---\n".join(docs) + "\n")
    return path


def start_simulation(state: State) -> None:
    b, d, pki = Path(state.data["bin"]), state.dir, state.dir / "pki"
    p = state.data["ports"]
    p.update(kcm=free_port(), scheduler=free_port())
    state.save()
    kc = str(d / "kubeconfig")
    spawn(
        state,
        "kube-controller-manager",
        [
            str(b / "kube-controller-manager"),
            f"--kubeconfig={kc}",
            "--bind-address=127.0.0.1",
            f"--secure-port={p['kcm']}",
            "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
            "--leader-elect=false",
            f"--root-ca-file={pki / 'ca.crt'}",
            f"--service-account-private-key-file={pki / 'sa.key'}",
            "--use-service-account-credentials=false",
            # no node-lifecycle controller: slow KWOK heartbeats on 2 cores must not taint nodes
            "--controllers=*,-node-lifecycle-controller,-cloud-node-lifecycle-controller,-service-lb-controller,"
            "-node-route-controller,-node-ipam-controller",
            "--concurrent-daemonset-syncs=2",
            "--v=0",
        ],
    )
    (d / "scheduler.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        f"clientConnection: {{kubeconfig: {json.dumps(kc)}, qps: 200, burst: 400}}\n"
        "leaderElection: {leaderElect: false}\n"
    )
    spawn(
        state,
        "kube-scheduler",
        [
            str(b / "kube-scheduler"),
            f"--config={d / 'scheduler.yaml'}",
            "--bind-address=127.0.0.1",
            f"--secure-port={p['scheduler']}",
            "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
        ],
    )
    spawn(
        state,
        "kwok",
        [
            str(b / "kwok"),
            f"--kubeconfig={kc}",
            f"--config={write_kwok_stages(state)}",
            "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
            "--node-lease-duration-seconds=40",
            "--cidr=10.244.0.0/16",
            "--node-ip=127.0.0.1",
        ],
    )

    def sa_ready() -> bool:  # the service-account controller running means kcm is working
        return kubectl(state, "get", "serviceaccount", "default", "-n", "default", check=False).returncode == 0

    wait_until("kube-controller-manager (default ServiceAccount)", sa_ready, 60, state, "kube-controller-manager")
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    wait_until(
        "kube-scheduler /healthz",
        lambda: (
            urllib.request.urlopen(f"https://127.0.0.1:{p['scheduler']}/healthz", context=ctx, timeout=2).status == 200
        ),
        60,
        state,
        "kube-scheduler",
    )
    state.data["simulate"] = True
    state.save()


# ---- commands -----------------------------------------------------------------------------------


def cmd_up(args) -> None:
    d = Path(args.dir).resolve()
    state = State(d) if (d / "state.json").exists() else None
    if state and all(alive(p["pid"]) for p in state.data["procs"].values()) and state.data.get("ready"):
        if args.simulate and not state.data.get("simulate"):
            start_simulation(state)
        log(f"already up in {d}")
        print(d / "env")
        return
    if state:
        cmd_down(args)
    t0 = time.time()
    bin_dir = binaries()
    d.mkdir(parents=True, exist_ok=True)
    state = State(d)
    state.data.update(
        bin=str(bin_dir),
        ports={"etcd": free_port(), "etcd_peer": free_port(), "apiserver": free_port()},
        advertise=advertise_address(),
        watch_cache=bool(getattr(args, "watch_cache", False)),
        procs={},
    )
    state.save()
    try:
        make_pki(d / "pki")
        (d / "audit-policy.yaml").write_text(AUDIT_POLICY)
        write_kubeconfig(state)
        t1 = time.time()
        start_etcd(state)
        start_apiserver(state)
        install_crds(state)
        if args.simulate:
            start_simulation(state)
    except BaseException:
        log("up failed; stopping what was started")
        cmd_down(args, keep_logs=True)
        raise
    state.data["ready"] = True
    state.data["startSeconds"] = round(time.time() - t1, 2)
    state.save()
    log(f"up in {time.time() - t0:.1f}s (control plane {time.time() - t1:.1f}s): source {d / 'env'}")
    print(d / "env")


def cmd_down(args, keep_logs: bool = False) -> None:
    d = Path(args.dir).resolve()
    if not (d / "state.json").exists():
        return
    state = State(d)
    for name in ("kwok", "kube-scheduler", "kube-controller-manager", "apiserver", "apiserver-2", "etcd"):
        stop(state, name)
    for name in list(state.data["procs"]):
        stop(state, name)
    if keep_logs:
        state.data["procs"] = {}
        state.data["ready"] = False
        state.save()
        return
    shutil.rmtree(d, ignore_errors=True)


def cmd_restart(args) -> None:
    state = State(Path(args.dir).resolve())
    if args.component == "etcd":
        stop(state, "etcd")
        start_etcd(state)
        wait_until("kube-apiserver /readyz after etcd restart", lambda: api_get(state, "/readyz")[0] == 200, 60)
    else:
        stop(state, "apiserver")
        start_apiserver(state)
    log(f"{args.component} restarted")


def etcd_call(state: State, path: str, body: dict) -> dict:
    req = urllib.request.Request(
        f"http://127.0.0.1:{state.data['ports']['etcd']}{path}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def cmd_compact(args) -> None:
    state = State(Path(args.dir).resolve())
    rev = int(etcd_call(state, "/v3/kv/range", {"key": base64.b64encode(b"/").decode()})["header"]["revision"])
    try:
        etcd_call(state, "/v3/kv/compaction", {"revision": rev, "physical": True})
    except urllib.error.HTTPError as e:  # already compacted to this revision
        if b"compacted" not in e.read():
            raise
    print(rev)


def cmd_status(args) -> None:
    d = Path(args.dir).resolve()
    if not (d / "state.json").exists():
        print("down")
        sys.exit(1)
    state = State(d)
    for name, info in state.data["procs"].items():
        print(f"{name}: {'running' if alive(info['pid']) else 'stopped'} (pid {info['pid']})")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        prog="testbed", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up")
    up.add_argument("--dir", required=True)
    up.add_argument("--simulate", action="store_true")
    up.add_argument(
        "--watch-cache", action="store_true", help="serve lists and watches from the watch cache (benchmarks)"
    )
    down = sub.add_parser("down")
    down.add_argument("--dir", required=True)
    restart = sub.add_parser("restart")
    restart.add_argument("--dir", required=True)
    restart.add_argument("component", choices=["apiserver", "etcd"])
    compact = sub.add_parser("compact")
    compact.add_argument("--dir", required=True)
    status = sub.add_parser("status")
    status.add_argument("--dir", required=True)
    args = ap.parse_args(argv)
    {"up": cmd_up, "down": cmd_down, "restart": cmd_restart, "compact": cmd_compact, "status": cmd_status}[args.cmd](
        args
    )


if __name__ == "__main__":
    main()
