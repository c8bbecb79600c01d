"""The test bed's API as its admin, in process: the reset between tests makes ~40 requests, which as kubectl
processes cost 1.4 s a test (each process starts, reads its kubeconfig and discovers the API)."""

from __future__ import annotations

import http.client
import json
import ssl
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

KSERVE = "/apis/serving.kserve.io/v1alpha1"


class AdminAPI:
    def __init__(self, d: Path, port: int):
        self.port = port
        self._tls = ssl.create_default_context(cafile=str(d / "pki" / "ca.crt"))
        self._tls.load_cert_chain(str(d / "pki" / "admin.crt"), str(d / "pki" / "admin.key"))
        self._local = threading.local()

    def request(
        self, method: str, path: str, body: Any = None, content_type: str = "application/json", **query: str
    ) -> tuple[int, Any]:
        """(status, decoded body); a connection the API server closed (it may have been restarted by the
        test before) is opened again once."""
        url = path + (f"?{urlencode(query)}" if query else "")
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": content_type, "Accept": "application/json"}
        for attempt in (1, 2):
            conn = getattr(self._local, "conn", None)
            if conn is None:
                conn = self._local.conn = http.client.HTTPSConnection(
                    "127.0.0.1", self.port, context=self._tls, timeout=30
                )
            try:
                conn.request(method, url, body=data, headers=headers)
                resp = conn.getresponse()
                raw = resp.read()
            except (OSError, http.client.HTTPException):
                conn.close()
                self._local.conn = None
                if attempt == 2:
                    raise
                continue
            return resp.status, json.loads(raw) if raw else None
        raise AssertionError("unreachable")

    def names(self, path: str, **query: str) -> list[str]:
        """`namespace/name` (or `name`) of every object a list returns."""
        status, body = self.request("GET", path, **query)
        if status != 200:
            raise AssertionError(f"GET {path}: HTTP {status}: {body}")
        return [
            "/".join(x for x in (i["metadata"].get("namespace"), i["metadata"]["name"]) if x) for i in body["items"]
        ]

    def delete_collection(self, path: str, grace: int | None = None, query: dict[str, str] | None = None) -> None:
        body = {
            "kind": "DeleteOptions",
            "apiVersion": "v1",
            **({"gracePeriodSeconds": grace} if grace is not None else {}),
        }
        status, out = self.request("DELETE", path, body, **(query or {}))
        if status not in (200, 404):  # 404: the namespace or the resource is not there
            raise AssertionError(f"DELETE {path}: HTTP {status}: {out}")

    def parallel(self, calls: list[tuple[Any, ...]]) -> list[Any]:
        """Run (function, *args) calls on 8 threads; their results in order."""
        with ThreadPoolExecutor(8) as pool:
            return list(pool.map(lambda call: call[0](*call[1:]), calls))
