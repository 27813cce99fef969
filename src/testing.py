"""Testing your code against a real Kafka broker in process: what `trafka.testing` offers.

With trafka installed, pytest has these fixtures with no conftest (the `pytest11` entry point):

- `kafka_broker`: a fresh in-memory broker per test (`trafka.Broker`), stopped after it. Configure
  it with a marker, `@pytest.mark.kafka_broker(topics={"orders": 3}, partitions=2, **settings)`
  (`partitions` is the default partition count, `num_partitions`; other keywords are `Broker`'s), or
  by overriding the `kafka_broker_options` fixture (a dict of the same keywords).
- `kafka_broker_session`: one broker for the whole session, for suites that use unique topic names.
- `kafka_cluster`: a fresh `trafka.Cluster` of 3 brokers per test (`@pytest.mark.kafka_cluster(brokers=5,
  topics=...)`), for failover tests: `stop_broker(node)`, `move_leader(...)`, `move_coordinator(...)`.

A broker starts in about a millisecond once trafka is imported, so a fresh one per test is cheap.
Helpers on the broker avoid writing consumers in assertions: `records(topic)`, `committed(group)`,
`wait_for(topic, count, timeout)`, `create_topic(name, partitions)`; and faults real brokers do not
offer on cue: `pause()`/`resume()`, `drop_connections()`, `fail_next(api, error, times)`.

Any request can be answered the test's way (`broker.intercept`):

    handle = broker.intercept("Produce", lambda r: respond(error="NOT_LEADER_OR_FOLLOWER"), times=2)
    broker.intercept("Fetch", lambda r: delay(0.5))            # served late; other connections flow
    broker.intercept("Metadata", lambda r: drop() if r.client_id == "flaky" else None)
    handle.calls   # every request it saw: api, version, client_id, host, principal, request
    handle.remove()

Pin a Kafka release with `Broker(kafka_version="2.8")`; move time yourself with `Broker(clock="manual")`
and `broker.advance(46)`. docs/COVERAGE.md lists what is covered.
"""

from __future__ import annotations

from trafka.app.embedded import Broker, BrokerError, Cluster, Record, RunningBroker, open_broker
from trafka.app.embedded.intercepting import InterceptedRequest, Interception, delay, drop, respond

__all__ = [
    "Broker",
    "BrokerError",
    "Cluster",
    "InterceptedRequest",
    "Interception",
    "Record",
    "RunningBroker",
    "delay",
    "drop",
    "open_broker",
    "respond",
]
