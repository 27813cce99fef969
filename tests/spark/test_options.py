"""Options, offset planning and input partitions, without a SparkSession."""

from __future__ import annotations

import pytest

from trafka.adapters.spark import OptionError, SourceError, parse_offsets, read_options, split_ranges
from trafka.adapters.spark.broker import consumer_settings
from trafka.adapters.spark.options import EARLIEST, LATEST, OffsetSpec
from trafka.adapters.spark.ranges import LogBounds, OffsetRange, initial_stream_offset, plan_batch, rate_limited

DIR = {"topic": "t", "data_dir": "/d"}


def test_offsets_parse_as_sparks():
    assert parse_offsets(" Earliest ", "startingOffsets") == OffsetSpec("earliest")
    assert parse_offsets("latest", "endingOffsets") == OffsetSpec("latest")
    spec = parse_offsets('{"t":{"0":23,"1":-2},"u":{"0":-1}}', "startingOffsets")
    assert spec.offsets == {("t", 0): 23, ("t", 1): EARLIEST, ("u", 0): LATEST}
    assert spec.for_partition("t", 0) == 23
    assert parse_offsets(spec.to_json(), "x") == spec


@pytest.mark.parametrize(
    "text, message",
    [
        ("{bad", "must be earliest, latest or JSON"),
        ("[1]", "must map topics to"),
        ('{"t":5}', "must be a non-empty {partition: offset} object"),
        ('{"t":{"x":5}}', "partitions are numbers"),
        ('{"t":{"0":-3}}', "use an offset >= 0, -2 for earliest or -1 for latest"),
        ('{"t":{"0":true}}', "has offset True"),
        ('{"other":{"0":1}}', "names topic 'other', which is not read"),
    ],
)
def test_bad_offsets_name_the_problem(text, message):
    with pytest.raises(OptionError, match=message.replace("{", r"\{").replace("[", r"\[")):
        parse_offsets(text, "startingOffsets", ("t",))


def test_read_options_defaults():
    batch = read_options({"TOPIC": "t", "bootstrap": "h:1"}, streaming=False)
    assert (batch.topics, batch.starting, batch.ending, batch.include_headers) == (
        ("t",),
        OffsetSpec("earliest"),
        OffsetSpec("latest"),
        False,
    )
    assert (batch.fail_on_data_loss, batch.max_records_per_partition, batch.min_partitions) == (True, 1_000_000, None)
    stream = read_options(
        {"subscribe": "a, b", "kafka.bootstrap.servers": "h:1", "kafka.request.timeout.ms": "5"}, streaming=True
    )
    assert (stream.topics, stream.starting, stream.bootstrap, stream.client_settings) == (
        ("a", "b"),
        OffsetSpec("latest"),
        "h:1",
        {"request.timeout.ms": "5"},
    )


@pytest.mark.parametrize(
    "options, streaming, message",
    [
        ({"data_dir": "/d"}, False, "exactly one of the options topic and subscribe"),
        ({**DIR, "subscribe": "u"}, False, "exactly one of the options topic and subscribe"),
        ({"topic": "t"}, False, "exactly one of the options data_dir and bootstrap"),
        ({**DIR, "bootstrap": "h:1"}, False, "exactly one of the options data_dir and bootstrap"),
        ({"topic": "a,b", "data_dir": "/d"}, False, "no topic to read"),
        ({**DIR, "startingOffsets": "latest"}, False, "startingOffsets can't be latest for batch queries"),
        ({**DIR, "startingOffsets": '{"t":{"0":-1}}'}, False, "startingOffsets can't be latest"),
        ({**DIR, "endingOffsets": "earliest"}, False, "endingOffsets can't be earliest"),
        ({**DIR, "endingOffsets": "latest"}, True, "endingOffsets is not valid in streaming queries"),
        ({**DIR, "startingOffsets": '{"t":{"0":1}}', "endingOffsets": '{"t":{"1":1}}'}, False, "must name the same"),
        (
            {**DIR, "startingOffsets": '{"t":{"0":9}}', "endingOffsets": '{"t":{"0":3}}'},
            False,
            "9 is after endingOffsets 3",
        ),
        ({**DIR, "includeHeaders": "yes"}, False, "includeHeaders must be true or false"),
        ({**DIR, "minPartitions": "0"}, False, "minPartitions must be positive"),
        ({**DIR, "maxRecordsPerPartition": "many"}, False, "maxRecordsPerPartition must be a positive integer"),
        ({**DIR, "kafka.isolation.level": "read_committed"}, False, "the data_dir source takes none"),
    ],
)
def test_bad_options_name_the_problem(options, streaming, message):
    with pytest.raises(OptionError, match=message):
        read_options(options, streaming)


def test_kafka_settings_are_typed_and_the_unsafe_ones_refused():
    assert consumer_settings({"request.timeout.ms": "5000", "check.crcs": "false", "client.id": "x"}) == {
        "request_timeout_ms": 5000,
        "check_crcs": False,
        "client_id": "x",
    }
    with pytest.raises(OptionError, match="kafka.group.id is not supported"):
        consumer_settings({"group.id": "g"})
    with pytest.raises(OptionError, match="not a Kafka consumer setting"):
        consumer_settings({"no.such.thing": "1"})
    with pytest.raises(OptionError, match="must be a int"):
        consumer_settings({"request.timeout.ms": "soon"})


class FakeSource:
    def __init__(self, bounds: dict[str, list[tuple[int, int]]]) -> None:
        self._bounds = bounds

    def partition_count(self, topic: str) -> int:
        if topic not in self._bounds:
            raise SourceError(f"topic {topic!r} does not exist")
        return len(self._bounds[topic])

    def bounds(self, topic, partitions):
        return {p: LogBounds(*self._bounds[topic][p]) for p in partitions}


SOURCE = FakeSource({"t": [(0, 100), (40, 60), (5, 5)]})


def test_plan_resolves_earliest_latest_and_offsets():
    ranges = plan_batch(SOURCE, ["t"], OffsetSpec("earliest"), OffsetSpec("latest"), True)
    assert ranges == [OffsetRange("t", 0, 0, 100), OffsetRange("t", 1, 40, 60), OffsetRange("t", 2, 5, 5)]
    start = parse_offsets('{"t":{"0":10,"1":-2,"2":5}}', "s")
    end = parse_offsets('{"t":{"0":20,"1":-1,"2":5}}', "e")
    assert plan_batch(SOURCE, ["t"], start, end, True) == [
        OffsetRange("t", 0, 10, 20),
        OffsetRange("t", 1, 40, 60),
        OffsetRange("t", 2, 5, 5),
    ]


@pytest.mark.parametrize(
    "start, end, fail_on_data_loss, message",
    [
        ('{"t":{"0":0,"1":3,"2":5}}', None, True, "startingOffsets 3 of t-1 is below its log start offset 40"),
        ('{"t":{"0":0,"1":61,"2":5}}', None, True, "startingOffsets 61 of t-1 is past its log end offset 60"),
        (None, '{"t":{"0":101,"1":-1,"2":-1}}', True, "endingOffsets 101 of t-0 is past its log end offset 100"),
        (
            '{"t":{"0":0,"1":50,"2":5}}',
            '{"t":{"0":1,"1":45,"2":5}}',
            True,
            "starting offset 50 of t-1 is after its ending offset 45",
        ),
        ('{"t":{"0":0}}', None, True, r"startingOffsets misses partitions \[1, 2\] of topic 't'"),
        ('{"t":{"0":0,"1":-2,"2":-2,"3":0}}', None, True, r"names partitions \[3\] that do not exist"),
    ],
)
def test_plan_refuses_offsets_outside_the_log(start, end, fail_on_data_loss, message):
    starting = parse_offsets(start, "s") if start else OffsetSpec("earliest")
    ending = parse_offsets(end, "e") if end else OffsetSpec("latest")
    with pytest.raises(SourceError, match=message):
        plan_batch(SOURCE, ["t"], starting, ending, fail_on_data_loss)


def test_without_fail_on_data_loss_a_lost_start_moves_to_the_log_start():
    start = parse_offsets('{"t":{"0":0,"1":3,"2":5}}', "s")
    assert plan_batch(SOURCE, ["t"], start, OffsetSpec("latest"), False)[1] == OffsetRange("t", 1, 40, 60)


def test_unknown_topic():
    with pytest.raises(SourceError, match="topic 'u' does not exist"):
        plan_batch(SOURCE, ["u"], OffsetSpec("earliest"), OffsetSpec("latest"), True)


def covers(chunks: list[OffsetRange], ranges: list[OffsetRange]) -> bool:
    for r in ranges:
        mine = sorted(
            (c.from_offset, c.until_offset) for c in chunks if (c.topic, c.partition) == (r.topic, r.partition)
        )
        flat = [o for pair in mine for o in pair]
        if r.size and (flat[0], flat[-1]) != (r.from_offset, r.until_offset):
            return False
        if any(a[1] != b[0] for a, b in zip(mine, mine[1:])):
            return False
    return True


def test_split_ranges():
    ranges = [OffsetRange("t", 0, 0, 1000), OffsetRange("t", 1, 10, 20), OffsetRange("t", 2, 7, 7)]
    assert split_ranges(ranges, None, 10**6) == ranges[:2]
    chunks = split_ranges(ranges, None, 300)
    assert [c.size for c in chunks] == [250, 250, 250, 250, 10]
    assert covers(chunks, ranges)
    spread = split_ranges(ranges, 8, 10**6)  # Spark's minPartitions: in proportion to each range's size
    assert len([c for c in spread if c.partition == 0]) == 8 and len([c for c in spread if c.partition == 1]) == 1
    assert covers(spread, ranges)


def test_rate_limit_shares_in_proportion_to_backlog():
    start = {("t", 0): 0, ("t", 1): 100, ("t", 2): 5}
    latest = {("t", 0): 300, ("t", 1): 200, ("t", 2): 5}
    assert rate_limited(start, latest, None) == latest
    assert rate_limited(start, latest, 1000) == latest
    assert rate_limited(start, latest, 40) == {("t", 0): 30, ("t", 1): 110, ("t", 2): 5}


def test_initial_stream_offset():
    assert initial_stream_offset(SOURCE, ["t"], OffsetSpec("latest"), True) == {"t": {"0": 100, "1": 60, "2": 5}}
    assert initial_stream_offset(SOURCE, ["t"], OffsetSpec("earliest"), True) == {"t": {"0": 0, "1": 40, "2": 5}}
