"""Names KServe generates: KernelCaches from captures, captures from pods, preparation Jobs and labels."""

from __future__ import annotations

import hashlib
import re

from ..objects import Pod
from . import constants as c

MAX_NAME = 63
KC_PREFIX_MAX = 38


def _sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def generated_kernel_cache_name(capture_name: str, image_reference: str) -> str:
    """`<capture name less one trailing -capture, cut to 38 bytes, no trailing -/.>-<24 hex of sha256(image)>`.

    As in KServe, nothing guards an empty prefix (the name then starts with "-").
    """
    prefix = capture_name[: -len("-capture")] if capture_name.endswith("-capture") else capture_name
    prefix = _cut_bytes(prefix, KC_PREFIX_MAX).rstrip("-.")
    return f"{prefix}-{_sha256_hex(image_reference)[:24]}"


def _cut_bytes(value: str, limit: int) -> str:
    """Go's value[:limit] on the UTF-8 bytes (a cut inside a rune leaves it out)."""
    return value.encode("utf-8")[:limit].decode("utf-8", "ignore")


def capture_revision_name(source_name: str, revision: str) -> str:
    """KernelCacheCaptureRevisionName: `<isvc>-kcc-<revision>`, shortened with a hash to fit 63 bytes;
    "" when either part is empty or no name fits."""
    if not source_name or not revision:
        return ""
    suffix = f"-kcc-{revision}"
    available = MAX_NAME - len(suffix.encode())
    if available <= 0:
        return ""
    if len(source_name.encode()) <= available:
        return source_name + suffix
    digest = "-" + _sha256_hex(source_name)[:12]
    keep = available - len(digest)
    if keep < 1:
        return ""
    return _cut_bytes(source_name, keep).rstrip("-.") + digest + suffix


def capture_name_for_pod(pod: Pod) -> str:
    """The capture KServe generates for a producer pod: from its InferenceService label and its
    pod-template-hash ("" when either is missing)."""
    labels = pod.meta.labels
    return capture_revision_name(labels.get(c.LABEL_ISVC, ""), labels.get(c.LABEL_POD_TEMPLATE_HASH, ""))


def _name_part(value: str, limit: int) -> str:
    part = _cut_bytes(value.lower().replace(".", "-"), limit).strip("-.")
    return part or "unknown"


def preparation_job_name(kc_namespace: str, kc_name: str, image_reference: str, node: str) -> str:
    digest = _sha256_hex(f"{kc_namespace}/{kc_name}/{image_reference}/{node}")[:16]
    return f"kc-{_name_part(kc_name, 24)}-{_name_part(node, 18)}-{digest}"


_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def label_value(value: str) -> str:
    """A label value for Job labels: the value itself when valid, else `h-<61 hex of sha256(value)>`."""
    if not value:
        return ""
    if len(value) <= MAX_NAME and _LABEL_VALUE.fullmatch(value):
        return value
    return "h-" + _sha256_hex(value)[:61]


def _scoped_name(prefix: str, capture_name: str) -> str:
    """scopedName of KServe's reporter and registryauth packages: `<prefix><capture name, cut to fit, no
    trailing -/.>-<12 hex of sha256(capture name)>`, at most 63 characters."""
    suffix = "-" + _sha256_hex(capture_name)[:12]
    max_base = MAX_NAME - len(prefix) - len(suffix)
    if max_base < 1:
        return prefix + suffix[1:]
    base = capture_name
    if len(base.encode()) > max_base:
        base = _cut_bytes(base, max_base).rstrip("-.")
    return prefix + base + suffix


def reporter_name(capture_name: str) -> str:
    """reporter.SecretName, also the reporter ServiceAccount, Role and RoleBinding (credentials.go@30750567:
    12 hex; an older snapshot had 8)."""
    return _scoped_name(c.REPORTER_PREFIX, capture_name)


def pusher_name(capture_name: str) -> str:
    """registryauth.PusherServiceAccountName, also PusherRoleBindingName."""
    return _scoped_name(c.PUSHER_PREFIX, capture_name)
