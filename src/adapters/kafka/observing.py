"""The observer when nothing collects metrics, and how the hot paths tell it apart (a module of its
own: the rooms may import it, not the services)."""

from __future__ import annotations

from trafka.domain.errors import ErrorCode
from trafka.domain.ports import BrokerObserver


class UnobservedBroker:
    """The `BrokerObserver` when nothing collects metrics."""

    def connection_opened(self, listener: str) -> None:
        pass

    def connection_closed(self, listener: str) -> None:
        pass

    def request_completed(self, api: str, version: int, seconds: float) -> None:
        pass

    def partition_produced(self, topic: str, error: ErrorCode, records: int, size: int) -> None:
        pass

    def partition_fetched(self, topic: str, error: ErrorCode, size: int) -> None:
        pass


def observed(observer: BrokerObserver) -> BrokerObserver | None:
    """The observer, or None when nothing collects metrics: the Produce lane then skips its calls
    per request (two no-op calls)."""
    return None if type(observer) is UnobservedBroker else observer
