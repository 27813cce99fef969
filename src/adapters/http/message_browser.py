"""Records for the console's message browser: stored batches decoded with trafka's record batch reader
(`trafka.schema_codec.records`, ADR 101).

This is the one place the broker looks inside records, and only for a page a person asked for (a few
dozen records, read with a byte limit), never on the produce or fetch paths. Each value is offered
three ways (pretty JSON when it parses, UTF-8 text, hex) and the page picks one, or the reader does.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial

import attrs
import trio

from trafka.domain.errors import ErrorCode
from trafka.domain.fetch_read import FetchResult
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.records import Decompress, decode_records, iter_batches

from .view import BrokerView

Fetch = Callable[[TopicPartition, int, int, bool], FetchResult]  # ReplicaManager.fetch


async def browse_off_the_loop(view: BrokerView, tp: TopicPartition, offset: int, limit: int) -> list[BrowsedRecord]:
    def fetch_on_the_loop(tp: TopicPartition, offset: int, max_bytes: int, min_one_batch: bool) -> FetchResult:
        result = trio.from_thread.run_sync(partial(view.replicas.fetch, tp, offset, max_bytes, min_one_batch))
        return result._replace(records=bytes(result.records))  # a copy the loop cannot change

    return await trio.to_thread.run_sync(browse, fetch_on_the_loop, tp, offset, limit, view.replicas.decompress)


READ_BYTES = 1 << 20  # per read; a page that needs more reads again from where it stopped
MAX_READS = 16


@attrs.frozen
class Rendering:
    """One key or value, readied for display: `kind` is what "auto" shows."""

    kind: str  # "null", "json", "text" or "hex"
    json: str | None
    text: str | None
    hex: str
    size: int

    @property
    def auto(self) -> str:
        if self.kind == "null":
            return "null"
        return {"json": self.json, "text": self.text}.get(self.kind) or self.hex


@attrs.frozen
class BrowsedRecord:
    offset: int
    timestamp: int
    key: Rendering
    value: Rendering
    headers: tuple[tuple[str, Rendering], ...]


def render(data: bytes | None) -> Rendering:
    if data is None:
        return Rendering("null", None, None, "", 0)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    pretty = None
    if text is not None and text.lstrip()[:1] in ("{", "["):
        try:
            pretty = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
        except (ValueError, RecursionError):  # not JSON, or nested too deep to pretty-print: shown as text
            pretty = None
    printable = text is not None and all(c.isprintable() or c in "\n\r\t" for c in text)
    kind = "json" if pretty is not None else "text" if printable else "hex"
    return Rendering(kind, pretty, text if printable else None, data.hex(" "), len(data))


def browse(
    fetch: Fetch, tp: TopicPartition, offset: int, limit: int, decompress: Decompress | None = None
) -> list[BrowsedRecord]:
    """Up to `limit` records from `offset` (control records left out), in offset order. Runs in a worker
    thread (`browse_off_the_loop`): `fetch` reads the log on the broker's Trio thread, and the decoding and
    rendering, which is per-record Python work, never holds up Kafka clients."""
    out: list[BrowsedRecord] = []
    position = offset
    for _ in range(MAX_READS):
        result = fetch(tp, position, READ_BYTES, True)
        if result.error is not ErrorCode.NONE or not result.records:
            break
        before = position
        for header, batch in iter_batches(result.records):
            if len(out) >= limit:
                break
            position = header.next_offset
            if header.is_control:
                continue
            for record in decode_records(batch, decompress):
                if record.offset >= offset and len(out) < limit:
                    out.append(
                        BrowsedRecord(
                            record.offset,
                            record.timestamp,
                            render(record.key),
                            render(record.value),
                            tuple((name, render(value)) for name, value in record.headers),
                        )
                    )
        if position == before:  # no whole batch came back
            break
        if len(out) >= limit:
            break
    return out
