"""NewKernelCacheConfig (kserve-notes.md §4): the golden table of configmap_test.go with exact error texts,
the validation order, Go encoding/json's decoding rules (case-insensitive keys, null keeps defaults, wrong
types), and read_config."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubectl_kcache import objects as o
from kubectl_kcache.kernelcache.config import (
    ConfigInvalid,
    KernelCacheConfig,
    RoleRef,
    parse_config,
    read_config,
)
from tests import builders as b


def parse(value: dict[str, Any] | str) -> KernelCacheConfig:
    return parse_config(value if isinstance(value, str) else json.dumps(value))


def error_of(value: dict[str, Any] | str) -> str:
    with pytest.raises(ConfigInvalid) as exc:
        parse(value)
    return str(exc.value)


def assert_defaults(cfg: KernelCacheConfig) -> None:
    assert cfg.enabled is False
    assert cfg.default_sidecar_injection is True
    assert cfg.default_mount_type == "oci"
    assert cfg.default_node_group == ""
    assert cfg.job_namespace == "kserve-kernelcache-jobs"
    assert cfg.mcv_image == "kserve/kserve-mcv:latest-minimal"
    assert cfg.prefetch_image == "registry.access.redhat.com/ubi9/ubi-minimal:latest"
    assert cfg.mcv_capture_readiness_timeout_seconds == 600
    assert cfg.abandoned_capture_policy == "retain"
    assert cfg.registry.endpoint == ""
    assert cfg.registry.ca_configmap is None
    assert cfg.registry.auth.type == "none"
    assert cfg.registry.auth.token_ttl_seconds == 0
    assert cfg.registry.auth.push_role_ref is None
    assert cfg.registry.auth.pull_role_ref is None
    assert cfg.job_ttl_seconds_after_finished == 600
    assert cfg.reconcile_interval_seconds == 300
    assert cfg.artifact_security.mode == "none"
    assert cfg.artifact_security.failure_policy == "reject"


# ---- golden: configmap_test.go -----------------------------------------------------------------------


def test_key_absent_is_all_defaults():
    state = read_config(o.ConfigMap.from_dict(b.config_map(None)))
    assert state.present
    assert state.error == ""
    assert not state.enabled
    assert_defaults(state.config)


def test_empty_object_is_all_defaults():
    assert_defaults(parse({}))
    assert parse({}) == KernelCacheConfig()


def test_service_account_token_registry():
    cfg = parse(
        {
            "registry": {
                "endpoint": "registry.example:5000",
                "caConfigMapRef": {"name": "custom-ca", "key": "bundle.pem"},
                "auth": {
                    "type": "serviceAccountToken",
                    "pushRoleRef": {"kind": "ClusterRole", "name": "registry-pusher"},
                    "pullRoleRef": {"kind": "ClusterRole", "name": "registry-puller"},
                },
            }
        }
    )
    assert cfg.registry.endpoint == "registry.example:5000"
    assert cfg.registry.ca_configmap == ("custom-ca", "bundle.pem")
    assert cfg.registry.auth.type == "serviceAccountToken"
    assert cfg.registry.auth.token_ttl_seconds == 600  # defaulted
    assert cfg.registry.auth.push_role_ref == RoleRef("ClusterRole", "registry-pusher")
    assert cfg.registry.auth.pull_role_ref == RoleRef("ClusterRole", "registry-puller")


ROLES = {"pushRoleRef": {"kind": "Role", "name": "pusher"}, "pullRoleRef": {"kind": "Role", "name": "puller"}}


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"registry": {"auth": {"type": "unsupported"}}}, 'unsupported registry.auth.type "unsupported"'),
        (
            {"registry": {"auth": {"type": "serviceAccountToken"}}},
            "registry.endpoint must be a registry host with optional port",
        ),
        (
            {"registry": {"endpoint": "registry.example:5000", "auth": {"type": "serviceAccountToken"}}},
            "registry.auth.pushRoleRef requires kind and name",
        ),
        (
            {
                "registry": {
                    "endpoint": "registry.example:5000",
                    "auth": {"type": "serviceAccountToken", "tokenTTLSeconds": 300, **ROLES},
                }
            },
            "registry.auth.tokenTTLSeconds must be between 600 and 3600",
        ),
        (
            {"mcvCaptureReadinessTimeoutSeconds": 0},
            "kernelcache.mcvCaptureReadinessTimeoutSeconds must be greater than zero",
        ),
        ({"defaultMountType": "pvc"}, 'kernelcache.defaultMountType must be oci, got "pvc"'),
        ({"abandonedCapturePolicy": "invalid"}, "kernelcache.abandonedCapturePolicy must be retain or delete"),
    ],
)
def test_golden_errors(config, message):
    assert error_of(config) == message


def test_not_json():
    assert "unable to unmarshal kernelcache" in error_of("not-json")
    state = read_config(o.ConfigMap.from_dict(b.config_map("not-json")))
    assert state.present
    assert state.config is None
    assert not state.enabled
    assert "unable to unmarshal kernelcache" in state.error


def test_readiness_timeout_900():
    assert parse({"mcvCaptureReadinessTimeoutSeconds": 900}).mcv_capture_readiness_timeout_seconds == 900


def test_all_values_as_given():
    cfg = parse(
        {
            "enabled": True,
            "defaultSidecarInjection": False,
            "defaultMountType": "oci",
            "defaultNodeGroup": "gpu-nodes",
            "jobNamespace": "kernel-cache-jobs",
            "mcvImage": "example/mcv:test",
            "mcvCaptureReadinessTimeoutSeconds": 900,
            "prefetchImage": "example/prefetch:test",
            "jobTTLSecondsAfterFinished": 600,
            "reconcileIntervalSeconds": 300,
            "abandonedCapturePolicy": "delete",
        }
    )
    assert cfg.enabled is True
    assert cfg.default_sidecar_injection is False
    assert cfg.default_mount_type == "oci"
    assert cfg.default_node_group == "gpu-nodes"
    assert cfg.job_namespace == "kernel-cache-jobs"
    assert cfg.mcv_image == "example/mcv:test"
    assert cfg.mcv_capture_readiness_timeout_seconds == 900
    assert cfg.prefetch_image == "example/prefetch:test"
    assert cfg.job_ttl_seconds_after_finished == 600
    assert cfg.reconcile_interval_seconds == 300
    assert cfg.abandoned_capture_policy == "delete"


def test_empty_and_null_restore_defaults():
    cfg = parse(
        {
            "defaultMountType": "",
            "jobNamespace": "",
            "jobTTLSecondsAfterFinished": None,
            "reconcileIntervalSeconds": None,
        }
    )
    assert cfg.default_mount_type == "oci"
    assert cfg.job_namespace == "kserve-kernelcache-jobs"
    assert cfg.job_ttl_seconds_after_finished == 600
    assert cfg.reconcile_interval_seconds == 300


def test_load_enabled_with_job_namespace():
    state = read_config(o.ConfigMap.from_dict(b.config_map({"enabled": True, "jobNamespace": "kernelcache-jobs"})))
    assert state.enabled
    assert state.config.job_namespace == "kernelcache-jobs"


def test_no_configmap():
    state = read_config(None)
    assert not state.present
    assert state.config is None
    assert "inferenceservice-config" in state.error


# ---- the rest of §4.2 --------------------------------------------------------------------------------


def test_zero_ttl_and_interval_are_kept():
    cfg = parse({"jobTTLSecondsAfterFinished": 0, "reconcileIntervalSeconds": 0})
    assert cfg.job_ttl_seconds_after_finished == 0
    assert cfg.reconcile_interval_seconds == 0


def test_negative_readiness_timeout_is_an_error():
    assert error_of({"mcvCaptureReadinessTimeoutSeconds": -5}) == (
        "kernelcache.mcvCaptureReadinessTimeoutSeconds must be greater than zero"
    )


def test_empty_images_and_policy_restore_defaults():
    cfg = parse({"mcvImage": "", "prefetchImage": "", "abandonedCapturePolicy": ""})
    assert cfg.mcv_image == "kserve/kserve-mcv:latest-minimal"
    assert cfg.prefetch_image == "registry.access.redhat.com/ubi9/ubi-minimal:latest"
    assert cfg.abandoned_capture_policy == "retain"


def test_validation_order():
    # abandonedCapturePolicy, then defaultMountType, then the timeout, then registry, then artifactSecurity
    assert "abandonedCapturePolicy" in error_of(
        {"abandonedCapturePolicy": "x", "defaultMountType": "pvc", "mcvCaptureReadinessTimeoutSeconds": 0}
    )
    assert "defaultMountType" in error_of({"defaultMountType": "pvc", "mcvCaptureReadinessTimeoutSeconds": 0})
    assert "mcvCaptureReadinessTimeoutSeconds" in error_of(
        {"mcvCaptureReadinessTimeoutSeconds": 0, "registry": {"auth": {"type": "x"}}}
    )
    assert "registry.auth.type" in error_of({"registry": {"auth": {"type": "x"}}, "artifactSecurity": {"mode": "y"}})


SAT = {"type": "serviceAccountToken", **ROLES}


@pytest.mark.parametrize(
    ("registry", "message"),
    [
        (
            {"endpoint": "https://registry.example", "auth": SAT},
            "registry.endpoint must be a registry host with optional port",
        ),
        (
            {"endpoint": "registry.example/path", "auth": SAT},
            "registry.endpoint must be a registry host with optional port",
        ),
        ({"endpoint": "registry example", "auth": SAT}, "registry.endpoint must be a registry host with optional port"),
        (
            {"endpoint": "registry\texample", "auth": SAT},
            "registry.endpoint must be a registry host with optional port",
        ),
        ({"endpoint": "registry\n", "auth": SAT}, "registry.endpoint must be a registry host with optional port"),
        (
            {"endpoint": "r:5000", "auth": {"type": "serviceAccountToken", "pushRoleRef": ROLES["pushRoleRef"]}},
            "registry.auth.pullRoleRef requires kind and name",
        ),
        (
            {"endpoint": "r:5000", "auth": {**SAT, "pushRoleRef": {"kind": "Role"}}},
            "registry.auth.pushRoleRef requires kind and name",
        ),
        (
            {"endpoint": "r:5000", "auth": {**SAT, "pushRoleRef": {"kind": "User", "name": "x"}}},
            "registry.auth.pushRoleRef.kind must be Role or ClusterRole",
        ),
        (
            {"endpoint": "r:5000", "auth": {**SAT, "pullRoleRef": {"kind": "ServiceAccount", "name": "x"}}},
            "registry.auth.pullRoleRef.kind must be Role or ClusterRole",
        ),
        (
            {"endpoint": "r:5000", "auth": {**SAT, "tokenTTLSeconds": 3601}},
            "registry.auth.tokenTTLSeconds must be between 600 and 3600",
        ),
        ({"endpoint": "r:5000", "auth": {"type": "openshift"}}, 'unsupported registry.auth.type "openshift"'),
    ],
)
def test_registry_validation(registry, message):
    assert error_of({"registry": registry}) == message


@pytest.mark.parametrize("ttl", [600, 3600, 1800])
def test_token_ttl_bounds_are_inclusive(ttl):
    cfg = parse({"registry": {"endpoint": "r:5000", "auth": {**SAT, "tokenTTLSeconds": ttl}}})
    assert cfg.registry.auth.token_ttl_seconds == ttl


def test_endpoint_is_not_checked_without_service_account_token():
    assert parse({"registry": {"endpoint": "https://reg/x"}}).registry.endpoint == "https://reg/x"
    assert parse({"registry": {"endpoint": "https://reg/x", "auth": {"type": "none"}}}).registry.auth.type == "none"
    assert parse({"registry": {"auth": {"type": ""}}}).registry.auth.type == "none"


@pytest.mark.parametrize(
    ("security", "message"),
    [
        ({"mode": "weird"}, 'invalid kernelcache.artifactSecurity: unknown security mode: "weird"'),
        ({"failurePolicy": "warn"}, "kernelcache.artifactSecurity.failurePolicy must be reject"),
        ({"failurePolicy": "bogus"}, 'invalid kernelcache.artifactSecurity: invalid failurePolicy: "bogus"'),
        ({"mode": "cert"}, "kernelcache.artifactSecurity.cert.signingProfileRef is required for cert mode"),
        (
            {"mode": "cert", "cert": {"signingProfileRef": " \t\u00a0"}},
            "kernelcache.artifactSecurity.cert.signingProfileRef is required for cert mode",
        ),
        (
            {"mode": "weird", "failurePolicy": "bogus"},
            'invalid kernelcache.artifactSecurity: unknown security mode: "weird"',
        ),
    ],
)
def test_artifact_security_validation(security, message):
    assert error_of({"artifactSecurity": security}) == message


def test_invalid_subject_regexp():
    msg = error_of({"artifactSecurity": {"mode": "cert", "cert": {"signingProfileRef": "p", "subjectRegexp": "("}}})
    assert msg.startswith("invalid kernelcache.artifactSecurity: cert.subjectRegexp is not a valid regexp: ")


def test_subject_regexp_is_checked_only_in_cert_mode():
    assert (
        parse({"artifactSecurity": {"mode": "none", "cert": {"subjectRegexp": "("}}}).artifact_security.mode == "none"
    )


def test_cert_mode_needs_only_the_signing_profile_at_parse_time():
    cfg = parse({"artifactSecurity": {"mode": "cert", "cert": {"signingProfileRef": "kernelcache-signer"}}})
    assert cfg.artifact_security.mode == "cert"
    assert cfg.artifact_security.signing_profile_ref == "kernelcache-signer"
    assert cfg.artifact_security.trust_bundle_key == "ca.crt"


@pytest.mark.parametrize("mode", ["", "none", "disabled"])
def test_modes_that_disable_security(mode):
    cfg = parse({"artifactSecurity": {"mode": mode, "failurePolicy": ""}})
    assert cfg.artifact_security.mode == (mode or "none")  # not rewritten to "disabled"
    assert cfg.artifact_security.failure_policy == "reject"


def test_shipped_example():
    cfg = parse(
        {
            "enabled": True,
            "artifactSecurity": {
                "mode": "cert",
                "failurePolicy": "reject",
                "cert": {
                    "signingProfileRef": "kernelcache-signer",
                    "trustBundle": "kserve/kernelcache-root-ca",
                    "subjectRegexp": "spiffe://kserve/kernelcache-signer",
                },
            },
        }
    )
    assert cfg.artifact_security.trust_bundle == "kserve/kernelcache-root-ca"
    assert cfg.artifact_security.subject_regexp == "spiffe://kserve/kernelcache-signer"


# ---- Go encoding/json --------------------------------------------------------------------------------


def test_keys_are_case_insensitive():
    cfg = parse({"Enabled": True, "JOBNAMESPACE": "jobs", "defaultnodegroup": "gpu"})
    assert cfg.enabled is True
    assert cfg.job_namespace == "jobs"
    assert cfg.default_node_group == "gpu"
    assert cfg.unknown_keys == ()


def test_nested_keys_are_case_insensitive():
    assert error_of({"Registry": {"Auth": {"Type": "serviceAccountToken"}}}) == (
        "registry.endpoint must be a registry host with optional port"
    )
    cfg = parse(
        {
            "REGISTRY": {
                "ENDPOINT": "r:5000",
                "auth": {
                    "TYPE": "serviceAccountToken",
                    "PushRoleRef": {"Kind": "Role", "Name": "p"},
                    "pullroleref": {"kind": "Role", "name": "q"},
                },
            }
        }
    )
    assert cfg.registry.auth.push_role_ref == RoleRef("Role", "p")


def test_duplicate_keys_last_wins():
    assert parse_config('{"enabled": true, "enabled": false}').enabled is False
    assert parse_config('{"enabled": false, "Enabled": true}').enabled is True


@pytest.mark.parametrize(
    "key",
    [
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
    ],
)
def test_null_keeps_the_default(key):
    assert parse({key: None}) == KernelCacheConfig()


def test_null_document_is_all_defaults():
    assert parse_config("null") == KernelCacheConfig()


def test_wrong_type_is_gos_unmarshal_error():
    assert error_of({"enabled": "yes"}) == (
        "unable to unmarshal kernelcache: json: cannot unmarshal string into Go struct field "
        "KernelCacheConfig.enabled of type bool"
    )


@pytest.mark.parametrize(
    "config",
    [
        {"enabled": 1},
        {"defaultSidecarInjection": "false"},
        {"jobNamespace": 5},
        {"defaultNodeGroup": ["gpu"]},
        {"mcvCaptureReadinessTimeoutSeconds": "900"},
        {"mcvCaptureReadinessTimeoutSeconds": 1.5},
        {"mcvCaptureReadinessTimeoutSeconds": True},
        {"jobTTLSecondsAfterFinished": {}},
        {"registry": []},
        {"registry": "r:5000"},
        {"registry": {"endpoint": True}},
        {"registry": {"auth": "none"}},
        {"registry": {"auth": {"tokenTTLSeconds": "600"}}},
        {"registry": {"auth": {"pushRoleRef": "Role/x"}}},
        {"artifactSecurity": {"cert": "x"}},
        {"artifactSecurity": {"mode": 1}},
    ],
)
def test_wrong_types_error(config):
    assert error_of(config).startswith("unable to unmarshal kernelcache: ")


@pytest.mark.parametrize("text", ["[]", '"enabled"', "true", "1", "{", '{"enabled": tru}', ""])
def test_not_an_object_errors(text):
    assert "unable to unmarshal kernelcache" in error_of(text)


@pytest.mark.parametrize("text", ['{"mcvCaptureReadinessTimeoutSeconds": 900.0}', '{"reconcileIntervalSeconds": 3e2}'])
def test_integral_float_for_int_field_is_an_error(text):
    with pytest.raises(ConfigInvalid, match="unable to unmarshal kernelcache"):
        parse_config(text)


def test_unknown_keys_are_ignored_and_reported():
    cfg = parse({"enabled": True, "storage": {"pvc": True}, "agentImage": "x"})
    assert cfg.enabled
    assert cfg.unknown_keys == ("agentImage", "storage")


def test_deeply_nested_value_is_an_error_not_a_crash():
    text = '{"x": ' + "[" * 100000 + "]" * 100000 + "}"
    assert "unable to unmarshal kernelcache" in error_of(text)


@pytest.mark.parametrize("regexp", ["(?<=spiffe://)kserve", "^(a)\\1$", "x(?!y)"])
def test_subject_regexp_must_be_valid_re2(regexp):
    msg = error_of({"artifactSecurity": {"mode": "cert", "cert": {"signingProfileRef": "p", "subjectRegexp": regexp}}})
    assert msg.startswith("invalid kernelcache.artifactSecurity: cert.subjectRegexp is not a valid regexp: ")


@pytest.mark.parametrize(
    "config",
    [
        {"abandonedCapturePolicy": "x", "registry": {"endpoint": 5}},
        {"defaultMountType": "pvc", "artifactSecurity": {"mode": ["cert"]}},
        {"registry": {"auth": {"type": "bogus"}}, "artifactSecurity": {"failurePolicy": 1}},
    ],
)
def test_type_errors_come_before_validation_errors(config):
    assert error_of(config).startswith("unable to unmarshal kernelcache: ")
