from .conftest import TOUCH_H100, drop, load, one, run_check, with_reads


def test_healthy_agent_passes(base):
    result, findings = run_check("agent", base)
    assert (result.status, findings) == ("pass", [])


def test_missing_daemonset():
    result, findings = run_check("agent", load(without=("agent",)))
    assert result.status == "fail"
    f = one(findings)
    assert (f.severity, f.object.kind, f.object.namespace, f.object.name) == (
        "error",
        "DaemonSet",
        "kserve",
        "kserve-kernelcachenode-agent",
    )
    assert "get KernelCacheNode agent DaemonSet" in f.message
    assert "before it creates or deletes any KernelCacheNode" in f.message


def test_stale_placement():
    result, findings = run_check("agent", load("agent", "stale-placement.yaml"))
    assert result.status == "fail"
    placement = next(f for f in findings if "placement differs" in f.message)
    assert placement.severity == "error"
    assert "the pod template has a nodeSelector (KServe removes it)" in placement.message
    assert "the required node affinity differs from the node groups' selectors" in placement.message
    assert placement.hint == TOUCH_H100
    assert (
        "KServe's node pass runs on KernelCacheNodeGroup, Node and inferenceservice-config changes, not on "
        "KernelCacheNode or DaemonSet changes"
    ) in placement.message
    assert "kubectl kcache reconcile --once" in placement.message
    assert any("nvidia.com/gpu.product In NVIDIA-L40S" in e for e in placement.evidence)
    rollout = next(f for f in findings if "rollout" in f.message)
    assert rollout.severity == "error" and "desiredNumberScheduled 0" in rollout.message
    # pods of the old placement are still listed on the nodes, so no per-node finding here


def test_crash_looping_and_image_pull_failing_pods():
    result, findings = run_check("agent", load("agent", "broken-pods.yaml"))
    assert result.status == "fail"
    crash = one(findings, name="kserve-kernelcachenode-agent-9pq7d")
    assert (crash.severity, crash.object.kind, crash.object.namespace, crash.group) == (
        "error",
        "Pod",
        "kserve",
        "h100",
    )
    assert "on gpu-2 is not running: container manager is waiting: CrashLoopBackOff (last exit code 1" in crash.message
    assert "last exit code 1, Error: NODE_NAME environment variable is required" in crash.message
    # the kubelet's back-off message names the container and pod again: kept as evidence, not in the message
    assert "back-off" not in crash.message
    assert (
        "container manager: CrashLoopBackOff: back-off 5m0s restarting failed container=manager "
        "pod=kserve-kernelcachenode-agent-9pq7d_kserve(4c1d)"
    ) in crash.evidence
    assert crash.hint == "kubectl -n kserve logs kserve-kernelcachenode-agent-9pq7d -c manager -p"
    pull = one(findings, name="kserve-kernelcachenode-agent-zz81c")
    assert "ImagePullBackOff: Back-off pulling image" in pull.message and "429 Too Many Requests" in pull.message
    assert pull.hint == "kubectl -n kserve describe pod kserve-kernelcachenode-agent-zz81c"
    rollout = next(f for f in findings if f.object.kind == "DaemonSet")
    assert rollout.severity == "warning" and "1/3 pods ready" in rollout.message


def test_running_but_not_ready():
    _, findings = run_check("agent", load("agent", "not-ready-pod.yaml"))
    f = one(findings)
    assert "on gpu-1 is Running but not Ready" in f.message


def test_no_pod_explained_by_untolerated_taint(base):
    snap = drop(load("agent", "tainted-node.yaml"), "Pod", "kserve-kernelcachenode-agent-4xk2m", "kserve")
    f = one(run_check("agent", snap)[1])
    assert (f.object.kind, f.object.name) == ("Node", "gpu-1")
    assert "no agent pod on gpu-1: taint dedicated=inference:NoExecute is not tolerated" in f.message


def test_no_pod_without_visible_cause(base):
    f = one(run_check("agent", drop(base, "Pod", "kserve-kernelcachenode-agent-4xk2m", "kserve"))[1])
    assert "no agent pod on gpu-1: the DaemonSet controller has not created one" in f.message
    assert f.hint == "kubectl -n kserve describe daemonset kserve-kernelcachenode-agent"


def test_pods_forbidden_leaves_that_part_out(base):
    snap = with_reads(
        drop(base, "Pod", "kserve-kernelcachenode-agent-4xk2m", "kserve"), ("pods", "kserve", "forbidden")
    )
    result, findings = run_check("agent", snap)
    assert (result.status, findings) == ("pass", [])
    assert result.reason == "partial: forbidden: list pods in kserve (agent pods per member node not checked)"


FORBIDDEN = (
    'list KernelCacheNodeGroups: kernelcachenodegroups.serving.kserve.io is forbidden: User "system:serviceaccount:'
    'kserve:kserve-kernelcachenode-agent" cannot list resource "kernelcachenodegroups" in API group '
    '"serving.kserve.io" at the cluster scope'
)


def test_agent_warning_events_name_the_node_and_the_note():
    """controller.go@2058eebf, image_validation.go@2058eebf: the agent records a Warning event (reporting controller
    kernelcachenode-agent, namespace default) on its KernelCacheNode when its pass fails."""
    result, findings = run_check("agent", load("agent", "pass-warnings.yaml"))
    assert result.status == "fail"
    assert [(f.object.name, f.code) for f in findings] == [  # newest first; the other controller's is left out
        ("gpu-1", "pass-failing"),
        ("gpu-2", "pass-failing"),
        ("gpu-1", "pass-failing"),
    ]
    first, second, older = findings
    assert (first.severity, first.object.kind) == ("warning", "KernelCacheNode")
    assert first.message == (
        "the node agent reports ReconcileError on KernelCacheNode gpu-1 (5 times, last at 2026-11-29T09:58:00Z): "
        f'discover KernelCaches for node "gpu-1": {FORBIDDEN}: its status pass on the node fails, so the node\'s '
        "cache entries are not updated (events expire; the agent's log says whether it still fails)"
    )
    assert first.hint == "kubectl -n kserve logs kserve-kernelcachenode-agent-4xk2m -c manager"
    # one message on many nodes folds into one row
    assert (
        first.cause
        == second.cause
        == f'node agents report ReconcileError: discover KernelCaches for node "<node>": {FORBIDDEN}'
    )
    assert first.lister == (
        "kubectl -n default get events --field-selector involvedObject.kind=KernelCacheNode,type=Warning"
    )
    assert older.message.startswith("the node agent reports ImageValidationError on KernelCacheNode gpu-1 (1 time,")


def test_agent_warning_events_not_read():
    snap = with_reads(load("agent", "pass-warnings.yaml"), ("events", "default", "forbidden"))
    result, findings = run_check("agent", snap)
    assert (result.status, findings) == ("pass", [])
    assert "the agents' Warning events not checked" in result.reason
