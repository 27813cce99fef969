"""The ConsumerProtocol bytes of classic members (ADR 50), through kafka-python's classes: what a
classic client sends round-trips at every version; any bytes give a value or ValueError, never
another exception; an assignment is written in the subscription's version."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription

from trafka.adapters.kafka.wire.consumer_protocol import KafkaPythonConsumerProtocol

codec = KafkaPythonConsumerProtocol()
topics = st.text(alphabet="abcxyz-_.", min_size=1, max_size=8)
partitions = st.dictionaries(topics, st.frozensets(st.integers(0, 50), min_size=1, max_size=5), max_size=4)


@given(version=st.integers(0, 3), subscribed=st.lists(topics, max_size=4), owned=partitions, rack=st.none() | topics)
def test_a_subscription_reads_back_at_every_version(version, subscribed, owned, rack):
    cls = ConsumerProtocolSubscription
    fields = {"version": version, "topics": subscribed, "user_data": None}
    if version >= 1:
        fields["owned_partitions"] = [
            cls.TopicPartition(version=version, topic=t, partitions=sorted(ps)) for t, ps in owned.items()
        ]
    if version >= 2:
        fields["generation_id"] = 3
    if version >= 3:
        fields["rack_id"] = rack
    read = codec.subscription(bytes(cls(**fields).encode(version=version)))
    assert read.topics == tuple(subscribed)
    assert read.owned == (owned if version >= 1 else {})
    assert read.rack_id == (rack if version >= 3 else None)


@given(version=st.integers(0, 3), assigned=partitions)
def test_an_assignment_is_written_in_the_subscriptions_version(version, assigned):
    subscription = _subscription(version)
    data = codec.encode_assignment(assigned, subscription)
    assert int.from_bytes(data[:2], "big") == version
    decoded = ConsumerProtocolAssignment.decode(data, version=version)
    assert {tp.topic: frozenset(tp.partitions) for tp in decoded.assigned_partitions} == assigned
    assert codec.assignment(data) == assigned


def _subscription(version: int) -> bytes:
    cls = ConsumerProtocolSubscription
    fields = {"version": version, "topics": ["t"], "user_data": None}
    if version >= 1:
        fields["owned_partitions"] = []
    if version >= 2:
        fields["generation_id"] = -1
    if version >= 3:
        fields["rack_id"] = None
    return bytes(cls(**fields).encode(version=version))


@given(st.binary(max_size=64))
def test_any_bytes_are_read_or_refused_with_value_error(data):
    for read in (codec.subscription, codec.assignment):
        try:
            read(data)
        except ValueError:
            pass


def test_a_later_version_is_read_as_the_highest_known_and_a_negative_one_is_malformed():
    v3 = _subscription(3)
    assert codec.subscription((7).to_bytes(2, "big") + v3[2:]).topics == ("t",)
    for bad in (b"", b"\x00", b"\xff\xff" + v3[2:]):
        try:
            codec.subscription(bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad!r} was read")
