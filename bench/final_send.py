"""How long after the write guard's final clock check a request's bytes reach the server, with busy threads
contending for the interpreter lock: the final write on a socket with a timeout (which polls with the lock
released and must take it back before it writes) against a blocking one (kube/write_guard.py).

A TLS server in another process stamps each arrival on CLOCK_BOOTTIME; the client records the clock value
its chained C check read (a dict's setdefault inside the chain keeps it without running Python code).

    python3 -m bench.final_send [--sends 1000] [--threads 8]
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import multiprocessing
import os
import socket
import ssl
import subprocess
import tempfile
import threading
import time
from typing import Any

CLOCK = time.CLOCK_BOOTTIME


def server(cert: str, key: str, ports: Any, arrivals: Any, sends: int) -> None:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        ports.put(s.getsockname()[1])
        conn, _ = s.accept()
        tls = ctx.wrap_socket(conn, server_side=True)
        out = []
        for _ in range(sends):
            tls.recv(100)
            out.append(time.clock_gettime(CLOCK))
            tls.sendall(b"k")
        arrivals.put(out)


def busy(stop: threading.Event) -> None:
    x = 0
    while not stop.is_set():
        for i in range(1000):
            x += i * i


def trial(mode: str, sends: int, threads: int, cert: str, key: str) -> dict[str, float]:
    ports, arrivals = multiprocessing.Queue(), multiprocessing.Queue()
    proc = multiprocessing.Process(target=server, args=(cert, key, ports, arrivals, sends))
    proc.start()
    port = ports.get()
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    sock = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="localhost")
    stop = threading.Event()
    hogs = [threading.Thread(target=busy, args=(stop,)) for _ in range(threads)]
    for h in hogs:
        h.start()
    checks, data = [], b"x" * 64
    for _ in range(sends):
        sock.settimeout(None if mode == "blocking" else 30.0)
        seen: dict[str, float] = {}
        until = time.clock_gettime(CLOCK) + 10
        clock = map(functools.partial(seen.setdefault, "t"), itertools.starmap(time.clock_gettime, ((CLOCK,),)))
        list(map(sock._sslobj.write, itertools.compress((data,), map(until.__gt__, clock))))  # type: ignore[attr-defined]
        checks.append(seen["t"])
        sock.settimeout(30.0)
        sock.recv(1)
    stop.set()
    for h in hogs:
        h.join()
    got = arrivals.get()
    proc.join()
    delays = sorted((a - c) * 1000 for a, c in zip(got, checks, strict=True))
    return {
        q: round(delays[min(len(delays) - 1, int(f * len(delays)))], 2)
        for q, f in (("p50_ms", 0.5), ("p90_ms", 0.9), ("p99_ms", 0.99), ("max_ms", 1.0))
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sends", type=int, default=1000)
    ap.add_argument("--threads", type=int, default=8)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
        subprocess.run(
            [
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                key,
                "-out",
                cert,
                "-days",
                "1",
                "-subj",
                "/CN=localhost",
            ],
            check=True,
            capture_output=True,
        )
        out = {"sends": args.sends, "busy_threads": args.threads, "load1": round(os.getloadavg()[0], 1)}
        for mode in ("timeout", "blocking"):
            out[mode] = trial(mode, args.sends, args.threads, cert, key)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
