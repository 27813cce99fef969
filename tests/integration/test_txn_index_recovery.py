"""The `.txnindex` rebuilt by recovery, with a real broker process and real transactional clients:
after a kill -9 the broker rebuilds the aborted transaction index from the control records (as
Kafka's LogSegment.recover does), byte for byte as it wrote it, so read_committed consumers keep
skipping aborted records, including those of a transaction the kill interrupted."""

from __future__ import annotations

import signal

from confluent_kafka import Producer

from .broker import BrokerProcess
from .test_transactions import _create, _read


def _indexes(partition_dir) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(partition_dir.glob("*.txnindex"))}


def test_a_lost_txnindex_is_rebuilt_after_kill_9_and_read_committed_still_skips_aborted_records(tmp_path):
    data = tmp_path / "logs"
    args = ["--data-dir", str(data)]
    broker = BrokerProcess(args).start()
    _create(broker.bootstrap, "rebuilt")
    producer = Producer(
        {
            "bootstrap.servers": broker.bootstrap,
            "transactional.id": "rebuilt-tid",
            "transaction.timeout.ms": 2000,
            "log_level": 0,
        }
    )
    producer.init_transactions(15)
    producer.begin_transaction()
    producer.produce("rebuilt", b"committed", partition=0)
    producer.commit_transaction(15)
    producer.begin_transaction()
    for i in range(3):
        producer.produce("rebuilt", b"aborted-%d" % i, partition=0)
    producer.flush(15)
    producer.abort_transaction(15)
    producer.begin_transaction()
    producer.produce("rebuilt", b"interrupted", partition=0)
    producer.flush(15)
    broker.stop(signal.SIGKILL)  # mid transaction
    del producer

    broker = BrokerProcess(args).start()
    plain = Producer({"bootstrap.servers": broker.bootstrap, "log_level": 0})
    plain.produce("rebuilt", b"later", partition=0)
    assert plain.flush(10) == 0
    # the interrupted transaction is aborted after its 2 s timeout; read_committed then moves past it
    assert _read(broker.bootstrap, "rebuilt", "read_committed", 2, wait=30) == [b"committed", b"later"]
    written = _indexes(data / "rebuilt-0")
    assert sum(len(entries) for entries in written.values()) == 2 * 34  # the abort and the timed-out one

    broker.stop(signal.SIGKILL)
    for name in written:
        (data / "rebuilt-0" / name).unlink()
    broker = BrokerProcess(args).start()
    try:
        assert _indexes(data / "rebuilt-0") == written
        assert _read(broker.bootstrap, "rebuilt", "read_committed", 2) == [b"committed", b"later"]
        assert _read(broker.bootstrap, "rebuilt", "read_uncommitted", 6) == [
            b"committed",
            b"aborted-0",
            b"aborted-1",
            b"aborted-2",
            b"interrupted",
            b"later",
        ]
    finally:
        assert broker.stop() == 0, broker.log()
