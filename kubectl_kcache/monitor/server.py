"""The monitor's HTTP endpoints: /metrics (Prometheus text), /report (the doctor's HTML page, as of the last
evaluation), /healthz (liveness), /readyz (synced and reading)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answer = tuple[int, str, bytes]  # status, content type, body
TEXT = "text/plain; charset=utf-8"
METRICS = "text/plain; version=0.0.4; charset=utf-8"
HTML = "text/html; charset=utf-8"


def serve(address: str, port: int, routes: dict[str, Callable[[], Answer]]) -> ThreadingHTTPServer:
    """Start serving `routes` (path -> answer) on a daemon thread; returns the server (its port when 0 given)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            route = routes.get(self.path.split("?", 1)[0])
            try:
                code, content_type, body = route() if route else (404, TEXT, b"not found\n")
            except Exception as exc:  # noqa: BLE001 - one bad answer must not stop the server
                code, content_type, body = 500, TEXT, f"internal error: {type(exc).__name__}: {exc}\n".encode()
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: Any) -> None:
            return

    server = ThreadingHTTPServer((address, port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True, name="monitor-http").start()
    return server
