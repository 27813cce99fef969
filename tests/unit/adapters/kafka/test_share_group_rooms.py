"""ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch, ShareAcknowledge and the rooms that see share
groups (ListGroups, DeleteGroups, the GROUP config resource), on a memory-store broker; and the
message classes defined from Kafka's schemas, checked against byte layouts written out by hand."""

from __future__ import annotations

import struct
import uuid

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.record.memory_records import MemoryRecordsBuilder

from trafka.adapters.kafka.api import Parked
from trafka.adapters.kafka.apis import (
    delete_groups,
    list_groups,
    share_acknowledge,
    share_fetch,
    share_group_describe,
    share_group_heartbeat,
)
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.errors import ErrorCode
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import (
    DeleteGroupsRequest,
    ListGroupsRequest,
    ShareAcknowledgeRequest,
    ShareFetchRequest,
    ShareFetchResponse,
    ShareGroupDescribeRequest,
    ShareGroupHeartbeatRequest,
    ShareGroupHeartbeatResponse,
)

CLIENT = ClientInfo("client-1", "127.0.0.1")


@pytest.fixture
def ctx():
    settings = load_settings(overrides={"storage": {"kind": "memory"}})
    ctx = bootstrap(settings, default_adapters(settings))
    ctx.services.catalog.create("t", 1, 1)
    ctx.services.share.groups.configs["g"] = {"share.auto.offset.reset": "earliest"}
    return ctx


def produce(ctx, n: int, per_batch: int = 1) -> None:
    """`n` records, `per_batch` to a log batch (one by default: the batch-optimized acquire mode then
    acquires exactly MaxRecords)."""
    for start in range(0, n, per_batch):
        builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
        for i in range(start, min(n, start + per_batch)):
            builder.append(timestamp=1, key=None, value=b"v%d" % i, headers=[])
        builder.close()
        assert ctx.services.replicas.produce(TopicPartition("t", 0), bytes(builder.buffer()), 1).error is ErrorCode.NONE


def heartbeat(ctx, member="m1", epoch=0, topics=("t",)):
    request = ShareGroupHeartbeatRequest[1](
        group_id="g", member_id=member, member_epoch=epoch, subscribed_topic_names=list(topics) if epoch == 0 else None
    )
    return share_group_heartbeat.API.handle(ctx, request, 1, CLIENT)


def fetch(
    ctx, member="m1", epoch=0, acks=(), max_records=10, forget=False, version=1, client=CLIENT, mode=None, max_wait_ms=0
):
    topic_id = ctx.services.catalog.get("t").topic_id
    T = ShareFetchRequest.FetchTopic
    P = T.FetchPartition
    B = P.AcknowledgementBatch
    partitions = [
        P(
            partition_index=0,
            acknowledgement_batches=[B(first_offset=f, last_offset=last, acknowledge_types=[k]) for f, last, k in acks],
        )
    ]
    extra = {} if mode is None else {"share_acquire_mode": mode}
    request = ShareFetchRequest[version](
        group_id="g",
        member_id=member,
        share_session_epoch=epoch,
        max_wait_ms=max_wait_ms,
        min_bytes=1,
        max_bytes=1 << 20,
        max_records=max_records,
        batch_size=max_records,
        topics=[T(topic_id=topic_id, partitions=partitions)],
        forgotten_topics_data=[],
        **extra,
    )
    return share_fetch.API.handle(ctx, request, version, client)


def acknowledge(ctx, member="m1", epoch=1, acks=()):
    topic_id = ctx.services.catalog.get("t").topic_id
    T = ShareAcknowledgeRequest.AcknowledgeTopic
    P = T.AcknowledgePartition
    B = P.AcknowledgementBatch
    request = ShareAcknowledgeRequest[1](
        group_id="g",
        member_id=member,
        share_session_epoch=epoch,
        topics=[
            T(
                topic_id=topic_id,
                partitions=[
                    P(
                        partition_index=0,
                        acknowledgement_batches=[
                            B(first_offset=f, last_offset=last, acknowledge_types=[k]) for f, last, k in acks
                        ],
                    )
                ],
            )
        ],
    )
    return share_acknowledge.API.handle(ctx, request, 1, CLIENT)


def acquired(response):
    return [
        (a.first_offset, a.last_offset, a.delivery_count)
        for t in response.responses
        for p in t.partitions
        for a in p.acquired_records
    ]


def test_two_members_acquire_disjoint_ranges_and_accept_them(ctx):
    assert heartbeat(ctx).error_code == ErrorCode.NONE
    assert heartbeat(ctx, "m2").error_code == ErrorCode.NONE
    produce(ctx, 10)
    first = fetch(ctx, max_records=4)
    assert first.acquisition_lock_timeout_ms == 30_000
    assert acquired(first) == [(0, 3, 1)]
    assert first.responses[0].partitions[0].records  # the stored batch holding them
    assert acquired(fetch(ctx, "m2", max_records=100)) == [(4, 9, 1)]
    # m1 accepts 0-1, releases 2-3 in its next fetch: released records come back to whoever fetches next
    again = fetch(ctx, epoch=1, acks=[(0, 1, 1), (2, 3, 2)])
    assert again.responses[0].partitions[0].acknowledge_error_code == ErrorCode.NONE
    assert acquired(again) == [(2, 3, 2)]
    wrong = acknowledge(ctx, "m2", epoch=1, acks=[(2, 2, 1)])  # m1 holds 2
    assert wrong.responses[0].partitions[0].error_code == ErrorCode.INVALID_RECORD_STATE
    ok = acknowledge(ctx, "m2", epoch=2, acks=[(4, 9, 1)])
    assert (ok.error_code, ok.responses[0].partitions[0].error_code) == (ErrorCode.NONE, ErrorCode.NONE)
    sp = ctx.services.share.groups.partitions[("g", TopicPartition("t", 0))]
    assert sp.start_offset == 2


def test_share_session_epochs_on_the_wire(ctx):
    produce(ctx, 1)
    assert fetch(ctx, epoch=5).error_code == ErrorCode.SHARE_SESSION_NOT_FOUND
    assert acknowledge(ctx, epoch=0).error_code == ErrorCode.INVALID_SHARE_SESSION_EPOCH
    assert fetch(ctx).error_code == ErrorCode.NONE
    assert fetch(ctx, epoch=2).error_code == ErrorCode.INVALID_SHARE_SESSION_EPOCH
    closed = fetch(ctx, epoch=-1)  # closes the session, releasing offset 0
    assert closed.error_code == ErrorCode.NONE and acquired(closed) == []
    assert acquired(fetch(ctx, "m2")) == [(0, 0, 2)]


def test_bad_identities_and_renew_without_v2(ctx):
    produce(ctx, 1)
    assert fetch(ctx, member="x" * 37).error_code == ErrorCode.INVALID_REQUEST
    assert acquired(fetch(ctx)) == [(0, 0, 1)]
    renew = fetch(ctx, epoch=1, acks=[(0, 0, 4)])
    assert renew.responses[0].partitions[0].acknowledge_error_code == ErrorCode.INVALID_REQUEST


def test_unknown_topic_ids_are_answered_per_partition(ctx):
    T = ShareFetchRequest.FetchTopic
    request = ShareFetchRequest[1](
        group_id="g",
        member_id="m1",
        share_session_epoch=0,
        max_wait_ms=0,
        min_bytes=1,
        max_bytes=100,
        max_records=1,
        batch_size=1,
        forgotten_topics_data=[],
        topics=[T(topic_id=uuid.uuid4(), partitions=[T.FetchPartition(partition_index=0, acknowledgement_batches=[])])],
    )
    response = share_fetch.API.handle(ctx, request, 1, CLIENT)
    assert response.responses[0].partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_ID


def test_describe_list_and_delete_share_groups(ctx):
    heartbeat(ctx)
    described = share_group_describe.API.handle(
        ctx, ShareGroupDescribeRequest[1](group_ids=["g", "nope", ""], include_authorized_operations=False), 1, CLIENT
    )
    g, nope, empty = described.groups
    assert (g.group_state, g.assignor_name, g.group_epoch, len(g.members)) == ("Stable", "simple", 1, 1)
    assert g.members[0].assignment.topic_partitions[0].topic_name == "t"
    assert g.members[0].client_host == "/127.0.0.1"  # Kafka's InetAddress.toString() of the client's address
    assert nope.error_code == ErrorCode.GROUP_ID_NOT_FOUND and empty.error_code == ErrorCode.INVALID_GROUP_ID
    listed = list_groups.API.handle(ctx, ListGroupsRequest[5](states_filter=[], types_filter=["share"]), 5, CLIENT)
    assert [(x.group_id, x.group_type, x.group_state) for x in listed.groups] == [("g", "share", "Stable")]
    delete = DeleteGroupsRequest[2](groups_names=["g"])
    assert delete_groups.API.handle(ctx, delete, 2, CLIENT).results[0].error_code == ErrorCode.NON_EMPTY_GROUP
    heartbeat(ctx, epoch=-1)
    assert delete_groups.API.handle(ctx, delete, 2, CLIENT).results[0].error_code == ErrorCode.NONE
    assert "g" not in ctx.services.share.groups.coordinator.groups


def test_a_share_group_cannot_take_a_classic_groups_id(ctx):
    ctx.services.groups.coordinator.ensure_group("g")
    assert heartbeat(ctx).error_code == ErrorCode.GROUP_ID_NOT_FOUND


# -- the message classes against byte layouts written out by hand (Kafka's flexible encoding) ---------


def _uvarint(n: int) -> bytes:
    out = b""
    while True:
        byte, n = n & 0x7F, n >> 7
        if n:
            out += bytes([byte | 0x80])
        else:
            return out + bytes([byte])


def _cstr(s: str | None) -> bytes:
    return b"\x00" if s is None else _uvarint(len(s.encode()) + 1) + s.encode()


def _carray(items: list[bytes]) -> bytes:
    return _uvarint(len(items) + 1) + b"".join(items)


@given(
    member=st.text(min_size=1, max_size=20),
    epoch=st.integers(-1, 2**31 - 1),
    topics=st.none() | st.lists(st.text(max_size=10), max_size=3),
)
def test_share_group_heartbeat_request_matches_the_hand_layout(member, epoch, topics):
    request = ShareGroupHeartbeatRequest[1](
        group_id="g", member_id=member, member_epoch=epoch, rack_id=None, subscribed_topic_names=topics
    )
    names = b"\x00" if topics is None else _carray([_cstr(t) for t in topics])
    expected = _cstr("g") + _cstr(member) + struct.pack(">i", epoch) + b"\x00" + names + b"\x00"
    assert bytes(request.encode(version=1)) == expected
    assert ShareGroupHeartbeatRequest.decode(expected, version=1) == request


@given(
    offsets=st.lists(st.tuples(st.integers(0, 2**40), st.integers(0, 100), st.integers(1, 5)), max_size=3),
    records=st.binary(max_size=40),
)
def test_share_fetch_response_matches_the_hand_layout(offsets, records):
    topic_id = uuid.uuid4()
    T = ShareFetchResponse.ShareFetchableTopicResponse
    P = T.PartitionData
    response = ShareFetchResponse[1](
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        acquisition_lock_timeout_ms=30_000,
        responses=[
            T(
                topic_id=topic_id,
                partitions=[
                    P(
                        partition_index=3,
                        error_code=0,
                        error_message=None,
                        acknowledge_error_code=121,
                        acknowledge_error_message=None,
                        current_leader=P.LeaderIdAndEpoch(leader_id=-1, leader_epoch=-1),
                        records=records,
                        acquired_records=[
                            P.AcquiredRecords(first_offset=f, last_offset=f + n, delivery_count=d)
                            for f, n, d in offsets
                        ],
                    )
                ],
            )
        ],
        node_endpoints=[],
    )
    acquired_bytes = _carray([struct.pack(">qqh", f, f + n, d) + b"\x00" for f, n, d in offsets])
    partition = (
        struct.pack(">ih", 3, 0)
        + b"\x00"
        + struct.pack(">h", 121)
        + b"\x00"
        + struct.pack(">ii", -1, -1)
        + b"\x00"
        + _uvarint(len(records) + 1)
        + records
        + acquired_bytes
        + b"\x00"
    )
    expected = (
        struct.pack(">ih", 0, 0)
        + b"\x00"
        + struct.pack(">i", 30_000)
        + _carray([topic_id.bytes + _carray([partition]) + b"\x00"])
        + _carray([])
        + b"\x00"
    )
    assert bytes(response.encode(version=1)) == expected
    decoded = ShareFetchResponse.decode(expected, version=1)
    assert decoded.responses[0].partitions[0].acquired_records == response.responses[0].partitions[0].acquired_records


def test_heartbeat_response_round_trips():
    A = ShareGroupHeartbeatResponse.Assignment
    response = ShareGroupHeartbeatResponse[1](
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        member_id="m",
        member_epoch=3,
        heartbeat_interval_ms=5000,
        assignment=A(topic_partitions=[A.TopicPartitions(topic_id=uuid.uuid4(), partitions=[0, 2])]),
    )
    assert ShareGroupHeartbeatResponse.decode(bytes(response.encode(version=1)), version=1) == response


def test_share_group_offsets_describe_alter_delete(ctx):
    from trafka.adapters.kafka.apis import share_group_offsets as rooms
    from trafka.schema_codec.messages import (
        AlterShareGroupOffsetsRequest,
        DeleteShareGroupOffsetsRequest,
        DescribeShareGroupOffsetsRequest,
    )

    produce(ctx, 10)
    heartbeat(ctx)
    fetch(ctx, max_records=10)
    acknowledge(ctx, acks=[(0, 3, 1), (5, 5, 3)])

    def describe(version=1, topics=None):
        G = DescribeShareGroupOffsetsRequest.DescribeShareGroupOffsetsRequestGroup
        request = DescribeShareGroupOffsetsRequest[version](groups=[G(group_id="g", topics=topics)])
        (group,) = rooms.DESCRIBE.handle(ctx, request, version, CLIENT).groups
        return [(t.topic_name, p.partition_index, p.start_offset, p.lag) for t in group.topics for p in t.partitions]

    assert describe() == [("t", 0, 4, 5)]  # 4 is the first offset not done; 5 of 6 left (offset 5 archived)
    Topic = AlterShareGroupOffsetsRequest.AlterShareGroupOffsetsRequestTopic
    alter = AlterShareGroupOffsetsRequest[0](
        group_id="g",
        topics=[
            Topic(
                topic_name="t",
                partitions=[Topic.AlterShareGroupOffsetsRequestPartition(partition_index=0, start_offset=8)],
            )
        ],
    )
    assert rooms.ALTER.handle(ctx, alter, 0, CLIENT).error_code == ErrorCode.NON_EMPTY_GROUP
    heartbeat(ctx, epoch=-1)
    acknowledge(ctx, epoch=-1)  # the member closes its session: what it held is released
    response = rooms.ALTER.handle(ctx, alter, 0, CLIENT)
    assert (response.error_code, response.responses[0].partitions[0].error_code) == (ErrorCode.NONE, ErrorCode.NONE)
    assert describe() == [("t", 0, 8, 2)]  # nothing in flight from 8: offsets 8 and 9 left
    assert describe(version=0)[0][2] == 8
    DTopic = DeleteShareGroupOffsetsRequest.DeleteShareGroupOffsetsRequestTopic
    delete = DeleteShareGroupOffsetsRequest[0](group_id="g", topics=[DTopic(topic_name="t")])
    assert rooms.DELETE.handle(ctx, delete, 0, CLIENT).error_code == ErrorCode.NONE
    assert describe() == []
    missing = DeleteShareGroupOffsetsRequest[0](group_id="nope", topics=[])
    assert rooms.DELETE.handle(ctx, missing, 0, CLIENT).error_code == ErrorCode.GROUP_ID_NOT_FOUND


def test_the_metrics_show_share_groups(ctx):
    from prometheus_client import generate_latest

    from trafka.adapters.http.metrics import BrokerMetrics
    from trafka.adapters.http.view import BrokerView

    produce(ctx, 10)
    heartbeat(ctx)
    fetch(ctx, max_records=6)
    acknowledge(ctx, acks=[(0, 1, 1), (2, 2, 3)])
    metrics = BrokerMetrics()
    view = BrokerView(
        catalog=ctx.services.catalog,
        replicas=ctx.services.replicas,
        coordinator=ctx.services.groups.coordinator,
        offsets=ctx.services.groups.offsets,
        clock_ms=ctx.services.clock_ms,
        info=lambda: None,
        metrics=metrics,
        share=ctx.services.share.groups,
    )
    metrics.watch(view)
    text = generate_latest(metrics.registry).decode()
    labels = '{partition="0",sharegroup="g",topic="t"}'
    for line in (
        f"kafka_sharegroup_start_offset{labels} 3.0",
        f"kafka_sharegroup_lag{labels} 7.0",
        f"kafka_sharegroup_inflight_records{labels} 3.0",
        f"kafka_sharegroup_acquired_records{labels} 3.0",
        f"kafka_sharegroup_archived_records{labels} 1.0",
        'kafka_sharegroup_members{sharegroup="g"} 1.0',
    ):
        assert line in text, line


def test_one_group_resource_sets_share_and_consumer_keys_all_or_nothing(ctx):
    from trafka.adapters.kafka.apis import incremental_alter_configs
    from trafka.schema_codec.messages import IncrementalAlterConfigsRequest

    Resource = IncrementalAlterConfigsRequest.AlterConfigsResource
    Config = Resource.AlterableConfig

    def alter(*configs):
        request = IncrementalAlterConfigsRequest[1](
            resources=[Resource(resource_type=32, resource_name="h", configs=list(configs))], validate_only=False
        )
        (result,) = incremental_alter_configs.API.handle(ctx, request, 1, CLIENT).responses
        return result.error_code

    bad = alter(
        Config(name="share.auto.offset.reset", config_operation=0, value="earliest"),
        Config(name="consumer.heartbeat.interval.ms", config_operation=0, value="1"),
    )
    assert bad == ErrorCode.INVALID_CONFIG
    assert ctx.services.share.groups.config("h", "share.auto.offset.reset") == "latest"  # nothing applied
    good = alter(
        Config(name="share.auto.offset.reset", config_operation=0, value="earliest"),
        Config(name="consumer.heartbeat.interval.ms", config_operation=0, value="6000"),
    )
    assert good == ErrorCode.NONE
    assert ctx.services.share.groups.config("h", "share.auto.offset.reset") == "earliest"
    assert ctx.services.groups.consumer.heartbeat_interval_ms("h") == 6000


def test_consumer_and_share_groups_do_not_share_an_id(ctx):
    from trafka.adapters.kafka.apis import consumer_group_heartbeat
    from trafka.schema_codec.messages import ConsumerGroupHeartbeatRequest

    def consumer_join(group_id):
        request = ConsumerGroupHeartbeatRequest[1](
            group_id=group_id,
            member_id="c1",
            member_epoch=0,
            rebalance_timeout_ms=30_000,
            subscribed_topic_names=["t"],
            topic_partitions=[],
        )
        return consumer_group_heartbeat.API.handle(ctx, request, 1, CLIENT).error_code

    assert heartbeat(ctx).error_code == ErrorCode.NONE  # share group "g"
    assert consumer_join("g") == ErrorCode.GROUP_ID_NOT_FOUND
    assert consumer_join("cg") == ErrorCode.NONE
    request = ShareGroupHeartbeatRequest[1](group_id="cg", member_id="s1", member_epoch=0, subscribed_topic_names=["t"])
    assert share_group_heartbeat.API.handle(ctx, request, 1, CLIENT).error_code == ErrorCode.GROUP_ID_NOT_FOUND


def test_read_committed_archives_aborted_records_and_stops_at_the_last_stable_offset(ctx):
    from kafka.record.default_records import DefaultRecordBatchBuilder

    def transactional(pid: int, epoch: int, values: list[bytes]) -> bytes:
        builder = DefaultRecordBatchBuilder(
            magic=2,
            compression_type=0,
            is_transactional=True,
            producer_id=pid,
            producer_epoch=epoch,
            base_sequence=0,
            batch_size=1 << 20,
        )
        for i, v in enumerate(values):
            builder.append(i, timestamp=1, key=None, value=v, headers=[])
        return bytes(builder.build())

    tp = TopicPartition("t", 0)
    ctx.services.share.groups.configs["g"]["share.isolation.level"] = "read_committed"
    produce(ctx, 2)  # offsets 0-1
    txns = ctx.services.transactions
    aborted = txns.init_producer_id("aborts", 60_000, 1)
    assert txns.add_partitions("aborts", aborted.producer_id, aborted.producer_epoch, [tp], 1)[tp] is ErrorCode.NONE
    batch = transactional(aborted.producer_id, aborted.producer_epoch, [b"a", b"b"])
    assert ctx.services.replicas.produce(tp, batch, 1, "aborts").error is ErrorCode.NONE  # 2-3
    assert txns.end("aborts", aborted.producer_id, aborted.producer_epoch, False, 1) is ErrorCode.NONE  # marker 4
    open_ = txns.init_producer_id("open", 60_000, 1)
    assert txns.add_partitions("open", open_.producer_id, open_.producer_epoch, [tp], 1)[tp] is ErrorCode.NONE
    batch = transactional(open_.producer_id, open_.producer_epoch, [b"c"])
    assert ctx.services.replicas.produce(tp, batch, 1, "open").error is ErrorCode.NONE  # 5, still open
    got = fetch(ctx, max_records=100)
    assert acquired(got) == [(0, 1, 1), (4, 4, 1)]  # 2-3 aborted: archived; 5 beyond the last stable offset
    sp = ctx.services.share.groups.partitions[("g", tp)]
    assert sp.state_of(2).state.name == "ARCHIVED"
    assert sp.end_offset == 5


def test_read_committed_archives_only_the_aborted_transactions_of_a_producer_not_its_later_commits(ctx):
    """librdkafka's 0177: commit / abort / commit / abort / commit by one producer. Only the records
    from an aborted transaction's first offset to its abort marker are archived (Kafka's
    fetchAbortedTransactionRecordBatches)."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    tp = TopicPartition("t", 0)
    ctx.services.share.groups.configs["g"]["share.isolation.level"] = "read_committed"
    txns = ctx.services.transactions
    producer = txns.init_producer_id("tx", 60_000, 1)
    sequence = 0
    delivered = []
    for count, commit in [(2, True), (2, False), (3, True), (1, False), (2, True)]:
        assert txns.add_partitions("tx", producer.producer_id, producer.producer_epoch, [tp], 1)[tp] is ErrorCode.NONE
        builder = DefaultRecordBatchBuilder(
            magic=2,
            compression_type=0,
            is_transactional=True,
            producer_id=producer.producer_id,
            producer_epoch=producer.producer_epoch,
            base_sequence=sequence,
            batch_size=1 << 20,
        )
        for i in range(count):
            builder.append(i, timestamp=1, key=None, value=b"v", headers=[])
        sequence += count
        result = ctx.services.replicas.produce(tp, bytes(builder.build()), 1, "tx")
        assert result.error is ErrorCode.NONE
        if commit:
            delivered.append((result.base_offset, result.base_offset + count - 1))
        assert txns.end("tx", producer.producer_id, producer.producer_epoch, commit, 1) is ErrorCode.NONE
    # offsets: 0-1 commit, marker 2, 3-4 aborted, marker 5, 6-8 commit, marker 9, 10 aborted, marker 11, 12-13 commit, 14
    assert delivered == [(0, 1), (6, 8), (12, 13)]
    got = acquired(fetch(ctx, max_records=100))
    for first, last in delivered:
        assert any(a <= first and last <= b for a, b, _ in got), (first, last, got)
    sp = ctx.services.share.groups.partitions[("g", tp)]
    assert [o for o in range(15) if sp.state_of(o).state.name == "ARCHIVED"] == [3, 4, 10]


def test_a_closed_connection_closes_its_share_sessions_and_releases_what_they_held(ctx):
    heartbeat(ctx)
    heartbeat(ctx, "m2")
    produce(ctx, 6)
    connection = object()
    on_it = ClientInfo("client-1", "127.0.0.1", connection=connection)
    assert acquired(fetch(ctx, max_records=4, client=on_it)) == [(0, 3, 1)]
    ctx.services.share.connection_closed(object())  # another connection: nothing happens
    assert ("g", "m1") in ctx.services.share.groups.sessions
    ctx.services.share.connection_closed(connection)
    assert ("g", "m1") not in ctx.services.share.groups.sessions
    # released at once, not after the lock: the other member gets them, delivered a second time
    assert acquired(fetch(ctx, "m2", max_records=10)) == [(0, 3, 2), (4, 5, 1)]
    # the member's next request on a new connection finds no session, as Kafka answers
    assert fetch(ctx, epoch=1).error_code == ErrorCode.SHARE_SESSION_NOT_FOUND


@pytest.mark.parametrize(("version", "mode"), [(1, None), (2, 0)])
def test_batch_optimized_acquires_the_whole_log_batch_the_last_record_is_in(ctx, version, mode):
    heartbeat(ctx)
    heartbeat(ctx, "m2")
    produce(ctx, 10, per_batch=3)  # batches 0-2, 3-5, 6-8, 9
    first = fetch(ctx, max_records=4, version=version, mode=mode)
    assert acquired(first) == [(0, 5, 1)]  # MaxRecords 4 ends inside 3-5: that batch whole
    second = fetch(ctx, "m2", max_records=4, version=version, mode=mode)
    assert acquired(second) == [(6, 9, 1)]


def test_record_limit_acquires_at_most_max_records_inside_a_log_batch(ctx):
    heartbeat(ctx)
    heartbeat(ctx, "m2")
    produce(ctx, 10, per_batch=10)
    first = fetch(ctx, max_records=4, version=2, mode=1)
    assert acquired(first) == [(0, 3, 1)]
    # the stored batch is returned whole: the client keeps the acquired records only
    assert acquired(fetch(ctx, "m2", max_records=4, version=2, mode=1)) == [(4, 7, 1)]


def test_an_unknown_acquire_mode_is_an_invalid_request(ctx):
    heartbeat(ctx)
    assert fetch(ctx, version=2, mode=7).error_code == ErrorCode.INVALID_REQUEST


def test_an_acknowledgement_that_frees_room_under_the_in_flight_bound_wakes_parked_fetches(ctx):
    groups = ctx.services.share.groups
    groups.settings = attrs.evolve(groups.settings, partition_max_record_locks=4)
    heartbeat(ctx)
    heartbeat(ctx, "m2")
    produce(ctx, 8)
    assert acquired(fetch(ctx, max_records=4)) == [(0, 3, 1)]
    assert acquired(fetch(ctx, "m2", max_records=4)) == []  # four in flight: m2 waits
    parked = ctx.services.appends.waiter([TopicPartition("t", 0)])  # as m2's long poll waits
    acknowledge(ctx, acks=[(2, 2, 1)])  # ACCEPT behind the start offset: no room yet
    assert not parked.is_set()
    acknowledge(ctx, epoch=2, acks=[(0, 1, 1)])  # the start offset moves on: room for three more
    assert parked.is_set()  # the parked fetch is woken
    assert acquired(fetch(ctx, "m2", epoch=1, max_records=4)) == [(4, 6, 1)]


async def test_a_parked_fetch_is_answered_by_the_acknowledgement_that_releases_records(ctx):
    """The purgatory (ADR 80): m2's parked ShareFetch acquires in the acknowledging request's task, and
    the share-partition state it changed is written by the same commit, before either answer leaves."""
    heartbeat(ctx)
    heartbeat(ctx, "m2")
    produce(ctx, 2)
    assert acquired(fetch(ctx, max_records=2)) == [(0, 1, 1)]
    outcome = fetch(ctx, "m2", max_records=2, max_wait_ms=30_000)
    assert isinstance(outcome, Parked)
    answered = []
    ctx.services.appends.park(outcome, answered.append)
    written = []
    ctx.services.share.writes = attrs.evolve(
        ctx.services.share.writes, state=lambda groups: written.append(groups.take_dirty())
    )
    acknowledge(ctx, acks=[(0, 1, 2)])  # RELEASE
    assert [acquired(a) for a in answered] == [[(0, 1, 2)]]
    assert written and not ctx.services.share.groups.unpersisted


def test_a_fetch_carrying_acknowledgements_waits_for_records_like_any_fetch(ctx):
    """Kafka's DelayedShareFetch: the piggybacked acknowledgements are applied at once, and a fetch that
    can acquire nothing waits up to MaxWaitMs (answering it at once only because it carried
    acknowledgements cost an empty round trip per poll)."""
    heartbeat(ctx)
    heartbeat(ctx, "m2")
    produce(ctx, 2)
    assert acquired(fetch(ctx, max_records=2)) == [(0, 1, 1)]
    answer = fetch(ctx, epoch=1, acks=[(0, 1, 1)], max_wait_ms=500)
    assert isinstance(answer, Parked)  # parked: nothing to acquire past offset 1
    produce(ctx, 1)  # the acknowledgement was applied before the wait: offset 2 is the next to go
    assert acquired(fetch(ctx, "m2", max_records=2)) == [(2, 2, 1)]


def test_the_group_records_follow_the_group_and_a_deleted_group_leaves_none():
    settings = load_settings(overrides={"storage": {"kind": "memory"}})
    adapters = default_adapters(settings)
    ctx = bootstrap(settings, adapters)
    ctx.services.catalog.create("t", 1, 1)
    ctx.services.share.groups.configs["g"] = {"share.auto.offset.reset": "earliest"}
    heartbeat(ctx)
    produce(ctx, 2)
    fetch(ctx)
    kinds = {(r.kind.name, r.member_id) for r in adapters.offset_store.share_group_records()}
    assert kinds == {
        ("GROUP_EPOCH", None),
        ("TARGET_ASSIGNMENT_EPOCH", None),
        ("STATE_PARTITION_METADATA", None),
        ("MEMBER_METADATA", "m1"),
        ("TARGET_ASSIGNMENT_MEMBER", "m1"),
        ("CURRENT_ASSIGNMENT", "m1"),
    }
    [state] = [
        r.value for r in adapters.offset_store.share_group_records() if r.kind.name == "STATE_PARTITION_METADATA"
    ]
    assert state.initialized == ((ctx.services.catalog.get("t").topic_id, "t", (0,)),)
    heartbeat(ctx, epoch=-1)
    assert {r.member_id for r in adapters.offset_store.share_group_records()} == {None}
    delete = DeleteGroupsRequest[2](groups_names=["g"])
    assert delete_groups.API.handle(ctx, delete, 2, CLIENT).results[0].error_code == ErrorCode.NONE
    assert adapters.offset_store.share_group_records() == []


def test_a_fetch_reads_about_what_max_records_need_by_the_bytes_per_record_it_last_saw(ctx):
    heartbeat(ctx)
    produce(ctx, 50, per_batch=10)  # records of a few bytes
    fetch(ctx, max_records=5)
    sp = ctx.services.share.groups.partitions[("g", TopicPartition("t", 0))]
    assert 16 <= sp.read_bytes_per_record < 100  # not 1 KB apiece: the next read asks for what it needs
