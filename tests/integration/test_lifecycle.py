"""Startup and graceful shutdown of the real `trafka serve` process."""

from __future__ import annotations

import signal
import socket
import time

import pytest
from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse
from kafka.protocol.consumer import FetchRequest, FetchResponse

from .broker import BrokerProcess
from .wire import WireClient


def _create(client: WireClient, name: str) -> None:
    response = client.request(
        CreateTopicsRequest[5](
            topics=[
                CreateTopicsRequest.CreatableTopic(
                    name=name, num_partitions=1, replication_factor=1, assignments=[], configs=[]
                )
            ],
            timeout_ms=1000,
            validate_only=False,
        ),
        CreateTopicsResponse,
        5,
    )
    assert response.topics[0].error_code == 0


def _long_poll(name: str, wait_ms: int) -> FetchRequest:
    Topic = FetchRequest.FetchTopic
    return FetchRequest[11](
        replica_id=-1,
        max_wait_ms=wait_ms,
        min_bytes=1,
        max_bytes=1 << 20,
        isolation_level=0,
        session_id=0,
        session_epoch=-1,
        topics=[
            Topic(
                topic=name,
                partitions=[
                    Topic.FetchPartition(
                        partition=0,
                        current_leader_epoch=-1,
                        fetch_offset=0,
                        log_start_offset=-1,
                        partition_max_bytes=1 << 20,
                    )
                ],
            )
        ],
        forgotten_topics_data=[],
        rack_id="",
    )


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_answers_in_flight_requests_then_exits_0(sig):
    broker = BrokerProcess(["--memory"]).start()
    try:
        with WireClient(broker.bootstrap) as client:
            _create(client, "waiting")
            client.send(_long_poll("waiting", 30_000), 11)
            time.sleep(0.3)  # let the fetch park; the assertion below is on its answer, not on timing
            started = time.monotonic()
            broker.process.send_signal(sig)
            response = client.receive(FetchResponse, 11)
            assert time.monotonic() - started < 10
            assert response.responses[0].partitions[0].error_code == 0
            assert response.responses[0].partitions[0].records in (b"", None)
            assert client.is_closed_by_peer()
        assert broker.process.wait(15) == 0
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", broker.port), timeout=2).close()
    finally:
        if broker.process.poll() is None:
            broker.process.kill()


def test_listening_line_names_the_bound_port():
    broker = BrokerProcess(["--memory"]).start()
    try:
        assert any(f"trafka listening on 127.0.0.1:{broker.port}" in line for line in broker.output)
        socket.create_connection(("127.0.0.1", broker.port), timeout=2).close()
    finally:
        assert broker.stop() == 0


def test_a_bad_config_names_the_key_and_exits_non_zero(tmp_path):
    config = tmp_path / "trafka.toml"
    config.write_text("[server]\nprot = 1\n")
    broker = BrokerProcess(["--config", str(config)])
    with pytest.raises(RuntimeError, match="prot"):
        broker.start()
    assert broker.process.wait(5) == 2


def test_trafka_check_answers_0_for_a_live_broker_and_1_otherwise(broker):
    import subprocess
    import sys

    live = subprocess.run(
        [sys.executable, "-m", "trafka", "check", "--host", "127.0.0.1", "--port", str(broker.port)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert live.returncode == 0 and "is up" in live.stdout
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    dead = subprocess.run(
        [sys.executable, "-m", "trafka", "check", "--host", "127.0.0.1", "--port", str(free), "--timeout", "2"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert dead.returncode == 1 and "not answering" in dead.stderr


def test_a_port_in_use_is_one_clear_error_and_exit_1(broker, tmp_path):
    import subprocess
    import sys

    taken = subprocess.run(
        [sys.executable, "-m", "trafka", "serve", "--host", "127.0.0.1", "--port", str(broker.port), "--memory"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert taken.returncode == 1
    assert f"cannot listen on 127.0.0.1:{broker.port}" in taken.stderr and "Traceback" not in taken.stderr


def test_a_taken_kafka_port_stops_before_the_http_listener_says_it_listens(broker):
    # The Kafka listener binds first: "trafka http listening" followed by an exit misled (it printed
    # the HTTP address, then stopped because the Kafka port was taken).
    import subprocess
    import sys

    taken = subprocess.run(
        [sys.executable, "-m", "trafka", "serve", "--host", "127.0.0.1", "--port", str(broker.port), "--memory"]
        + ["--http-port", "0"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert taken.returncode == 1
    assert "listening" not in taken.stdout, taken.stdout
    assert taken.stderr.strip().splitlines() == [
        f"trafka: cannot listen on 127.0.0.1:{broker.port}: [Errno 98] Address already in use"
    ]
