"""A real broker on a real, small filesystem that fills up (a 4 MiB tmpfs in a mount namespace of its
own): producers get KAFKA_STORAGE_ERROR, the broker logs one ERROR line naming the log dir, the
partition and the free bytes, nothing acknowledged is lost, and writes resume once space is freed."""

from __future__ import annotations

import shutil

import pytest
from confluent_kafka import Consumer, KafkaError, TopicPartition

from .broker import DATA_DIR_ENV, BrokerProcess
from .clients import confluent_admin, create_topic

MOUNT = 'mount -t tmpfs -o size=4m tmpfs "$0" && exec "$@"'


@pytest.fixture
def small_disk_broker(tmp_path):
    assert shutil.which("unshare"), "util-linux's unshare is needed (Debian's util-linux)"
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    broker = BrokerProcess(
        ["--data-dir", str(mount_point / "logs")],
        env={**DATA_DIR_ENV, "TRAFKA_LOG_LEVEL": "INFO"},
        prefix=["unshare", "--map-root-user", "--mount", "sh", "-c", MOUNT, str(mount_point)],
    ).start()
    yield broker, str(mount_point / "logs")
    broker.stop()


def _produce(bootstrap: str, topic: str, value: bytes, count: int) -> tuple[int, list[KafkaError]]:
    from confluent_kafka import Producer

    producer = Producer(
        {"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0, "message.timeout.ms": 4000, "retries": 0}
    )
    acked, errors = [], []

    def report(err, msg):
        (errors if err else acked).append(err or msg)

    for _ in range(count):
        producer.produce(topic, value, on_delivery=report)
        producer.poll(0)
    producer.flush(30)
    return len(acked), errors


def _count(bootstrap: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "count", "enable.auto.commit": False})
    low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    consumer.close()
    return high - low


def test_a_full_disk_is_reported_once_loses_nothing_acknowledged_and_recovers(small_disk_broker):
    broker, log_dir = small_disk_broker
    create_topic(broker.bootstrap, "filler", 1)
    create_topic(broker.bootstrap, "kept", 1)
    acked_kept, _ = _produce(broker.bootstrap, "kept", b"k" * 100, 10)
    assert acked_kept == 10

    acked, errors = _produce(broker.bootstrap, "filler", b"f" * 50_000, 200)  # 10 MB into 4 MiB
    assert errors and all(e.code() == KafkaError.KAFKA_STORAGE_ERROR for e in errors), errors[:3]
    assert 0 < acked < 200
    assert _count(broker.bootstrap, "filler") == acked  # every acknowledged record, no half batch

    full = [line for line in broker.log().splitlines() if " ERROR " in line]
    assert len(full) == 1, broker.log()
    assert log_dir in full[0] and "filler-0" in full[0] and "bytes free" in full[0]

    admin = confluent_admin(broker.bootstrap)
    admin.delete_topics(["filler"])["filler"].result(15)  # frees the space
    acked_after, errors_after = _produce(broker.bootstrap, "kept", b"k" * 100, 10)
    assert (acked_after, errors_after) == (10, [])
    assert _count(broker.bootstrap, "kept") == 20
    assert any(" INFO " in line and "space again" in line for line in broker.log().splitlines()), broker.log()
    assert broker.stop() == 0, broker.log()


async def test_an_io_error_stops_the_broker_as_kafka_halts_on_its_only_log_dir(tmp_path):
    """EIO through the store's seam: the produce gets KAFKA_STORAGE_ERROR, the broker shuts down
    (run_broker returns), and the log dir is left for recovery (no clean-shutdown marker)."""
    import errno
    import os

    import trio

    import trafka
    from trafka.adapters.filesystem import fileio

    class Failing(fileio.FileIO):
        def write(self, fd, data):
            raise OSError(errno.EIO, "injected I/O error")

    data_dir = str(tmp_path / "logs")
    errors = []
    async with trafka.open_broker(data_dir=data_dir, topics=["t"]) as broker:

        def produce() -> None:
            _, failed = _produce(broker.bootstrap_servers, "t", b"v", 1)
            errors.extend(failed)

        with fileio.injected(Failing()):
            await trio.to_thread.run_sync(produce)
            with trio.fail_after(10):
                await broker.ctx.shutting_down.wait()
    assert [e.code() for e in errors] == [KafkaError.KAFKA_STORAGE_ERROR]
    assert not os.path.exists(os.path.join(data_dir, ".kafka_cleanshutdown"))  # noqa: ASYNC240 (a check after the broker stopped)
