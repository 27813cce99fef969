"""Configuration: TOML, TRAFKA_* environment variables and flags, strictly typed."""

from __future__ import annotations

import attrs
import pytest

from trafka.app.config.settings import ConfigError, Settings, load_settings


def test_defaults():
    settings = load_settings()
    assert settings == Settings()  # Kafka's code defaults; `trafka serve` starts from its single-node file
    single_node = load_settings(single_node=True)
    no_delays = attrs.evolve(settings.groups, initial_rebalance_delay_ms=0, streams_initial_rebalance_delay_ms=0)
    assert single_node == attrs.evolve(settings, groups=no_delays)
    assert (settings.server.host, settings.server.port) == ("localhost", 9092)
    assert (settings.storage.kind, settings.storage.data_dir) == ("filesystem", "/tmp/trafka-logs")


def test_toml_then_environment_then_overrides(tmp_path):
    path = tmp_path / "trafka.toml"
    path.write_text('[server]\nport = 9001\nhost = "0.0.0.0"\n[broker]\nnum_partitions = 3\n')
    settings = load_settings(
        str(path),
        {"TRAFKA_SERVER_PORT": "9002", "TRAFKA_BROKER_AUTO_CREATE_TOPICS_ENABLE": "false", "HOME": "/x"},
        {"server": {"host": "127.0.0.1"}},
    )
    assert (settings.server.host, settings.server.port) == ("127.0.0.1", 9002)
    assert settings.broker.num_partitions == 3
    assert settings.broker.auto_create_topics_enable is False


@pytest.mark.parametrize(
    ("toml", "needle"),
    [
        ("[server]\nprot = 1\n", "prot"),
        ("[brokr]\nnode_id = 1\n", "brokr"),
        ('[server]\nport = "many"\n', "config.server.port"),
        ("[broker]\nauto_create_topics_enable = 3\n", "config.broker.auto_create_topics_enable"),
        ('[storage]\nkind = "cloud"\n', "config.storage.kind"),
    ],
)
def test_a_bad_key_or_value_is_an_error_that_names_it(tmp_path, toml, needle):
    path = tmp_path / "trafka.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError) as info:
        load_settings(str(path))
    assert needle in str(info.value)


def test_the_log_cleaner_section_is_set_from_the_environment():
    settings = load_settings(environ={"TRAFKA_LOG_CLEANER_BACKOFF_MS": "100", "TRAFKA_LOG_SEGMENT_BYTES": "2097152"})
    assert (settings.log_cleaner.backoff_ms, settings.log.segment_bytes) == (100, 2097152)


def test_log_segment_bytes_below_a_mebibyte_is_refused_in_kafkas_words():
    """Kafka 4.1+ refuses log.segment.bytes below 1 MiB; tests roll smaller segments with the topic
    config internal.segment.bytes, as Kafka's do."""
    with pytest.raises(
        ConfigError, match="Invalid value 1048575 for configuration log.segment.bytes: Value must be at least 1048576"
    ):
        load_settings(environ={"TRAFKA_LOG_SEGMENT_BYTES": "1048575"})
    assert load_settings(environ={"TRAFKA_LOG_SEGMENT_BYTES": "1048576"}).log.segment_bytes == 1048576


def test_an_unknown_environment_variable_is_named():
    with pytest.raises(ConfigError, match="TRAFKA_SERVR_PORT"):
        load_settings(environ={"TRAFKA_SERVR_PORT": "1"})
    with pytest.raises(ConfigError, match="prot"):
        load_settings(environ={"TRAFKA_SERVER_PROT": "1"})


def test_trafkas_variables_that_are_no_setting_are_not_read_as_settings():
    # the operator commands' broker and the attrs code cache's switch (ADR 128): a shell that sets them
    # can still start a broker
    environ = {"TRAFKA_BOOTSTRAP": "localhost:9092", "TRAFKA_ATTRS_CODE_CACHE": "0"}
    assert load_settings(environ=environ) == load_settings(environ={})


def test_unreadable_or_invalid_toml(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_settings(str(tmp_path / "missing.toml"))
    bad = tmp_path / "bad.toml"
    bad.write_text("[server\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(str(bad))
