"""The `kernelcache` key of ConfigMap kserve/inferenceservice-config, parsed and validated as KServe does
(pkg/apis/serving/v1beta1/configmap.go: KernelCacheConfig and its validation)."""

from __future__ import annotations

import json
import re
from collections.abc import Container, Iterable, Mapping
from typing import Any

import msgspec

from ..objects import ConfigMap
from . import constants as c
from .gostrings import trim_space
from .security import FAILURE_POLICY_NOT_REJECT

DEFAULT_JOB_NAMESPACE = "kserve-kernelcache-jobs"
DEFAULT_MCV_IMAGE = "kserve/kserve-mcv:latest-minimal"
DEFAULT_PREFETCH_IMAGE = "registry.access.redhat.com/ubi9/ubi-minimal:latest"
DEFAULT_READINESS_TIMEOUT = 600
DEFAULT_JOB_TTL = 600
DEFAULT_RECONCILE_INTERVAL = 300
DEFAULT_TOKEN_TTL = 600
MIN_TOKEN_TTL = 600
MAX_TOKEN_TTL = 3600
AUTH_NONE = "none"
AUTH_SA_TOKEN = "serviceAccountToken"
SECURITY_NONE = "none"
SECURITY_CERT = "cert"


class ConfigInvalid(ValueError):
    """The kernelcache configuration does not parse or does not validate; KServe then fails the feature."""


class RoleRef(msgspec.Struct, frozen=True):
    kind: str = ""
    name: str = ""


class RegistryAuth(msgspec.Struct, frozen=True):
    type: str = AUTH_NONE
    token_ttl_seconds: int = 0
    push_role_ref: RoleRef | None = None
    pull_role_ref: RoleRef | None = None


class Registry(msgspec.Struct, frozen=True):
    endpoint: str = ""
    insecure: bool = False
    ca_configmap: tuple[str, str] | None = None
    auth: RegistryAuth = RegistryAuth()


class ArtifactSecurity(msgspec.Struct, frozen=True):
    mode: str = SECURITY_NONE
    failure_policy: str = "reject"
    signing_profile_ref: str = ""
    trust_bundle: str = ""
    trust_bundle_key: str = "ca.crt"
    subject_regexp: str = ""


class KernelCacheConfig(msgspec.Struct, frozen=True):
    enabled: bool = False
    default_sidecar_injection: bool = True
    default_mount_type: str = c.MOUNT_TYPE_OCI
    default_node_group: str = ""
    job_namespace: str = DEFAULT_JOB_NAMESPACE
    mcv_image: str = DEFAULT_MCV_IMAGE
    mcv_capture_readiness_timeout_seconds: int = DEFAULT_READINESS_TIMEOUT
    prefetch_image: str = DEFAULT_PREFETCH_IMAGE
    job_ttl_seconds_after_finished: int = DEFAULT_JOB_TTL
    reconcile_interval_seconds: int = DEFAULT_RECONCILE_INTERVAL
    abandoned_capture_policy: str = "retain"
    registry: Registry = Registry()
    artifact_security: ArtifactSecurity = ArtifactSecurity()
    unknown_keys: tuple[str, ...] = ()


KNOWN_KEYS = {
    "enabled",
    "defaultSidecarInjection",
    "defaultMountType",
    "defaultNodeGroup",
    "jobNamespace",
    "mcvImage",
    "mcvCaptureReadinessTimeoutSeconds",
    "prefetchImage",
    "jobTTLSecondsAfterFinished",
    "reconcileIntervalSeconds",
    "abandonedCapturePolicy",
    "registry",
    "artifactSecurity",
}


def _get(m: Mapping[str, Any], key: str) -> Any:
    """Go encoding/json field lookup: exact or case-insensitive key match, the last duplicate wins."""
    found: Any = None
    for k, v in m.items():
        if isinstance(k, str) and k.lower() == key.lower():
            found = v
    return found


_GO_TYPES = {bool: "bool", str: "string", int: "int64"}


def _typed(m: Mapping[str, Any], key: str, kind: type, struct: str, default: Any) -> Any:
    """A JSON value of the Go field's type; null leaves the default, another type is Go's unmarshal error."""
    value = _get(m, key)
    if value is None:
        return default
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if kind is int and isinstance(value, float) and not isinstance(value, _GoFloat) and value.is_integer():
        value, ok = int(value), True
    if not ok:
        got = {bool: "bool", str: "string", int: "number", float: "number", list: "array", dict: "object"}.get(
            type(value), "value"
        )
        raise ConfigInvalid(
            f"unable to unmarshal kernelcache: json: cannot unmarshal {got} into Go struct field "
            f"{struct}.{key} of type {_GO_TYPES[kind]}"
        )
    return value


def _obj(m: Mapping[str, Any], key: str, struct: str) -> Mapping[str, Any]:
    value = _get(m, key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigInvalid(
            f"unable to unmarshal kernelcache: json: cannot unmarshal "
            f"{'array' if isinstance(value, list) else 'value'} into Go struct field "
            f"{struct}.{key} of type object"
        )
    return value


def endpoint_valid(endpoint: str) -> bool:
    """KServe's check for serviceAccountToken: a registry host with optional port (no "/", space, tab, newline)."""
    return bool(endpoint) and not any(ch in endpoint for ch in "/ \t\n")


def _role_ref(auth: Mapping[str, Any], key: str) -> RoleRef | None:
    raw = _obj(auth, key, "RegistryAuth")
    if _get(auth, key) is None:
        return None
    return RoleRef(kind=_typed(raw, "kind", str, "RoleRef", ""), name=_typed(raw, "name", str, "RoleRef", ""))


def _validate_role_ref(ref: RoleRef | None, key: str) -> None:
    if ref is None or not ref.kind or not ref.name:
        raise ConfigInvalid(f"registry.auth.{key} requires kind and name")
    if ref.kind not in ("Role", "ClusterRole"):
        raise ConfigInvalid(f"registry.auth.{key}.kind must be Role or ClusterRole")


class _GoFloat(float):
    """A JSON number written with a fraction or exponent: Go will not decode it into an integer field."""


def _reject_constant(name: str) -> Any:
    raise ConfigInvalid(
        f"unable to unmarshal kernelcache: invalid character '{name[0]}' looking for beginning of value"
    )


def _re2_incompatible(pattern: str) -> str:
    """What Go's RE2 rejects that Python's re accepts: look-around and back-references."""
    for token in ("(?=", "(?!", "(?<=", "(?<!"):
        if token in pattern:
            return f"invalid or unsupported Perl syntax: `{token}`"
    if re.search(r"\\[1-9]", pattern):
        return "invalid escape sequence (back-references are not supported)"
    if "(?P=" in pattern:
        return "invalid named capture back-reference"
    return ""


def parse_config(text: str) -> KernelCacheConfig:
    """NewKernelCacheConfig: decode everything over the defaults (a type error anywhere wins, as in Go),
    then validate in KServe's order with its wording."""
    try:
        raw = json.loads(text, parse_float=_GoFloat, parse_constant=_reject_constant)
    except (json.JSONDecodeError, RecursionError) as exc:
        detail = exc.msg if isinstance(exc, json.JSONDecodeError) else "nesting too deep"
        raise ConfigInvalid(f"unable to unmarshal kernelcache: {detail}") from None
    except ValueError as exc:
        raise ConfigInvalid(f"unable to unmarshal kernelcache: {exc}") from None
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ConfigInvalid(
            "unable to unmarshal kernelcache: json: cannot unmarshal "
            f"{'array' if isinstance(raw, list) else 'value'} into Go value of type "
            "v1beta1.KernelCacheConfig"
        )
    # ---- decode (Go's json.Unmarshal: all fields, before any validation) ----
    s = "KernelCacheConfig"
    enabled = _typed(raw, "enabled", bool, s, False)
    sidecar = _typed(raw, "defaultSidecarInjection", bool, s, True)
    mount = _typed(raw, "defaultMountType", str, s, "") or c.MOUNT_TYPE_OCI
    default_group = _typed(raw, "defaultNodeGroup", str, s, "")
    job_ns = _typed(raw, "jobNamespace", str, s, "") or DEFAULT_JOB_NAMESPACE
    mcv_image = _typed(raw, "mcvImage", str, s, "") or DEFAULT_MCV_IMAGE
    timeout = _typed(raw, "mcvCaptureReadinessTimeoutSeconds", int, s, DEFAULT_READINESS_TIMEOUT)
    prefetch = _typed(raw, "prefetchImage", str, s, "") or DEFAULT_PREFETCH_IMAGE
    job_ttl = _typed(raw, "jobTTLSecondsAfterFinished", int, s, DEFAULT_JOB_TTL)
    interval = _typed(raw, "reconcileIntervalSeconds", int, s, DEFAULT_RECONCILE_INTERVAL)
    policy = _typed(raw, "abandonedCapturePolicy", str, s, "") or "retain"
    reg = _obj(raw, "registry", s)
    auth_raw = _obj(reg, "auth", "RegistryConfig")
    ca_raw = _obj(reg, "caConfigMapRef", "RegistryConfig")
    sec = _obj(raw, "artifactSecurity", s)
    cert = _obj(sec, "cert", "ArtifactSecurityConfig")
    auth_type = _typed(auth_raw, "type", str, "RegistryAuth", "") or AUTH_NONE
    endpoint = _typed(reg, "endpoint", str, "RegistryConfig", "")
    insecure = _typed(reg, "insecure", bool, "RegistryConfig", False)
    ttl = _typed(auth_raw, "tokenTTLSeconds", int, "RegistryAuth", 0)
    push = _role_ref(auth_raw, "pushRoleRef")
    pull = _role_ref(auth_raw, "pullRoleRef")
    ca_ref = None
    if _get(reg, "caConfigMapRef") is not None:
        ca_ref = (_typed(ca_raw, "name", str, "ConfigMapKeyRef", ""), _typed(ca_raw, "key", str, "ConfigMapKeyRef", ""))
    mode = _typed(sec, "mode", str, "ArtifactSecurityConfig", "") or SECURITY_NONE
    failure = _typed(sec, "failurePolicy", str, "ArtifactSecurityConfig", "") or "reject"
    subject = _typed(cert, "subjectRegexp", str, "CertConfig", "")
    security = ArtifactSecurity(
        mode=mode,
        failure_policy=failure,
        signing_profile_ref=_typed(cert, "signingProfileRef", str, "CertConfig", ""),
        trust_bundle=_typed(cert, "trustBundle", str, "CertConfig", ""),
        trust_bundle_key=_typed(cert, "trustBundleKey", str, "CertConfig", "") or "ca.crt",
        subject_regexp=subject,
    )

    # ---- validate, in KServe's order ----
    if policy not in ("retain", "delete"):
        raise ConfigInvalid("kernelcache.abandonedCapturePolicy must be retain or delete")
    if mount != c.MOUNT_TYPE_OCI:
        raise ConfigInvalid(f'kernelcache.defaultMountType must be oci, got "{mount}"')
    if timeout <= 0:
        raise ConfigInvalid("kernelcache.mcvCaptureReadinessTimeoutSeconds must be greater than zero")
    if auth_type == AUTH_SA_TOKEN:
        if ttl == 0:
            ttl = DEFAULT_TOKEN_TTL
        if not endpoint_valid(endpoint):
            raise ConfigInvalid("registry.endpoint must be a registry host with optional port")
        _validate_role_ref(push, "pushRoleRef")
        _validate_role_ref(pull, "pullRoleRef")
        if not MIN_TOKEN_TTL <= ttl <= MAX_TOKEN_TTL:
            raise ConfigInvalid(f"registry.auth.tokenTTLSeconds must be between {MIN_TOKEN_TTL} and {MAX_TOKEN_TTL}")
    elif auth_type != AUTH_NONE:
        raise ConfigInvalid(f'unsupported registry.auth.type "{auth_type}"')
    registry = Registry(
        endpoint=endpoint, insecure=insecure, ca_configmap=ca_ref, auth=RegistryAuth(auth_type, ttl, push, pull)
    )
    if mode not in (SECURITY_NONE, "disabled", SECURITY_CERT):
        raise ConfigInvalid(f'invalid kernelcache.artifactSecurity: unknown security mode: "{mode}"')
    if mode == SECURITY_CERT and subject:
        problem = _re2_incompatible(subject)
        if not problem:
            try:
                re.compile(subject)
            except re.error as exc:
                problem = str(exc)
        if problem:
            raise ConfigInvalid(
                f"invalid kernelcache.artifactSecurity: cert.subjectRegexp is not a valid regexp: {problem}"
            )
    if failure not in ("reject", "warn"):
        raise ConfigInvalid(f'invalid kernelcache.artifactSecurity: invalid failurePolicy: "{failure}"')
    if failure != "reject":
        raise ConfigInvalid(FAILURE_POLICY_NOT_REJECT)
    if mode == SECURITY_CERT and not trim_space(security.signing_profile_ref):
        raise ConfigInvalid("kernelcache.artifactSecurity.cert.signingProfileRef is required for cert mode")

    known = {k.lower() for k in KNOWN_KEYS}
    return KernelCacheConfig(
        enabled=enabled,
        default_sidecar_injection=sidecar,
        default_mount_type=mount,
        default_node_group=default_group,
        job_namespace=job_ns,
        mcv_image=mcv_image,
        mcv_capture_readiness_timeout_seconds=timeout,
        prefetch_image=prefetch,
        job_ttl_seconds_after_finished=job_ttl,
        reconcile_interval_seconds=interval,
        abandoned_capture_policy=policy,
        registry=registry,
        artifact_security=security,
        unknown_keys=tuple(sorted(str(k) for k in raw if str(k).lower() not in known)),
    )


class ConfigState(msgspec.Struct, frozen=True):
    """The outcome of reading the config: present or not, valid or not (with KServe's error)."""

    present: bool
    config: KernelCacheConfig | None
    error: str = ""

    @property
    def enabled(self) -> bool:
        return self.config is not None and self.config.enabled


def read_config(configmap: ConfigMap | None) -> ConfigState:
    if configmap is None:
        return ConfigState(False, None, f"ConfigMap {c.KSERVE_NAMESPACE}/{c.CONFIGMAP_NAME} not found")
    text = configmap.data.get(c.CONFIG_KEY)
    if text is None:
        # KServe treats a missing key as the zero config: the feature is disabled.
        return ConfigState(True, KernelCacheConfig(), "")
    try:
        return ConfigState(True, parse_config(text))
    except ConfigInvalid as exc:
        return ConfigState(True, None, str(exc))


# ---- defaultNodeGroup ------------------------------------------------------------------------------

DEFAULT_GROUP_LABEL = "label"  # names a node label, not a group
DEFAULT_GROUP_MISSING = "missing"  # no group of that name
DEFAULT_GROUP_UNTRIMMED = "untrimmed"  # found only after trimming: KernelCaches without nodeGroupRef fail
_LABEL_ONLY = "=/:"  # in label keys and selectors, never in a group (DNS subdomain) name


class DefaultGroupProblem(msgspec.Struct, frozen=True):
    """What is wrong with `defaultNodeGroup` (KServe trims it for capture selection, not for KernelCaches)."""

    kind: str
    value: str
    name: str  # trimmed
    groups_with_label: tuple[str, ...] = ()  # for a `key=value` default: the groups selecting on that label

    @property
    def never_a_group_name(self) -> bool:
        """It holds a character no KernelCacheNodeGroup name has: wrong whatever groups exist."""
        return any(ch in self.name for ch in _LABEL_ONLY)


def default_group_problem(
    value: str,
    group_names: Iterable[str],
    label_keys: Container[str],
    selectors: Mapping[str, Mapping[str, str]] | None = None,
) -> DefaultGroupProblem | None:
    """None when `defaultNodeGroup` is unset or names an existing group exactly.

    It looks like a label when no group has that name and it holds `=`, `/` or `:` (never in a group name)
    or equals a label key some node carries. `selectors` (group -> nodeSelector) lets a `key=value` default
    point at the groups that select on that label.
    """
    name = trim_space(value)
    if not name:
        return None
    names = set(group_names)
    if value in names:
        return None
    if name in names:
        return DefaultGroupProblem(DEFAULT_GROUP_UNTRIMMED, value, name)
    if any(ch in name for ch in _LABEL_ONLY) or name in label_keys:
        key, eq, wanted = name.partition("=")
        with_label: tuple[str, ...] = ()
        if eq and selectors:
            with_label = tuple(sorted(g for g, sel in selectors.items() if sel.get(key.strip()) == wanted.strip()))
        return DefaultGroupProblem(DEFAULT_GROUP_LABEL, value, name, with_label)
    return DefaultGroupProblem(DEFAULT_GROUP_MISSING, value, name)
