"""The cost of metrics on the request path: what the Kafka listener's observer calls cost per request.

    python bench/observer.py [--requests 200000] [--partitions 1]

Times, for the no-op observer (HTTP off) and the Prometheus one (HTTP on), the calls the broker makes
for one Produce request (one `partition_produced` per partition, one `request_completed`) and for
one Fetch request, and prints microseconds per request.
"""

from __future__ import annotations

import argparse
import timeit

from trafka.adapters.http.metrics import BrokerMetrics
from trafka.adapters.kafka.context import UnobservedBroker
from trafka.domain.errors import ErrorCode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200_000)
    parser.add_argument("--partitions", type=int, default=1)
    args = parser.parse_args()
    topics = [f"bench-{p}" for p in range(args.partitions)]
    for observer in (UnobservedBroker(), BrokerMetrics()):

        def produce() -> None:
            for topic in topics:
                observer.partition_produced(topic, ErrorCode.NONE, 500, 52_000)
            observer.request_completed("Produce", 10, 0.0003)

        def fetch() -> None:
            for topic in topics:
                observer.partition_fetched(topic, ErrorCode.NONE, 52_000)
            observer.request_completed("Fetch", 17, 0.0004)

        for name, call in (("produce", produce), ("fetch", fetch)):
            seconds = min(timeit.repeat(call, number=args.requests, repeat=3))
            print(
                f"{type(observer).__name__:16} {name:8} {seconds / args.requests * 1e6:6.2f} µs per request "
                f"({args.partitions} partition(s))"
            )


if __name__ == "__main__":
    main()
