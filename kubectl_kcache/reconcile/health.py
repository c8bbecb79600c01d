"""The reconcile controller's HTTP endpoints: /healthz (the loop is alive), /readyz (it can see the cluster
and leads or stands by, else why not) and /metrics."""

from __future__ import annotations

import threading
from typing import Any, Protocol

from ..prometheus import CONTENT_TYPE
from .metrics import Metrics


class Probed(Protocol):
    metrics: Metrics

    def liveness(self) -> tuple[bool, str]: ...

    def readiness(self) -> tuple[bool, list[str]]: ...


def serve_health(port: int, ctrl: Probed) -> None:
    """Serve /healthz, /readyz and /metrics of `ctrl` on `port`, from a daemon thread."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            content_type = "text/plain"
            if self.path == "/healthz":
                alive, why = ctrl.liveness()
                body, code = (b"ok\n", 200) if alive else (f"not alive: {why}\n".encode(), 503)
            elif self.path == "/readyz":
                ready, reasons = ctrl.readiness()
                text = "ok\n" if ready else "not ready:\n" + "".join(f"- {x}\n" for x in reasons)
                body, code = text.encode(), 200 if ready else 503
            elif self.path == "/metrics":
                body, code = ctrl.metrics.render().encode(), 200
                content_type = CONTENT_TYPE
            else:
                body, code = b"not found\n", 404
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: Any) -> None:
            return

    server = ThreadingHTTPServer(("0.0.0.0", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True, name="health").start()
