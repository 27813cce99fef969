"""Leader epochs per partition through the catalog and the replica manager, on both log stores: a new
partition is led at epoch 0 from offset 0; DeleteRecords truncates the entries from the start; the file
store writes Kafka's `leader-epoch-checkpoint` in the partition dir and reads it back after a restart."""

from __future__ import annotations

import os

import pytest

from tests.batches import make_batch
from trafka.adapters.filesystem.leader_epoch_checkpoint import read_leader_epochs, write_leader_epochs
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.errors import ErrorCode
from trafka.domain.topics import TopicPartition

TP = TopicPartition("t", 0)
NOW = 1_700_000_000_000


def _broker(kind: str, path: str):
    storage = {"kind": "memory"} if kind == "memory" else {"kind": "filesystem", "data_dir": path}
    settings = load_settings(overrides={"storage": storage})
    adapters = default_adapters(settings)
    return bootstrap(settings, adapters), adapters


@pytest.mark.parametrize("kind", ["memory", "filesystem"])
def test_epochs_of_a_new_partition_and_after_delete_records(kind, tmp_path):
    ctx, _ = _broker(kind, str(tmp_path))
    ctx.services.catalog.create("t", 1, 1)
    for _ in range(3):
        ctx.services.replicas.produce(TP, make_batch([(NOW, b"k", b"v")] * 2), NOW)
    assert ctx.services.replicas.end_offset_for_epoch(TP, 0, 0) == (ErrorCode.NONE, 0, 6)
    assert ctx.services.replicas.end_offset_for_epoch(TP, -1, 1) == (ErrorCode.NONE, -1, -1)
    assert ctx.services.replicas.end_offset_for_epoch(TP, 1, 0)[0] == ErrorCode.UNKNOWN_LEADER_EPOCH
    assert (
        ctx.services.replicas.end_offset_for_epoch(TopicPartition("t", 9), -1, 0)[0]
        == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    )
    ctx.services.replicas.delete_records(TP, 4)
    log = ctx.services.replicas._logs.get(TP)
    assert log.leader_epoch_entries() == [(0, 4)]
    if kind == "filesystem":
        assert read_leader_epochs(os.path.join(str(tmp_path), "t-0")) == [(0, 4)]


def test_the_file_is_kafkas_and_survives_a_restart(tmp_path):
    ctx, adapters = _broker("filesystem", str(tmp_path))
    ctx.services.catalog.create("t", 1, 1)
    path = os.path.join(str(tmp_path), "t-0", "leader-epoch-checkpoint")
    with open(path) as f:
        assert f.read() == "0\n1\n0 0\n"  # Kafka's CheckpointFile: version, count, "epoch offset"
    ctx.services.replicas.produce(TP, make_batch([(NOW, b"k", b"v")] * 3), NOW)
    write_leader_epochs(os.path.dirname(path), [(0, 0), (3, 2)])  # as a Kafka broker that led at epoch 3 would
    adapters.stop()
    ctx, adapters = _broker("filesystem", str(tmp_path))
    assert ctx.services.replicas.end_offset_for_epoch(TP, -1, 0) == (ErrorCode.NONE, 0, 2)
    assert ctx.services.replicas.end_offset_for_epoch(TP, -1, 3) == (ErrorCode.NONE, 3, 3)
    adapters.stop()


def test_a_log_without_the_file_is_led_from_its_start(tmp_path):
    ctx, adapters = _broker("filesystem", str(tmp_path))
    ctx.services.catalog.create("t", 1, 1)
    ctx.services.replicas.produce(TP, make_batch([(NOW, b"k", b"v")] * 3), NOW)
    adapters.stop()
    os.remove(os.path.join(str(tmp_path), "t-0", "leader-epoch-checkpoint"))
    ctx, adapters = _broker("filesystem", str(tmp_path))
    assert ctx.services.replicas.end_offset_for_epoch(TP, 0, 0) == (ErrorCode.NONE, 0, 3)
    assert read_leader_epochs(os.path.join(str(tmp_path), "t-0")) == [(0, 0)]
    adapters.stop()


@pytest.mark.parametrize("text", ["", "1\n1\n0 0\n", "0\n2\n0 0\n", "0\nx\n", "0\n1\n0\n"])
def test_a_malformed_file_reads_as_no_entries(tmp_path, text):
    (tmp_path / "leader-epoch-checkpoint").write_text(text)
    assert read_leader_epochs(str(tmp_path)) == []
