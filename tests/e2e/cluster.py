"""Test helpers that drive the test bed with the real kubectl (independent of the code under test)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .admin_api import KSERVE, AdminAPI

FAIL_LABEL = "kcache.test/fail"
TEST_NAMESPACES = ("kserve", "kserve-kernelcache-jobs", "team-a", "team-b")
POD_SECURITY_MODES = ("enforce", "enforce-version", "warn", "warn-version", "audit", "audit-version")
OWNED_LABEL = "kcache.test/owned"
# what the reset deletes in each test namespace (kubectl's `delete daemonsets,deployments,... --all`), and what
# it waits to be gone
NAMESPACED_RESET = (
    "/apis/apps/v1/namespaces/{ns}/daemonsets",
    "/apis/apps/v1/namespaces/{ns}/deployments",
    "/apis/apps/v1/namespaces/{ns}/replicasets",
    "/apis/batch/v1/namespaces/{ns}/jobs",
    "/api/v1/namespaces/{ns}/configmaps",
    "/api/v1/namespaces/{ns}/services",
    "/api/v1/namespaces/{ns}/serviceaccounts",
    "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
    "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
    "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases",
    "/api/v1/namespaces/{ns}/events",
    "/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices",
)
NAMESPACED_CLEAN = (
    "/api/v1/namespaces/{ns}/pods",
    "/apis/apps/v1/namespaces/{ns}/daemonsets",
    "/apis/apps/v1/namespaces/{ns}/deployments",
    "/apis/batch/v1/namespaces/{ns}/jobs",
    "/api/v1/namespaces/{ns}/configmaps",
)


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

    def kcache(self, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
        """The plugin as a user runs it against the test bed (admin's context)."""
        return subprocess.run(
            [sys.executable, "-m", "kubectl_kcache", *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=timeout,
        )

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
        """Back to a known state: no nodes, no Kernel Cache objects, empty test namespaces (the deletes made in
        parallel, through one in-process client: as kubectl processes they cost more than most tests)."""
        api = self.admin_api()
        owned = {"labelSelector": OWNED_LABEL}
        api.parallel(
            [(api.request, "POST", "/api/v1/namespaces", {"metadata": {"name": ns}}) for ns in TEST_NAMESPACES]
        )
        # a test may enforce a Pod Security level on a namespace: the next one starts without it
        unlabel = {"metadata": {"labels": {f"pod-security.kubernetes.io/{m}": None for m in POD_SECURITY_MODES}}}
        api.parallel(
            [
                (api.request, "PATCH", f"/api/v1/namespaces/{ns}", unlabel, "application/merge-patch+json")
                for ns in TEST_NAMESPACES
            ]
        )
        kserve_namespaced = [f"{KSERVE}/kernelcachecaptures", f"{KSERVE}/kernelcaches"]
        in_use = sorted({(n.split("/")[0], path) for path in kserve_namespaced for n in api.names(path)})
        calls: list[tuple[Any, ...]] = [
            (api.delete_collection, path.replace(KSERVE, f"{KSERVE}/namespaces/{ns}")) for ns, path in in_use
        ]
        calls += [(api.delete_collection, f"{KSERVE}/{r}") for r in ("kernelcachenodes", "kernelcachenodegroups")]
        calls += [
            (api.delete_collection, f"/apis/rbac.authorization.k8s.io/v1/{r}", None, owned)
            for r in ("clusterroles", "clusterrolebindings")
        ]
        calls.append(
            (api.delete_collection, "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations", None, owned)
        )
        for ns in TEST_NAMESPACES:
            calls += [(api.delete_collection, path.format(ns=ns)) for path in NAMESPACED_RESET]
            calls.append((api.delete_collection, f"/api/v1/namespaces/{ns}/pods", 0))
            calls.append((api.delete_collection, f"/api/v1/namespaces/{ns}/secrets", None, owned))
        calls.append((api.delete_collection, "/api/v1/nodes"))
        api.parallel(calls)
        self.wait_for("a clean cluster", lambda: self._clean(api), timeout=90)

    def _clean(self, api: AdminAPI) -> bool:
        paths = ["/api/v1/nodes", f"{KSERVE}/kernelcachenodegroups", f"{KSERVE}/kernelcachenodes"]
        paths += [f"{KSERVE}/kernelcaches", f"{KSERVE}/kernelcachecaptures"]
        for ns in TEST_NAMESPACES:
            paths += [p.format(ns=ns) for p in NAMESPACED_CLEAN]
        left = [n for names in api.parallel([(api.names, p) for p in paths]) for n in names]
        if [n for n in left if not n.endswith("/kube-root-ca.crt")] == []:
            return True
        # a controller may have made a pod again after the first delete: delete what is left at once
        api.parallel([(api.delete_collection, f"/api/v1/namespaces/{ns}/pods", 0) for ns in TEST_NAMESPACES])
        return False

    def admin_api(self) -> AdminAPI:
        return AdminAPI(self.dir, self.state["ports"]["apiserver"])
