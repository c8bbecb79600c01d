"""Whether a cache entry on a node makes a KernelCache a candidate for the pod webhook."""

from __future__ import annotations

from ..objects import CacheEntry, KernelCache
from . import constants as c


def entry_matches_cache(entry: CacheEntry, kc: KernelCache) -> bool:
    """The entry's image reference and both footprints equal the KernelCache's artifact."""
    if kc.artifact is None:
        return False
    return entry.image_reference == kc.artifact.image_reference and entry.footprints == kc.artifact.footprints


def ready_for_admission(entry: CacheEntry, kc: KernelCache, pod_namespace: str | None = None) -> bool:
    """A Ready entry, in the pod's namespace, whose image and footprints equal the KernelCache's, of an
    OCI KernelCache with an artifact and at least one cache path."""
    if entry.state != c.ENTRY_READY or not entry.ref.name:
        return False
    if pod_namespace is not None and entry.ref.namespace != pod_namespace:
        return False
    if kc.mount_type not in ("", c.MOUNT_TYPE_OCI):
        return False
    if kc.artifact is None or not kc.artifact.image_reference or kc.artifact.cache_path_count < 1:
        return False
    return entry_matches_cache(entry, kc)
