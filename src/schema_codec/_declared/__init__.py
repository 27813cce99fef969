"""The classes `messages` builds at run time from `trafka.kafka_schemas`, declared for mypy only (imported
under TYPE_CHECKING): each a subclass of Any, whose fields are read and set freely, as kafka-python's
classes were to mypy. One per schema file, in three modules (requests, responses, the other records);
`tests/unit/adapters/kafka/test_schema_codec.py` keeps them equal."""

from .records import *  # noqa: F403
from .requests import *  # noqa: F403
from .responses import *  # noqa: F403
