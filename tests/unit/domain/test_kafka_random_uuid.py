"""Random ids as Kafka's `Uuid.randomUuid` picks them: never reserved, never a text form starting with `-`."""

from __future__ import annotations

import base64
import uuid

from hypothesis import given
from hypothesis import strategies as st

from trafka.domain.topics import kafka_random_uuid


def _text(value: uuid.UUID) -> str:
    return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")


def test_a_draw_whose_text_starts_with_a_dash_or_that_is_reserved_is_drawn_again() -> None:
    dash = uuid.UUID(bytes=bytes([0xF8]) + bytes(15))
    assert _text(dash).startswith("-")
    good = uuid.UUID(bytes=bytes([0x12]) + bytes(15))
    draws = iter([dash, uuid.UUID(int=0), uuid.UUID(int=1), good])
    assert kafka_random_uuid(lambda: next(draws)) == good


@given(st.binary(min_size=16, max_size=16))
def test_what_it_returns_never_starts_with_a_dash(raw: bytes) -> None:
    drawn = iter([uuid.UUID(bytes=raw), uuid.UUID(bytes=b"\x01" * 16)])
    value = kafka_random_uuid(lambda: next(drawn))
    assert not _text(value).startswith("-")
    first = uuid.UUID(bytes=raw)
    refused = _text(first).startswith("-") or first.int in (0, 1)
    assert value == (uuid.UUID(bytes=b"\x01" * 16) if refused else first)
