"""KIP-890's transaction versions as Kafka 4.2 serves them: AddPartitionsToTxn v4-5 (the brokers'
batched add and verify), EndTxn v5's bumped producer epoch (transactions V2, ADR 75)."""

from __future__ import annotations

import pytest

from trafka.adapters.kafka.apis import add_partitions_to_txn, end_txn, write_txn_markers
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.errors import ErrorCode
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import AddPartitionsToTxnRequest, EndTxnRequest, WriteTxnMarkersRequest

CLIENT = ClientInfo("test", "127.0.0.1")
Txn = AddPartitionsToTxnRequest.AddPartitionsToTxnTransaction
Topic = AddPartitionsToTxnRequest.AddPartitionsToTxnTopic


@pytest.fixture
def ctx():
    settings = load_settings(overrides={"storage": {"kind": "memory"}})
    ctx = bootstrap(settings, default_adapters(settings))
    ctx.services.catalog.create("t", 2, 1)
    return ctx


def _batch(ctx, version, transactions):
    request = AddPartitionsToTxnRequest[version](transactions=transactions)
    response = add_partitions_to_txn.handle_add_partitions_to_txn(
        ctx.view(add_partitions_to_txn.Uses), request, version, CLIENT
    )
    return {
        r.transactional_id: {
            (t.name, p.partition_index): p.partition_error_code for t in r.topic_results for p in t.results_by_partition
        }
        for r in response.results_by_transaction
    }


@pytest.mark.parametrize("version", [4, 5])
def test_batched_add_then_verify(ctx, version):
    txn = ctx.services.transactions.init_producer_id("a", 60_000, 0)
    pid, epoch = txn.producer_id, txn.producer_epoch
    add = Txn(
        transactional_id="a",
        producer_id=pid,
        producer_epoch=epoch,
        verify_only=False,
        topics=[Topic(name="t", partitions=[0])],
    )
    assert _batch(ctx, version, [add]) == {"a": {("t", 0): ErrorCode.NONE}}
    assert TopicPartition("t", 0) in ctx.services.transactions.coordinator.get("a").partitions
    verify = Txn(
        transactional_id="a",
        producer_id=pid,
        producer_epoch=epoch,
        verify_only=True,
        topics=[Topic(name="t", partitions=[0, 1])],
    )
    not_in = ErrorCode.TRANSACTION_ABORTABLE if version == 5 else ErrorCode.INVALID_TXN_STATE
    assert _batch(ctx, version, [verify]) == {"a": {("t", 0): ErrorCode.NONE, ("t", 1): not_in}}
    assert (
        TopicPartition("t", 1) not in ctx.services.transactions.coordinator.get("a").partitions
    )  # verified, not added
    fenced = Txn(
        transactional_id="a",
        producer_id=pid,
        producer_epoch=epoch - 1,
        verify_only=True,
        topics=[Topic(name="t", partitions=[0])],
    )
    unknown = Txn(
        transactional_id="b",
        producer_id=7,
        producer_epoch=0,
        verify_only=True,
        topics=[Topic(name="t", partitions=[0])],
    )
    assert _batch(ctx, version, [fenced, unknown]) == {
        "a": {("t", 0): ErrorCode.PRODUCER_FENCED},
        "b": {("t", 0): ErrorCode.INVALID_PRODUCER_ID_MAPPING},
    }


def test_batched_versions_are_refused_with_the_top_level_error(ctx):
    request = AddPartitionsToTxnRequest[5](transactions=[])
    refused = add_partitions_to_txn.API.refuse(request, 5, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    assert refused.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED and refused.results_by_transaction == []


def test_end_txn_v5_answers_the_bumped_epoch_and_v4_the_unchanged_one(ctx):
    txn = ctx.services.transactions.init_producer_id("a", 60_000, 0)
    pid, epoch = txn.producer_id, txn.producer_epoch
    ctx.services.transactions.add_partitions("a", pid, epoch, [TopicPartition("t", 0)], 0)
    request = EndTxnRequest[5](transactional_id="a", producer_id=pid, producer_epoch=epoch, committed=True)
    response = end_txn.handle_end_txn(ctx.view(end_txn.Uses), request, 5, CLIENT)
    assert (response.error_code, response.producer_id, response.producer_epoch) == (0, pid, epoch + 1)
    request.producer_epoch = epoch + 2
    response = end_txn.handle_end_txn(ctx.view(end_txn.Uses), request, 5, CLIENT)
    assert (response.error_code, response.producer_id, response.producer_epoch) == (ErrorCode.PRODUCER_FENCED, -1, -1)
    ctx.services.transactions.add_partitions("a", pid, epoch + 1, [TopicPartition("t", 0)], 0)
    request = EndTxnRequest[4](transactional_id="a", producer_id=pid, producer_epoch=epoch + 1, committed=True)
    assert end_txn.handle_end_txn(ctx.view(end_txn.Uses), request, 4, CLIENT).error_code == 0
    assert (txn.producer_id, txn.producer_epoch) == (pid, epoch + 1)


def _markers(version, pid, epoch, **extra):
    Marker = WriteTxnMarkersRequest.WritableTxnMarker
    Topic = Marker.WritableTxnMarkerTopic
    return WriteTxnMarkersRequest[version](
        markers=[
            Marker(
                producer_id=pid,
                producer_epoch=epoch,
                transaction_result=False,
                topics=[Topic(name="t", partition_indexes=[0, 7])],
                coordinator_epoch=0,
                **extra,
            )
        ]
    )


def _errors(response):
    return {(t.name, p.partition_index): p.error_code for m in response.markers for t in m.topics for p in t.partitions}


def test_write_txn_markers_refused_answers_every_partition():
    refused = write_txn_markers.API.refuse(_markers(1, 5, 0), 1, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    assert _errors(refused) == {("t", 0): 31, ("t", 7): 31}
    assert write_txn_markers.API.versions == (1, 2)


def test_write_txn_markers_checks_the_epoch_by_transaction_version(ctx):
    response = write_txn_markers.handle_write_txn_markers(
        ctx.view(write_txn_markers.Uses),
        _markers(2, 5, 3, transaction_version=2),
        2,
        CLIENT,
    )
    assert _errors(response) == {("t", 0): ErrorCode.NONE, ("t", 7): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    same = write_txn_markers.handle_write_txn_markers(
        ctx.view(write_txn_markers.Uses),
        _markers(2, 5, 3, transaction_version=2),
        2,
        CLIENT,
    )
    assert _errors(same)[("t", 0)] == ErrorCode.INVALID_PRODUCER_EPOCH  # TV2: must be newer than 3
    v1 = write_txn_markers.handle_write_txn_markers(ctx.view(write_txn_markers.Uses), _markers(1, 5, 3), 1, CLIENT)
    assert _errors(v1)[("t", 0)] == ErrorCode.NONE  # older versions: at least as new
    older = write_txn_markers.handle_write_txn_markers(ctx.view(write_txn_markers.Uses), _markers(1, 5, 2), 1, CLIENT)
    assert _errors(older)[("t", 0)] == ErrorCode.INVALID_PRODUCER_EPOCH
