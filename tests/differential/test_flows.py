"""Scenarios with state, side by side: produce errors on real topics (invalid records, oversized
batches, key-less records on a compacted topic), classic group error paths (member id required,
wrong generation, protocol mismatch), and hypothesis-generated topic configs."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.consumer import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from kafka.protocol.metadata import MetadataRequest, MetadataResponse
from kafka.protocol.producer import ProduceRequest, ProduceResponse

from tests.batches import make_batch
from tests.waiting import eventually

from .compare import Pair, Wire, compare

# The first test to ask for `apache_kafka` waits for Maven and Kafka's start (ADR 63).
pytestmark = pytest.mark.timeout(900)


def _create(pair: Pair, name: str, partitions: int = 1, configs: dict[str, str] | None = None) -> None:
    """The same topic on both brokers, created and led before the scenario."""

    def create(node):
        topic = CreateTopicsRequest.CreatableTopic(
            name=name,
            num_partitions=partitions,
            replication_factor=1,
            assignments=[],
            configs=[
                CreateTopicsRequest.CreatableTopic.CreatableTopicConfig(name=k, value=v)
                for k, v in (configs or {}).items()
            ],
        )
        with Wire(node.bootstrap) as wire:
            answer = wire.request(
                CreateTopicsRequest[7](topics=[topic], timeout_ms=15000, validate_only=False), CreateTopicsResponse, 7
            )
            assert answer.topics[0].error_code == 0, answer
            request = MetadataRequest[12](
                topics=[MetadataRequest.MetadataRequestTopic(name=name, topic_id=None)],
                allow_auto_topic_creation=False,
            )
            seen: list[object] = []

            def led() -> bool:
                metadata = wire.request(request, MetadataResponse, 12)
                seen[:] = [metadata]
                partitions_led = [p for p in metadata.topics[0].partitions if p.leader_id >= 0]
                return metadata.topics[0].error_code == 0 and len(partitions_led) == partitions

            eventually(led, 30, what=f"every partition of {name} led", interval=0.2, state=lambda: seen)

    pair.each(create)


def _produce(name: str, batch: bytes, partition: int = 0) -> ProduceRequest:
    data = ProduceRequest.TopicProduceData
    return ProduceRequest[11](
        transactional_id=None,
        acks=-1,
        timeout_ms=5000,
        topic_data=[data(name=name, partition_data=[data.PartitionProduceData(index=partition, records=batch)])],
    )


def _now() -> int:
    return int(time.time() * 1000)


def test_produce_to_an_unknown_partition(pair):
    name = f"produce-{uuid.uuid4().hex[:8]}"
    _create(pair, name)
    batch = make_batch([(_now(), b"k", b"v")])
    pair.raw("Produce unknown partition", lambda: _produce(name, batch, partition=5), ProduceResponse, 11)


def test_produce_without_a_key_to_a_compacted_topic(pair):
    name = f"compacted-{uuid.uuid4().hex[:8]}"
    _create(pair, name, configs={"cleanup.policy": "compact"})
    batch = make_batch([(_now(), None, b"no key")])
    pair.raw("Produce key-less to compacted", lambda: _produce(name, batch), ProduceResponse, 11)


def test_produce_a_batch_over_max_message_bytes(pair):
    name = f"small-{uuid.uuid4().hex[:8]}"
    _create(pair, name, configs={"max.message.bytes": "1024"})
    batch = make_batch([(_now(), b"k", b"x" * 4096)])
    pair.raw("Produce over max.message.bytes", lambda: _produce(name, batch), ProduceResponse, 11)


def test_produce_records_in_order_then_offsets(pair):
    name = f"plain-{uuid.uuid4().hex[:8]}"
    _create(pair, name)
    for n in range(3):
        batch = make_batch([(_now(), b"k%d" % n, b"v%d" % n)])
        pair.raw(f"Produce in order {n}", lambda batch=batch: _produce(name, batch), ProduceResponse, 11)


def test_produce_acks_all_above_a_single_replica_min_insync(pair):
    """Kafka's leader checks acks=all against min(min.insync.replicas, replication factor)
    (`Partition.effectiveMinIsr`): a topic of one replica asking for three in sync is written, not
    refused NOT_ENOUGH_REPLICAS."""
    name = f"min-isr-{uuid.uuid4().hex[:8]}"
    _create(pair, name, configs={"min.insync.replicas": "3"})
    batch = make_batch([(_now(), b"k", b"v")])
    kafka, _ = pair.raw("Produce acks=all, min.insync.replicas 3", lambda: _produce(name, batch), ProduceResponse, 11)
    assert kafka.responses[0].partition_responses[0].error_code == 0  # compared equal to trafka's above


def _join(group: str, member_id: str = "", protocol_type: str = "consumer", protocol: str = "range"):
    return JoinGroupRequest[9](
        group_id=group,
        session_timeout_ms=30000,
        rebalance_timeout_ms=30000,
        member_id=member_id,
        group_instance_id=None,
        protocol_type=protocol_type,
        protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name=protocol, metadata=b"")],
        reason=None,
    )


def test_classic_group_error_paths(pair):
    """Join without a member id, join with it, sync, then the errors of a stale or wrong member."""
    group = f"group-{uuid.uuid4().hex[:8]}"
    topic = f"committed-{uuid.uuid4().hex[:8]}"
    _create(pair, topic)
    answers = {}

    def run(node):
        steps = []
        with Wire(node.bootstrap) as wire:
            first = wire.request(_join(group), JoinGroupResponse, 9)
            steps.append(("JoinGroup without member id", first))
            member = first.member_id
            joined = wire.request(_join(group, member), JoinGroupResponse, 9)
            steps.append(("JoinGroup with member id", joined))
            generation = joined.generation_id
            sync = SyncGroupRequest[5](
                group_id=group,
                generation_id=generation,
                member_id=member,
                group_instance_id=None,
                protocol_type="consumer",
                protocol_name="range",
                assignments=[SyncGroupRequest.SyncGroupRequestAssignment(member_id=member, assignment=b"")],
            )
            steps.append(("SyncGroup leader", wire.request(sync, SyncGroupResponse, 5)))
            stale = HeartbeatRequest[4](
                group_id=group, generation_id=generation + 7, member_id=member, group_instance_id=None
            )
            steps.append(("Heartbeat wrong generation", wire.request(stale, HeartbeatResponse, 4)))
            unknown = HeartbeatRequest[4](
                group_id=group, generation_id=generation, member_id="nobody", group_instance_id=None
            )
            steps.append(("Heartbeat unknown member", wire.request(unknown, HeartbeatResponse, 4)))
            commit = OffsetCommitRequest[8](
                group_id=group,
                generation_id_or_member_epoch=generation + 7,
                member_id=member,
                group_instance_id=None,
                topics=[
                    OffsetCommitRequest.OffsetCommitRequestTopic(
                        name="t",
                        partitions=[
                            OffsetCommitRequest.OffsetCommitRequestTopic.OffsetCommitRequestPartition(
                                partition_index=0, committed_offset=1, committed_leader_epoch=-1, committed_metadata=""
                            )
                        ],
                    )
                ],
            )
            steps.append(
                ("OffsetCommit unknown topic, wrong generation", wire.request(commit, OffsetCommitResponse, 8))
            )
            commit.topics[0].name = topic
            steps.append(("OffsetCommit wrong generation", wire.request(commit, OffsetCommitResponse, 8)))
            other = wire.request(_join(group, protocol_type="connect"), JoinGroupResponse, 9)
            steps.append(("JoinGroup protocol type mismatch", other))
        answers[node.name] = steps

    pair.each(run)
    for (step, kafka), (_, trafka) in zip(answers["kafka"], answers["trafka"], strict=True):
        compare(f"Classic group: {step}", kafka, trafka)


CONFIG_VALUES = {
    "cleanup.policy": st.sampled_from(["delete", "compact", "compact,delete", "sometimes"]),
    "retention.ms": st.sampled_from(["-1", "0", "60000", "soon"]),
    "segment.bytes": st.sampled_from(["1048575", "1048576", "104857600"]),  # Kafka 4.1+: at least 1 MiB
    "internal.segment.bytes": st.sampled_from(["100", "small"]),
    "max.message.bytes": st.sampled_from(["0", "1024", "-5"]),
    "min.insync.replicas": st.sampled_from(["1", "2", "0"]),
    "compression.type": st.sampled_from(["producer", "zstd", "brotli"]),
}


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    configs=st.dictionaries(st.sampled_from(sorted(CONFIG_VALUES)), st.just(None), max_size=3).flatmap(
        lambda keys: st.fixed_dictionaries({key: CONFIG_VALUES[key] for key in keys})
    )
)
def test_generated_topic_configs(pair, configs):
    name = f"generated-{uuid.uuid4().hex[:8]}"

    def make():
        topic = CreateTopicsRequest.CreatableTopic(
            name=name,
            num_partitions=1,
            replication_factor=1,
            assignments=[],
            configs=[
                CreateTopicsRequest.CreatableTopic.CreatableTopicConfig(name=k, value=v) for k, v in configs.items()
            ],
        )
        return CreateTopicsRequest[7](topics=[topic], timeout_ms=10000, validate_only=True)

    kafka, trafka = pair.each(lambda node: _send(node, make))
    compare("CreateTopics generated configs", kafka, trafka)


def _validating(prefix: str, configs: dict[str, str]) -> Callable[[], CreateTopicsRequest]:
    """A CreateTopics of one new topic with `configs`, validate only, built afresh for each broker."""
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    Config = CreateTopicsRequest.CreatableTopic.CreatableTopicConfig

    def make():
        entries = [Config(name=k, value=v) for k, v in configs.items()]
        topic = CreateTopicsRequest.CreatableTopic(
            name=name, num_partitions=1, replication_factor=1, assignments=[], configs=entries
        )
        return CreateTopicsRequest[7](topics=[topic], timeout_ms=10000, validate_only=True)

    return make


@pytest.mark.parametrize(
    ("case", "config", "value"),
    [
        ("segment.bytes under 1 MiB", "segment.bytes", "100"),
        ("segment.bytes one under 1 MiB", "segment.bytes", "1048575"),
        # Kafka's tests' way to small segments: an internal topic config, any size
        ("internal.segment.bytes", "internal.segment.bytes", "100"),
    ],
)
def test_segment_bytes_under_a_mebibyte(pair, case, config, value):
    pair.raw(f"CreateTopics {case}", _validating("segments", {config: value}), CreateTopicsResponse, 7)


@pytest.mark.parametrize(
    ("config", "value"),
    [
        ("compression.zstd.level", "-5"),  # KIP-390 (Kafka 3.8): accepted
        ("compression.zstd.level", "23"),
        ("compression.gzip.level", "0"),
        ("compression.lz4.level", "17"),
        ("leader.replication.throttled.replicas", "0:1, 1:1"),
        ("follower.replication.throttled.replicas", " 0:1 , x "),
        ("leader.replication.throttled.replicas", "*"),
        ("local.retention.ms", "-3"),
        ("max.decompressed.message.bytes", "0"),
        ("remote.storage.enable", "true"),  # no tiered storage on either broker
        ("remote.log.copy.disable", "true"),
        ("min.compaction.lag.ms", "9223372036854775807"),  # equal to max.compaction.lag.ms' default: accepted
    ],
)
def test_topic_configs_beyond_what_trafka_acts_on(pair, config, value):
    """Kafka 4.2's topic configs trafka stores and describes without acting on them: accepted and
    refused with Kafka's words, listed with Kafka's defaults."""
    pair.raw(f"CreateTopics {config}={value}", _validating("known", {config: value}), CreateTopicsResponse, 7)


def test_a_minimum_compaction_lag_over_the_maximum(pair):
    lags = {"min.compaction.lag.ms": "2000", "max.compaction.lag.ms": "1000"}
    kafka, _ = pair.raw(
        "CreateTopics min.compaction.lag.ms over max", _validating("lags", lags), CreateTopicsResponse, 7
    )
    assert kafka.topics[0].error_code == 40  # INVALID_CONFIG, compared equal to trafka's with its message


def _send(node, make):
    with Wire(node.bootstrap) as wire:
        return wire.request(make(), CreateTopicsResponse, 7)


@pytest.mark.parametrize("version", [0, 1, 2])
def test_produce_before_v3(pair, version):
    """Kafka 4 serves Produce from v3 but advertises v0 (KAFKA-18659, for librdkafka's sake): v0-2 are
    not served: the connection closes, on both."""
    name = f"old-produce-{uuid.uuid4().hex[:8]}"
    _create(pair, name)
    batch = make_batch([(_now(), b"k", b"v")])

    def make():
        data = ProduceRequest.TopicProduceData
        return ProduceRequest[version](
            acks=-1,
            timeout_ms=5000,
            topic_data=[data(name=name, partition_data=[data.PartitionProduceData(index=0, records=batch)])],
        )

    for node in (pair.kafka, pair.trafka):  # Kafka closes the connection: no answer to compare
        with Wire(node.bootstrap) as wire, pytest.raises(ConnectionError):
            wire.request(make(), ProduceResponse, version)
