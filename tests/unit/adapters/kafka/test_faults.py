"""Fault injection (`adapters/kafka/faults.py`): every API that `fail_next` accepts answers with the
armed error at every served version, has no side effect, and the count runs out exactly."""

from __future__ import annotations

import pytest
import trio

from trafka.adapters.kafka.api import CloseConnection, Deferred
from trafka.adapters.kafka.apis import build_registry
from trafka.adapters.kafka.connection.faults import Faults, can_fail
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.adapters.kafka.wire.codec import encode_response
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.errors import ErrorCode
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import Message as DataContainer

REGISTRY = build_registry()
CLIENT = ClientInfo("test", "127.0.0.1")
ERROR = int(ErrorCode.NOT_LEADER_OR_FOLLOWER)
FAILABLE = [
    (h.api_key, v)
    for key, low, high in ((h.api_key, h.min_version, h.max_version) for h in REGISTRY.apis())
    for h in [REGISTRY.get(key)]
    if can_fail(h)
    for v in range(low, high + 1)
]


def _context():
    settings = load_settings(overrides={"storage": {"kind": "memory"}})
    ctx = bootstrap(settings, default_adapters(settings))
    _CTX_TOPIC_IDS["existing"] = ctx.services.catalog.create("existing", 2, 1).topic_id
    return ctx


def _error_codes(message: DataContainer, version: int) -> list[int]:
    """Every error code the response carries at this version."""
    found = []
    for name, field in message.fields.items():
        if not field.for_version_q(version):
            continue
        value = getattr(message, name, None)
        if name == "error_code":
            found.append(value)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, DataContainer):
                    found.extend(_error_codes(item, version))
        elif isinstance(value, DataContainer):
            found.extend(_error_codes(value, version))
    return found


_CTX_TOPIC_IDS: dict = {}
NAMING_A_PARTITION = {"Produce", "OffsetCommit", "CreateTopics", "DeleteTopics", "Metadata", "Fetch", "ListOffsets"}


def _topic_id(handler):
    return _CTX_TOPIC_IDS.get("existing")


def _request_naming_a_partition(handler, version):
    """A request that names topic `existing`, partition 0, where the API has topics."""
    request = handler.request[version]()
    name = handler.name
    if name == "Produce":
        data = handler.request.TopicProduceData
        request = handler.request[version](
            acks=-1,
            timeout_ms=1000,
            topic_data=[data(name="existing", partition_data=[data.PartitionProduceData(index=0, records=b"")])],
        )
    elif name == "OffsetCommit":
        topic = handler.request.OffsetCommitRequestTopic
        request = handler.request[version](
            group_id="g",
            topics=[
                topic(
                    name="existing",
                    partitions=[topic.OffsetCommitRequestPartition(partition_index=0, committed_offset=5)],
                )
            ],
        )
    elif name == "CreateTopics":
        request = handler.request[version](
            topics=[handler.request.CreatableTopic(name="new-topic", num_partitions=1, replication_factor=1)]
        )
    elif name == "DeleteTopics":
        if version >= 6:
            request = handler.request[version](topics=[handler.request.DeleteTopicState(name="existing")])
        else:
            request = handler.request[version](topic_names=["existing"])
    elif name == "Metadata":
        request = handler.request[version](topics=[handler.request.MetadataRequestTopic(name="existing")])
    elif name == "Fetch":
        topic = handler.request.FetchTopic
        request = handler.request[version](
            max_wait_ms=0,
            min_bytes=0,
            max_bytes=1 << 20,
            topics=[
                topic(
                    topic="existing",
                    topic_id=_topic_id(handler),
                    partitions=[topic.FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1 << 20)],
                )
            ],
        )
    elif name == "ListOffsets":
        topic = handler.request.ListOffsetsTopic
        request = handler.request[version](
            replica_id=-1,
            topics=[topic(name="existing", partitions=[topic.ListOffsetsPartition(partition_index=0, timestamp=-1)])],
        )
    elif name == "OffsetFetch" and version < 8:
        topic = handler.request.OffsetFetchRequestTopic
        request = handler.request[version](group_id="g", topics=[topic(name="existing", partition_indexes=[0])])
    return request


@pytest.mark.parametrize(("api_key", "version"), FAILABLE, ids=[f"{REGISTRY.get(k).name}-v{v}" for k, v in FAILABLE])
async def test_an_armed_failure_answers_with_the_error_and_changes_nothing(api_key, version):
    ctx = _context()
    handler = REGISTRY.get(api_key)
    request = _request_naming_a_partition(handler, version)
    topics_before = {t.name for t in ctx.services.catalog.topics()}
    ctx.faults.fail_next(api_key, ERROR, 1)
    try:
        outcome = ctx.faults.layer(handler, handler.handle)(ctx, request, version, CLIENT)
    except CloseConnection:
        return
    if isinstance(outcome, Deferred):
        with trio.fail_after(5):
            outcome = await outcome.wait()
    encoded = encode_response(outcome, version, correlation_id=7)
    decoded = handler.response.decode(encoded[4:], version=version, header=True)
    codes = _error_codes(decoded, version)
    top_level = handler.response.fields.get("error_code")
    if handler.name in NAMING_A_PARTITION or (top_level is not None and top_level.for_version_q(version)):
        assert codes, "the response carries no error"
    assert set(codes) <= {ERROR}, codes  # a read-only API asked about nothing has nothing to fail
    assert {t.name for t in ctx.services.catalog.topics()} == topics_before  # no topic created or deleted
    assert ctx.services.replicas.watermarks(TopicPartition("existing", 0)) == (0, 0)  # nothing appended
    assert ctx.services.groups.offsets.fetch("g", None) == {}  # nothing committed
    assert not ctx.faults.active


def test_failures_run_out_after_the_armed_count():
    faults = Faults()
    handler = REGISTRY.get(32)  # DescribeConfigs: served normally once the failures are used
    ctx = _context()
    resource = handler.request.DescribeConfigsResource
    request = handler.request[4](
        resources=[resource(resource_type=2, resource_name="existing", configuration_keys=None)]
    )
    faults.fail_next(32, ERROR, 2)
    assert faults.active and faults.pending_failures(32) == 2
    assert faults.layer(handler, handler.handle)(ctx, request, 4, CLIENT).results[0].error_code == ERROR
    assert faults.layer(handler, handler.handle)(ctx, request, 4, CLIENT).results[0].error_code == ERROR
    assert not faults.active and faults.pending_failures(32) == 0
    assert faults.layer(handler, handler.handle)(ctx, request, 4, CLIENT).results[0].error_code == 0


def test_an_acks_0_produce_that_is_failed_closes_the_connection_as_kafka_does():
    ctx = _context()
    handler = REGISTRY.get(0)
    request = _request_naming_a_partition(handler, 9)
    request.acks = 0
    ctx.faults.fail_next(0, ERROR, 1)
    with pytest.raises(CloseConnection):
        ctx.faults.layer(handler, handler.handle)(ctx, request, 9, CLIENT)


async def test_pause_holds_waiters_until_resume_and_drop_cancels_every_connection():
    faults = Faults()
    faults.pause()
    assert faults.paused and faults.active
    resumed = []

    async def waiter():
        await faults.wait_resumed()
        resumed.append(True)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(waiter)
        await trio.testing.wait_all_tasks_blocked()
        assert resumed == []
        faults.resume()
    assert resumed == [True] and not faults.active

    scopes = [trio.CancelScope(), trio.CancelScope()]
    for scope in scopes:
        faults.connection_opened(scope)
    assert faults.drop_connections() == 2
    assert all(scope.cancel_called for scope in scopes)
    assert faults.connection_count == 0


def test_every_served_api_with_an_error_code_can_be_failed():
    """The APIs a client retries on are all among the ones fail_next accepts."""
    names = {REGISTRY.get(k).name for k, _ in FAILABLE}
    assert {
        "Produce",
        "Fetch",
        "Metadata",
        "ListOffsets",
        "FindCoordinator",
        "JoinGroup",
        "SyncGroup",
        "Heartbeat",
        "OffsetCommit",
        "OffsetFetch",
        "InitProducerId",
        "CreateTopics",
        "DeleteTopics",
    } <= names


FETCH_VERSIONS = range(REGISTRY.get(1).min_version, REGISTRY.get(1).max_version + 1)


@pytest.mark.parametrize("version", FETCH_VERSIONS)
def test_a_failed_fetch_partition_carries_empty_records_never_null(version):
    """Kafka answers an errored partition with empty records (librdkafka's parser refuses a null record
    set in flexible versions, so the error would never reach the application)."""
    ctx = _context()
    fetch = REGISTRY.get(1)
    ctx.faults.fail_next(fetch.api_key, ERROR, 1)
    outcome = ctx.faults.layer(fetch, fetch.handle)(ctx, _request_naming_a_partition(fetch, version), version, CLIENT)
    encoded = encode_response(outcome, version, correlation_id=7)
    decoded = fetch.response.decode(encoded[4:], version=version, header=True)
    (partition,) = decoded.responses[0].partitions
    assert partition.error_code == ERROR
    assert partition.records == b""
