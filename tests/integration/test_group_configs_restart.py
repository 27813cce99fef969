"""The GROUP config resource survives a broker restart, as Kafka keeps it (ConfigRecords of resource
type GROUP in the metadata log): set through IncrementalAlterConfigs by confluent-kafka's admin, the
broker killed, started again on the same data dir, DescribeConfigs shows the overrides, the consumer
coordinator tells a joining member the group's `consumer.heartbeat.interval.ms`, and the share
coordinator acts on `share.auto.offset.reset=earliest` (a ShareConsumer that joins after the records
were written reads them all; with the default `latest` it would read none). Deleting the share group
drops its share-partition state (`__share_group_state` tombstones) but, as Kafka, not its configs: a
new member after another restart reads everything again from the earliest offset.
"""

from __future__ import annotations

from confluent_kafka import ShareConsumer
from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ConfigSource, ResourceType

from .broker import running
from .clients import client_log_fixture, confluent_admin, create_topic, unique
from .groups_helpers import TIMEOUT, produce, wait_until

SHARE_ENV = {"TRAFKA_GROUPS_SHARE_HEARTBEAT_INTERVAL_MS": "300"}
logger = client_log_fixture("trafka.tests.group_configs")


def alter(bootstrap: str, logger, group: str, **configs: str | None) -> None:
    entries = [
        ConfigEntry(
            name.replace("_", "."),
            value or "",
            incremental_operation=AlterConfigOpType.SET if value is not None else AlterConfigOpType.DELETE,
        )
        for name, value in configs.items()
    ]
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=entries)
    admin = confluent_admin(bootstrap, logger)  # kept alive while its futures run
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(timeout=TIMEOUT)


def overrides(bootstrap: str, logger, group: str) -> dict[str, str]:
    admin = confluent_admin(bootstrap, logger)
    (future,) = admin.describe_configs([ConfigResource(ResourceType.GROUP, group)]).values()
    return {
        e.name: e.value for e in future.result(timeout=TIMEOUT).values() if e.source == ConfigSource.GROUP_CONFIG.value
    }


def heartbeat_interval(bootstrap: str, group: str, topic: str) -> int:
    """What the consumer coordinator tells a joining KIP-848 member (ConsumerGroupHeartbeat v1), sent
    through kafka-python's admin connection as `trafka group describe` sends ConsumerGroupDescribe."""
    import uuid

    from kafka import KafkaAdminClient

    from tests.kafka_python_messages import ConsumerGroupHeartbeatRequest

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        request = ConsumerGroupHeartbeatRequest(
            group_id=group,
            member_id=str(uuid.uuid4()),
            member_epoch=0,
            rebalance_timeout_ms=30_000,
            subscribed_topic_names=[topic],
            topic_partitions=[],
        )

        async def send():
            node = await admin._find_coordinator_id(group)
            return await admin._manager.send(request, node_id=node)

        response = admin._manager.run(send)
        assert response.error_code == 0, response
        return response.heartbeat_interval_ms
    finally:
        admin.close()


def read_all(bootstrap: str, logger, topic: str, group: str, count: int) -> list[int]:
    consumer = ShareConsumer({"bootstrap.servers": bootstrap, "logger": logger, "group.id": group})
    got: list[int] = []
    try:
        consumer.subscribe([topic])

        def poll() -> None:
            got.extend(m.offset() for m in consumer.poll(0.2) or [] if not m.error())

        wait_until(lambda: len(got) >= count, f"{count} records read", step=poll, state=lambda: got)
        consumer.commit_sync()
    finally:
        consumer.close()
    return sorted(got)


def test_group_configs_survive_a_kill_and_restart_and_the_coordinators_use_them(tmp_path, logger):
    topic, share_group, consumer_group = unique("gc"), unique("sg"), unique("cg")
    with running(tmp_path, SHARE_ENV) as broker:
        create_topic(broker.bootstrap, topic, 1, logger=logger)
        alter(
            broker.bootstrap,
            logger,
            share_group,
            share_auto_offset_reset="earliest",
            share_isolation_level="read_committed",
        )
        alter(broker.bootstrap, logger, share_group, share_isolation_level=None)  # removed again
        alter(broker.bootstrap, logger, consumer_group, consumer_heartbeat_interval_ms="6000")
        produce(broker.bootstrap, topic, [0], 5, logger=logger)
    # killed (SIGKILL) on the way out: the records were durable when the admin call returned

    with running(tmp_path, SHARE_ENV) as broker:
        assert overrides(broker.bootstrap, logger, share_group) == {"share.auto.offset.reset": "earliest"}
        assert overrides(broker.bootstrap, logger, consumer_group) == {"consumer.heartbeat.interval.ms": "6000"}
        assert heartbeat_interval(broker.bootstrap, consumer_group, topic) == 6000  # the broker's default: 5000
        assert read_all(broker.bootstrap, logger, topic, share_group, 5) == [0, 1, 2, 3, 4]  # earliest, as configured
        admin = confluent_admin(broker.bootstrap, logger)
        admin.delete_consumer_groups([share_group])[share_group].result(timeout=TIMEOUT)
        assert overrides(broker.bootstrap, logger, share_group) == {"share.auto.offset.reset": "earliest"}

    with running(tmp_path, SHARE_ENV) as broker:
        assert overrides(broker.bootstrap, logger, share_group) == {"share.auto.offset.reset": "earliest"}
        # the group's state went with it, its configs did not: everything again from the earliest offset
        assert read_all(broker.bootstrap, logger, topic, share_group, 5) == [0, 1, 2, 3, 4]
