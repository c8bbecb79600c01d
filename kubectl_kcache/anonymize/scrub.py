"""What an anonymized dump blanks: fields no command reads that identify a cluster or carry data. The copy of
the object kubectl keeps in an annotation, a node's cloud instance and machine identifiers, and every key of
KServe's ConfigMap but the kernel cache's (the others hold ingress domains, storage endpoints and credentials
settings) keep their keys with empty values, so the file keeps its shape; managed fields and Secret data, left
out of every dump, are left out of a file given to `dump --anonymize -f` too."""

from __future__ import annotations

from typing import Any

from ..kernelcache import constants as c

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
NODE_SPEC = ("providerID", "externalID")
NODE_INFO = ("machineID", "systemUUID", "bootID")


def scrub(item: dict[str, Any]) -> dict[str, Any]:
    """A copy of `item` with those fields blanked or left out (the input is not changed)."""
    out = dict(item)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        meta = {k: v for k, v in meta.items() if k != "managedFields"}
        if isinstance(meta.get("annotations"), dict) and LAST_APPLIED in meta["annotations"]:
            meta["annotations"] = {**meta["annotations"], LAST_APPLIED: ""}
        out["metadata"] = meta
    kind = out.get("kind")
    if kind == "Secret":
        out.pop("data", None)
        out.pop("stringData", None)
    elif kind == "ConfigMap" and isinstance(meta, dict) and meta.get("name") == c.CONFIGMAP_NAME:
        data = out.get("data")
        if isinstance(data, dict):
            out["data"] = {k: (v if k == c.CONFIG_KEY else "") for k, v in data.items()}
        if isinstance(out.get("binaryData"), dict):
            out["binaryData"] = dict.fromkeys(out["binaryData"], "")
    elif kind == "Node":
        spec, status = out.get("spec"), out.get("status")
        if isinstance(spec, dict):
            out["spec"] = {k: ("" if k in NODE_SPEC else v) for k, v in spec.items()}
        if isinstance(status, dict) and isinstance(status.get("nodeInfo"), dict):
            info = {k: ("" if k in NODE_INFO else v) for k, v in status["nodeInfo"].items()}
            out["status"] = {**status, "nodeInfo": info}
    return out
