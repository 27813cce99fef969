"""The domain's error codes are Kafka's: checked against kafka-python's `kafka.errors`.

kafka-python keeps a few older names of Kafka's (Kafka renamed them; the codes did not change), and
differs from Kafka on one retriable flag: those are listed here, each with its reason.
"""

from __future__ import annotations

import kafka.errors

from trafka.domain.errors import ErrorCode

# Kafka's name -> the name kafka-python still uses for the same code.
KAFKA_PYTHON_NAMES = {
    "UNKNOWN_SERVER_ERROR": "UNKNOWN",
    "NONE": "NO_ERROR",
    "NOT_LEADER_OR_FOLLOWER": "NOT_LEADER_FOR_PARTITION",
    "MESSAGE_TOO_LARGE": "MESSAGE_SIZE_TOO_LARGE",
    "INVALID_TOPIC_EXCEPTION": "INVALID_TOPIC",
    "INVALID_REPLICA_ASSIGNMENT": "INVALID_REPLICATION_ASSIGNMENT",
}

# Codes whose retriable flag is Kafka's and not kafka-python's.
KAFKA_PYTHON_RETRIABLE_DIFFERS = {
    # Kafka's CorruptRecordException extends RetriableException; kafka-python's CorruptRecordError
    # is not retriable.
    ErrorCode.CORRUPT_MESSAGE,
}

# Codes Kafka added after kafka-python 3.0.12's table (KIP-848's regex subscriptions, Kafka 4.0; the
# share session limit, Kafka 4.1; KIP-1071's streams groups, Kafka 4.2; Kafka 4.4's group deletion and
# topology description update).
KAFKA_PYTHON_LACKS = {
    128: "INVALID_REGULAR_EXPRESSION",
    129: "REBOOTSTRAP_REQUIRED",
    130: "STREAMS_INVALID_TOPOLOGY",
    131: "STREAMS_INVALID_TOPOLOGY_EPOCH",
    132: "STREAMS_TOPOLOGY_FENCED",
    133: "SHARE_SESSION_LIMIT_REACHED",
    134: "GROUP_DELETION_FAILED",
    135: "STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED",
}


def test_every_code_is_kafka_pythons_by_number_and_name():
    for code in ErrorCode:
        if KAFKA_PYTHON_LACKS.get(code.value) == code.name:
            assert code.value not in kafka.errors.kafka_errors, f"{code.name}: kafka-python has it now"
            continue
        theirs = kafka.errors.kafka_errors.get(code.value)
        assert theirs is not None, f"{code.name} = {code.value} is not a Kafka error code"
        assert theirs.message == KAFKA_PYTHON_NAMES.get(code.name, code.name), code.name


def test_retriable_flags_agree_with_kafka_python():
    for code in ErrorCode:
        if code.value in KAFKA_PYTHON_LACKS:
            continue
        theirs = kafka.errors.kafka_errors[code.value]
        if code in KAFKA_PYTHON_RETRIABLE_DIFFERS:
            assert code.retriable is not theirs.retriable, f"{code.name}: kafka-python now agrees, drop it"
        else:
            assert code.retriable is theirs.retriable, code.name


def test_codes_are_declared_in_kafkas_order_each_with_its_message():
    assert [c.value for c in ErrorCode] == sorted(c.value for c in ErrorCode)
    assert all(isinstance(c.message, str) and c.message for c in ErrorCode)
    assert ErrorCode.TOPIC_AUTHORIZATION_FAILED.message == "Topic authorization failed."
    assert ErrorCode.NONE.message == "NONE"  # no exception: Kafka's Errors.message() is the name
    assert ErrorCode.NOT_COORDINATOR.retriable and not ErrorCode.TOPIC_AUTHORIZATION_FAILED.retriable


def test_an_error_code_is_still_its_int():
    assert ErrorCode(29) is ErrorCode.TOPIC_AUTHORIZATION_FAILED
    assert ErrorCode.TOPIC_AUTHORIZATION_FAILED == 29 and int(ErrorCode.NONE) == 0
    assert {ErrorCode.UNKNOWN_SERVER_ERROR: "x"}[-1] == "x"


def test_unsupported_endpoint_type_is_kafkas_115():
    # DescribeCluster v1+ answers a request for controller endpoints with UNSUPPORTED_ENDPOINT_TYPE;
    # it was declared as 119, which clients read as INVALID_REGISTRATION.
    assert ErrorCode.UNSUPPORTED_ENDPOINT_TYPE == kafka.errors.UnsupportedEndpointTypeError.errno == 115
