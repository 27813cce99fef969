"""The per-release API version tables (`kafka_version`, ADR 43) and the pinned registry."""

from __future__ import annotations

import pytest

from trafka.adapters.kafka.apis import build_registry
from trafka.adapters.kafka.releases import UnknownRelease, api_versions, pinned, release_name, releases


@pytest.mark.parametrize(
    ("release", "key", "versions"),
    [
        ("0.11", 0, (0, 3)),  # Produce v3: record batch v2 (KIP-98), the oldest trafka serves
        ("0.11", 1, (0, 5)),
        ("0.11", 17, (0, 0)),  # SaslHandshake v0: raw SASL tokens, no SaslAuthenticate yet
        ("2.8", 0, (0, 9)),  # Produce
        ("2.8", 1, (0, 12)),  # Fetch
        ("2.8", 3, (0, 11)),  # Metadata
        ("2.8", 18, (0, 3)),  # ApiVersions
        ("3.9", 1, (0, 17)),
        ("3.9", 18, (0, 4)),
        ("4.0", 0, (0, 12)),  # the reference table of Kafka 4.0/4.1/4.2 (franz-go b40-b42)
        ("4.0", 1, (4, 17)),
        ("4.0", 11, (2, 9)),
        ("4.1", 0, (0, 13)),
        ("4.1", 11, (0, 9)),  # JoinGroup v0-1 came back in 4.1
        ("4.1", 78, (1, 1)),  # share APIs: v0 removed in 4.1
        ("4.2", 2, (1, 11)),
        ("4.2", 8, (2, 10)),
        ("4.2", 27, (1, 2)),
    ],
)
def test_the_tables_say_what_each_release_advertises(release, key, versions):
    assert api_versions(release)[key] == versions


def test_apis_come_and_go_with_their_releases():
    assert 75 not in api_versions("3.7-kraft") and 75 in api_versions("3.8-kraft")  # DescribeTopicPartitions
    assert 75 not in api_versions("3.9")  # a ZooKeeper-mode broker never had it
    assert 68 not in api_versions("3.6-kraft") and 68 in api_versions("3.7-kraft")  # ConsumerGroupHeartbeat
    assert 55 not in api_versions("3.9") and 55 in api_versions("3.9-kraft")  # DescribeQuorum
    assert 60 not in api_versions("2.7") and 60 in api_versions("2.8")  # DescribeCluster
    assert 36 not in api_versions("0.11") and 36 in api_versions("1.0")  # SaslAuthenticate
    assert 22 in api_versions("0.11")  # InitProducerId: idempotence and transactions came with 0.11
    assert 88 not in api_versions("4.1") and 88 in api_versions("4.2")  # StreamsGroupHeartbeat


def test_release_names_accept_patch_versions_and_refuse_unknown_ones():
    assert release_name("2.8.2") == release_name("v2.8") == "2.8"
    assert release_name("3.9.1-kraft") == "3.9-kraft"
    assert releases()[0] == "0.11" and releases()[-1] == "4.4"
    for bad in ("2.9", "5.0", "x", "2.8.x", "", "2.8-kraft", "4.0-kraft"):
        with pytest.raises(UnknownRelease):
            release_name(bad)


def test_a_pinned_registry_is_the_intersection_capped_at_what_trafka_serves():
    full = build_registry()
    for release in releases():
        table = api_versions(release)
        narrowed = pinned(full, release)
        for key, low, high in narrowed.supported():
            served = full.get(key)
            assert served is not None and key in table
            lowest = served.min_version if served.advertised_min_version is None else served.advertised_min_version
            assert (low, high) == (max(lowest, table[key][0]), min(served.max_version, table[key][1]))
        assert {k for k, _, _ in narrowed.supported()} <= set(table)
    # a version above what trafka serves is capped at trafka's
    assert pinned(full, "4.2").get(0).max_version == full.get(0).max_version
