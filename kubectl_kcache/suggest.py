"""The one builder of the kubectl commands our answers suggest.

A command is a template written in the code (`"-n {ns} describe pod {pod}"`) and typed words for its
placeholders: `Name` (an object's name, checked as the API server checks names of its kind), `Selector`
(label keys and values, checked as label syntax) and `Json` (a patch body). A plain string is never a word,
so a value read from the cluster cannot reach a command without being checked; a template is a string
literal (a unit test holds every call site to that).

A checked name starts with a letter or digit, so kubectl cannot read it as an option; the builder refuses any
word from data that starts with `-` all the same. A value that fails is never put into a command: the
answer says which object and why no command is suggested."""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Mapping, Sequence

import msgspec

from .apivalidation import dns_label_errors, label_value_errors, qualified_name_errors, shown, subdomain_errors
from .text import json_body, quote


def _path_segment_errors(name: str) -> list[str]:
    """RBAC objects are named as path segments (apimachinery's IsValidPathSegmentName); one with control or
    invisible characters is valid there, but not a name to paste into a terminal."""
    if name in (".", ".."):
        return [f"may not be {quote(name)}"]
    out = [f"may not contain {quote(ch)}" for ch in "/%" if ch in name]
    return out + ([] if name.isprintable() else ["holds control or invisible characters"])


# kubectl's word for a kind -> the API server's rule for its names; every other kind is a DNS-1123 subdomain
_RULES: dict[str, Callable[[str], list[str]]] = {
    "namespace": dns_label_errors,
    "container": dns_label_errors,
    "service": dns_label_errors,
    "role": _path_segment_errors,
    "rolebinding": _path_segment_errors,
    "clusterrole": _path_segment_errors,
    "clusterrolebinding": _path_segment_errors,
}


def _short(message: str) -> str:
    """apimachinery's message without its examples and regular expression."""
    return message.split(" (e.g.")[0]


class Name(msgspec.Struct, frozen=True):
    """The name of an object of `kind` (kubectl's word for it: "pod", "namespace", "kernelcache")."""

    kind: str
    value: str

    def problem(self) -> str | None:
        if not self.value:
            return f"the {self.kind} name is empty"
        errors = _RULES.get(self.kind, subdomain_errors)(self.value)
        if errors:
            return f"{self.kind} name {shown(self.value)} is not one Kubernetes accepts: {_short(errors[0])}"
        return None

    def render(self) -> str:
        return self.value


def Namespace(value: str) -> Name:
    return Name("namespace", value)


class Selector(msgspec.Struct, frozen=True):
    """A label selector: `key=value` pairs, or keys alone (`-l key` selects objects that carry it, `-L key`
    shows it)."""

    pairs: tuple[tuple[str, str | None], ...]

    @staticmethod
    def of(labels: Mapping[str, str]) -> Selector:
        return Selector(tuple(labels.items()))

    @staticmethod
    def has(*keys: str) -> Selector:
        return Selector(tuple((k, None) for k in keys))

    def problem(self) -> str | None:
        if not self.pairs:
            return "the label selector is empty"
        for key, value in self.pairs:
            errors = qualified_name_errors(key)
            if errors:
                return f"label key {shown(key)} is not one Kubernetes accepts: {_short(errors[0])}"
            if value is not None and (errors := label_value_errors(value)):
                return f"label value {shown(value)} of {key} is not one Kubernetes accepts: {_short(errors[0])}"
        return None

    def render(self) -> str:
        return ",".join(k if v is None else f"{k}={v}" for k, v in self.pairs)


class Labels(Selector, frozen=True):
    """Labels to set (`kubectl label`): one `key=value` word each, so the placeholder stands alone."""

    @staticmethod
    def of(labels: Mapping[str, str]) -> Labels:
        return Labels(tuple(labels.items()))

    def words(self) -> tuple[str, ...]:
        return tuple(self.render().split(","))


class Json(msgspec.Struct, frozen=True):
    """A JSON document as one word (`kubectl patch -p`): built by the encoder, it starts with `{` or `[`, and
    no value inside it can end the word."""

    value: Mapping[str, object] | Sequence[object]

    def problem(self) -> str | None:
        return None

    def render(self) -> str:
        return json_body(self.value)


class _Text(msgspec.Struct, frozen=True):
    """A word written as its value, once `problem` (each kind's own) finds nothing wrong with it."""

    value: str

    def render(self) -> str:
        return self.value


class Placeholder(_Text, frozen=True):
    """A stand-in for what the data does not say (`text.PLACEHOLDER_ISVC`): upper case, so that Kubernetes
    refuses it if it is left in by mistake, and never shell syntax."""

    def problem(self) -> str | None:
        return None if re.fullmatch("[A-Z][A-Z_]*", self.value) else f"{shown(self.value)} is not a placeholder"


class Identity(_Text, frozen=True):
    """A user the API server names (`alice@example.com`, `system:serviceaccount:ns:sa`): any printable text,
    put only after a flag in the same word (`--as={user}`, `--user={user}`), where kubectl cannot read it as
    another option."""

    def problem(self) -> str | None:
        if not self.value or not self.value.isprintable() or self.value != self.value.strip():
            return f"the user {shown(self.value)} is not one a command can name"
        return None


class Verb(_Text, frozen=True):
    """An API verb (`list`, `watch`, `create`): lower-case letters."""

    def problem(self) -> str | None:
        return None if re.fullmatch("[a-z]+", self.value) else f"{shown(self.value)} is not an API verb"


class Url(_Text, frozen=True):
    """An https URL of the project's (a manifest to apply): no quote, space or control character in it."""

    def problem(self) -> str | None:
        if re.fullmatch(r"https://[A-Za-z0-9.-]+(/[A-Za-z0-9._~/-]*)?", self.value):
            return None
        return f"{shown(self.value)} is not a URL a command can hold"


Word = Name | Selector | Json | Placeholder | Identity | Verb | Url


class Built(msgspec.Struct, frozen=True):
    """A suggested command's words after `kubectl`, or why none is suggested."""

    argv: tuple[str, ...] | None
    refused: str | None = None

    @property
    def line(self) -> str | None:
        return None if self.argv is None else " ".join(quote(w) for w in ("kubectl", *self.argv))


_FORMATTER = string.Formatter()
# A template's parts, parsed once: templates are string literals of the code (a few hundred), while one is
# built thousands of times for a fleet (a finding per KernelCache).
_PARSED: dict[str, tuple[tuple[str | None, tuple[tuple[str, str | None], ...]], ...]] = {}


def _parse(template: str) -> tuple[tuple[str | None, tuple[tuple[str, str | None], ...]], ...]:
    """Per whitespace-separated part: the field it may be as a whole (a `Labels` word stands for several words),
    and its literal text and fields in order."""
    parsed = _PARSED.get(template)
    if parsed is None:
        parsed = _PARSED[template] = tuple(
            (
                part[1:-1] if part.startswith("{") else None,
                tuple((literal, field) for literal, field, _spec, _conv in _FORMATTER.parse(part)),
            )
            for part in template.split()
        )
    return parsed


def build(template: str, /, **words: Word) -> Built:
    """The command `kubectl TEMPLATE` with each `{placeholder}` replaced by its word (`{{` for a literal `{`).
    Each whitespace-separated part of the template is one word of the command."""
    for word in words.values():
        problem = word.problem()
        if problem is not None:
            return Built(None, f"no command suggested: {problem}")
    argv: list[str] = []
    for whole, pieces in _parse(template):
        if whole is not None and isinstance(labels := words.get(whole), Labels):
            argv += labels.words()
            continue
        out = []
        for i, (literal, field) in enumerate(pieces):
            out.append(literal)
            if field is not None:
                data = words[field]
                value = data.render()
                if i == 0 and not literal and value.startswith("-"):
                    what = f"{data.kind} name" if isinstance(data, Name) else "the value"
                    return Built(None, f"no command suggested: {what} {shown(value)} would be read as an option")
                out.append(value)
        argv.append("".join(out))
    return Built(tuple(argv))


def kubectl(template: str, /, **words: Word) -> str:
    """The command line to suggest; when a word is not valid for its kind, a sentence saying which and why."""
    built = build(template, **words)
    return built.line or built.refused or ""


def kubectl_or_none(template: str, /, **words: Word) -> str | None:
    """The command line to suggest, or None when a word is not valid for its kind (the caller has another)."""
    return build(template, **words).line
