"""Test helpers that drive the test bed with the real kubectl (independent of the code under test)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

FAIL_LABEL = "kcache.test/fail"
TEST_NAMESPACES = ("kserve", "kserve-kernelcache-jobs", "team-a", "team-b")
OWNED_LABEL = "kcache.test/owned"


class Cluster:
    def __init__(self, d: Path, state: dict[str, Any]):
        self.dir = d
        self.state = state
        self.kubeconfig = str(d / "kubeconfig")
        self.bin = Path(state["bin"])
        self.audit_log = d / "audit.log"
        self.testbed = Path(__file__).resolve().parent.parent / "testbed" / "testbed"

    @property
    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["KUBECONFIG"] = self.kubeconfig
        env["PATH"] = f"{self.bin}:{env.get('PATH', '')}"
        env.pop("NO_COLOR", None)
        return env

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.state['ports']['apiserver']}"

    # ---- kubectl ---------------------------------------------------------------------------------
    def kubectl(
        self, *args: str, input: str | None = None, check: bool = True, context: str | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess:
        cmd = [str(self.bin / "kubectl"), f"--kubeconfig={self.kubeconfig}"]
        if context:
            cmd.append(f"--context={context}")
        proc = subprocess.run(cmd + list(args), input=input, capture_output=True, text=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {proc.stderr.strip()}")
        return proc

    def apply(self, docs: str | Iterable[dict[str, Any]] | dict[str, Any], server_side: bool = False) -> None:
        """kubectl apply; objects are sent as JSON (YAML 1.1 would read a node named `n` as false)."""
        if isinstance(docs, str):
            text = docs
        else:
            items = [docs] if isinstance(docs, dict) else list(docs)
            text = json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
        args = ["apply", "-f", "-"] + (["--server-side", "--force-conflicts"] if server_side else [])
        self.kubectl(*args, input=text)

    def create(self, docs: Iterable[dict[str, Any]]) -> None:
        items = list(docs)
        for start in range(0, len(items), 500):
            text = json.dumps({"apiVersion": "v1", "kind": "List", "items": items[start : start + 500]})
            self.kubectl("create", "-f", "-", input=text, timeout=300)

    def get(self, kind: str, name: str | None = None, namespace: str | None = None, check: bool = True) -> Any:
        args = ["get", kind] + ([name] if name else []) + (["-n", namespace] if namespace else []) + ["-o", "json"]
        proc = self.kubectl(*args, check=check)
        return json.loads(proc.stdout) if proc.returncode == 0 else None

    def set_status(self, kind: str, name: str, status: dict[str, Any], namespace: str | None = None) -> None:
        """Write status through the status subresource (a merge patch)."""
        args = ["patch", kind, name, "--subresource=status", "--type=merge", "-p", json.dumps({"status": status})]
        if namespace:
            args += ["-n", namespace]
        self.kubectl(*args)

    def wait_for(self, what: str, check: Callable[[], Any], timeout: float = 60, interval: float = 0.3) -> Any:
        deadline = time.time() + timeout
        last: Any = None
        while time.time() < deadline:
            last = check()
            if last:
                return last
            time.sleep(interval)
        raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")

    # ---- audit log -------------------------------------------------------------------------------
    def audit_mark(self) -> int:
        return self.audit_log.stat().st_size if self.audit_log.exists() else 0

    def audit_events(self, since: int = 0) -> list[dict[str, Any]]:
        with open(self.audit_log, "rb") as fh:
            fh.seek(since)
            data = fh.read()
        return [json.loads(line) for line in data.splitlines() if line.strip()]

    # ---- test bed --------------------------------------------------------------------------------
    def testbed_cmd(self, *args: str) -> str:
        proc = subprocess.run(
            [str(self.testbed), *args, "--dir", str(self.dir)], capture_output=True, text=True, timeout=180
        )
        if proc.returncode != 0:
            raise AssertionError(f"testbed {' '.join(args)} failed: {proc.stderr}")
        return proc.stdout.strip()

    # ---- reset -----------------------------------------------------------------------------------
    def reset(self) -> None:
        """Back to a known state: no nodes, no Kernel Cache objects, empty test namespaces."""
        k = self.kubectl
        k("delete", "kernelcachecaptures,kernelcaches", "--all", "-A", "--wait=false", check=False)
        k("delete", "kernelcachenodes,kernelcachenodegroups", "--all", "--wait=false", check=False)
        k(
            "delete",
            "clusterroles,clusterrolebindings,mutatingwebhookconfigurations",
            "-l",
            OWNED_LABEL,
            "--wait=false",
            check=False,
        )
        for ns in TEST_NAMESPACES:
            k("create", "namespace", ns, check=False)
            k(
                "delete",
                "daemonsets,deployments,jobs,replicasets,configmaps,services,serviceaccounts,rolebindings,"
                "roles,leases,events,endpointslices",
                "--all",
                "-n",
                ns,
                "--wait=false",
                check=False,
            )
            k("delete", "pods", "--all", "-n", ns, "--grace-period=0", "--force", "--wait=false", check=False)
            k("delete", "secrets", "-l", OWNED_LABEL, "-n", ns, "--wait=false", check=False)
        k("delete", "nodes", "--all", "--wait=false", check=False)
        self.wait_for("a clean cluster", self._clean, timeout=90)

    def _clean(self) -> bool:
        out = self.kubectl("get", "nodes,kernelcachenodegroups,kernelcachenodes", "-o", "name").stdout.strip()
        out += self.kubectl("get", "kernelcaches,kernelcachecaptures", "-A", "-o", "name").stdout.strip()
        for ns in TEST_NAMESPACES:
            out += self.kubectl("get", "pods,daemonsets,deployments,jobs,configmaps", "-n", ns, "-o", "name").stdout
            out = re.sub(r"configmap/kube-root-ca.crt\s*", "", out).strip()
        return out == ""
