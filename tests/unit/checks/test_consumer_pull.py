from .conftest import load, run_check


def test_not_applicable_without_consumers(base):
    result, _ = run_check("consumer-pull", base)
    assert (result.status, result.reason) == ("not-applicable", "no serving pod has a KernelCache mounted")


def test_pull_failures_and_linker_errors():
    result, findings = run_check("consumer-pull", load("consumer-pull", "failures.yaml"))
    assert result.status == "fail"
    by_pod = {f.object.name: f for f in findings}
    assert set(by_pod) == {"qwen-predictor-669889f77f-aaaaa", "qwen-predictor-669889f77f-ccccc"}
    pull = by_pod["qwen-predictor-669889f77f-aaaaa"]
    assert pull.severity == "error"
    assert pull.message.startswith(
        "pod team-a/qwen-predictor-669889f77f-aaaaa cannot pull the KernelCache artifact "
        "registry.example.com:5000/team-a/kernel-cache-qwen@sha256:2e1901c1"
    )
    assert "container kernel-cache-linker is waiting: ImagePullBackOff: Back-off pulling image" in pull.message
    assert (
        "The webhook adds no pull credentials: the node's and the pod's own must reach the registry (no "
        "imagePullSecrets)." in pull.message
    )
    assert pull.hint == "kubectl -n team-a describe pod qwen-predictor-669889f77f-aaaaa"
    linker = by_pod["qwen-predictor-669889f77f-ccccc"]
    assert "the artifact does not contain the KernelCache's ociPath" in linker.message
    assert linker.hint == "kubectl -n team-a logs qwen-predictor-669889f77f-ccccc -c kernel-cache-linker"
