"""`trafka consume` stops on a signal flag its poll loop reads (issue 27 row 19), never by an
interrupt raised inside the Kafka client.

The stand-in consumer below holds a "lock" while it polls, as a real client holds its own, and the
signal arrives while it is inside `poll`: raised there as KeyboardInterrupt it would leave the lock
held, and closing would then wait forever (here: fail at once).
"""

from __future__ import annotations

import argparse
import os
import signal
from types import SimpleNamespace

from trafka.app.ops import consume, consumer
from trafka.app.ops.consume import add_consume_parser, run_consume


class InterruptedInsidePoll:
    def __init__(self, *args, **config) -> None:
        self.polls = 0
        self.busy = False
        self.closed = False

    def assign(self, partitions, start) -> None:
        pass

    def poll(self, wait_ms: int, limit: int) -> list:
        self.busy = True
        self.polls += 1
        record = SimpleNamespace(
            key=None, value=b"v%d" % self.polls, headers=[], offset=self.polls, timestamp=0, partition=0, topic="t"
        )
        if self.polls == 2:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while the client is at work
        sum(range(10_000))  # the client goes on working after the signal arrived
        self.busy = False
        return [record]

    def close(self) -> None:
        assert not self.busy, "an interrupt left the client half-way through poll: close would hang"
        self.closed = True


class OneTopicAdmin:
    """The admin calls `consume` makes before polling: a topic with one partition."""

    def __init__(self) -> None:
        topic = SimpleNamespace(error_code=0, partitions=[SimpleNamespace(partition_index=0)])
        self.client = SimpleNamespace(metadata=lambda topics: SimpleNamespace(topics=[topic]))

    def close(self) -> None:
        pass


def test_ctrl_c_inside_the_client_stops_the_poll_loop_and_the_client_closes(monkeypatch, capsys):
    made: list[InterruptedInsidePoll] = []
    monkeypatch.setattr(consumer, "Consumer", lambda *a, **config: made.append(InterruptedInsidePoll()) or made[-1])
    monkeypatch.setattr(consume, "admin_client", lambda args: OneTopicAdmin())
    parser = argparse.ArgumentParser()
    add_consume_parser(parser.add_subparsers())
    args = parser.parse_args(["consume", "t", "-b", "127.0.0.1:1"])
    previous = signal.getsignal(signal.SIGINT)

    assert run_consume(args) == 0

    assert made[0].closed and made[0].polls == 2
    out, err = capsys.readouterr()
    assert out.splitlines() == ["v1", "v2"]
    assert "Processed a total of 2 messages" in err
    assert signal.getsignal(signal.SIGINT) is previous, "the previous SIGINT handler is back"
