"""Where models and other hosts are named in a dump: model storage URIs (`hf://org/model`, `s3://bucket/key`,
...; InferenceService storageUri, the storage-initializer annotation and arguments, event messages) and the
hosts of http(s) URLs. Each is found in any string, so a name quoted in a message is found as in a field."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

MODEL_SCHEMES = ("hf", "s3", "gs", "gcs", "pvc", "oci", "hdfs", "webhdfs", "azure", "abfs", "abfss", "wasb", "wasbs")
MODEL_URI = re.compile(rf"(?<![A-Za-z0-9+.-])({'|'.join(MODEL_SCHEMES)})://([^\s\"'<>,;()\[\]{{}}]+)")
URL_HOST = re.compile(r"(?<![A-Za-z0-9+.-])https?://(?:[^/\s\"'@]*@)?([A-Za-z0-9.-]+)")
# public hosts: naming them says nothing about who runs the cluster
PUBLIC_HOSTS = frozenset(
    {"huggingface.co", "github.com", "raw.githubusercontent.com", "kubernetes.io", "kserve.github.io", "pypi.org"}
)


def strings(value: Any) -> Iterator[str]:
    """Every string of a JSON value, keys included."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            yield v
        elif isinstance(v, dict):
            for k, x in v.items():
                if isinstance(k, str):
                    yield k
                stack.append(x)
        elif isinstance(v, list):
            stack.extend(v)


def model_uris(texts: Iterable[str]) -> list[tuple[str, str, str]]:
    """(URI, scheme, path) of every model storage URI, in a stable order."""
    found = {
        m.group(): (m.group(1), m.group(2).rstrip(".")) for t in texts if "://" in t for m in MODEL_URI.finditer(t)
    }
    return sorted((uri.rstrip("."), scheme, path) for uri, (scheme, path) in found.items())


def url_hosts(texts: Iterable[str]) -> list[str]:
    """The hosts of http(s) URLs but public ones, IP addresses (addresses.py) and in-cluster Service names."""
    hosts = {m.group(1).rstrip(".").lower() for t in texts if "://" in t for m in URL_HOST.finditer(t)}
    return sorted(
        h
        for h in hosts
        if "." in h
        and h not in PUBLIC_HOSTS
        and not h.replace(".", "").isdigit()
        and not h.endswith((".svc", ".cluster.local", ".invalid"))
    )


def dns_label(name: str) -> str:
    """A model name as people name objects after it: lower case, runs of other characters as one dash
    (`Llama-3.1-70B-Instruct` -> `llama-3-1-70b-instruct`)."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
