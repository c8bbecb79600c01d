"""ConfigMap `kserve/inferenceservice-config`, key `kernelcache`: present, parses and validates exactly as
KServe's `NewKernelCacheConfig` does (the error text is KServe's), and enables the feature.

Any parse or validation error is fatal for the whole feature in KServe: KernelCaches go to
`Error/ConfigError`, the node reconciler and the agents stop, and the pod webhook fails the creation of
every kernel cache-enabled pod. When the feature is disabled this check says so once (info, or warning
when Kernel Cache objects exist and so probably expect it on) and the checks that depend on the feature
report `not-applicable` instead of repeating it.

Also checked: `defaultNodeGroup` names an existing KernelCacheNodeGroup (it is a group name, not a node
label; KServe trims it for capture selection but not for KernelCaches without `nodeGroupRef`);
`jobNamespace` exists (KServe never creates it: KernelCaches fail with `StorageError`); settings that
pass KServe's parser but fail later (cert mode without a trust bundle or subject); unknown keys (info:
KServe ignores them, often a typo). The format of `registry.endpoint` is checked by `registry-pull`.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from .. import objects as o
from ..kernelcache import constants as c
from ..kernelcache.config import (
    DEFAULT_GROUP_LABEL,
    DEFAULT_GROUP_MISSING,
    DEFAULT_GROUP_UNTRIMMED,
    KNOWN_KEYS,
    SECURITY_CERT,
    default_group_problem,
)
from ..kernelcache.gostrings import trim_space
from ..kernelcache.membership import label_index_of
from ..kernelcache.security import config_error_notes, same_config_error
from ..snapshot import plan as readplan
from ..snapshot.model import ClusterSnapshot
from ..suggest import Namespace, kubectl
from .common import EDIT_CONFIG, config_ref, facts, observed, read_ok
from .model import CheckRead, Finding, ObjectRef, finding_of
from .registry import check

ID = "config"
finding = finding_of(ID)


@check(
    ID,
    "kernelcache configuration present, valid and enabled",
    "error",
    order=20,
    codes={
        "configmap-missing": ("error", f"ConfigMap {c.KSERVE_NAMESPACE}/{c.CONFIGMAP_NAME} does not exist"),
        "invalid": ("error", f"key {c.CONFIG_KEY} does not parse or validate as KServe reads it"),
        "disabled": ("warning", "the feature is disabled (info when no Kernel Cache object exists)"),
        "cert-incomplete": ("warning", "artifactSecurity cert mode without its trust bundle or subject"),
        "unknown-keys": ("info", "keys KServe ignores (often a typo)"),
        "default-group-label": ("warning", "defaultNodeGroup names a node label, not a group"),
        "default-group-missing": ("warning", "defaultNodeGroup names a group that does not exist"),
        "default-group-whitespace": ("warning", "defaultNodeGroup has surrounding white space"),
        "job-namespace-missing": ("error", "jobNamespace does not exist"),
    },
    reads=(
        CheckRead(readplan.CONFIGMAP),
        CheckRead(readplan.NAMESPACES, optional=True, note="jobNamespace existence not checked"),
        CheckRead(readplan.NODE_GROUPS, optional=True, note="defaultNodeGroup not checked"),
        CheckRead(readplan.NODES, optional=True, note="defaultNodeGroup not compared with node labels"),
        CheckRead(readplan.KERNEL_CACHES, optional=True, note="the KernelCaches of a disabled feature not counted"),
        CheckRead(readplan.CAPTURES, optional=True, note="the captures of a disabled feature not counted"),
    ),
)
def run(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    state = facts(snapshot).feature.state
    assert state is not None  # the runner skips this check when the ConfigMap could not be read
    ref = config_ref()
    if not state.present:
        yield finding(
            "error",
            ref,
            f"ConfigMap {c.KSERVE_NAMESPACE}/{c.CONFIGMAP_NAME} was not found: KServe's controllers fail "
            f'to load the kernel cache configuration ("{c.CONFIGMAP_NAME} was not found") and the '
            "feature does not work",
            hint=f"kubectl -n {c.KSERVE_NAMESPACE} get configmap {c.CONFIGMAP_NAME}",
            code="configmap-missing",
        )
        return
    if state.config is None:
        showing = [
            kc
            for kc in snapshot.kernel_caches
            if (ready := o.find_condition(kc.conditions, "Ready"))
            and ready.reason == "ConfigError"
            and same_config_error(ready.message, state.error)
        ]
        shown = f"; {len(showing)} of {len(snapshot.kernel_caches)} KernelCaches show it already" if showing else ""
        yield finding(
            "error",
            ref,
            f"key {c.CONFIG_KEY} of ConfigMap {c.KSERVE_NAMESPACE}/{c.CONFIGMAP_NAME} is invalid: "
            f"{state.error}; KernelCaches go to Error/ConfigError, KServe's node reconciler and agents "
            f"stop, and creating pods of kernel cache-enabled InferenceServices fails{shown}",
            hint=EDIT_CONFIG,
            evidence=(f"KServe: {state.error}", *config_error_notes(state.error)),
            code="invalid",
        )
        return
    cfg = state.config
    if not cfg.enabled:
        has_objects = bool(snapshot.node_groups or snapshot.kernel_caches or snapshot.captures)
        cm = snapshot.configmap(c.KSERVE_NAMESPACE, c.CONFIGMAP_NAME)
        absent = cm is not None and c.CONFIG_KEY not in cm.data
        why = f"key {c.CONFIG_KEY} is absent" if absent else "kernelcache.enabled is false"
        counts = (
            f"{len(snapshot.node_groups)} node groups, {len(snapshot.kernel_caches)} KernelCaches, "
            f"{len(snapshot.captures)} captures exist"
        )
        yield finding(
            "warning" if has_objects else "info",
            ref,
            f"the kernel cache feature is disabled ({why}): KServe creates no KernelCacheNode, prepares "
            "no cache and injects none; KernelCaches stay Pending/FeatureDisabled. The checks that "
            "depend on the feature are not applicable",
            hint=f'{EDIT_CONFIG}  # set "enabled": true in key {c.CONFIG_KEY}',
            evidence=(counts,) if has_objects else (),
            code="disabled",
        )
    else:
        yield from _default_group(snapshot, cfg.default_node_group)
        yield from _job_namespace(snapshot, cfg.job_namespace)
    sec = cfg.artifact_security
    if cfg.enabled and sec.mode == SECURITY_CERT:
        missing = [
            k
            for k, v in (("cert.trustBundle", sec.trust_bundle), ("cert.subjectRegexp", sec.subject_regexp))
            if not trim_space(v)
        ]
        if missing:
            yield finding(
                "warning",
                ref,
                f"artifactSecurity.mode is cert but {' and '.join(missing)} "
                f"{'is' if len(missing) == 1 else 'are'} empty: KServe accepts the configuration, but "
                "its verifier needs them, so KernelCaches fail with Error/VerificationFailed",
                hint=EDIT_CONFIG,
                code="cert-incomplete",
            )
    yield from _unknown_keys(cfg.unknown_keys)


def _unknown_keys(keys: tuple[str, ...]) -> Iterator[Finding]:
    if not keys:
        return
    known = sorted(KNOWN_KEYS)
    notes = []
    for key in keys:
        close = difflib.get_close_matches(key, known, n=1)
        notes.append(f"{key} (did you mean {close[0]}?)" if close else key)
    yield finding(
        "info",
        config_ref(),
        f"unknown keys in {c.CONFIG_KEY}, ignored by KServe: {', '.join(notes)}",
        hint=EDIT_CONFIG,
        evidence=tuple(f"unknown key: {k}" for k in keys),
        code="unknown-keys",
    )


def _default_group(snapshot: ClusterSnapshot, value: str) -> Iterator[Finding]:
    if not trim_space(value):
        return
    groups_known = observed(snapshot, readplan.NODE_GROUPS, bool(snapshot.node_groups))
    label_keys = label_index_of(snapshot).keys if read_ok(snapshot, readplan.NODES) else set()
    problem = default_group_problem(
        value, snapshot.group_by_name, label_keys, {g.name: g.node_selector for g in snapshot.node_groups}
    )
    if problem is None:
        return
    ref = config_ref()
    hint = f"kubectl get {c.PLURAL_NODE_GROUPS}"
    if problem.kind == DEFAULT_GROUP_LABEL and (groups_known or problem.never_a_group_name):
        suggestion = (
            f"; the groups selecting on that label: {', '.join(problem.groups_with_label)}"
            if problem.groups_with_label
            else ""
        )
        yield finding(
            "warning",
            ref,
            f"defaultNodeGroup {value!r} looks like a node label; it must name a KernelCacheNodeGroup "
            f"(captures that fall back to it get {c.REASON_INVALID_DEFAULT}, KernelCaches without "
            f"nodeGroupRef get NodeGroupNotFound){suggestion}",
            hint=hint,
            code="default-group-label",
        )
    elif problem.kind == DEFAULT_GROUP_MISSING and groups_known:
        yield finding(
            "warning",
            ref,
            f"defaultNodeGroup: {c.MSG_GROUP_NOT_FOUND.format(name=problem.name)}; captures that fall "
            f"back to it get {c.REASON_INVALID_DEFAULT} and KernelCaches without nodeGroupRef get "
            "NodeGroupNotFound",
            hint=hint,
            evidence=(f"groups: {', '.join(sorted(snapshot.group_by_name)) or 'none'}",),
            code="default-group-missing",
        )
    elif problem.kind == DEFAULT_GROUP_UNTRIMMED:
        yield finding(
            "warning",
            ref,
            f"defaultNodeGroup {value!r} has surrounding white space: capture selection trims it (and "
            f"finds group {problem.name}), but KernelCaches without nodeGroupRef use it untrimmed and "
            'fail with NodeGroupNotFound ("referenced KernelCacheNodeGroup was not found")',
            hint=EDIT_CONFIG,
            code="default-group-whitespace",
        )


def _job_namespace(snapshot: ClusterSnapshot, namespace: str) -> Iterator[Finding]:
    if not observed(snapshot, readplan.NAMESPACES, bool(snapshot.namespaces)):
        return
    if snapshot.namespace_exists(namespace):
        return
    yield finding(
        "error",
        ObjectRef("Namespace", namespace),
        f"jobNamespace {namespace!r} does not exist: KServe never creates it, so every KernelCache fails "
        f'with Error/StorageError: job namespace "{namespace}" was not found; create it before using '
        "KernelCache",
        hint=kubectl("create namespace {ns}", ns=Namespace(namespace)),
        code="job-namespace-missing",
    )
