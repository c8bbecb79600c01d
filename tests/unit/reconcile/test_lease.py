"""The proof of holding the Lease and the candidate's rule, on an injected clock."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubectl_kcache.kube import write_guard
from kubectl_kcache.kube.write_guard import WriteRefused
from kubectl_kcache.reconcile.lease import LostLeadership, Observation, Tenure


class Clock:
    def __init__(self, now: float = 1000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_no_proof_before_the_first_renewal():
    tenure = Tenure(10.0, Clock())
    assert not tenure.holds()
    with pytest.raises(LostLeadership, match="not renewed within the renew deadline"):
        tenure.check()


def test_the_proof_runs_from_when_the_renewal_was_sent_not_when_it_succeeded():
    clock = Clock(100.0)
    tenure = Tenure(10.0, clock)
    sent = clock()
    clock.now = 104.0  # a slow request: it succeeds four seconds later
    tenure.renewed(sent)
    assert tenure.remaining() == pytest.approx(6.0)
    clock.now = 109.999
    tenure.check()
    clock.now = 110.0
    assert not tenure.holds()
    with pytest.raises(LostLeadership, match=r"10s since the last renewal was sent, 10.0s ago"):
        tenure.check()


def test_a_late_answer_to_an_older_renewal_never_shortens_the_proof():
    clock = Clock(100.0)
    tenure = Tenure(10.0, clock)
    tenure.renewed(104.0)
    tenure.renewed(101.0)
    assert tenure.remaining() == pytest.approx(14.0)


def test_revoked_is_for_good():
    clock = Clock(100.0)
    tenure = Tenure(10.0, clock, "lease kserve/x")
    tenure.renewed(100.0)
    tenure.revoke()
    tenure.renewed(101.0)
    assert not tenure.holds()
    with pytest.raises(LostLeadership, match="no longer the holder of lease kserve/x"):
        tenure.check()


def test_a_refused_write_is_a_write_guard_refusal():
    assert issubclass(LostLeadership, WriteRefused)


def test_a_candidate_waits_a_full_duration_without_change():
    seen = Observation()
    assert not seen.expired(0.0, 6.0)  # nothing seen yet
    seen.see({"holderIdentity": "a", "renewTime": "t1"}, 10.0)
    assert not seen.expired(15.9, 6.0)
    seen.see({"holderIdentity": "a", "renewTime": "t1"}, 15.0)  # the same record again: still since 10.0
    assert seen.expired(16.0, 6.0)
    seen.see({"holderIdentity": "a", "renewTime": "t2"}, 16.5)  # renewed: wait again from now
    assert not seen.expired(22.0, 6.0)
    assert seen.expired(22.5, 6.0)


@given(sent=st.floats(0, 1e6), delay=st.floats(0, 30), duration=st.integers(2, 120), fraction=st.floats(0.1, 0.95))
def test_the_holder_stops_before_any_candidate_may_take_over(sent, delay, duration, fraction):
    """With clocks at the same rate: the holder's proof ends (lease duration - renew deadline) before a
    candidate that saw the renewal (at or after it was sent) may take the Lease."""
    renew_deadline = duration * fraction
    holder = Clock(sent)
    tenure = Tenure(renew_deadline, holder)
    tenure.renewed(sent)
    seen = Observation()
    seen.see({"renewTime": "t"}, sent + delay)
    takeover = sent + delay + duration + 1e-6  # the earliest a candidate may take the Lease
    assert seen.expired(takeover, duration) and not seen.expired(takeover - 0.01, duration)
    holder.now = takeover - (duration - renew_deadline) * 0.999  # just before the margin runs out
    assert not tenure.holds()


def test_the_tenure_is_the_write_guard_with_its_deadline_on_the_guards_clock():
    tenure = Tenure(10.0)
    assert tenure.clock is write_guard.now
    tenure.renewed(write_guard.now())
    tenure()  # holds: no exception
    assert write_guard.now() < tenure.deadline() <= write_guard.now() + 10.0
