"""The exit-3 access hint: the identity the API server names, a binding for it (a service account as one),
quoted commands, and no role suggested for an anonymous request."""

from kubectl_kcache.report.access_hint import Refused, access_hint


def refused(user: str, resource: str = "nodes", namespace: str | None = None) -> Refused:
    return Refused(
        "list",
        resource,
        namespace,
        f'{resource} is forbidden: User "{user}" cannot list resource "{resource}" in API group ""',
    )


def test_a_user_gets_the_role_a_binding_and_a_check():
    hint = access_hint([refused("alice"), refused("alice", "kernelcaches", "team a")], impersonated=True)
    assert hint.startswith('User "alice" was refused 2 reads; bind the read-only role: kubectl apply -f https://')
    assert (
        "&& kubectl create clusterrolebinding kcache-doctor-alice --clusterrole=kubectl-kcache-doctor "
        "--user=alice;" in hint
    )
    assert hint.endswith("check a read: kubectl auth can-i list nodes --as=alice")
    quoted = access_hint([refused("alice", "kernelcaches", "team a")], impersonated=False)
    # a namespace Kubernetes would not accept is never put into a command: the hint says why instead
    assert 'check a read: no command suggested: namespace name "team a" is not one Kubernetes accepts' in quoted
    hint = access_hint([refused("alice", "kernelcaches", "team-a")], impersonated=False)
    assert hint.endswith("kubectl auth can-i list kernelcaches.serving.kserve.io -n team-a")


def test_a_service_account_is_bound_as_one():
    hint = access_hint([refused("system:serviceaccount:ops:doctor")], impersonated=False)
    assert (
        "kubectl create clusterrolebinding kcache-doctor-doctor --clusterrole=kubectl-kcache-doctor "
        "--serviceaccount=ops:doctor" in hint
    )


def test_anonymous_requests_are_told_to_send_credentials_not_to_bind_a_role():
    hint = access_hint([refused("system:anonymous")], impersonated=False)
    assert "no credentials it accepts were sent" in hint and "clusterrolebinding" not in hint
    assert access_hint([], impersonated=False) == ""
