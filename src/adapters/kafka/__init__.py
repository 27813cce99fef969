"""The Kafka wire protocol over Trio: framing, codec, handler registry and the TCP server."""

from .context import BrokerContext, Endpoint
from .server import ServerLimits, serve

__all__ = ["BrokerContext", "Endpoint", "ServerLimits", "serve"]
