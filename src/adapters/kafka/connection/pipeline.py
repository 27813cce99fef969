"""Each API's request path, composed once when the broker starts (ADR 30).

    faults ──▶ cluster ──▶ authorization ──▶ the API's handler
    client quotas ──▶ cluster ──▶ authorization ──▶ the API's handler      (`throttled`, quotas.py)

For every registered API the pipeline holds compositions, each built at the API's first request: `plain`, the handler behind its
authorization (just the handler when no authorizer is configured), and `faulted`, the same behind the
fault switches of the embedded broker. On a simulated cluster (`trafka.Cluster`) the cluster's
leadership and coordinator checks sit between the two; elsewhere they are not composed at all. The connection takes `faulted` only while a fault is armed
(`Faults.active`, one attribute check), so an unsecured broker's request pays one dictionary lookup
for all of this, and a secured one no per-request wrapping. `throttled` is `plain` with the client
quotas recorded after it, taken only while a client quota is set (`ClientQuotas.throttles_requests`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from . import quotas
from .cluster import layer as cluster_layer

if TYPE_CHECKING:
    from ..api import Handle, HandlerRegistry, KafkaApi
    from ..cluster import ClusterMap
    from ..security.authorization import AuthorizationGate
    from .faults import Faults


class _Composed(dict[int, "Handle"]):
    """An API's composition, built at its first request (ADR 110): a later one is a dict lookup."""

    def __init__(self, compose: Callable[[int], Handle]) -> None:
        super().__init__()
        self._compose = compose

    def __missing__(self, api_key: int) -> Handle:
        serve = self[api_key] = self._compose(api_key)
        return serve


class Pipeline:
    def __init__(
        self,
        registry: HandlerRegistry,
        authorization: AuthorizationGate | None,
        faults: Faults,
        cluster: ClusterMap | None = None,
    ) -> None:
        def plain(api_key: int) -> Handle:
            api = registry.get(api_key)
            if api is None:
                raise KeyError(api_key)
            serve = api.handle if authorization is None else authorization.layer(api)
            if cluster is not None:
                serve = cluster_layer(cluster, api, serve)
            return serve

        def layered(layer: Callable[[KafkaApi, Handle], Handle]) -> Callable[[int], Handle]:
            def compose(api_key: int) -> Handle:
                api = registry.get(api_key)
                assert api is not None
                return layer(api, self.plain[api_key])

            return compose

        self.plain: dict[int, Handle] = _Composed(plain)
        self.faulted: dict[int, Handle] = _Composed(layered(faults.layer))
        self.throttled: dict[int, Handle] = _Composed(layered(quotas.layer))
