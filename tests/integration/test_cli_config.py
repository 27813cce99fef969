"""`trafka config show`: the real command, each value with its source."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def trafka(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("KAFKA_", "TRAFKA_"))}
    return subprocess.run(
        [sys.executable, "-m", "trafka", *args],
        capture_output=True,
        text=True,
        env={**clean, **(env or {})},
        timeout=60,
    )


def test_config_show_names_default_file_env_and_flag_sources():
    props = str(FIXTURES / "kafka-4.0-server.properties")
    result = trafka(
        "config",
        "show",
        props,
        "--port",
        "0",
        "--output",
        "json",
        env={"KAFKA_NUM_PARTITIONS": "4", "TRAFKA_GROUPS_MIN_SESSION_TIMEOUT_MS": "10"},
    )
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    rows = {row["setting"]: row for row in shown["settings"]}
    assert (rows["server.port"]["value"], rows["server.port"]["source"]) == (0, "flag")
    assert (rows["broker.num_partitions"]["value"], rows["broker.num_partitions"]["source"]) == (
        4,
        "env KAFKA_NUM_PARTITIONS",
    )
    assert rows["groups.min_session_timeout_ms"]["source"] == "env TRAFKA_GROUPS_MIN_SESSION_TIMEOUT_MS"
    assert rows["log.retention_ms"] == {
        "setting": "log.retention_ms",
        "value": 604800000,
        "source": f"file {props} (log.retention.hours)",
    }
    assert (rows["broker.cluster_id"]["source"], rows["log.roll_ms"]["value"]) == ("default", "604800000")
    assert "controller.quorum.voters" in shown["ignored_kafka_configs"]


def test_config_show_table_and_a_bad_config_in_one_line(tmp_path):
    table = trafka("config", "show")
    assert table.returncode == 0
    header, *lines = table.stdout.splitlines()
    assert header.split() == ["SETTING", "VALUE", "SOURCE"]
    assert any(line.split() == ["broker.num_partitions", "1", "default"] for line in lines)
    bad = tmp_path / "server.properties"
    bad.write_text("num.partitions=zero\n")
    result = trafka("config", "show", str(bad))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "'zero' for num.partitions" in result.stderr
