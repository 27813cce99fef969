"""Each API's request path, composed once when the broker starts (ADR 30).

    faults ──▶ cluster ──▶ authorization ──▶ the API's handler
    client quotas ──▶ cluster ──▶ authorization ──▶ the API's handler      (`throttled`, quotas.py)

For every registered API the pipeline holds two compositions: `plain`, the handler behind its
authorization (just the handler when no authorizer is configured), and `faulted`, the same behind the
fault switches of the embedded broker. On a simulated cluster (`trafka.Cluster`) the cluster's
leadership and coordinator checks sit between the two; elsewhere they are not composed at all. The connection takes `faulted` only while a fault is armed
(`Faults.active`, one attribute check), so an unsecured broker's request pays one dictionary lookup
for all of this, and a secured one no per-request wrapping. `throttled` is `plain` with the client
quotas recorded after it, taken only while a client quota is set (`ClientQuotas.throttles_requests`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import quotas
from .cluster import layer as cluster_layer

if TYPE_CHECKING:
    from ..api import Handle, HandlerRegistry
    from ..cluster import ClusterMap
    from ..security.authorization import AuthorizationGate
    from .faults import Faults


class Pipeline:
    def __init__(
        self,
        registry: HandlerRegistry,
        authorization: AuthorizationGate | None,
        faults: Faults,
        cluster: ClusterMap | None = None,
    ) -> None:
        self.plain: dict[int, Handle] = {}
        self.faulted: dict[int, Handle] = {}
        self.throttled: dict[int, Handle] = {}
        for api in registry.apis():
            serve = api.handle if authorization is None else authorization.layer(api)
            if cluster is not None:
                serve = cluster_layer(cluster, api, serve)
            self.plain[api.api_key] = serve
            self.faulted[api.api_key] = faults.layer(api, serve)
            self.throttled[api.api_key] = quotas.layer(api, serve)
