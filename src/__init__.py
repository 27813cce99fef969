"""trafka: a Kafka-compatible broker on Trio, and a real-on-the-wire Kafka for tests.

The public face, kept small and stable:

- `trafka.__version__`
- `trafka.Broker`: an embeddable broker in a background thread (`with trafka.Broker() as broker:`).
- `trafka.open_broker`: the same from Trio code (`async with trafka.open_broker() as broker:`).
- `trafka.Cluster`: several simulated brokers in one process over one store (`trafka.Cluster(brokers=3)`).
- `trafka.testing`: what tests use (the pytest fixtures `kafka_broker` and `kafka_broker_session`
  are registered by the installed package, no conftest needed).

Importing `trafka` starts nothing and imports the broker itself only when one of these is used.
Everything else (`trafka.domain`, `trafka.adapters`, `trafka.app`) is internal and may change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trafka._version import __version__

__all__ = ["Broker", "Cluster", "__version__", "open_broker", "testing"]

if TYPE_CHECKING:
    from trafka import testing
    from trafka.app.embedded import Broker, Cluster, open_broker


def __getattr__(name: str) -> Any:
    # Lazy, so `import trafka` stays cheap for code that only wants the version or the Spark source.
    if name in ("Broker", "Cluster", "open_broker"):
        import sys

        embedded = sys.modules.get("trafka.app.embedded")
        if embedded is not None:
            return getattr(embedded, name)
        import gc

        collecting = gc.isenabled()
        gc.disable()  # the broker's modules live as long as the process: no collection walks them (ADR 110)
        try:
            from trafka._attrs_code import install

            install()  # attrs' code for trafka's classes from the cache (ADR 128)
            from trafka.app import embedded

            return getattr(embedded, name)  # the package loads its modules on this first attribute
        finally:
            if gc.get_freeze_count() == 0:
                # What the import allocated, moved to the oldest generation without a walk (freeze, then
                # unfreeze): enabled with ~100,000 young objects, the collector's next gen-0 pass walked
                # them all (about 25 ms of a first Broker()); a full collection still sees them (ADR 128)
                gc.freeze()
                gc.unfreeze()
            if collecting:
                gc.enable()
    if name == "testing":
        import importlib

        return importlib.import_module(".testing", __name__)
    raise AttributeError(f"module 'trafka' has no attribute {name!r}")
