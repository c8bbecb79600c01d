"""A tiny TCP proxy for fault tests: `python -m tests.e2e.tcp_proxy HOST PORT` listens on a free port of
127.0.0.1, prints it, and forwards every connection to HOST:PORT byte for byte (TLS passes through).

Stopping it (SIGSTOP) partitions its clients from the server the way a stalled middlebox does: their
connections stay open, bytes they send are accepted by this machine's kernel but go no further, and no
answer comes back. SIGCONT heals the partition and delivers what was held.
"""

from __future__ import annotations

import socket
import sys
import threading


def pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def main() -> None:
    host, port = sys.argv[1], int(sys.argv[2])
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
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=pump, args=(a, b), daemon=True).start()


if __name__ == "__main__":
    main()
