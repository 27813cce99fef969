"""The answer to a request sent in the middle of a SASL exchange, as Kafka's SaslServerAuthenticator gives it.

Between a v1 SaslHandshake and the end of SaslAuthenticate, Kafka parses any other request and answers
it with that request's own error response (`AbstractRequest.getErrorResponse`) carrying
ILLEGAL_SASL_STATE, after `connection.failed.authentication.delay.ms`, then closes the connection.
The answer here is built from the request's fields only: nothing is served to a client that has not
authenticated. Metadata lists the topics it asked for, each with the error; Produce, OffsetCommit,
CreateTopics and the other APIs `faults` builds answer every entry; the rest carry the error at the top.
An API whose response has neither (or a Produce with acks=0, where Kafka has no response to send and
drops the connection) gets None: the connection is closed without an answer.
"""

from __future__ import annotations

from typing import Any

from ..connection.faults import response_from_request


def _metadata(handler: Any, body: Any, version: int, error: int) -> Any:
    Topic = handler.response.MetadataResponseTopic
    topics = [
        Topic(
            error_code=error,
            name=t.name or "",
            topic_id=getattr(t, "topic_id", None),
            is_internal=False,
            partitions=[],
            authorized_operations=None,
        )
        for t in body.topics or ()
    ]
    response = handler.response(
        version=version,
        topics=topics,
        brokers=[],
        cluster_id=None,
        controller_id=-1,
        authorized_operations=None,
        error_code=0,
    )
    if "throttle_time_ms" in response.fields:
        response.throttle_time_ms = 0
    return response


def refusal(handler: Any, body: Any, version: int, error: int) -> Any | None:
    """`body` answered with `error` as Kafka's getErrorResponse does, or None when Kafka sends nothing."""
    if handler.name == "Metadata":
        return _metadata(handler, body, version, error)
    return response_from_request(handler, body, version, error)
