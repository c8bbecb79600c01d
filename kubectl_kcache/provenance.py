"""Where a report's data came from, as every machine format carries it (design.md, "Every machine
format"): the source (the API server's URL, or the input files), when the data was read, when the report
was made, the tool's version and the scope of the reads."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from . import __version__

TOOL = "kubectl-kcache"
SOURCE_API = "api-server"
SOURCE_FILES = "files"


def now_rfc3339() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Provenance:
    source: str  # api-server | files
    server: str = ""  # the API server's URL (api-server)
    files: tuple[str, ...] = ()  # the input files as given (files)
    cluster: str = ""  # the kubeconfig cluster name, or the one a dump file records
    taken_at: str = ""  # when the data was read ("" when input files do not say)
    generated_at: str = ""  # when this report was made
    namespace: str | None = None  # the namespace of namespaced kinds; None: all namespaces
    tool_version: str = __version__

    @staticmethod
    def live(server: str, cluster: str, taken_at: str, namespace: str | None) -> Provenance:
        return Provenance(SOURCE_API, server=server, cluster=cluster, taken_at=taken_at,
                          generated_at=now_rfc3339(), namespace=namespace)

    @staticmethod
    def from_files(files: Iterable[str], cluster: str, taken_at: str, namespace: str | None) -> Provenance:
        return Provenance(SOURCE_FILES, files=tuple(files), cluster=cluster, taken_at=taken_at,
                          generated_at=now_rfc3339(), namespace=namespace)

    @property
    def where(self) -> str:
        """The source in words: the server's URL, or the input files."""
        if self.source == SOURCE_API:
            return self.server
        return ", ".join(self.files)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.source}
        if self.source == SOURCE_API:
            out["server"] = self.server
        else:
            out["files"] = list(self.files)
        out.update({"cluster": self.cluster or None, "takenAt": self.taken_at or None,
                    "generatedAt": self.generated_at or None, "tool": TOOL, "toolVersion": self.tool_version,
                    "scope": {"namespace": self.namespace}})
        return out
