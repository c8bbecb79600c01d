"""THE HTTP server of a long-running command: /healthz (liveness), /readyz (readiness; a 503 lists why not),
/metrics (Prometheus text), the command's own routes (the monitor's /report), and / listing them all. One
failing answer is a 500 and never stops the server."""

from __future__ import annotations

import html
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..errors import InputError
from .metrics import CONTENT_TYPE as METRICS
from .process import Process

Answer = tuple[int, str, bytes]  # status, content type, body
TEXT = "text/plain; charset=utf-8"
HTML = "text/html; charset=utf-8"


@dataclass(frozen=True)
class Endpoint:
    path: str
    what: str  # said on /
    answer: Callable[[], Answer]


def endpoints(
    process: Process, metrics: Callable[[], str], about: str, extra: Sequence[Endpoint] = ()
) -> list[Endpoint]:
    """/metrics (`about` them), the `extra` routes, /healthz and /readyz of `process`."""

    def healthz() -> Answer:
        alive, why = process.liveness()
        return (200, TEXT, b"ok\n") if alive else (503, TEXT, f"not alive: {why}\n".encode())

    def readyz() -> Answer:
        ready, reasons = process.readiness()
        text = "ok\n" if ready else "not ready:\n" + "".join(f"- {x}\n" for x in reasons)
        return 200 if ready else 503, TEXT, text.encode()

    return [
        Endpoint("/metrics", f"Prometheus metrics: {about}", lambda: (200, METRICS, metrics().encode())),
        *extra,
        Endpoint("/healthz", f"liveness: {process.loop} makes progress and every thread runs", healthz),
        Endpoint("/readyz", "readiness (a 503 says why not)", readyz),
    ]


def serve(address: str, port: int, title: str, served: Sequence[Endpoint]) -> ThreadingHTTPServer:
    """Serve `served` and / on a daemon thread; returns the server (its port when 0 was given)."""
    items = "".join(f'<li><a href="{e.path}">{e.path}</a>: {html.escape(e.what)}</li>' for e in served)
    head = f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{title}</title></head><body>"
    page = f"{head}<h1>{title}</h1><ul>{items}</ul></body></html>\n".encode()
    routes = {e.path: e.answer for e in served} | {"/": lambda: (200, HTML, page)}

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

    try:
        server = ThreadingHTTPServer((address, port), Handler)
    except OSError as exc:
        raise InputError(f"cannot listen on {address}:{port}: {exc.strerror or exc}") from None
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True, name="probes").start()
    return server
