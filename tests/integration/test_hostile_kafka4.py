"""Hostile clients on Kafka 4's APIs (issue 42), over the raw wire against a real broker.

Each finding is closed as Apache Kafka 4.2 closes it; each test here failed before its fix.
- 1: a ConsumerGroupHeartbeat regex is compiled and matched by RE2 off the event loop (Kafka: RE2/J in
  a background executor); what RE2 cannot express is INVALID_REGULAR_EXPRESSION.
"""

from __future__ import annotations

import time

from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from trafka.adapters.kafka.wire.messages import ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse

from .wire import WireClient

INVALID_REGULAR_EXPRESSION = 128
PROMPT_S = 1.0  # another connection's well-formed request is answered within this


def create_topic(bootstrap: str, name: str, partitions: int = 1) -> None:
    Topic = CreateTopicsRequest.CreatableTopic
    request = CreateTopicsRequest[5](
        topics=[Topic(name=name, num_partitions=partitions, replication_factor=1, assignments=[], configs=[])],
        timeout_ms=10_000,
        validate_only=False,
    )
    with WireClient(bootstrap) as client:
        answer = client.request(request, CreateTopicsResponse, 5)
    assert answer.topics[0].error_code in (0, 36), answer


def round_trip_s(client: WireClient) -> float:
    started = time.monotonic()
    assert client.request(MetadataRequest[1](topics=[]), MetadataResponse, 1).brokers
    return time.monotonic() - started


def join_with_regex(client: WireClient, group: str, pattern: str):
    request = ConsumerGroupHeartbeatRequest[1](
        group_id=group,
        member_id=f"{group}-member",
        member_epoch=0,
        rebalance_timeout_ms=30_000,
        subscribed_topic_regex=pattern,
        topic_partitions=[],
    )
    return client.request(request, ConsumerGroupHeartbeatResponse, 1)


def test_a_catastrophic_regex_does_not_stall_the_broker(bootstrap, topic_name):
    create_topic(bootstrap, topic_name + "-" + "a" * 26)
    with WireClient(bootstrap) as attacker, WireClient(bootstrap) as bystander:
        started = time.monotonic()
        answer = join_with_regex(attacker, topic_name, "(.+)+X")
        assert answer.error_code == 0 and time.monotonic() - started < PROMPT_S
        time.sleep(0.2)  # the resolution runs meanwhile
        assert round_trip_s(bystander) < PROMPT_S
        again = ConsumerGroupHeartbeatRequest[1](
            group_id=topic_name, member_id=answer.member_id, member_epoch=answer.member_epoch
        )
        assert attacker.request(again, ConsumerGroupHeartbeatResponse, 1).error_code == 0


def test_what_re2_cannot_express_is_invalid_regular_expression(bootstrap, topic_name):
    with WireClient(bootstrap) as client, WireClient(bootstrap) as bystander:
        for pattern in ["(?=x)", r"(a)\1", "a" * 1_600_000]:
            client.send(
                ConsumerGroupHeartbeatRequest[1](
                    group_id=topic_name,
                    member_id="m",
                    member_epoch=0,
                    rebalance_timeout_ms=30_000,
                    subscribed_topic_regex=pattern,
                    topic_partitions=[],
                ),
                1,
            )
            assert round_trip_s(bystander) < PROMPT_S  # a large pattern compiles in a worker thread
            answer = client.receive(ConsumerGroupHeartbeatResponse, 1)
            assert answer.error_code == INVALID_REGULAR_EXPRESSION, pattern[:10]
            assert "is not a valid regular expression" in answer.error_message
