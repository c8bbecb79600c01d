"""Credentials from a single-context kubeconfig, in the official Python client's order: a token file or
token (trimmed), else an exec credential plugin (token or client certificate; run again when its
credential expires or after a 401, as client-go does), else username and password. A token file is read
again after a minute (rotated service-account tokens)."""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any

from ..errors import InputError

TOKEN_FILE_TTL = 60.0
EXPIRY_SKEW = 60.0


class ExecFailed(Exception):
    pass


class Credentials:
    """The Authorization header (or the exec plugin's client certificate) of one user."""

    def __init__(self, user: Mapping[str, Any], cluster: Mapping[str, Any]):
        self.user, self.cluster = user, cluster
        self.lock = threading.Lock()
        self.authorization = ""
        self.token_file = ""
        self.token_read = 0.0
        self.exec_spec: Mapping[str, Any] | None = None
        self.exec_cert: tuple[str, str] | None = None
        self.expiry: float | None = None
        self._authenticate()

    def _authenticate(self) -> None:
        user = self.user
        if "tokenFile" in user:
            self.token_file = str(user["tokenFile"])
            try:
                self._read_token_file()
            except OSError as exc:
                raise InputError(f"kubeconfig: token file {self.token_file}: {exc.strerror}") from None
            except UnicodeDecodeError:
                raise InputError(f"kubeconfig: token file {self.token_file}: not text") from None
            if self.authorization:
                return
        elif user.get("token"):
            self.authorization = f"Bearer {str(user['token']).strip()}"
            return
        if "exec" in user:
            self.exec_spec = user["exec"] if isinstance(user["exec"], Mapping) else {}
            try:
                self._run_exec()
                return
            except ExecFailed as exc:
                self.exec_spec = None
                if not (user.get("client-certificate") or user.get("client-certificate-data")):
                    raise InputError(f"kubeconfig exec credential plugin failed: {exc}") from None
        if "username" in user and "password" in user:
            basic = base64.b64encode(f"{user['username']}:{user['password']}".encode()).decode()
            self.authorization = f"Basic {basic}"

    def _read_token_file(self) -> None:
        with open(self.token_file, encoding="utf-8") as fh:
            token = fh.read().strip()
        self.token_read = time.monotonic()
        self.authorization = f"Bearer {token}" if token else ""

    def _run_exec(self) -> None:
        """Run the credential plugin (client.authentication.k8s.io ExecCredential); errors as the official
        client words them."""
        spec = self.exec_spec or {}
        for key in ("command", "apiVersion"):
            if key not in spec:
                raise ExecFailed(f"exec: malformed request. missing key '{key}'")
        api_version = spec["apiVersion"]
        env = dict(os.environ)
        try:
            args = [str(spec["command"]), *(str(a) for a in spec.get("args") or [])]
            for item in spec.get("env") or []:
                env[str(item["name"])] = str(item["value"])
        except (KeyError, TypeError) as exc:
            raise ExecFailed(f"exec: malformed request: {exc}") from None
        interactive = spec.get("interactiveMode") != "Never" and all(
            getattr(stream, "isatty", lambda: False)() for stream in (sys.stdin, sys.stdout)
        )
        info: dict[str, Any] = {
            "apiVersion": api_version,
            "kind": "ExecCredential",
            "spec": {"interactive": interactive},
        }
        if spec.get("provideClusterInfo"):
            info["spec"]["cluster"] = self._exec_cluster_info()
        env["KUBERNETES_EXEC_INFO"] = json.dumps(info)
        try:
            proc = subprocess.run(
                args,
                env=env,
                text=True,
                stdout=subprocess.PIPE,
                stderr=None if interactive else subprocess.PIPE,
                stdin=None if interactive else subprocess.DEVNULL,
            )
        except (OSError, ValueError) as exc:
            raise ExecFailed(str(exc)) from None
        if proc.returncode != 0:
            msg = f"exec: process returned {proc.returncode}"
            stderr = (proc.stderr or "").strip()
            raise ExecFailed(f"{msg}. {stderr}" if stderr else msg)
        try:
            data = json.loads(proc.stdout)
        except ValueError as exc:
            raise ExecFailed(f"exec: failed to decode process output: {exc}") from None
        if not isinstance(data, dict):
            raise ExecFailed("exec: malformed response. missing key 'apiVersion'")
        for key in ("apiVersion", "kind", "status"):
            if key not in data:
                raise ExecFailed(f"exec: malformed response. missing key '{key}'")
        if data["apiVersion"] != api_version:
            raise ExecFailed(f"exec: plugin api version {data['apiVersion']} does not match {api_version}")
        status = data["status"] if isinstance(data["status"], dict) else {}
        if status.get("token"):
            self.authorization = f"Bearer {str(status['token']).strip()}"
        elif status.get("clientCertificateData"):
            if not status.get("clientKeyData"):
                raise ExecFailed("exec: missing clientKeyData field in plugin output")
            self.exec_cert = (str(status["clientCertificateData"]), str(status["clientKeyData"]))
        else:
            raise ExecFailed("exec: missing token or clientCertificateData field in plugin output")
        self.expiry = None
        if status.get("expirationTimestamp"):
            try:
                stamp = str(status["expirationTimestamp"]).replace("Z", "+00:00")
                self.expiry = dt.datetime.fromisoformat(stamp).timestamp()
            except ValueError:
                self.expiry = None

    def _exec_cluster_info(self) -> dict[str, Any]:
        """The ExecCredential's spec.cluster (client-go's clientauthentication Cluster)."""
        c = self.cluster
        out: dict[str, Any] = {"server": c.get("server", "")}
        for key in ("tls-server-name", "insecure-skip-tls-verify", "proxy-url"):
            if c.get(key):
                out[key] = c[key]
        ca = c.get("certificate-authority-data")
        if not ca and c.get("certificate-authority"):
            try:
                with open(str(c["certificate-authority"]), "rb") as fh:
                    ca = base64.b64encode(fh.read()).decode()
            except OSError:
                ca = None
        if ca:
            out["certificate-authority-data"] = ca
        for ext in c.get("extensions") or []:
            if isinstance(ext, Mapping) and ext.get("name") == "client.authentication.k8s.io/exec":
                out["config"] = ext.get("extension")
        return out

    def refresh(self, force: bool = False) -> bool:
        """Before a request: a new exec credential when expired (or after a 401), a token file re-read.
        True when the client certificate changed (the connections must be made again)."""
        now = time.monotonic()
        if self.token_file and now - self.token_read > TOKEN_FILE_TTL:
            with self.lock:
                if now - self.token_read > TOKEN_FILE_TTL:
                    try:
                        self._read_token_file()
                    except (OSError, UnicodeDecodeError):
                        self.token_read = now  # keep the token we have; try again later
        if self.exec_spec is not None and (
            force or (self.expiry is not None and time.time() >= self.expiry - EXPIRY_SKEW)
        ):
            with self.lock:
                if force or (self.expiry is not None and time.time() >= self.expiry - EXPIRY_SKEW):
                    cert = self.exec_cert
                    try:
                        self._run_exec()
                    except ExecFailed as exc:
                        raise InputError(f"kubeconfig exec credential plugin failed: {exc}") from None
                    return self.exec_cert != cert
        return False
