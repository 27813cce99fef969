"""The console sees every kind of group, not only classic ones: a KIP-848 consumer group, a streams group
(KIP-1071: its members' tasks and processes) and a share group (KIP-932, its share-partitions' start offset, records in flight, acquired and archived, lag) on
the groups pages, and the reset and delete actions find them; against an in-process broker on the
in-memory adapter, the groups driven through the Kafka rooms as clients would."""

from __future__ import annotations

import re

import pytest
import trio
from kafka.record.memory_records import MemoryRecordsBuilder

from tests.http.test_console import _http
from tests.kafka_python_messages import (
    ConsumerGroupHeartbeatRequest,
    ShareAcknowledgeRequest,
    ShareFetchRequest,
    ShareGroupHeartbeatRequest,
    StreamsGroupHeartbeatRequest,
)
from trafka.adapters.http import run_listener
from trafka.adapters.http.actions import ConsoleError, delete_group, plan_reset, reset_offsets
from trafka.adapters.http.pages import group_row, group_rows
from trafka.adapters.kafka.apis import (
    consumer_group_heartbeat,
    share_acknowledge,
    share_fetch,
    share_group_heartbeat,
    streams_group_heartbeat,
)
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.adapters.memory import MemoryShareStateStore
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.app.wiring.http import observe_broker
from trafka.domain.errors import ErrorCode
from trafka.domain.groups import JoinRequest, Protocol
from trafka.domain.groups.group_metadata import CommittedOffset
from trafka.domain.groups.offsets import CommitRequest
from trafka.domain.topics import TopicPartition

CLIENT = ClientInfo("client-1", "127.0.0.1")
ACCEPT, RELEASE, REJECT = 1, 2, 3
TP = TopicPartition("t", 0)


@pytest.fixture
def broker():
    # no initial rebalance delay for streams groups, as `trafka serve` and Broker() (Kafka's code default is 3 s)
    overrides = {
        "storage": {"kind": "memory"},
        "http": {"port": 0},
        "groups": {"streams_initial_rebalance_delay_ms": 0},
    }
    settings = load_settings(None, {}, overrides)
    adapters = default_adapters(settings)
    ctx = bootstrap(settings, adapters)
    view = observe_broker(settings, ctx, ctx.services.clock_ms())
    ctx.services.catalog.create("t", 1, 1)
    for i in range(10):  # a batch per record: a share fetch acquires whole batches (batch_optimized)
        builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
        builder.append(timestamp=1000 + i, key=None, value=b"v%d" % i, headers=[])
        builder.close()
        assert ctx.services.replicas.produce(TP, bytes(builder.buffer()), 1).error is ErrorCode.NONE
    return ctx, view, adapters.share_state_store


def consumer_heartbeat(ctx, group: str, epoch: int = 0):
    topic_id = ctx.services.catalog.get("t").topic_id
    Tp = ConsumerGroupHeartbeatRequest.TopicPartitions
    request = ConsumerGroupHeartbeatRequest[1](
        group_id=group,
        member_id="c1",
        member_epoch=epoch,
        rebalance_timeout_ms=30_000 if epoch == 0 else -1,
        subscribed_topic_names=["t"] if epoch == 0 else None,
        topic_partitions=[Tp(topic_id=topic_id, partitions=[])] if epoch == 0 else None,
    )
    response = consumer_group_heartbeat.API.handle(ctx, request, 1, CLIENT)
    assert response.error_code == ErrorCode.NONE, response
    return response


def share_heartbeat(ctx, group: str, epoch: int = 0):
    request = ShareGroupHeartbeatRequest[1](
        group_id=group, member_id="s1", member_epoch=epoch, subscribed_topic_names=["t"] if epoch == 0 else None
    )
    response = share_group_heartbeat.API.handle(ctx, request, 1, CLIENT)
    assert response.error_code == ErrorCode.NONE, response
    return response


def share_work(ctx, group: str) -> None:
    """A member acquires 0-5 and accepts 0-1, releases 2, rejects 3; 4-5 stay acquired."""
    topic_id = ctx.services.catalog.get("t").topic_id
    T = ShareFetchRequest.FetchTopic
    request = ShareFetchRequest[1](
        group_id=group,
        member_id="s1",
        share_session_epoch=0,
        max_wait_ms=0,
        min_bytes=1,
        max_bytes=1 << 20,
        max_records=6,
        batch_size=6,
        topics=[T(topic_id=topic_id, partitions=[T.FetchPartition(partition_index=0, acknowledgement_batches=[])])],
        forgotten_topics_data=[],
    )
    fetched = share_fetch.API.handle(ctx, request, 1, CLIENT)
    assert [(a.first_offset, a.last_offset) for a in fetched.responses[0].partitions[0].acquired_records] == [(0, 5)]
    A = ShareAcknowledgeRequest.AcknowledgeTopic
    P = A.AcknowledgePartition
    batches = [(0, 1, ACCEPT), (2, 2, RELEASE), (3, 3, REJECT)]
    ack = ShareAcknowledgeRequest[1](
        group_id=group,
        member_id="s1",
        share_session_epoch=1,
        topics=[
            A(
                topic_id=topic_id,
                partitions=[
                    P(
                        partition_index=0,
                        acknowledgement_batches=[
                            P.AcknowledgementBatch(first_offset=f, last_offset=last, acknowledge_types=[k])
                            for f, last, k in batches
                        ],
                    )
                ],
            )
        ],
    )
    assert share_acknowledge.API.handle(ctx, ack, 1, CLIENT).error_code == ErrorCode.NONE
    ctx.services.share.settled()


def test_the_groups_pages_show_consumer_and_share_groups(broker):
    ctx, view, _ = broker
    consumer_heartbeat(ctx, "cg")
    share_heartbeat(ctx, "sg")
    ctx.services.share.groups.alter_configs("sg", {"share.auto.offset.reset": (0, "earliest")}, False)
    share_work(ctx, "sg")
    join = JoinRequest(
        "classic-g", "", "consumer", (Protocol("range", b""),), 30_000, 30_000, require_known_member_id=False
    )
    ctx.services.groups.coordinator.join(join, ctx.services.clock_ms(), "token")
    rows = {row.group_id: row for row in group_rows(view)}
    # Kafka's group types: a classic group is "classic" even though its protocol type is "consumer".
    assert (rows["classic-g"].group_type, rows["classic-g"].protocol_type) == ("classic", "consumer")
    assert (rows["cg"].group_type, rows["cg"].protocol_type, rows["cg"].state) == ("consumer", "consumer", "STABLE")
    assert rows["sg"].group_type == "share"
    assert [m.assignment for m in rows["cg"].members] == [(TP,)]
    share = rows["sg"]
    assert (share.protocol_type, share.protocol_name, share.state) == ("share", "simple", "STABLE")
    assert [m.member_id for m in share.members] == ["s1"]
    (p,) = share.share
    # 0-1 accepted: the start offset moves to 2; 2 released, 3 archived, 4-5 acquired, 6-9 not yet read
    assert (p.tp, p.start_offset, p.in_flight, p.acquired, p.archived, p.lag) == (TP, 2, 4, 2, 1, 7)
    assert share.total_lag == 7


def test_reset_and_delete_find_a_consumer_group(broker):
    ctx, view, _ = broker
    consumer_heartbeat(ctx, "cg")
    admin_commit = CommitRequest("cg", "", -1, None, ((TP, CommittedOffset(7)),))
    assert ctx.services.groups.offsets.commit(admin_commit, ctx.services.clock_ms(), ErrorCode.NONE) == {
        TP: ErrorCode.NONE
    }
    with pytest.raises(ConsoleError, match="inactive, but the current state is Stable"):
        plan_reset(view, "cg", "earliest", None)
    with pytest.raises(ConsoleError, match="not empty"):
        delete_group(view, "cg")
    consumer_heartbeat(ctx, "cg", epoch=-1)  # the member leaves
    plan = plan_reset(view, "cg", "earliest", None)
    assert [(r.tp, r.current, r.target) for r in plan] == [(TP, 7, 0)]
    reset_offsets(view, "cg", plan)
    assert ctx.services.groups.offsets.fetch("cg", None)[TP].offset == 0
    assert ctx.services.groups.coordinator.group("cg") is None  # no classic group was made for the commit
    delete_group(view, "cg")
    assert "cg" not in ctx.services.groups.consumer.groups and ctx.services.groups.offsets.fetch("cg", None) == {}
    with pytest.raises(ConsoleError, match="does not exist"):
        delete_group(view, "cg")


def test_reset_and_delete_find_a_share_group_and_its_state(broker):
    ctx, view, store = broker
    assert isinstance(store, MemoryShareStateStore)
    share_heartbeat(ctx, "sg")
    ctx.services.share.groups.alter_configs("sg", {"share.auto.offset.reset": (0, "earliest")}, False)
    share_work(ctx, "sg")
    with pytest.raises(ConsoleError, match="inactive, but the current state is Stable"):
        plan_reset(view, "sg", "latest", None)
    share_heartbeat(ctx, "sg", epoch=-1)
    plan = plan_reset(view, "sg", "latest", None)
    assert [(r.tp, r.current, r.target) for r in plan] == [(TP, 2, 10)]
    reset_offsets(view, "sg", plan)
    ((snapshot, *_),) = [list(store.load())]
    assert (snapshot.group_id, snapshot.start_offset) == ("sg", 10)  # persisted as AlterShareGroupOffsets does
    (p,) = group_row(view, "sg").share
    assert (p.start_offset, p.in_flight, p.lag) == (10, 0, 0)
    delete_group(view, "sg")
    assert "sg" not in ctx.services.share.groups.coordinator.groups
    assert list(store.load()) == []  # its __share_group_state entries are gone
    assert group_row(view, "sg") is None


async def test_the_share_group_page_and_the_delete_form_over_http(broker):
    ctx, view, _ = broker
    share_heartbeat(ctx, "sg")
    ctx.services.share.groups.alter_configs("sg", {"share.auto.offset.reset": (0, "earliest")}, False)
    share_work(ctx, "sg")
    stop = trio.Event()
    async with trio.open_nursery() as nursery:
        host, port = await nursery.start(run_listener, view, "127.0.0.1", 0, stop)
        base = f"http://{host}:{port}"

        async def call(path: str, form: dict | None = None) -> tuple[int, str]:
            return await trio.to_thread.run_sync(_http, base + path, form)

        status, html = await call("/groups")
        assert status == 200 and 'data-group="sg"' in html and "share simple" in html
        assert '<th scope="col" data-type="text">Type</th>' in html
        assert '<td data-value="share" class="group-type">share</td>' in html
        status, html = await call("/groups/sg")
        assert '<b id="group-type">share</b>' in html
        assert status == 200 and 'id="share-partitions"' in html and 'class="num in-flight">4<' in html
        assert 'class="num archived">1<' in html and 'class="num start-offset">2<' in html
        assert "can be deleted only while it is Empty" in html
        override = re.search(r'<tr class="override" data-config="share.auto.offset.reset">.*?</tr>', html, re.S)
        assert override is not None and "<code>earliest</code>" in override.group(0)  # the GROUP resource
        assert 'data-config="consumer.session.timeout.ms"' in html  # the defaults after the overrides
        csrf = re.search(r'name="csrf" value="([^"]+)"', (await call("/"))[1]).group(1)
        status, html = await call("/groups/delete", {"csrf": csrf, "group": "sg", "confirm": "yes"})
        assert status == 400 and "not empty" in html and "sg" in ctx.services.share.groups.coordinator.groups
        share_heartbeat(ctx, "sg", epoch=-1)
        assert (await call("/groups/delete", {"csrf": "forged", "group": "sg", "confirm": "yes"}))[0] == 403
        status, html = await call("/groups/delete", {"csrf": csrf, "group": "sg"})
        assert status == 200 and 'id="confirm-delete-group"' in html and "share-partition state" in html
        assert "sg" in ctx.services.share.groups.coordinator.groups  # asked, not done
        status, html = await call("/groups/delete", {"csrf": csrf, "group": "sg", "confirm": "yes"})
        assert status == 200 and 'data-group="sg"' not in html  # redirected to the list
        assert "sg" not in ctx.services.share.groups.coordinator.groups
        assert (await call("/groups/delete", {"csrf": csrf, "group": "sg", "confirm": "yes"}))[0] == 404
        stop.set()


def test_the_lag_history_samples_share_groups_too(broker):
    from trafka.adapters.http.history import total_lag_by_group

    ctx, view, _ = broker
    share_heartbeat(ctx, "sg")
    ctx.services.share.groups.alter_configs("sg", {"share.auto.offset.reset": (0, "earliest")}, False)
    share_work(ctx, "sg")
    assert total_lag_by_group(view)["sg"] == 7


def streams_heartbeat(ctx, group: str, epoch: int = 0, active=None):
    Req = StreamsGroupHeartbeatRequest
    Sub = Req.Topology.Subtopology
    topology = Req.Topology(
        epoch=1,
        subtopologies=[
            Sub(
                subtopology_id="0",
                source_topics=["t"],
                source_topic_regex=[],
                state_changelog_topics=[],
                repartition_sink_topics=[],
                repartition_source_topics=[],
                copartition_groups=[],
            )
        ],
    )
    request = Req(
        group_id=group,
        member_id="k1",
        member_epoch=epoch,
        endpoint_information_epoch=0,
        rebalance_timeout_ms=30_000 if epoch == 0 else -1,
        topology=topology if epoch == 0 else None,
        process_id="instance-1" if epoch == 0 else None,
        active_tasks=[Req.TaskIds(subtopology_id=s, partitions=ps) for s, ps in (active or {}).items()],
        standby_tasks=[],
        warmup_tasks=[],
    )
    response = streams_group_heartbeat.API.handle(ctx, request, 0, CLIENT)
    assert response.error_code == ErrorCode.NONE, response
    return response


def test_the_groups_pages_reset_and_delete_find_a_streams_group(broker):
    ctx, view, _ = broker
    joined = streams_heartbeat(ctx, "app")
    streams_heartbeat(ctx, "app", joined.member_epoch, active={"0": [0]})
    admin_commit = CommitRequest("app", "", -1, None, ((TP, CommittedOffset(4)),))
    assert ctx.services.groups.offsets.commit(admin_commit, ctx.services.clock_ms(), ErrorCode.NONE) == {
        TP: ErrorCode.NONE
    }
    (row,) = [row for row in group_rows(view) if row.group_id == "app"]
    assert (row.group_type, row.protocol_type, row.protocol_name, row.state) == (
        "streams",
        "streams",
        "sticky",
        "STABLE",
    )
    (member,) = row.members
    assert (member.member_id, member.process_id, member.assignment, member.tasks) == (
        "k1",
        "instance-1",
        (TP,),
        ("active 0_0",),
    )
    assert [(lag.tp, lag.committed, lag.lag) for lag in row.lag] == [(TP, 4, 6)]
    with pytest.raises(ConsoleError, match="inactive, but the current state is Stable"):
        plan_reset(view, "app", "earliest", None)
    with pytest.raises(ConsoleError, match="not empty"):
        delete_group(view, "app")
    streams_heartbeat(ctx, "app", epoch=-1)
    plan = plan_reset(view, "app", "earliest", None)
    assert [(r.tp, r.current, r.target) for r in plan] == [(TP, 4, 0)]
    reset_offsets(view, "app", plan)
    assert ctx.services.groups.offsets.fetch("app", None)[TP].offset == 0
    delete_group(view, "app")
    assert "app" not in ctx.services.groups.streams.groups and group_row(view, "app") is None
