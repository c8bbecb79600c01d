"""Where an answer's data came from, as every machine format carries it: live from an API server or from
input files, the cluster, when the data was read, when the answer was made, the tool's version and the
namespace scope of the reads. In JSON and YAML it is the `source` object right after `kind` and
`version`."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from . import __version__
from .credentials import redact_url

TOOL = "kubectl-kcache"
LIVE = "live"
FILE = "file"


def now_rfc3339() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Provenance:
    source: str  # live | file
    server: str = ""  # the API server's URL (live; a dump file records the one it was taken from)
    files: tuple[str, ...] = ()  # the input files as given (file)
    cluster: str = ""  # the kubeconfig cluster name, or the one a dump file records
    taken_at: str = ""  # when the data was read ("" when input files do not say)
    generated_at: str = ""  # when this answer was made
    namespace: str | None = None  # the namespace of namespaced kinds; None: all namespaces
    tool_version: str = __version__
    clock: str = ""  # input files without takenAt: their newest time, what time-based verdicts take as now

    @staticmethod
    def live(server: str, cluster: str, taken_at: str, namespace: str | None) -> Provenance:
        return Provenance(
            LIVE,
            server=redact_url(server),
            cluster=cluster,
            taken_at=taken_at,
            generated_at=now_rfc3339(),
            namespace=namespace,
        )

    @staticmethod
    def from_files(
        files: Iterable[str], cluster: str, taken_at: str, namespace: str | None, server: str = "", clock: str = ""
    ) -> Provenance:
        return Provenance(
            FILE,
            server=redact_url(server),  # a dump may have recorded a password in the server's URL
            files=tuple(files),
            cluster=cluster,
            taken_at=taken_at,
            generated_at=now_rfc3339(),
            namespace=namespace,
            clock=clock,
        )

    @property
    def where(self) -> str:
        """The source in words: the server's URL, or the input files."""
        return self.server if self.source == LIVE else ", ".join(self.files)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"from": self.source, "cluster": self.cluster, "server": self.server}
        if self.source == FILE:
            out["files"] = list(self.files)
        out["takenAt"] = self.taken_at
        if self.clock:
            out["judgedAt"] = {"time": self.clock, "from": "the newest time in the input (it has no takenAt)"}
        out["generatedAt"] = self.generated_at
        out["tool"] = f"{TOOL} {self.tool_version}"
        out["scope"] = {"namespace": self.namespace}
        return out


def with_source(doc: dict[str, Any], source: Provenance) -> dict[str, Any]:
    """`doc` with `source` right after its kind and version."""
    head: dict[str, Any] = {k: doc[k] for k in ("kind", "version") if k in doc}
    return {**head, "source": source.to_dict(), **{k: v for k, v in doc.items() if k not in head}}
