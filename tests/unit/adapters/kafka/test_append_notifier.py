"""Parked fetches wake for their own partitions only, and leave nothing behind."""

from trafka.adapters.kafka.services import AppendNotifier
from trafka.domain.topics import TopicPartition

A, B, C = TopicPartition("a", 0), TopicPartition("b", 0), TopicPartition("a", 1)


async def test_an_append_wakes_only_fetches_waiting_on_that_partition():
    notifier = AppendNotifier()
    on_a = notifier.waiter([A, C])
    on_b = notifier.waiter([B])
    notifier.notify([TopicPartition("other", 0)])
    assert not on_a.is_set() and not on_b.is_set()
    notifier.notify([C])
    assert on_a.is_set() and not on_b.is_set()
    notifier.notify_all()
    assert on_b.is_set()


async def test_forgotten_waiters_leave_no_registration():
    notifier = AppendNotifier()
    event = notifier.waiter([A, B])
    notifier.forget_waiter(event, [A, B])
    assert notifier._waiters == {}
    notifier.notify([A])
    assert not event.is_set()


class Completer:
    def __init__(self) -> None:
        self.calls = 0

    def set(self) -> None:
        self.calls += 1


async def test_a_completer_runs_once_per_notify_after_the_events_and_does_not_count_as_a_woken_task():
    notifier = AppendNotifier()
    completer = Completer()
    event = notifier.waiter([A])
    notifier.add(completer, [A, C])
    notifier.notify([A, C])
    assert completer.calls == 1 and event.is_set()
    assert notifier.woken == 1  # the event's task, not the completer
    notifier.add(completer, [B])
    notifier.notify([B])
    assert completer.calls == 2 and notifier.woken == 1
    notifier.add(completer, [B])
    notifier.notify_all()
    assert completer.calls == 3 and notifier._waiters == {}
