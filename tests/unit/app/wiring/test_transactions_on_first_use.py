"""ADR 124: the transaction coordinator is built at its first use, or at start when the transaction log
holds transactions (then recovered at start, as before); a client sees the same answers either way."""

from __future__ import annotations

from kafka.record.default_records import DefaultRecordBatchBuilder

from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.errors import ErrorCode
from trafka.domain.topics import TopicPartition
from trafka.domain.transactions import TxnMetadata, TxnState

NOW = 1_700_000_000_000
TP = TopicPartition("t", 0)


def memory_broker():
    settings = load_settings(overrides={"storage": {"kind": "memory"}})
    adapters = default_adapters(settings)
    return settings, adapters


def transactional_batch(producer_id: int, epoch: int) -> bytes:
    builder = DefaultRecordBatchBuilder(2, 0, True, producer_id, epoch, 0, 1 << 20)
    builder.append(0, timestamp=NOW, key=None, value=b"v", headers=[])
    return bytes(builder.build())


def test_nothing_recorded_nothing_built_until_init_producer_id():
    ctx = bootstrap(*memory_broker())
    services = ctx.services
    assert services.transactions_built is None
    txn = services.transactions.init_producer_id("tid", 60_000, NOW)
    assert services.transactions_built is services.transactions
    assert services.transactions.coordinator.get("tid") is txn


def test_a_transactional_batch_before_any_transactional_request_is_answered_as_before():
    """The produce path's check builds the coordinator, which knows no such producer (as a coordinator
    built at start answered), and then holds the check itself."""
    ctx = bootstrap(*memory_broker())
    services = ctx.services
    services.catalog.create("t", 1, 1)
    produced = services.replicas.produce(TP, transactional_batch(7, 0), NOW, "tid")
    assert produced.error is ErrorCode.INVALID_PRODUCER_ID_MAPPING
    built = services.transactions_built
    assert built is not None
    assert services.replicas.admission.transaction_check == built.coordinator.check_produce


def test_a_recorded_transaction_builds_the_coordinator_at_start_and_is_recovered_then():
    settings, adapters = memory_broker()
    adapters.transaction_store.record(
        TxnMetadata("tid", 1, 0, 60_000, TxnState.PREPARE_COMMIT, started_ms=NOW - 10, updated_ms=NOW - 10)
    )
    ctx = bootstrap(settings, adapters)
    built = ctx.services.transactions_built
    assert built is not None
    recovered = built.coordinator.get("tid")
    assert recovered is not None and recovered.state is TxnState.COMPLETE_COMMIT
