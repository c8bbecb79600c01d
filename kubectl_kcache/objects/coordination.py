"""coordination.k8s.io: the Lease, as leader election writes it (the fields a candidate judges)."""

from __future__ import annotations

from .base import Int, Str, _Obj, _Object, _Of


class LeaseSpec(_Obj, frozen=True):
    holder_identity: Str = ""
    lease_duration_seconds: Int = 0
    acquire_time: Str = ""
    renew_time: Str = ""
    lease_transitions: Int = 0


_EMPTY = LeaseSpec()


class Lease(_Object, frozen=True, dict=True):
    spec: LeaseSpec | None = None

    holder = _Of[str]("spec", _EMPTY, "holder_identity")
    acquired = _Of[str]("spec", _EMPTY, "acquire_time")

    @property
    def duration(self) -> float:
        return float((self.spec or _EMPTY).lease_duration_seconds or 15)

    @property
    def record(self) -> tuple[str, str, int]:
        """What a renewal changes: a candidate counts a Lease held while this changes within its duration."""
        spec = self.spec or _EMPTY
        return (spec.holder_identity, spec.renew_time, spec.lease_transitions)
