"""Issue 39: a table whose values already have their fields' types is built without cattrs (`_plain`), as
cattrs builds it; any other table, or a refusal, is cattrs' own, value for value and message for message."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import attrs
import cattrs
import pytest

from trafka.app.config.sections import Settings
from trafka.app.config.settings import ConfigError, load_configuration
from trafka.app.config.structure import _converter, _NotPlain, _plain, _resolved_settings, structure

_resolved_settings()  # the sections' annotations made types, as `structure` does first

# The tables `Broker()` and `trafka serve --memory --port 0` structure at start.
STARTS = (
    {
        "server": {"host": "127.0.0.1", "port": 0, "shutdown_grace_seconds": 1.0},
        "broker": {"auto_create_topics_enable": True},
        "groups": {"initial_rebalance_delay_ms": 0, "streams_initial_rebalance_delay_ms": 0},
        "storage": {"kind": "memory"},
    },
    {"groups": {"initial_rebalance_delay_ms": 0}, "server": {"port": 0}, "storage": {"kind": "memory"}},
)


def by_cattrs(raw: dict[str, Any]) -> Any:
    return _converter().structure(raw, Settings)


@pytest.mark.parametrize("raw", STARTS)
def test_the_start_tables_are_built_without_cattrs_as_cattrs_builds_them(raw):
    assert _plain(raw, Settings) == by_cattrs(raw)


def every_default() -> list[dict[str, Any]]:
    """One table per field of every section: the field set to its default, which for most is plain."""
    tables = []
    defaults = Settings()
    for section in attrs.fields(Settings):
        value = getattr(defaults, section.name)
        if not attrs.has(type(value)):
            tables.append({section.name: value})
            continue
        for field in attrs.fields(type(value)):
            tables.append({section.name: {field.name: getattr(value, field.name)}})
    return tables


def test_each_field_at_its_default_is_built_as_cattrs_builds_it():
    plain = 0
    for raw in every_default():
        assert structure(raw, Settings) == by_cattrs(raw), raw
        try:
            _plain(raw, Settings)
            plain += 1
        except _NotPlain:
            pass
    assert plain > len(every_default()) // 2  # most defaults are plain (the others are cattrs')


@pytest.mark.parametrize(
    "raw",
    [
        {"server": {"port": "9092"}},  # a string for an int: converted by cattrs
        {"server": {"shutdown_grace_seconds": 2}},  # an int for a float
        {"broker": {"auto_create_topics_enable": "false"}},  # a boolean's word
        {"storage": {"kind": "memory"}, "log_level": "DEBUG"},
    ],
)
def test_a_value_to_convert_is_left_to_cattrs(raw):
    assert structure(raw, Settings) == by_cattrs(raw)


@pytest.mark.parametrize(
    "raw",
    [
        {"server": {"port": True}},  # a bool is no int
        {"server": {"prot": 1}},  # a key that names no field
        {"storage": {"kind": "disk"}},  # no such choice
        {"server": "here"},  # a section that is no table
    ],
)
def test_a_refusal_is_cattrs_own(raw):
    with pytest.raises(cattrs.BaseValidationError) as plain_path:
        structure(raw, Settings)
    with pytest.raises(cattrs.BaseValidationError) as cattrs_path:
        by_cattrs(raw)
    assert cattrs.transform_error(plain_path.value) == cattrs.transform_error(cattrs_path.value)


def test_a_refused_key_is_named_in_the_configurations_message():
    with pytest.raises(ConfigError) as refused:
        load_configuration(None, {}, {"server": {"prot": 1}})
    assert str(refused.value) == "invalid configuration: extra fields found (prot) @ config.server"


def test_a_memory_broker_starts_without_cattrs():
    probe = "import sys, trafka\nwith trafka.Broker():\n    pass\nassert 'cattrs' not in sys.modules\n"
    subprocess.run([sys.executable, "-c", probe], check=True, timeout=120)
