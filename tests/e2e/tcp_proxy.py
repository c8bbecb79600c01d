"""A tiny TCP proxy for fault tests: `python -m tests.e2e.tcp_proxy HOST PORT [RATE]` listens on a free port
of 127.0.0.1, prints it, and forwards every connection to HOST:PORT byte for byte (TLS passes through).
With RATE (bytes a second), the server's answers trickle back at that rate: a slow but steady server.

Stopping it (SIGSTOP) partitions its clients from the server the way a stalled middlebox does: their
connections stay open, bytes they send are accepted by this machine's kernel but go no further, and no
answer comes back. SIGCONT heals the partition and delivers what was held.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
import time


def pump(src: socket.socket, dst: socket.socket, rate: int = 0) -> None:
    try:
        while True:
            data = src.recv(max(1, rate // 10) if rate else 65536)
            if not data:
                break
            dst.sendall(data)
            if rate:
                time.sleep(len(data) / rate)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)


def main() -> None:
    host, port = sys.argv[1], int(sys.argv[2])
    rate = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print(listener.getsockname()[1], flush=True)
    while True:
        client, _ = listener.accept()
        try:
            upstream = socket.create_connection((host, port))
        except OSError:
            client.close()
            continue
        for a, b, r in ((client, upstream, 0), (upstream, client, rate)):
            threading.Thread(target=pump, args=(a, b, r), daemon=True).start()


if __name__ == "__main__":
    main()
