"""The refusal policy: a refused write is marked once, held back, probed by one request on a growing
interval up to 5 minutes, at once when access changes, and said once when it starts and when it ends."""

from __future__ import annotations

from kubectl_kcache.reconcile.refusals import EVERY_WRITE, FENCE, PROBE_MAX, RBAC, Key, Refusals

CREATE = Key("create", "kernelcachenodes")
OBJECT = Key("create", "kernelcachenodes", "gpu-1")
KEYS = (CREATE, OBJECT, EVERY_WRITE)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def policy() -> tuple[Refusals, Clock, list[str]]:
    clock, lines = Clock(), []
    return Refusals(lines.append, clock), clock, lines


def test_a_refused_verb_is_held_back_and_said_once_whatever_was_in_flight():
    refusals, clock, lines = policy()
    assert refusals.may_send(KEYS)
    for _ in range(8):  # the writer threads' requests in flight when the first refusal came back
        refusals.refused(CREATE, RBAC, "forbidden: cannot create")
    assert len(lines) == 1 and "create kernelcachenodes refused (rbac)" in lines[0]
    assert not refusals.may_send(KEYS)
    assert refusals.may_send((Key("delete", "kernelcachenodes"), EVERY_WRITE))  # other verbs go on
    [mark] = refusals.current()
    assert mark.refused == 8 and mark.interval == 5.0  # stragglers do not stretch the interval


def test_one_probe_on_a_doubling_interval_up_to_five_minutes():
    refusals, clock, _ = policy()
    refusals.refused(CREATE, RBAC, "no")
    sent = []
    for _ in range(3600):  # an hour, a pass every second, 200 creates a pass
        clock.now += 1
        refusals.unanswered()
        for _ in range(200):
            if refusals.may_send(KEYS):
                sent.append(clock.now)
                refusals.refused(CREATE, RBAC, "no")
    gaps = [b - a for a, b in zip(sent, sent[1:], strict=False)]
    assert gaps[:6] == [10, 20, 40, 80, 160, 300] and set(gaps[6:]) == {PROBE_MAX}
    assert sum(1 for t in sent if t <= 1060) <= 3  # the first minute: a handful, not 12,000


def test_access_changing_makes_the_probe_due_at_once_and_an_admitted_probe_ends_the_mark():
    refusals, clock, lines = policy()
    refusals.refused(CREATE, RBAC, "no")
    clock.now += 1
    assert not refusals.may_send(KEYS)
    assert refusals.access_changed()
    assert refusals.may_send(KEYS)
    assert not refusals.may_send(KEYS)  # one probe at a time
    assert refusals.admitted(KEYS)
    assert refusals.may_send(KEYS) and refusals.current() == [] and refusals.next_due() is None
    assert "admitted again after 1 refused request(s)" in lines[-1]
    assert not Refusals().access_changed()  # nothing to re-probe: no pass is asked for


def test_an_object_refusal_holds_back_that_object_only_and_the_fence_every_write():
    refusals, clock, _ = policy()
    refusals.refused(OBJECT, "admission", "denied request")
    assert not refusals.may_send(KEYS)
    assert refusals.may_send((CREATE, Key("create", "kernelcachenodes", "gpu-2"), EVERY_WRITE))
    refusals.refused(EVERY_WRITE, FENCE, "misconfigured")
    assert not refusals.may_send((Key("patch", "daemonsets"), Key("patch", "daemonsets", "kserve/a"), EVERY_WRITE))
    assert refusals.next_due() == clock.now + 5.0
    assert [r.split(" refused")[0] for r in refusals.reasons()] == ["create kernelcachenodes gpu-1", "every write"]
    assert refusals.series == {("create", "kernelcachenodes", "admission"), ("*", "*", FENCE)}


def test_a_probe_never_sent_is_due_again_on_the_next_pass():
    refusals, clock, _ = policy()
    refusals.refused(CREATE, RBAC, "no")
    clock.now += 6
    assert refusals.may_send(KEYS)  # handed out, then the pass stopped before sending it
    assert not refusals.may_send(KEYS)
    refusals.unanswered()
    assert refusals.may_send(KEYS)
