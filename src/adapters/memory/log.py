"""Partition logs held in memory: one bytes object per batch, indexed by last offset.

Reads binary-search the batch that contains the fetch offset and join whole batches; nothing looks
inside a batch.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence

from domain.batch import BatchHeader
from domain.topics import Topic, TopicPartition


class MemoryPartitionLog:
    def __init__(self) -> None:
        self._batches: list[bytes] = []
        self._last_offsets: list[int] = []
        self._max_timestamps: list[int] = []
        self._log_start_offset = 0
        self._log_end_offset = 0

    @property
    def log_start_offset(self) -> int:
        return self._log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self._log_end_offset

    def append(self, batches: bytes | bytearray, headers: Sequence[BatchHeader]) -> None:
        if headers and headers[0].base_offset != self._log_end_offset:
            raise ValueError(
                f"append at offset {headers[0].base_offset} but the log ends at {self._log_end_offset}"
            )
        view = memoryview(batches)
        pos = 0
        for header in headers:
            self._batches.append(bytes(view[pos : pos + header.size]))
            self._last_offsets.append(header.last_offset)
            self._max_timestamps.append(header.max_timestamp)
            pos += header.size
            self._log_end_offset = header.next_offset

    def _first_batch_at(self, offset: int) -> int:
        return bisect.bisect_left(self._last_offsets, offset)

    def read(self, offset: int, max_bytes: int, min_one_batch: bool) -> bytes:
        index = self._first_batch_at(offset)
        chosen: list[bytes] = []
        size = 0
        for batch in self._batches[index:]:
            if size + len(batch) > max_bytes and (chosen or not min_one_batch):
                break
            chosen.append(batch)
            size += len(batch)
        return b"".join(chosen)

    def batches_from_timestamp(self, timestamp: int) -> Iterator[bytes]:
        start = self._first_batch_at(self._log_start_offset)
        for index in range(start, len(self._batches)):
            if self._max_timestamps[index] >= timestamp:
                yield from self._batches[index:]
                return

    def batch_with_max_timestamp(self) -> bytes | None:
        start = self._first_batch_at(self._log_start_offset)
        if start >= len(self._batches):
            return None
        best = max(range(start, len(self._batches)), key=lambda i: (self._max_timestamps[i], -i))
        return self._batches[best]


class MemoryLogStore:
    def __init__(self) -> None:
        self._logs: dict[TopicPartition, MemoryPartitionLog] = {}

    def create(self, tp: TopicPartition, topic: Topic) -> MemoryPartitionLog:
        log = self._logs[tp] = MemoryPartitionLog()
        return log

    def open(self, tp: TopicPartition, topic: Topic) -> MemoryPartitionLog:
        return self._logs.get(tp) or self.create(tp, topic)

    def get(self, tp: TopicPartition) -> MemoryPartitionLog | None:
        return self._logs.get(tp)

    def delete(self, tp: TopicPartition) -> None:
        self._logs.pop(tp, None)
