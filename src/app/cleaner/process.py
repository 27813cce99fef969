"""The log cleaner's work on filesystem logs in a process of its own, off the event loop's GIL (ADR 54).

The broker starts `python -m trafka.app.cleaner.process <fd>` (its own entry point, so nothing
of the embedding program is imported again, whatever its `__main__`) with one end of a socket pair,
and sends it one cleaning at a time: the partition's directory, its segments and aborted
transactions as the broker sees them, what to clean, the configs, the producers' last records, the
time. The process runs the domain's `Cleaner` over the segment files (reads through its own
descriptors; writes each `.cleaned` segment, sealed and fsynced) and, for each cleaned segment, asks
the broker to swap it in; the broker reopens the finished `.cleaned` files and runs the same
`replace_segments` (Kafka's swap protocol) on its event loop, then answers. At the end it sends the
end offset and the statistics. The process keeps its own throttle (`log.cleaner.io.max.bytes.per.second`).

Stopping is SIGTERM: the cleaning in progress removes its `.cleaned` files and the process exits
(SIGKILL after a few seconds; a cleaning cut anywhere leaves at most `.cleaned` files, which the next
cleaning of that partition or the next start removes: the crash safety of a kill -9). A process that
dies is started again for the next cleaning; one whose broker died exits at its next batch.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from multiprocessing.connection import Connection
from typing import Any

import crc32c

from trafka.adapters.compression import compress, decompress
from trafka.adapters.compression.keys import scan_keys
from trafka.adapters.filesystem.partition_log import FilePartitionLog
from trafka.adapters.filesystem.segment import file_stem
from trafka.adapters.filesystem.segment_swap import FileCleanedSegment, read_segment_batches
from trafka.domain.batch import BatchHeader
from trafka.domain.compaction import CleanedSegment, Cleaner, CleanerStats, CompactionConfig, LogToClean
from trafka.domain.compaction.rules import LastRecord
from trafka.domain.control import AbortedTxn
from trafka.domain.retention import SegmentInfo

ALL_OFFSETS = 2**63 - 1
NICENESS = 19  # the cleaner process's niceness: the lowest, below the broker's priority
STOP_GRACE_S = 5.0  # how long a stopping cleaner process has to unwind before SIGKILL


class CleaningFailed(Exception):
    """The cleaner process refused or could not finish a cleaning (the message says why)."""


class ProcessGone(Exception):
    """The cleaner process died (or was stopped) in the middle of a cleaning."""


class _SegmentFiles:
    """`CleanableLog` over a partition's directory, in the cleaner process."""

    def __init__(
        self, directory: str, segments: list[SegmentInfo], aborted: list[AbortedTxn], index_interval_bytes: int
    ) -> None:
        self._directory = directory
        self._segments = segments
        self._aborted = aborted
        self._interval = index_interval_bytes

    def segment_infos(self) -> list[SegmentInfo]:
        return list(self._segments)

    def segment_batches(self, base_offset: int) -> Iterator[tuple[BatchHeader, bytes]]:
        return read_segment_batches(os.path.join(self._directory, file_stem(base_offset) + ".log"))

    def aborted_transactions(self, start_offset: int, end_offset: int) -> list[AbortedTxn]:
        return [a for a in self._aborted if a.last_offset >= start_offset and a.first_offset <= end_offset]

    def cleaned_segment(self, base_offset: int) -> FileCleanedSegment:
        return FileCleanedSegment(self._directory, base_offset, self._interval)


def _terminate(signum: int, frame: object) -> None:
    """SIGTERM from the broker: unwinds the cleaning in progress (the domain's Cleaner discards the
    `.cleaned` segment it is writing) and ends the process."""
    raise SystemExit(0)


def _lowest_priority(pid: int) -> None:
    """Background work: niceness 19 (the weight of the lowest SCHED_OTHER priority), set by the broker
    on the process it has just started, before the interpreter's imports (ADR 61). Measured on 2 cores
    with `bench/compaction.py`: niceness 10 set by the process itself after its imports left the
    event loop waiting for the CPU for the first second of a cleaning; SCHED_IDLE was worse than
    niceness 19 (produce p99 while cleaning 3.6-4.7 ms against 0.32-0.98 ms: Linux's EEVDF still
    made the woken event loop wait for the next tick behind an idle-policy task)."""
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, pid, NICENESS)


def _serve(conn: Connection) -> None:
    """The cleaner process: cleanings, one at a time, until the broker closes its end."""
    from .throttle import Throttler

    signal.signal(signal.SIGTERM, _terminate)
    with contextlib.suppress(OSError):  # started by something other than CleanerProcess
        if os.getpriority(os.PRIO_PROCESS, 0) < NICENESS:
            os.setpriority(os.PRIO_PROCESS, 0, NICENESS)
    throttler: Throttler | None = None
    broker = os.getppid()
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        directory, segments, aborted, interval, to_clean, config, last_records, now_ms, buffer, load_factor, rate = job
        if throttler is None or throttler.rate != rate:
            throttler = Throttler(rate)
        throttle = throttler.maybe_throttle

        def checked(size: int) -> None:
            # a broker killed with SIGKILL cannot stop this process: it stops by itself at the next
            # batch, before it writes in a directory a new broker may be using
            if os.getppid() != broker:
                raise SystemExit(1)
            throttle(size)

        cleaner = Cleaner(crc32c.crc32c, decompress, compress, buffer, checked, load_factor, scan_keys)

        def swap(cleaned: CleanedSegment, old_bases: list[int]) -> None:
            assert isinstance(cleaned, FileCleanedSegment)
            cleaned.finish()
            cleaned.release()
            conn.send(("swap", cleaned.segment.base_offset, old_bases))
            answer = conn.recv()
            if answer is not None:
                raise CleaningFailed(answer)

        try:
            end, stats = cleaner.clean(
                _SegmentFiles(directory, segments, aborted, interval), to_clean, config, last_records, now_ms, swap
            )
        except Exception as exc:  # a corrupt batch, a refused swap, a full disk: the broker logs it
            conn.send(("failed", f"{type(exc).__name__}: {exc}"))
            continue
        conn.send(("done", end, stats))


class CleanerProcess:
    """The broker's side: starts the process when first needed, hands it cleanings (from a worker
    thread, which blocks on the answers), and runs the swaps it asks for through `run_swap`."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None
        self._lock = threading.Lock()
        self._stopped = False

    def _start(self) -> Connection:
        if self._conn is not None and self._process is not None and self._process.poll() is None:
            return self._conn
        self._discard()
        ours, theirs = socket.socketpair()
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "trafka.app.cleaner.process", str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # the terminal's Ctrl-C goes to the broker, which stops it
            )
            _lowest_priority(self._process.pid)
        finally:
            theirs.close()
        self._conn = Connection(ours.detach())
        return self._conn

    def _discard(self, graceful: bool = False) -> None:
        if self._process is not None:
            if self._process.poll() is None:
                if graceful:  # SIGTERM: a cleaning stops at once and removes its `.cleaned` files
                    self._process.terminate()
                    try:
                        self._process.wait(STOP_GRACE_S)
                    except subprocess.TimeoutExpired:
                        self._process.kill()
                else:
                    self._process.kill()
            self._process.wait()
            self._process = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def clean(
        self,
        partition_log: FilePartitionLog,
        to_clean: LogToClean,
        config: CompactionConfig,
        last_records: Mapping[int, LastRecord],
        now_ms: int,
        buffer_bytes: int,
        load_factor: float,
        io_rate: float,
        run_swap: Callable[[FileCleanedSegment, list[int]], None],
    ) -> tuple[int, CleanerStats]:
        """One cleaning (blocking: call it from a worker thread)."""
        with self._lock:
            if self._stopped:
                raise ProcessGone("the broker is stopping")
            conn = self._start()
        job: tuple[Any, ...] = (
            partition_log.directory,
            partition_log.segment_infos(),
            partition_log.aborted_transactions(0, ALL_OFFSETS),
            partition_log.config.index_interval_bytes,
            to_clean,
            config,
            dict(last_records),
            now_ms,
            buffer_bytes,
            load_factor,
            io_rate,
        )
        try:
            conn.send(job)
            while True:
                message = conn.recv()
                if message[0] == "swap":
                    _, base, old_bases = message
                    cleaned = FileCleanedSegment.reopen(
                        partition_log.directory, base, partition_log.config.index_interval_bytes, crc32c.crc32c
                    )
                    try:
                        run_swap(cleaned, old_bases)
                    except Exception as exc:
                        conn.send(f"{type(exc).__name__}: {exc}")
                        continue
                    conn.send(None)
                elif message[0] == "done":
                    return message[1], message[2]
                else:
                    raise CleaningFailed(message[1])
        except (EOFError, OSError) as exc:
            with self._lock:
                self._discard()
            raise ProcessGone(f"the cleaner process stopped: {exc}") from None

    def stop(self) -> None:
        """Stop the process: SIGTERM, on which a cleaning in progress removes what it wrote and the
        process exits (Kafka's cleaner deletes its `.cleaned` segment when shut down mid-cleaning);
        SIGKILL if it has not within a few seconds."""
        with self._lock:
            self._stopped = True
            self._discard(graceful=True)


if __name__ == "__main__":
    _serve(Connection(int(sys.argv[1])))
