"""Hostile share-group clients (issue 42) against a real broker with real clients.

- 3: KIP-1191's dead-letter safeguards: a group names only a topic with the broker's prefix (`dlq.`,
  `errors.deadletterqueue.topic.name.prefix`), and only a topic that opted in
  (`errors.deadletterqueue.group.enable=true`) receives copies.
"""

from __future__ import annotations

import pytest
from confluent_kafka import AcknowledgeType, Consumer, KafkaError, KafkaException, TopicPartition

from .clients import create_topic, unique
from .groups_helpers import TIMEOUT, produce, wait_until
from .test_share_groups import earliest, logger, members, sbroker  # noqa: F401 (fixtures)


@pytest.fixture
def bootstrap(sbroker) -> str:
    return sbroker.bootstrap


def test_a_dead_letter_topic_carries_the_prefix_and_opts_in(bootstrap, logger):
    """KIP-1191: a group cannot name any topic (INVALID_CONFIG without the `dlq.` prefix), and a prefixed
    topic that did not opt in (`errors.deadletterqueue.group.enable`) receives no copy."""
    topic, group, plain, closed = unique("share"), unique("sg"), unique("ledger"), "dlq." + unique("dlq")
    for name in (topic, plain, closed):
        create_topic(bootstrap, name, 1, logger=logger)
    with pytest.raises(KafkaException) as refused:
        earliest(bootstrap, group, logger, errors_deadletterqueue_topic_name=plain)
    assert refused.value.args[0].code() == KafkaError.INVALID_CONFIG
    earliest(bootstrap, group, logger, errors_deadletterqueue_topic_name=closed)
    produce(bootstrap, topic, [0], 1, logger=logger)
    with members(bootstrap, logger, topic, group, 1, **{"share.acknowledgement.mode": "explicit"}) as (m,):

        def step() -> None:
            for message in m.poll(ack=None):
                m.consumer.acknowledge(message, AcknowledgeType.REJECT)

        wait_until(lambda: m.got, "the record delivered and rejected", step=step)
        m.consumer.commit_sync()
    for name in (plain, closed):
        assert end_offset(bootstrap, name, logger) == 0, name


def end_offset(bootstrap: str, topic: str, logger) -> int:
    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("end"), "logger": logger})
    try:
        return reader.get_watermark_offsets(TopicPartition(topic, 0), timeout=TIMEOUT)[1]
    finally:
        reader.close()
