"""Every way trafka's answers still differ from Apache Kafka 4.2's, with the reason (issue 36).

`compare.compare` accepts a difference only when it is listed here: by scenario (`*` for every
scenario; `*` matches anything, every other character itself) and by the field's path in the normalised answer. An unlisted
difference fails its test; a listed one is applied and shown in the session's report.
"""

from __future__ import annotations

import re

ONE_NODE = (
    "trafka is one node that is broker and controller in one; Kafka's combined node is too, but answers as two roles"
)

# (scenario pattern, field path pattern) -> reason
DIVERGENCES: dict[tuple[str, str], str] = {
    (
        "ApiVersions *",
        "api_keys[api_key=64]",
    ): "UnregisterBroker: trafka is one node, there is no other broker to unregister",
    (
        "ApiVersions *",
        "api_keys[api_key=80]",
    ): "AddRaftVoter: trafka's KRaft quorum is its one node (no dynamic quorum, KIP-853)",
    (
        "ApiVersions *",
        "api_keys[api_key=81]",
    ): "RemoveRaftVoter: trafka's KRaft quorum is its one node (no dynamic quorum, KIP-853)",
    **{
        ("ApiVersions *", f"api_keys[api_key={key}]"): (
            "the share-state RPCs (Initialize/Read/Write/DeleteShareGroupState, ReadShareGroupStateSummary) are "
            "broker-to-share-coordinator calls; trafka's share coordinator is in process, not on the wire"
        )
        for key in (83, 84, 85, 86, 87)
    },
    # Found by tests/differential/test_topics.py; each is trafka's to fix (issue 36 follow-up)
    ("CreateTopics *", "topics[name=*].configs[name=*"): (
        "the configs a created topic reports: trafka lists its schema-validation keys (Confluent's and "
        "Redpanda's) and KIP-1191's errors.deadletterqueue.group.enable (Kafka 4.4), which Kafka 4.2 does not; "
        "config sources differ: the reference sets log.retention.hours and log.segment.bytes in "
        "server.properties (STATIC_BROKER_CONFIG), trafka is not given them"
    ),
    # Found by tests/differential/test_apis.py; each is trafka's to fix (issue 36 follow-up) unless said
    # Found by tests/differential/test_flows.py
    ("Produce over max.message.bytes", "responses[name=*].partition_responses[0].error_message"): (
        "MESSAGE_TOO_LARGE: Kafka sends no message, trafka says the batch's size and the limit (kept: "
        "the message helps and no client reads it)"
    ),
    ("IncrementalAlterConfigs broker cordoned.log.dirs", "responses[resource_name=1].error_*"): (
        "Kafka 4.2 does not know cordoned.log.dirs and keeps it as a custom config with no effect; trafka "
        "(which stores no config it cannot apply) answers as Kafka 4.3+ does below metadata.version 4.3-IV0 "
        "(ADR 87)"
    ),
    ("ListConfigResources groups", "config_resources[resource_name=tools-*]"): (
        "not a difference of the brokers: the session's Apache Kafka is shared with tests/tools, whose groups' "
        "configs it lists when that suite ran first; this trafka is the differential suite's own"
    ),
}


def reason(scenario: str, path: str) -> str | None:
    for (scenario_pattern, path_pattern), why in DIVERGENCES.items():
        if _matches(scenario_pattern, scenario) and _matches(path_pattern, path):
            return why
    return None


def _matches(pattern: str, text: str) -> bool:
    return re.fullmatch(".*".join(map(re.escape, pattern.split("*"))), text) is not None
