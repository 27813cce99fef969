"""A streams group (KIP-1071) side by side: the same member joins a group on each broker with
StreamsGroupHeartbeat v0, heartbeats with the tasks it was given, then with task offsets (which Kafka
4.2 refuses as not supported yet), and leaves; each answer and the StreamsGroupDescribe v0 answers after
each step (state, epochs, topology, the member with its process, client id and host, its tasks and
task offsets, the authorized operations) are compared field by field. The group's
`streams.*` configs go first through IncrementalAlterConfigs and DescribeConfigs on both: the initial
rebalance delay off, as the rest of the suite runs, and a session timeout out of the broker's bounds."""

from __future__ import annotations

import uuid

import pytest
from kafka.protocol.admin import (
    DescribeConfigsRequest,
    DescribeConfigsResponse,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
)

from tests.kafka_python_messages import (
    StreamsGroupDescribeRequest,
    StreamsGroupDescribeResponse,
    StreamsGroupHeartbeatRequest,
    StreamsGroupHeartbeatResponse,
)

from .compare import Pair, Wire, compare
from .test_flows import _create

pytestmark = pytest.mark.timeout(900)

Hb = StreamsGroupHeartbeatRequest
STREAMS_KEYS = [
    "streams.heartbeat.interval.ms",
    "streams.initial.rebalance.delay.ms",
    "streams.num.standby.replicas",
    "streams.session.timeout.ms",
]


def _alter(group: str, name: str, value: str) -> IncrementalAlterConfigsRequest:
    R = IncrementalAlterConfigsRequest.AlterConfigsResource
    config = R.AlterableConfig(name=name, config_operation=0, value=value)
    return IncrementalAlterConfigsRequest[1](
        resources=[R(resource_type=32, resource_name=group, configs=[config])], validate_only=False
    )


def _heartbeat(group: str, epoch: int, topic: str = "", tasks=None, offsets=None) -> Hb:
    joining = epoch == 0
    Sub = Hb.Topology.Subtopology
    topology = Hb.Topology(
        epoch=1,
        subtopologies=[
            Sub(
                subtopology_id="0",
                source_topics=[topic],
                source_topic_regex=[],
                state_changelog_topics=[],
                repartition_sink_topics=[],
                repartition_source_topics=[],
                copartition_groups=[],
            )
        ],
    )
    owned = [Hb.TaskIds(subtopology_id=s, partitions=ps) for s, ps in (tasks or {}).items()]
    return Hb(
        group_id=group,
        member_id="differential-member",
        member_epoch=epoch,
        endpoint_information_epoch=0,
        instance_id=None,
        rack_id=None,
        rebalance_timeout_ms=30_000 if joining else -1,
        topology=topology if joining else None,
        active_tasks=owned if joining or tasks is not None else None,
        standby_tasks=[] if joining or tasks is not None else None,
        warmup_tasks=[] if joining or tasks is not None else None,
        process_id="differential-process" if joining else None,
        user_endpoint=None,
        client_tags=[] if joining else None,
        task_offsets=[Hb.TaskOffset(subtopology_id="0", partition=p, offset=o) for p, o in offsets.items()]
        if offsets
        else None,
        task_end_offsets=None,
        shutdown_application=False,
    )


def test_a_streams_group_joins_heartbeats_leaves_and_is_described(pair: Pair):
    group = f"streams-{uuid.uuid4().hex[:8]}"
    topic = f"streams-lines-{uuid.uuid4().hex[:8]}"
    _create(pair, topic, partitions=2)
    answers = {}

    def run(node):
        steps = []
        with Wire(node.bootstrap) as wire:

            def describe(step: str) -> None:
                request = StreamsGroupDescribeRequest(group_ids=[group], include_authorized_operations=True)
                steps.append((f"StreamsGroupDescribe {step}", wire.request(request, StreamsGroupDescribeResponse, 0)))

            off = _alter(group, "streams.initial.rebalance.delay.ms", "0")
            steps.append(("config delay off", wire.request(off, IncrementalAlterConfigsResponse, 1)))
            low = _alter(group, "streams.session.timeout.ms", "1000")
            steps.append(("config session timeout too low", wire.request(low, IncrementalAlterConfigsResponse, 1)))
            R = DescribeConfigsRequest.DescribeConfigsResource
            configs = DescribeConfigsRequest[4](
                resources=[R(resource_type=32, resource_name=group, configuration_keys=STREAMS_KEYS)],
                include_synonyms=False,
                include_documentation=False,
            )
            steps.append(("describe configs", wire.request(configs, DescribeConfigsResponse, 4)))
            joined = wire.request(_heartbeat(group, 0, topic), StreamsGroupHeartbeatResponse, 0)
            steps.append(("StreamsGroupHeartbeat join", joined))
            describe("after join")
            tasks = {t.subtopology_id: list(t.partitions) for t in joined.active_tasks or []}
            owned = wire.request(_heartbeat(group, joined.member_epoch, tasks=tasks), StreamsGroupHeartbeatResponse, 0)
            steps.append(("StreamsGroupHeartbeat with its tasks", owned))
            describe("stable")
            again = _heartbeat(group, joined.member_epoch, tasks=tasks, offsets={0: 3, 1: 5})
            beat = wire.request(again, StreamsGroupHeartbeatResponse, 0)
            steps.append(("StreamsGroupHeartbeat with task offsets", beat))  # Kafka 4.2: not supported yet
            describe("after task offsets")
            leave = wire.request(_heartbeat(group, -1), StreamsGroupHeartbeatResponse, 0)
            steps.append(("StreamsGroupHeartbeat leave", leave))
            describe("empty")
        answers[node.name] = steps

    pair.each(run)
    for (step, kafka), (_, trafka) in zip(answers["kafka"], answers["trafka"], strict=True):
        compare(f"Streams group: {step}", kafka, trafka)
