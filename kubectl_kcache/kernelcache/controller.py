"""What identifies KServe's controller of KernelCacheNodes, whatever it is installed as.

- its Deployment: named `kserve-localmodel-controller-manager` or labelled `control-plane:
  kserve-localmodel-controller-manager` (KServe's charts and kustomize), in any namespace;
- its image: `kserve/kserve-localmodel-controller` (the localmodel manager, which runs the KernelCacheNode
  reconciler) or `kserve/kserve-kernelcache-controller` (releases that build the kernel cache manager as its
  own binary), from any registry, with any tag or digest;
- its Lease, when it runs with `--leader-elect`: controller-runtime's LeaderElectionID is the Lease's name
  (`kserve-local-model-manager-leader-lock` in cmd/localmodel/main.go, `kserve-kernelcache-manager-leader-lock`
  in cmd/kernelcache/main.go), in the namespace the manager runs in.
"""

from __future__ import annotations

from collections.abc import Iterable

from . import constants as c

IMAGES = ("kserve-localmodel-controller", "kserve-kernelcache-controller")
LEASES = ("kserve-local-model-manager-leader-lock", "kserve-kernelcache-manager-leader-lock")
# on the Leases kubectl-kcache controllers hold, so that each sees the others
PLUGIN_LEASE_LABEL = ("app.kubernetes.io/managed-by", "kubectl-kcache")


def image_repository_name(image: str) -> str:
    """The last part of an image's repository: `reg:5000/kserve/x:v1@sha256:..` -> `x`."""
    ref = image.split("@", 1)[0]
    last = ref.rsplit("/", 1)[-1]
    return last.split(":", 1)[0]


def is_controller_image(image: str) -> bool:
    return image_repository_name(image) in IMAGES


def why_controller(name: str, labels: dict[str, str], images: Iterable[str]) -> str:
    """What makes a Deployment KServe's controller ("" when nothing does)."""
    key, value = c.CONTROLLER_LABEL
    if name == c.CONTROLLER_DEPLOYMENT:
        return "named as KServe installs it"
    if labels.get(key) == value:
        return f"labelled {key}={value}"
    found = next((i for i in images if is_controller_image(i)), "")
    return f"image {found}" if found else ""
