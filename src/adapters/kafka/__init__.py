"""The Kafka wire protocol over Trio: framing, codec, handler registry and the TCP server."""

from .connection.limits import ServerLimits
from .connection.server import serve
from .context import BrokerContext
from .request_context import Endpoint
from .services import BrokerServices

__all__ = ["BrokerContext", "BrokerServices", "Endpoint", "ServerLimits", "serve"]
