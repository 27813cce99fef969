"""Orders published to Kafka, and a billing consumer that totals them: the code under test."""

from __future__ import annotations

import json

from aiokafka import AIOKafkaProducer
from confluent_kafka import Consumer, Producer

TOPIC = "orders"


def publish_order(bootstrap_servers: str, order_id: str, amount_cents: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap_servers, "enable.idempotence": True})
    producer.produce(
        TOPIC,
        key=order_id.encode(),
        value=json.dumps({"id": order_id, "amount": amount_cents}).encode(),
        headers=[("schema", b"order-v1")],
    )
    if producer.flush(15):
        raise RuntimeError("order not acknowledged")


async def publish_order_async(bootstrap_servers: str, order_id: str, amount_cents: int) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap_servers)
    await producer.start()
    try:
        await producer.send_and_wait(
            TOPIC, json.dumps({"id": order_id, "amount": amount_cents}).encode(), key=order_id.encode()
        )
    finally:
        await producer.stop()


def bill(bootstrap_servers: str, group: str, expected: int, timeout_s: float = 20.0) -> int:
    """Consume `expected` orders in group `group`, commit, and return their total in cents."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap_servers,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([TOPIC])
    total = seen = 0
    try:
        import time

        deadline = time.monotonic() + timeout_s
        while seen < expected and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None or message.error():
                continue
            total += json.loads(message.value())["amount"]
            seen += 1
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    if seen < expected:
        raise TimeoutError(f"billed {seen} of {expected} orders")
    return total
