"""Prometheus metrics, named as the common Kafka JMX exporter configuration renders Kafka's MBeans.

`BrokerMetrics` is the `BrokerObserver` the Kafka listener reports to: it counts per request and per
partition of a request (record counts come from batch headers), never per record. Gauges that the
domain already knows (log sizes and offsets, consumer lag) are read at scrape time by
`_LogAndGroupCollector`. Each broker has its own `CollectorRegistry`, so several brokers can share a
process (tests, the embeddable broker).

    kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic=T  kafka_server_brokertopicmetrics_messagesin_total{topic}
    kafka.network:type=RequestMetrics,name=TotalTimeMs,request=R        kafka_network_requestmetrics_totaltimems{request}
    kafka.log:type=Log,name=LogEndOffset,topic=T,partition=P            kafka_log_log_logendoffset{topic,partition}
    (consumer lag as kafka_exporter names it)                             kafka_consumergroup_lag{consumergroup,topic,partition}
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from trafka.domain.errors import ErrorCode

from .lag import all_group_lag

if TYPE_CHECKING:
    from .view import BrokerView

# TotalTimeMs in milliseconds, as Kafka reports it; long-poll fetches land near their max_wait_ms.
LATENCY_BUCKETS_MS = (0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000)


class BrokerMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry(auto_describe=True)
        topic_counter = lambda name, doc: Counter(  # noqa: E731
            f"kafka_server_brokertopicmetrics_{name}", doc, ["topic"], registry=self.registry
        )
        self.messages_in = topic_counter("messagesin", "Records appended, from batch headers.")
        self.bytes_in = topic_counter("bytesin", "Bytes of record batches appended.")
        self.bytes_out = topic_counter("bytesout", "Bytes of record batches returned to consumers.")
        self.produce_requests = topic_counter("totalproducerequests", "Produce requests, per partition.")
        self.fetch_requests = topic_counter("totalfetchrequests", "Fetch requests, per partition.")
        self.failed_produce = topic_counter("failedproducerequests", "Produce partitions that failed.")
        self.failed_fetch = topic_counter("failedfetchrequests", "Fetch partitions that failed.")
        self.requests = Counter(
            "kafka_network_requestmetrics_requests", "Requests handled, by API and version.",
            ["request", "version"], registry=self.registry,
        )
        self.total_time = Histogram(
            "kafka_network_requestmetrics_totaltimems", "Time from a request's arrival to its response, in ms.",
            ["request"], buckets=LATENCY_BUCKETS_MS, registry=self.registry,
        )
        self.errors = Counter(
            "kafka_network_requestmetrics_errors", "Partition results of Produce and Fetch, by error code.",
            ["request", "error"], registry=self.registry,
        )
        self.connections = Gauge(
            "kafka_server_socket_server_metrics_connection_count", "Open client connections.",
            ["listener"], registry=self.registry,
        )
        self.connections_created = Counter(
            "kafka_server_socket_server_metrics_connection_creation", "Client connections accepted.",
            ["listener"], registry=self.registry,
        )

    def watch(self, view: BrokerView) -> None:
        """Add the scrape-time gauges read from the broker's domain services."""
        self.registry.register(_LogAndGroupCollector(view))

    # -- BrokerObserver --------------------------------------------------------------------------

    def connection_opened(self, listener: str) -> None:
        self.connections.labels(listener).inc()
        self.connections_created.labels(listener).inc()

    def connection_closed(self, listener: str) -> None:
        self.connections.labels(listener).dec()

    def request_completed(self, api: str, version: int, seconds: float) -> None:
        self.requests.labels(api, str(version)).inc()
        self.total_time.labels(api).observe(seconds * 1000)

    def partition_produced(self, topic: str, error: ErrorCode, records: int, size: int) -> None:
        self.produce_requests.labels(topic).inc()
        self.errors.labels("Produce", error.name).inc()
        if error is not ErrorCode.NONE:
            self.failed_produce.labels(topic).inc()
        elif records:
            self.messages_in.labels(topic).inc(records)
            self.bytes_in.labels(topic).inc(size)

    def partition_fetched(self, topic: str, error: ErrorCode, size: int) -> None:
        self.fetch_requests.labels(topic).inc()
        self.errors.labels("Fetch", error.name).inc()
        if error is not ErrorCode.NONE:
            self.failed_fetch.labels(topic).inc()
        elif size:
            self.bytes_out.labels(topic).inc(size)

    # -- totals for the console's throughput chart ------------------------------------------------

    def totals(self) -> tuple[float, float, float]:
        """(records in, bytes in, bytes out) over every topic since the broker started."""
        return (_sum(self.messages_in), _sum(self.bytes_in), _sum(self.bytes_out))


def _sum(counter: Counter) -> float:
    return sum(s.value for m in counter.collect() for s in m.samples if s.name.endswith("_total"))


class _LogAndGroupCollector(Collector):
    def __init__(self, view: BrokerView) -> None:
        self._view = view

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        labels = ["topic", "partition"]
        size = GaugeMetricFamily("kafka_log_log_size", "Bytes of the partition's segments.", labels=labels)
        end = GaugeMetricFamily("kafka_log_log_logendoffset", "The partition's log end offset.", labels=labels)
        start = GaugeMetricFamily("kafka_log_log_logstartoffset", "The partition's log start offset.", labels=labels)
        segments = GaugeMetricFamily("kafka_log_log_numlogsegments", "Segments of the partition.", labels=labels)
        partitions = 0
        for topic in self._view.catalog.topics():
            for tp in topic.topic_partitions():
                marks = self._view.replicas.watermarks(tp)
                infos = self._view.replicas.segment_infos(tp)
                if marks is None or infos is None:
                    continue
                partitions += 1
                key = [tp.topic, str(tp.partition)]
                size.add_metric(key, sum(s.size for s in infos))
                start.add_metric(key, marks[0])
                end.add_metric(key, marks[1])
                segments.add_metric(key, len(infos))
        yield from (size, end, start, segments)
        yield GaugeMetricFamily(
            "kafka_server_replicamanager_partitioncount", "Partitions on this broker.", value=partitions
        )
        group_labels = ["consumergroup", "topic", "partition"]
        current = GaugeMetricFamily(
            "kafka_consumergroup_current_offset", "The group's committed offset.", labels=group_labels
        )
        lag = GaugeMetricFamily(
            "kafka_consumergroup_lag", "Log end offset minus the group's committed offset.", labels=group_labels
        )
        for group_id, rows in all_group_lag(self._view).items():
            for row in rows:
                key = [group_id, row.tp.topic, str(row.tp.partition)]
                current.add_metric(key, row.committed)
                lag.add_metric(key, row.lag)
        yield current
        yield lag
