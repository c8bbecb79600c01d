"""The install around the Kernel Cache: webhook configurations (admissionregistration.k8s.io),
EndpointSlices (discovery.k8s.io), Roles and RoleBindings (rbac.authorization.k8s.io) and CRDs
(apiextensions.k8s.io)."""

from __future__ import annotations

from typing import Any

from msgspec import field
from msgspec.structs import force_setattr

from .. import apivalidation as av
from .base import Bool, Condition, Items, LabelSelector, Str, _Obj, _Object, _Of, _refuse, find_condition


class _ServiceRef(_Obj, frozen=True):
    namespace: Str = ""
    name: Str = ""
    path: Str = ""


class _ClientConfig(_Obj, frozen=True):
    service: _ServiceRef | None = None
    ca_bundle: Any | None = None
    url: Str = ""


_SERVICE = _ServiceRef()
_CLIENT_CONFIG = _ClientConfig()


class WebhookRule(_Obj, frozen=True):
    operations: Items[str] = ()
    api_groups: Items[str] = ()
    api_versions: Items[str] = ()
    resources: Items[str] = ()
    scope: Str = ""


class _MatchCondition(_Obj, frozen=True):
    name: Str = ""
    expression: Str = ""


class WebhookEntry(_Obj, frozen=True):
    name: Str = ""
    failure_policy: Str = "Fail"
    client_config: _ClientConfig | None = None
    namespace_selector: LabelSelector | None = None
    object_selector: LabelSelector | None = None
    conditions: Items[_MatchCondition] = field(default=(), name="matchConditions")
    reinvocation_policy: Str = ""
    timeout_seconds: int | None = None
    rules: Items[WebhookRule] = ()

    url = _Of[str]("client_config", _CLIENT_CONFIG, "url")

    @property
    def match_conditions(self) -> tuple[tuple[str, str], ...]:
        """(name, CEL expression) of each matchCondition."""
        return tuple((m.name, m.expression) for m in self.conditions)

    def __post_init__(self) -> None:
        _Obj.__post_init__(self)
        if not self.failure_policy:
            force_setattr(self, "failure_policy", "Fail")
        elif self.failure_policy not in av.FAILURE_POLICIES:
            _refuse("failurePolicy", av.not_supported(self.failure_policy, av.FAILURE_POLICIES))

    @property
    def _service(self) -> _ServiceRef:
        return (self.client_config.service if self.client_config else None) or _SERVICE

    @property
    def service_namespace(self) -> str:
        return self._service.namespace

    @property
    def service_name(self) -> str:
        return self._service.name

    @property
    def path(self) -> str:
        return self._service.path

    @property
    def has_ca_bundle(self) -> bool:
        return bool(self.client_config and self.client_config.ca_bundle)


class WebhookConfiguration(_Object, frozen=True, dict=True):
    """A Mutating- or ValidatingWebhookConfiguration (the fields the checks read are the same)."""

    webhooks: Items[WebhookEntry] = ()


class _EndpointConditions(_Obj, frozen=True):
    ready: bool | None = None


class _Endpoint(_Obj, frozen=True):
    conditions: _EndpointConditions | None = None


class EndpointSlice(_Object, frozen=True, dict=True):
    endpoints: list[_Endpoint] | None = None
    ready_endpoints: int = field(default=0, name="#readyEndpoints")

    def __post_init__(self) -> None:
        _Obj.__post_init__(self)
        ready = sum(1 for e in self.endpoints or () if e.conditions is None or e.conditions.ready is not False)
        force_setattr(self, "ready_endpoints", ready)
        force_setattr(self, "endpoints", None)


class _RoleRef(_Obj, frozen=True):
    kind: Str = ""
    name: Str = ""


class _Subject(_Obj, frozen=True):
    kind: Str = ""
    namespace: Str = ""
    name: Str = ""


_ROLE_REF = _RoleRef()


class RoleBinding(_Object, frozen=True, dict=True):
    role_ref: _RoleRef | None = None
    subject_list: Items[_Subject] = field(default=(), name="subjects")

    role_kind = _Of[str]("role_ref", _ROLE_REF, "kind")
    role_name = _Of[str]("role_ref", _ROLE_REF, "name")

    @property
    def subjects(self) -> tuple[tuple[str, str, str], ...]:
        return tuple((s.kind, s.namespace, s.name) for s in self.subject_list)


class Role(_Object, frozen=True, dict=True):
    """A Role: only its metadata is read (KServe's controller rewrites the rules of the Roles it manages)."""


class _CrdNames(_Obj, frozen=True):
    kind: Str = ""


class _CrdVersion(_Obj, frozen=True):
    name: Str = ""
    served: Bool = True


class _CrdSpec(_Obj, frozen=True):
    group: Str = ""
    names: _CrdNames | None = None
    versions: Items[_CrdVersion] = ()


class _CrdStatus(_Obj, frozen=True):
    conditions: Items[Condition] = ()
    accepted_names: Any | None = None
    stored_versions: Any | None = None


_CRD_SPEC = _CrdSpec()


class Crd(_Object, frozen=True, dict=True):
    spec: _CrdSpec | None = None
    status: _CrdStatus | None = None

    group = _Of[str]("spec", _CRD_SPEC, "group")

    @property
    def kind(self) -> str:
        return self.spec.names.kind if self.spec and self.spec.names else ""

    @property
    def served_versions(self) -> tuple[str, ...]:
        return tuple(v.name for v in (self.spec.versions if self.spec else ()) if v.served)

    @property
    def established(self) -> bool:
        """Established, or no status at all (an object written by hand, not read from the API)."""
        if self.status is None or self.status == _CrdStatus():
            return True
        cond = find_condition(self.status.conditions, "Established")
        return bool(cond and cond.status == "True")
