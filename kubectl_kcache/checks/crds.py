"""The four Kernel Cache CRDs (KernelCacheNodeGroup, KernelCacheNode, KernelCache, KernelCacheCapture in
`serving.kserve.io`) are installed, established and serve `v1alpha1`, the only version KServe's
controllers and this plugin use.

When the CRDs themselves can be read they are inspected directly; other served versions are noted
(another KServe API variant). When they cannot (RBAC often denies `customresourcedefinitions`), the
answer is inferred from listing the four kinds: a kind the API server does not serve means its CRD is
not installed. A missing CRD is an error: KServe's controllers cannot start their watches without it.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..kernelcache import constants as c
from ..snapshot import plan as readplan
from ..snapshot.model import ClusterSnapshot
from ..snapshot.reads import ABSENT, NOT_IN_INPUT, NOT_READ
from .common import observed, read_of
from .model import CheckRead, Finding, ObjectRef, Skip, finding_of
from .registry import check

ID = "crds"
finding = finding_of(ID)
KINDS = (
    (c.KIND_NODE_GROUP, c.PLURAL_NODE_GROUPS),
    (c.KIND_NODE, c.PLURAL_NODES),
    (c.KIND_CACHE, c.PLURAL_CACHES),
    (c.KIND_CAPTURE, c.PLURAL_CAPTURES),
)
KIND_LISTS = (readplan.NODE_GROUPS, readplan.KERNEL_CACHE_NODES, readplan.KERNEL_CACHES, readplan.CAPTURES)
INSTALL_HINT = (
    "kubectl apply --server-side -k 'github.com/kserve/kserve/config/crd/full/kernelcache?ref=<your KServe release>'"
)


# all of them missing is one problem (KServe's LocalModel CRDs not installed), said once
NOT_INSTALLED = "Kernel Cache CRDs are not installed"
LISTER = "kubectl api-resources --api-group=serving.kserve.io"


@check(
    ID,
    "Kernel Cache CRDs are served at v1alpha1",
    "error",
    order=10,
    codes={
        "not-installed": ("error", "a Kernel Cache CRD is not installed (or its resource is not served)"),
        "version-not-served": ("error", f"a Kernel Cache CRD does not serve {c.VERSION}"),
        "not-established": ("error", "a Kernel Cache CRD is not Established yet"),
        "other-versions": ("info", f"a Kernel Cache CRD serves other versions besides {c.VERSION}"),
    },
    reads=(
        CheckRead(
            readplan.CRDS,
            optional=True,
            note="versions and Established condition not checked; inferred from the kinds' reads",
        ),
        *(CheckRead(spec, optional=True, note=f"{spec.plural} not checked") for spec in KIND_LISTS),
    ),
)
def run(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    crd_read = read_of(snapshot, readplan.CRDS)
    if observed(snapshot, readplan.CRDS, bool(snapshot.crds)):
        yield from _from_crds(snapshot)
        return
    unknown = []
    for (kind, plural), spec in zip(KINDS, KIND_LISTS, strict=True):
        r = read_of(snapshot, spec)
        name = c.CRD_NAMES[kind]
        if r.status != ABSENT and not r.ok:
            unknown.append(plural)
        elif r.status == ABSENT:
            yield finding(
                "error",
                ObjectRef("CustomResourceDefinition", name),
                f"{plural}.{c.GROUP}/{c.VERSION} is not served: CRD {name} is not installed, so KServe's "
                f"kernel cache controllers cannot watch {kind} objects",
                hint=INSTALL_HINT,
                evidence=(f"list {plural}: not found (404)",),
                code="not-installed",
                cause=NOT_INSTALLED,
                lister=LISTER,
            )
    if len(unknown) == len(KINDS):
        why = {NOT_READ: "not read", NOT_IN_INPUT: "not in the input"}.get(crd_read.status, crd_read.status)
        raise Skip(f"{why}: list customresourcedefinitions, and none of the kernel cache kinds could be listed")


def _from_crds(snapshot: ClusterSnapshot) -> Iterator[Finding]:
    by_name = {crd.meta.name: crd for crd in snapshot.crds}
    for kind, plural in KINDS:
        name = c.CRD_NAMES[kind]
        ref = ObjectRef("CustomResourceDefinition", name)
        crd = by_name.get(name)
        if crd is None:
            yield finding(
                "error",
                ref,
                f"CRD {name} is not installed: KServe's kernel cache controllers cannot watch {kind} objects",
                hint=INSTALL_HINT,
                code="not-installed",
                cause=NOT_INSTALLED,
                lister=LISTER,
            )
            continue
        versions = ", ".join(crd.served_versions) or "none"
        if c.VERSION not in crd.served_versions:
            yield finding(
                "error",
                ref,
                f"CRD {name} does not serve {c.VERSION} (served: {versions}); KServe's kernel cache "
                f"controllers and kubectl-kcache use {c.API_VERSION}",
                hint=f"kubectl get crd {name} -o jsonpath='{{.spec.versions[*].name}}'",
                evidence=(f"served versions: {versions}",),
                code="version-not-served",
            )
            continue
        if not crd.established:
            yield finding(
                "error",
                ref,
                f"CRD {name} is not Established: the API server does not serve {plural} yet",
                hint=f"kubectl describe crd {name}",
                code="not-established",
            )
        others = [v for v in crd.served_versions if v != c.VERSION]
        if others:
            yield finding(
                "info",
                ref,
                f"CRD {name} also serves {', '.join(others)} besides {c.VERSION}: another KServe API "
                f"variant; KServe's kernel cache controllers read {c.VERSION}",
                hint=f"kubectl get crd {name} -o yaml",
                evidence=(f"served versions: {versions}",),
                code="other-versions",
            )
