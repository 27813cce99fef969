"""The versions Kafka 4.2 added to APIs trafka already served, through their handlers on a memory-store
broker: ListOffsets v9-11's special timestamps, DescribeGroups v6's GROUP_ID_NOT_FOUND, ListTransactions
v2's pattern."""

from __future__ import annotations

import pytest

from tests.batches import make_batch
from trafka.adapters.kafka.apis import describe_groups, list_offsets, list_transactions
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.errors import ErrorCode
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import DescribeGroupsRequest, ListOffsetsRequest, ListTransactionsRequest

CLIENT = ClientInfo("test", "127.0.0.1")


@pytest.fixture
def ctx():
    settings = load_settings(overrides={"storage": {"kind": "memory"}})
    ctx = bootstrap(settings, default_adapters(settings))
    ctx.services.catalog.create("t", 1, 1)
    ctx.services.replicas.produce(TopicPartition("t", 0), make_batch([(1000, b"k", b"v")] * 3), ctx.services.clock_ms())
    return ctx


def _list_offset(ctx, version, timestamp):
    Topic = ListOffsetsRequest.ListOffsetsTopic
    request = ListOffsetsRequest[version](
        replica_id=-1,
        topics=[Topic(name="t", partitions=[Topic.ListOffsetsPartition(partition_index=0, timestamp=timestamp)])],
    )
    (partition,) = (
        list_offsets.handle_list_offsets(ctx.view(list_offsets.Uses), request, version, CLIENT).topics[0].partitions
    )
    return partition.error_code, partition.offset, partition.timestamp, partition.leader_epoch


@pytest.mark.parametrize("timestamp", [-5, -6])
def test_tiered_specs_answer_minus_one_without_tiered_storage(ctx, timestamp):
    assert _list_offset(ctx, 11, timestamp) == (0, -1, -1, -1)


def test_earliest_local_is_the_log_start_offset(ctx):
    assert _list_offset(ctx, 8, -4)[:2] == (0, 0)
    assert _list_offset(ctx, 11, -1)[:2] == (0, 3)


@pytest.mark.parametrize(("timestamp", "first_version"), [(-3, 7), (-4, 8), (-5, 9), (-6, 11)])
def test_a_spec_before_its_version_is_unsupported(ctx, timestamp, first_version):
    assert _list_offset(ctx, first_version - 1, timestamp) == (ErrorCode.UNSUPPORTED_VERSION, -1, -1, -1)
    assert _list_offset(ctx, first_version, timestamp)[0] == 0


def test_an_unknown_negative_timestamp_is_unsupported(ctx):
    assert _list_offset(ctx, 11, -7)[0] == ErrorCode.UNSUPPORTED_VERSION


@pytest.mark.parametrize("version", [5, 6])
def test_describe_groups_unknown_group(ctx, version):
    request = DescribeGroupsRequest[version](groups=["nobody"], include_authorized_operations=False)
    (group,) = describe_groups.handle_describe_groups(ctx.view(describe_groups.Uses), request, version, CLIENT).groups
    assert group.group_state == "Dead" and group.members == []
    if version == 6:
        assert (group.error_code, group.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group nobody not found.")
    else:
        assert group.error_code == 0


def _list_transactions(ctx, pattern, version=2):
    request = ListTransactionsRequest[version](
        state_filters=[], producer_id_filters=[], duration_filter=-1, transactional_id_pattern=pattern
    )
    return list_transactions.handle_list_transactions(ctx.view(list_transactions.Uses), request, version, CLIENT)


def test_list_transactions_by_pattern(ctx):
    for txn_id in ("orders-1", "orders-2", "payments-1"):
        ctx.services.transactions.init_producer_id(txn_id, 60_000, ctx.services.clock_ms())
    ids = lambda response: sorted(t.transactional_id for t in response.transaction_states)
    assert ids(_list_transactions(ctx, "orders-.*")) == ["orders-1", "orders-2"]
    assert ids(_list_transactions(ctx, "orders")) == []  # the whole id must match
    assert (
        ids(_list_transactions(ctx, None)) == ids(_list_transactions(ctx, "")) == ["orders-1", "orders-2", "payments-1"]
    )


@pytest.mark.parametrize("pattern", ["(", "(a)\\1", "[z-a]"])
def test_a_pattern_re2_cannot_parse_is_invalid_regular_expression(ctx, pattern):
    response = _list_transactions(ctx, pattern)
    assert response.error_code == ErrorCode.INVALID_REGULAR_EXPRESSION
    assert response.transaction_states == []


def test_a_pathological_pattern_runs_in_linear_time(ctx):
    ctx.services.transactions.init_producer_id("a" * 5000 + "!", 60_000, ctx.services.clock_ms())
    assert _list_transactions(ctx, "(a+)+$").transaction_states == []  # backtracking engines take forever here


def _commit(ctx, version, topics):
    from trafka.adapters.kafka.apis import offset_commit
    from trafka.schema_codec.messages import OffsetCommitRequest

    Topic = OffsetCommitRequest.OffsetCommitRequestTopic
    Partition = Topic.OffsetCommitRequestPartition
    request = OffsetCommitRequest[version](
        group_id="g",
        generation_id_or_member_epoch=-1,
        member_id="",
        topics=[
            Topic(
                **({"topic_id": key} if version >= 10 else {"name": key}),
                partitions=[Partition(partition_index=0, committed_offset=2, committed_metadata="m")],
            )
            for key in topics
        ],
    )
    return offset_commit.handle_offset_commit(ctx.view(offset_commit.Uses), request, version, CLIENT)


def _fetch_offsets(ctx, version, topic_ids):
    from trafka.adapters.kafka.apis import offset_fetch
    from trafka.schema_codec.messages import OffsetFetchRequest

    Group = OffsetFetchRequest.OffsetFetchRequestGroup
    Topic = Group.OffsetFetchRequestTopics
    topics = None if topic_ids is None else [Topic(topic_id=i, partition_indexes=[0]) for i in topic_ids]
    request = OffsetFetchRequest[version](groups=[Group(group_id="g", topics=topics)], require_stable=False)
    (group,) = offset_fetch.handle_offset_fetch(ctx.view(offset_fetch.Uses), request, version, CLIENT).groups
    return [
        (t.topic_id, [(p.partition_index, p.committed_offset, p.error_code) for p in t.partitions])
        for t in group.topics
    ]


def test_offset_commit_and_fetch_v10_name_topics_by_id(ctx):
    import uuid

    from trafka.adapters.kafka.wire.codec import encode_response
    from trafka.schema_codec.messages import OffsetCommitResponse, OffsetFetchResponse

    topic_id = ctx.services.catalog.get("t").topic_id
    unknown = uuid.uuid4()
    response = _commit(ctx, 10, [topic_id, unknown])
    decoded = OffsetCommitResponse.decode(encode_response(response, 10, 1)[4:], version=10, header=True)
    assert [(t.topic_id, [p.error_code for p in t.partitions]) for t in decoded.topics] == [
        (topic_id, [0]),
        (unknown, [ErrorCode.UNKNOWN_TOPIC_ID]),
    ]
    assert _fetch_offsets(ctx, 10, [topic_id, unknown]) == [
        (topic_id, [(0, 2, 0)]),
        (unknown, [(0, -1, ErrorCode.UNKNOWN_TOPIC_ID)]),
    ]
    assert _fetch_offsets(ctx, 10, None) == [(topic_id, [(0, 2, 0)])]
    # The same offsets by name at v9: stored by name, whichever version committed them.
    from trafka.adapters.kafka.apis import offset_fetch

    request = offset_fetch.OffsetFetchRequest[9](
        groups=[offset_fetch.OffsetFetchRequest.OffsetFetchRequestGroup(group_id="g", topics=None)],
        require_stable=False,
    )
    response = offset_fetch.handle_offset_fetch(ctx.view(offset_fetch.Uses), request, 9, CLIENT)
    encoded = encode_response(response, 9, 1)
    (group,) = OffsetFetchResponse.decode(encoded[4:], version=9, header=True).groups
    assert [(t.name, t.partitions[0].committed_offset) for t in group.topics] == [("t", 2)]


def test_offset_commit_v9_still_by_name(ctx):
    response = _commit(ctx, 9, ["t"])
    assert [(t.name, [p.error_code for p in t.partitions]) for t in response.topics] == [("t", [0])]


def _list_config_resources(ctx, version, types):
    from trafka.adapters.kafka.apis import list_config_resources
    from trafka.schema_codec.messages import ListConfigResourcesRequest

    request = ListConfigResourcesRequest[version](**({"resource_types": types} if version >= 1 else {}))
    response = list_config_resources.handle_list_config_resources(
        ctx.view(list_config_resources.Uses), request, version, CLIENT
    )
    return response.error_code, sorted((r.resource_name, r.resource_type) for r in response.config_resources)


def test_list_config_resources(ctx):
    node = str(ctx.services.policy.node_id)
    assert _list_config_resources(ctx, 1, []) == (0, sorted([("t", 2), (node, 4), (node, 8)]))
    assert _list_config_resources(ctx, 1, [2]) == (0, [("t", 2)])
    assert _list_config_resources(ctx, 1, [16, 32]) == (0, [])  # no client metrics, no group configs
    assert _list_config_resources(ctx, 1, [2, 99]) == (ErrorCode.UNSUPPORTED_VERSION, [])
    assert _list_config_resources(ctx, 0, None) == (0, [])  # v0: client metrics only
