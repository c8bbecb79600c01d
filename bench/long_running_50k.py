"""The long-running processes at 50,000 large nodes, by simulation (issue 36 point 3): the real `kubectl kcache
monitor` and `kubectl kcache reconcile` commands, each in its own process, against a simulated API server that
holds bench.scale's 50,000-large-node fleet (the test bed's kube-apiserver needs ~0.34 MiB per node and held
32,500), with churn for a period, measuring each process's memory, how long a change takes to show, and the
LISTs made after its informers synced.

    python3 -m bench.long_running_50k [--dump FILE] [--nodes 50000] [--churn-seconds 600] [--every 5]
                                      [--quiet-seconds 60] [--heartbeats 0] [--dir DIR] [--out FILE]

The simulated API server (`--serve`, its own process) answers what the two commands ask, in the API server's
JSON shape over HTTP/1.1: paginated lists (limit/continue, label and field selectors, the list's
resourceVersion), watches from a resourceVersion (chunked, one event a line, a BOOKMARK a minute, ended after
the request's timeoutSeconds, DELETED/ADDED when an object leaves/enters a label selector), get, create,
delete (preconditions), merge patch and update (status too), each bumping one resourceVersion counter. It keeps
every event of the run (no watch is ever too old: no 410) and logs every request with its user agent.

What is real: the two commands as an operator runs them (`.venv/bin/kubectl-kcache`), their client, informers,
LiveSnapshot, evaluation, planning and writes. What is simulated: the API server (no etcd, no admission, no
watch cache window) and the churn, which the harness makes through the server as a kubelet, a user or an agent
would: every `--every` seconds one change, in this order, each on a node of a different group: a node
labelled out of its group, then back in; a node's Ready condition False, then True; a KernelCacheNode entry
Ready -> Pulling, then back (its agent's status write); a node created in a group, then deleted. The next
change is made once both processes showed the last one (at most 60 s), and never sooner than `--every`. With
`--heartbeats R`, the kubelets' status reports run beside the churn: every node in turn has its conditions'
lastHeartbeatTime rewritten, R a second (a kubelet reports every 5 minutes when nothing changed: 167 a second
at 50,000 nodes), so that over the churn every node's object is replaced, as in a real fleet.

Measured: VmRSS every second and VmHWM at the end (/proc/PID/status); per change, the seconds from the server
publishing it to (monitor) the first /metrics scrape showing it (the group's `kcache_nodegroup_members`, the sum
of its `kcache_kernelcache_nodes`, or the KernelCache's Ready count on that group), scraped every
`--monitor-poll` seconds (1; what a scrape of the 36,000-line text costs the monitor is measured at the end);
(reconcile) its KernelCacheNode delete or create received by the server, or for a change that needs no write,
`kcache_reconcile_total` moving past its value before the change (the pass over it finished); every LIST
(a GET without watch=true on a collection) and watch per process, before and after its /readyz first said 200.
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

import msgspec

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
BOOKMARK_EVERY = 60.0

# ---- the simulated API server -------------------------------------------------------------------------------

ResKey = tuple[str, str]  # (group, plural)


def _resources() -> dict[str, Any]:
    from kubectl_kcache.kube import resources as r

    every = [*(v for v in vars(r).values() if isinstance(v, r.Resource)), *r.ACCESS_RULES]
    return {v.kind: v for v in every if v is not r.EVENTS_V1}


class _Meta(msgspec.Struct):
    name: str = ""
    namespace: str | None = None
    labels: dict[str, str] | None = None
    uid: str | None = None


class _Involved(msgspec.Struct):
    kind: str = ""


class _Head(msgspec.Struct):
    kind: str = ""
    apiVersion: str = ""
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    involvedObject: _Involved | None = None
    type: str | None = None
    reason: str | None = None


class Obj:
    """One stored object: its JSON bytes and what selectors match on."""

    __slots__ = ("data", "labels", "fields")

    def __init__(self, data: bytes, labels: dict[str, str], fields: dict[str, str]):
        self.data, self.labels, self.fields = data, labels, fields


def _obj(data: bytes) -> Obj:
    h = msgspec.json.decode(data, type=_Head)
    fields = {"metadata.name": h.metadata.name, "metadata.namespace": h.metadata.namespace or ""}
    if h.involvedObject is not None:
        fields["involvedObject.kind"] = h.involvedObject.kind
    if h.type is not None:
        fields["type"] = h.type
    if h.reason is not None:
        fields["reason"] = h.reason
    return Obj(data, h.metadata.labels or {}, fields)


def _selector(text: str, fields: bool) -> list[tuple[str, str, str]]:
    out = []
    for term in filter(None, (t.strip() for t in text.split(","))):
        for op in ("!=", "==", "="):
            if op in term:
                k, v = term.split(op, 1)
                out.append((k.strip(), "!=" if op == "!=" else "=", v.strip()))
                break
        else:
            if fields:
                raise ValueError(f"field selector {term!r}")
            out.append((term[1:], "!", "") if term.startswith("!") else (term, "exists", ""))
    return out


def _matches(sel: list[tuple[str, str, str]], values: dict[str, str]) -> bool:
    for k, op, v in sel:
        have = values.get(k)
        if op == "=" and have != v:
            return False
        if op == "!=" and have == v:
            return False
        if op == "exists" and have is None:
            return False
        if op == "!" and have is not None:
            return False
    return True


def _merge(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = _merge(out.get(k), v)
    return out


class Event:
    __slots__ = ("rv", "res", "ns", "type", "data", "labels", "fields", "old_labels", "old_fields")

    def __init__(self, rv: int, res: ResKey, ns: str, type_: str, new: Obj, old: Obj | None):
        self.rv, self.res, self.ns, self.type, self.data = rv, res, ns, type_, new.data
        self.labels, self.fields = new.labels, new.fields
        self.old_labels = old.labels if old else None
        self.old_fields = old.fields if old else None


class Server:
    def __init__(self) -> None:
        self.kinds = _resources()
        self.store: dict[ResKey, dict[tuple[str, str], Obj]] = {}
        self.lock = threading.Condition()
        self.rv = 1000
        self.log: list[Event] = []
        self.requests: list[dict[str, Any]] = []
        self.pages: dict[str, tuple[list[tuple[str, str]], int, int]] = {}
        self.uids = 0
        self.started = time.time()

    # ---- objects ----
    def load(self, path: str, limit: int) -> int:
        """Every item of a bench.scale dump (one item a line), with a resourceVersion and uid added."""
        count = 0
        nodes = 0
        with open(path, "rb") as fh:
            for line in fh:
                line = line.rstrip(b"\n").rstrip(b",")
                if not line.startswith(b'{"apiVersion"'):
                    continue
                h = msgspec.json.decode(line, type=_Head)
                if h.kind == "Node":
                    nodes += 1
                    if nodes > limit:
                        continue
                res = self.kinds[h.kind]
                if h.kind == "Deployment":  # KServe's controller present and stopped, as on the test bed
                    doc = msgspec.json.decode(line)
                    doc["spec"]["replicas"] = 0
                    doc["status"] = {"observedGeneration": 1}
                    line = msgspec.json.encode(doc)
                self.uids += 1
                extra = b'"resourceVersion":"1",'
                if h.metadata.uid is None:
                    extra += f'"uid":"00000000-0000-4000-8000-{self.uids:012d}",'.encode()
                at = line.index(b'"metadata":{') + len(b'"metadata":{')
                data = line[:at] + extra + line[at:]
                self.store.setdefault((res.group, res.plural), {})[(h.metadata.namespace or "", h.metadata.name)] = (
                    _obj(data)
                )
                count += 1
        return count

    def _resource(self, path: str) -> tuple[Any, str, str, str]:
        """(Resource, namespace, name, subresource) of a request path."""
        segs = [unquote(s) for s in path.strip("/").split("/")]
        if segs[0] == "api":
            group, rest = "", segs[2:]
        else:
            group, rest = segs[1], segs[3:]
        ns = ""
        if len(rest) >= 3 and rest[0] == "namespaces":
            ns, rest = rest[1], rest[2:]
        plural = rest[0]
        res = next(r for r in self.kinds.values() if r.group == group and r.plural == plural)
        return res, ns, rest[1] if len(rest) > 1 else "", rest[2] if len(rest) > 2 else ""

    def _publish(self, res: Any, ns: str, type_: str, new: Obj, old: Obj | None) -> None:
        self.log.append(Event(self.rv, (res.group, res.plural), ns, type_, new, old))
        self.lock.notify_all()

    def _stamp(self, doc: dict[str, Any]) -> Obj:
        self.rv += 1
        doc.setdefault("metadata", {})["resourceVersion"] = str(self.rv)
        return _obj(msgspec.json.encode(doc))

    def put(self, res: Any, ns: str, doc: dict[str, Any]) -> Obj:
        """Create or replace (under the lock): the stored object and its event."""
        key = (ns, doc["metadata"]["name"])
        store = self.store.setdefault((res.group, res.plural), {})
        old = store.get(key)
        if old is None:
            self.uids += 1
            doc["metadata"].setdefault("uid", f"00000000-0000-4000-9000-{self.uids:012d}")
            doc["metadata"].setdefault("creationTimestamp", _now())
        new = self._stamp(doc)
        store[key] = new
        self._publish(res, ns, "ADDED" if old is None else "MODIFIED", new, old)
        return new

    def remove(self, res: Any, ns: str, name: str) -> Obj | None:
        store = self.store.get((res.group, res.plural), {})
        old = store.pop((ns, name), None)
        if old is not None:
            gone = self._stamp(msgspec.json.decode(old.data))
            self._publish(res, ns, "DELETED", gone, old)
        return old

    def get_doc(self, kind: str, ns: str, name: str) -> dict[str, Any] | None:
        res = self.kinds[kind]
        obj = self.store.get((res.group, res.plural), {}).get((ns, name))
        return None if obj is None else msgspec.json.decode(obj.data)

    # ---- requests ----
    def record(self, ua: str, verb: str, path: str, extra: str = "") -> None:
        self.requests.append({"t": round(time.time(), 3), "ua": ua, "verb": verb, "path": path, "extra": extra})

    def list_page(self, res: Any, ns: str, q: dict[str, str], metadata_only: bool) -> bytes:
        labels = _selector(q.get("labelSelector", ""), False)
        fields = _selector(q.get("fieldSelector", ""), True)
        limit = int(q.get("limit") or 0)
        with self.lock:
            store = self.store.get((res.group, res.plural), {})
            token = q.get("continue", "")
            if token and token in self.pages:
                keys, pos, rv = self.pages.pop(token)
            else:
                keys = sorted(k for k, o in store.items() if (not ns or k[0] == ns))
                pos, rv = 0, self.rv
            chunk: list[bytes] = []
            while pos < len(keys) and (not limit or len(chunk) < limit):
                o = store.get(keys[pos])
                pos += 1
                if o is not None and _matches(labels, o.labels) and _matches(fields, o.fields):
                    chunk.append(_metadata_only(o.data, res) if metadata_only else o.data)
            cont = ""
            if pos < len(keys):
                cont = base64.b64encode(f"{res.plural}/{pos}/{time.monotonic_ns()}".encode()).decode()
                self.pages[cont] = (keys, pos, rv)
        head = {"kind": res.kind + "List", "apiVersion": res.api_version, "metadata": {"resourceVersion": str(rv)}}
        if cont:
            head["metadata"]["continue"] = cont
        return msgspec.json.encode(head)[:-1] + b',"items":[' + b",".join(chunk) + b"]}"

    def watch(self, handler: BaseHTTPRequestHandler, res: Any, ns: str, q: dict[str, str]) -> None:
        labels = _selector(q.get("labelSelector", ""), False)
        fields = _selector(q.get("fieldSelector", ""), True)
        since = int(q.get("resourceVersion") or 0)
        deadline = time.monotonic() + float(q.get("timeoutSeconds") or 1800)
        key = (res.group, res.plural)
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()

        def send(line: bytes) -> None:
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(line) + 1, line + b"\n"))
            handler.wfile.flush()

        def matches(lab: dict[str, str] | None, fld: dict[str, str] | None) -> bool:
            return lab is not None and fld is not None and _matches(labels, lab) and _matches(fields, fld)

        index = 0  # the first event not yet looked at (events are in resourceVersion order)
        with self.lock:
            lo, hi = 0, len(self.log)
            while lo < hi:
                mid = (lo + hi) // 2
                if self.log[mid].rv <= since:
                    lo = mid + 1
                else:
                    hi = mid
            index = lo
        last_sent = time.monotonic()
        try:
            while True:
                out: list[bytes] = []
                with self.lock:
                    while index >= len(self.log):
                        left = deadline - time.monotonic()
                        if left <= 0 or time.monotonic() - last_sent >= BOOKMARK_EVERY:
                            break
                        self.lock.wait(min(left, BOOKMARK_EVERY))
                    events = self.log[index:]
                    index = len(self.log)
                    rv = self.rv
                for ev in events:
                    if ev.res != key or (ns and ev.ns != ns):
                        continue
                    now, before = matches(ev.labels, ev.fields), matches(ev.old_labels, ev.old_fields)
                    type_ = ev.type
                    if type_ == "MODIFIED" and now and not before:
                        type_ = "ADDED"
                    elif type_ == "MODIFIED" and before and not now:
                        type_, now = "DELETED", True
                    elif type_ == "DELETED":
                        now = before
                    if now:
                        out.append(b'{"type":"%s","object":%s}' % (type_.encode(), ev.data))
                for line in out:
                    send(line)
                if out:
                    last_sent = time.monotonic()
                if time.monotonic() >= deadline:
                    break
                if not events and time.monotonic() - last_sent >= BOOKMARK_EVERY:
                    mark = {"kind": res.kind, "apiVersion": res.api_version, "metadata": {"resourceVersion": str(rv)}}
                    send(b'{"type":"BOOKMARK","object":%s}' % msgspec.json.encode(mark))
                    last_sent = time.monotonic()
            handler.wfile.write(b"0\r\n\r\n")
            handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return


def _metadata_only(data: bytes, res: Any) -> bytes:
    doc = msgspec.json.decode(data)
    return msgspec.json.encode(
        {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": doc.get("metadata", {})}
    )


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _status(code: int, reason: str, message: str) -> bytes:
    doc = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message, "reason": reason}
    return msgspec.json.encode({**doc, "code": code})


def handler_for(server: Server) -> type[BaseHTTPRequestHandler]:
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_a: Any) -> None:
            return

        def _answer(self, code: int, body: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _body(self) -> Any:
            n = int(self.headers.get("Content-Length") or 0)
            return msgspec.json.decode(self.rfile.read(n)) if n else None

        def _route(self, method: str) -> None:
            url = urlparse(self.path)
            q = {k: v[-1] for k, v in parse_qs(url.query).items()}
            ua = self.headers.get("User-Agent", "")
            if url.path.startswith("/bench/"):
                self._bench(method, url.path, q)
                return
            if url.path == "/version":
                self._answer(200, b'{"major":"1","minor":"36","gitVersion":"v1.36.3"}')
                return
            try:
                res, ns, name, sub = server._resource(url.path)
            except (StopIteration, IndexError):
                server.record(ua, "unknown", url.path)
                self._answer(404, _status(404, "NotFound", f"the server could not find {url.path}"))
                return
            if method == "GET" and not name:
                if q.get("watch") in ("true", "1"):
                    server.record(ua, "watch", url.path, q.get("resourceVersion", ""))
                    server.watch(self, res, ns, q)
                    return
                server.record(ua, "list", url.path, "continue" if q.get("continue") else "")
                meta = "PartialObjectMetadata" in self.headers.get("Accept", "")
                self._answer(200, server.list_page(res, ns, q, meta))
                return
            verb = {"GET": "get", "POST": "create", "DELETE": "delete", "PATCH": "patch", "PUT": "update"}[method]
            body = self._body()
            with server.lock:
                if method == "POST":
                    name = body["metadata"]["name"]
                server.record(ua, verb, url.path + (f"/{name}" if method == "POST" else ""))
                obj = server.store.get((res.group, res.plural), {}).get((ns, name))
                if method == "GET":
                    if obj is None:
                        self._answer(404, _status(404, "NotFound", f'{res.plural} "{name}" not found'))
                    else:
                        self._answer(200, obj.data)
                    return
                if method == "POST":
                    if obj is not None:
                        self._answer(409, _status(409, "AlreadyExists", f'{res.plural} "{name}" already exists'))
                        return
                    body.setdefault("apiVersion", res.api_version)
                    body.setdefault("kind", res.kind)
                    if res.namespaced:
                        body["metadata"]["namespace"] = ns
                    self._answer(201, server.put(res, ns, body).data)
                    return
                if obj is None:
                    self._answer(404, _status(404, "NotFound", f'{res.plural} "{name}" not found'))
                    return
                current = msgspec.json.decode(obj.data)
                md = current["metadata"]
                if method == "DELETE":
                    pre = (body or {}).get("preconditions") or {}
                    if (pre.get("uid") and pre["uid"] != md.get("uid")) or (
                        pre.get("resourceVersion") and pre["resourceVersion"] != md.get("resourceVersion")
                    ):
                        self._answer(409, _status(409, "Conflict", "precondition failed"))
                        return
                    server.remove(res, ns, name)
                    self._answer(200, b'{"kind":"Status","apiVersion":"v1","status":"Success"}')
                    return
                if method == "PATCH":
                    doc = _merge(current, body)
                elif sub == "status":
                    doc = {**current, "status": body.get("status")}
                else:
                    want = (body.get("metadata") or {}).get("resourceVersion")
                    if want and want != md.get("resourceVersion"):
                        self._answer(409, _status(409, "Conflict", "the object has been modified"))
                        return
                    doc = {**body, "metadata": {**md, **body.get("metadata", {})}}
                    if "status" in current:
                        doc["status"] = current["status"]
                self._answer(200, server.put(res, ns, doc).data)

        def _bench(self, method: str, path: str, q: dict[str, str]) -> None:
            if path == "/bench/requests":
                since = int(q.get("since") or 0)
                self._answer(200, json.dumps(server.requests[since:]).encode())
            elif path == "/bench/change":
                self._answer(200, json.dumps(change(server, self._body())).encode())
            elif path == "/bench/heartbeats":
                rate = float(self._body()["per_second"])
                threading.Thread(target=heartbeats, args=(server, rate), daemon=True).start()
                self._answer(200, b"{}")
            else:
                self._answer(404, b"{}")

        def do_GET(self) -> None:
            self._route("GET")

        def do_POST(self) -> None:
            self._route("POST")

        def do_PUT(self) -> None:
            self._route("PUT")

        def do_PATCH(self) -> None:
            self._route("PATCH")

        def do_DELETE(self) -> None:
            self._route("DELETE")

    return H


POOL = "kcache.bench/pool"


def change(server: Server, what: dict[str, Any]) -> dict[str, Any]:
    """One change of the churn, made as its real author makes it; returns when it was published."""
    kind, i = what["type"], int(what["node"])
    name = f"gpu-{i:05d}.compute.internal"
    with server.lock:
        nodes = server.kinds["Node"]
        if kind == "create":
            from bench import fixtures as fx

            doc = fx.gpu_node(i, what["groups"])
            doc["metadata"]["name"] = name
            doc["metadata"]["labels"]["kubernetes.io/hostname"] = name
            doc["metadata"]["labels"][POOL] = what["pool"]
            server.put(nodes, "", doc)
        elif kind == "delete":
            server.remove(nodes, "", name)
        elif kind in ("out", "in", "notready", "ready"):
            doc = server.get_doc("Node", "", name)
            assert doc is not None
            if kind == "out":
                doc["metadata"]["labels"].pop(POOL)
            elif kind == "in":
                doc["metadata"]["labels"][POOL] = what["pool"]
            else:
                for cond in doc["status"]["conditions"]:
                    if cond["type"] == "Ready":
                        cond["status"] = "False" if kind == "notready" else "True"
                        cond["reason"] = "KubeletNotReady" if kind == "notready" else "KubeletReady"
                        cond["lastTransitionTime"] = _now()
            server.put(nodes, "", doc)
        elif kind in ("pulling", "cached"):
            doc = server.get_doc("KernelCacheNode", "", name)
            assert doc is not None
            entry = doc["status"]["cacheStatus"][what["entry"]]
            entry["state"] = "Pulling" if kind == "pulling" else "Ready"
            entry["lastUpdate"] = _now()
            server.put(server.kinds["KernelCacheNode"], "", doc)
        else:
            raise ValueError(kind)
        return {"t": time.time(), "rv": server.rv}


def heartbeats(server: Server, per_second: float) -> None:
    """The kubelets' status reports: each node's conditions given a new lastHeartbeatTime, node after node, at
    `per_second` (a kubelet reports every 5 minutes when nothing changed: 167 a second at 50,000 nodes)."""
    res = server.kinds["Node"]
    start, done = time.time(), 0
    while True:
        with server.lock:
            names = sorted(name for _ns, name in server.store.get((res.group, res.plural), {}))
        for name in names:
            wait = start + done / per_second - time.time()
            if wait > 0:
                time.sleep(wait)
            with server.lock:
                doc = server.get_doc("Node", "", name)
                if doc is None:
                    continue
                now = _now()
                for cond in (doc.get("status") or {}).get("conditions") or []:
                    cond["lastHeartbeatTime"] = now
                server.put(res, "", doc)
            done += 1


def serve(dump: str, nodes: int) -> None:
    server = Server()
    t = time.time()
    count = server.load(dump, nodes)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(server))
    httpd.daemon_threads = True
    httpd.request_queue_size = 128
    print(json.dumps({"port": httpd.server_address[1], "objects": count, "load_s": round(time.time() - t, 1)}))
    sys.stdout.flush()
    httpd.serve_forever()


# ---- the harness --------------------------------------------------------------------------------------------


def _proc_status(pid: int) -> dict[str, float]:
    out = {}
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                k, _, v = line.partition(":")
                if k in ("VmRSS", "VmHWM"):
                    out[k] = int(v.split()[0]) / 1024
    except OSError:
        pass
    return out


def _cpu(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            parts = fh.read().rsplit(")", 1)[1].split()
        return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


def _get(url: str, timeout: float = 10.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except OSError:
        return 0, b""


def _post(url: str, doc: Any) -> Any:
    req = urllib.request.Request(url, data=json.dumps(doc).encode(), method="POST")
    req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def _metric(text: str, name: str, **labels: str) -> float:
    """The sum of the samples of `name` whose labels include `labels`."""
    total = 0.0
    want = [f'{k}="{v}"' for k, v in labels.items()]
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            head, _, value = line.rpartition(" ")
            if all(w in head for w in want):
                total += float(value)
    return total


class Sampler(threading.Thread):
    """VmRSS of each process every second, and its CPU seconds."""

    def __init__(self, pids: dict[str, int]):
        super().__init__(daemon=True)
        self.pids = pids
        self.samples: dict[str, list[tuple[float, float]]] = {k: [] for k in pids}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(1.0):
            now = time.time()
            for k, pid in self.pids.items():
                rss = _proc_status(pid).get("VmRSS")
                if rss is not None:
                    self.samples[k].append((now, rss))


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dump", help="bench.scale's dump to serve (written into --dir when not given)")
    ap.add_argument("--nodes", type=int, default=50000)
    ap.add_argument("--groups", type=int, default=200)
    ap.add_argument("--caches", type=int, default=5000)
    ap.add_argument("--churn-seconds", type=float, default=600.0)
    ap.add_argument("--every", type=float, default=5.0, help="seconds between changes (at least)")
    ap.add_argument("--quiet-seconds", type=float, default=60.0, help="nothing changes this long after both settled")
    ap.add_argument(
        "--heartbeats",
        type=float,
        default=0.0,
        help="node status reports a second during the churn, every node in turn (0: none)",
    )
    ap.add_argument(
        "--monitor-poll",
        type=float,
        default=1.0,
        help="seconds between /metrics scrapes while a change is awaited",
    )
    ap.add_argument("--dir", default="/tmp/kcache-long-running")
    ap.add_argument("--kcache", default=str(ROOT / ".venv" / "bin" / "kubectl-kcache"))
    ap.add_argument("--out", help="write the results (JSON) here")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.serve:
        serve(args.dump, args.nodes)
        return 0
    work = Path(args.dir)
    work.mkdir(parents=True, exist_ok=True)
    dump = args.dump
    if not dump:
        from bench.scale import write_dump

        dump = str(work / f"dump-large-{args.nodes}.json")
        if not Path(dump).exists():
            log(f"writing {dump}")
            write_dump(Path(dump), args.nodes, "large", args.groups, args.caches)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        return _run(args, work, dump, procs)
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(20)
                except subprocess.TimeoutExpired:
                    p.kill()


def _run(args: argparse.Namespace, work: Path, dump: str, procs: list[subprocess.Popen[bytes]]) -> int:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    server = subprocess.Popen(
        [sys.executable, "-m", "bench.long_running_50k", "--serve", "--dump", dump, "--nodes", str(args.nodes)],
        stdout=subprocess.PIPE,
        env=env,
        cwd=ROOT,
    )
    procs.append(server)
    assert server.stdout is not None
    started = json.loads(server.stdout.readline())
    base = f"http://127.0.0.1:{started['port']}"
    log(f"simulated API server at {base}: {started['objects']} objects loaded in {started['load_s']} s")
    kubeconfig = work / "kubeconfig"
    kubeconfig.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "sim", "cluster": {"server": base}}],
                "users": [{"name": "sim", "user": {"token": "simulated"}}],
                "contexts": [{"name": "sim", "context": {"cluster": "sim", "user": "sim"}}],
                "current-context": "sim",
            }
        )
    )
    mon_port, rec_port = _free_port(), _free_port()
    kc = [args.kcache, "--kubeconfig", str(kubeconfig)]
    t_start = time.time()
    rec_log = open(work / "reconcile.log", "wb")  # noqa: SIM115 - open for the process's life
    mon_log = open(work / "monitor.log", "wb")  # noqa: SIM115
    # the commands import the code of their own install (--kcache of another worktree measures that tree)
    cmd_env = {k: v for k, v in env.items() if k != "PYTHONPATH"}
    rec = subprocess.Popen([*kc[:1], "reconcile", *kc[1:], "--health-port", str(rec_port)], stderr=rec_log, env=cmd_env)
    procs.append(rec)
    mon = subprocess.Popen(
        [*kc[:1], "monitor", *kc[1:], "--port", str(mon_port), "--address", "127.0.0.1"], stderr=mon_log, env=cmd_env
    )
    procs.append(mon)
    sampler = Sampler({"monitor": mon.pid, "reconcile": rec.pid, "server": server.pid})
    sampler.start()
    mon_url, rec_url = f"http://127.0.0.1:{mon_port}", f"http://127.0.0.1:{rec_port}"
    ready: dict[str, float] = {}
    while len(ready) < 2:
        for name, url, p in (("monitor", mon_url, mon), ("reconcile", rec_url, rec)):
            if p.poll() is not None:
                raise SystemExit(f"{name} exited with {p.returncode}; see {work}/{name}.log")
            if name not in ready and _get(url + "/readyz", 5)[0] == 200:
                ready[name] = time.time()
                log(f"{name} ready after {ready[name] - t_start:.1f} s")
        time.sleep(0.5)
    # settled: reconcile made no write for 10 s, the monitor evaluated since it was ready
    last_write = time.time()
    seen = 0
    while True:
        reqs = json.loads(_get(base + f"/bench/requests?since={seen}")[1])
        seen += len(reqs)
        if any(r["verb"] in ("create", "delete", "patch", "update") and "reconcile" in r["ua"] for r in reqs):
            last_write = time.time()
        text = _get(mon_url + "/metrics", 30)[1].decode()
        if time.time() - last_write >= 10 and _metric(text, "kcache_monitor_evaluations_total") >= 1:
            break
        time.sleep(1)
    settled = time.time()
    log(f"settled after {settled - t_start:.1f} s; quiet for {args.quiet_seconds:.0f} s")
    time.sleep(args.quiet_seconds)
    quiet_end = time.time()
    cpu_before = {"monitor": _cpu(mon.pid), "reconcile": _cpu(rec.pid)}
    if args.heartbeats:
        log(f"node status reports: {args.heartbeats:g} a second from now")
        _post(base + "/bench/heartbeats", {"per_second": args.heartbeats})
    changes = churn(args, base, mon_url, rec_url, {"monitor": mon.pid, "reconcile": rec.pid})
    churn_end = time.time()
    cpu_after = {"monitor": _cpu(mon.pid), "reconcile": _cpu(rec.pid)}
    log("churn done; 30 s to settle")
    time.sleep(30)
    # what one /metrics scrape costs the monitor (the awaited changes were polled with them)
    before_scrapes = _cpu(mon.pid)
    for _ in range(20):
        _get(mon_url + "/metrics", 30)
    scrape_cpu = (_cpu(mon.pid) - before_scrapes) / 20
    sampler.stop.set()
    sampler.join()
    hwm = {"monitor": _proc_status(mon.pid), "reconcile": _proc_status(rec.pid), "server": _proc_status(server.pid)}
    requests = json.loads(_get(base + "/bench/requests?since=0", 60)[1])
    result = _summarise(args, started, t_start, ready, settled, quiet_end, churn_end, changes, sampler, hwm, requests)
    result["cpu_during_churn_s"] = {k: round(cpu_after[k] - cpu_before[k], 1) for k in cpu_after}
    result["summary"]["monitor"]["scrape_cpu_s"] = round(scrape_cpu, 3)
    result["monitor_poll_s"] = args.monitor_poll
    result["load_average"] = os.getloadavg()
    print(json.dumps(result["summary"], indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    return 0


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _schedule(args: argparse.Namespace, n: int) -> dict[str, Any]:
    """The n-th change: eight kinds in turn, each pair (a change and its undoing) on a node of its own group."""
    from bench import fixtures as fx

    cycle, step = divmod(n, 8)
    pair = step // 2
    g = (cycle * 4 + pair) % args.groups
    node = g + args.groups * (7 + cycle)  # a member of pool g (node i is in pool i % groups)
    pool = f"pool-{g:02d}"
    kind = ("out", "in", "notready", "ready", "pulling", "cached", "create", "delete")[step]
    what: dict[str, Any] = {"type": kind, "node": node, "pool": pool, "groups": args.groups}
    if kind in ("create", "delete"):
        what["node"] = 90000 + cycle
    if kind in ("pulling", "cached"):
        entry = fx.kcn(node, args.caches, args.groups)[1]["cacheStatus"]
        ready = [k for k, v in entry.items() if v["state"] == "Ready"]
        what["entry"] = ready[0]
    return what


def _monitor_view(text: str, what: dict[str, Any]) -> float:
    """The number on /metrics that the change moves."""
    pool = what["pool"]
    if what["type"] in ("out", "in", "create", "delete"):
        return _metric(text, "kcache_nodegroup_members", nodegroup=pool)
    if what["type"] in ("notready", "ready"):
        return _metric(text, "kcache_kernelcache_nodes", nodegroup=pool)
    ns, name = what["entry"].split("/")
    return _metric(text, "kcache_kernelcache_nodes", namespace=ns, kernelcache=name, nodegroup=pool, state="Ready")


def churn(
    args: argparse.Namespace, base: str, mon_url: str, rec_url: str, pids: dict[str, int]
) -> list[dict[str, Any]]:
    changes = []
    start = time.time()
    n = 0
    while time.time() - start < args.churn_seconds:
        what = _schedule(args, n)
        before_text = _get(mon_url + "/metrics", 30)[1].decode()
        before = _monitor_view(before_text, what)
        passes = _metric(_get(rec_url + "/metrics")[1].decode(), "kcache_reconcile_total")
        seen = len(json.loads(_get(base + "/bench/requests?since=0", 60)[1]))
        cpu0 = {k: _cpu(p) for k, p in pids.items()}
        made = _post(base + "/bench/change", what)
        t0 = made["t"]
        cpu: dict[str, float] = {}
        kcn_name = f"gpu-{what['node']:05d}.compute.internal"
        writes = {"out": "delete", "in": "create", "create": "create", "delete": "delete"}.get(what["type"])
        mon_s = rec_s = None
        rec_how = "write" if writes else "pass"
        scrapes, scraped = 0, 0.0
        while time.time() - t0 < 60 and (mon_s is None or rec_s is None):
            time.sleep(0.25)
            if mon_s is None and time.time() - scraped >= args.monitor_poll:
                scrapes, scraped = scrapes + 1, time.time()
                status, body = _get(mon_url + "/metrics", 30)
                if status == 200 and _monitor_view(body.decode(), what) != before:
                    mon_s = time.time() - t0
                    cpu["monitor"] = _cpu(pids["monitor"]) - cpu0["monitor"]
            if rec_s is None:
                if writes:
                    reqs = json.loads(_get(base + f"/bench/requests?since={seen}", 60)[1])
                    for r in reqs:
                        if (
                            "reconcile" in r["ua"]
                            and r["verb"] == writes
                            and r["path"].endswith("/kernelcachenodes/" + kcn_name)
                        ):
                            rec_s = r["t"] - t0
                            cpu["reconcile"] = _cpu(pids["reconcile"]) - cpu0["reconcile"]
                            break
                else:
                    now = _metric(_get(rec_url + "/metrics")[1].decode(), "kcache_reconcile_total")
                    if now > passes:
                        rec_s = time.time() - t0
                        cpu["reconcile"] = _cpu(pids["reconcile"]) - cpu0["reconcile"]
        changes.append(
            {
                **{k: v for k, v in what.items() if k != "groups"},
                "at": round(t0 - start, 1),
                "monitor_s": None if mon_s is None else round(mon_s, 2),
                "reconcile_s": None if rec_s is None else round(rec_s, 2),
                "reconcile_by": rec_how,
                "monitor_cpu_s": round(cpu["monitor"], 2) if "monitor" in cpu else None,
                "monitor_scrapes": scrapes,
                "reconcile_cpu_s": round(cpu["reconcile"], 2) if "reconcile" in cpu else None,
                "load1": round(os.getloadavg()[0], 1),
            }
        )
        log(f"change {n}: {json.dumps(changes[-1])}")
        n += 1
        wait = args.every - (time.time() - t0)
        if wait > 0:
            time.sleep(wait)
    return changes


def _median(xs: list[Any]) -> float | None:
    got = [x for x in xs if x is not None]
    return round(statistics.median(got), 2) if got else None


def _summarise(
    args: argparse.Namespace,
    started: dict[str, Any],
    t_start: float,
    ready: dict[str, float],
    settled: float,
    quiet_end: float,
    churn_end: float,
    changes: list[dict[str, Any]],
    sampler: Sampler,
    hwm: dict[str, dict[str, float]],
    requests: list[dict[str, Any]],
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "nodes": args.nodes,
        "groups": args.groups,
        "kernel_caches": args.caches,
        "node_size": "large",
        "server": started,
        "churn_seconds": args.churn_seconds,
        "every_s": args.every,
        "heartbeats_per_second": args.heartbeats,
        "quiet_seconds": args.quiet_seconds,
        "changes": changes,
    }
    summary: dict[str, Any] = {}
    for name in ("monitor", "reconcile"):
        mine = [r for r in requests if (" monitor" in r["ua"]) == (name == "monitor") and "kubectl-kcache" in r["ua"]]
        after = [r for r in mine if r["t"] >= ready[name]]
        rss = sampler.samples[name]
        during = [v for t, v in rss if quiet_end <= t <= churn_end]
        quiet = [v for t, v in rss if settled <= t <= quiet_end]
        lat = [c[f"{name}_s"] for c in changes if c[f"{name}_s"] is not None]
        summary[name] = {
            "ready_after_s": round(ready[name] - t_start, 1),
            "vmhwm_mb": round(hwm[name].get("VmHWM", 0), 1),
            "vmrss_end_mb": round(hwm[name].get("VmRSS", 0), 1),
            "vmrss_quiet_max_mb": round(max(quiet), 1) if quiet else None,
            "vmrss_churn_median_mb": round(statistics.median(during), 1) if during else None,
            "vmrss_churn_max_mb": round(max(during), 1) if during else None,
            "lists_before_ready": sum(1 for r in mine if r["verb"] == "list" and r["t"] < ready[name]),
            "lists_after_ready": sum(1 for r in after if r["verb"] == "list"),
            "lists_after_ready_paths": sorted({r["path"] for r in after if r["verb"] == "list"}),
            "watches": sum(1 for r in mine if r["verb"] == "watch"),
            "watches_after_ready": sum(1 for r in after if r["verb"] == "watch"),
            "writes": sum(1 for r in mine if r["verb"] in ("create", "delete", "patch", "update")),
            "changes_seen": len(lat),
            "changes": len(changes),
            "latency_median_s": round(statistics.median(lat), 2) if lat else None,
            "latency_max_s": round(max(lat), 2) if lat else None,
            "cpu_to_show_median_s": _median([c[f"{name}_cpu_s"] for c in changes]),
            "cpu_to_show_max_s": max(
                (c[f"{name}_cpu_s"] for c in changes if c[f"{name}_cpu_s"] is not None), default=None
            ),
            "latency_by_type": {
                t: sorted(c[f"{name}_s"] for c in changes if c["type"] == t and c[f"{name}_s"] is not None)
                for t in dict.fromkeys(c["type"] for c in changes)
            },
        }
    summary["server_vmhwm_mb"] = round(hwm["server"].get("VmHWM", 0), 1)
    out["summary"] = summary
    out["rss_samples"] = {
        k: [(round(t - t_start, 1), round(v, 1)) for t, v in s[::5]] for k, s in sampler.samples.items()
    }
    out["unknown_requests"] = sorted({r["path"] for r in requests if r["verb"] == "unknown"})
    return out


if __name__ == "__main__":
    sys.exit(main())
