"""The Kafka wire protocol over Trio: framing, codec, handler registry and the TCP server.

kafka-python 3.0.12 builds its protocol classes (and ours, `wire/messages`, through its loader) from
JSON read with `importlib.resources`' legacy `read_text`/`open_text`, which warn DeprecationWarning
on Python 3.11+. Every class is built while this package's modules import, so that warning is ignored
here, around those imports only: a user's suite run with `-W error` is not failed by a dependency's
deprecation (ADR 71 removes the dependency from the codec)."""

import warnings

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", r"(read|open)_text is deprecated", DeprecationWarning)
    import kafka  # noqa: F401  (its package imports every protocol class it has)

    from .connection.server import ServerLimits, serve
    from .context import BrokerContext
    from .request_context import Endpoint

__all__ = ["BrokerContext", "Endpoint", "ServerLimits", "serve"]
