"""Kafka 4.2's own `kafka-transactions` tool (org.apache.kafka.tools.TransactionsCommand, from Maven)
against trafka: a transaction left open by a producer that died is found by describe-producers (and
is no hanging one to find-hanging, the coordinator holding it) and ended by `abort --start-offset`,
which sends WriteTxnMarkers; the last stable offset moves."""

from __future__ import annotations

import subprocess

from tests.kafka.reference import classpath

from .broker import BrokerProcess
from .test_kafka_43_44_wire import _create_topic
from .test_transactions_v2_wire import _batch, _init, _produce, _stable_offset
from .wire import WireClient


def _tool(bootstrap: str, *args: str) -> str:
    command = ["java", "-Xmx256m", "-Dlog4j2.level=warn", "-cp", classpath()]
    command += ["org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server", bootstrap, *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def _producers(bootstrap: str, topic: str) -> dict[int, tuple[int, str]]:
    """describe-producers' table: producer id -> (epoch, CurrentTransactionStartOffset)."""
    lines = _tool(bootstrap, "describe-producers", "--topic", topic, "--partition", "0").strip().splitlines()
    assert lines[0].split() == [
        "ProducerId",
        "ProducerEpoch",
        "LatestCoordinatorEpoch",
        "LastSequence",
        "LastTimestamp",
        "CurrentTransactionStartOffset",
    ]
    return {int(row.split()[0]): (int(row.split()[1]), row.split()[5]) for row in lines[1:]}


def test_kafka_transactions_abort_ends_a_transaction_its_producer_left_open(tmp_path):
    classpath()  # resolved before the transaction starts: the first resolve may take minutes
    broker = BrokerProcess(["--data-dir", str(tmp_path / "logs")]).start()
    try:
        with WireClient(broker.bootstrap) as client:
            assert _create_topic(client, "orders") == 0
            pid, epoch = _init(client, "dead-producer", timeout_ms=900_000)  # no timeout ends it meanwhile
            assert _produce(client, 12, "dead-producer", "orders", _batch(pid, epoch, 0, [b"a", b"b"])) == 0
            assert _stable_offset(client, "orders") == 0  # the producer dies here: the transaction stays open
        assert _producers(broker.bootstrap, "orders") == {pid: (epoch, "0")}
        # Not hanging to find-hanging: the coordinator still holds the transaction with the partition
        # (DescribeTransactions lists it), as on a single broker it always does until a marker is written.
        found = _tool(broker.bootstrap, "find-hanging", "--broker-id", "1", "--max-transaction-timeout", "0")
        assert found.split()[:2] == ["Topic", "Partition"] and "orders" not in found, found
        aborted = _tool(broker.bootstrap, "abort", "--topic", "orders", "--partition", "0", "--start-offset", "0")
        with WireClient(broker.bootstrap) as client:
            assert _stable_offset(client, "orders") == 3, aborted  # two records and the abort marker
        (after_epoch, open_at) = _producers(broker.bootstrap, "orders")[pid]
        assert open_at == "None" and after_epoch >= epoch
    finally:
        assert broker.stop() == 0, broker.log()
