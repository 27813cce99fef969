"""Prometheus metrics, named as the common Kafka JMX exporter configuration renders Kafka's MBeans.

`BrokerMetrics` is the `BrokerObserver` the Kafka listener reports to: it counts per request and per
partition of a request (record counts come from batch headers), never per record, in plain integers
that a collector renders at scrape time. Gauges that the
domain already knows (log sizes and offsets, consumer lag) are read at scrape time by
`_LogAndGroupCollector`. Each broker has its own `CollectorRegistry`, so several brokers can share a
process (tests, the embeddable broker).

    kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic=T  kafka_server_brokertopicmetrics_messagesin_total{topic}
    kafka.network:type=RequestMetrics,name=TotalTimeMs,request=R        kafka_network_requestmetrics_totaltimems{request}
    kafka.log:type=Log,name=LogEndOffset,topic=T,partition=P            kafka_log_log_logendoffset{topic,partition}
    kafka.log:type=LogCleaner,name=max-clean-time-secs                  kafka_log_logcleaner_max_clean_time_secs
    (consumer lag as kafka_exporter names it)                             kafka_consumergroup_lag{consumergroup,topic,partition}
    kafka.server:type=Produce|Fetch,user=U,client-id=C byte-rate         kafka_server_quota_byte_rate{resource,user,clientid}
    kafka.server:type=Request,user=U,client-id=C request-time            kafka_server_quota_request_time{resource,user,clientid}
    kafka.server:type=Produce|Fetch|Request,... throttle-time            kafka_server_quota_throttle_time{resource,user,clientid}

Metrics clients push (KIP-714, with GetTelemetrySubscriptions/PushTelemetry served while the HTTP
listener is on) are gauges named after the metric with `.` as `_`, labelled `client_instance_id`,
`client_id` and the data point's attributes.

The quota series follow the JMX exporter's example rules (`kafka_server_quota_$attribute` with the
MBean's type as `resource`), one per quota id a client counts against (Kafka's metric tags: a part
the quota is not per is ""), while the broker has client quotas.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from trafka.domain.catalog import TopicCatalog
from trafka.domain.errors import ErrorCode
from trafka.domain.groups.share import ShareGroups
from trafka.domain.quotas import QuotaSensors, QuotaType
from trafka.domain.telemetry import ClientMetrics, ClientTelemetry

from .lag import GroupsAndLogs, all_group_lag


class WatchedBroker(GroupsAndLogs, Protocol):
    """What the scrape-time gauges read: the catalog besides lag's services (`BrokerView` is one)."""

    @property
    def catalog(self) -> TopicCatalog: ...

    @property
    def share(self) -> ShareGroups | None: ...


# TotalTimeMs in milliseconds, as Kafka reports it; long-poll fetches land near their max_wait_ms.
LATENCY_BUCKETS_MS = (0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000)

# Per topic, in this order: (metric name under kafka_server_brokertopicmetrics_, help).
TOPIC_COUNTERS = (
    ("messagesin", "Records appended, from batch headers."),
    ("bytesin", "Bytes of record batches appended."),
    ("bytesout", "Bytes of record batches returned to consumers."),
    ("totalproducerequests", "Produce requests, per partition."),
    ("totalfetchrequests", "Fetch requests, per partition."),
    ("failedproducerequests", "Produce partitions answered with an error."),
    ("failedfetchrequests", "Fetch partitions answered with an error."),
)
MESSAGES_IN, BYTES_IN, BYTES_OUT, PRODUCE_REQUESTS, FETCH_REQUESTS, FAILED_PRODUCE, FAILED_FETCH = range(7)


class BrokerMetrics:
    """Counts kept as plain integers in the broker's Trio thread (no locks, no label validation on
    the request path: a few dict lookups and additions per request) and turned into Prometheus
    metric families when /metrics is scraped."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._topics: dict[str, list[int]] = {}
        self._requests: dict[tuple[str, int], int] = {}
        self._latency: dict[str, list[float]] = {}  # per API: a count per bucket (+Inf last), then the sum
        self._errors: dict[tuple[str, ErrorCode], int] = {}
        self._connections: dict[str, list[int]] = {}  # per listener: [open, accepted]
        self._exists: Callable[[str], bool] = lambda topic: True
        self._pushed: Callable[[], dict[Any, ClientMetrics]] = dict
        self.registry.register(_ObservedCollector(self))

    def watch(
        self,
        view: WatchedBroker,
        quotas: QuotaSensors | None = None,
        clock_ms: Callable[[], int] = int,
        telemetry: ClientTelemetry | None = None,
    ) -> None:
        """Add the scrape-time gauges read from the broker's domain services, and keep per-topic
        series for topics in the catalog only (as Kafka drops a deleted topic's metrics)."""
        self._exists = lambda topic: view.catalog.get(topic) is not None
        self.registry.register(_LogAndGroupCollector(view))
        if quotas is not None:
            self.registry.register(_QuotaCollector(quotas, clock_ms))
        if telemetry is not None:
            self._pushed = lambda: telemetry.snapshot(clock_ms())

    def pushed_snapshot(self) -> dict[Any, ClientMetrics]:
        """What clients pushed (KIP-714), copied on the event loop; `render_pushed` turns it into text in
        a worker thread, so a large scrape never holds the loop (issue 42)."""
        return self._pushed()

    def watch_cleaner(self, read: Callable[[], Mapping[str, float]]) -> None:
        """Add the log cleaner's gauges, read at scrape time (`read()` maps CLEANER_GAUGES' keys)."""
        self.registry.register(_CleanerCollector(read))

    def _forget_deleted_topics(self) -> None:
        for topic in [t for t in self._topics if not self._exists(t)]:
            del self._topics[topic]

    # -- BrokerObserver --------------------------------------------------------------------------

    def connection_opened(self, listener: str) -> None:
        counts = self._connections.setdefault(listener, [0, 0])
        counts[0] += 1
        counts[1] += 1

    def connection_closed(self, listener: str) -> None:
        self._connections[listener][0] -= 1

    def request_completed(self, api: str, version: int, seconds: float) -> None:
        key = (api, version)
        self._requests[key] = self._requests.get(key, 0) + 1
        latency = self._latency.get(api)
        if latency is None:
            latency = self._latency[api] = [0] * (len(LATENCY_BUCKETS_MS) + 2)
        ms = seconds * 1000
        latency[bisect.bisect_left(LATENCY_BUCKETS_MS, ms)] += 1
        latency[-1] += ms

    def partition_produced(self, topic: str, error: ErrorCode, records: int, size: int) -> None:
        counts = self._topic(topic)
        counts[PRODUCE_REQUESTS] += 1
        key = ("Produce", error)
        self._errors[key] = self._errors.get(key, 0) + 1
        if error is not ErrorCode.NONE:
            counts[FAILED_PRODUCE] += 1
        else:
            counts[MESSAGES_IN] += records
            counts[BYTES_IN] += size

    def partition_fetched(self, topic: str, error: ErrorCode, size: int) -> None:
        counts = self._topic(topic)
        counts[FETCH_REQUESTS] += 1
        key = ("Fetch", error)
        self._errors[key] = self._errors.get(key, 0) + 1
        if error is not ErrorCode.NONE:
            counts[FAILED_FETCH] += 1
        else:
            counts[BYTES_OUT] += size

    def _topic(self, topic: str) -> list[int]:
        counts = self._topics.get(topic)
        if counts is None:
            counts = [0] * len(TOPIC_COUNTERS)
            if self._exists(topic):  # a client naming random topics cannot grow this table
                self._topics[topic] = counts
        return counts

    # -- totals for the console's throughput chart ------------------------------------------------

    def totals(self) -> tuple[float, float, float]:
        """(records in, bytes in, bytes out) over every topic since the broker started."""
        counts = self._topics.values()
        return (
            sum(c[MESSAGES_IN] for c in counts),
            sum(c[BYTES_IN] for c in counts),
            sum(c[BYTES_OUT] for c in counts),
        )


class _ObservedCollector(Collector):
    """The counts of `BrokerMetrics` as metric families, at scrape time."""

    def __init__(self, metrics: BrokerMetrics) -> None:
        self._m = metrics

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        m = self._m
        m._forget_deleted_topics()
        for index, (name, doc) in enumerate(TOPIC_COUNTERS):
            family = CounterMetricFamily(f"kafka_server_brokertopicmetrics_{name}", doc, labels=["topic"])
            for topic, counts in sorted(m._topics.items()):
                family.add_metric([topic], counts[index])
            yield family
        requests = CounterMetricFamily(
            "kafka_network_requestmetrics_requests",
            "Requests handled, by API and version.",
            labels=["request", "version"],
        )
        for (api, version), count in sorted(m._requests.items()):
            requests.add_metric([api, str(version)], count)
        yield requests
        total_time = HistogramMetricFamily(
            "kafka_network_requestmetrics_totaltimems",
            "Time from a request's arrival to its response, in ms.",
            labels=["request"],
        )
        for api, latency in sorted(m._latency.items()):
            cumulative = list(itertools.accumulate(latency[:-1]))
            bounds = [*(str(float(b)) for b in LATENCY_BUCKETS_MS), "+Inf"]
            total_time.add_metric([api], list(zip(bounds, cumulative)), latency[-1])
        yield total_time
        errors = CounterMetricFamily(
            "kafka_network_requestmetrics_errors",
            "Produce and Fetch partition results, by error code.",
            labels=["request", "error"],
        )
        for (api, error), count in sorted(m._errors.items(), key=lambda item: (item[0][0], item[0][1].name)):
            errors.add_metric([api, error.name], count)
        yield errors
        open_connections = GaugeMetricFamily(
            "kafka_server_socket_server_metrics_connection_count", "Open client connections.", labels=["listener"]
        )
        created = CounterMetricFamily(
            "kafka_server_socket_server_metrics_connection_creation",
            "Client connections accepted.",
            labels=["listener"],
        )
        for listener, (now_open, accepted) in sorted(m._connections.items()):
            open_connections.add_metric([listener], now_open)
            created.add_metric([listener], accepted)
        yield open_connections
        yield created


# The log cleaner's MBeans (kafka.log:type=LogCleaner / LogCleanerManager) as the JMX exporter's
# usual rule renders them: kafka_<domain>_<type>_<name>, lowercased, dashes as underscores.
CLEANER_GAUGES = (
    (
        "max_clean_time_secs",
        "kafka_log_logcleaner_max_clean_time_secs",
        "Seconds of the last cleaning, max over threads.",
    ),
    (
        "cleaner_recopy_percent",
        "kafka_log_logcleaner_cleaner_recopy_percent",
        "Bytes written over bytes read by the last cleaning.",
    ),
    (
        "max_buffer_utilization_percent",
        "kafka_log_logcleaner_max_buffer_utilization_percent",
        "Dedupe buffer use of the last cleaning.",
    ),
    (
        "max_compaction_delay_secs",
        "kafka_log_logcleaner_max_compaction_delay_secs",
        "How far past max.compaction.lag.ms the most overdue log is.",
    ),
    ("dead_thread_count", "kafka_log_logcleaner_deadthreadcount", "Cleaner threads that died."),
    (
        "max_dirty_percent",
        "kafka_log_logcleanermanager_max_dirty_percent",
        "Dirty ratio of the dirtiest compacted log.",
    ),
    (
        "time_since_last_run_ms",
        "kafka_log_logcleanermanager_time_since_last_run_ms",
        "Since the cleaner last looked for a log to clean.",
    ),
)


class _CleanerCollector(Collector):
    def __init__(self, read: Callable[[], Mapping[str, float]]) -> None:
        self._read = read

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        values = self._read()
        for key, name, text in CLEANER_GAUGES:
            yield GaugeMetricFamily(name, text, value=values.get(key, 0.0))


class _LogAndGroupCollector(Collector):
    def __init__(self, view: WatchedBroker) -> None:
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
        yield from _share_groups(self._view.share)


def _share_groups(share: ShareGroups | None) -> Iterator[Metric]:
    """Per share-partition: start offset, lag, records in flight, acquired and archived; per group: members."""
    labels = ["sharegroup", "topic", "partition"]
    families = {
        name: GaugeMetricFamily(f"kafka_sharegroup_{name}", help_text, labels=labels)
        for name, help_text in (
            ("start_offset", "The share-partition start offset: every record below it is accepted or archived."),
            ("lag", "Records from the start offset to the high watermark not yet accepted or archived."),
            ("inflight_records", "Records from the start offset to the end offset (delivered at least once)."),
            ("acquired_records", "Records held by a member under a lock."),
            ("archived_records", "Records archived without acceptance (REJECT, GAP, delivery limit) since loaded."),
        )
    }
    members = GaugeMetricFamily("kafka_sharegroup_members", "Members of the share group.", labels=["sharegroup"])
    if share is not None:
        for (group_id, tp), sp in sorted(share.partitions.items()):
            key = [group_id, tp.topic, str(tp.partition)]
            start, lag = share.start_and_lag(group_id, tp)
            families["start_offset"].add_metric(key, start)
            families["lag"].add_metric(key, lag)
            families["inflight_records"].add_metric(key, sp.in_flight_count())
            families["acquired_records"].add_metric(key, sp.acquired_count())
            families["archived_records"].add_metric(key, sp.archived_total)
        for group_id, group in sorted(share.coordinator.groups.items()):
            members.add_metric([group_id], len(group.members))
    yield from families.values()
    yield members


class _QuotaCollector(Collector):
    """Kafka's quota sensors per quota id: the rate (bytes or request time) and the average throttle."""

    def __init__(self, quotas: QuotaSensors, clock_ms: Callable[[], int]) -> None:
        self._quotas, self._clock_ms = quotas, clock_ms

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        labels = ["resource", "user", "clientid"]
        byte_rate = GaugeMetricFamily(
            "kafka_server_quota_byte_rate", "Bytes per second a quota id produced or fetched.", labels=labels
        )
        request_time = GaugeMetricFamily(
            "kafka_server_quota_request_time",
            "Handler time a quota id used, as a percentage of one thread.",
            labels=labels,
        )
        throttle_time = GaugeMetricFamily(
            "kafka_server_quota_throttle_time", "Average throttle given to a quota id, in ms.", labels=labels
        )
        for stats in self._quotas.statistics(self._clock_ms()):
            if stats.quota_type is QuotaType.CONTROLLER_MUTATION:
                continue
            key = [stats.quota_type.metric_group, stats.user, stats.client_id]
            (request_time if stats.quota_type is QuotaType.REQUEST else byte_rate).add_metric(key, stats.rate)
            throttle_time.add_metric(key, stats.throttle_time_avg_ms)
        yield byte_rate
        yield request_time
        yield throttle_time


_NOT_IN_A_NAME = re.compile(r"[^a-zA-Z0-9_]")


def _prometheus_name(name: str) -> str:
    name = _NOT_IN_A_NAME.sub("_", name)
    return name if name and not name[0].isdigit() else "_" + name


PUSHED_PREFIX = "client_telemetry_"  # pushed names live here, apart from the broker's kafka_* (issue 42)


def render_pushed(pushed: Mapping[Any, ClientMetrics]) -> bytes:
    """The latest values each client pushed (KIP-714) in Prometheus' text format, one gauge family per
    metric name under PUSHED_PREFIX, each client labelled by its ordinal (`client_instance`) and client
    id; a series a push repeats is shown once. Runs in a worker thread, on a snapshot."""
    series: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for client in sorted(pushed.values(), key=lambda c: c.ordinal):
        for point in client.points:
            labels = {"client_instance": str(client.ordinal), "client_id": client.client_id}
            for key, text in point.attributes:
                labels.setdefault(_prometheus_name(key).lstrip("_") or "attribute", text)
            name = PUSHED_PREFIX + _prometheus_name(point.name).lstrip("_")
            series.setdefault(name, {})[tuple(sorted(labels.items()))] = point.value
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Families(series))
    return generate_latest(registry)


class _Families(Collector):
    def __init__(self, series: dict[str, dict[tuple[tuple[str, str], ...], float]]) -> None:
        self._series = series

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        for name, points in sorted(self._series.items()):
            keys = sorted({key for labels in points for key, _ in labels})
            family = GaugeMetricFamily(name, "Pushed by clients (KIP-714).", labels=keys)
            for labels, number in points.items():
                found = dict(labels)
                family.add_metric([found.get(key, "") for key in keys], number)
            yield family
