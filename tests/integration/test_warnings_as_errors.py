"""trafka's fixtures pass in a user's suite run with `pytest -W error` (issue 39): the DeprecationWarning
kafka-python 3.0.12's schema loader raises on Python 3.11+ is ignored around the classes it builds,
and nothing else trafka does on the way warns. The user's suite is a real pytest session in a
subprocess, with the fixture from the installed entry point and confluent-kafka as its client."""

from __future__ import annotations

import subprocess
import sys

USERS_TEST = """
from confluent_kafka import Producer


def test_an_order_is_published(kafka_broker):
    producer = Producer({"bootstrap.servers": kafka_broker.bootstrap_servers})
    producer.produce("orders", key=b"o-1", value=b"paid")
    assert producer.flush(10) == 0
    [record] = kafka_broker.wait_for("orders", 1)
    assert (record.key, record.value) == (b"o-1", b"paid")
"""


def test_the_fixtures_pass_under_w_error(tmp_path):
    (tmp_path / "test_users_suite.py").write_text(USERS_TEST)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-W", "error", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout


def test_a_served_broker_starts_under_w_error(tmp_path):
    code = (
        f"import trafka\nwith trafka.Broker(data_dir={str(tmp_path)!r}) as broker:\n    broker.create_topic('t', 2)\n"
    )
    run = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
