"""Client-side helpers shared by the integration suites: client logs kept out of the test output,
unique names, an aiokafka admin client, and the confluent-kafka (librdkafka) calls several suites
make to create topics, produce and read partitions back.

Every wait is bounded by TIMEOUT, which a passing test never reaches.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Iterator

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.waiting import eventually

TIMEOUT = 15.0


# -- client logs -----------------------------------------------------------------------------------


@contextlib.contextmanager
def client_log_to_file(logger_name: str, path) -> Iterator[logging.Logger]:
    """Send the `logger_name` logger's warnings to the file `path` only, never to the test output;
    the logger is put back as it was on the way out. Yields the logger (librdkafka's `logger`)."""
    logger = logging.getLogger(logger_name)
    handler = logging.FileHandler(path)
    saved = logger.propagate, logger.level
    logger.propagate = False
    logger.setLevel(logging.WARNING)
    logger.addHandler(handler)
    try:
        yield logger
    finally:
        logger.removeHandler(handler)
        handler.close()
        logger.propagate, logger.level = saved


def client_log_fixture(logger_name: str, autouse: bool = False):
    """A module-scoped fixture that holds `client_log_to_file` open for the module's tests, in a
    `client.log` of its own; assign it to a module-level name, which becomes the fixture's name."""

    @pytest.fixture(scope="module", autouse=autouse)
    def client_log(tmp_path_factory) -> Iterator[logging.Logger]:
        with client_log_to_file(logger_name, tmp_path_factory.mktemp(logger_name) / "client.log") as logger:
            yield logger

    return client_log


# -- names -----------------------------------------------------------------------------------------


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


# -- aiokafka --------------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def aiokafka_admin(bootstrap: str) -> AsyncIterator[AIOKafkaAdminClient]:
    """A started AIOKafkaAdminClient, closed on the way out."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10_000)
    await admin.start()
    try:
        yield admin
    finally:
        await admin.close()


# -- confluent-kafka -------------------------------------------------------------------------------


def confluent_admin(bootstrap: str, logger: logging.Logger | None = None) -> AdminClient:
    """An AdminClient logging to `logger`, or silent without one.

    Keep it referenced until its futures have resolved: a collected client cancels its requests.
    """
    conf: dict = {"bootstrap.servers": bootstrap}
    if logger is not None:
        conf["logger"] = logger
    else:
        conf["log_level"] = 0
    return AdminClient(conf)


def create_topic(
    bootstrap: str,
    name: str,
    partitions: int,
    configs: dict[str, str] | None = None,
    *,
    logger: logging.Logger | None = None,
) -> None:
    """Create `name` with `partitions` partitions (replication factor 1), failing unless it succeeds."""
    admin = confluent_admin(bootstrap, logger)  # referenced until the result is in (see confluent_admin)
    futures = admin.create_topics(
        [NewTopic(name, num_partitions=partitions, replication_factor=1, config=configs or {})],
        operation_timeout=TIMEOUT,
        request_timeout=TIMEOUT,
    )
    assert futures[name].result(TIMEOUT) is None


def confluent_producer(bootstrap: str, **extra) -> Producer:
    """A silent producer with acks=all and no compression unless `extra` says otherwise."""
    return Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": "all",
            "linger.ms": 5,
            "log_level": 0,
            "compression.type": "none",
            **extra,
        }
    )


def produce_batches(
    bootstrap: str, topic: str, batches: list[list[tuple[int, bytes | None, bytes]]], **extra
) -> list[tuple[int, int, bytes | None, bytes]]:
    """Produce each inner list of (partition, key, value) as one flush (so as one or a few batches);
    return every delivery report as (partition, offset, key, value), failing on any error or missing
    report. `extra` is producer configuration."""
    reports: list[tuple[int, int, bytes | None, bytes]] = []
    errors: list = []

    def on_delivery(err, msg) -> None:
        if err is not None:
            errors.append(err)
        else:
            reports.append((msg.partition(), msg.offset(), msg.key(), msg.value()))

    producer = confluent_producer(bootstrap, **extra)
    sent = 0
    for batch in batches:
        for partition, key, value in batch:
            producer.produce(topic, value=value, key=key, partition=partition, on_delivery=on_delivery)
        sent += len(batch)
        assert producer.flush(TIMEOUT) == 0, "delivery reports did not all arrive in time"
    assert not errors, errors
    assert len(reports) == sent
    return reports


def read_partition(
    bootstrap: str, topic: str, partition: int, start: int, count: int
) -> list[tuple[int, bytes | None, bytes]]:
    """`count` records from `start` with assign(); (offset, key, value) in the order consumed."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique("reader"),
            "enable.auto.commit": False,
            "log_level": 0,
            "fetch.wait.max.ms": 100,
        }
    )
    out: list[tuple[int, bytes | None, bytes]] = []
    try:
        consumer.assign([TopicPartition(topic, partition, start)])

        def read() -> bool:
            if len(out) >= count:
                return True
            for message in consumer.consume(count - len(out), timeout=0.5):
                if message.error():
                    raise KafkaException(message.error())
                out.append((message.offset(), message.key(), message.value()))
            return len(out) >= count

        # Up to `count` records: what the partition holds within TIMEOUT (callers ask for more than
        # they expect to prove there is nothing beyond it, and compare what came back).
        with contextlib.suppress(AssertionError):
            eventually(
                read, TIMEOUT, what=f"{count} records of {topic}[{partition}]", interval=0, state=lambda: len(out)
            )
    finally:
        consumer.close()
    return out


def consume_in_group(bootstrap: str, topic: str, count: int, **config) -> list[bytes]:
    """Values of `count` records read by a consumer in a new group (subscribe, poll, commit), with
    librdkafka settings `config` (security ones, say); an error the client reports is raised."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": unique("g"), "auto.offset.reset": "earliest", **config}
    )
    consumer.subscribe([topic])
    seen: list[bytes] = []

    def read() -> bool:
        message = consumer.poll(0.5)
        if message is not None:
            if message.error():
                raise KafkaException(message.error())
            seen.append(message.value())
        return len(seen) >= count

    try:
        eventually(read, TIMEOUT, what=f"{count} records of {topic} in a group", interval=0, state=lambda: len(seen))
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    return seen
