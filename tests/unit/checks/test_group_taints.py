from .conftest import load, one, run_check

L40S_HINT = (
    "kubectl patch kernelcachenodegroup l40s --type=json -p "
    """'[{"op":"add","path":"/spec/tolerations/-","value":"""
    """{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}}]'"""
)


def test_tolerated_taints_pass(base):
    result, findings = run_check("group-taints", base)
    assert (result.status, findings) == ("pass", [])


def test_untolerated_taints_block_jobs_and_agent():
    result, findings = run_check("group-taints", load("group-taints", "extra-taint.yaml"))
    assert result.status == "fail"
    job = one(findings, name="l40s-1")
    assert (job.severity, job.object.kind, job.group) == ("error", "Node", "l40s")
    assert (
        "preparation Jobs cannot run on l40s-1: node group l40s does not tolerate taint nvidia.com/gpu:NoSchedule"
        in job.message
    )
    assert job.hint == L40S_HINT

    gpu2 = [f for f in findings if f.object.name == "gpu-2"]
    assert len(gpu2) == 2
    jobs = next(f for f in gpu2 if f.message.startswith("preparation Jobs"))
    assert (jobs.severity, jobs.group) == ("error", "h100")
    assert "cannot run on gpu-2: node group h100 does not tolerate taint dedicated=inference:NoExecute" in jobs.message
    agent = next(f for f in gpu2 if "no agent can run" in f.message)
    assert agent.severity == "error"
    assert (
        "no agent can run on gpu-2: no node group tolerates taint dedicated=inference:NoExecute, so neither does "
        "the agent"
    ) in agent.message
    assert '"value":{"key":"dedicated","operator":"Exists","effect":"NoExecute"}' in agent.hint


def test_stale_daemonset_tolerations_point_to_reconcile():
    _, findings = run_check("group-taints", load("group-taints", "stale-daemonset.yaml"))
    f = one(findings)
    assert f.object.name == "l40s-1"
    assert (
        "no agent can run on l40s-1: the node groups tolerate taint workload=gpu:NoSchedule, but KServe's "
        "controller has not updated the agent's DaemonSet"
    ) in f.message
    assert f.hint == "kubectl kcache reconcile --once"


def test_prefer_no_schedule_and_timed_no_execute_are_warnings():
    result, findings = run_check("group-taints", load("group-taints", "soft.yaml"))
    assert result.status == "fail"
    assert {f.severity for f in findings} == {"warning"}
    soft = next(f for f in findings if "spot=true:PreferNoSchedule" in f.message)
    assert soft.group == "h100"
    assert '"key":"spot","operator":"Exists","effect":"PreferNoSchedule"' in soft.hint
    job = next(f for f in findings if f.message.startswith("preparation Job pods are evicted"))
    assert "evicted from gpu-1 after 300s: taint maintenance=planned:NoExecute" in job.message
    agent = next(f for f in findings if f.message.startswith("the agent is evicted"))
    assert "after 300s" in agent.message


def test_not_applicable_without_member_nodes():
    result, _ = run_check("group-taints", load(without=("groups",)))
    assert result.status == "not-applicable"


def test_a_toleration_kubernetes_rejects_is_an_error_naming_group_and_field():
    """Issue 13.6: the CRD accepts it; the agent DaemonSet patch and the group's Jobs are then refused."""
    result, findings = run_check("group-taints", load("group-taints", "invalid-toleration.yaml"))
    assert result.status == "fail"
    f = next(x for x in findings if x.object.kind == "KernelCacheNodeGroup")
    assert (f.severity, f.object.name, f.group) == ("error", "h100", "h100")
    assert f.message.startswith(
        'KernelCacheNodeGroup "h100" spec.tolerations[0].operator: Unsupported value: "In": '
        'supported values: "Equal", "Exists": Kubernetes rejects this toleration'
    )
    assert f.evidence == (
        'the API server would answer: DaemonSet.apps "kserve-kernelcachenode-agent" is invalid: '
        'spec.template.spec.tolerations[0].operator: Unsupported value: "In": supported values: '
        '"Equal", "Exists"',
    )
    assert f.hint == "kubectl edit kernelcachenodegroup h100"


def test_the_plan_refuses_with_the_doctors_words():
    from kubectl_kcache.reconcile.planner import plan

    snapshot = load("group-taints", "invalid-toleration.yaml")
    _, findings = run_check("group-taints", snapshot)
    doctor_words = next(x for x in findings if x.object.kind == "KernelCacheNodeGroup").message.split(": Kubernetes")[0]
    p = plan(snapshot)
    assert not [x for x in p.actions if x.kind in ("DaemonSet", "KernelCacheNode")]
    assert any(n.startswith(doctor_words + ": Kubernetes rejects these tolerations") for n in p.notes), p.notes
