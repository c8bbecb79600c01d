"""What the API server refuses in object metadata and label-like strings, worded as it words it
(apimachinery's validation, checked against kube-apiserver's own 422 texts in the e2e tests).

Used for input files (an object Kubernetes would never have stored is not a cluster fact) and for the
tolerations of node groups (`kernelcache/taints.py`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

NAME_PART = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN = rf"{DNS1123_LABEL}(\.{DNS1123_LABEL})*"
_NAME_RE = re.compile(NAME_PART)
_LABEL_VALUE_RE = re.compile(f"({NAME_PART})?")
_SUBDOMAIN_RE = re.compile(DNS1123_SUBDOMAIN)
_DNS_LABEL_RE = re.compile(DNS1123_LABEL)

NAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    f"'{NAME_PART}')"
)
KEY_MSG = (
    "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    f"validation is '{NAME_PART}') with an optional DNS subdomain prefix and '/' (e.g. "
    "'example.com/MyName')"
)
VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
    "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
    f"regex used for validation is '({NAME_PART})?')"
)
SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    f"validation is '{DNS1123_SUBDOMAIN}')"
)
DNS_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    f"validation is '{DNS1123_LABEL}')"
)


def go_quote(value: str | bytes) -> str:
    """Go's strconv.Quote (%q), how Kubernetes and Go's url package print a bad value: what Go's
    unicode.IsPrint refuses is escaped, as \\xNN below U+0020 and for DEL, \\uNNNN in the BMP (C1 controls
    included), \\UNNNNNNNN beyond; from bytes, an invalid UTF-8 byte is \\xNN."""
    text = value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value
    out = []
    for ch in text:
        code = ord(ch)
        if isinstance(value, bytes) and 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8
            out.append(f"\\x{code - 0xDC00:02x}")
        elif ch in '"\\':
            out.append("\\" + ch)
        elif ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif _go_printable(ch):
            out.append(ch)
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


def _go_printable(ch: str) -> bool:
    """unicode.IsPrint: letters, marks, numbers, punctuation, symbols, and the ASCII space (no other space)."""
    import unicodedata

    return ch == " " or unicodedata.category(ch)[0] in "LMNPS"


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def shown(value: str, limit: int = 60) -> str:
    """A bad value as printed in a one-line message: Go-quoted, long ones cut."""
    if len(value) <= limit + 3:
        return go_quote(value)
    return f"{go_quote(value[:limit])}... ({len(value)} characters)"


def qualified_name_errors(key: str) -> list[str]:
    """A label key, annotation key or toleration key: an optional DNS subdomain prefix and a name."""
    parts = key.split("/")
    if len(parts) > 2:
        return [KEY_MSG]
    out = []
    if len(parts) == 2:
        prefix, name = parts
        if not prefix:
            out.append("prefix part must be non-empty")
        elif len(prefix) > 253:
            out.append("prefix part must be no more than 253 bytes")
        elif not _SUBDOMAIN_RE.fullmatch(prefix):
            out.append(f"prefix part {SUBDOMAIN_MSG}")
    else:
        name = parts[0]
    if not name:
        out.append("name part must be non-empty")
    elif len(name.encode()) > 63:
        out.append("name part must be no more than 63 bytes")
    if name and not _NAME_RE.fullmatch(name):
        out.append(NAME_MSG)
    return out


def label_value_errors(value: str) -> list[str]:
    return _errors(len(value.encode()), 63, "bytes", _LABEL_VALUE_RE.fullmatch(value), VALUE_MSG)


def subdomain_errors(name: str) -> list[str]:
    return _errors(len(name), 253, "characters", _SUBDOMAIN_RE.fullmatch(name), SUBDOMAIN_MSG)


def dns_label_errors(name: str) -> list[str]:
    return _errors(len(name), 63, "characters", _DNS_LABEL_RE.fullmatch(name), DNS_LABEL_MSG)


def _errors(length: int, limit: int, unit: str, matched: re.Match[str] | None, message: str) -> list[str]:
    """The API server's length error (past `limit` `unit`s), then its format error (`message`, not `matched`)."""
    return ([f"must be no more than {limit} {unit}"] if length > limit else []) + ([] if matched else [message])


def metadata_errors(
    kind: str, name: str, namespace: str | None, labels: Mapping[str, str], show: Callable[[str], str] = go_quote
) -> list[str]:
    """Why the API server would refuse an object with this name, namespace and labels, as `field: message`
    lines (empty when it would store it). Namespaces are DNS labels; every other kind read here is named as
    a DNS subdomain. Label keys and values repeat across thousands of objects: the valid ones are remembered.
    `show` prints a bad value (`shown` cuts long ones for a one-line message)."""
    if kind == "Namespace":
        errors = dns_label_errors(name)
    elif not name or (len(name) <= 253 and _SUBDOMAIN_RE.fullmatch(name)):  # this runs for every object of a file
        errors = []
    else:
        errors = subdomain_errors(name)
    out = [f"metadata.name: Invalid value: {show(name)}: {m}" for m in errors] if errors else []
    if namespace and namespace not in _VALID_NAMESPACES:
        out += _checked(dns_label_errors, _VALID_NAMESPACES, namespace, "metadata.namespace", show)
    if labels and not (_VALID_KEYS.issuperset(labels) and _VALID_VALUES.issuperset(labels.values())):
        for key, value in labels.items():
            if key not in _VALID_KEYS:
                out += _checked(qualified_name_errors, _VALID_KEYS, key, "metadata.labels", show)
            if value not in _VALID_VALUES:
                out += _checked(label_value_errors, _VALID_VALUES, value, "metadata.labels", show)
    return out


def _checked(
    errors_of: Callable[[str], list[str]], valid: set[str], value: str, field: str, show: Callable[[str], str]
) -> list[str]:
    """`errors_of(value)` as `field: Invalid value` lines; a valid value is remembered in `valid`."""
    errors = errors_of(value)
    if not errors:
        valid.add(value)
    return [f"{field}: Invalid value: {show(value)}: {m}" for m in errors]


# strings already found valid
_VALID_NAMESPACES: set[str] = set()
_VALID_KEYS: set[str] = set()
_VALID_VALUES: set[str] = set()


# ---- enums and numbers, as the API server refuses them ---------------------------------------------------

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")  # the order kube-apiserver lists them in
FAILURE_POLICIES = ("Fail", "Ignore")
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1


def invalid(value: str, message: str) -> str:
    """field.Invalid's text."""
    return f"Invalid value: {go_quote(value)}: {message}"


def not_supported(value: str, supported: tuple[str, ...]) -> str:
    """field.NotSupported's text."""
    return f"Unsupported value: {go_quote(value)}: supported values: {', '.join(go_quote(s) for s in supported)}"


def selector_requirement_error(operator: str, values: tuple[str, ...]) -> str | None:
    """metav1 ValidateLabelSelectorRequirement: the operator, and values for it."""
    if operator in ("In", "NotIn"):
        return None if values else "Required value: must be specified when `operator` is 'In' or 'NotIn'"
    if operator in ("Exists", "DoesNotExist"):
        return None if not values else "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
    return invalid(operator, "not a valid selector operator")


def integer_error(value: int, bits: int, go_field: str, nonnegative: bool = False) -> str | None:
    """What the API server answers for an integer field: a number past the Go type does not decode (its JSON
    error), a negative count is invalid (apimachinery's ValidateNonnegativeField)."""
    top = INT32_MAX if bits == 32 else INT64_MAX
    if not -top - 1 <= value <= top:
        shown = f"{float(value):g}" if abs(value) >= 10**21 else str(value)
        return f"json: cannot unmarshal number {shown} into Go struct field {go_field} of type int{bits}"
    if nonnegative and value < 0:
        return f"Invalid value: {value}: must be greater than or equal to 0"
    return None
