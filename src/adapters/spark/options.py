"""The `trafka` source's options, read the way Spark's Kafka source reads its own.

Option names are case-insensitive, as in Spark. What to read:

- `topic` (one topic) or `subscribe` (comma-separated topics);
- `data_dir` (a Kafka log dir: segment files read directly) or `bootstrap` (a running broker, also
  accepted as Spark's `kafka.bootstrap.servers`); exactly one of them;
- `startingOffsets` / `endingOffsets`: `earliest`, `latest`, or JSON per topic and partition such as
  `{"t":{"0":23,"1":-2}}` where -2 means earliest and -1 latest. Batch reads default to earliest ..
  latest; a batch may not start at latest nor end at earliest; streams default to starting at latest
  and take no ending. JSON must name every partition of every topic read, as Spark requires;
- `valueFormat` / `keyFormat`: `raw` (default), `avro`, `json` or `protobuf` (Confluent's wire format, decoded
  with the schemas of the registry at `schemaRegistry`, or by default of the `_schemas` topic of the
  broker or data dir read; see `decode.py`), and `mode` (PERMISSIVE or FAILFAST) for records that do
  not decode;
- `includeHeaders` (false), `failOnDataLoss` (true), `minPartitions`, `maxRecordsPerPartition`
  (default 1,000,000, where Spark has no limit), `maxOffsetsPerTrigger` (streams),
  `kafkaConsumer.pollTimeoutMs`, and `kafka.*` settings for the broker client (bootstrap only).

Both sources read as Spark's Kafka source does by default (`read_uncommitted`): control records are
skipped, records of aborted transactions are read. Through a broker, `kafka.isolation.level=
read_committed` reads committed records only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import attrs

from .errors import OptionError

EARLIEST = -2
LATEST = -1
DEFAULT_MAX_RECORDS_PER_PARTITION = 1_000_000
DEFAULT_POLL_TIMEOUT_MS = 120_000


@attrs.frozen
class OffsetSpec:
    """Where reading starts or ends: `earliest`, `latest`, or an offset per (topic, partition)."""

    kind: str
    offsets: Mapping[tuple[str, int], int] = attrs.field(factory=dict)

    def for_partition(self, topic: str, partition: int) -> int:
        """EARLIEST, LATEST or the offset given for this partition."""
        if self.kind == "earliest":
            return EARLIEST
        if self.kind == "latest":
            return LATEST
        return self.offsets[(topic, partition)]

    def to_json(self) -> str:
        if self.kind != "specific":
            return self.kind
        nested: dict[str, dict[str, int]] = {}
        for (topic, partition), offset in sorted(self.offsets.items()):
            nested.setdefault(topic, {})[str(partition)] = offset
        return json.dumps(nested, separators=(",", ":"))


@attrs.frozen
class ReadOptions:
    topics: tuple[str, ...]
    data_dir: str | None
    bootstrap: str | None
    starting: OffsetSpec
    ending: OffsetSpec
    include_headers: bool
    fail_on_data_loss: bool
    min_partitions: int | None
    max_records_per_partition: int
    max_offsets_per_trigger: int | None
    poll_timeout_ms: int
    client_settings: Mapping[str, str]  # `kafka.*` options, prefix removed
    key_format: str = "raw"
    value_format: str = "raw"
    schema_registry: str | None = None
    fail_fast: bool = False


def parse_offsets(text: str, option: str, topics: tuple[str, ...] | None = None) -> OffsetSpec:
    """`earliest`, `latest` or Spark's JSON offsets; OptionError naming `option` otherwise."""
    stripped = text.strip()
    if stripped.lower() in ("earliest", "latest"):
        return OffsetSpec(stripped.lower())
    try:
        parsed = json.loads(stripped)
    except json.JSONDecodeError as exc:
        raise OptionError(
            f'{option} must be earliest, latest or JSON like {{"topic":{{"0":23}}}}: {exc.msg} in {text!r}'
        ) from None
    if not isinstance(parsed, dict) or not parsed:
        raise OptionError(f"{option} JSON must map topics to {{partition: offset}} objects, got {text!r}")
    offsets: dict[tuple[str, int], int] = {}
    for topic, partitions in parsed.items():
        if topics is not None and topic not in topics:
            raise OptionError(f"{option} names topic {topic!r}, which is not read (topics: {', '.join(topics)})")
        if not isinstance(partitions, dict) or not partitions:
            raise OptionError(f"{option} JSON for topic {topic!r} must be a non-empty {{partition: offset}} object")
        for partition, offset in partitions.items():
            if not partition.isdigit():
                raise OptionError(f"{option} JSON has partition {partition!r} of {topic!r}; partitions are numbers")
            if isinstance(offset, bool) or not isinstance(offset, int) or offset < EARLIEST:
                raise OptionError(
                    f"{option} JSON has offset {offset!r} for {topic}-{partition}; "
                    "use an offset >= 0, -2 for earliest or -1 for latest"
                )
            offsets[(topic, int(partition))] = offset
    return OffsetSpec("specific", offsets)


def _bool(options: Mapping[str, str], name: str, default: bool) -> bool:
    raw = options.get(name.lower())
    if raw is None:
        return default
    if raw.strip().lower() not in ("true", "false"):
        raise OptionError(f"{name} must be true or false, got {raw!r}")
    return raw.strip().lower() == "true"


def _positive(options: Mapping[str, str], name: str) -> int | None:
    raw = options.get(name.lower())
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise OptionError(f"{name} must be a positive integer, got {raw!r}") from None
    if value <= 0:
        raise OptionError(f"{name} must be positive, got {value}")
    return value


def _format(options: Mapping[str, str], name: str) -> str:
    value = options.get(name.lower(), "raw").strip().lower()
    if value not in ("raw", "avro", "json", "protobuf"):
        raise OptionError(f"{name} must be raw, avro, json or protobuf, got {value!r}")
    return value


def _mode(options: Mapping[str, str]) -> bool:
    """True for FAILFAST, False for PERMISSIVE (the default)."""
    value = options.get("mode", "PERMISSIVE").strip().upper()
    if value not in ("PERMISSIVE", "FAILFAST"):
        raise OptionError(f"mode must be PERMISSIVE or FAILFAST, got {value!r}")
    return value == "FAILFAST"


@attrs.frozen
class FormatOptions:
    """What typed columns need, the same for batch and streaming reads (Spark asks a source for its
    schema before it says which of the two it runs)."""

    topics: tuple[str, ...]
    data_dir: str | None
    bootstrap: str | None
    client_settings: Mapping[str, str]
    poll_timeout_ms: int
    key_format: str
    value_format: str
    schema_registry: str | None
    fail_fast: bool


def format_options(raw: Mapping[str, str]) -> FormatOptions:
    options = {key.lower(): value for key, value in raw.items()}
    bootstrap, data_dir = _source(options)
    return FormatOptions(
        topics=_topics(options),
        data_dir=data_dir,
        bootstrap=bootstrap,
        client_settings=_client_settings(options, data_dir),
        poll_timeout_ms=_poll_timeout_ms(options),
        key_format=_format(options, "keyFormat"),
        value_format=_format(options, "valueFormat"),
        schema_registry=options.get("schemaregistry"),
        fail_fast=_mode(options),
    )


def _topics(options: Mapping[str, str]) -> tuple[str, ...]:
    topic, subscribe = options.get("topic"), options.get("subscribe")
    if (topic is None) == (subscribe is None):
        raise OptionError("exactly one of the options topic and subscribe must be set")
    topics = tuple(t.strip() for t in (topic if topic is not None else subscribe or "").split(",") if t.strip())
    if not topics or (topic is not None and len(topics) != 1):
        name, value = ("topic", topic) if topic is not None else ("subscribe", subscribe)
        raise OptionError(f"no topic to read: {name} is {value!r}")
    return topics


def _source(options: Mapping[str, str]) -> tuple[str | None, str | None]:
    """(bootstrap, data_dir), exactly one of them set."""
    bootstrap = options.get("bootstrap") or options.get("kafka.bootstrap.servers")
    data_dir = options.get("data_dir")
    if (bootstrap is None) == (data_dir is None):
        raise OptionError("exactly one of the options data_dir and bootstrap (kafka.bootstrap.servers) must be set")
    return bootstrap, data_dir


def _client_settings(options: Mapping[str, str], data_dir: str | None) -> dict[str, str]:
    """The `kafka.*` options, prefix removed (a data dir takes none)."""
    settings = {
        key[len("kafka.") :]: value
        for key, value in options.items()
        if key.startswith("kafka.") and key != "kafka.bootstrap.servers"
    }
    if data_dir is not None and settings:
        raise OptionError(
            "kafka.* options configure the broker client; the data_dir source takes none "
            f"(got kafka.{next(iter(settings))})"
        )
    return settings


def _poll_timeout_ms(options: Mapping[str, str]) -> int:
    return _positive(options, "kafkaConsumer.pollTimeoutMs") or DEFAULT_POLL_TIMEOUT_MS


def read_options(raw: Mapping[str, str], streaming: bool) -> ReadOptions:
    """Validate the options of a batch (`streaming=False`) or streaming read."""
    options = {key.lower(): value for key, value in raw.items()}
    topics = _topics(options)
    bootstrap, data_dir = _source(options)

    default_start = "latest" if streaming else "earliest"
    starting = parse_offsets(options.get("startingoffsets", default_start), "startingOffsets", topics)
    if streaming:
        if "endingoffsets" in options:
            raise OptionError("endingOffsets is not valid in streaming queries")
        ending = OffsetSpec("latest")
    else:
        ending = parse_offsets(options.get("endingoffsets", "latest"), "endingOffsets", topics)
        if starting.kind == "latest" or LATEST in starting.offsets.values():
            raise OptionError("startingOffsets can't be latest for batch queries")
        if ending.kind == "earliest" or EARLIEST in ending.offsets.values():
            raise OptionError("endingOffsets can't be earliest for batch queries")
        if starting.kind == "specific" and ending.kind == "specific":
            if starting.offsets.keys() != ending.offsets.keys():
                raise OptionError("startingOffsets and endingOffsets must name the same topic partitions")
            for (t, p), start in starting.offsets.items():
                end = ending.offsets[(t, p)]
                if start >= 0 and end >= 0 and start > end:
                    raise OptionError(f"startingOffsets {start} is after endingOffsets {end} for {t}-{p}")

    return ReadOptions(
        topics=topics,
        data_dir=data_dir,
        bootstrap=bootstrap,
        starting=starting,
        ending=ending,
        include_headers=_bool(options, "includeHeaders", False),
        fail_on_data_loss=_bool(options, "failOnDataLoss", True),
        min_partitions=_positive(options, "minPartitions"),
        max_records_per_partition=_positive(options, "maxRecordsPerPartition") or DEFAULT_MAX_RECORDS_PER_PARTITION,
        max_offsets_per_trigger=_positive(options, "maxOffsetsPerTrigger"),
        poll_timeout_ms=_poll_timeout_ms(options),
        client_settings=_client_settings(options, data_dir),
        key_format=_format(options, "keyFormat"),
        value_format=_format(options, "valueFormat"),
        schema_registry=options.get("schemaregistry"),
        fail_fast=_mode(options),
    )
