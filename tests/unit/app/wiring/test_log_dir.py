"""A log dir's internal logs: all four are opened by one factory, with the settings' segment sizes."""

from __future__ import annotations

import uuid

from trafka.adapters.filesystem import METADATA_TOPIC_ID, LogDir
from trafka.app.config.settings import load_settings
from trafka.app.wiring import log_dir


def test_every_internal_log_comes_from_the_one_factory(tmp_path, monkeypatch) -> None:
    settings = load_settings(None, None, {"groups": {"offsets_topic_segment_bytes": 1 << 20}})
    opened = []

    def recording(*args, **kwargs):
        internal = original(*args, **kwargs)
        opened.append(internal)
        return internal

    original = log_dir.internal_log
    monkeypatch.setattr(log_dir, "internal_log", recording)
    logdir = LogDir.open(str(tmp_path / "logs"), 1, uuid.UUID(int=1), uuid.UUID(int=2))
    stores = log_dir.log_dir_stores(logdir, settings, {}, lambda: 0)
    try:
        assert [(i.log_tp.topic, i.log_tp.partition, i.configs) for i in opened] == [
            ("__cluster_metadata", 0, {}),
            ("__consumer_offsets", 0, {"segment.bytes": str(1 << 20)}),
            ("__transaction_state", 0, {"segment.bytes": str(settings.broker.transaction_state_log_segment_bytes)}),
            ("__share_group_state", 0, {}),
        ]
        assert opened[0].topic_id == METADATA_TOPIC_ID
        assert stores["internal_topic_ids"] == {i.log_tp.topic: i.topic_id for i in opened[1:]}
    finally:
        stores["stop"]()
