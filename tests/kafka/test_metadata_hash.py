"""trafka's group metadata hash (KIP-1101) against Kafka's own: `MetadataHash.java` calls Kafka's
`Utils.computeTopicHash` and `computeGroupHash` from the pom's jars on the same topics."""

from __future__ import annotations

import base64
import random
import subprocess
import uuid
from pathlib import Path

import xxhash

from trafka.domain.groups.metadata_hash import MetadataHasher, group_hash, topic_hash

from .reference import classpath

HERE = Path(__file__).parent
Topic = tuple[str, uuid.UUID, int, list[list[str]]]


def _kafka_id(topic_id: uuid.UUID) -> str:
    return base64.urlsafe_b64encode(topic_id.bytes).decode().rstrip("=")


def _groups() -> list[list[Topic]]:
    rng = random.Random(1101)
    alphabet = "abcXYZ09._-"
    racks = ["r0", "r1", "rack-é", "机架", "😀", "Z"]  # Java's String order is by UTF-16 code unit
    groups: list[list[Topic]] = [[]]
    groups.append([("orders", uuid.UUID(int=1), 3, [])])
    groups.append([("wide", uuid.uuid4(), 900, [])])  # past XXH3's 240-byte and 1 KiB stretches
    for _ in range(120):
        group = []
        for _ in range(rng.randint(1, 5)):
            name = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))
            partitions = rng.choice([1, 2, 3, 8, 50, 300])
            with_racks = rng.random() < 0.3
            rack_lists = [rng.sample(racks, rng.randint(0, 3)) for _ in range(partitions)] if with_racks else []
            group.append((name, uuid.UUID(int=rng.getrandbits(128)), partitions, rack_lists))
        groups.append(list({t[0]: t for t in group}.values()))
    return groups


def _line(group: list[Topic]) -> str:
    return ";".join(
        f"{name}/{_kafka_id(tid)}/{count}/{','.join('|'.join(r) for r in racks)}" for name, tid, count, racks in group
    )


def test_topic_and_group_hashes_are_kafkas():
    groups = _groups()
    answer = subprocess.run(
        ["java", "-cp", classpath(), str(HERE / "MetadataHash.java")],
        input="\n".join(_line(g) for g in groups) + "\n",
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    lines = answer.stdout.splitlines()
    assert len(lines) == len(groups)
    hash64 = xxhash.xxh3_64_intdigest
    for group, line in zip(groups, lines, strict=True):
        *topic_fields, group_field = line.split(" ")
        kafka_topics = dict(field.split("=", 1) for field in topic_fields)
        ours = {name: topic_hash(hash64, name, tid, count, racks) for name, tid, count, racks in group}
        assert {name: str(h) for name, h in ours.items()} == kafka_topics, line
        assert str(group_hash(hash64, ours)) == group_field
        if not any(racks for *_, racks in group):  # trafka's topics have no racks: the hasher's path
            hasher = MetadataHasher(hash64)
            assert str(hasher.group_hash({n: (str(t), c) for n, t, c, _ in group})) == group_field
