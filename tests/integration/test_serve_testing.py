"""`trafka serve` as a test double for other languages: --brokers, --kafka-version, --clock manual and
the /testing/... endpoints (off unless --testing), with a real client."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient

from .broker import BrokerProcess
from .clients import TIMEOUT, client_log_fixture

client_log = client_log_fixture("trafka.tests.serve_testing", autouse=True)


def _call(base: str, method: str, path: str, body=None, content_type: str = "application/json"):
    request = urllib.request.Request(
        base + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": content_type},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


@pytest.fixture
def served(tmp_path):
    ready = tmp_path / "ready.json"
    broker = BrokerProcess(
        [
            "--memory",
            "--http-port",
            "0",
            "--testing",
            "--brokers",
            "3",
            "--kafka-version",
            "3.9",
            "--clock",
            "manual",
            "--ready-file",
            str(ready),
        ],
        env={"TRAFKA_GROUPS_INITIAL_REBALANCE_DELAY_MS": "0"},
    ).start()
    try:
        yield broker, json.loads(ready.read_text())
    finally:
        broker.stop()


def test_a_served_cluster_pinned_to_a_release_with_its_controls(served):
    broker, ready = served
    bootstrap = ready["bootstrap_servers"]
    assert len(bootstrap.split(",")) == 3 and ready["http"]
    base = "http://" + ready["http"]
    metadata = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=TIMEOUT)
    assert sorted(metadata.brokers) == [1, 2, 3]
    interception = _call(
        base, "POST", "/testing/intercept", {"api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER", "times": 1}
    )
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "retry.backoff.ms": 20})
    producer.produce("t", b"x")
    assert producer.flush(TIMEOUT) == 0
    assert _call(base, "GET", f"/testing/intercept/{interception['id']}")["calls"] == 1
    assert [r["value"] for r in _call(base, "GET", "/testing/records/t")] == ["x"]
    with pytest.raises(urllib.error.HTTPError) as cross_site:  # a web page's text/plain POST (issue 42 #8)
        _call(base, "POST", "/testing/intercept", {"api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER"}, "text/plain")
    assert cross_site.value.code == 415
    before = _call(base, "POST", "/testing/advance", {"seconds": 0})["now_ms"]
    assert _call(base, "POST", "/testing/advance", {"seconds": 46})["now_ms"] == before + 46000


def test_the_controls_are_off_unless_asked_for(tmp_path):
    broker = BrokerProcess(["--memory", "--http-port", "0"]).start()
    try:
        with pytest.raises(urllib.error.HTTPError) as refused:
            _call(broker.http_url, "GET", "/testing/cluster")
        assert refused.value.code == 404
    finally:
        broker.stop()


def test_a_bad_release_or_broker_count_is_refused_on_the_command_line():
    for args, reason in ((["--kafka-version", "2.9"], "unknown Kafka release"), (["--brokers", "0"], "not a positive")):
        with pytest.raises(RuntimeError, match=reason):
            BrokerProcess(["--memory", *args]).start()


def test_the_controls_are_refused_on_a_broker_with_an_authorizer():
    """Issue 42 #8: they have no login, so a secured broker does not start with them."""
    env = {"TRAFKA_SECURITY_AUTHORIZER_CLASS_NAME": "org.apache.kafka.metadata.authorizer.StandardAuthorizer"}
    with pytest.raises(RuntimeError, match="not on a broker with an authorizer"):
        BrokerProcess(["--memory", "--http-port", "0", "--testing"], env=env).start()
