"""ApiVersions compared with Kafka 4.2's: every API trafka serves is advertised with the range a Kafka 4.2
broker advertises (its client-facing keys, from Kafka's message schemas as released in 4.2), apart from
the differences listed here with their reasons; the keys it does not serve are listed too, so that a
room added or a range changed shows up here."""

from __future__ import annotations

from trafka.adapters.kafka.apis import build_registry
from trafka.adapters.kafka.apis.api_versions import Uses, handle_api_versions
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.schema_codec.messages import ApiVersionsRequest

KAFKA_42 = {
    0: (0, 13),  # Produce
    1: (4, 18),  # Fetch
    2: (1, 11),  # ListOffsets
    3: (0, 13),  # Metadata
    8: (2, 10),  # OffsetCommit
    9: (1, 10),  # OffsetFetch
    10: (0, 6),  # FindCoordinator
    11: (0, 9),  # JoinGroup
    12: (0, 4),  # Heartbeat
    13: (0, 5),  # LeaveGroup
    14: (0, 5),  # SyncGroup
    15: (0, 6),  # DescribeGroups
    16: (0, 5),  # ListGroups
    17: (0, 1),  # SaslHandshake
    18: (0, 4),  # ApiVersions
    19: (2, 7),  # CreateTopics
    20: (1, 6),  # DeleteTopics
    21: (0, 2),  # DeleteRecords
    22: (0, 5),  # InitProducerId
    23: (2, 4),  # OffsetForLeaderEpoch
    24: (0, 5),  # AddPartitionsToTxn
    25: (0, 4),  # AddOffsetsToTxn
    26: (0, 5),  # EndTxn
    27: (1, 2),  # WriteTxnMarkers
    28: (0, 5),  # TxnOffsetCommit
    29: (1, 3),  # DescribeAcls
    30: (1, 3),  # CreateAcls
    31: (1, 3),  # DeleteAcls
    32: (1, 4),  # DescribeConfigs
    33: (0, 2),  # AlterConfigs
    34: (1, 2),  # AlterReplicaLogDirs
    35: (1, 4),  # DescribeLogDirs
    36: (0, 2),  # SaslAuthenticate
    37: (0, 3),  # CreatePartitions
    38: (1, 3),  # CreateDelegationToken
    39: (1, 2),  # RenewDelegationToken
    40: (1, 2),  # ExpireDelegationToken
    41: (1, 3),  # DescribeDelegationToken
    42: (0, 2),  # DeleteGroups
    43: (0, 2),  # ElectLeaders
    44: (0, 1),  # IncrementalAlterConfigs
    45: (0, 1),  # AlterPartitionReassignments
    46: (0, 0),  # ListPartitionReassignments
    47: (0, 0),  # OffsetDelete
    48: (0, 1),  # DescribeClientQuotas
    49: (0, 1),  # AlterClientQuotas
    50: (0, 0),  # DescribeUserScramCredentials
    51: (0, 0),  # AlterUserScramCredentials
    55: (0, 2),  # DescribeQuorum
    57: (0, 2),  # UpdateFeatures
    60: (0, 2),  # DescribeCluster
    61: (0, 0),  # DescribeProducers
    64: (0, 0),  # UnregisterBroker
    65: (0, 0),  # DescribeTransactions
    66: (0, 2),  # ListTransactions
    68: (0, 1),  # ConsumerGroupHeartbeat
    69: (0, 1),  # ConsumerGroupDescribe
    71: (0, 0),  # GetTelemetrySubscriptions (only with a telemetry plugin)
    72: (0, 0),  # PushTelemetry (likewise)
    74: (0, 1),  # ListConfigResources
    75: (0, 0),  # DescribeTopicPartitions
    76: (1, 1),  # ShareGroupHeartbeat
    77: (1, 1),  # ShareGroupDescribe
    78: (1, 2),  # ShareFetch
    79: (1, 2),  # ShareAcknowledge
    80: (0, 1),  # AddRaftVoter
    81: (0, 0),  # RemoveRaftVoter
    88: (0, 0),  # StreamsGroupHeartbeat
    89: (0, 0),  # StreamsGroupDescribe
    90: (0, 1),  # DescribeShareGroupOffsets
    91: (0, 0),  # AlterShareGroupOffsets
    92: (0, 0),  # DeleteShareGroupOffsets
}
"""Kafka 4.2's broker: api key -> (min, max) advertised."""

DIFFERENT = {
    # Kafka 4.3 and 4.4's versions (ADRs 76, 86): DescribeLogDirs v5, TxnOffsetCommit v6, DeleteGroups v3,
    # ApiVersions v5.
    18: (0, 5),
    35: (1, 5),
    28: (0, 6),
    42: (0, 3),
    # Kafka 4.4's StreamsGroupHeartbeat and StreamsGroupDescribe v1 (ADR 95)
    88: (0, 1),
    89: (0, 1),
}
"""Where trafka advertises another range than Kafka 4.2, on purpose."""

KAFKA_44_ONLY = {93: (0, 0)}  # StreamsGroupTopologyDescriptionUpdate (KIP-1331, ADR 95)
"""The APIs trafka serves unpinned that Kafka 4.2 does not have at all."""


def _advertised(http: bool = False) -> dict[int, tuple[int, int]]:
    overrides: dict = {"storage": {"kind": "memory"}}
    if http:  # the HTTP listener on: KIP-714's telemetry APIs are served too
        overrides["http"] = {"port": 0}
    settings = load_settings(overrides=overrides)
    ctx = bootstrap(settings, default_adapters(settings))
    response = handle_api_versions(
        ctx.view(Uses),
        ApiVersionsRequest[4](client_software_name="t", client_software_version="1"),
        4,
        ClientInfo("test", "127.0.0.1"),
    )
    return {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}


def test_every_served_api_has_kafka_42s_range():
    advertised = _advertised()
    assert set(advertised) <= set(KAFKA_42) | set(KAFKA_44_ONLY), "an API Kafka 4.2's brokers do not serve"
    for key, versions in advertised.items():
        name = build_registry().get(key).name
        assert versions == DIFFERENT.get(key, {**KAFKA_42, **KAFKA_44_ONLY}[key]), f"{name} (key {key})"


def test_the_apis_not_served_yet():
    """What a Kafka 4.2 broker serves and trafka does not (yet): the telemetry APIs (served only with the
    HTTP listener, ADR 47), UnregisterBroker and the raft voter APIs (one node)."""
    assert set(KAFKA_42) - set(_advertised()) == {
        64,
        71,
        72,
        80,
        81,
    }


def test_with_the_http_listener_the_telemetry_apis_have_kafka_42s_range():
    advertised = _advertised(http=True)
    assert {key: advertised[key] for key in (71, 72)} == {key: KAFKA_42[key] for key in (71, 72)}
