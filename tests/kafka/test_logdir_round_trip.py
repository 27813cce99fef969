"""trafka's log dir under Apache Kafka and back (issue 36, item 4): the documented way from one trafka
to a Kafka cluster. trafka writes topics (configs, a compacted one, every codec, headers), idempotent and
transactional records (committed and aborted), a classic and a KIP-848 group's committed offsets, a
share group's progress (records accepted, rejected, left available), a SCRAM user, ACLs, a client quota
and its finalized features; it stops; Kafka 4.2.2 starts on the same directory and serves all of it to
real clients (the SCRAM login, an ACL denial, the share group going on where it was); Kafka writes more
and stops; trafka opens the directory again and serves everything, Kafka's writes included.

Kafka runs with `controller.quorum.voters` (a static single voter): trafka's metadata log records no
voter set (see ADR 64).
"""

from __future__ import annotations

import contextlib
import json

import pytest
from confluent_kafka import AcknowledgeType, Consumer, KafkaException, Producer, ShareConsumer, TopicPartition
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)
from kafka.protocol.admin import (
    AlterClientQuotasRequest,
    AlterClientQuotasResponse,
    DescribeClientQuotasRequest,
    DescribeClientQuotasResponse,
)
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

from tests.integration.broker import DATA_DIR_ENV, BrokerProcess
from tests.integration.secured import add_scram_users
from tests.integration.wire import WireClient
from tests.waiting import eventually, throughout

from .reference import PLAIN_USERS, STANDARD_AUTHORIZER, SUPER_USERS, ReferenceKafka

SCRAM = {"carol": "carol-secret"}
_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    + " ".join(f'user_{name}="{password}"' for name, password in PLAIN_USERS.items())
    + ";"
)
# trafka configured as the reference Kafka is: PLAINTEXT (ANONYMOUS, a super user) and SASL_PLAINTEXT
TRAFKA_CONFIG = f"""
[server]
listeners = "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0"

[security]
sasl_enabled_mechanisms = "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512"
authorizer_class_name = "{STANDARD_AUTHORIZER}"
super_users = "{";".join(SUPER_USERS)}"

[security.listener_name.sasl_plaintext]
plain_sasl_jaas_config = '{_JAAS}'
"""


@contextlib.contextmanager
def _trafka(folder, data):
    """trafka on `data`, configured as the reference Kafka; yields (PLAINTEXT, SASL_PLAINTEXT) addresses."""
    (folder / "trafka.toml").write_text(TRAFKA_CONFIG)
    ready = folder / "ready.json"
    ready.unlink(missing_ok=True)
    args = ["--data-dir", str(data), "--config", str(folder / "trafka.toml"), "--ready-file", str(ready)]
    broker = BrokerProcess(args, env=DATA_DIR_ENV).start()
    try:
        listeners = json.loads(ready.read_text())["listeners"]
        ports = {name.upper(): listener["port"] for name, listener in listeners.items()}
        yield broker, f"127.0.0.1:{ports['PLAINTEXT']}", f"127.0.0.1:{ports['SASL_PLAINTEXT']}"
    finally:
        if broker.process is not None and broker.process.poll() is None:
            broker.process.kill()
            broker.process.wait(10)


CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
TIMEOUT = 60.0


def _create(bootstrap: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    topics = [NewTopic(f"codec-{codec}", 1, 1) for codec in CODECS]
    topics.append(NewTopic("configured", 2, 1, config={"retention.ms": "86400000", "max.message.bytes": "200000"}))
    topics.append(NewTopic("compacted", 1, 1, config={"cleanup.policy": "compact"}))
    topics.append(NewTopic("txn", 1, 1))
    topics.append(NewTopic(SHARED, 1, 1))
    for future in admin.create_topics(topics).values():
        future.result(TIMEOUT)


def _produce(bootstrap: str, tag: str) -> None:
    for codec in CODECS:
        producer = Producer({"bootstrap.servers": bootstrap, "compression.type": codec, "enable.idempotence": True})
        for i in range(5):
            producer.produce(
                f"codec-{codec}",
                key=f"{tag}{i}".encode(),
                value=f"{tag}-{codec}-{i}".encode(),
                headers=[("h", tag.encode())],
            )
        assert producer.flush(TIMEOUT) == 0
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for i in range(4):
        producer.produce(
            "configured", key=f"{tag}{i}".encode(), value=f"{tag}-configured-{i}".encode(), partition=i % 2
        )
        producer.produce("compacted", key=b"k%d" % (i % 2), value=f"{tag}-compacted-{i}".encode())
    assert producer.flush(TIMEOUT) == 0
    transactional = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"txn-{tag}"})
    transactional.init_transactions(TIMEOUT)
    transactional.begin_transaction()
    transactional.produce("txn", value=f"{tag}-committed".encode())
    transactional.commit_transaction(TIMEOUT)
    transactional.begin_transaction()
    transactional.produce("txn", value=f"{tag}-aborted".encode())
    transactional.abort_transaction(TIMEOUT)


def _read_all(bootstrap: str, topics: list[str], expected: int, group: str) -> list[tuple]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "log_level": 0,
        }
    )
    consumer.subscribe(topics)
    seen: list[tuple] = []

    def read_all() -> bool:
        if len(seen) < expected:
            message = consumer.poll(0.5)
            if message is not None and not message.error():
                seen.append((message.topic(), message.key(), message.value(), message.headers()))
        return len(seen) >= expected

    try:
        eventually(read_all, TIMEOUT, what=f"{expected} records of {topics}", interval=0, state=lambda: len(seen))
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    return seen


def _committed(bootstrap: str, group: str, partitions: list[TopicPartition]) -> dict[tuple[str, int], int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "log_level": 0})
    try:
        return {(tp.topic, tp.partition): tp.offset for tp in consumer.committed(partitions, timeout=TIMEOUT)}
    finally:
        consumer.close()


def _values(records: list[tuple]) -> set[bytes]:
    return {value for _, _, value, _ in records}


def _secure(bootstrap: str) -> None:
    """carol (SCRAM) may read codec-none in her group and nothing else; a quota on her."""
    add_scram_users(bootstrap, SCRAM)
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    acls = [
        AclBinding(
            ResourceType.TOPIC,
            "codec-none",
            ResourcePatternType.LITERAL,
            "User:carol",
            "*",
            operation,
            AclPermissionType.ALLOW,
        )
        for operation in (AclOperation.READ, AclOperation.DESCRIBE)
    ]
    acls.append(
        AclBinding(
            ResourceType.GROUP,
            "carol-",
            ResourcePatternType.PREFIXED,
            "User:carol",
            "*",
            AclOperation.READ,
            AclPermissionType.ALLOW,
        )
    )
    for future in admin.create_acls(acls).values():
        future.result(TIMEOUT)
    entry = AlterClientQuotasRequest.EntryData
    request = AlterClientQuotasRequest[1](
        entries=[
            entry(
                entity=[entry.EntityData(entity_type="user", entity_name="carol")],
                ops=[entry.OpData(key="producer_byte_rate", value=1048576.0, remove=False)],
            )
        ],
        validate_only=False,
    )
    with WireClient(bootstrap) as wire:
        answer = wire.request(request, AlterClientQuotasResponse, 1)
    assert [e.error_code for e in answer.entries] == [0], answer


def _check_security(bootstrap: str, sasl_bootstrap: str) -> None:
    """carol logs in with SCRAM, reads codec-none, is denied txn; her quota is there."""
    carol = {
        "bootstrap.servers": sasl_bootstrap,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "carol",
        "sasl.password": SCRAM["carol"],
        "log_level": 0,
    }
    consumer = Consumer({**carol, "group.id": "carol-readers", "auto.offset.reset": "earliest"})
    try:
        consumer.assign([TopicPartition("codec-none", 0, 0)])

        def a_record() -> object:
            message = consumer.poll(0.5)
            return message if message is not None and not message.error() else None

        eventually(a_record, TIMEOUT, what="a record of codec-none", interval=0)
        metadata = consumer.list_topics("txn", timeout=TIMEOUT)
        assert metadata.topics["txn"].error is not None
        assert metadata.topics["txn"].error.name() == "TOPIC_AUTHORIZATION_FAILED"
    finally:
        consumer.close()
    component = DescribeClientQuotasRequest.ComponentData(entity_type="user", match_type=0, match="carol")
    with WireClient(bootstrap) as wire:
        quotas = wire.request(
            DescribeClientQuotasRequest[1](components=[component], strict=True), DescribeClientQuotasResponse, 1
        )
    assert [(v.key, v.value) for e in quotas.entries for v in e.values] == [("producer_byte_rate", 1048576.0)]


def _finalized(bootstrap: str) -> dict[str, int]:
    request = ApiVersionsRequest[4](client_software_name="round-trip", client_software_version="1")
    with WireClient(bootstrap) as wire:
        answer = wire.request(request, ApiVersionsResponse, 4)
    return {f.name: f.max_version_level for f in answer.finalized_features}


def _consumer_group_commit(bootstrap: str, group: str) -> None:
    """A KIP-848 member (group.protocol=consumer) reads `configured` and commits."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "log_level": 0,
        }
    )
    try:
        consumer.subscribe(["configured"])
        seen: list[object] = []

        def four_records() -> bool:
            message = consumer.poll(0.5)
            if message is not None and not message.error():
                seen.append(message)
            return len(seen) >= 4

        eventually(four_records, TIMEOUT, what="4 records of configured", interval=0, state=lambda: len(seen))
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()


SHARED, SHARE_GROUP, SHARED_RECORDS = "shared", "sharing", 10


def _share_setup(bootstrap: str) -> None:
    """`shared`: ten records, each in a batch of its own; the share group reads from the earliest."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for i in range(SHARED_RECORDS):
        producer.produce(SHARED, value=b"s%d" % i, partition=0)
        assert producer.flush(TIMEOUT) == 0
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    entry = ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)
    resource = ConfigResource(ResourceType.GROUP, SHARE_GROUP, incremental_configs=[entry])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(TIMEOUT)


def _share_round(bootstrap: str, wanted: set[int], decide, settle: float = 0.0) -> list[int]:
    """A share consumer of the group reads until it has had the offsets `wanted`, acknowledging each
    record as `decide(offset)` says, commits and closes;
    with `settle`, it polls that long more to see that nothing else comes. Every offset delivered."""
    consumer = ShareConsumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": SHARE_GROUP,
            "share.acknowledgement.mode": "explicit",
            "log_level": 0,
        }
    )
    consumer.subscribe([SHARED])
    delivered: list[int] = []

    def poll() -> None:
        for message in consumer.poll(0.5) or []:
            if message.error():
                continue
            delivered.append(message.offset())
            consumer.acknowledge(message, decide(message.offset()))

    try:

        def had_wanted() -> bool:
            if not wanted <= set(delivered):
                poll()
            return wanted <= set(delivered)

        eventually(had_wanted, TIMEOUT, what=f"offsets {sorted(wanted)}", interval=0, state=lambda: delivered)
        consumer.commit_sync()

        def poll_and_commit() -> None:
            poll()
            consumer.commit_sync()

        throughout(poll_and_commit, settle)
    finally:
        consumer.close()
    return delivered


def _reject_at(offset: int, rejected: int) -> AcknowledgeType:
    """REJECT at `rejected`, RELEASE past it (every record of a poll is acknowledged before the next)."""
    return AcknowledgeType.REJECT if offset == rejected else AcknowledgeType.RELEASE


TOPICS = [f"codec-{codec}" for codec in CODECS] + ["configured", "txn"]
PARTITIONS = [TopicPartition(topic, 0) for topic in TOPICS] + [TopicPartition("configured", 1)]
PER_ROUND = 5 * len(CODECS) + 4 + 1  # codecs, configured, the committed transaction


CONFIGURED = [TopicPartition("configured", 0), TopicPartition("configured", 1)]


@pytest.mark.timeout(900)  # two trafka starts and a Kafka start on a loaded 2-core machine: ~3.5 min
def test_kafka_serves_a_log_dir_trafka_wrote_and_trafka_serves_it_back(tmp_path):
    data = tmp_path / "data"
    with _trafka(tmp_path, data) as (trafka, bootstrap, _):
        _create(bootstrap)
        _produce(bootstrap, "t")
        first = _read_all(bootstrap, TOPICS, PER_ROUND, "migrating")
        assert len(first) == PER_ROUND
        committed_by_trafka = _committed(bootstrap, "migrating", PARTITIONS)
        _consumer_group_commit(bootstrap, "modern")
        modern_by_trafka = _committed(bootstrap, "modern", CONFIGURED)
        assert set(modern_by_trafka.values()) != {-1001}
        _secure(bootstrap)
        # the share group accepts 0-4 and rejects 5; what it saw past them it releases
        _share_setup(bootstrap)
        _share_round(bootstrap, set(range(6)), lambda o: AcknowledgeType.ACCEPT if o < 5 else _reject_at(o, 5))
        features = _finalized(bootstrap)
        assert trafka.stop() == 0, trafka.log()

    kafka = ReferenceKafka(tmp_path / "kafka", log_dir=data, existing=True, static_quorum=True, authorizer=True)
    with kafka:
        # every record trafka wrote, headers and all; the aborted transaction stays invisible
        everything = _read_all(kafka.bootstrap, TOPICS, PER_ROUND, "fresh-under-kafka")
        assert sorted(everything) == sorted(first), kafka.log_tail()
        assert b"t-aborted" not in _values(everything)
        # the groups' committed positions, as trafka kept them
        assert _committed(kafka.bootstrap, "migrating", PARTITIONS) == committed_by_trafka, kafka.log_tail()
        assert _committed(kafka.bootstrap, "modern", CONFIGURED) == modern_by_trafka, kafka.log_tail()
        # the features trafka finalized, the SCRAM login, the ACLs, the quota
        finalized = _finalized(kafka.bootstrap)
        assert {name: finalized.get(name, 0) for name in features if name != "kraft.version"} == {
            name: level for name, level in features.items() if name != "kraft.version"
        }
        _check_security(kafka.bootstrap, kafka.listeners["SASL_PLAINTEXT"])
        admin = AdminClient({"bootstrap.servers": kafka.bootstrap, "log_level": 0})
        assert len(admin.list_topics(timeout=TIMEOUT).topics["configured"].partitions) == 2
        # the share group goes on where trafka's share coordinator left it: 0-5 do not come again; it
        # accepts 6 and 7, rejects 8, and releases 9
        rest = set(range(6, SHARED_RECORDS))
        seen = _share_round(kafka.bootstrap, rest, lambda o: AcknowledgeType.ACCEPT if o < 8 else _reject_at(o, 8))
        assert set(seen) == rest, (seen, kafka.log_tail())
        # Kafka writes more, and the groups move on under Kafka
        _produce(kafka.bootstrap, "k")
        moved = _read_all(kafka.bootstrap, TOPICS, PER_ROUND, "migrating")
        assert _values(moved) >= {b"k-none-0", b"k-zstd-4", b"k-committed"}
        committed_by_kafka = _committed(kafka.bootstrap, "migrating", PARTITIONS)
    assert kafka.process is not None and kafka.process.returncode in (0, 143), kafka.log_tail()

    with _trafka(tmp_path, data) as (trafka, bootstrap, sasl_bootstrap):
        everything = _read_all(bootstrap, TOPICS, 2 * PER_ROUND, "fresh-under-trafka")
        assert _values(everything) >= _values(first) | {b"k-none-0", b"k-zstd-4", b"k-committed"}, trafka.log()
        assert not {b"t-aborted", b"k-aborted"} & _values(everything)
        assert _committed(bootstrap, "migrating", PARTITIONS) == committed_by_kafka, trafka.log()
        assert _committed(bootstrap, "modern", CONFIGURED) == modern_by_trafka, trafka.log()
        _check_security(bootstrap, sasl_bootstrap)
        # and back: only 9, which Kafka's share coordinator left available, is delivered again
        assert set(_share_round(bootstrap, {9}, lambda o: AcknowledgeType.ACCEPT, 2)) == {9}, trafka.log()
        try:
            _produce(bootstrap, "again")
        except KafkaException as exc:  # the message says what broke
            raise AssertionError(trafka.log()) from exc
        assert trafka.stop() == 0, trafka.log()
