"""Transactions V2 (KIP-890 part 2) and WriteTxnMarkers on the wire, against the real server on the
filesystem store, with kafka-python's protocol classes: what a Kafka 4.x Java or franz-go producer
sends when `transaction.version` 2 is finalized, and what `kafka-transactions abort` sends."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from kafka.protocol.admin import (
    DescribeProducersRequest,
    DescribeProducersResponse,
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
)
from kafka.protocol.consumer import ListOffsetsRequest, ListOffsetsResponse, OffsetFetchRequest, OffsetFetchResponse
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.producer import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    EndTxnRequest,
    EndTxnResponse,
    InitProducerIdRequest,
    InitProducerIdResponse,
    ProduceRequest,
    ProduceResponse,
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
)
from kafka.protocol.producer.transaction import WriteTxnMarkersRequest, WriteTxnMarkersResponse
from kafka.record.default_records import DefaultRecordBatchBuilder

from .broker import BrokerProcess
from .wire import WireClient

NONE, INVALID_PRODUCER_EPOCH, INVALID_TXN_STATE, PRODUCER_FENCED = 0, 47, 48, 90


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    broker = BrokerProcess(["--data-dir", str(tmp_path_factory.mktemp("logs"))]).start()
    yield broker
    assert broker.stop() == 0, broker.log()


def _create(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(10)


def _batch(pid: int, epoch: int, sequence: int, values: list[bytes]) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=0,
        is_transactional=True,
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=sequence,
        batch_size=1 << 20,
    )
    for i, value in enumerate(values):
        builder.append(i, timestamp=None, key=None, value=value, headers=[])
    return bytes(builder.build())


def _produce(client: WireClient, version: int, tid: str, topic: str, records: bytes) -> int:
    Topic = ProduceRequest.TopicProduceData
    request = ProduceRequest[version](
        transactional_id=tid,
        acks=-1,
        timeout_ms=5000,
        topic_data=[Topic(name=topic, partition_data=[Topic.PartitionProduceData(index=0, records=records)])],
    )
    return client.request(request, ProduceResponse, version).responses[0].partition_responses[0].error_code


def _init(client: WireClient, tid: str, timeout_ms: int = 60_000) -> tuple[int, int]:
    request = InitProducerIdRequest[5](
        transactional_id=tid, transaction_timeout_ms=timeout_ms, producer_id=-1, producer_epoch=-1
    )
    response = client.request(request, InitProducerIdResponse, 5)
    assert response.error_code == NONE
    return response.producer_id, response.producer_epoch


def _end(client: WireClient, tid: str, pid: int, epoch: int, commit: bool, version: int = 5):
    request = EndTxnRequest[version](transactional_id=tid, producer_id=pid, producer_epoch=epoch, committed=commit)
    response = client.request(request, EndTxnResponse, version)
    return response.error_code, getattr(response, "producer_id", None), getattr(response, "producer_epoch", None)


def _stable_offset(client: WireClient, topic: str) -> int:
    Topic = ListOffsetsRequest.ListOffsetsTopic
    request = ListOffsetsRequest[5](
        replica_id=-1,
        isolation_level=1,
        topics=[Topic(name=topic, partitions=[Topic.ListOffsetsPartition(partition_index=0, timestamp=-1)])],
    )
    return client.request(request, ListOffsetsResponse, 5).topics[0].partitions[0].offset


def _describe(client: WireClient, tid: str):
    request = DescribeTransactionsRequest[0](transactional_ids=[tid])
    return client.request(request, DescribeTransactionsResponse, 0).transaction_states[0]


def test_a_fresh_log_dir_finalizes_transaction_version_2_as_kafka_42(broker):
    with WireClient(broker.bootstrap) as client:
        response = client.request(
            ApiVersionsRequest[4](client_software_name="trafka-tests", client_software_version="1"),
            ApiVersionsResponse,
            4,
        )
    supported = {f.name: (f.min_version, f.max_version) for f in response.supported_features}
    finalized = {f.name: f.max_version_level for f in response.finalized_features}
    assert supported["transaction.version"] == (0, 2) and finalized["transaction.version"] == 2
    served = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
    assert served[26] == (0, 5) and served[27] == (1, 2) and served[0][1] >= 12 and served[28][1] >= 5


def test_produce_v12_txn_offset_commit_v5_and_end_txn_v5_without_add_requests(broker, topic_name):
    _create(broker.bootstrap, topic_name)
    tid = f"{topic_name}-tv2"
    with WireClient(broker.bootstrap) as client:
        pid, epoch = _init(client, tid)
        assert _produce(client, 12, tid, topic_name, _batch(pid, epoch, 0, [b"one", b"two"])) == NONE
        assert _stable_offset(client, topic_name) == 0  # held by the open transaction
        Topic = TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic
        commit = TxnOffsetCommitRequest[5](
            transactional_id=tid,
            group_id=f"{topic_name}-g",
            producer_id=pid,
            producer_epoch=epoch,
            generation_id=-1,
            member_id="",
            group_instance_id=None,
            topics=[
                Topic(
                    name=topic_name,
                    partitions=[
                        Topic.TxnOffsetCommitRequestPartition(
                            partition_index=0, committed_offset=7, committed_leader_epoch=-1, committed_metadata=""
                        )
                    ],
                )
            ],
        )
        committed = client.request(commit, TxnOffsetCommitResponse, 5)
        assert committed.topics[0].partitions[0].error_code == NONE  # no AddOffsetsToTxn
        described = _describe(client, tid)
        assert described.transaction_state == "Ongoing"
        # the group's offsets partition joined with the commit, as Kafka lists it (ADR 136)
        assert [(t.topic, t.partitions) for t in described.topics] == [("__consumer_offsets", [0]), (topic_name, [0])]
        assert _end(client, tid, pid, epoch, True) == (NONE, pid, epoch + 1)
        assert _stable_offset(client, topic_name) == 3  # two records and the marker
        assert _end(client, tid, pid, epoch, True) == (NONE, pid, epoch + 1)  # a retry: the same answer
        assert _end(client, tid, pid, epoch, False)[0] == INVALID_TXN_STATE  # a retry the other way
        described = _describe(client, tid)
        assert (described.transaction_state, described.producer_epoch) == ("CompleteCommit", epoch + 1)
        Group = OffsetFetchRequest.OffsetFetchRequestTopic
        fetched = client.request(
            OffsetFetchRequest[7](
                group_id=f"{topic_name}-g", topics=[Group(name=topic_name, partition_indexes=[0])], require_stable=True
            ),
            OffsetFetchResponse,
            7,
        )
        assert fetched.topics[0].partitions[0].committed_offset == 7
        Producers = DescribeProducersRequest.TopicRequest
        producers = client.request(
            DescribeProducersRequest[0](topics=[Producers(name=topic_name, partition_indexes=[0])]),
            DescribeProducersResponse,
            0,
        )
        (active,) = producers.topics[0].partitions[0].active_producers
        assert (active.producer_id, active.producer_epoch, active.current_txn_start_offset) == (pid, epoch + 1, -1)
        # the old epoch is fenced; the new one starts its sequences at 0
        assert _produce(client, 12, tid, topic_name, _batch(pid, epoch, 2, [b"zombie"])) == INVALID_PRODUCER_EPOCH
        assert _produce(client, 12, tid, topic_name, _batch(pid, epoch + 1, 0, [b"three"])) == NONE
        assert _end(client, tid, pid, epoch, False)[0] == PRODUCER_FENCED
        assert _end(client, tid, pid, epoch + 1, False) == (NONE, pid, epoch + 2)
        assert _end(client, tid, pid, epoch + 2, True)[0] == INVALID_TXN_STATE  # nothing to commit
        assert _end(client, tid, pid, epoch + 2, False) == (NONE, pid, epoch + 3)  # an empty abort bumps


def test_a_v1_producer_keeps_its_epoch_on_the_same_broker(broker, topic_name):
    _create(broker.bootstrap, topic_name)
    tid = f"{topic_name}-tv1"
    with WireClient(broker.bootstrap) as client:
        pid, epoch = _init(client, tid)
        assert _produce(client, 11, tid, topic_name, _batch(pid, epoch, 0, [b"x"])) == 120  # TRANSACTION_ABORTABLE
        request = AddPartitionsToTxnRequest[3](
            v3_and_below_transactional_id=tid,
            v3_and_below_producer_id=pid,
            v3_and_below_producer_epoch=epoch,
            v3_and_below_topics=[AddPartitionsToTxnRequest.AddPartitionsToTxnTopic(name=topic_name, partitions=[0])],
        )
        client.request(request, AddPartitionsToTxnResponse, 3)
        assert _produce(client, 11, tid, topic_name, _batch(pid, epoch, 0, [b"x"])) == NONE
        assert _end(client, tid, pid, epoch, True, version=4)[0] == NONE
        assert _describe(client, tid).producer_epoch == epoch
        assert _stable_offset(client, topic_name) == 2


def test_kafka_transactions_abort_ends_a_hanging_transaction(broker, topic_name):
    """As `kafka-transactions abort --topic T --partition 0 --start-offset N`: the producer's id and epoch
    from DescribeProducers, then WriteTxnMarkers with an abort marker; the last stable offset moves."""
    _create(broker.bootstrap, topic_name)
    tid = f"{topic_name}-hang"
    with WireClient(broker.bootstrap) as client:
        pid, epoch = _init(client, tid)
        assert _produce(client, 12, tid, topic_name, _batch(pid, epoch, 0, [b"hanging"])) == NONE
        assert _stable_offset(client, topic_name) == 0
        Marker = WriteTxnMarkersRequest.WritableTxnMarker
        Topic = Marker.WritableTxnMarkerTopic

        def markers(version: int, epoch: int, **extra):
            request = WriteTxnMarkersRequest[version](
                markers=[
                    Marker(
                        producer_id=pid,
                        producer_epoch=epoch,
                        transaction_result=False,
                        topics=[
                            Topic(name=topic_name, partition_indexes=[0]),
                            Topic(name="nope", partition_indexes=[0]),
                        ],
                        coordinator_epoch=0,
                        **extra,
                    )
                ]
            )
            response = client.request(request, WriteTxnMarkersResponse, version)
            (result,) = response.markers
            assert result.producer_id == pid
            return {(t.name, p.partition_index): p.error_code for t in result.topics for p in t.partitions}

        # a TV2 marker must carry an epoch newer than the batches' (KIP-1228): refused, nothing written
        assert markers(2, epoch, transaction_version=2)[(topic_name, 0)] == INVALID_PRODUCER_EPOCH
        assert _stable_offset(client, topic_name) == 0
        assert markers(1, epoch) == {(topic_name, 0): NONE, ("nope", 0): 3}  # UNKNOWN_TOPIC_OR_PARTITION
        assert _stable_offset(client, topic_name) == 2
