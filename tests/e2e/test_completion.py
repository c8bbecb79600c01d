"""Shell completion against the real API server: namespaces, InferenceService pods and captures, as kubectl
asks for them (`kubectl_complete-kcache <words>`, candidates then cobra's directive)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests import builders as b

pytestmark = pytest.mark.e2e

COMPLETE = (
    "import sys; from kubectl_kcache.__main__ import complete; sys.argv[0] = 'kubectl_complete-kcache'; complete()"
)


def complete(cluster, *words: str) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", COMPLETE, *words], capture_output=True, text=True, env=cluster.env, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_namespaces_pods_and_captures_are_completed_live(cluster):
    pod = b.pod("model-predictor-1", "team-a", labels={"serving.kserve.io/inferenceservice": "model"})
    other = b.pod("unrelated", "team-a")
    for p in (pod, other):
        del p["status"]
    cluster.apply([pod, other, b.capture("model-kcc-1", "team-a"), b.capture("model-kcc-2", "team-b")])
    assert complete(cluster, "doctor", "-n", "team-") == ["team-a", "team-b", ":4"]
    assert complete(cluster, "why-group", "-n", "team-a", "") == ["model-predictor-1", ":4"]
    assert complete(cluster, "why-not-cached", "-n", "team-a", "mo") == ["model-predictor-1", ":4"]
    assert complete(cluster, "why-group", "-n", "team-a", "--capture", "") == ["model-kcc-1", ":4"]
    assert complete(cluster, "doctor", "--from-file", "") == [":0"]


def test_kernelcaches_are_completed_live_for_why_not_ready(cluster):
    cluster.apply(
        [b.kernel_cache("llama", "team-a"), b.kernel_cache("lora", "team-a"), b.kernel_cache("qwen", "team-b")]
    )
    assert complete(cluster, "why-not-ready", "-n", "team-a", "l") == ["llama", "lora", ":4"]
    assert complete(cluster, "why-not-ready", "-n", "team-b", "") == ["qwen", ":4"]
