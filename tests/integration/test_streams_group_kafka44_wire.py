"""Kafka 4.4's streams group surface on the wire against the real server (KIP-1331): with Kafka's
in-memory topology description plugin configured, a member joining with StreamsGroupHeartbeat v1 is
asked for its topology description, pushes it with StreamsGroupTopologyDescriptionUpdate (key 93), and
StreamsGroupDescribe v1 returns it; a broker pinned to Kafka 4.2 advertises none of it; the `streams.*`
GROUP configs go through IncrementalAlterConfigs and reach the heartbeat."""

from __future__ import annotations

from kafka.protocol.admin import IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

from tests.kafka_python_messages import (
    StreamsGroupDescribeRequest,
    StreamsGroupDescribeResponse,
    StreamsGroupHeartbeatRequest,
    StreamsGroupHeartbeatResponse,
    StreamsGroupTopologyDescriptionUpdateRequest,
    StreamsGroupTopologyDescriptionUpdateResponse,
)

from .broker import BrokerProcess
from .wire import WireClient

PLUGIN = "org.apache.kafka.server.streams.InMemoryTopologyDescriptionPlugin"
Hb = StreamsGroupHeartbeatRequest
Update = StreamsGroupTopologyDescriptionUpdateRequest


def _versions(client: WireClient) -> dict[int, tuple[int, int]]:
    response = client.request(
        ApiVersionsRequest[3](client_software_name="t", client_software_version="1"), ApiVersionsResponse, 3
    )
    return {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}


def _join(client: WireClient) -> object:
    Sub = Hb.Topology.Subtopology
    request = Hb(
        group_id="wc",
        member_id="member-1",
        member_epoch=0,
        endpoint_information_epoch=0,
        instance_id=None,
        rack_id=None,
        rebalance_timeout_ms=30_000,
        topology=Hb.Topology(
            epoch=1,
            subtopologies=[
                Sub(
                    subtopology_id="0",
                    source_topics=["lines"],
                    source_topic_regex=[],
                    state_changelog_topics=[],
                    repartition_sink_topics=[],
                    repartition_source_topics=[],
                    copartition_groups=[],
                )
            ],
        ),
        active_tasks=[],
        standby_tasks=[],
        warmup_tasks=[],
        process_id="process-1",
        user_endpoint=None,
        client_tags=[],
        task_offsets=None,
        task_end_offsets=None,
        shutdown_application=False,
    )
    return client.request(request, StreamsGroupHeartbeatResponse, 1)


def _push(client: WireClient) -> object:
    Desc = Update.TopologyDescription
    Sub = Desc.TopologyDescriptionSubtopology
    node = Sub.TopologyDescriptionNode(
        name="KSTREAM-SOURCE-0000000000",
        node_type=1,
        source_topics=["lines"],
        sink_topic=None,
        stores=[],
        successors=[],
    )
    request = Update(
        group_id="wc",
        member_id="member-1",
        topology_epoch=1,
        topology_description=Desc(subtopologies=[Sub(subtopology_id="0", nodes=[node])], global_stores=[]),
    )
    return client.request(request, StreamsGroupTopologyDescriptionUpdateResponse, 0)


def test_a_member_pushes_its_topology_description_and_describe_returns_it(tmp_path):
    props = tmp_path / "server.properties"
    props.write_text(f"log.dirs={tmp_path / 'logs'}\ngroup.streams.topology.description.plugin.class={PLUGIN}\n")
    broker = BrokerProcess(["--config", str(props)]).start()
    try:
        with WireClient(broker.bootstrap) as client:
            versions = _versions(client)
            assert (versions[88], versions[89], versions[93]) == ((0, 1), (0, 1), (0, 0))
            joined = _join(client)
            assert joined.error_code == 0 and joined.topology_description_required is True
            pushed = _push(client)
            assert (pushed.error_code, pushed.error_message) == (0, None)
            request = StreamsGroupDescribeRequest(
                group_ids=["wc"], include_authorized_operations=False, include_topology_description=True
            )
            (group,) = client.request(request, StreamsGroupDescribeResponse, 1).groups
            assert (group.error_code, group.topology_description_status, group.assignor_name) == (0, 3, "sticky")
            (sub,) = group.topology_description.subtopologies
            assert [(n.name, n.source_topics) for n in sub.nodes] == [("KSTREAM-SOURCE-0000000000", ["lines"])]
            R = IncrementalAlterConfigsRequest.AlterConfigsResource
            alter = IncrementalAlterConfigsRequest[1](
                resources=[
                    R(
                        resource_type=32,
                        resource_name="wc",
                        configs=[
                            R.AlterableConfig(name="streams.heartbeat.interval.ms", config_operation=0, value="4000")
                        ],
                    )
                ],
                validate_only=False,
            )
            (answer,) = client.request(alter, IncrementalAlterConfigsResponse, 1).responses
            assert (answer.error_code, answer.error_message) == (40, (
                "streams.heartbeat.interval.ms must be greater than or equal to group.streams.min.heartbeat.interval.ms"
            ))  # fmt: skip
    finally:
        assert broker.stop() == 0, broker.log()


def test_a_broker_pinned_to_4_2_advertises_no_4_4_streams_surface(tmp_path):
    broker = BrokerProcess(["--data-dir", str(tmp_path / "logs"), "--kafka-version", "4.2"]).start()
    try:
        with WireClient(broker.bootstrap) as client:
            versions = _versions(client)
            assert 93 not in versions and versions[88] == (0, 0) and versions[89] == (0, 0)
    finally:
        assert broker.stop() == 0, broker.log()
