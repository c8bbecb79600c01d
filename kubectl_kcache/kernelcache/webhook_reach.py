"""Whether the API server can call KServe's pod webhook: the one rule the doctor's control-plane check and
why-not-cached's `webhook-reachable` gate share.

The API server cannot call it without a caBundle to verify its certificate, nor while its Service has no ready
endpoint (the controller that serves it missing, scaled to zero or not ready). With failurePolicy Fail it then
rejects every pod the webhook is registered for; with Ignore it admits them untouched (no cache).
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from ..objects import EndpointSlice, WebhookEntry
from . import constants as c


def ready_endpoints(slices: Iterable[EndpointSlice], namespace: str, service: str) -> int:
    """Ready endpoints behind the Service `namespace/service`."""
    return sum(
        s.ready_endpoints
        for s in slices
        if s.meta.namespace == namespace and s.meta.labels.get("kubernetes.io/service-name") == service
    )


class Reach(msgspec.Struct, frozen=True):
    """What decides whether the webhook can be called. `endpoints` None: its Service's endpoints were not read."""

    entry: WebhookEntry
    endpoints: int | None

    @property
    def service(self) -> str:
        return f"{self.entry.service_namespace or c.KSERVE_NAMESPACE}/{self.entry.service_name or c.WEBHOOK_SERVICE}"

    @property
    def why_not(self) -> str:
        """Why the API server cannot call the webhook, in words; "" when it can, or when that is not known."""
        if not self.entry.has_ca_bundle:
            return (
                f"webhook {c.WEBHOOK_NAME} has no caBundle, so the API server cannot verify the webhook server's "
                "certificate and every call fails"
            )
        if self.endpoints == 0:
            return f"Service {self.service} behind webhook {c.WEBHOOK_NAME} has no ready endpoints"
        return ""

    @property
    def api_server_error(self) -> str:
        """What the API server answers a pod's creation with while the webhook cannot be called (Fail)."""
        if not self.entry.has_ca_bundle:
            cause = "tls: failed to verify certificate: x509: certificate signed by unknown authority"
        else:
            cause = f'no endpoints available for service "{self.entry.service_name or c.WEBHOOK_SERVICE}"'
        return f'Internal error occurred: failed calling webhook "{c.WEBHOOK_NAME}": failed to call webhook: {cause}'
