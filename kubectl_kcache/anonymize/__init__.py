"""`kubectl kcache dump --anonymize` (also of a file: `dump --anonymize -f FILE`): a dump safe to attach to a
public issue that still gives the same answers. Node, namespace, InferenceService (and so pod and capture),
registry host, image and model names are replaced by tokens (anon-node-1, anon-ns-1, anon-isvc-1,
registry-1.anon.invalid, anon-image-1, hf://anon-model-1/anon-model-2), host names of URLs and nodes by
host-1.anon.invalid and IP addresses by addresses of 198.18.0.0/15 and 2001:db8:: (addresses.py), the same
name by the same token wherever it appears, in any string (spec fields, label and annotation values, event
messages, the JSON text of the ConfigMap); label and annotation keys, kinds, KServe's own namespaces and
images, Kubernetes' images and node group names are kept. Names KServe derives with a hash (KernelCache and
long capture names, preparation Jobs) are derived again from the new names, as KServe would have made them,
and names the API server generated from a cut name (a Job's pods) are generated again. KernelCaches and
captures named by people (often after the model) get tokens of their own. Fields no command reads that
identify a machine are blanked (scrub.py). The cluster's name and server address in the dump's meta are
replaced too.

Tags and digests of images, UIDs and timestamps are kept: they say nothing about who runs the cluster but
the commands' answers depend on them. Values the plugin does not know the meaning of (environment variables,
arguments) are only changed where they hold one of the names above: review the file before sharing it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ..kernelcache import constants as c
from ..kernelcache import names as kn
from ..kernelcache.config import DEFAULT_JOB_NAMESPACE
from . import locations
from .addresses import Addresses
from .scrub import scrub

KEPT_NAMESPACES = frozenset({c.KSERVE_NAMESPACE, "default", "kube-system", "kube-public", "kube-node-lease"})
# public registries: their images (the serving runtimes, Kubernetes' own) say nothing about the cluster
KEPT_HOSTS = frozenset(
    {
        "docker.io",
        "registry-1.docker.io",
        "ghcr.io",
        "quay.io",
        "nvcr.io",
        "registry.k8s.io",
        "k8s.gcr.io",
        "gcr.io",
        "public.ecr.aws",
        "mcr.microsoft.com",
    }
)
WORKLOAD_KEYS = ("namespace", "workloadKind", "workloadName", "runtimeImage", "modelURIHash")
HASH_KEYS = ("commandHash", "argsHash")
KSERVE_REPOSITORY = re.compile(r"^(docker\.io/)?kserve/")
_IMAGE = re.compile(r"^(?P<name>[a-z0-9][a-z0-9._/:-]*?)(?P<tag>:[\w][\w.-]{0,127})?(?P<digest>@sha256:[0-9a-f]{64})?$")
# Values that name types, never objects: a namespace called `apps` or `pods` stays out of `apps/v1` and `pods`.
TYPE_KEYS = frozenset(
    {"apiVersion", "kind", "apiGroup", "apiGroups", "apiVersions", "resource", "resources", "group", "listKind"}
    | {"plural", "singular", "shortNames", "categories", "operations", "verbs"}
)
NAME_KEYED_MAPS = frozenset({"cacheStatus"})  # maps whose keys are namespace/name of an object
# A name starts where no letter or digit comes before it (`isvc.NAME-predictor`, `NS/NAME`) and ends where
# neither a letter, a digit nor a dot follows (a `-` may: pod and capture names extend InferenceService names;
# a dot may not: `ml` in `harbor.ml.example.com` is no namespace).
_BEFORE, _AFTER = "A-Za-z0-9", "A-Za-z0-9."


class Anonymizer:
    def __init__(self, items: list[dict[str, Any]]):
        self.map: dict[str, str] = {}
        self.images: dict[str, str] = {}  # repository path parts -> tokens
        self._counters: dict[str, int] = {}
        self.pattern: re.Pattern[str] | None = None
        self.addresses = Addresses()
        self._collect([scrub(i) for i in items if isinstance(i, dict)])
        self._compile()

    def _compile(self) -> None:
        keys = sorted(self.map, key=len, reverse=True)  # the longest name first where one holds another
        alternatives = "|".join(re.escape(k) for k in keys)
        self.pattern = re.compile(rf"(?<![{_BEFORE}])(?:{alternatives})(?![{_AFTER}])") if keys else None

    # ---- what is replaced --------------------------------------------------------------------------
    def _token(self, kind: str, name: str, fmt: str, width: int = 1) -> str:
        """The token of `name`; numbered in the order names are given, zero-padded to `width` digits so that
        tokens sort as the names they stand for (reports sorted by name keep their order)."""
        if name not in self.map:
            self._counters[kind] = self._counters.get(kind, 0) + 1
            self.map[name] = fmt.format(str(self._counters[kind]).zfill(width))
        return self.map[name]

    def _collect(self, items: list[dict[str, Any]]) -> None:
        by_kind: dict[str, list[dict[str, Any]]] = {}
        for item in items:
            by_kind.setdefault(str(item.get("kind", "")), []).append(item)
        job_ns = _job_namespace(by_kind.get("ConfigMap", []))
        kept_ns = KEPT_NAMESPACES | {job_ns}
        nodes = _node_names(by_kind, items)
        namespaces = sorted(
            (
                {_meta(i).get("namespace") or "" for i in items}
                | {_meta(i).get("name", "") for i in by_kind.get("Namespace", [])}
            )
            - kept_ns
            - {""}
        )
        isvcs = _isvc_names(by_kind, items)
        images = sorted({img for i in items for img in _images(i)})
        texts = list(locations.strings(items))
        # the originals of the names KServe derives with a hash, before any token is made
        originals = self._derived(by_kind, images)
        for names, kind in ((nodes, "node"), (namespaces, "ns"), (isvcs, "isvc")):
            for name in names:
                self._token(kind, name, f"anon-{kind}-{{}}", len(str(len(names))))
        for ref in images:
            self._image(ref)
        for host in [*_registry_hosts(by_kind.get("ConfigMap", [])), *locations.url_hosts(texts)]:
            if host not in self.map and host not in KEPT_HOSTS:
                self._token("host", host, "host-{}.anon.invalid")
        self._compile()
        self._models(locations.model_uris(texts))
        self._node_aliases(by_kind.get("Node", []))
        self._compile()
        captures, caches, jobs = originals
        stages = (captures + self._hashed(by_kind.get("Pod", [])) + _label_values(nodes), caches, jobs)
        for n, stage in enumerate(stages):  # each uses the one before
            for original, rebuild in stage:
                new = rebuild(self.replace)
                if new != original:
                    self.map.setdefault(original, new)
            if n == 1:  # KernelCaches and captures named by people (often after the model) before their Jobs
                self._own_names(by_kind, "KernelCacheCapture", "anon-capture-{}")
                self._own_names(by_kind, "KernelCache", "anon-kc-{}")
            self._compile()
        for original, rebuild in _generated_names(items):  # a Job's pods, named after the Job
            new = rebuild(self.replace)
            if new != original:
                self.map.setdefault(original, new)
        for original, new in self._footprints(items):
            if new != original:
                self.map.setdefault(original, new)

    def _models(self, uris: list[tuple[str, str, str]]) -> None:
        """A model's URI gets one token per path part (`hf://anon-model-1/anon-model-2`), the same part the
        same token; its path and its name alone, and the name as objects are named after it
        (`llama-3-1-70b-instruct`), are replaced wherever they are written."""
        for uri, scheme, path in uris:
            parts = [self.map.get(p) or self.images.get(p) or self._model_token(p) if p else p for p in path.split("/")]
            new_path = "/".join(parts)
            self.map.setdefault(uri, f"{scheme}://{new_path}")
            if "/" in path.strip("/"):
                self.map.setdefault(path, new_path)
            name = next((p for p in reversed(path.split("/")) if p), "")
            if len(name) >= 6:
                token = self.map.get(name) or self._model_token(name)
                self.map.setdefault(name, token)
                if locations.dns_label(name):
                    self.map.setdefault(locations.dns_label(name), token)

    def _model_token(self, part: str) -> str:
        return self.images.setdefault(
            part, f"anon-model-{sum(v.startswith('anon-model-') for v in self.images.values()) + 1}"
        )

    def _node_aliases(self, nodes: list[dict[str, Any]]) -> None:
        """A node's DNS and host names where they differ from its name."""
        for node in nodes:
            for addr in _field(node, "status").get("addresses") or []:
                if isinstance(addr, dict) and addr.get("type") in ("Hostname", "InternalDNS", "ExternalDNS"):
                    value = str(addr.get("address") or "")
                    if value and value not in self.map:
                        self._token("host", value, "host-{}.anon.invalid")

    def _own_names(self, by_kind: dict[str, list[dict[str, Any]]], kind: str, fmt: str) -> None:
        """Objects of `kind` whose names hold no token yet: named by people, not from an InferenceService."""
        names = sorted({str(_meta(i).get("name") or "") for i in by_kind.get(kind, [])} - {""})
        names = [n for n in names if n not in self.map and self.replace(n) == n]
        for name in names:
            self._token(kind, name, fmt, len(str(len(names))))
        self._compile()

    def _hashed(self, pods: list[dict[str, Any]]) -> list[tuple[str, Any]]:
        """The hashes of KServe's identity that hash a name: the command and args of each container, the
        model URI of each pod."""
        from ..kernelcache.gojson import hash_strings
        from ..kernelcache.identity import model_uri_hash

        out: list[tuple[str, Any]] = []
        for pod in pods:
            spec = _field(pod, "spec")
            for container in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
                for key in ("command", "args"):
                    words = container.get(key) if isinstance(container, dict) else None
                    if isinstance(words, list) and all(isinstance(w, str) for w in words):
                        out.append((hash_strings(words), lambda r, w=tuple(words): hash_strings([r(x) for x in w])))
            uri = str((_meta(pod).get("annotations") or {}).get(c.ANNOTATION_SOURCE_URI, "")).strip()
            if uri:
                out.append((model_uri_hash(uri), lambda r, u=uri: model_uri_hash(r(u))))
        return out

    def _footprints(self, items: list[dict[str, Any]]) -> list[tuple[str, str]]:
        """Both footprints of every set of identity factors (KernelCaches, captures), from the factors as
        they were and as they are now."""
        from ..kernelcache.gojson import hash_map

        out: list[tuple[str, str]] = []
        for factors in [*_factor_sets(items), *_pod_factor_sets(items)]:
            old_w, old_c = _footprint_maps(factors)
            new_w, new_c = _footprint_maps({k: self.replace(v) for k, v in factors.items()})
            out += [(hash_map(old_w), hash_map(new_w)), (hash_map(old_c), hash_map(new_c))]
        return out

    def _image(self, ref: str) -> None:
        m = _IMAGE.match(ref)
        if not m or KSERVE_REPOSITORY.match(ref):
            return
        name = m.group("name")
        first, _, rest = name.partition("/")
        if rest and ("." in first or ":" in first or first == "localhost"):
            if first in KEPT_HOSTS:
                return
            host = self._token("host", first, "registry-{}.anon.invalid")
        else:
            return  # Docker Hub's: public
        # the repository with its host, so that its parts are replaced only there (an image named `cache` is
        # no reason to change the word elsewhere); a part that is a namespace or an InferenceService keeps its
        # token
        self._compile()
        parts = [
            self.map.get(p)
            or (self.replace(p) if self.replace(p) != p else None)
            or self.images.setdefault(p, f"anon-image-{len(self.images) + 1}")
            for p in rest.split("/")
        ]
        self.map.setdefault(name, "/".join([host, *parts]))

    def _derived(self, by_kind: dict[str, list[dict[str, Any]]], images: list[str]) -> tuple[list, list, list]:
        """(original name, how to make it again from anonymized parts) for KServe's hashed names: captures,
        their reporter and pusher identities, KernelCaches (from captures), preparation Jobs (from
        KernelCaches)."""
        out: list[tuple[str, Any]] = [
            (kn.capture_revision_name(isvc, rev), lambda r, i=isvc, v=rev: kn.capture_revision_name(r(i), v))
            for isvc, rev in _revisions(by_kind)
        ]
        captures = sorted({_meta(i).get("name", "") for i in by_kind.get("KernelCacheCapture", [])} - {""})
        refs = sorted(set(images) | {str(_spec_image(k)) for k in by_kind.get("KernelCache", []) if _spec_image(k)})
        capture_names, out = out, []
        for cap in sorted(set(captures) | {kn.capture_revision_name(i, v) for i, v in _revisions(by_kind)} - {""}):
            out.append((kn.reporter_name(cap), lambda r, cp=cap: kn.reporter_name(r(cp))))
            out.append((kn.pusher_name(cap), lambda r, cp=cap: kn.pusher_name(r(cp))))
        for cap in captures:
            for ref in refs:
                out.append(
                    (
                        kn.generated_kernel_cache_name(cap, ref),
                        lambda r, cp=cap, rf=ref: kn.generated_kernel_cache_name(r(cp), r(rf)),
                    )
                )
        entries = _cache_entries(by_kind.get("KernelCacheNode", []))
        cache_names, out = out, []
        for kc in by_kind.get("KernelCache", []):  # a preparation Job per node that has an entry for the cache
            ns, name, ref = _meta(kc).get("namespace", ""), _meta(kc).get("name", ""), _spec_image(kc)
            if not ref:
                continue
            for node in entries.get(f"{ns}/{name}", ()):
                out.append(
                    (
                        kn.preparation_job_name(ns, name, ref, node),
                        lambda r, a=ns, b=name, d=ref, e=node: kn.preparation_job_name(r(a), r(b), r(d), r(e)),
                    )
                )
        return capture_names, cache_names, out

    # ---- replacing ---------------------------------------------------------------------------------
    def replace(self, text: str) -> str:
        if not text:
            return text
        if self.pattern is not None:
            text = self.pattern.sub(lambda m: self.map[m.group()], text)
        return self.addresses.replace(text)

    def value(self, value: Any, names_as_keys: bool = False) -> Any:
        """`value` with every string replaced where it can hold a name: never a key (a field, a label or an
        annotation key) but those of maps keyed by names (`names_as_keys`: KernelCacheNode's cacheStatus, keyed
        by namespace/name), never a type (apiVersion, kind, API groups and resources)."""
        if isinstance(value, str):
            return self.replace(value)
        if isinstance(value, dict):
            return {
                (self.replace(k) if names_as_keys and isinstance(k, str) else k): (
                    v if k in TYPE_KEYS else self.value(v, k in NAME_KEYED_MAPS)
                )
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.value(v) for v in value]
        return value


def _factor_sets(items: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Every mapping of string values that holds the workload keys of an identity (KServe's Factors)."""
    found: list[dict[str, str]] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if all(isinstance(value.get(k), str) for k in WORKLOAD_KEYS) and all(
                isinstance(v, str) for v in value.values()
            ):
                found.append(value)
                return
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(items)
    return found


def _pod_factor_sets(items: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The identity factors of each serving pod, as the webhook computes them: a pod whose capture is not
    done (or whose cache was made elsewhere) is in no KernelCache's or capture's factors, and why-not-cached
    shows its footprints."""
    from ..errors import InputError
    from ..kernelcache.admission import identity_gates, pre_admission
    from ..objects import Pod

    found: list[dict[str, str]] = []
    for item in items:
        if (
            not isinstance(item, dict)
            or item.get("kind") != "Pod"
            or c.LABEL_ISVC not in (_meta(item).get("labels") or {})
        ):
            continue
        try:
            pod = Pod.from_dict(item)
        except InputError:
            continue
        ident = identity_gates(pre_admission(pod), pod.namespace or "")[2]
        if ident is not None:
            found.append(dict(ident.factors))
    return found


def _footprint_maps(factors: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """What the workload and the compatibility footprints hash (identity.build)."""
    workload = {k: factors[k] for k in (*WORKLOAD_KEYS, *HASH_KEYS) if factors.get(k)}
    runtime = {k: v for k, v in factors.items() if k not in (*WORKLOAD_KEYS, *HASH_KEYS) and v}
    return workload, {"runtimeImage": factors["runtimeImage"], "modelURIHash": factors["modelURIHash"], **runtime}


def _revisions(by_kind: dict[str, list[dict[str, Any]]]) -> list[tuple[str, str]]:
    """(InferenceService, pod-template-hash) of every InferenceService pod."""
    out = []
    for pod in by_kind.get("Pod", []):
        labels = _meta(pod).get("labels") or {}
        isvc, rev = str(labels.get(c.LABEL_ISVC, "")), str(labels.get(c.LABEL_POD_TEMPLATE_HASH, ""))
        if isvc and rev:
            out.append((isvc, rev))
    return out


def _cache_entries(kcns: list[dict[str, Any]]) -> dict[str, list[str]]:
    """namespace/name of a KernelCache -> the KernelCacheNodes (nodes) with an entry for it."""
    out: dict[str, list[str]] = {}
    for kcn in kcns:
        status = _field(kcn, "status")
        for key in status.get("cacheStatus") or {}:
            out.setdefault(str(key), []).append(_meta(kcn).get("name", ""))
    return out


# fields, labels and annotations whose value is a node's name, wherever they are
NODE_KEYS = frozenset({"nodeName", "kubernetes.io/hostname", c.LABEL_JOB_NODE, c.ANNOTATION_JOB_NODE})


def _node_names(by_kind: dict[str, list[dict[str, Any]]], items: list[dict[str, Any]]) -> list[str]:
    """Nodes, KernelCacheNodes (named after their node, which may be gone), the nodes pods ran on or Jobs were
    meant for, endpoints' nodes, and the hosts events were reported from."""
    names = {_meta(i).get("name", "") for kind in ("Node", "KernelCacheNode") for i in by_kind.get(kind, [])}
    stack: list[Any] = list(items)
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            for k, v in value.items():
                if isinstance(v, str) and k in NODE_KEYS:
                    names.add(v)
                elif isinstance(v, (dict, list)):
                    stack.append(v)
        elif isinstance(value, list):
            stack.extend(value)
    for event in by_kind.get("Event", []):
        names.add(str(_field(event, "source").get("host") or ""))
    return sorted({str(n) for n in names} - {""})


def _isvc_names(by_kind: dict[str, list[dict[str, Any]]], items: list[dict[str, Any]]) -> list[str]:
    """InferenceServices: by their pods' label, their own objects, and the captures made from them."""
    names = {str((_meta(i).get("labels") or {}).get(c.LABEL_ISVC, "")) for i in items}
    names |= {str(_meta(i).get("name") or "") for i in by_kind.get("InferenceService", [])}
    for cap in by_kind.get("KernelCacheCapture", []):
        ref = _field(_field(cap, "spec"), "sourceRef")
        if ref.get("kind") in (None, "InferenceService"):
            names.add(str(ref.get("name") or ""))
    return sorted(names - {""})


def _registry_hosts(config_maps: list[dict[str, Any]]) -> list[str]:
    """The registry host (and port) of KServe's kernel cache configuration."""
    registry = _kernelcache_config(config_maps).get("registry") or {}
    endpoint = str(registry.get("endpoint") or "") if isinstance(registry, dict) else ""
    return [h for h in (endpoint, endpoint.rsplit(":", 1)[0]) if h and not h.replace(".", "").isdigit()]


def _kernelcache_config(config_maps: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON of KServe's kernel cache configuration in the dump; empty when absent or not an object."""
    import json

    for cm in config_maps:
        if _meta(cm).get("name") == c.CONFIGMAP_NAME:
            try:
                config = json.loads(str((cm.get("data") or {}).get(c.CONFIG_KEY) or "{}"))
            except (ValueError, AttributeError):
                return {}
            return config if isinstance(config, dict) else {}
    return {}


def _label_values(nodes: list[str]) -> list[tuple[str, Any]]:
    """A node name too long for a label value is written `h-<hash of the name>` in the Jobs' labels."""
    return [(kn.label_value(n), lambda r, n=n: kn.label_value(r(n))) for n in nodes if kn.label_value(n) != n]


GENERATED_CUT = 58  # the API server cuts generateName to this before adding 5 random characters


def _generated_names(items: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """Names the API server generated (generateName, e.g. a Job's pods) from a name that was cut to fit:
    `kc-<...>-ip-10-0-1-11-ec2-i-0efacba4c4f` + `zb5hv` holds no whole name, so it is made again from the
    new generateName."""
    out: list[tuple[str, Any]] = []
    for item in items:
        meta = _meta(item)
        name = str(meta.get("name") or "")
        bases = [str(meta.get("generateName") or "")]
        bases += [str(o.get("name") or "") + "-" for o in meta.get("ownerReferences") or [] if isinstance(o, dict)]
        for base in bases:
            cut = base[:GENERATED_CUT]
            if len(base) > 1 and name.startswith(cut) and len(name) == len(cut) + 5:
                out.append((name, lambda r, b=base, rest=name[len(cut) :]: r(b)[:GENERATED_CUT] + rest))
                break
    return out


def _field(obj: dict[str, Any], key: str) -> dict[str, Any]:
    """obj[key] when it is a mapping, else an empty one (a dump's objects are data, not trusted)."""
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def _meta(item: dict[str, Any]) -> dict[str, Any]:
    meta = item.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _spec_image(kc: dict[str, Any]) -> str:
    """A KernelCache's spec.artifact.imageReference."""
    artifact = _field(_field(kc, "spec"), "artifact")
    return str(artifact.get("imageReference") or "")


def _images(item: dict[str, Any]) -> Iterable[str]:
    """Every image reference of an object: container images, a node's image names, KServe's imageReference."""

    def walk(value: Any, key: str = "") -> Iterable[str]:
        if isinstance(value, dict):
            for k, v in value.items():
                yield from walk(v, k)
        elif isinstance(value, list):
            for v in value:
                yield from walk(v, key)
        elif isinstance(value, str) and key in ("image", "imageReference", "names") and value:
            yield value

    return walk(item)


def _job_namespace(config_maps: list[dict[str, Any]]) -> str:
    return str(_kernelcache_config(config_maps).get("jobNamespace") or DEFAULT_JOB_NAMESPACE)


def anonymize(items: list[dict[str, Any]], meta: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The items and meta of a dump, anonymized (see the module's docstring)."""
    a = Anonymizer(items)
    new_meta = a.value(meta)
    new_meta["cluster"] = "anonymized"
    if new_meta.get("server"):
        new_meta["server"] = "https://anonymized.invalid"
    return [a.value(scrub(i)) for i in items if isinstance(i, dict)], new_meta


class AnonymizingWriter:
    """A dump writer that holds the items (a consistent mapping needs every name first) and writes them
    anonymized when the dump is finished."""

    def __init__(self, writer: Any):
        self.writer = writer
        self.items: list[dict[str, Any]] = []

    @property
    def count(self) -> int:
        return len(self.items)

    def item(self, data: bytes, _kind: Any = None) -> None:
        import msgspec

        self.items.append(msgspec.json.decode(data))

    def finish(self, meta: dict[str, Any]) -> None:
        import msgspec

        items, new_meta = anonymize(self.items, meta)
        for item in items:
            self.writer.item(msgspec.json.encode(item))
        self.writer.finish(new_meta)
